"""Settings across calls: the conditions under which the calls of a raising function run.

A raise inside a helper that is only called under ``if server_args.enable_x:``
happens only with ``--enable-x``, though nothing in the helper says so. This
module follows the raising function up its callers (the calls found by name:
:mod:`miner.analysis.callers`) and collects, per call, the conditions under
which the call statement runs in its own function, the same way the mining
does it for a ``raise`` (:func:`miner.extract.ast_fallback.statement_reach`:
the enclosing ``if`` / ``while`` / ``try`` / ``case`` and the early exits
before it).

Two stages, as for the rest of the analysis:

* facts (:func:`call_reaches`, :func:`referenced`), once per commit: for each
  call of a raising function (and of their callers), its guards and exits and
  how the call names the function (:data:`CallForm`). Only the statement of the
  calling function's body that holds the call is parsed with ``ast`` (and the
  earlier statements of that body that may leave); everything else is found
  from lines and indentation, so the cost stays small.
* analysis (:class:`Paths`): the conditions common to *every* call found,
  two levels up (the callers, and their callers). A condition is claimed only
  when each call needs it: in its own function, or because every call of that
  function needs it. Conditions of different functions are the same when they
  are linked exactly to the same setting with the same comparison
  (:class:`~miner.analysis.links.Linker`); other conditions only count within
  one function. Nothing is claimed for a function whose name is also used
  other than in a call (passed as a callback, stored in a table: callers may
  be missing), nor for one without callers found.

Sound, not complete: a condition that is missed only makes fewer claims.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from miner.analysis.branches import LEAVING_KINDS, exit_branch, line_depth
from miner.analysis.callers import Caller, file_scopes, target_name
from miner.analysis.code import SourceIndex, file_imports, in_long_string, word_offsets
from miner.analysis.condition import reach_of
from miner.analysis.links import Clause
from miner.extract.ast_fallback import prefix_facts, statement_reach
from miner.extract.rules import UnitContext, killed
from miner.model import Condition, Guard

if TYPE_CHECKING:
    from miner.analysis.facts import RepoFacts

CallForm = Literal["self", "import", "local", "name"]
"""How a call names the function: a method called on ``self`` (or ``cls``)
inside its own class, a bare call of a function imported by name from its
module, a bare call of a module function in its own file, or only by name
(``obj.name(...)``, or a bare name bound another way)."""

#: Most calls a function may have for its calls' conditions to be read.
MAX_CALLS = 4
#: Most lines of a statement parsed to read a call's conditions.
MAX_UNIT_LINES = 400
#: Most lines of an earlier statement parsed for the exits it adds.
MAX_EXIT_LINES = 60
#: Levels of callers followed up from the raising function.
LEVELS = 2
#: Most calls of a raising function whose conditions are read one by one
#: when none is common to all (the callers a card lists).
MAX_SAID = 4
#: Most conditions of callers said in one sentence.
MAX_NEEDS = 4


@dataclass(frozen=True, slots=True)
class CallReach:
    """What one call of ``target`` at ``path:line`` needs to run inside ``scope``."""

    target: str
    path: str
    line: int
    scope: str
    form: CallForm
    guards: tuple[Guard, ...] = ()
    """The compound statements around the call, in its function."""
    exits: tuple[Guard, ...] = ()
    """The earlier statements the call must get past (see :attr:`miner.model.Site.exits`)."""
    raising: tuple[int, ...] = ()
    """Lines of the exits whose branch is one ``raise`` (their other side is an error)."""
    caught: tuple[tuple[str, int], ...] = ()
    """The handlers of the ``try`` statements whose body holds the call and
    that raise nothing themselves (they log, return, fall back): each as
    (the caught types as written, ``""`` for a bare ``except``; its line),
    innermost ``try`` first (:func:`swallowing_handlers`, :func:`_enclosing_trys`)."""


# ---------------------------------------------------------------------- facts

_LEAVE = re.compile(r"\b(?:return|raise|continue|break)\b|^\s*assert\b")
#: Body-level statements that may add exits (others add none: loops, ``with``, ``def``).
_LEAVING = re.compile(r"(?:return|raise|continue|break)\b")
_BRANCHING = re.compile(r"(?:if|try)\b")
_CONDITIONAL = re.compile(r"(?:if|elif|else|while|case)\b")
_CONTINUES = re.compile(r"(?:elif|else|except|finally)\b")
_STORE = re.compile(
    r"^\s*(?:for\s+(?P<for>[\w., ()]+?)\s+in\b|(?P<lhs>[\w.]+(?:\s*,\s*[\w.]+)*)\s*"
    r"(?::[^=]+)?(?:[-+*/|&%^@]|//|>>|<<|\*\*)?=(?!=))"
)
_WITH_AS = re.compile(r"\bas\s+([\w.]+)")


def _indent(text: str) -> int:
    return len(text.expandtabs(8)) - len(text.expandtabs(8).lstrip())


def _line_code(text: str) -> str:
    """A line's code: stripped, a trailing comment roughly cut."""
    return text.split("#", 1)[0].strip() if "#" in text else text.strip()


