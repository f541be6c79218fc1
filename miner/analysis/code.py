"""The source of one commit held for analysis: byte search, a name index, cached ``ast`` trees.

The analysis stages read files of the commit beyond the mined sites (the
arguments class, the environment registry, the callers of a function). They
share one :class:`SourceIndex` so that a file is parsed at most once and only
when a cheap byte search says it matters.
"""

from __future__ import annotations

import ast
import bisect
import functools
import logging
import re
import string
import warnings
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from miner.extract.imports import import_statements

log = logging.getLogger("miner")

_KEEP = set((string.ascii_letters + string.digits + "_(").encode())
#: Maps every byte that cannot be part of ``name(`` to a space.
_TOKEN_TABLE = bytes(b if b in _KEEP else 32 for b in range(256))


#: A ``def`` / ``class`` line: (indentation, keyword, name). The search starts
#: at the keyword (a literal, so it is fast) and checks the line start after.
_KEYWORD = re.compile(rb"(?:def|class)[ \t]+(\w+)")


class _Headers:
    """``finditer`` over ``def`` / ``class`` header lines, found by keyword."""

    def finditer(self, data: bytes) -> Iterator[_Header]:
        for m in _KEYWORD.finditer(data):
            start = data.rfind(b"\n", 0, m.start()) + 1
            lead = data[start : m.start()]
            indent = lead.lstrip(b" \t")
            if indent and indent not in (b"async ", b"async\t"):
                continue
            yield _Header(start, lead[: len(lead) - len(indent)], m.group(0).split()[0], m.group(1))


@dataclass(frozen=True, slots=True)
class _Header:
    start: int
    """Offset of the line start."""
    indent: bytes
    keyword: bytes
    name: bytes

    def group(self, n: int) -> bytes:
        return (self.indent, self.keyword, self.name)[n - 1]


HEADER = _Headers()


class FileWords(NamedTuple):
    """The words of one file that :class:`SourceIndex` searches (:func:`file_words`)."""

    calls: frozenset[bytes]
    """Every ``name(`` of the file (a call or a ``def``), with its ``(``."""
    words: frozenset[bytes]
    """Every other word (an import, a reference, a comment)."""
    defs: tuple[str, ...]
    """The names of its ``def`` / ``class`` headers (:data:`HEADER`), in file order."""


def file_words(data: bytes) -> FileWords:
    """The :class:`FileWords` of one file's bytes: words are runs of
    ``[A-Za-z0-9_]`` (a following ``(`` kept); no parse."""
    words = set(data.translate(_TOKEN_TABLE).replace(b"(", b"( ").split())
    calls = frozenset(w for w in words if w.endswith(b"("))
    defs = tuple(m.group(3).decode("ascii", "replace") for m in HEADER.finditer(data))
    return FileWords(calls, frozenset(words - calls), defs)


