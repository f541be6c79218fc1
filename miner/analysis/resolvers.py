"""Code that reads or resolves a setting elsewhere in the commit: its comments, and the
value it picks when the setting is left out.

Two facts, both gathered once per commit (:func:`setting_code`), for the
settings that the sites' guards test:

* :class:`Note`: a comment block inside a function that reads or writes the
  setting (``x.setting``, ``x["setting"]``, ``setting=`` in a call), kept with
  the names of the statement right below it. A card quotes a note when that
  statement (or the comment) uses a name its own guards test, or the call that
  name is assigned from (``is_hybrid_ssm = uses_ssm_state(...)``): the comment
  above ``supports_host_pool = not uses_ssm_state(...)`` in the function that
  resolves the retraction backend says why a Mamba model is refused.
* :class:`Choice`: a function that stores ``A if C else B`` (directly or through
  a local name) into the setting, with the conjuncts of ``C`` (a local name in
  ``C`` followed one step to its own assignment). When ``C`` needs a predicate
  false that the card's guard needs true, the setting resolves to ``B`` for the
  inputs that reach the error (:meth:`Choice.conflicts`).

The scan is by bytes and indentation, as in :mod:`miner.analysis.callers`: the
functions are found from their ``def`` lines, and only the few files holding a
:class:`Choice` are parsed. Settings mentioned in more than :data:`MAX_FILES`
files are read "everywhere": their readers' comments are not kept, only their
resolvers'.
"""

from __future__ import annotations

import ast
import bisect
import functools
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import NamedTuple

from miner.analysis.code import SourceIndex, literal_text, unparse, walk
from miner.lifecycle import fork_map

#: A setting read from more files than this has its readers' comments left out.
MAX_FILES = 40
#: Most lines of the statement below a comment looked at.
STATEMENT_LINES = 8

_IDENT = re.compile(r"[A-Za-z_]\w*")
_NEWLINE = re.compile("\n")
_DEF = re.compile(r"^([ \t]*)(?:async[ \t]+)?def[ \t]+(\w+)")
_WORDS_ONLY = bytes(
    b if (48 <= b <= 57 or 65 <= b <= 90 or 97 <= b <= 122 or b == 95) else 32 for b in range(256)
)


@dataclass(frozen=True, slots=True)
class Note:
    """A comment block in a function that reads or writes ``setting``."""

    setting: str
    function: str
    path: str
    line: int
    """First line of the comment."""
    text: str
    """The comment's lines joined (``#`` and indentation dropped)."""
    uses: frozenset[str]
    """Names in the statement right below the comment (up to :data:`STATEMENT_LINES` lines)."""
    writes: bool
    """The function stores into the setting (it resolves it), not only reads it."""


@dataclass(frozen=True, slots=True)
class Requirement:
    """One conjunct of a :class:`Choice`'s condition: ``[not] name(...)`` or ``[not] name``."""

    text: str
    name: str
    """The called function, or the last part of the name tested."""
    negated: bool
    line: int
    via: str = ""
    """The local name of the condition this conjunct was reached through, if any."""
    via_line: int = 0


@dataclass(frozen=True, slots=True)
class Choice:
    """``setting`` is stored ``value if <requires> else other`` in ``function``."""

    setting: str
    function: str
    path: str
    line: int
    """Line of the store into the setting."""
    value: str
    other: str
    requires: tuple[Requirement, ...]
    """The conjuncts of the condition (all needed for ``value``)."""
    unset_only: bool
    """The store is under an ``if ... is None`` test: it resolves a setting left out."""
    choice_line: int = 0
    """Line of the conditional expression."""

    def conflicts(self, name: str, negated: bool) -> Requirement | None:
        """The conjunct that an input with ``name`` true (``negated``: false)
        makes false, so that the setting resolves to :attr:`other`; or None."""
        for req in self.requires:
            if req.name == name and req.negated != negated:
                return req
        return None


#: A one-line string literal, and a comment (what :func:`_code` drops).
_QUOTED = re.compile(r"(['\"]).*?\1")
_COMMENT = re.compile(r"#.*$")


def _code(text: str) -> str:
    """One line without its one-line strings and its comment."""
    return _COMMENT.sub("", _QUOTED.sub("", text))


def _balance(code: str) -> int:
    """Brackets opened minus closed in ``code`` (a line of :func:`_code`)."""
    return sum(code.count(c) for c in "([{") - sum(code.count(c) for c in ")]}")


