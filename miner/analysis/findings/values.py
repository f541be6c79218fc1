"""What a constraint's op means for one value: :func:`satisfies`.

Values are display text as :class:`miner.model.Constraint` writes them
(strings without quotes, other literals as written); ``None`` is a value
left unset (an option's default ``None``, an environment variable not set).
"""

from __future__ import annotations

from collections.abc import Sequence

_TRUE = frozenset({"true", "1", "yes", "on"})
_FALSE = frozenset({"false", "0", "no", "off", "", "none", "0.0"})


def truth(value: str | None) -> bool | None:
    """The truth value of ``value`` (``True``, ``1``... / ``False``, ``0``,
    ``None``, empty), None when it is not a literal whose truth is known."""
    if value is None:
        return False
    text = value.strip().strip("'\"").lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    return None


def _number(value: str | None) -> float | None:
    try:
        return float(str(value).strip("'\""))
    except ValueError:
        return None


def _compare(op: str, value: str | None, bounds: Sequence[str]) -> bool | None:
    left = _number(value)
    right = _number(bounds[0]) if bounds else None
    if left is None or right is None:
        return None
    return {"<": left < right, "<=": left <= right, ">": left > right, ">=": left >= right}[op]


def satisfies(op: str, values: Sequence[str], value: str | None) -> bool | None:
    """Whether ``value`` meets the constraint ``op`` over ``values``: True,
    False, or None when it cannot be told (an op over values not literal,
    ``any``, ``instance``). ``value`` None is "not set / ``None``"."""
    clean = None if value is None else value.strip("'\"")
    if clean == "None":
        clean = None
    if op in ("==", "in"):
        return clean in values
    if op in ("!=", "not in"):
        return clean not in values
    if op in ("true", "set", "installed"):
        return truth(value) if op == "true" else clean is not None
    if op in ("false", "unset", "missing"):
        told = truth(value) if op == "false" else clean is not None
        return None if told is None else not told
    if op == "is None":
        return clean is None
    if op == "is not None":
        return clean is not None
    if op in ("<", "<=", ">", ">="):
        return _compare(op, value, values)
    return None