class _File:
    """One calling file: its lines and scopes, read once."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.lines = data.decode("utf-8", "replace").split("\n")
        self.scopes = file_scopes(data)
        self.index = {name: i for i, name in enumerate(self.scopes.names)}
        self._imports: dict[str, set[str]] | None = None
        self.exits: dict[int, tuple[Guard, ...]] = {}
        """The exits each statement of the file adds, by its first line."""

    def header(self, scope: str) -> int | None:
        """The 1-based line of the ``def`` of ``scope``, or None."""
        i = self.index.get(scope)
        if i is None or self.scopes.kinds[i] != b"def":
            return None
        return self.data.count(b"\n", 0, self.scopes.starts[i]) + 1

    def imports(self) -> dict[str, set[str]]:
        """Module as written (``.x``, ``pkg.mod``) -> names imported from it unaliased."""
        if self._imports is None:
            found: dict[str, set[str]] = {}
            for module, pairs in file_imports(self.data):
                for name, bound in pairs:
                    if module is not None and name == bound:
                        found.setdefault(module, set()).add(name)
            self._imports = found
        return self._imports


@functools.lru_cache(maxsize=64)
def _starts_at(indent: int) -> re.Pattern[str]:
    """A line starting a statement at ``indent`` spaces (see :func:`_statement_starts`)."""
    return re.compile(rf"^ {{{indent}}}(?![ \t)\]}}#]|(?:elif|else|except|finally)\b)\S", re.M)


@functools.lru_cache(maxsize=64)
def _deeper(indent: int) -> re.Pattern[str]:
    """A code line indented more than ``indent`` spaces (its indentation captured)."""
    return re.compile(rf"\n( {{{indent + 1},}})(?![ \t)\]}}#\n])")


@functools.lru_cache(maxsize=64)
def _leaving_at(indent: int) -> re.Pattern[str]:
    """A ``return`` / ``raise`` / ``continue`` / ``break`` line at ``indent`` spaces."""
    return re.compile(rf"\n {{{indent}}}(?:return|raise|continue|break)\b")


def _statement_starts(lines: list[str], first: int, last: int, indent: int) -> list[int]:
    """1-based lines in ``first .. last`` that start a statement at ``indent``
    spaces (not a closing bracket, not the ``elif`` / ``else`` / ``except`` /
    ``finally`` of a statement begun above)."""
    text = "\n".join(lines[first - 1 : last])
    out = []
    n, pos = first, 0
    for m in _starts_at(indent).finditer(text):
        n += text.count("\n", pos, m.start())
        pos = m.start()
        out.append(n)
    return out


@dataclass(frozen=True, slots=True)
class _Unit:
    """Statements cut out of a file and parsed on their own."""

    body: list[ast.stmt]
    lines: list[str]
    """The parsed text's lines (a block opener first)."""
    offset: int
    """Line of the file = line of the unit + ``offset``."""

    def shifted(self, guards: Iterable[Guard]) -> tuple[Guard, ...]:
        """``guards`` with the file's line numbers."""
        return tuple(dataclasses.replace(g, line=g.line + self.offset) for g in guards)


def _parse_unit(lines: list[str], start: int, end: int) -> _Unit | None:
    """Lines ``start .. end`` (indented) parsed on their own, under a block opener."""
    own = ["if 1:", *lines[start - 1 : end]]
    try:
        tree = ast.parse("\n".join(own) + "\n")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    opener = tree.body[0] if tree.body else None
    if not isinstance(opener, ast.If):
        return None
    return _Unit(opener.body, own, start - 2)


