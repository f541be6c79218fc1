"""The arguments the calls of a raising function give the parameters its guards test.

A guard ``if not enabled: raise ...`` tests a parameter: what the user
controls is what the callers pass. For a raising function with at most
:data:`MAX_CALLS` calls found (:attr:`~miner.analysis.facts.RepoFacts.callers`),
each call's argument for each tested parameter is read: the ``def`` header
and the call are parsed with :mod:`ast` from the lines of their files
(positional arguments after ``self`` / ``cls`` of a method called on an
object, keywords by name). An argument that is a bare local of the calling
function is followed one step, to its nearest one-line assignment above the
call (``enabled = anthropic_request.thinking.type != "disabled"``).

A parameter is kept only when every call gives it explicitly: a call that
leaves it to its default, passes ``*args`` / ``**kwargs``, or cannot be
parsed drops it (nothing is claimed for some calls only). Pure functions of
the files' bytes, no I/O.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

from miner.analysis.callers import Caller, target_name
from miner.analysis.code import one_line
from miner.model import Site

#: Most calls of a raising function whose arguments are read.
MAX_CALLS = 3
#: Most lines a ``def`` header or a call spans.
MAX_LINES = 30
#: Longest argument or assigned value kept, in characters.
MAX_TEXT = 160

_IDENT = re.compile(r"[A-Za-z_]\w*")
#: A ``def`` header's first line, with the function's name.
_DEF = re.compile(r"\s*(?:async\s+)?def\s+(\w+)\s*[(\[]")
#: ``name = value`` (or ``name: T = value``) on one line: the name, the value
#: and a comment after it.
_ASSIGN = re.compile(r"\s*(\w+)\s*(?::[^=]*)?=(?!=)\s*(.+?)\s*(#.*)?$")


@dataclass(frozen=True, slots=True)
class Argument:
    """What one call gives one parameter of a raising function."""

    path: str
    line: int
    """The line of the call (where its name stands)."""
    scope: str
    """The calling function's ``__qualname__``."""
    text: str
    """The argument as written, on one line (``enabled``, ``req.stream``)."""
    set_line: int = 0
    """When :attr:`text` is a bare local of the caller: the line of its
    nearest one-line assignment above the call (0: none found)."""
    set_value: str = ""
    """That assignment's value as written."""


def call_arguments(
    files: Mapping[str, bytes],
    sites: Iterable[Site],
    callers: Mapping[str, Sequence[Caller]],
    tested: Mapping[str, set[str]],
) -> dict[tuple[str, str, str], tuple[Argument, ...]]:
    """(path, ``__qualname__``, parameter) of a raising function -> the
    argument each of its calls gives that parameter, in call order; only
    for the parameters among ``tested`` (path -> bare names its sites' guards
    test) that every call gives explicitly (see the module doc)."""
    out: dict[tuple[str, str, str], tuple[Argument, ...]] = {}
    done: set[tuple[str, str]] = set()
    lines_of: dict[str, list[str]] = {}

    def lines(path: str) -> list[str]:
        if path not in lines_of:
            lines_of[path] = files.get(path, b"").decode("utf-8", "replace").split("\n")
        return lines_of[path]

    for site in sites:
        key = (site.path, site.scope)
        if key in done or site.scope == "<module>":
            continue
        done.add(key)
        name = target_name(site.scope)
        calls = callers.get(name) if name else None
        if not calls or len(calls) > MAX_CALLS:
            continue
        wanted = tested.get(site.path, set())
        params = _parameters(lines(site.path), site)
        if params is None or not wanted & set(params):
            continue
        given = _given(site, params, wanted, calls, lines)
        for param, args in given.items():
            if len(args) == len(calls):
                out[(site.path, site.scope, param)] = tuple(args)
    return out


def _given(
    site: Site,
    params: list[str],
    wanted: set[str],
    calls: Sequence[Caller],
    lines: Callable[[str], list[str]],
) -> dict[str, list[Argument]]:
    """Parameter (of ``params`` among ``wanted``) -> the argument each call
    gives it, as written, while every call so far gives it one no longer
    than :data:`MAX_TEXT`; empty when a call cannot be read or passes the
    object of a method itself (``Cls.method(obj, ...)``)."""
    method = "." in site.scope.split(".<locals>.")[-1] and params[:1] in (["self"], ["cls"])
    given: dict[str, list[Argument]] = {p: [] for p in params if p in wanted}
    for call in calls:
        found = _call_at(lines(call.path), call.line, call.target)
        if found is None:
            return {}
        node, owner, source = found
        if method and params[0] == "self" and owner[:1].isupper():
            return {}  # ``Cls.method(obj, ...)``: the object is an argument
        bound = method and (owner != "" or site.scope.endswith(".__init__"))
        positional = params[1:] if bound else params
        texts: dict[str, str] = {}
        for param, arg in zip(positional, node.args, strict=False):
            texts[param] = _written(source, arg)
        for kw in node.keywords:
            if kw.arg is not None:
                texts[kw.arg] = _written(source, kw.value)
        for param in list(given):
            text = texts.get(param)
            if text is None or len(text) > MAX_TEXT:
                del given[param]
                continue
            set_line, set_value = _assigned_above(lines(call.path), call.line, text)
            given[param].append(
                Argument(call.path, call.line, call.scope, text, set_line, set_value)
            )
    return given


