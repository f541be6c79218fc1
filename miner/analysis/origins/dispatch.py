"""The ``else`` of an exhaustive dispatch: every value its tested read can take is handled.

``if backend == "flashinfer": ... elif backend == "pytorch": ... else:
raise ValueError(...)``: the site is in the ``else`` of an ``if``/``elif``
chain (its guards hold the earlier branches' tests, negated; an earlier
branch that leaves is an ``exit``). When the branches compare one read with
constants or enum members, and every value the read can take is among them,
no value reaches the ``else``:

* an enum (``self.disaggregation_mode == DisaggregationMode.NULL``): the
  members are listed from the class definition (:func:`enum_members`);
* a flag with literal choices (:attr:`~miner.analysis.config.Option.choices`,
  the configuration model): the choices, and ``None`` when the default is
  None or not known to be a constant (argparse does not check a default
  against the choices). Which of them reach the ``else`` is left to the
  origins the trace found (:func:`left_values`).

Pure functions of syntax trees and origins; the caller
(:func:`miner.analysis.origins.site_unreachable`) traces.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from miner.analysis.code import dotted
from miner.analysis.config import Option
from miner.analysis.origins.source import Module, Modules
from miner.analysis.origins.walk import satisfiable, show
from miner.model import Constraint, Guard, Origin, OriginKind

#: Base classes that make a class an enumeration (``enum`` module).
_ENUM_BASES = frozenset({"Enum", "IntEnum", "StrEnum", "Flag", "IntFlag"})
#: No default known: not a constant, so any value may stand there.
_UNKNOWN = object()


@dataclass(frozen=True, slots=True)
class Branches:
    """The earlier branches of the chain whose ``else`` holds a site."""

    subject: str
    """The read the branches test, as written (``backend``)."""
    node: ast.expr
    """The read, parsed."""
    handled: tuple[str, ...]
    """The values the branches handle: a constant as :func:`show` prints it
    (``flashinfer``), an enum member as written (``DisaggregationMode.NULL``)."""
    line: int
    """The line of the last branch's test."""