class SourceIndex:
    """The ``.py`` files of one commit (path -> bytes), searched and parsed lazily.

    Never raises on bad input: a file that does not parse has no tree (logged
    once as ``path: reason``).
    """

    def __init__(
        self, files: Mapping[str, bytes], words: Mapping[str, FileWords] | None = None
    ) -> None:
        """``words``: the :func:`file_words` of some of ``files`` by path,
        computed before (in the extraction's workers); the rest are read
        here when a search first needs them."""
        self.files = dict(sorted(files.items()))
        self._trees: dict[str, ast.Module | None] = {}
        self._tokens: dict[str, frozenset[bytes]] | None = None
        self._bare: dict[str, frozenset[bytes]] = {}
        self._defs: dict[str, list[str]] | None = None
        self._known = dict(words or {})

    def grep(self, *needles: bytes) -> list[str]:
        """Paths (sorted) whose bytes contain any of ``needles``."""
        return [p for p, data in self.files.items() if any(n in data for n in needles)]

    def tree(self, path: str) -> ast.Module | None:
        """The parsed module at ``path`` (cached), or None when it does not parse."""
        if path not in self._trees:
            data = self.files.get(path)
            tree = None
            if data is not None:
                try:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        tree = ast.parse(data, filename=path)
                except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
                    log.info("%s: not parsed for analysis (%s)", path, type(exc).__name__)
            self._trees[path] = tree
        return self._trees[path]

    def _build_tokens(self) -> None:
        tokens: dict[str, frozenset[bytes]] = {}
        defs: dict[str, list[str]] = defaultdict(list)
        for path, data in self.files.items():
            found = self._known.get(path) or file_words(data)
            tokens[path], self._bare[path] = found.calls, found.words
            for name in found.defs:
                defs[name].append(path)
        self._tokens = tokens
        self._defs = dict(defs)
        self._known.clear()

    def callers_of(self, names: Iterable[str]) -> dict[str, list[str]]:
        """For each name, the paths (sorted) where ``name(`` occurs (a call or a def)."""
        if self._tokens is None:
            self._build_tokens()
        assert self._tokens is not None
        wanted = {n.encode() + b"(": n for n in names}
        found: dict[str, list[str]] = defaultdict(list)
        for path, words in self._tokens.items():
            for word in words & wanted.keys():
                found[wanted[word]].append(path)
        return found

    def mentions_of(self, names: Iterable[str]) -> dict[str, list[str]]:
        """For each name, the paths (sorted) where it occurs as a word not
        directly followed by ``(`` (an import, a reference, a comment)."""
        if self._tokens is None:
            self._build_tokens()
        wanted = {n.encode(): n for n in names}
        found: dict[str, list[str]] = defaultdict(list)
        for path, words in self._bare.items():
            for word in words & wanted.keys():
                found[wanted[word]].append(path)
        return found

    def definitions(self, name: str) -> list[str]:
        """Paths (in path order, one entry per ``def``/``class``) defining ``name``."""
        if self._defs is None:
            self._build_tokens()
        assert self._defs is not None
        return self._defs.get(name, [])

    def module_name(self, path: str) -> str:
        """Dotted module of ``path``, from the highest enclosing folder holding an
        ``__init__.py`` (folders between without one are namespace packages):
        ``python/sglang/srt/server_args.py`` -> ``sglang.srt.server_args``."""
        parts = path[:-3].split("/") if path.endswith(".py") else path.split("/")
        first = len(parts) - 1
        for depth in range(1, len(parts)):
            if "/".join(parts[:depth]) + "/__init__.py" in self.files:
                first = depth - 1
                break
        if parts[-1] == "__init__":
            parts = parts[:-1]
        return ".".join(parts[first:]) or path


@functools.lru_cache(maxsize=1 << 16)
def comment_start(line: str, mark: str = "#") -> int:
    """Offset in one source ``line`` of the first ``mark`` (``#``, or ``  #``
    for a comment after code) that no quote encloses (an even count of each
    quote character before it); -1 when there is none. A quote of a string
    that goes on over lines is not seen."""
    at = line.find(mark)
    while at != -1:
        before = line[:at]
        if before.count('"') % 2 == 0 and before.count("'") % 2 == 0:
            return at
        at = line.find(mark, at + 1)
    return -1


def in_long_string(data: bytes, at: int) -> bool:
    """Whether the offset ``at`` of the module ``data`` is inside a
    triple-quoted string (:func:`_long_strings`)."""
    spans = _long_strings(data)
    i = bisect.bisect_right(spans, (at, len(data) + 1)) - 1
    return i >= 0 and spans[i][0] <= at < spans[i][1]


#: The quotes that open and close a triple-quoted string.
_TRIPLE = re.compile(rb'"""|\'\'\'')


@functools.lru_cache(maxsize=64)
def _long_strings(data: bytes) -> tuple[tuple[int, int], ...]:
    """The byte spans (start, end) of the triple-quoted strings of ``data``
    (docstrings, text over several lines), in order: each opening triple
    quote is closed by the next one of its kind. A scan of the quotes alone
    (a triple quote inside a one-line string or a comment is taken for one);
    :mod:`tokenize` would read every token of every file the callers' index
    looks into, several times slower."""
    out = []
    opening: bytes | None = None
    start = 0
    for m in _TRIPLE.finditer(data):
        if opening is None:
            opening, start = m.group(0), m.start()
        elif m.group(0) == opening and data[m.start() - 1 : m.start()] != b"\\":
            out.append((start, m.end()))
            opening = None
    if opening is not None:
        out.append((start, len(data)))
    return tuple(out)


def word_offsets(data: bytes, word: bytes, start: int = 0) -> Iterator[int]:
    """The offsets of ``word`` in ``data`` from ``start`` where it stands as
    a whole word (no letter, digit or ``_`` on either side)."""
    at = data.find(word, start)
    while at != -1:
        end = at + len(word)
        before, after = data[at - 1 : at], data[end : end + 1]
        if not (before.isalnum() or before == b"_" or after.isalnum() or after == b"_"):
            yield at
        at = data.find(word, end)


@functools.cache
def file_imports(data: bytes) -> tuple[tuple[str | None, tuple[tuple[str, str], ...]], ...]:
    """:func:`miner.extract.imports.import_statements` of a file's bytes,
    cached by them (three readers of the facts ask for the same files;
    :func:`miner.analysis.facts.collect` empties the cache when done)."""
    return tuple(import_statements(data))


