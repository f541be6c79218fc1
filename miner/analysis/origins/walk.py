"""The state of an origin trace: where an expression is evaluated, what the
condition demands of its value, and the origins found so far."""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterator
from dataclasses import dataclass, field

from miner.analysis.code import call_name, dotted
from miner.analysis.origins.source import Function, Module
from miner.model import ANY, Constraint, Origin, OriginRole

_FLIP = {
    "true": "false",
    "false": "true",
    "==": "!=",
    "!=": "==",
    "in": "not in",
    "not in": "in",
    "is None": "is not None",
    "is not None": "is None",
    "<": ">=",
    ">=": "<",
    ">": "<=",
    "<=": ">",
    "instance": "not instance",
    "not instance": "instance",
    "set": "unset",
    "unset": "set",
    "missing": "installed",
    "installed": "missing",
}


def flip(demand: Constraint) -> Constraint:
    """The demand on the operand of ``not``: the opposite op, ``any`` stays."""
    op = _FLIP.get(demand.op)
    return demand if op is None else Constraint(op, demand.values)  # type: ignore[arg-type]


@dataclass(frozen=True, slots=True, eq=False)
class Place:
    """Where an expression is evaluated: a module, its function (None at
    module level) and the line."""

    module: Module
    function: Function | None
    line: int
    bound: tuple[tuple[str, ast.expr, Place], ...] = ()
    """The arguments of the call being traced into ``function``: (parameter,
    argument, the caller's place)."""

    @property
    def path(self) -> str:
        return self.module.path


@dataclass(slots=True)
class Walk:
    """The state of one read's trace: where it started and what it found."""

    read: str
    role: OriginRole
    found: list[Origin] = field(default_factory=list)
    steps: int = 0
    seen: set[tuple[str, int, str]] = field(default_factory=set)
    hidden: set[str] = field(default_factory=set)
    """Names bound by the comprehension being traced: not the function's."""
    excluded: list[Origin] = field(default_factory=list)
    """Constants written as a call's argument for a parameter (or as its
    default) that cannot meet the demand: left out of :attr:`found`, kept
    for the ``unreachable`` fact."""
    indirect: bool = False
    """Some call gives a parameter on the way an expression other than a
    constant (a name, an attribute, a call): its values are not all known,
    so :attr:`excluded` proves nothing."""


def satisfiable(value: object, demand: Constraint) -> bool:
    """Whether a constant ``value`` can meet ``demand`` (``False`` cannot be ``true``)."""
    if demand.op == "true":
        return bool(value)
    if demand.op == "false":
        return not value
    if demand.op == "is None":
        return value is None
    if demand.op == "is not None":
        return value is not None
    if demand.op in ("==", "!="):
        equal = show(value) in demand.values
        return equal if demand.op == "==" else not equal
    if demand.op in ("in", "not in"):
        inside = show(value) in demand.values
        return inside if demand.op == "in" else not inside
    return True


def polar(wanted: Constraint, demand: Constraint) -> Constraint:
    """What a comparison requires of its operand when the comparison must
    meet ``demand``: itself when true, its opposite when false, else nothing."""
    if demand.op == "true":
        return wanted
    if demand.op == "false":
        return flip(wanted)
    return ANY


def from_config(op: str, values: tuple[str, ...]) -> Constraint:
    """A :class:`miner.analysis.config.Condition` op as a constraint."""
    named = {"truthy": "true", "falsy": "false"}.get(op, op)
    if named in _FLIP:
        return Constraint(named, values)  # type: ignore[arg-type]
    return ANY


def show(value: object) -> str:
    return value if isinstance(value, str) else repr(value)


def environ(node: ast.expr) -> bool:
    return (dotted(node) or "").endswith("environ")


@functools.lru_cache(maxsize=1 << 16)
def unparsed(node: ast.AST) -> str:
    """``node`` as one line of source (cached by the node itself: a trace
    reads the same statements again and again; the trees are not changed)."""
    try:
        text = ast.unparse(node)
    except (ValueError, RecursionError, AttributeError):
        return ""
    return " ".join(text.split())


def chain_of(node: ast.expr) -> list[str]:
    """The names of an attribute chain, base first: ``a.b().c.d`` -> ``[b, c, d]``
    (a call's name stands for its result)."""
    out: list[str] = []
    while True:
        if isinstance(node, ast.Attribute):
            out.append(node.attr)
            node = node.value
        elif isinstance(node, ast.Call):
            name = call_name(node)
            if name:
                out.append(name)
            return list(reversed(out))
        elif isinstance(node, ast.Subscript):
            node = node.value
        else:
            if isinstance(node, ast.Name):
                out.append(node.id)
            return list(reversed(out))


def children(node: ast.AST) -> Iterator[ast.expr]:
    """The direct sub-expressions of ``node``."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.expr):
            yield child
