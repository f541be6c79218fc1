"""The calls of a function whose name the commit defines more than once.

The facts list callers by name only for names defined once
(:func:`miner.analysis.callers.find_callers`). A method such as
``forward_compress``, defined by two backends, has calls the name alone
cannot place; a call is one of a definition's only if its arguments can bind
to that definition's parameters (a call that cannot would raise
``TypeError``), and a call by the bare name only if the name, where the call
is, can be that definition: the file defines it, imports it from the
definition's module, or imports it from a module that does not define it
(which may pass it on). :func:`signature_calls` finds, by the bytes, every
use of the name (an import of it without ``as`` is no use), parses the files
that call it and keeps the calls that bind. Nothing here decides what a
value means.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Iterator

from miner.analysis.code import comment_start
from miner.analysis.origins.source import Binding, Function, Module, Modules, absolute_module

#: Most calls by name looked at (more: the calls are not listed).
MAX_NAMED_CALLS = 12
#: A word of source (an identifier, a keyword, a number) as the bytes hold it.
_WORD = re.compile(rb"\w+")


def binds(function: Function, call: ast.Call) -> bool:
    """Whether ``call``'s arguments can bind to ``function``'s parameters:
    no more positional arguments than it takes (after ``self`` / ``cls`` for
    a call on an object, and for ``Class(...)`` of an ``__init__``), every
    keyword one of its names, every parameter without a default given. A
    ``*args`` or ``**kwargs`` in the call can bind to anything."""
    if unpacks(call):
        return True
    a = function.node.args
    positional = [p.arg for p in (*a.posonlyargs, *a.args)]
    constructs = function.node.name == "__init__"  # Class(...) binds after ``self``
    if (
        function.owner is not None
        and positional
        and (constructs or isinstance(call.func, ast.Attribute))
    ) and not _static(function):
        positional = positional[1:]
    if len(call.args) > len(positional) and a.vararg is None:
        return False
    given = set(positional[: len(call.args)])
    names = set(positional) | {p.arg for p in a.kwonlyargs}
    for keyword in call.keywords:
        if keyword.arg not in names and a.kwarg is None:
            return False
        given.add(str(keyword.arg))
    required = positional[: len(positional) - len(a.defaults)] if a.defaults else positional
    required += [p.arg for p, d in zip(a.kwonlyargs, a.kw_defaults, strict=True) if d is None]
    return set(required) <= given


def unpacks(call: ast.Call) -> bool:
    """The call passes ``*args`` or ``**kwargs``: any parameter may get a value."""
    return any(isinstance(a, ast.Starred) for a in call.args) or any(
        k.arg is None for k in call.keywords
    )


def _static(function: Function) -> bool:
    return any(
        isinstance(d, ast.Name) and d.id == "staticmethod" for d in function.node.decorator_list
    )


class NamedCalls:
    """The calls of each name defined more than once, by the name
    (:meth:`calls`): the files are searched by an index of the words they
    hold, built once for those names (:meth:`index`), and each name's calls
    are found once for every definition of it."""

    def __init__(self, modules: Modules, names: Iterable[str]) -> None:
        self.modules = modules
        self.names = frozenset(n for n in names if n.isascii())
        """The names indexed (ASCII only: a word of ``\\w`` in bytes)."""
        self._files: dict[str, list[str]] | None = None
        self._calls: dict[str, list[tuple[Module, ast.Call]] | None] = {}

    def index(self) -> dict[str, list[str]]:
        """Name -> the files (sorted) in which it is a word, for :attr:`names`."""
        if self._files is None:
            wanted = {n.encode() for n in self.names}
            found: dict[str, list[str]] = {}
            for path, data in sorted(self.modules.files.items()):
                for word in wanted.intersection(_WORD.findall(data)):
                    found.setdefault(word.decode(), []).append(path)
            self._files = found
        return self._files

    def files_naming(self, name: str) -> list[str]:
        """The files (sorted) holding ``name`` as a word, or more (every file
        holding its bytes when the name is not indexed)."""
        if name in self.names:
            return self.index().get(name, [])
        raw = name.encode()
        return sorted(p for p, data in self.modules.files.items() if raw in data)

    def calls(self, name: str) -> list[tuple[Module, ast.Call]] | None:
        """Every call of ``name`` in the commit, with its module, in (path,
        :func:`ast.walk`) order; None when the calls cannot all be known
        (see :func:`signature_calls`)."""
        if name not in self._calls:
            self._calls[name] = self._find(name)
        return self._calls[name]

    def _find(self, name: str) -> list[tuple[Module, ast.Call]] | None:
        pattern = re.compile(rb"(?<![\w])" + re.escape(name.encode()) + rb"(?!\w)")
        calling: list[tuple[str, list[int] | None]] = []
        for path in self.files_naming(name):
            data = self.modules.files[path]
            uses: set[str] = set()
            for use in _uses(data, pattern):
                if use == "other":
                    return None
                uses.add(use)
            if "call" in uses:
                calling.append((path, _lines_of(data, pattern)))
        found: list[tuple[Module, ast.Call]] = []
        for path, lines in calling:
            module = self.modules.get(path)
            if module is None:
                return None
            found += [(module, node) for node in module.calls_named(name, lines)]
            if len(found) > MAX_NAMED_CALLS:
                return None
        return found


def _lines_of(data: bytes, pattern: re.Pattern[bytes]) -> list[int] | None:
    """The lines (sorted) of every occurrence of the name in ``data``: a
    call of it names it on one of them, in a comment or not. None when the
    bytes' lines may not be the parser's (a byte outside ASCII, which may
    spell the name another way; a lone carriage return, which ends a line)."""
    if not data.isascii() or b"\r" in data.replace(b"\r\n", b""):
        return None
    lines: list[int] = []
    line, seen = 1, 0
    for m in pattern.finditer(data):
        line += data.count(b"\n", seen, m.start())
        seen = m.start()
        if not lines or lines[-1] != line:
            lines.append(line)
    return lines


def signature_calls(
    named: NamedCalls, function: Function, name: str, home: str
) -> list[tuple[Module, ast.Call]] | None:
    """Every call of ``name`` in the commit that can bind to ``function``
    (:func:`binds`) and, by the bare name, can name it where it is made
    (:func:`_in_scope`; ``home``: the path of ``function``'s file), with its
    module, in (path, line) order; None when the calls cannot all be known:
    the name is used other than in a call, a ``def``, an import or a comment
    (an alias, a string, a table), a file calling it does not parse, or it
    is called more than :data:`MAX_NAMED_CALLS` times."""
    calls = named.calls(name)
    if calls is None:
        return None
    return [
        (module, node)
        for module, node in calls
        if binds(function, node) and _in_scope(named.modules, module, node, home)
    ]


def _in_scope(modules: Modules, module: Module, call: ast.Call, home: str) -> bool:
    """Whether ``call``, made in ``module``, can call the definition in the
    file ``home``: a call on an object (``self.f()``) can; a call by the
    bare name can unless every module-level binding of that name in
    ``module`` is a ``def`` or ``class`` of its own, or an import from
    another module that defines it or from a package not in the commit. A
    name bound only inside a function (a local import) can."""
    if not isinstance(call.func, ast.Name) or module.path == home:
        return True
    bindings = module.globals.get(call.func.id, [])
    if not bindings:
        return True
    return any(_may_be(modules, module, b, call.func.id, home) for b in bindings)


def _may_be(modules: Modules, module: Module, binding: Binding, name: str, home: str) -> bool:
    """Whether the module-level ``binding`` of ``name`` in ``module`` may
    give the definition in ``home`` (see :func:`_in_scope`)."""
    if binding.kind in ("def", "class"):
        return False
    statement = binding.statement
    if binding.kind != "import" or not isinstance(statement, ast.ImportFrom):
        return True
    dotted = absolute_module(module.path, statement)
    if not dotted:
        return True
    source = modules.path_of(dotted)
    if source is None:
        return modules.local(dotted.split(".", 1)[0])
    if source == home:
        return True
    other = modules.get(source)
    return other is None or not any(b.kind in ("def", "class") for b in other.globals.get(name, []))


def _imported(data: bytes, line_start: int, at: int) -> bool:
    """Whether the word at ``at`` (on the line starting at ``line_start``)
    is a name an ``import`` or ``from ... import`` statement binds: the line
    starts that statement, or the word is inside the open parenthesis of a
    ``from ... import (`` begun on an earlier line."""
    if data[line_start:at].lstrip().startswith((b"from ", b"import ")):
        return True
    opened = data.rfind(b"(", 0, at)
    if opened == -1 or data.rfind(b")", 0, at) > opened:
        return False
    start = data.rfind(b"\n", 0, opened) + 1
    return data[start:opened].lstrip().startswith(b"from ") and data[
        start:opened
    ].rstrip().endswith(b"import")


def _uses(data: bytes, pattern: re.Pattern[bytes]) -> Iterator[str]:
    """``call``, ``def``, ``import`` or ``other`` for each occurrence of the name as a
    word in ``data`` (occurrences in a comment are left out)."""
    for m in pattern.finditer(data):
        start = data.rfind(b"\n", 0, m.start()) + 1
        end = data.find(b"\n", m.end())
        line = data[start : end if end != -1 else len(data)]
        text = line.decode("utf-8", "replace")
        at = len(data[start : m.start()].decode("utf-8", "replace"))
        mark = comment_start(text)
        if mark != -1 and mark < at:
            continue
        before = data[start : m.start()].rstrip()
        if before.endswith((b"def", b"class")):
            yield "def"
        elif _imported(data, start, m.start()) and data[m.end() : m.end() + 4] != b" as ":
            yield "import"
        elif data[m.end() : m.end() + 1] == b"(":
            yield "call"
        else:
            yield "other"
