"""Who calls a function, in the same commit: a byte search for ``name(``, then the enclosing scope.

The enclosing scope of a call is found from the ``def`` / ``class`` lines and
their indentation, not by parsing: the callers of ~8,000 raising functions of
an SGLang release touch nearly every file, and parsing them all with ``ast``
costs more than a minute on a busy machine, while this takes about a second.
Calls inside strings or comments can be counted; the scope of a call on a
continuation line is the scope of its statement's indentation.

Only names defined once in the commit are looked up (``forward`` or ``run``
defined in forty classes say nothing about where a user reaches one of them),
and only when at most :data:`MAX_FILES` files mention the call; a constructor
``Cls.__init__`` is looked up as calls of ``Cls``.
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from miner.analysis.code import HEADER, SourceIndex

#: A name called from more files than this is "called from many places".
MAX_FILES = 25


@dataclass(frozen=True, slots=True)
class Caller:
    """One call of ``target`` at ``path:line`` inside ``scope`` (a ``__qualname__``)."""

    target: str
    scope: str
    path: str
    line: int

    def to_json(self) -> dict[str, Any]:
        return {"target": self.target, "scope": self.scope, "path": self.path, "line": self.line}


def target_name(scope: str) -> str | None:
    """The name a caller writes to reach ``scope``: the function's own name,
    the class name for ``Cls.__init__``; None for module level and other dunders."""
    parts = [p for p in scope.split(".") if p != "<locals>"]
    if not parts or parts[-1] in ("<module>", "<lambda>") or parts[-1].startswith("<"):
        return None
    last = parts[-1]
    if last == "__init__":
        return parts[-2] if len(parts) >= 2 else None
    if last.startswith("__") and last.endswith("__"):
        return None
    return last


@dataclass(frozen=True, slots=True)
class _Scopes:
    """The ``def`` / ``class`` headers of one file, in order."""

    starts: list[int]
    """Offset of each header line."""
    indents: list[int]
    parents: list[int]
    """Index of the enclosing header, -1 at module level."""
    names: list[str]
    """``__qualname__`` of the scope each header begins."""
    kinds: list[bytes]
    """``def`` or ``class``."""


def _scopes(data: bytes) -> _Scopes:
    """Headers and their nesting, from indentation (no parse)."""
    found = _Scopes([], [], [], [], [])
    stack: list[int] = []
    for m in HEADER.finditer(data):
        indent = len(m.group(1).expandtabs(8))
        while stack and found.indents[stack[-1]] >= indent:
            stack.pop()
        name = m.group(3).decode("ascii", "replace")
        parent = stack[-1] if stack else -1
        if parent >= 0:
            sep = ".<locals>." if found.kinds[parent] == b"def" else "."
            qual = found.names[parent] + sep + name
        else:
            qual = name
        found.starts.append(m.start)
        found.indents.append(indent)
        found.parents.append(parent)
        found.names.append(qual)
        found.kinds.append(m.group(2))
        stack.append(len(found.names) - 1)
    return found


def _scope_at(data: bytes, offset: int, scopes: _Scopes) -> str:
    """The innermost scope whose header precedes ``offset`` with less indentation."""
    line_start = data.rfind(b"\n", 0, offset) + 1
    line = data[line_start:offset]
    indent = len(line.expandtabs(8)) - len(line.expandtabs(8).lstrip(b" "))
    i = bisect.bisect_right(scopes.starts, line_start - 1) - 1
    while i >= 0 and scopes.indents[i] >= indent:
        i = scopes.parents[i]
    return scopes.names[i] if i >= 0 else "<module>"


def _calls(data: bytes, wanted: set[str]) -> list[tuple[str, str, int]]:
    """(called name, caller qualname, line) of every ``name(`` of a wanted name
    (not preceded by a word character, not its own ``def``/``class`` line)."""
    scopes: _Scopes | None = None
    out = []
    for name in sorted(wanted):
        needle = name.encode() + b"("
        start = data.find(needle)
        while start != -1:
            prev = data[start - 1 : start]
            if not (prev.isalnum() or prev == b"_") and not data[
                max(0, start - 6) : start
            ].endswith((b"def ", b"class ")):
                if scopes is None:
                    scopes = _scopes(data)
                line = data.count(b"\n", 0, start) + 1
                out.append((name, _scope_at(data, start, scopes), line))
            start = data.find(needle, start + 1)
    return out


def find_callers(index: SourceIndex, names: Iterable[str]) -> dict[str, tuple[Caller, ...]]:
    """Callers of each name (defined once in the commit), in (path, line) order.

    A name mentioned by more than :data:`MAX_FILES` files maps to an empty
    tuple and is listed in the result of :func:`crowded`.
    """
    unique = sorted({n for n in names if len(index.definitions(n)) == 1})
    mentions = index.callers_of(unique)
    by_path: dict[str, set[str]] = defaultdict(set)
    for name in unique:
        paths = mentions.get(name, [])
        if len(paths) <= MAX_FILES:
            for path in paths:
                by_path[path].add(name)
    found: dict[str, list[Caller]] = defaultdict(list)
    for path in sorted(by_path):
        for name, scope, line in _calls(index.files[path], by_path[path]):
            found[name].append(Caller(name, scope, path, line))
    return {
        name: tuple(sorted(found.get(name, []), key=lambda c: (c.path, c.line))) for name in unique
    }


def crowded(index: SourceIndex, names: Iterable[str]) -> dict[str, int]:
    """Names defined once but called from more than :data:`MAX_FILES` files -> file count."""
    unique = sorted({n for n in names if len(index.definitions(n)) == 1})
    mentions = index.callers_of(unique)
    return {n: len(mentions[n]) for n in unique if len(mentions.get(n, [])) > MAX_FILES}
