"""Early exits nested in earlier branches, which the mined exits leave out.

The extraction records an exit of a statement only when it holds after that
statement whatever branch ran (:func:`miner.extract.rules.contributions`):
an ``if`` with two branches that go on (one with no ``else`` falls through)
adds nothing, even when one of them holds ``if B: raise``. Past such a
statement a site still needs "not (A and B)": the branch was not taken, or
its exit was not. :func:`nested_exits` finds these for one site from its
function's statements (the records are left as mined) as ``exit`` guards
whose test is the branch's condition joined with the inner exit's test
(``(A) and (B)``, negated), placed at the inner exit's ``if`` line, so the
card tells the branch that leaves there.

Sound, not complete: only ``if`` chains are followed, through ``if`` chains
in their branches; an exit under a loop (each round tests its own values),
a ``with`` (its context manager may swallow an exception), a ``try`` or a
``match``, and an ``assert`` in such a branch add nothing. An exit is
dropped when code run after its test, before the site, may change what it
tested (:func:`miner.extract.rules.killed`, as the extraction does).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Mapping, Sequence

from miner.analysis.callers import _scopes
from miner.extract.ast_fallback import block_statements
from miner.extract.rules import (
    Stmt,
    Text,
    block_leaves,
    block_stores,
    contributions,
    killed,
    surviving,
)
from miner.model import Guard, Site

#: A line that leaves: ``raise``, ``return``, ``continue`` or ``break``, its indentation captured.
_LEAVING = re.compile(rb"^([ \t]*)(?:raise|return|continue|break)\b", re.M)
#: Indentation below a ``def`` at which a leaving line is nested two blocks deep.
NESTED_INDENT = 12

_SCOPE_NODES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _chain(stmt: Stmt) -> list[tuple[Text | None, int, Sequence[Stmt] | None]]:
    """An ``if`` chain's branches: (test, line, body); an absent ``else`` is a
    branch that falls through (body None); an ``else`` has no test."""
    branches: list[tuple[Text | None, int, Sequence[Stmt] | None]] = []
    node = stmt
    while True:
        parts = node.parts
        branches.append((parts.test, parts.line, parts.body))
        orelse = parts.orelse
        if orelse is None:
            branches.append((None, parts.line, None))
            return branches
        if len(orelse) == 1 and orelse[0].kind == "if":
            node = orelse[0]
            continue
        branches.append((None, parts.line, orelse))
        return branches


def conditional_exits(stmt: Stmt) -> list[Guard]:
    """The exits nested in the branches of the ``if`` chain ``stmt`` that
    the extraction does not record for it: each a negated ``exit`` whose
    test is the branch's condition and the inner exit's test joined by
    ``and``, at the inner exit's line. Nothing for other statements."""
    if stmt.kind != "if":
        return []
    branches = _chain(stmt)
    leaves = [body is not None and block_leaves(body) for _, _, body in branches]
    going = [i for i, leaving in enumerate(leaves) if not leaving]
    if not going:
        return []
    out: list[Guard] = []
    for i in going:
        test, line, body = branches[i]
        if not body:
            continue
        if len(going) == 1:
            # The only branch that goes on ran: the extraction recorded its
            # exits (rules._if_contributions); those nested deeper are new.
            out += surviving(body, [conditional_exits(s) for s in body])
            continue
        inner = surviving(body, [(*contributions(s), *conditional_exits(s)) for s in body])
        before = [t for t, _, _ in branches[:i]]
        if any(t is None for t in before):
            continue
        prefix = [f"not ({t()})" for t in before if t is not None]
        if test is not None:
            prefix.append(f"({test()})")
        changed = block_stores(body)
        if any(killed(Guard("exit", p, True, line), changed) for p in prefix):
            continue  # the branch changes what its condition read
        for guard in inner:
            if guard.kind != "exit" or not guard.negated:
                continue
            joined = " and ".join([*prefix, f"({guard.test})"])
            out.append(Guard("exit", joined, True, guard.line))
    return out


def _blocks(node: ast.stmt) -> Iterable[list[ast.stmt]]:
    for name in ("body", "orelse", "finalbody"):
        block = getattr(node, name, None)
        if block:
            yield block
    for holder in (*getattr(node, "handlers", ()), *getattr(node, "cases", ())):
        yield holder.body


def _holds(node: ast.AST, line: int) -> bool:
    start = getattr(node, "lineno", 0)
    return start <= line <= (getattr(node, "end_lineno", None) or start)