def _depth(text: str) -> int:
    return _balance(_code(text))


def _function_ranges(lines: list[str]) -> list[tuple[int, int, str]]:
    """(first, last, name) 0-based line ranges of every ``def`` in ``lines``, by
    indentation (one pass; a line opening with a closing bracket continues
    the statement above)."""
    out: list[tuple[int, int, str]] = []
    stack: list[tuple[int, int, str]] = []
    last_code = 0
    for n, text in enumerate(lines):
        stripped = text.lstrip()
        if not stripped or stripped.startswith(("#", ")", "]", "}")):
            continue
        level = len(text) - len(stripped)
        while stack and level <= stack[-1][0]:
            indent, first, name = stack.pop()
            out.append((first, last_code, name))
        m = _DEF.match(text) if stripped.startswith(("def", "async")) else None
        if m is not None:
            stack.append((level, n, m.group(2)))
        last_code = n
    while stack:
        indent, first, name = stack.pop()
        out.append((first, len(lines) - 1, name))
    return sorted(out)


def _innermost(
    ranges: list[tuple[int, int, str]], firsts: list[int], at: int
) -> tuple[int, int, str] | None:
    """The innermost range of ``ranges`` (sorted, ``firsts`` their first lines) holding ``at``."""
    i = bisect.bisect_left(firsts, at) - 1
    while i >= 0:
        first, last, name = ranges[i]
        if first < at <= last:
            return ranges[i]
        i -= 1
    return None


def _comments(lines: list[str], first: int, last: int) -> Iterable[tuple[int, str, frozenset[str]]]:
    """(0-based first line, text, names of the statement below) of each comment
    block in ``lines[first..last]``."""
    n = first + 1
    while n <= last:
        if not lines[n].lstrip().startswith("#"):
            n += 1
            continue
        start, parts = n, []
        while n <= last and lines[n].lstrip().startswith("#"):
            parts.append(lines[n].strip().lstrip("#").strip())
            n += 1
        names: set[str] = set()
        depth, count = 0, 0
        while n + count <= last and count < STATEMENT_LINES:
            text = lines[n + count]
            count += 1
            if not text.strip() or text.lstrip().startswith("#"):
                if depth <= 0 and names:
                    break
                continue
            code = _code(text)
            names.update(_IDENT.findall(code))
            depth += _balance(code)
            if depth <= 0:
                break
        yield start, " ".join(p for p in parts if p), frozenset(names)


@functools.lru_cache(maxsize=4096)
def _mentions(setting: str) -> re.Pattern[str]:
    s = re.escape(setting)
    return re.compile(rf"\.{s}\b|['\"]{s}['\"]|(?<![\w.]){s}[ \t]*=(?!=)")


@functools.lru_cache(maxsize=4096)
def _keyed_writes(setting: str) -> re.Pattern[str]:
    """Stores by key or keyword only (``o["x"] = v``, ``{"x": v}``, ``f(x=v)``):
    for a setting whose name is everywhere, ``self.x = v`` is mostly another
    object's attribute of the same name."""
    s = re.escape(setting)
    return re.compile(
        rf"\[['\"]{s}['\"]\][ \t]*=(?!=)"
        rf"|['\"]{s}['\"][ \t]*:"
        rf"|[(,][ \t]*{s}[ \t]*=(?!=)"
    )


_IF_ELSE = re.compile(r"=.*\bif\b.*\belse\b")
_IF_ELSE_LINES = re.compile(r"\bif\b[\s\S]*\belse\b")
_STORED_NAME = re.compile(r"=[ \t]*([A-Za-z_]\w*)[ \t]*,?[ \t]*\)?[ \t]*$")


def _may_choose(body: list[str], setting: str, write: re.Pattern[str]) -> bool:
    """Does a store into ``setting`` in ``body`` (a function's lines) take an
    ``if`` expression, or a name the function assigns one (by its text)?"""
    text = "\n".join(body)
    for line in body:
        if setting not in line or not write.search(line):
            continue
        if _IF_ELSE.search(line):
            return True
        m = _STORED_NAME.search(line)
        if m is None:
            continue
        for bound in re.finditer(
            rf"^[ \t]*{re.escape(m.group(1))}[ \t]*(?::[^=\n]+)?=(?!=)"
            r"(.*(?:\n(?![ \t]*[A-Za-z_]\w*[ \t]*=(?!=)).*){0,20})",
            text,
            re.M,
        ):
            if _IF_ELSE_LINES.search(bound.group(1)):
                return True
    return False


