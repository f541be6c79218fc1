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
tested (:func:`miner.extract.rules.killed`, as the extraction does), and
when a branch of its chain may change what the chain's tests read (past
the chain they would no longer tell which branch ran).
"""

from __future__ import annotations

import ast
import bisect
import re
from collections.abc import Iterable, Mapping, Sequence

from miner.analysis.callers import file_scopes
from miner.extract.ast_fallback import block_statements
from miner.extract.rules import (
    Stmt,
    block_leaves,
    block_stores,
    contributions,
    if_chain,
    killed,
    surviving,
)
from miner.model import Guard, Site

#: A line that leaves (``raise``, ``return``, ``continue`` or ``break``)
#: indented at least :data:`NESTED_INDENT` columns, its indentation captured.
_NEWLINE = re.compile(rb"\n")
_LEAVING = re.compile(rb"^([ \t]{12,})(?:raise|return|continue|break)\b", re.M)
#: Indentation below a ``def`` at which a leaving line is nested two blocks deep.
NESTED_INDENT = 12

_SCOPE_NODES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def conditional_exits(stmt: Stmt) -> list[Guard]:
    """The exits in the branches of the ``if`` chain ``stmt`` that the
    extraction does not record for it, each a negated ``exit``: an exit
    nested in a branch that goes on, its test the branch's condition and
    the inner exit's test joined by ``and``, at the inner exit's line; a
    branch that leaves after one that goes on (``if a: x() elif b:
    raise``), its test the branch's condition, at its line. Nothing for
    other statements."""
    if stmt.kind != "if":
        return []
    branches = if_chain(stmt)
    leaves = [body is not None and block_leaves(body) for _, _, body in branches]
    going = [i for i, leaving in enumerate(leaves) if not leaving]
    if not going:
        return []
    out: list[Guard] = []
    changed: frozenset[str] | None = None  # what the branches' bodies store, when asked
    for i, (test, line, body) in enumerate(branches):
        if not body or i < going[0]:
            continue  # the leaving branches before the first that goes on are recorded
        if len(going) == 1:
            # The only branch that goes on ran: the extraction recorded its
            # test and exits (rules._if_contributions); those nested deeper
            # in it are new.
            if not leaves[i]:
                out += surviving(body, [conditional_exits(s) for s in body])
            continue
        before = [t for t, _, _ in branches[:i]]
        if any(t is None for t in before):
            continue
        inner: list[Guard] = []
        if not leaves[i]:
            per = [
                tuple(
                    g
                    for g in (*contributions(s), *conditional_exits(s))
                    if g.kind == "exit" and g.negated
                )
                for s in body
            ]
            inner = surviving(body, per) if any(per) else []
            if not inner:
                continue
        prefix = [f"not ({t()})" for t in before if t is not None]
        if test is not None:
            prefix.append(f"({test()})")
        if changed is None:
            changed = frozenset().union(*(block_stores(b) for _, _, b in branches))
        if any(killed(Guard("exit", p, True, line), changed) for p in prefix):
            # A branch changes what the chain's tests read: past the chain
            # they no longer tell which branch ran (``if out is None: out =
            # ...`` / ``else: if out.requires_grad: raise``).
            continue
        if leaves[i]:
            out.append(Guard("exit", " and ".join(prefix), True, line))
            continue
        for guard in inner:
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


def nested_exits(
    body: list[ast.stmt],
    lines: list[str],
    line: int,
    seen: dict[int, tuple[list[Stmt], list[list[Guard]]]] | None = None,
) -> tuple[Guard, ...]:
    """The exits nested in earlier ``if`` branches (:func:`conditional_exits`)
    that a site at ``line`` of a function whose statements are ``body``
    (parsed from ``lines``) gets past, in order: those of every block from
    the function's body down to the site, less those that a later statement
    before the site (or the compound statement holding the site) may
    change. ``seen`` keeps each block's statements and their exits for the
    next site of the same function (keyed by the block's ``id``)."""
    if seen is None:
        seen = {}
    levels: list[tuple[list[Stmt], int, list[list[Guard]]]] = []
    nodes: list[ast.stmt] | None = body
    while nodes:
        index = next((i for i, n in enumerate(nodes) if _holds(n, line)), None)
        if index is None:
            break
        node = nodes[index]
        if isinstance(node, _SCOPE_NODES):
            return ()  # the line is in a nested scope
        known = seen.get(id(nodes))
        if known is None:
            known = seen[id(nodes)] = (block_statements(nodes, lines), [])
        stmts, per = known
        while len(per) < index:
            per.append(conditional_exits(stmts[len(per)]))
        levels.append((stmts, index, per))
        nodes = next((b for b in _blocks(node) if _holds(b[0], line) or _spans(b, line)), None)
    pers = [per[:count] for _, count, per in levels]
    pending = [any(per) for per in pers]
    exits: list[Guard] = []
    later: frozenset[str] = frozenset()
    last = len(levels) - 1
    for depth in range(last, -1, -1):
        if not any(pending[: depth + 1]):
            break  # nothing found this deep or above: what runs later does not matter
        stmts, count, _ = levels[depth]
        if depth < last:  # the statement holding the site (a loop's next rounds too)
            later |= stmts[count].stores
        if pending[depth]:
            exits[:0] = surviving(stmts, pers[depth], later)
        if any(pending[:depth]):
            later |= block_stores(stmts[:count])
    return tuple(exits)


def _spans(block: list[ast.stmt], line: int) -> bool:
    last = block[-1]
    return block[0].lineno <= line <= (getattr(last, "end_lineno", None) or last.lineno)


def _functions(data: bytes, sites: Sequence[Site]) -> dict[int, tuple[int, int, list[Site]]]:
    """The functions of one file (by their index in
    :func:`~miner.analysis.callers.file_scopes`) with the sites in them that
    have a leaving line nested at least :data:`NESTED_INDENT` columns below
    the ``def`` between it and the site (a line test: only these can have
    exits the extraction left out): index -> (the first and last byte
    offsets of the function, its sites)."""
    # Leaving lines that may be two blocks deep (a ``def`` at column 0 or deeper).
    leaving: list[tuple[int, int]] = []
    line, at = 1, 0
    for m in _LEAVING.finditer(data):
        line += data.count(b"\n", at, m.start())
        at = m.start()
        leaving.append((line, len(m.group(1).expandtabs(8))))
    if not leaving:
        return {}
    numbers = [n for n, _ in leaving]
    scopes = file_scopes(data)
    starts: dict[str, list[int]] = {}
    for i, name in enumerate(scopes.names):
        if scopes.kinds[i] == b"def":
            starts.setdefault(name, []).append(i)

    newlines = [m.start() for m in _NEWLINE.finditer(data)]

    def line_of(offset: int) -> int:
        return bisect.bisect_left(newlines, offset) + 1  # the newlines before it, plus one

    out: dict[int, tuple[int, int, list[Site]]] = {}
    for site in sites:
        for i in starts.get(site.scope, ()):
            first, end = line_of(scopes.starts[i]), line_of(scopes.ends[i])
            if not first < site.line <= end:
                continue
            indent = scopes.indents[i] + NESTED_INDENT
            lo = bisect.bisect_right(numbers, first)
            hi = bisect.bisect_left(numbers, site.line)
            if any(deep >= indent for _, deep in leaving[lo:hi]):
                begin = data.rfind(b"\n", 0, scopes.starts[i]) + 1
                out.setdefault(i, (begin, scopes.ends[i], []))[2].append(site)
            break
    return out


def _parse_function(
    data: bytes, begin: int, end: int
) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The ``def`` whose text is ``data[begin:end]``, parsed alone with the
    file's line numbers (blank lines and a block opener put before it)."""
    line = data.count(b"\n", 0, begin) + 1
    text = data[begin:end].decode("utf-8", "replace")
    nested = text[:1] in (" ", "\t")  # a method or a def in a block: under an opener
    source = "\n" * (line - 2) + "if 1:\n" + text if nested else "\n" * (line - 1) + text
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    body = tree.body
    if nested and body and isinstance(body[0], ast.If):
        body = body[0].body
    node = body[0] if body else None
    return node if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else None


def site_nested_exits(
    files: Mapping[str, bytes], sites: Iterable[Site]
) -> dict[tuple[str, int], tuple[Guard, ...]]:
    """(path, line) of each site in a function -> the exits nested in earlier
    branches it gets past (:func:`nested_exits`), for the sites that have
    any. A function is parsed (alone) only when one of its sites has a
    leaving line nested two blocks below its ``def`` before it
    (:func:`_functions`)."""
    by_path: dict[str, list[Site]] = {}
    for site in sites:
        if site.scope != "<module>" and site.kind in ("raise", "assert"):
            by_path.setdefault(site.path, []).append(site)
    out: dict[tuple[str, int], tuple[Guard, ...]] = {}
    for path, found in sorted(by_path.items()):
        data = files.get(path)
        if data is None:
            continue
        functions = _functions(data, found)
        if not functions:
            continue
        lines = data.decode("utf-8", "replace").split("\n")
        for begin, end, wanted in functions.values():
            function = _parse_function(data, begin, end)
            if function is None:
                continue
            seen: dict[int, tuple[list[Stmt], list[list[Guard]]]] = {}
            for site in wanted:
                extra = nested_exits(function.body, lines, site.line, seen)
                if extra:
                    out[(site.path, site.line)] = extra
    return out
