"""A check its callers make first: the ``unreachable`` fact of a site whose
every caller has already required the opposite of one of its conjuncts.

``hash_topk`` asserts ``scoring_func == "sqrtsoftplus"`` and then calls
``hash_topk_triton(..., scoring_func)``, which asserts the same: with the
callee's parameters replaced by the arguments each call gives them, a
conjunct of the site's condition is, as written, the negation of a conjunct
of the condition around the call (an ``if`` around it, an ``assert`` or an
early exit before it). No value is traced: the two expressions are the same
code read in the caller's frame, which nothing rebinds between the caller's
check and the call.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Sequence

from miner.analysis.callers import Caller
from miner.analysis.condition import Reach
from miner.analysis.origins.calls import bound_arguments, calls_named_at
from miner.analysis.origins.source import Function, Module
from miner.analysis.origins.walk import Place
from miner.model import Condition, Unreachable

#: A call of the site's function: the call, its module, the condition around it.
CallAround = tuple[Caller, Module, Reach]


def restated(
    function: Function, conjuncts: Sequence[Condition], calls: Sequence[CallAround]
) -> Unreachable | None:
    """The ``unreachable`` fact (way ``callers``) when at every call of
    ``function`` (``calls``: all of them) a conjunct of the condition around
    the call is the negation of one of the site's ``conjuncts`` read with
    the call's arguments (see the module doc); None otherwise. ``path`` and
    ``line`` are the first call's guard, ``condition`` its conjunct as
    written, ``guard`` the site's conjunct."""
    found: list[Unreachable] = []
    for caller, module, around in calls:
        made = _at_call(function, conjuncts, caller, module, around)
        if made is None:
            return None
        found.append(made)
    return found[0] if found else None


def _at_call(
    function: Function,
    conjuncts: Sequence[Condition],
    caller: Caller,
    module: Module,
    around: Reach,
) -> Unreachable | None:
    """The fact for one call (:func:`restated`), or None."""
    nodes = calls_named_at(module, caller.line, caller.target)
    if len(nodes) != 1:
        return None
    place = Place(module, module.function_at(caller.line, caller.scope), caller.line)
    given = {p: a for p, a, _ in bound_arguments(function, nodes[0], place)}
    theirs = [c for c in around.condition.conjuncts() if c.op == "atom" and c.kind == "expr"]
    for mine in conjuncts:
        read = _in_caller(mine.atom, given, set(function.params))
        if read is None:
            continue
        for other in theirs:
            guard = around.origin(other)
            line = guard.line if guard is not None else caller.line
            if (
                other.negated != mine.negated
                and _same(read, other.atom)
                and not _rebound(place.function, read, line, caller.line)
            ):
                return Unreachable(caller.path, line, other.shown, (), guard=mine.shown)
    return None


def _in_caller(atom: str, given: dict[str, ast.expr], params: set[str]) -> ast.expr | None:
    """The atom with each parameter replaced by the call's argument, or None
    when it reads a name that is not a parameter the call gives (a local, a
    global, ``self``: not the same value in the caller's frame) or does not parse."""
    try:
        tree = ast.parse(atom, mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    names = [n for n in ast.walk(tree) if isinstance(n, ast.Name)]
    if not names or any(n.id not in given or n.id not in params for n in names):
        return None
    return _Substitute(given).visit(copy.deepcopy(tree))  # type: ignore[no-any-return]


class _Substitute(ast.NodeTransformer):
    def __init__(self, given: dict[str, ast.expr]) -> None:
        self.given = given

    def visit_Name(self, node: ast.Name) -> ast.expr:
        return copy.deepcopy(self.given[node.id])


def _same(read: ast.expr, atom: str) -> bool:
    """Whether ``read`` and the caller's atom are the same code."""
    try:
        other = ast.parse(atom, mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return ast.dump(read) == ast.dump(other)


def _rebound(function: Function | None, read: ast.expr, start: int, end: int) -> bool:
    """Whether the caller's function binds a name ``read`` uses on a line in
    ``[start, end)`` (after its check, before the call): then the check
    may have tested another value."""
    if function is None:
        return True
    names = {n.id for n in ast.walk(read) if isinstance(n, ast.Name)}
    return any(start <= b.line < end for name in names for b in function.bindings(name))