def _stores(lines: list[str], start: int, end: int) -> set[str]:
    """What lines ``start .. end`` may assign (names and attribute paths), by pattern."""
    out: set[str] = set()
    for n in range(start, end + 1):
        found = _line_stores(lines[n - 1])
        if found:
            out |= found
    return out


@functools.lru_cache(maxsize=65536)
def _line_stores(text: str) -> frozenset[str]:
    """What one line may assign (see :func:`_stores`)."""
    if "=" not in text and "for" not in text and " as " not in text:
        return frozenset()
    out: set[str] = set()
    m = _STORE.match(text)
    if m is not None:
        targets = m.group("for") or m.group("lhs") or ""
        out.update(t.strip("() ") for t in targets.split(",") if t.strip("() "))
    if "with" in text:
        out.update(_WITH_AS.findall(text))
    return frozenset(out)


#: The first word of a compound statement (its body may hold the call).
_COMPOUND = re.compile(
    r"(?:if|elif|else|for|while|with|try|except|finally|match|async|def|class)\b"
)


@dataclass(frozen=True, slots=True)
class _Shape:
    """Where a call sits in its function, from lines and indentation."""

    scope: str
    line: int
    indent: int
    """The indentation of the function's body."""
    starts: tuple[int, ...]
    """The body's statements up to the one holding the call (its start last)."""
    exiting: tuple[int, ...]
    """Of the earlier ones, those that may add exits."""
    conditional: bool
    """The call may need a condition inside the statement holding it."""

    @property
    def plain(self) -> bool:
        """No condition of its own, for sure: no guards, no exits."""
        return not self.exiting and not self.conditional


def _shape(lines: list[str], scope: str, header: int, line: int) -> _Shape | None:
    """The :class:`_Shape` of the call at ``line`` in the function ``scope``
    whose ``def`` is at line ``header``; None when it is not found there."""
    if not 0 < header < line <= len(lines):
        return None
    head_indent = _indent(lines[header - 1])
    end = header  # the header's last line (a signature may span lines)
    depth = line_depth(lines[header - 1])
    while (depth > 0 or not _line_code(lines[end - 1]).endswith(":")) and end < min(
        len(lines), header + 60
    ):
        end += 1
        depth += line_depth(lines[end - 1])
    if line <= end:
        return None  # in the signature (a default value) or a one-line body
    body = next((n for n in range(end + 1, line + 1) if _line_code(lines[n - 1])), None)
    if body is None:
        return None
    indent = _indent(lines[body - 1])
    if indent <= head_indent:
        return None
    starts = _statement_starts(lines, end + 1, line, indent)
    if not starts:
        return None
    exiting = tuple(
        first
        for first, after in zip(starts, starts[1:], strict=False)
        if _may_exit(lines, first, after, indent)
    )
    return _Shape(
        scope, line, indent, tuple(starts), exiting, _conditional(lines, starts[-1], line)
    )


def _may_exit(lines: list[str], first: int, after: int, indent: int) -> bool:
    """Whether the statement at lines ``first .. after - 1`` may add exits:
    an ``assert``, a leaving statement, or an ``if`` / ``try`` with a leaving
    statement in one of its branches (at the branches' own indentation)."""
    head = _line_code(lines[first - 1])
    if _LEAVING.match(head) or head.startswith("assert"):
        return True
    if not _BRANCHING.match(head) or after - first > MAX_EXIT_LINES:
        return False
    text = "\n".join(lines[first - 1 : after - 1])
    inner = _deeper(indent).search(text)
    return inner is not None and _leaving_at(len(inner.group(1))).search(text) is not None


def _conditional(lines: list[str], start: int, line: int) -> bool:
    """Whether the call at ``line`` inside the statement at ``start`` may
    need a condition there: under a conditional header (``if``, ``elif``,
    ``else``, ``while``, ``case``), or after a leaving statement."""
    if start == line:
        return False
    low = _indent(lines[line - 1])
    for n in range(line - 1, start - 1, -1):
        text = lines[n - 1]
        stripped = _line_code(text)
        if not stripped or stripped[0] in ")]}":
            continue
        if _LEAVE.search(stripped):
            return True
        level = _indent(text)
        if level < low:
            low = level
            if _CONDITIONAL.match(stripped):
                return True
    return False