@functools.lru_cache(maxsize=4096)
def _writes(setting: str) -> re.Pattern[str]:
    s = re.escape(setting)
    return re.compile(
        rf"\.{s}[ \t]*=(?!=)|\[['\"]{s}['\"]\][ \t]*=(?!=)"
        rf"|['\"]{s}['\"][ \t]*:|[(,][ \t]*{s}[ \t]*=(?!=)"
    )


#: Files per task of a worker of :func:`setting_code`.
FILES_PER_TASK = 16


def setting_code(
    index: SourceIndex, settings: Iterable[str], keys: Iterable[str], jobs: int = 1
) -> tuple[dict[str, tuple[Note, ...]], dict[str, tuple[Choice, ...]]]:
    """For each of ``settings``: the comment blocks of the functions reading or
    writing it whose statement below uses one of ``keys`` (or whose text names
    one), and the conditional values its resolvers store (:class:`Choice`).
    ``jobs`` > 1: the files are read in that many forked processes (the same
    result)."""
    wanted = {s.encode() for s in settings}
    if not wanted:
        return {}, {}
    where: dict[str, list[str]] = {}
    for path, data in index.files.items():
        for w in sorted(wanted & set(data.translate(_WORDS_ONLY).split())):
            where.setdefault(w.decode(), []).append(path)
    by_path: dict[str, list[str]] = {}
    for setting, paths in where.items():
        for path in paths:
            by_path.setdefault(path, []).append(setting)
    reader = _FileReader(
        index, frozenset(keys), {s for s, p in where.items() if len(p) > MAX_FILES}
    )
    notes: dict[str, list[Note]] = {}
    choices: dict[str, list[Choice]] = {}
    work = sorted(by_path.items())
    for found_notes, found_choices in fork_map(jobs, reader.read, work, FILES_PER_TASK):
        for note in found_notes:
            notes.setdefault(note.setting, []).append(note)
        for choice in found_choices:
            choices.setdefault(choice.setting, []).append(choice)
    return (
        {k: tuple(v) for k, v in sorted(notes.items())},
        {k: tuple(v) for k, v in sorted(choices.items())},
    )


@dataclass
class _FileReader:
    """:func:`setting_code` for one file at a time."""

    index: SourceIndex
    keys: frozenset[str]
    everywhere: set[str]
    """Settings named in more than :data:`MAX_FILES` files."""

    def read(self, item: tuple[str, list[str]]) -> tuple[list[Note], list[Choice]]:
        """The notes and choices of the settings ``item[1]`` in the file ``item[0]``,
        setting by setting (sorted), in line order."""
        path, found = item
        index, key_set = self.index, self.keys
        notes: list[Note] = []
        choices: list[Choice] = []
        text = index.files[path].decode("utf-8", "replace")
        lines = text.split("\n")
        starts = [0, *(m.end() for m in _NEWLINE.finditer(text))]
        functions: _Functions = {}
        ranges: list[tuple[int, int, str]] | None = None
        firsts: list[int] = []
        for setting in sorted(found):
            everywhere = setting in self.everywhere
            spans: dict[tuple[int, int], tuple[str, bool]] = {}
            seen_lines: set[int] = set()
            at = text.find(setting)
            while at != -1:
                n = bisect.bisect_right(starts, at) - 1
                at = text.find(setting, at + len(setting))
                if n in seen_lines:
                    continue
                seen_lines.add(n)
                line = lines[n]
                if everywhere:
                    if not _keyed_writes(setting).search(line):
                        continue
                    stores = True
                else:
                    stores = bool(_writes(setting).search(line))
                    if not stores and not _mentions(setting).search(line):
                        continue
                if ranges is None:
                    ranges = _function_ranges(lines)
                    firsts = [r[0] for r in ranges]
                func = _innermost(ranges, firsts, n)
                if func is None:
                    continue
                first, end, name = func
                old = spans.get((first, end), (name, False))[1]
                spans[(first, end)] = (name, stores or old)
            for (first, end), (name, stores) in sorted(spans.items()):
                for start, comment, uses in _comments(lines, first, end):
                    if not comment or len(comment.split()) < 4:
                        continue
                    if not (uses & key_set) and not (set(_IDENT.findall(comment)) & key_set):
                        continue
                    notes.append(
                        Note(setting, name, path, start + 1, comment, uses - {setting}, stores)
                    )
                if stores and _may_choose(lines[first : end + 1], setting, _writes(setting)):
                    choices.extend(_choices(index, path, setting, first + 1, functions))
        return notes, choices


