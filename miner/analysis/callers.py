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
import functools
import re
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from miner.analysis.code import (
    HEADER,
    SourceIndex,
    comment_start,
    file_imports,
    in_long_string,
    word_offsets,
)

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
class Scopes:
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
    ends: list[int]
    """Offset of the first line after the scope's body: the next code line
    indented no deeper than its header (closing brackets aside)."""


@functools.cache
def dedent(indent: int) -> re.Pattern[bytes]:
    """A code line indented ``indent`` columns or less (not a blank line, a
    comment or a closing bracket)."""
    return re.compile(rb"^[ \t]{0,%d}(?=[^ \t\r\n#)\]}])" % indent, re.M)


@functools.cache
def file_scopes(data: bytes) -> Scopes:
    """Headers, their nesting and their ends, from indentation (no parse).
    Cached by the file's bytes (five readers of the facts ask for the same
    files; :func:`miner.analysis.facts.collect` empties the cache when done):
    the lists must not be changed."""
    found = Scopes([], [], [], [], [], [])
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
        after = data.find(b"\n", m.start) + 1 or len(data)
        end = dedent(indent).search(data, after)
        found.ends.append(end.start() if end is not None else len(data))
        stack.append(len(found.names) - 1)
    return found


def _scope_index(data: bytes, offset: int, scopes: Scopes) -> int:
    """The header of the innermost scope whose header precedes ``offset``
    with less indentation and whose body goes on to ``offset`` (-1: module
    level)."""
    line_start = data.rfind(b"\n", 0, offset) + 1
    line = data[line_start:offset]
    indent = len(line.expandtabs(8)) - len(line.expandtabs(8).lstrip(b" "))
    i = bisect.bisect_right(scopes.starts, line_start - 1) - 1
    while i >= 0 and (scopes.indents[i] >= indent or scopes.ends[i] <= line_start):
        i = scopes.parents[i]
    return i


#: One assignment target: ``a``, ``*a``, ``a.b``, ``a[i]``, maybe in parentheses.
_TARGET = rb"\(?\*?[\w.]+(?:\[[^\]\n]*\])?\)?"
#: A line of a body binding names: ``a = ...``, ``a, b = ...``, ``a: T = ...``
#: (the targets; attributes and subscripts bind no name).
_ASSIGN = re.compile(
    rb"[ \t]+(" + _TARGET + rb"(?:[ \t]*,[ \t]*" + _TARGET + rb")*)[ \t]*,?[ \t]*"
    rb"(?::[^=\n]*)?=(?!=)(.*)"
)
_FOR = re.compile(rb"[ \t]+(?:async[ \t]+)?for[ \t]+([\w, ()]+?)[ \t]+in\b")
#: ``with ... as name`` / ``except ... as name`` (an ``import ... as name``
#: binds the import, which is what a call should name).
_AS = re.compile(rb"[ \t]*(?:(?:async[ \t]+)?with|except\*?)\b[^\n]*?\bas[ \t]+(\w+)[ \t]*[:,)]")
_PARAMETER = re.compile(rb"[(,*][ \t\r\n]*(\w+)[ \t\r\n]*[:=,)]")
_NAME = re.compile(rb"\w+")


def scopes_of(data: bytes) -> Callable[[int], str]:
    """A function from an offset of ``data`` (a file's bytes) to the
    ``__qualname__`` of the scope there (``<module>`` at module level),
    found from the ``def``/``class`` lines and indentation (no parse)."""
    scopes = file_scopes(data)

    def at(offset: int) -> str:
        i = _scope_index(data, offset, scopes)
        return scopes.names[i] if i >= 0 else "<module>"

    return at


def function_spans(data: bytes) -> list[tuple[str, int, int]]:
    """(``__qualname__``, offset of the header line, offset of the first
    line after the body) of each ``def`` of ``data`` (a file's bytes), in
    order, from the headers and indentation (:func:`scopes_of`; no parse).
    A name defined twice (a property's getter and setter) has two spans."""
    found = file_scopes(data)
    return [
        (name, start, end)
        for name, start, end, kind in zip(
            found.names, found.starts, found.ends, found.kinds, strict=True
        )
        if kind == b"def"
    ]