def _reach(
    lines: list[str], shape: _Shape, memo: dict[int, tuple[Guard, ...]] | None = None
) -> tuple[tuple[Guard, ...], tuple[Guard, ...]] | None:
    """(guards, exits) of the statement holding the call of ``shape``; None
    when its lines do not parse on their own. ``memo`` keeps the exits of the
    earlier statements of the file by their first line."""
    start = shape.starts[-1]
    exits = _prefix_exits(lines, shape, start, {} if memo is None else memo)
    if _COMPOUND.match(_line_code(lines[start - 1])) is None:
        return (), exits
    # The statement holding the call up to the end of the call's own
    # statement: what follows it adds no guard (the rest of a loop's body may
    # still change what an exit tested; that is not read). When that does not
    # parse (a ``try`` cut before its handlers), the whole statement.
    level = _indent(lines[shape.line - 1])
    unit = _parse_unit(lines, start, _end(lines, shape.line, level, False))
    if unit is None:
        unit = _parse_unit(lines, start, _end(lines, shape.line, shape.indent, True))
    if unit is None:
        return None
    context = UnitContext("function", shape.scope, alone=False)
    found = statement_reach(
        unit.body, lines=unit.lines, context=context, line=shape.line - unit.offset
    )
    if found is None:
        return None
    found = unit.shifted(found[0]), unit.shifted(found[1])
    # What the statement holding the call assigns may cancel an earlier exit
    # (a loop's next rounds run it before the call too).
    stores = _stores(lines, start, len(unit.lines) + unit.offset) if exits else set()
    kept = tuple(g for g in exits if not killed(g, stores))
    return found[0], (*kept, *found[1])


def _enclosing_trys(lines: list[str], line: int, body: int) -> list[int]:
    """The lines of the ``try`` statements whose body holds line ``line``
    (1-based) of ``lines``, innermost first, read by indentation up to the
    function's body indentation ``body``: the nearest less indented header
    above is ``try:`` (a line in an ``except``, ``else`` or ``finally``
    block is not in the ``try`` body)."""
    out: list[int] = []
    low = _indent(lines[line - 1])
    for n in range(line - 1, 0, -1):
        text = lines[n - 1]
        stripped = _line_code(text)
        if not stripped or stripped[0] in ")]}":
            continue
        level = _indent(text)
        if level >= low:
            continue
        if level < body:
            break
        low = level
        if _TRY.match(stripped):
            out.append(n)
    return out


#: A ``try`` statement's header.
_TRY = re.compile(r"try\s*:")
#: ``except`` and what it catches (``(A, B)``, ``Exception as e``, nothing).
_EXCEPT = re.compile(r"except\*?\s*(?P<types>[^:]*?)\s*(?:\bas\s+\w+\s*)?:")


def swallowing_handlers(lines: list[str], line: int) -> tuple[tuple[str, int], ...]:
    """The ``except`` clauses of the ``try`` at ``line`` (1-based) of the file
    ``lines`` whose block has no ``raise`` at any depth: (the caught types as
    written, ``""`` for a bare ``except``; the clause's line). Read by
    indentation, as the scopes are (:mod:`miner.analysis.callers`); nothing
    when line ``line`` is not a ``try``."""
    if not 0 < line <= len(lines) or not _TRY.match(_line_code(lines[line - 1])):
        return ()
    level = _indent(lines[line - 1])
    out: list[tuple[str, int]] = []
    handler: tuple[str, int] | None = None
    raises = False
    for number in range(line + 1, min(len(lines), line + MAX_TRY_LINES) + 1):
        text = lines[number - 1]
        code_part = _line_code(text)
        if not code_part:
            continue
        if _indent(text) > level or code_part[0] in ")]}":
            raises = raises or (handler is not None and _RAISE.match(code_part) is not None)
            continue
        if handler is not None and not raises:
            out.append(handler)
        handler, raises = None, False
        found = _EXCEPT.match(code_part)
        if found is not None:
            handler = (found.group("types").strip(), number)
            # a one-line handler: ``except E: pass``
            rest = code_part[found.end() :].strip()
            raises = _RAISE.match(rest) is not None
        elif not re.match(r"(?:else|finally)\s*:", code_part):
            break
    if handler is not None and not raises:
        out.append(handler)
    return tuple(out)


#: A ``raise`` statement at the start of a line's code.
_RAISE = re.compile(r"raise\b")
#: Most lines read after a ``try`` for its handlers.
MAX_TRY_LINES = 400