def nested_exits(body: list[ast.stmt], lines: list[str], line: int) -> tuple[Guard, ...]:
    """The exits nested in earlier ``if`` branches (:func:`conditional_exits`)
    that a site at ``line`` of a function whose statements are ``body``
    (parsed from ``lines``) gets past, in order: those of every block from
    the function's body down to the site, less those that a later statement
    before the site (or the compound statement holding the site) may
    change."""
    levels: list[tuple[list[Stmt], int]] = []
    nodes: list[ast.stmt] | None = body
    while nodes:
        index = next((i for i, n in enumerate(nodes) if _holds(n, line)), None)
        if index is None:
            break
        node = nodes[index]
        if isinstance(node, _SCOPE_NODES):
            return ()  # the line is in a nested scope
        levels.append((block_statements(nodes, lines), index))
        nodes = next((b for b in _blocks(node) if _holds(b[0], line) or _spans(b, line)), None)
    exits: list[Guard] = []
    later: frozenset[str] = frozenset()
    last = len(levels) - 1
    for depth in range(last, -1, -1):
        stmts, count = levels[depth]
        if depth < last:  # the statement holding the site (a loop's next rounds too)
            later |= stmts[count].stores
        per = [conditional_exits(s) for s in stmts[:count]]
        exits[:0] = surviving(stmts, per, later)
        later |= block_stores(stmts[:count])
    return tuple(exits)


def _spans(block: list[ast.stmt], line: int) -> bool:
    last = block[-1]
    return block[0].lineno <= line <= (getattr(last, "end_lineno", None) or last.lineno)


def _function(
    tree: ast.Module, scope: str, line: int
) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The function named by the ``__qualname__`` ``scope`` whose lines hold ``line``."""
    nodes: list[ast.stmt] = tree.body
    found: ast.FunctionDef | ast.AsyncFunctionDef | None = None
    for part in scope.split("."):
        if part == "<locals>":
            continue
        node = next(
            (
                n
                for n in nodes
                if isinstance(n, _SCOPE_NODES) and n.name == part and _holds(n, line)
            ),
            None,
        )
        if node is None:
            # a def under an ``if`` or ``try`` of its scope
            node = _nested_def(nodes, part, line)
            if node is None:
                return None
        found = node if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else None
        nodes = node.body
    return found


def _nested_def(
    nodes: list[ast.stmt], name: str, line: int
) -> ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | None:
    """The ``def`` or ``class`` ``name`` holding ``line`` in the blocks of
    the compound statements of ``nodes`` (under an ``if``, a ``try``...)."""
    for node in nodes:
        if not _holds(node, line) or isinstance(node, _SCOPE_NODES):
            continue
        for block in _blocks(node):
            for inner in block:
                if isinstance(inner, _SCOPE_NODES) and inner.name == name and _holds(inner, line):
                    return inner
            deeper = _nested_def(block, name, line)
            if deeper is not None:
                return deeper
    return None


def _candidates(data: bytes, sites: Sequence[Site]) -> list[Site]:
    """The sites of one file with a leaving line nested at least
    :data:`NESTED_INDENT` columns below their ``def`` between it and the
    site (a line test: only these can have exits the extraction left out)."""
    scopes = _scopes(data)
    headers = {
        name: (scopes.starts[i], scopes.indents[i])
        for i, name in enumerate(scopes.names)
        if scopes.kinds[i] == b"def"
    }
    leaving = [
        (data.count(b"\n", 0, m.start()) + 1, len(m.group(1).expandtabs(8)))
        for m in _LEAVING.finditer(data)
    ]
    out = []
    for site in sites:
        header = headers.get(site.scope)
        if header is None:
            continue
        first = data.count(b"\n", 0, header[0]) + 1
        if any(
            first < n < site.line and indent >= header[1] + NESTED_INDENT for n, indent in leaving
        ):
            out.append(site)
    return out


def site_nested_exits(
    files: Mapping[str, bytes], sites: Iterable[Site]
) -> dict[tuple[str, int], tuple[Guard, ...]]:
    """(path, line) of each site in a function -> the exits nested in earlier
    branches it gets past (:func:`nested_exits`), for the sites that have
    any. A file is parsed only when one of its sites has a leaving line
    nested two blocks below its ``def`` before it (:func:`_candidates`)."""
    by_path: dict[str, list[Site]] = {}
    for site in sites:
        if site.scope != "<module>" and site.kind in ("raise", "assert"):
            by_path.setdefault(site.path, []).append(site)
    out: dict[tuple[str, int], tuple[Guard, ...]] = {}
    for path, found in sorted(by_path.items()):
        data = files.get(path)
        if data is None:
            continue
        wanted = _candidates(data, found)
        if not wanted:
            continue
        text = data.decode("utf-8", "replace")
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        lines = text.split("\n")
        for site in wanted:
            function = _function(tree, site.scope, site.line)
            if function is None:
                continue
            extra = nested_exits(function.body, lines, site.line)
            if extra:
                out[(site.path, site.line)] = extra
    return out