def _imported_names(data: bytes) -> frozenset[bytes] | None:
    """The names the file's imports bind (``from m import a, b as c`` binds
    ``a`` and ``c``; ``import a.b`` binds ``a``); None when a star import
    may bind any name."""
    names: set[bytes] = set()
    for _, pairs in file_imports(data):
        for name, bound in pairs:
            if name == "*":
                return None
            names.add(bound.encode())
    return frozenset(names)


def _targets(text: bytes) -> set[bytes]:
    """The bare names among assignment targets ``a, (b, c), x.y, *d``."""
    out = set()
    for part in text.replace(b"(", b",").replace(b")", b",").split(b","):
        part = part.strip().lstrip(b"*")
        if _NAME.fullmatch(part):
            out.add(part)
    return out


def _getter_of(value: bytes, name: bytes) -> bool:
    """Whether ``value`` calls a getter of ``name`` (``Helper =
    _get_helper()``: the lazy import of a class, whose calls are calls of
    it), by the getter's name ending in ``name``'s words."""
    m = re.match(rb"[ \t]*[\w.]*?(\w+)\(", value)
    if m is None:
        return False
    words = name.replace(b"_", b"").lower()
    return len(words) >= 6 and m.group(1).replace(b"_", b"").lower().endswith(words)


def _binds_locally(data: bytes, scopes: Scopes, i: int, name: bytes) -> bool:
    """Whether the function of header ``i`` binds ``name`` itself: a
    parameter, or a target of one of its assignments, ``for`` loops or
    ``as`` clauses (nested functions included). A call of such a name there
    calls that value, not a function defined elsewhere. A line
    ``name=value,`` is a keyword argument of a call over several lines, not
    an assignment, and ``Name = _get_name()`` (one target) binds what the
    getter returns (:func:`_getter_of`). Only the lines holding ``name`` are read."""
    start, end = scopes.starts[i], scopes.ends[i]
    head_end = data.find(b":\n", start, end)
    head_end = head_end if head_end != -1 else end
    if any(m.group(1) == name for m in _PARAMETER.finditer(data, start, head_end)):
        return True
    at = data.find(name, head_end, end)
    while at != -1:
        line_start = data.rfind(b"\n", 0, at) + 1
        line_end = data.find(b"\n", at, end)
        line = data[line_start : line_end if line_end != -1 else end]
        m = _ASSIGN.match(line)
        if m is not None and not m.group(2).rstrip().endswith((b",", b"(")):
            targets = _targets(m.group(1))
            if name in targets and not (len(targets) == 1 and _getter_of(m.group(2), name)):
                return True
        m = _FOR.match(line)
        if m is not None and name in _targets(m.group(1)):
            return True
        m = _AS.match(line)
        if m is not None and m.group(1) == name:
            return True
        if line_end == -1:
            break
        at = data.find(name, line_end, end)
    return False


#: A triple-quoted string (a docstring: its ``name(...)`` calls nothing).
_TRIPLE = re.compile(rb"(?s)(\"\"\"|\'\'\').*?(?<!\\)\1")


def _strings(data: bytes) -> tuple[list[int], list[int]]:
    """(starts, ends) of the triple-quoted strings of ``data``, in order."""
    starts, ends = [], []
    for m in _TRIPLE.finditer(data):
        starts.append(m.start())
        ends.append(m.end())
    return starts, ends


def _inside(spans: tuple[list[int], list[int]], offset: int) -> bool:
    i = bisect.bisect_right(spans[0], offset) - 1
    return i >= 0 and offset < spans[1][i]


def _in_comment(data: bytes, offset: int) -> bool:
    """Whether ``offset`` is after a ``#`` of its line that no quote encloses."""
    prefix = data[data.rfind(b"\n", 0, offset) + 1 : offset]
    return b"#" in prefix and comment_start(prefix.decode("utf-8", "replace")) != -1