def _end(lines: list[str], line: int, indent: int, clauses: bool) -> int:
    """The last line of the statement holding ``line``, up to the next line
    indented ``indent`` or less (with ``clauses``, the ``elif`` / ``else`` /
    ``except`` / ``finally`` at ``indent`` go on with it)."""
    stop = line
    limit = min(len(lines), line + MAX_UNIT_LINES)
    while stop < limit:
        text = lines[stop]
        stripped = _line_code(text)
        ends = stripped and _indent(text) <= indent and stripped[0] not in ")]}"
        if ends and (not clauses or _indent(text) < indent or not _CONTINUES.match(stripped)):
            break
        stop += 1
    return stop


def _prefix_exits(
    lines: list[str], shape: _Shape, unit: int, memo: dict[int, tuple[Guard, ...]]
) -> tuple[Guard, ...]:
    """The exits of the body's statements before the one at ``unit``: those
    that may leave are parsed and read by the mining's rules; what the others
    assign is read by pattern (it may cancel an exit:
    :func:`miner.extract.rules.killed`)."""
    if not shape.exiting:
        return ()
    follows = dict(zip(shape.starts, shape.starts[1:], strict=False))
    found: list[Guard] = []
    for first in shape.exiting:
        if first not in memo:
            part = _parse_unit(lines, first, follows[first] - 1)
            n = len(part.body) if part is not None else 0
            memo[first] = part.shifted(prefix_facts(part.body, n, n, part.lines)[0]) if part else ()
        found.extend(memo[first])
    out = []
    for guard in found:
        later = _stores(lines, guard.line + 1, unit - 1)
        if not killed(guard, later):
            out.append(guard)
    return tuple(out)


def _form(
    index: SourceIndex,
    file: _File,
    caller: Caller,
    home: tuple[str, str] | None,
) -> CallForm:
    """How the call at ``caller`` names its target (``home``: the target's
    (path, ``__qualname__``) when defined once)."""
    if home is None:
        return "name"
    path, qualname = home
    text = file.lines[caller.line - 1] if caller.line <= len(file.lines) else ""
    at = _call_at(text, caller.target)
    if at is None:
        return "name"
    found = _OWNER.search(text[:at])
    owner = found.group(0) if found else ""
    if owner in ("self.", "cls."):
        cls = qualname.rsplit(".", 1)[0] if "." in qualname else ""
        mine = caller.scope.rsplit(".", 1)[0] if "." in caller.scope else ""
        same = path == caller.path and cls and mine == cls and "<locals>" not in cls
        return "self" if same else "name"
    if owner:
        return "name"
    if "." in qualname and not qualname.endswith(".__init__"):
        return "name"  # a method named bare: some other binding
    if path == caller.path:
        return "local"
    module = index.module_name(path)
    for written, names in file.imports().items():
        if caller.target in names and _absolute(index, caller.path, written) == module:
            return "import"
    return "name"


def _absolute(index: SourceIndex, path: str, written: str) -> str:
    """The module ``from <written> import`` names in the file ``path``."""
    dots = len(written) - len(written.lstrip("."))
    if not dots:
        return written
    parts = index.module_name(path).split(".")
    if not path.endswith("__init__.py"):
        parts = parts[:-1]
    if dots > 1:
        parts = parts[: len(parts) - (dots - 1)]
    rest = written[dots:]
    return ".".join([*parts, rest] if rest else parts)


_OWNER = re.compile(r"(?:\w+\.)+$")


def _call_at(text: str, name: str) -> int | None:
    """The offset of the first ``name(`` in ``text`` not inside a longer word."""
    at = text.find(name)
    while at != -1:
        before = text[at - 1 : at]
        after = text[at + len(name) :].lstrip()
        if not (before.isalnum() or before == "_") and after.startswith("("):
            return at
        at = text.find(name, at + 1)
    return None


def _home(index: SourceIndex, name: str, files: dict[str, _File]) -> tuple[str, str] | None:
    """(path, ``__qualname__``) of the one definition of ``name`` (a class:
    its ``__init__``)."""
    paths = index.definitions(name)
    if len(paths) != 1:
        return None
    file = files.get(paths[0]) or _File(index.files.get(paths[0], b""))
    files[paths[0]] = file
    for qualname, kind in zip(file.scopes.names, file.scopes.kinds, strict=True):
        if qualname.rsplit(".", 1)[-1] == name and "<locals>" not in qualname:
            return paths[0], qualname if kind == b"def" else f"{qualname}.__init__"
    return None