def _stores(node: ast.AST, setting: str) -> ast.expr | None:
    """The value ``node`` stores into ``setting``, or None."""
    if isinstance(node, ast.Assign):
        for target in node.targets:
            if (
                isinstance(target, ast.Subscript)
                and isinstance(target.slice, ast.Constant)
                and target.slice.value == setting
            ):
                return node.value
            if isinstance(target, ast.Attribute) and target.attr == setting:
                return node.value
    if isinstance(node, ast.Call):
        for kw in node.keywords:
            if kw.arg == setting:
                return kw.value
    if isinstance(node, ast.Dict):
        for k, v in zip(node.keys, node.values, strict=True):
            if isinstance(k, ast.Constant) and k.value == setting:
                return v
    return None


def _before(found: list[ast.Assign], line: int) -> ast.Assign | None:
    earlier = [a for a in found if a.lineno < line]
    return max(earlier, key=lambda a: a.lineno) if earlier else None


def _requirements(
    cond: ast.expr, local: Mapping[str, list[ast.Assign]], via: str = "", via_line: int = 0
) -> list[Requirement]:
    parts = cond.values if isinstance(cond, ast.BoolOp) and isinstance(cond.op, ast.And) else [cond]
    out: list[Requirement] = []
    for part in parts:
        negated = False
        atom = part
        if isinstance(atom, ast.UnaryOp) and isinstance(atom.op, ast.Not):
            negated, atom = True, atom.operand
        if isinstance(atom, ast.Name) and not negated and not via and atom.id in local:
            inner = _before(local[atom.id], part.lineno)
            if inner is not None:
                out.extend(_requirements(inner.value, local, atom.id, inner.lineno))
                continue
        name = None
        if isinstance(atom, ast.Call):
            func = atom.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
        elif isinstance(atom, ast.Name):
            name = atom.id
        elif isinstance(atom, ast.Attribute):
            name = atom.attr
        text = unparse(part)
        if name and text:
            text = " ".join(text.split())
            out.append(Requirement(text, name, negated, part.lineno, via, via_line))
    return out


class _Function(NamedTuple):
    """A parsed function as :func:`_choices` reads it, walked once for all
    its settings."""

    node: ast.FunctionDef | ast.AsyncFunctionDef
    nodes: list[ast.AST]
    """Every node under it, in :func:`ast.walk` order."""
    local: dict[str, list[ast.Assign]]
    """Its assignments of one name (``x = ...``), by the name."""
    unset_lines: set[int]
    """The lines of the bodies of its ``if ... is None`` tests."""


#: A file's functions by ``def`` line: parsed, then walked once read (:func:`_choices`).
_Functions = dict[int, "_Function | ast.FunctionDef | ast.AsyncFunctionDef"]


def _function(func: ast.FunctionDef | ast.AsyncFunctionDef) -> _Function:
    """:class:`_Function` of ``func``: one walk."""
    nodes = list(walk(func))
    local: dict[str, list[ast.Assign]] = {}
    unset_lines: set[int] = set()
    for node in nodes:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, ast.Name):
                local.setdefault(target.id, []).append(node)
        elif isinstance(node, ast.If) and _is_none_test(node.test):
            for inner in node.body:
                unset_lines.update(range(inner.lineno, (inner.end_lineno or inner.lineno) + 1))
    return _Function(func, nodes, local, unset_lines)


def _file_functions(tree: ast.Module) -> _Functions:
    """The functions of a module by their ``def`` line (walked later, when read)."""
    out: _Functions = {}
    stack: list[ast.AST] = [tree]
    while stack:  # statements only: a ``def`` is in no expression
        node = stack.pop()
        for name in ("body", "orelse", "finalbody"):
            stack.extend(getattr(node, name, None) or ())
        for part in (*getattr(node, "handlers", ()), *getattr(node, "cases", ())):
            stack.extend(part.body)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out[node.lineno] = node
    return out