def one_line(text: str) -> str:
    """``text`` (code over one or more lines) on one line: runs of white
    space made one space, with no space just inside a bracket and no comma
    before a closing one (``f( a, b, )`` -> ``f(a, b)``), except the comma
    that makes a tuple of one (``("static",)``, ``a[i,]`` stay). Inside a string literal
    only the white space is collapsed (the text is not parsed: a string over
    lines is taken as written)."""
    flat = " ".join(text.split())
    out: list[str] = []
    # [bracket, commas at its top level, after a name or a bracket (a call, a subscript)]
    opened: list[list[Any]] = []
    quote = ""
    i = 0
    while i < len(flat):
        ch = flat[i]
        if quote:
            if ch == "\\":
                out.append(flat[i : i + 2])
                i += 2
            elif flat.startswith(quote, i):
                out.append(quote)
                i += len(quote)
                quote = ""
            else:
                out.append(ch)
                i += 1
            continue
        if ch in "'\"":
            quote = flat[i : i + 3] if flat[i : i + 3] in ('"""', "'''") else ch
            out.append(quote)
            i += len(quote)
            continue
        if ch == " " and (
            (out and out[-1] in _OPENING) or (i + 1 < len(flat) and flat[i + 1] in _CLOSING)
        ):
            i += 1
            continue
        if ch in _OPENING:
            before = out[-1][-1:] if out else ""
            opened.append([ch, 0, before.isalnum() or before in ("_", ")", "]")])
        elif ch == "," and opened:
            opened[-1][1] += 1
        elif ch in _CLOSING:
            bracket, commas, after = opened.pop() if opened else ("", 0, False)
            # ``(x,)`` and ``a[x,]`` are tuples of one: their comma stays
            tuple_of_one = commas == 1 and (bracket == "(") != after
            if out and out[-1] == "," and not (tuple_of_one and bracket in "(["):
                out.pop()
        out.append(ch)
        i += 1
    return "".join(out)


_OPENING, _CLOSING = "([{", ")]}"


@functools.lru_cache(maxsize=1 << 13)
def parse_expr(text: str) -> ast.expr | None:
    """``text`` parsed as one expression (warnings silenced), or None.

    Cached: the same tree for the same text, so callers must not change it
    (the analysis only reads trees). The analysis of v0.5.19 parses 43,000
    texts 289,000 times, mostly the same few while one error is read: a
    small cache keeps most of the hits (4,096 trees kept 194,000 of the
    246,000 that 65,536 did), and a large one stays in every process of the
    pool (with 65,536, the history run's peak rose from 1,964 to 2,049 MiB)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ast.parse(text, mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def literal_text(node: ast.AST) -> str | None:
    """A literal's value as display text: a string as it is, other literals
    as Python writes them; None for non-literals."""
    try:
        value = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    return value if isinstance(value, str) else repr(value)


def unparse(node: ast.AST | None) -> str | None:
    """Single-line source text of ``node`` (None stays None)."""
    if node is None:
        return None
    try:
        return " ".join(ast.unparse(node).split())
    except (ValueError, RecursionError):  # pragma: no cover - malformed trees only
        return None


def dotted(node: ast.AST) -> str | None:
    """``a.b.c`` for a chain of names and attributes, else None."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def walk(node: ast.AST) -> Iterator[ast.AST]:
    """:func:`ast.walk`: ``node`` and every node under it, in the same order
    (breadth first, each node's fields in order), about half its time: one
    generator, no :func:`ast.iter_child_nodes` per node."""
    todo = [node]
    for each in todo:  # grows as it goes: the queue
        todo.extend(child_nodes(each))
        yield each


def child_nodes(node: ast.AST) -> list[ast.AST]:
    """The direct children of ``node``, in :func:`ast.iter_child_nodes`
    order (a list built without its generators: the walks' hot loop)."""
    out: list[ast.AST] = []
    for name in node._fields:
        value = getattr(node, name, None)
        if isinstance(value, ast.AST):
            out.append(value)
        elif isinstance(value, list):
            out.extend(v for v in value if isinstance(v, ast.AST))
    return out


def call_name(node: ast.Call) -> str | None:
    """The last name of a call's function (``parser.add_argument`` -> ``add_argument``)."""
    func = node.func
    if isinstance(func, ast.Attribute):
        return func.attr
    if isinstance(func, ast.Name):
        return func.id
    return None


def docstring(node: ast.AST) -> str | None:
    """First paragraph of a docstring, folded to one line, or None."""
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Module)):
        return None
    text = ast.get_docstring(node)
    if not text:
        return None
    first = text.strip().split("\n\n", 1)[0]
    return " ".join(first.split()) or None