def call_reaches(
    index: SourceIndex, callers: Mapping[str, Sequence[Caller]], targets: Iterable[str]
) -> dict[tuple[str, str, int], CallReach]:
    """For the calls of the raising functions ``targets`` (and of their
    callers) found in ``callers`` (name -> its calls): their
    :class:`CallReach`, keyed by (target, path, line).

    A name's calls are all read, or none: none when it has more than
    :data:`MAX_CALLS`, or when one of its calls has no condition of its own
    (read from lines alone) and nothing is known to hold where its function is
    called, since then no condition can be common to every call.
    """
    reaches = _Reaches(index, callers)
    for name in sorted(set(targets)):
        reaches.need(name, 1)
    return reaches.out


class _Reaches:
    """The state of :func:`call_reaches`."""

    def __init__(self, index: SourceIndex, callers: Mapping[str, Sequence[Caller]]) -> None:
        self.index = index
        self.callers = callers
        self.files: dict[str, _File] = {}
        self.shapes: dict[tuple[str, int, str], _Shape | None] = {}
        self.may: dict[tuple[str, int], bool] = {}
        self.out: dict[tuple[str, str, int], CallReach] = {}
        self.homes: dict[str, tuple[str, str] | None] = {}

    def file(self, path: str) -> _File:
        found = self.files.get(path)
        if found is None:
            found = self.files[path] = _File(self.index.files.get(path, b""))
        return found

    def shape(self, caller: Caller) -> _Shape | None:
        key = (caller.path, caller.line, caller.scope)
        if key not in self.shapes:
            file = self.file(caller.path)
            header = file.header(caller.scope)
            self.shapes[key] = (
                None if header is None else _shape(file.lines, caller.scope, header, caller.line)
            )
        return self.shapes[key]

    def need(self, name: str, level: int) -> bool:
        """Whether every call of ``name`` may need some condition (then all
        its calls are read into :attr:`out`; else, for a raising function
        with at most :data:`MAX_SAID` calls, too)."""
        memo = (name, level)
        if memo in self.may:
            return self.may[memo]
        self.may[memo] = False  # a cycle: nothing more
        calls = self.callers.get(name, ())
        if not calls or len(calls) > MAX_CALLS:
            return False
        for caller in calls:
            shape = self.shape(caller)
            if shape is not None and not shape.plain:
                continue
            parent = target_name(caller.scope) if shape is not None else None
            if level >= LEVELS or not parent or parent == name or not self.need(parent, level + 1):
                if level == 1 and len(calls) <= MAX_SAID:
                    for each in calls:  # each call's own conditions, said per caller
                        self.read(name, each)
                return False
        for caller in calls:
            if level < LEVELS and (parent := target_name(caller.scope)) and parent != name:
                self.need(parent, level + 1)
            self.read(name, caller)
        self.may[memo] = True
        return True

    def read(self, name: str, caller: Caller) -> None:
        """The :class:`CallReach` of one call of ``name``."""
        key = (name, caller.path, caller.line)
        if key in self.out:
            return
        file = self.file(caller.path)
        if name not in self.homes:
            self.homes[name] = _home(self.index, name, self.files)
        home = self.homes[name]
        form = _form(self.index, file, caller, home)
        shape = self.shape(caller)
        # A plain call needs nothing in its function: no statement is parsed.
        found = (
            _reach(file.lines, shape, file.exits) if shape is not None and not shape.plain else None
        )
        caught = (
            tuple(
                handler
                for at in _enclosing_trys(file.lines, caller.line, shape.indent)
                for handler in swallowing_handlers(file.lines, at)
            )
            if shape is not None
            else ()
        )
        if found is None:
            self.out[key] = CallReach(
                name, caller.path, caller.line, caller.scope, form, caught=caught
            )
            return
        guards, exits = found
        raising = tuple(
            g.line
            for g in exits
            if g.kind in LEAVING_KINDS
            and g.negated
            and exit_branch(file.lines, g.line)[0] == "raise"
        )
        self.out[key] = CallReach(
            name, caller.path, caller.line, caller.scope, form, guards, exits, raising, caught
        )


def referenced(index: SourceIndex, names: Iterable[str]) -> frozenset[str]:
    """Of ``names``, those the commit also uses other than in a call, its
    ``def`` or an import (a callback, a table entry, a ``getattr`` string):
    their calls found by name may not be all their callers."""
    wanted = sorted(set(names))
    if not wanted:
        return frozenset()
    tokens = index.mentions_of(wanted)
    out = set()
    for name in wanted:
        if any(_bare_use(index.files[path], name.encode()) for path in tokens.get(name, ())):
            out.add(name)
    return frozenset(out)