def _choices(
    index: SourceIndex,
    path: str,
    setting: str,
    first: int,
    functions: _Functions,
) -> list[Choice]:
    """The :class:`Choice` stores into ``setting`` of the function at ``first``
    (``functions``: the file's functions by ``def`` line, filled on first
    use, each walked when first read)."""
    if not functions:
        tree = index.tree(path)
        if tree is None:
            return []
        functions.update(_file_functions(tree))
    found = functions.get(first)
    if found is None:
        return []
    if not isinstance(found, _Function):
        found = functions[first] = _function(found)
    func, local, unset_lines = found.node, found.local, found.unset_lines
    out = []
    for node in found.nodes:
        value = _stores(node, setting)
        if value is None:
            continue
        line = getattr(node, "lineno", value.lineno)
        if isinstance(value, ast.Name) and value.id in local:
            before = _before(local[value.id], line)
            value = before.value if before is not None else value
        if not isinstance(value, ast.IfExp):
            continue
        then, other = literal_text(value.body), literal_text(value.orelse)
        if then is None or other is None:
            continue
        requires = tuple(_requirements(value.test, local))
        if not requires:
            continue
        out.append(
            Choice(
                setting,
                func.name,
                path,
                line,
                then,
                other,
                requires,
                line in unset_lines,
                value.lineno,
            )
        )
    return out


def _is_none_test(test: ast.expr) -> bool:
    return (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and isinstance(test.ops[0], ast.Is)
        and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value is None
    )


#: Names a guard tests that say nothing about which input it is.
_GENERIC = frozenset(
    {
        "self",
        "cls",
        "None",
        "True",
        "False",
        "len",
        "isinstance",
        "hasattr",
        "getattr",
        "str",
        "int",
        "float",
        "bool",
        "list",
        "dict",
        "tuple",
        "type",
        "any",
        "all",
        "args",
        "kwargs",
        "config",
        "value",
        "name",
    }
)


def guard_names(tests: Iterable[str]) -> set[str]:
    """The union of :func:`test_names` of ``tests``."""
    out: set[str] = set()
    for test in tests:
        out |= test_names(test)
    return out


_STRING = re.compile(r"""[rbfuRBFU]*('[^'\\]*(?:\\.[^'\\]*)*'|"[^"\\]*(?:\\.[^"\\]*)*")""")
_KEYWORDS = frozenset(
    {"and", "or", "not", "is", "in", "if", "else", "for", "lambda", "await", "None", "True"}
)


def _closing(text: str, at: int) -> int:
    """Index just past the bracket matching the one at ``at`` (or the end)."""
    depth = 0
    for i in range(at, len(text)):
        if text[i] in "([{":
            depth += 1
        elif text[i] in ")]}":
            depth -= 1
            if depth == 0:
                return i + 1
    return len(text)


@functools.lru_cache(maxsize=65536)
def test_names(test: str) -> frozenset[str]:
    """The leaf names a guard expression checks: the last part of each
    attribute chain, bare names and called functions whose result is not read
    further (``get_x().flag`` gives ``flag``; ``ctx.is_ssm`` gives ``is_ssm``).
    Read from the text (strings blanked), not parsed: keyword argument names
    and names followed by ``.`` are left out."""
    text = _STRING.sub('""', test)
    out: set[str] = set()
    for m in _IDENT.finditer(text):
        name = m.group()
        if name in _KEYWORDS or (m.start() and text[m.start() - 1].isdigit()):
            continue
        rest = text[m.end() :].lstrip()
        if rest.startswith("."):
            continue
        if rest.startswith("("):
            after = text[_closing(text, len(text) - len(rest)) :].lstrip()
            if after.startswith((".", "[")):
                continue
        elif rest.startswith("=") and not rest.startswith("=="):
            continue
        if len(name) >= 4 and name not in _GENERIC:
            out.add(name)
    return frozenset(out)


_ASSIGNED_CALL = re.compile(r"^\s*(?:self\.)?(\w+)\s*(?::[^=]+)?=\s*([\w.]+)\(")


def local_calls(excerpt: str, names: Iterable[str]) -> dict[str, str]:
    """Name -> the function it is assigned a call of, in ``excerpt``
    (``is_ssm = uses_ssm_state(cfg)`` gives ``{"is_ssm": "uses_ssm_state"}``)."""
    wanted = set(names)
    out: dict[str, str] = {}
    for line in excerpt.split("\n"):
        m = _ASSIGNED_CALL.match(line)
        if m is not None and m.group(1) in wanted:
            out[m.group(1)] = m.group(2).rsplit(".", 1)[-1]
    return out


def callee(value: str) -> str | None:
    """The function a call expression calls (``mod.f(x)`` -> ``f``), or None."""
    m = re.match(r"\s*([\w.]+)\(", value)
    return m.group(1).rsplit(".", 1)[-1] if m else None