def _parameters(lines: list[str], site: Site) -> list[str] | None:
    """The parameter names of the ``def`` of ``site``'s function (the
    nearest ``def <name>`` above the site at a lower indent), in order; None
    when not found or not parsed, or with ``*args`` / ``**kwargs`` before a
    tested one (those are left out, the rest kept)."""
    name = site.scope.split(".<locals>.")[-1].rsplit(".", 1)[-1]
    for number in range(min(site.line, len(lines)) - 1, 0, -1):
        m = _DEF.match(lines[number - 1])
        if m is None or m.group(1) != name:
            continue
        text = _balanced(lines, number, lines[number - 1].index("def"))
        if text is None:
            return None
        try:
            tree = ast.parse(text.strip() + " pass")
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None
        func = tree.body[0] if tree.body else None
        if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return None
        a = func.args
        return [p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)]
    return None


def _balanced(lines: list[str], number: int, start: int) -> str | None:
    """The text from column ``start`` of line ``number`` through the line
    where the brackets opened since close and a ``:`` ends it (a ``def``
    header), on one line; None past :data:`MAX_LINES`."""
    depth = 0
    parts = []
    for offset in range(MAX_LINES):
        if number - 1 + offset >= len(lines):
            return None
        line = lines[number - 1 + offset][start if offset == 0 else 0 :]
        parts.append(line.strip())
        depth += line.count("(") + line.count("[") - line.count(")") - line.count("]")
        if depth <= 0 and re.search(r":\s*(#.*)?$", line):
            return " ".join(parts)
    return None


def _written(source: str, node: ast.expr) -> str:
    """``node`` as written in ``source``, on one line."""
    return one_line(ast.get_source_segment(source, node) or ast.unparse(node))


def _call_at(lines: list[str], number: int, target: str) -> tuple[ast.Call, str, str] | None:
    """The call of ``target`` written on line ``number`` (the first one), and
    the object it is made on (``self`` for ``self.target(``, ``Cls`` for
    ``Cls.target(``, ``"."`` for another expression, ``""`` for a bare call)
    and the source parsed; None when there is none, it has ``*args`` /
    ``**kwargs``, or it does not parse."""
    if not 0 < number <= len(lines):
        return None
    line = lines[number - 1]
    if target not in line:  # no call of it: no pattern compiled for it
        return None
    for m in _call_of(target).finditer(line):
        opened = m.end() - 1
        text, depth = "", 0
        for offset in range(MAX_LINES):
            if number - 1 + offset >= len(lines):
                return None
            part = lines[number - 1 + offset][opened if offset == 0 else 0 :]
            for i, ch in enumerate(part):
                depth += ch in "([{"
                depth -= ch in ")]}"
                if depth == 0:
                    text += part[: i + 1]
                    break
            else:
                text += part + "\n"
                continue
            break
        else:
            return None
        try:
            node = ast.parse("f" + text, mode="eval").body
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None
        if not isinstance(node, ast.Call):
            return None
        if any(isinstance(a, ast.Starred) for a in node.args) or any(
            kw.arg is None for kw in node.keywords
        ):
            return None
        before = line[: m.start()].rstrip()
        if not before.endswith("."):
            return node, "", "f" + text
        obj = re.search(r"([A-Za-z_]\w*)\s*\.$", before)
        return node, obj.group(1) if obj else ".", "f" + text
    return None


@lru_cache(maxsize=4096)
def _call_of(target: str) -> re.Pattern[str]:
    """``target(`` where no word goes on before it (``self.target(`` too)."""
    return re.compile(rf"(?<!\w){re.escape(target)}\s*\(")


def _assigned_above(lines: list[str], number: int, name: str) -> tuple[int, str]:
    """(line, value) of the assignment ``name = value`` that reaches line
    ``number`` for sure: the nearest one above it in the same function, in
    the call's block or one enclosing it, with no block closed between (an
    assignment in an ``if`` / ``else`` branch or a loop that ended before
    the call may not have run); a value over several lines is joined while
    its brackets are open (not past :data:`MAX_LINES`, nor with a comment).
    (0, "") when ``name`` is not a bare name or no such assignment is found."""
    if not _IDENT.fullmatch(name) or not 0 < number <= len(lines):
        return 0, ""
    indent = _indent(lines[number - 1])
    lowest = indent  # the lowest indent of the lines between the assignment and the call
    for n in range(number - 1, 0, -1):
        line = lines[n - 1]
        stripped = line.lstrip()
        if not stripped or stripped.startswith("#"):
            continue
        depth = _indent(line)
        if stripped.startswith(("def ", "async def ")) and depth < indent:
            return 0, ""
        m = _ASSIGN.match(line) if name in line else None
        if m is not None and m.group(1) == name:
            if depth > lowest:
                return 0, ""  # in a block that ended before the call
            return _joined(lines, n, m.group(2))
        lowest = min(lowest, depth)
    return 0, ""


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _joined(lines: list[str], number: int, first: str) -> tuple[int, str]:
    """(``number``, the value starting with ``first`` on line ``number``
    joined over the lines its brackets stay open), or (0, "")."""
    value = first
    for offset in range(1, MAX_LINES):
        opened = value.count("(") + value.count("[") + value.count("{")
        closed = value.count(")") + value.count("]") + value.count("}")
        if opened == closed and not value.endswith(("\\", ",")):
            break
        if opened < closed or number - 1 + offset >= len(lines):
            return 0, ""
        more = lines[number - 1 + offset].strip()
        if "#" in more:
            return 0, ""
        value += " " + more
    else:
        return 0, ""
    value = one_line(value)
    if len(value) > MAX_TEXT or value.count('"') % 2 or value.count("'") % 2:
        return 0, ""
    return number, value