#: A type test or handler the name stands in: no call of it (up to the name).
_CHECKED = re.compile(rb"(?:\b(?:isinstance|issubclass)\([^()]*|\bexcept\b[^:]*)$")
#: A string literal on one line (its text may hide the name).
_STRING = re.compile(rb"""(?:[rbuf]{0,2})(?:"[^"\n]*"|'[^'\n]*')""", re.I)


def first_uses(index: SourceIndex, names: Iterable[str]) -> dict[str, tuple[str, int]]:
    """Of ``names``, those the commit uses as a value (stored, passed, put in
    a table, returned: ``cls = A if x else B``, ``{"a": A}``), each with the
    first place it does so: (path, line), in path order. A use inside a
    string, as a parameter or annotated name (``name: T``) or as an
    assignment's target (another binding of the same name) is no such use."""
    wanted = sorted(set(names))
    if not wanted:
        return {}
    tokens = index.mentions_of(wanted)
    out: dict[str, tuple[str, int]] = {}
    for name in wanted:
        for path in sorted(tokens.get(name, ())):
            data = index.files[path]
            at = _bare_use_at(data, name.encode())
            while at >= 0:
                start = data.rfind(b"\n", 0, at) + 1
                stop = data.find(b"\n", at)
                line = data[start : stop if stop != -1 else len(data)]
                code_part = _STRING.sub(lambda m: b" " * len(m.group(0)), line)
                checked = _CHECKED.search(code_part, 0, at - start)  # isinstance(x, A)
                if _value_use(name).match(code_part, at - start) and checked is None:
                    out[name] = (path, data.count(b"\n", 0, at) + 1)
                    break
                at = _bare_use_at(data, name.encode(), at + len(name))
            if name in out:
                break
    return out


@functools.lru_cache(maxsize=4096)
def _value_use(name: str) -> re.Pattern[bytes]:
    """``name`` as a word, not called, annotated nor assigned (:func:`first_uses`;
    compiled only for the names some file uses bare)."""
    return re.compile(rb"(?<![\w.])" + re.escape(name.encode()) + rb"(?!\w)(?![ \t]*[(:=])")


def _bare_use(data: bytes, name: bytes) -> bool:
    """Whether ``data`` uses ``name`` as a word not called, outside its
    ``def`` / ``class`` line, imports and comments."""
    return _bare_use_at(data, name) >= 0


def _bare_use_at(data: bytes, name: bytes, start: int = 0) -> int:
    """The offset of the first use :func:`_bare_use` means from ``start``, or -1
    (none inside a string over several lines: a docstring that names it)."""
    for at in word_offsets(data, name, start):
        end = at + len(name)
        if not data[end:].lstrip(b" \t").startswith(b"(") and not in_long_string(data, at):
            first = data.rfind(b"\n", 0, at) + 1
            stop = data.find(b"\n", end)
            line = data[first : stop if stop != -1 else len(data)].strip()
            if not (
                line.startswith((b"def ", b"async def ", b"class ", b"from ", b"import ", b"#"))
                or line.rstrip(b",") == name  # a name of a parenthesized import
            ):
                return at
    return -1


# ---------------------------------------------------------------------- analysis


@dataclass(frozen=True, slots=True)
class Need:
    """One condition every path to the raising function needs."""

    cond: Condition
    """A conjunct of a call's condition (an atom, or an ``or`` / ``and`` of atoms)."""
    clauses: tuple[Clause | None, ...]
    """The link of each of its atoms to a setting (None: not linked)."""
    call: CallReach
    """The call whose conditions hold it."""
    origin: Guard | None
    """The guard or exit it is read from, in ``call.scope``."""
    raising: bool = False
    """It comes from an early exit whose other branch raises another error."""
    key: tuple[object, ...] = ()
    """What makes two conditions the same (see the module doc)."""

    @property
    def exact(self) -> bool:
        """Every atom reads a setting for sure."""
        return all(c is not None and c.read is not None and c.read.exact for c in self.clauses)