def _tested(test: ast.expr) -> tuple[ast.expr, list[ast.expr]] | None:
    """(the read, the values it is compared with) of ``x == v``, ``v == x``,
    ``x in (v, w)``, ``x is v`` or an ``or`` of those on one read."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or):
        parts = [_tested(v) for v in test.values]
        if any(p is None for p in parts):
            return None
        reads = {ast.dump(p[0]) for p in parts if p is not None}
        if len(reads) != 1:
            return None
        return parts[0][0], [v for p in parts if p is not None for v in p[1]]  # type: ignore[index]
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return None
    left, right, op = test.left, test.comparators[0], test.ops[0]
    if isinstance(op, (ast.Eq, ast.Is)):
        if _value(right) is not None:
            return left, [right]
        if _value(left) is not None:
            return right, [left]
    if (
        isinstance(op, ast.In)
        and isinstance(right, (ast.Tuple, ast.List, ast.Set))
        and all(_value(e) is not None for e in right.elts)
    ):
        return left, list(right.elts)
    return None


def _value(node: ast.expr) -> str | None:
    """A constant as :func:`show` prints it, or ``Cls.MEMBER`` as written."""
    if isinstance(node, ast.Constant):
        return show(node.value)
    if (
        isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id[:1].isupper()
    ):
        return f"{node.value.id}.{node.attr}"
    return None


def branches(guards: Sequence[Guard], exits: Sequence[Guard]) -> Branches | None:
    """The branches before the ``else`` a site is in (from its
    :attr:`~miner.model.Site.guards`, negated ``if`` tests, and
    :attr:`~miner.model.Site.exits`, negated ``exit`` tests): those testing
    the read of the innermost such test; None when the site is in no
    ``else`` of a chain testing a read against values."""
    found: list[tuple[Guard, ast.expr, list[ast.expr]]] = []
    for guard in (*exits, *guards):
        if guard.kind not in ("if", "exit") or not guard.negated:
            continue
        try:
            test = ast.parse(guard.test, mode="eval").body
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        tested = _tested(test)
        if tested is not None:
            found.append((guard, *tested))
    innermost = [g for g in found if g[0].kind == "if"]
    if not innermost:
        return None
    last = max(innermost, key=lambda g: g[0].line)
    read = ast.dump(last[1])
    same = [g for g in found if ast.dump(g[1]) == read]
    handled = tuple(dict.fromkeys(v for g in same for v in map(_value, g[2]) if v is not None))
    return Branches(ast.unparse(last[1]), last[1], handled, last[0].line)


def _enum_class(modules: Modules, module: Module, name: str) -> ast.ClassDef | None:
    """The class ``name`` of ``module``, or imported into it by name from a
    module of the repository (``from pkg.utils import DisaggregationMode``)."""
    own = module.classes.get(name, [])
    if len(own) == 1:
        return own[0]
    binds = module.globals.get(name, [])
    if len(binds) != 1 or not isinstance(binds[0].statement, ast.ImportFrom):
        return None
    statement = binds[0].statement
    alias = next((a for a in statement.names if (a.asname or a.name) == name), None)
    path = modules.path_of(statement.module or "") if statement.level == 0 else None
    target = modules.get(path) if path else None
    if alias is None or target is None:
        return None
    found = target.classes.get(alias.name, [])
    return found[0] if len(found) == 1 else None


def enum_members(modules: Modules, module: Module, name: str) -> tuple[str, ...] | None:
    """``name.MEMBER`` for every member of the enum class ``name`` read in
    ``module`` (its body's ``MEMBER = value`` assignments, names not
    starting with ``_``), in the order it defines them; None when ``name``
    is not an enum class of the repository (its bases are none of
    ``Enum``, ``IntEnum``, ``StrEnum``, ``Flag``, ``IntFlag``)."""
    cls = _enum_class(modules, module, name)
    if cls is None:
        return None
    if not any((dotted(b) or "").rsplit(".", 1)[-1] in _ENUM_BASES for b in cls.bases):
        return None
    members = [
        t.id
        for stmt in cls.body
        if isinstance(stmt, ast.Assign)
        for t in stmt.targets
        if isinstance(t, ast.Name) and not t.id.startswith("_")
    ]
    return tuple(f"{name}.{m}" for m in members) or None


def enum_of(found: Branches) -> str | None:
    """The class whose members every handled value is, or None."""
    classes = {v.split(".", 1)[0] for v in found.handled if "." in v}
    if len(classes) != 1 or any("." not in v for v in found.handled):
        return None
    return next(iter(classes))


def _default(option: Option) -> object:
    """The option's default as a value, :data:`_UNKNOWN` when not a constant."""
    if option.default is None:
        return None  # argparse's when none is given
    try:
        value = ast.literal_eval(option.default)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return _UNKNOWN
    return value if value is None or isinstance(value, (str, int, float, bool)) else _UNKNOWN


def flag_domain(option: Option) -> tuple[object, ...] | None:
    """Every value the setting ``option`` can hold: its choices and its
    default (``None`` included: argparse does not check a default against
    the choices); None when it has no literal choices or its default is not
    a constant."""
    if option.choices is None:
        return None
    default = _default(option)
    if default is _UNKNOWN:
        return None
    values: list[object] = list(option.choices)
    if show(default) not in option.choices:
        values.append(default)
    return tuple(values)


def _accepts(value: object, constraints: Iterable[Constraint]) -> bool:
    return all(satisfiable(value, c) for c in constraints)


def left_values(
    domain: Sequence[object],
    flag: str,
    site: Iterable[Origin],
    calls: Sequence[Sequence[Origin]] | None,
) -> list[object]:
    """The values of ``domain`` that reach the site: those every origin of
    the flag named ``flag`` among ``site`` (the trace of its condition's
    top-level conjuncts) accepts, and, when ``calls`` lists the origins of
    the conjuncts around every call of its function, that some call accepts
    (None: the calls are not all known, so they exclude nothing)."""
    mine = [o.constraint for o in site if o.kind is OriginKind.FLAG and o.name == flag]
    around = [
        [o.constraint for o in call if o.kind is OriginKind.FLAG and o.name == flag]
        for call in calls or ()
    ]
    return [
        v
        for v in domain
        if _accepts(v, mine) and (calls is None or any(_accepts(v, c) for c in around))
    ]