def _calls(
    data: bytes, wanted: set[str], home: frozenset[str] = frozenset()
) -> list[tuple[str, str, int]]:
    """(called name, caller qualname, line) of every ``name(`` of a wanted name
    (not preceded by a word character, not its own ``def``/``class`` line).
    A bare call ``name(...)`` counts only in a file that defines the name
    (``home``) or imports it (:func:`_imported_names`), and not in a
    function that binds the name itself (:func:`_binds_locally`)."""
    scopes: Scopes | None = None
    strings: tuple[list[int], list[int]] = ([], [])
    imported: frozenset[bytes] | None = frozenset()
    read_imports = False
    local: dict[tuple[int, bytes], bool] = {}
    out = []
    for name in sorted(wanted):
        raw = name.encode()
        needle = raw + b"("
        start = data.find(needle)
        while start != -1:
            prev = data[start - 1 : start]
            if (
                not (prev.isalnum() or prev == b"_")
                and not data[max(0, start - 6) : start].endswith((b"def ", b"class "))
                and not _in_comment(data, start)
            ):
                if scopes is None:
                    scopes = file_scopes(data)
                    strings = _strings(data)
                if _inside(strings, start):
                    start = data.find(needle, start + 1)
                    continue
                i = _scope_index(data, start, scopes)
                if prev != b".":
                    if not read_imports:
                        imported, read_imports = _imported_names(data), True
                    bound = name in home or imported is None or raw in imported
                    if bound and i >= 0 and scopes.kinds[i] == b"def":
                        if (i, raw) not in local:
                            local[(i, raw)] = _binds_locally(data, scopes, i, raw)
                        bound = not local[(i, raw)]
                    if not bound:
                        start = data.find(needle, start + 1)
                        continue
                line = data.count(b"\n", 0, start) + 1
                out.append((name, scopes.names[i] if i >= 0 else "<module>", line))
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
        home = frozenset(n for n in by_path[path] if path in index.definitions(n))
        for name, scope, line in _calls(index.files[path], by_path[path], home):
            found[name].append(Caller(name, scope, path, line))
    return {
        name: tuple(sorted(found.get(name, []), key=lambda c: (c.path, c.line))) for name in unique
    }


#: Most files a name :func:`unmentioned` keeps may occur in (its ``def``
#: files included); a name in more is taken as used.
MAX_MENTIONS = 4


def unmentioned(index: SourceIndex, names: Iterable[str]) -> frozenset[str]:
    """Of ``names``, those no code of the commit uses but their own
    ``def``: every occurrence of the word is in a comment, a triple-quoted
    string (a docstring), a ``def`` / ``class`` header of that name or the
    body of such a ``def`` (its own recursion, its own name in its
    message). Any other occurrence keeps the name out: a call, a reference,
    an import, a one-line string (``getattr(m, "name")``); so does occurring
    in more than :data:`MAX_MENTIONS` files. No in-tree code calls such a
    function; only a caller outside the commit can. A byte search with the
    scopes from indentation (:func:`scopes_of`), no parse."""
    wanted = sorted(set(names))
    mentions = index.mentions_of(wanted)
    calls = index.callers_of(wanted)
    out = set()
    for name in wanted:
        homes = set(index.definitions(name))
        paths = set(mentions.get(name, ())) | set(calls.get(name, ())) | homes
        few = homes and len(paths) <= MAX_MENTIONS
        if few and all(_inert(index.files[path], name) for path in sorted(paths)):
            out.add(name)
    return frozenset(out)


#: A ``def`` / ``class`` header line (the name it defines follows).
_OWN_HEADER = re.compile(r"[ \t]*(?:async[ \t]+)?(?:def|class)[ \t]+\w")


def _inert(data: bytes, name: str) -> bool:
    """Whether every occurrence of the word ``name`` in ``data`` is in its own
    header or body, a comment or a triple-quoted string (:func:`unmentioned`)."""
    scope = scopes_of(data)
    word = name.encode()
    for at in word_offsets(data, word):
        start = data.rfind(b"\n", 0, at) + 1
        stop = data.find(b"\n", at)
        line = data[start : stop if stop != -1 else len(data)].decode("latin-1")
        if _OWN_HEADER.match(line) and line.find(name) == at - start:
            continue
        if 0 <= comment_start(line) < at - start or in_long_string(data, at):
            continue
        if name in scope(at).replace(".<locals>.", ".").split("."):
            continue
        return False
    return True


def crowded(index: SourceIndex, names: Iterable[str]) -> dict[str, int]:
    """Names defined once but called from more than :data:`MAX_FILES` files -> file count."""
    unique = sorted({n for n in names if len(index.definitions(n)) == 1})
    mentions = index.callers_of(unique)
    return {n: len(mentions[n]) for n in unique if len(mentions.get(n, [])) > MAX_FILES}