@dataclass(frozen=True, slots=True)
class Reached:
    """How a raising function is reached from the rest of the commit."""

    target: str
    calls: tuple[CallReach, ...]
    """Every call of ``target`` found, in (path, line) order."""
    needs: tuple[Need, ...]
    """The conditions common to every call (and the calls of their callers)."""
    per_call: tuple[tuple[Need, ...], ...]
    """The conditions of each call in its own function (as ``calls``)."""


Link = Callable[[Condition, Guard | None, str], Clause | None]


class Paths:
    """The callers' conditions of the raising functions of one commit.

    ``link`` links an atom (with its guard) to a setting, as the card writer
    does for a site's own conditions.
    """

    def __init__(
        self,
        callers: Mapping[str, tuple[Caller, ...]],
        reaches: Mapping[tuple[str, str, int], CallReach],
        referenced: frozenset[str] | set[str],
        link: Link,
    ) -> None:
        self.callers = callers
        self.reaches = reaches
        self.referenced = referenced
        self.link = link
        self._own: dict[tuple[str, str, int], tuple[Need, ...]] = {}
        self._needs: dict[tuple[str, int], tuple[Need, ...] | None] = {}

    def own(self, reach: CallReach) -> tuple[Need, ...]:
        """The conditions of one call in its own function (``if`` / ``while``
        / ``assert`` tests and exits; loops, handlers and cases left out)."""
        key = (reach.target, reach.path, reach.line)
        if key in self._own:
            return self._own[key]
        found = reach_of(reach.guards, reach.exits)
        out: list[Need] = []
        if not found.condition.is_false:
            for cond in found.condition.conjuncts():
                atoms = cond.atoms()
                if cond.op in ("true", "false") or any(a.kind != "expr" for a in atoms):
                    continue
                origin = found.origin_of(cond)
                clauses = tuple(self.link(a, found.origin(a), reach.path) for a in atoms)
                raising = origin is not None and origin.line in reach.raising
                out.append(Need(cond, clauses, reach, origin, raising, _key(cond, clauses, reach)))
        self._own[key] = tuple(out)
        return self._own[key]

    def calls(self, name: str) -> tuple[CallReach, ...] | None:
        """Every call of ``name`` found, with its conditions; None when they
        were not read."""
        callers = self.callers.get(name)
        if not callers:
            return None
        out = []
        for caller in callers:
            reach = self.reaches.get((name, caller.path, caller.line))
            if reach is None:
                return None
            out.append(reach)
        return tuple(dict.fromkeys(out))

    def needs(self, name: str, level: int = 1) -> tuple[Need, ...] | None:
        """The conditions every call of ``name`` needs (through ``LEVELS - level``
        more levels of callers); None when its callers are not known for sure
        (see the module doc)."""
        memo = (name, level)
        if memo in self._needs:
            return self._needs[memo]
        self._needs[memo] = None  # a cycle claims nothing
        calls = self.calls(name) if name not in self.referenced else None
        result: tuple[Need, ...] | None = None
        if calls is not None:
            common: dict[tuple[object, ...], Need] | None = None
            for reach in calls:
                full = {n.key: n for n in self.own(reach)}
                parent = target_name(reach.scope)
                if level < LEVELS and parent and parent != name:
                    for n in self.needs(parent, level + 1) or ():
                        full.setdefault(n.key, n)
                common = full if common is None else {k: v for k, v in common.items() if k in full}
                if not common:
                    break
            result = tuple((common or {}).values())
        self._needs[memo] = result
        return result

    def reached(self, name: str) -> Reached | None:
        """How ``name`` is reached, or None when its callers are not known."""
        calls = self.calls(name)
        if calls is None:
            return None
        return Reached(
            name,
            calls,
            self.needs(name) or (),
            tuple(self.own(c) for c in calls),
        )


def of_facts(facts: RepoFacts, link: Link) -> Paths:
    """:class:`Paths` over the facts of a commit."""
    return Paths(facts.callers, facts.call_reach, facts.referenced, link)


def _key(cond: Condition, clauses: Sequence[Clause | None], reach: CallReach) -> tuple[object, ...]:
    """Linked exactly: the setting, comparison and values (the same in any
    function); else the text within its function."""
    keys = []
    for clause in clauses:
        if clause is None or clause.read is None or not clause.read.exact:
            return ("text", reach.path, reach.scope, cond.text())
        c = clause.condition
        keys.append((clause.read.kind, clause.read.target, c.op, tuple(c.values)))
    if cond.op == "atom":
        return ("setting", *keys)
    return ("settings", cond.op, frozenset(keys))
