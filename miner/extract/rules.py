"""The extraction rules both parsers share: messages, raises, bindings, scopes, guards.

The libcst visitor (:mod:`miner.extract.cst_visitor`) and the standard-library
fallback (:mod:`miner.extract.ast_fallback`) only walk their own trees. What a
node *means* is decided here, once, so both produce the same records:

* Each parser translates the expressions the rules look at into a small
  parser-neutral :class:`Expr` (strings and their parts, ``%`` and ``+``,
  calls, names, attributes, tuples, dicts; anything else is ``other``). Source
  text is computed lazily, only where a rule asks for it.
* :class:`SiteSink` holds the traversal state (the ``__qualname__`` frames, the
  guard path of each frame, the enclosing ``except`` handlers) and builds the
  :class:`~miner.model.Site` records; the walkers call its ``enter_*`` /
  ``leave_*`` / ``push`` / ``pop`` / ``raise_site`` / ``assert_site`` methods.
* The guard wording (``for`` tests, ``with`` items, ``case`` patterns, the types
  an ``except`` catches) lives in the ``*_test`` helpers.
* Exits (:attr:`~miner.model.Site.exits`): each walker also translates the
  statements of the blocks on a site's path into a parser-neutral :class:`Stmt`
  (kind and position at once; tests, lines and child blocks lazily). The sink
  keeps the blocks of each frame and, at a site, asks :func:`contributions` of
  every statement before the one that holds the site, block by block, and
  drops an exit when a statement run after it (later in its block, the
  statement holding the site, a loop's other rounds) may rebind what it
  tested (:func:`killed`, from each statement's :attr:`Stmt.stores`).
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from miner.extract.helpers import CallForm, HelperTable, bound_helpers
from miner.extract.template import (
    Message,
    TemplateBuilder,
    enter_group,
    format_template,
    percent_template,
)
from miner.extract.text import excerpt_for
from miner.model import DynamicReason, Guard, GuardKind, MessageStyle, Parser, Site, SiteKind

#: Keywords of exception constructors that carry the message when there is no
#: positional argument (web frameworks' HTTP exceptions use ``detail=``).
MESSAGE_KEYWORDS = ("detail", "message", "msg")

ExprKind = Literal[
    "strings",
    "binop",
    "call",
    "name",
    "attribute",
    "tuple",
    "list",
    "dict",
    "subscript",
    "starred",
    "other",
]
PieceKind = Literal["str", "bytes", "f", "t"]


@dataclass(frozen=True, slots=True)
class FieldPart:
    """One replacement field of an f-string (or t-string)."""

    expr: str
    """The expression's source, single-line."""
    conversion: str | None = None
    """The conversion as written (``r``, ``s``, ``a``), or None."""
    spec: str | None = None
    """The format spec as written, nested fields rendered as ``{expr}``."""
    debug: bool = False
    """The self-documenting ``{expr=}`` form."""


@dataclass(frozen=True, slots=True)
class Piece:
    """One string literal of an implicit concatenation.

    ``parts`` holds runtime text (``str``: escapes evaluated, ``{{`` collapsed)
    and replacement fields, in order. A plain or bytes literal has one text part.
    """

    kind: PieceKind
    parts: tuple[str | FieldPart, ...]


class Expr:
    """A parser-neutral view of one expression: only what the rules read.

    ``kind`` says which attributes are set:

    * ``strings``: ``pieces`` (the implicit concatenation, in order).
    * ``binop``: ``op`` (``%``, ``+`` or ``?`` for any other operator),
      ``left``, ``right``.
    * ``call``: ``func`` and ``args`` (:class:`Arg`, in source order).
    * ``name``: ``name``. ``attribute``: ``value`` and ``name`` (the attribute).
    * ``tuple``, ``list``: ``elements``. ``dict``: ``items`` (key is None for ``**d``).
    * ``subscript``: ``value`` (what is indexed).
    * ``starred``, ``other``: only the source.

    ``source`` is the expression's single-line source text (outer parentheses
    dropped except around a tuple), computed on first use.
    """

    __slots__ = (
        "kind",
        "_code",
        "_source",
        "pieces",
        "op",
        "left",
        "right",
        "func",
        "args",
        "name",
        "value",
        "elements",
        "items",
    )

    def __init__(
        self,
        kind: ExprKind,
        code: Callable[[], str],
        *,
        pieces: tuple[Piece, ...] = (),
        op: str = "",
        left: Expr | None = None,
        right: Expr | None = None,
        func: Expr | None = None,
        args: tuple[Arg, ...] = (),
        name: str = "",
        value: Expr | None = None,
        elements: tuple[Expr, ...] = (),
        items: tuple[tuple[Expr | None, Expr], ...] = (),
    ) -> None:
        self.kind = kind
        self._code = code
        self._source: str | None = None
        self.pieces = pieces
        self.op = op
        self.left = left
        self.right = right
        self.func = func
        self.args = args
        self.name = name
        self.value = value
        self.elements = elements
        self.items = items

    @property
    def source(self) -> str:
        if self._source is None:
            self._source = self._code()
        return self._source

    def __repr__(self) -> str:
        return f"Expr({self.kind}, {self.source!r})"


@dataclass(frozen=True, slots=True)
class Arg:
    """One argument of a call: ``star`` is ``""``, ``"*"`` or ``"**"``."""

    value: Expr
    keyword: str | None = None
    star: str = ""


BindingKind = Literal["value", "class", "parameter", "other"]


@dataclass(frozen=True, slots=True)
class Binding:
    """One statement that binds a name in a function's own scope.

    ``value``: a plain assignment to the bare name (``x = ...``, ``x: T = ...``;
    ``value`` is None for ``x: T`` alone). ``class``: a
    ``class`` statement or an import, which leave the name's meaning to its
    spelling. ``parameter``: a parameter of the function. ``other``: anything
    else (loop and ``with`` targets,
    ``except ... as``, ``+=``, walrus, tuple targets, ``global``, ``del``, match
    captures, nested ``def``).
    """

    kind: BindingKind
    value: Callable[[], Expr] | None = None
    """For ``value``: gives the assigned value (translated on first use)."""


Bindings = Mapping[str, Sequence[Binding]]
#: The binding of every statement that is neither a plain assignment nor a class.
OTHER = Binding("other")
#: The binding of a parameter of the function.
PARAMETER = Binding("parameter")


# -- messages ----------------------------------------------------------------
def attr_name(expr: Expr) -> str | None:
    """The last name of a dotted expression (``a.b.c`` -> ``c``), or None."""
    if expr.kind in ("attribute", "name"):
        return expr.name
    return None


def _strings(expr: Expr) -> tuple[TemplateBuilder, MessageStyle]:
    builder = TemplateBuilder()
    kinds = set()
    for piece in expr.pieces:
        kinds.add(piece.kind)
        for part in piece.parts:
            if isinstance(part, str):
                builder.text(part)
            else:
                builder.field(part.expr, part.conversion, part.spec, debug=part.debug)
    style: MessageStyle
    if "t" in kinds:
        style = "tstring"
    elif "f" in kinds:
        style = "fstring"
    elif kinds == {"bytes"}:
        style = "bytes"
    else:
        style = "literal"
    return builder, style


def literal_text(expr: Expr | None) -> str | None:
    """Runtime text of a string literal (or implicit concatenation) without
    replacement fields; None for anything else, and for t-strings."""
    if expr is None or expr.kind != "strings":
        return None
    if any(p.kind == "t" for p in expr.pieces):
        return None
    out = []
    for piece in expr.pieces:
        for part in piece.parts:
            if not isinstance(part, str):
                return None
            out.append(part)
    return "".join(out)


class Scope:
    """What the message rules may ask about local names where a message is
    built (:class:`Locals` answers it; ``None`` in their place: nothing)."""

    def string(self, name: str) -> tuple[TemplateBuilder, MessageStyle] | DynamicReason:
        """The template of the string ``name`` holds, or why there is none."""
        return "global"

    def items(self, name: str) -> list[tuple[Expr, object]] | None:
        """The items of the list ``name`` holds, each with the key of the
        ``if`` branch that adds it (None: always there); None when unknown."""
        return None


def _literal_of(expr: Expr | None, scope: Scope | None) -> str | None:
    """The runtime text of a string literal, or of a local name that holds one."""
    text = literal_text(expr)
    if text is not None or expr is None or expr.kind != "name" or scope is None:
        return text
    found = scope.string(expr.name)
    if isinstance(found, str) or found[0].has_fields or found[0].groups:
        return None
    return "".join(p.text or "" for p in found[0].parts)


def _percent(expr: Expr, scope: Scope | None) -> TemplateBuilder | None:
    fmt = _literal_of(expr.left, scope)
    right = expr.right
    if fmt is None or right is None:
        return None
    positional: list[str] | None = None
    mapping: dict[str, str] | None = None
    if right.kind == "tuple" and not any(e.kind == "starred" for e in right.elements):
        positional = [e.source for e in right.elements]
    elif right.kind == "dict":
        mapping = {}
        for key, value in right.items:
            text = literal_text(key)
            if text is not None:
                mapping[text] = value.source
    return percent_template(fmt, positional, mapping, right.source)


def _format(call: Expr, scope: Scope | None) -> TemplateBuilder | None:
    assert call.func is not None
    fmt = _literal_of(call.func.value, scope)
    if fmt is None:
        return None
    positional: list[str] = []
    keywords: dict[str, str] = {}
    has_star = False
    for arg in call.args:
        if arg.star:
            has_star = True
        elif arg.keyword is not None:
            keywords[arg.keyword] = arg.value.source
        else:
            positional.append(arg.value.source)
    return format_template(fmt, positional, keywords, has_star)


def _flatten_add(expr: Expr) -> list[Expr]:
    out: list[Expr] = []
    stack = [expr]
    while stack:
        node = stack.pop()
        if node.kind == "binop" and node.op == "+" and node.left and node.right:
            stack.append(node.right)
            stack.append(node.left)
        else:
            out.append(node)
    return out


def _string_piece(expr: Expr, scope: Scope | None) -> TemplateBuilder | None:
    """The template of a string-building expression or of a local name that
    holds one; None for anything else."""
    rendered = template_of(expr, scope)
    if rendered is not None:
        return rendered[0]
    if expr.kind == "name" and scope is not None:
        found = scope.string(expr.name)
        if not isinstance(found, str):
            return found[0]
    return None


def _concat(expr: Expr, scope: Scope | None) -> TemplateBuilder | None:
    builder = TemplateBuilder()
    has_string = False
    for operand in _flatten_add(expr):
        rendered = _string_piece(operand, scope)
        if rendered is not None:
            has_string = True
            builder.extend(rendered)
        else:
            builder.field(operand.source)
    return builder if has_string else None


def _is_join(expr: Expr) -> bool:
    """``sep.join(items)`` with a string literal ``sep`` and one positional argument."""
    func = expr.func
    return (
        expr.kind == "call"
        and func is not None
        and func.kind == "attribute"
        and func.name == "join"
        and literal_text(func.value) is not None
        and len(expr.args) == 1
        and expr.args[0].keyword is None
        and not expr.args[0].star
    )


def _join(call: Expr, scope: Scope | None) -> TemplateBuilder | None:
    """``sep.join([...])`` of a list or tuple the source spells out, or of a
    local list built by appends (an append under an ``if`` is optional)."""
    assert call.func is not None
    sep = literal_text(call.func.value) or ""
    arg = call.args[0].value
    items: list[tuple[Expr, object]] | None = None
    inner = scope  # names among the items are resolved where the join is
    if arg.kind in ("list", "tuple"):
        items = [(e, None) for e in arg.elements]
    elif arg.kind == "name" and scope is not None:
        items, inner = scope.items(arg.name), None
    if not items or any(e.kind == "starred" for e, _ in items):
        return None
    first = next((i for i, (_, key) in enumerate(items) if key is None), None)
    if first is None:
        return None  # every item optional: where the separators go is unknown
    builder = TemplateBuilder()
    groups: dict[object, int] = {}
    for index, (item, key) in enumerate(items):
        enter_group(builder, groups, key)
        piece = _string_piece(item, inner)
        if index > first:
            builder.text(sep)
        if piece is None:
            builder.field(item.source)
        else:
            builder.extend(piece)
        if index < first:
            builder.text(sep)
    builder.group = None
    return builder


def template_of(
    expr: Expr, scope: Scope | None = None
) -> tuple[TemplateBuilder, MessageStyle] | None:
    """The template of a string-building expression: a literal or f-string
    (implicit concatenations joined), ``fmt % args``, ``a + b`` with at least one
    string operand, ``fmt.format(...)``, ``sep.join([...])``; None for
    anything else. With a ``scope``, a local name used as the format, an
    operand or the joined list is resolved through it."""
    if expr.kind == "strings":
        return _strings(expr)
    built: TemplateBuilder | None = None
    style: MessageStyle = "percent"
    if expr.kind == "binop" and expr.op == "%":
        built = _percent(expr, scope)
    elif expr.kind == "binop" and expr.op == "+":
        built, style = _concat(expr, scope), "concat"
    elif (
        expr.kind == "call"
        and expr.func is not None
        and expr.func.kind == "attribute"
        and expr.func.name == "format"
    ):
        built, style = _format(expr, scope), "format"
    elif _is_join(expr):
        built, style = _join(expr, scope), "join"
    return None if built is None else (built, style)


def dynamic_reason(expr: Expr, scope: Scope | None) -> DynamicReason:
    """Why an expression that :func:`template_of` cannot render is dynamic
    (see :data:`~miner.model.DynamicReason`)."""
    if expr.kind == "name":
        if scope is None:
            return "global"
        found = scope.string(expr.name)
        return found if isinstance(found, str) else "variable"
    if expr.kind in ("attribute", "subscript"):
        return "attribute"
    if expr.kind == "call":
        return "non-literal-join" if _is_join(expr) else "call"
    if expr.kind == "starred":
        return "star-args"
    return "other"


def render(expr: Expr, scope: Scope | None = None) -> Message:
    """The message an expression evaluates to, as far as the source tells.

    ``scope`` gives the values of local names (see :class:`Locals`); a name
    resolved that way keeps its own source as ``message_source``.
    """
    rendered = template_of(expr, scope)
    if rendered is not None:
        return Message.of(rendered[0], rendered[1], expr.source)
    if expr.kind == "name" and scope is not None:
        found = scope.string(expr.name)
        if not isinstance(found, str):
            return Message.of(found[0], found[1], expr.source)
    return Message.dynamic(expr.source, dynamic_reason(expr, scope))


def call_message(call: Expr, scope: Scope | None) -> Message:
    """The message of ``Exc(...)``: the first positional argument, else a
    ``detail=`` / ``message=`` / ``msg=`` keyword; a ``*args`` / ``**kwargs``
    reached first makes it dynamic."""
    for arg in call.args:
        if arg.keyword is None:
            if arg.star:
                return Message.dynamic(arg.value.source, "star-args")
            return render(arg.value, scope)
    for wanted in MESSAGE_KEYWORDS:
        for arg in call.args:
            if arg.keyword == wanted:
                return render(arg.value, scope)
    return Message.none()


def single_assignment(bindings: Bindings | None, name: str) -> Expr | None:
    """The value of ``name`` when the function binds it exactly once, by a plain
    assignment to the bare name; else None."""
    if not bindings:
        return None
    found = bindings.get(name, ())
    if len(found) != 1 or found[0].kind != "value" or found[0].value is None:
        return None
    return found[0].value()


# -- guard wording -------------------------------------------------------------
def for_test(target: str, iterable: str) -> str:
    """The test of a ``for`` guard: ``target in iterable``."""
    return f"{target} in {iterable}"


def with_item(item: str, asname: str | None) -> str:
    """One ``with`` item: ``expr`` or ``expr as name``."""
    return item if asname is None else f"{item} as {asname}"


def case_test(pattern: str, guard: str | None) -> str:
    """The test of a ``case`` guard: the pattern and `` if guard``."""
    return pattern if guard is None else f"{pattern} if {guard}"


def handler_types(type_expr: Expr | None) -> tuple[str, ...]:
    """The types an ``except`` clause catches, as written; ``BaseException``
    for a bare ``except:``."""
    if type_expr is None:
        return ("BaseException",)
    if type_expr.kind == "tuple":
        return tuple(e.source for e in type_expr.elements)
    return (type_expr.source,)


# -- statements and exits ------------------------------------------------------
StmtKind = Literal[
    "if",
    "while",
    "for",
    "try",
    "with",
    "match",
    "return",
    "raise",
    "continue",
    "break",
    "assert",
    "trivial",
    "scope",
    "other",
]
Text = Callable[[], str]
Position = tuple[int, int]


@dataclass(frozen=True, slots=True)
class Clause:
    """One handler of a ``try`` or case of a ``match``, for the exit analysis."""

    line: int
    """Line of the ``except`` / ``case`` keyword."""
    body: Sequence[Stmt]
    test: Text | None = None
    """The caught types as written (None for a bare ``except:``), or the pattern."""
    guard: Text | None = None
    """A case's ``if`` guard, or None."""
    irrefutable: bool = False
    """A case that matches every subject (``case _:`` or ``case name:``, no guard)."""


@dataclass(frozen=True, slots=True)
class StmtParts:
    """What the exit analysis reads of a compound statement (or an ``assert``)."""

    line: int
    """Line of the statement's keyword."""
    test: Text | None = None
    """The test of ``if`` / ``elif``, ``while`` and ``assert``."""
    body: Sequence[Stmt] = ()
    orelse: Sequence[Stmt] | None = None
    """The ``else`` block (for ``if``: ``elif`` as a block of one ``if``); None
    when there is none."""
    clauses: Sequence[Clause] = ()
    """``except`` handlers of a ``try``, cases of a ``match``."""
    final: Sequence[Stmt] = ()
    """The ``finally`` block of a ``try``."""
    subject: Text | None = None
    """The subject of a ``match``."""


_NO_PARTS = StmtParts(0)


EffectKind = Literal["assign", "augadd", "append", "extend"]


@dataclass(frozen=True, slots=True)
class Effect:
    """What a simple statement does to one local name, for messages built in
    steps: ``name = value`` (``assign``, also annotated), ``name += value``
    (``augadd``), ``name.append(value)`` / ``name.extend(value)`` as a
    statement, with one positional argument."""

    kind: EffectKind
    name: str
    value: Expr


class Stmt:
    """A parser-neutral view of one statement, only what the exit analysis
    (and the messages built in steps) read.

    A line of simple statements is seen as its statements, one by one, as
    ``ast`` has them. ``kind`` is the statement (``trivial``: ``pass``, ``...``
    or a string constant such as a docstring; ``scope``: ``def`` / ``class``;
    ``other``: anything else that cannot leave). ``start`` orders statements
    against a site's position (the walker's own positions). ``parts``,
    ``stores``, ``effect`` and ``text`` are computed on first use.
    """

    __slots__ = (
        "kind",
        "start",
        "_expand",
        "_parts",
        "_stores_of",
        "_stores",
        "_effect_of",
        "_text_of",
    )

    def __init__(
        self,
        kind: StmtKind,
        start: Position,
        expand: Callable[[], StmtParts] | None = None,
        stores: Callable[[], frozenset[str]] | None = None,
        *,
        effect: Callable[[], Effect | None] | None = None,
        text: Callable[[], str] | None = None,
    ) -> None:
        self.kind = kind
        self.start = start
        self._expand = expand
        self._parts: StmtParts | None = None
        self._stores_of = stores
        self._stores: frozenset[str] | None = None
        self._effect_of = effect
        self._text_of = text

    @property
    def parts(self) -> StmtParts:
        if self._parts is None:
            self._parts = self._expand() if self._expand is not None else _NO_PARTS
        return self._parts

    @property
    def stores(self) -> frozenset[str]:
        """What the statement (anything in it, nested scopes too) may rebind or
        change: see :func:`store_paths`. ``*`` stands for any name."""
        if self._stores is None:
            self._stores = self._stores_of() if self._stores_of is not None else frozenset()
        return self._stores

    @property
    def effect(self) -> Effect | None:
        """For a simple statement: its :class:`Effect`, or None."""
        return self._effect_of() if self._effect_of is not None else None

    def mentions(self, name: str) -> bool:
        """Whether ``name`` occurs as a word (not after a dot) in the source
        lines of the statement (strings and comments too); True when the
        walker gave no text."""
        if self._text_of is None:
            return True
        return re.search(rf"(?<![\w.]){re.escape(name)}(?!\w)", self._text_of()) is not None

    def __repr__(self) -> str:
        return f"Stmt({self.kind}, {self.start})"


# -- what a statement changes, what an exit reads ------------------------------
def block_stores(block: Sequence[Stmt] | None) -> frozenset[str]:
    """What the statements of a block may change (see :attr:`Stmt.stores`)."""
    if not block:
        return frozenset()
    out: set[str] = set()
    for stmt in block:
        out |= stmt.stores
    return frozenset(out)


def _paths(node: ast.AST) -> set[str]:
    """Every name and dotted attribute path an expression reads (``a.b.c``
    gives ``a``, ``a.b``, ``a.b.c``)."""
    out: set[str] = set()
    for sub in ast.walk(node):
        if isinstance(sub, (ast.Name, ast.Attribute)):
            dotted = dotted_path(sub)
            if dotted is not None:
                out.add(dotted)
    return out


def dotted_path(node: ast.AST) -> str | None:
    """``a.b.c`` for a chain of attributes on a name, else None."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


@functools.lru_cache(maxsize=8192)
def _reads(kind: str, test: str, subject: str | None) -> frozenset[str] | None:
    try:
        if kind == "exit-case":
            found = _paths(ast.parse(subject or "None", mode="eval"))
            match = ast.parse(f"match _:\n case {test}:\n  pass").body[0]
            assert isinstance(match, ast.Match)
            case = match.cases[0]
            if case.guard is not None:
                # Less the names the pattern itself captures.
                captures = {
                    getattr(sub, "name", None) or getattr(sub, "rest", None)
                    for sub in ast.walk(case.pattern)
                }
                found |= {p for p in _paths(case.guard) if p.split(".")[0] not in captures}
            return frozenset(found)
        return frozenset(_paths(ast.parse(f"({test})", mode="eval")))
    except (SyntaxError, ValueError, RecursionError, AssertionError):
        return None


def reads(guard: Guard) -> frozenset[str] | None:
    """The names and attribute paths whose values an exit's truth depends on;
    None when the test cannot be read (then any store may change it)."""
    if guard.kind in ("exit-except", "unreachable"):
        return frozenset()
    return _reads(guard.kind, guard.test, guard.subject)


def killed(guard: Guard, stores: frozenset[str] | set[str]) -> bool:
    """Whether a statement storing ``stores`` after an exit may have changed
    what it tested (``x = ...`` or ``x.a = ...`` after ``if x.a is None:
    return``); such an exit no longer holds at the site."""
    if not stores:
        return False
    paths = reads(guard)
    if paths is None or "*" in stores:
        return paths is None or bool(paths)
    return not paths.isdisjoint(stores)


#: Tests that never become false: a ``while`` on one of these has no exit condition.
_ALWAYS_TRUE = frozenset({"True", "1"})
_ALWAYS_FALSE = frozenset({"False", "0", "None"})


def block_leaves(block: Sequence[Stmt]) -> bool:
    """Whether every path through the block leaves it for good: one of its
    statements always does (see :func:`always_leaves`)."""
    return any(always_leaves(stmt) for stmt in block)


def always_leaves(stmt: Stmt) -> bool:
    """Whether every path through the statement ends in ``return``, ``raise``,
    ``continue`` or ``break`` (of a loop around it) or a failing ``assert``.

    Sound, not complete: a loop never counts, nor a ``with`` (its context
    manager may swallow an exception raised in the body and carry on after it).
    """
    kind = stmt.kind
    if kind in ("return", "raise", "continue", "break"):
        return True
    if kind == "assert":
        test = stmt.parts.test
        return test is not None and test() in _ALWAYS_FALSE
    if kind == "if":
        parts = stmt.parts
        return parts.orelse is not None and block_leaves(parts.body) and block_leaves(parts.orelse)
    if kind == "try":
        parts = stmt.parts
        if block_leaves(parts.final):
            return True
        if not all(block_leaves(c.body) for c in parts.clauses):
            return False
        return block_leaves(parts.body) or (parts.orelse is not None and block_leaves(parts.orelse))
    if kind == "match":
        cases = stmt.parts.clauses
        return (
            bool(cases)
            and any(c.irrefutable for c in cases)
            and all(block_leaves(c.body) for c in cases)
        )
    return False


def has_break(block: Sequence[Stmt]) -> bool:
    """Whether a ``break`` in the block leaves the loop whose body it is (not
    one of an inner loop; the ``else`` of an inner loop counts)."""
    for stmt in block:
        kind = stmt.kind
        if kind == "break":
            return True
        if kind in ("while", "for"):
            orelse = stmt.parts.orelse
            if orelse is not None and has_break(orelse):
                return True
        elif kind in ("if", "try", "with", "match"):
            parts = stmt.parts
            blocks = [parts.body, parts.orelse or (), parts.final]
            blocks += [c.body for c in parts.clauses]
            if any(has_break(b) for b in blocks):
                return True
    return False


def block_contributions(
    block: Sequence[Stmt] | None, after: frozenset[str] = frozenset()
) -> list[Guard]:
    """The exits of the statements of a block that still hold after it, in
    order (see :func:`contributions`): an exit is dropped when a later
    statement of the block, or ``after`` (what runs after the block before the
    point of interest), may change what it tested (see :func:`killed`)."""
    if not block:
        return []
    per = [contributions(stmt) for stmt in block]
    return surviving(block, per, after)


def surviving(
    block: Sequence[Stmt], per: Sequence[Sequence[Guard]], after: frozenset[str] = frozenset()
) -> list[Guard]:
    """Of ``per[i]``, the exits of ``block[i]``, those no later statement of
    ``per``'s range of the block (nor ``after``) may have changed."""
    first = next((i for i, guards in enumerate(per) if guards), None)
    if first is None:
        return []
    later: set[str] = set(after)
    out: list[Guard] = []
    for index in range(len(per) - 1, first - 1, -1):
        out.extend(g for g in reversed(per[index]) if not killed(g, later))
        if index > first:
            later |= block[index].stores
    out.reverse()
    return out


def contributions(stmt: Stmt) -> tuple[Guard, ...]:
    """What holds after ``stmt`` when the path goes on past it: the exits
    (:attr:`~miner.model.Site.exits`) it adds to every later site of its block.

    Recorded only when sure: an ``if`` chain's branches that leave (and the one
    branch that does not, when all others leave), the leading ``except``
    handlers and ``case`` clauses that leave, a ``while`` without ``break``
    (its test is false after it), an ``assert`` (its test holds), and a
    statement that always leaves (``unreachable``). Nothing for ``with`` (its
    context manager may swallow an exception) nor for loops' bodies.
    """
    kind = stmt.kind
    if kind in ("return", "raise", "continue", "break"):
        return (Guard("unreachable", "", False, stmt.parts.line),)
    if kind == "assert":
        parts = stmt.parts
        assert parts.test is not None
        test = parts.test()
        if test in _ALWAYS_FALSE:
            return (Guard("unreachable", "", False, parts.line),)
        return (Guard("asserted", test, False, parts.line),)
    if kind == "if":
        return _if_contributions(stmt)
    if kind == "try":
        return _try_contributions(stmt)
    if kind == "match":
        return _match_contributions(stmt)
    if kind == "while":
        parts = stmt.parts
        assert parts.test is not None
        if has_break(parts.body):
            return ()
        test = parts.test()
        if test in _ALWAYS_TRUE:
            return (Guard("unreachable", "", False, parts.line),)
        out = [Guard("exit-while", test, True, parts.line)]
        if parts.orelse is not None:
            if block_leaves(parts.orelse):
                return (Guard("unreachable", "", False, parts.line),)
            out = [g for g in out if not killed(g, block_stores(parts.orelse))]
            out += block_contributions(parts.orelse)
        return tuple(out)
    return ()


def if_chain(stmt: Stmt) -> list[tuple[Text | None, int, Sequence[Stmt] | None]]:
    """An ``if`` chain's branches, in order: (test, line, body); an ``else``
    has no test, and an absent ``else`` is a branch that falls through (no
    test, body None)."""
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


def _if_contributions(stmt: Stmt) -> tuple[Guard, ...]:
    branches = if_chain(stmt)
    leaves = [body is not None and block_leaves(body) for _, _, body in branches]
    if all(leaves):
        return (Guard("unreachable", "", False, stmt.parts.line),)
    first = leaves.index(False)
    out: list[Guard] = []
    for test, line, _ in branches[:first]:
        assert test is not None
        out.append(Guard("exit", test(), True, line))
    if leaves.count(False) == 1:
        test, line, body = branches[first]
        if test is not None:
            out.append(Guard("exit", test(), False, line))
        if body is not None:
            # The tests hold before the branch's body runs, not after it if it
            # changes what they read.
            changed = block_stores(body)
            out = [g for g in out if not killed(g, changed)]
            out += block_contributions(body)
    return tuple(out)


def _try_contributions(stmt: Stmt) -> tuple[Guard, ...]:
    if always_leaves(stmt):
        return (Guard("unreachable", "", False, stmt.parts.line),)
    parts = stmt.parts
    leaves = [block_leaves(c.body) for c in parts.clauses]
    out: list[Guard] = []
    final = block_stores(parts.final)
    if all(leaves):
        # Past the statement only when the body ran to its end.
        out += block_contributions(parts.body, final | block_stores(parts.orelse))
    for clause, leaving in zip(parts.clauses, leaves, strict=True):
        if not leaving:
            break
        out.append(Guard("exit-except", clause.test() if clause.test else "", True, clause.line))
    if all(leaves):
        out += block_contributions(parts.orelse, final)
    out += block_contributions(parts.final)
    return tuple(out)


def _match_contributions(stmt: Stmt) -> tuple[Guard, ...]:
    if always_leaves(stmt):
        return (Guard("unreachable", "", False, stmt.parts.line),)
    parts = stmt.parts
    cases = parts.clauses
    if not cases:
        return ()
    subject = parts.subject() if parts.subject is not None else ""

    def guard(clause: Clause, negated: bool) -> Guard:
        assert clause.test is not None
        test = case_test(clause.test(), clause.guard() if clause.guard else None)
        return Guard("exit-case", test, negated, clause.line, subject=subject)

    leaves = [block_leaves(c.body) for c in cases]
    if all(leaves):
        # No case matched (none always matches).
        return tuple(guard(c, True) for c in cases)
    first = leaves.index(False)
    out = [guard(c, True) for c in cases[:first]]
    if leaves.count(False) == 1 and any(c.irrefutable for c in cases):
        # Every other case leaves, and some case always matches: this one ran.
        if not cases[first].irrefutable:
            out.append(guard(cases[first], False))
        out = [g for g in out if not killed(g, stmt.stores)]
        out += block_contributions(cases[first].body)
    else:
        out = [g for g in out if not killed(g, stmt.stores)]
    return tuple(out)


class Block:
    """The statements of one block on the path to the sites being walked, and
    the exits of its statements, computed once each as sites ask for them."""

    __slots__ = ("_stmts", "_stmts_of", "_per")

    def __init__(self, stmts: Callable[[], Sequence[Stmt]]) -> None:
        self._stmts_of = stmts
        self._stmts: Sequence[Stmt] | None = None
        self._per: list[tuple[Guard, ...]] = []

    @property
    def stmts(self) -> Sequence[Stmt]:
        if self._stmts is None:
            self._stmts = self._stmts_of()
        return self._stmts

    def before(self, at: Position, holder: bool) -> int:
        """How many statements come before the one holding position ``at``:
        the site itself (``holder`` false: this is the site's own block), or a
        compound statement around it (``holder`` true)."""
        count = 0
        for stmt in self.stmts:
            if stmt.start >= at:
                break
            count += 1
        return count - 1 if holder and count else count

    def contributions(self, count: int) -> list[tuple[Guard, ...]]:
        """The exits of each of the first ``count`` statements (see
        :func:`contributions`), each computed once."""
        stmts = self.stmts
        while len(self._per) < count:
            self._per.append(contributions(stmts[len(self._per)]))
        return self._per[:count]

    def trivial_but(self, index: int) -> bool:
        """Whether every statement but the one at ``index`` is trivial."""
        return all(s.kind == "trivial" for i, s in enumerate(self.stmts) if i != index)


# -- messages built in steps ---------------------------------------------------
#: How many locals deep a message is followed (``msg = head + tail`` ...).
MAX_HOPS = 4
#: One change to a local on the way to a site: the value appended, the key of
#: the ``if`` branch it is under (None: always), and the statement's place.
_Step = tuple[Expr, object, int, int]


@dataclass(frozen=True, slots=True)
class _Reached:
    """What reaches a site for one local: the assignment that set it (None:
    the function's start, for a parameter) and the appends since, in order."""

    value: Expr | None
    at: tuple[int, int]
    """(depth, index) of the assignment among the frame's blocks."""
    steps: tuple[_Step, ...]


class Locals(Scope):
    """The values of a function's locals just before a statement: the
    reaching definitions along the straight-line code of its frame's blocks.

    A local is followed back from the position through the statements before
    it, block by block outwards, to the plain assignment that sets it; on the
    way only ``+=`` / ``.append`` / ``.extend`` of it may change it, each
    also inside an ``if`` (one optional part per branch). Anything else that
    rebinds it (or, for a list, mentions it), a loop or ``try`` around the
    position that may change it, or a branch that reassigns it gives up: then
    a local assigned once in the whole function is taken at that value, as
    before steps were followed.

    Args:
        sink: the traversal state; its current frame is the function.
        counts: for each block of the frame, how many statements come before
            the one on the path (:meth:`Block.before`).
        depth, count: the position: before statement ``count`` of block ``depth``.
        hops: how many locals were followed to get here.
    """

    def __init__(
        self, sink: SiteSink, counts: Sequence[int], depth: int, count: int, hops: int = 0
    ) -> None:
        self.sink = sink
        self.frame = sink.frame
        self.counts = counts
        self.depth = depth
        self.count = count
        self.hops = hops

    def _bindings(self) -> Bindings | None:
        return self.frame.bound() if self.frame.kind == "function" else None

    def _at(self, depth: int, count: int) -> Locals:
        return Locals(self.sink, self.counts, depth, count, self.hops + 1)

    def string(self, name: str) -> tuple[TemplateBuilder, MessageStyle] | DynamicReason:
        bindings = self._bindings()
        if self.sink.caught_name(name):
            return "caught-exception"
        if bindings is None or name not in bindings:
            return "global"
        reached = self._walk(name, False) if self.hops < MAX_HOPS else None
        if reached is not None:
            found = self._built(name, reached, bindings)
            if found is not None:
                return found
        value = single_assignment(bindings, name)
        if value is not None:
            rendered = template_of(value)
            if rendered is not None:
                return rendered
            return "variable-from-call" if value.kind == "call" else "variable"
        if all(b.kind == "parameter" for b in bindings[name]):
            return "parameter"
        if reached is not None and reached.value is not None:
            return "variable-from-call" if reached.value.kind == "call" else "variable"
        return "variable-branches"

    def _built(
        self, name: str, reached: _Reached, bindings: Bindings
    ) -> tuple[TemplateBuilder, MessageStyle] | None:
        """The template of a string local from what reaches the position;
        None when it holds no literal text."""
        builder = TemplateBuilder()
        style: MessageStyle = "steps"
        if reached.value is None:
            if not any(b.kind == "parameter" for b in bindings[name]):
                return None
            builder.field(name)
        else:
            piece = _string_piece(reached.value, self._at(*reached.at))
            if piece is None:
                builder.field(reached.value.source)
            else:
                builder.extend(piece)
                rendered = template_of(reached.value)
                if not reached.steps and rendered is not None:
                    style = rendered[1]
        groups: dict[object, int] = {}
        for value, key, depth, index in reached.steps:
            enter_group(builder, groups, key)
            piece = _string_piece(value, self._at(depth, index) if key is None else None)
            if piece is None:
                builder.field(value.source)
            else:
                builder.extend(piece)
        builder.group = None
        if not any(p.expr is None for p in builder.parts):
            return None
        return builder, style

    def items(self, name: str) -> list[tuple[Expr, object]] | None:
        bindings = self._bindings()
        if bindings is None or name not in bindings or self.hops >= MAX_HOPS:
            return None
        reached = self._walk(name, True)
        if reached is None or reached.value is None:
            return None
        if reached.value.kind not in ("list", "tuple"):
            return None
        out: list[tuple[Expr, object]] = [(e, None) for e in reached.value.elements]
        out.extend((value, key) for value, key, _, _ in reached.steps)
        return out

    def _walk(self, name: str, is_list: bool) -> _Reached | None:
        """What reaches the position for ``name`` (see the class doc); None
        when it is not decided by straight-line code."""
        blocks = self.frame.blocks
        steps: list[list[_Step]] = []  # per statement, latest first
        for depth in range(self.depth, -1, -1):
            stmts = blocks[depth].stmts
            end = self.count if depth == self.depth else self.counts[depth]
            for index in range(end - 1, -1, -1):
                stmt = stmts[index]
                touched = name in stmt.stores or "*" in stmt.stores
                if is_list and not touched:
                    touched = stmt.mentions(name)
                if not touched:
                    continue
                found = _changes(stmt, name, is_list, depth, index)
                if found is None:
                    return None
                value, changes = found
                if value is not None:
                    ordered = tuple(step for group in reversed([changes, *steps]) for step in group)
                    return _Reached(value, (depth, index), ordered)
                steps.append(changes)
            if depth:
                holder = blocks[depth - 1].stmts[self.counts[depth - 1]]
                if not _passes(holder, name, is_list):
                    return None
        return _Reached(None, (0, 0), tuple(s for group in reversed(steps) for s in group))


def _passes(holder: Stmt, name: str, is_list: bool) -> bool:
    """Whether leaving the compound statement that holds the position, up
    to the statements before it, keeps ``name`` decided: an ``if`` whose test
    does not change it (no walrus; for a list, no mention), any other
    statement that stores nothing to it (a loop's other rounds, a ``try``
    body run in part, a ``with`` or ``case`` target)."""
    if holder.kind == "if":
        test = holder.parts.test
        text = test() if test is not None else ""
        if ":=" in text:
            return False
        return not (is_list and re.search(rf"(?<![\w.]){re.escape(name)}(?!\w)", text))
    if name in holder.stores or "*" in holder.stores:
        return False
    return not (is_list and holder.mentions(name))


def _changes(
    stmt: Stmt, name: str, is_list: bool, depth: int, index: int
) -> tuple[Expr | None, list[_Step]] | None:
    """What a statement that touches ``name`` does to it: the value it
    assigns (or None) and the values it appends; None when not modelled."""
    if stmt.kind == "if":
        return _branch_changes(stmt, name, is_list, depth, index)
    if stmt.kind != "other":
        return None
    effect = stmt.effect
    if effect is None or effect.name != name:
        return None
    if effect.kind == "assign":
        return effect.value, []
    appended = _appended(effect, is_list)
    if appended is None:
        return None
    return None, [(value, None, depth, index) for value in appended]


def _appended(effect: Effect, is_list: bool) -> list[Expr] | None:
    """The values an append-like effect adds (a string's ``+=``; a list's
    ``.append``, ``.extend`` or ``+=`` of a list or tuple spelled out)."""
    if not is_list:
        return [effect.value] if effect.kind == "augadd" else None
    if effect.kind == "append":
        return [effect.value]
    if effect.kind in ("extend", "augadd") and effect.value.kind in ("list", "tuple"):
        return list(effect.value.elements)
    return None


def _branch_changes(
    stmt: Stmt, name: str, is_list: bool, depth: int, index: int
) -> tuple[Expr | None, list[_Step]] | None:
    """The appends of an ``if`` chain's branches, one optional group per
    branch (a branch that always leaves is not on the way); None when a
    branch does anything else to ``name`` or its test may change it."""
    steps: list[_Step] = []
    for number, (test, _, body) in enumerate(if_chain(stmt)):
        if test is not None and ":=" in test():
            return None
        if body is None or block_leaves(body):
            continue
        for inner in body:
            touched = name in inner.stores or "*" in inner.stores
            if is_list and not touched:
                touched = inner.mentions(name)
            if not touched:
                continue
            if inner.kind != "other" or inner.effect is None or inner.effect.name != name:
                return None
            appended = _appended(inner.effect, is_list)
            if appended is None:
                return None
            steps.extend((value, (depth, index, number), depth, index) for value in appended)
    return None, steps


# -- abstract methods ----------------------------------------------------------
_ABSTRACT_DECORATORS = frozenset(
    {"abstractmethod", "abstractproperty", "abstractclassmethod", "abstractstaticmethod"}
)
_ABSTRACT_BASES = frozenset({"ABC", "Protocol"})
_ABSTRACT_METACLASSES = frozenset({"ABCMeta"})


def abstract_function(decorators: Sequence[str | None]) -> bool:
    """Whether a function with decorators of these last names (``abc.abstractmethod``
    -> ``abstractmethod``; None for anything but a dotted name) is abstract."""
    return any(name in _ABSTRACT_DECORATORS for name in decorators)


def abstract_class(bases: Sequence[str | None], metaclass: str | None) -> bool:
    """Whether a class with bases of these last names (``typing.Protocol[T]`` ->
    ``Protocol``) and this ``metaclass=`` last name declares an interface."""
    return metaclass in _ABSTRACT_METACLASSES or any(b in _ABSTRACT_BASES for b in bases)


# -- scopes and the traversal state -------------------------------------------
def doc_summary(doc: str | None) -> str | None:
    """The first paragraph of a cleaned docstring, on one line."""
    if not doc:
        return None
    first = doc.strip().split("\n\n", 1)[0]
    return " ".join(first.split()) or None


def child_qualname(kind: str, qualname: str, name: str) -> str:
    """``__qualname__`` of ``name`` defined in a scope of ``kind`` (``module``,
    ``class`` or ``function``) named ``qualname``."""
    if kind == "module":
        return name
    if kind == "class":
        return f"{qualname}.{name}"
    return f"{qualname}.<locals>.{name}"


@dataclass(frozen=True, slots=True)
class UnitContext:
    """Where a unit cut out of a file sits: the scope that encloses it."""

    kind: str = "module"
    """``module``, ``class`` or ``function``: the kind of the enclosing scope."""
    qualname: str = ""
    """The enclosing scope's ``__qualname__`` (empty at module level)."""
    class_doc: str | None = None
    """Docstring summary of the innermost enclosing class, if any."""
    function_doc: str | None = None
    """Docstring summary of the innermost enclosing function, if any."""
    exits: tuple[Guard, ...] = ()
    """The exits of the scope's statements before the unit (see
    :attr:`~miner.model.Site.exits`)."""
    alone: bool = True
    """For a function: every statement of its body outside the unit is trivial
    (a docstring, ``pass``, ``...``), so a site alone in the unit is alone in
    the body (see :attr:`~miner.model.Site.body_only`)."""
    abstract: bool = False
    """For a function: it is abstract (see :attr:`~miner.model.Site.abstract`); for a class:
    its bases or metaclass declare an interface, so its methods are abstract."""


@dataclass
class Frame:
    """One scope on the traversal's stack, with its own guard path."""

    kind: str
    qualname: str
    class_doc: str | None = None
    function_doc: str | None = None
    bindings: Callable[[], Bindings] | None = None
    """For a function: computes its bindings (called at most once)."""
    guards: list[Guard] = field(default_factory=list)
    handlers: list[tuple[tuple[str, ...], str | None]] = field(default_factory=list)
    blocks: list[Block] = field(default_factory=list)
    """The blocks of statements from the scope's body down to the walk's position."""
    exits: tuple[Guard, ...] = ()
    """Exits of the scope's statements before the walked unit (from its context)."""
    alone: bool = True
    abstract: bool | Callable[[], bool] = False
    """See :attr:`UnitContext.abstract`; a callable is asked on first use."""
    _bound: Bindings | None = None

    def is_abstract(self) -> bool:
        if callable(self.abstract):
            self.abstract = self.abstract()
        return self.abstract

    def bound(self) -> Bindings | None:
        if self.bindings is None:
            return None
        if self._bound is None:
            self._bound = self.bindings()
        return self._bound


class SiteSink:
    """Traversal state and site building, shared by both walkers.

    Args:
        path: repository-relative path, stored in each site.
        lines: the whole file's lines (for excerpts), ``\\n``-split.
        parser: which parser's walker feeds this sink.
        context: the scope enclosing the walked tree (default: module level).
        helpers: the raising helpers the file's calls may name (see
            :mod:`miner.extract.helpers`); each call of one is a ``call`` site.
    """

    def __init__(
        self,
        *,
        path: str,
        lines: list[str],
        parser: Parser,
        context: UnitContext | None = None,
        helpers: HelperTable | None = None,
    ) -> None:
        ctx = context or UnitContext()
        self.helpers = helpers
        self.path = path
        self.lines = lines
        self.parser: Parser = parser
        self.frames = [
            Frame(
                kind=ctx.kind,
                qualname=ctx.qualname or "<module>",
                class_doc=ctx.class_doc,
                function_doc=ctx.function_doc,
                exits=ctx.exits,
                alone=ctx.alone,
                abstract=ctx.abstract,
            )
        ]
        self.sites: list[Site] = []

    @property
    def frame(self) -> Frame:
        return self.frames[-1]

    # scopes
    def enter_function(
        self,
        name: str,
        doc: str | None,
        bindings: Callable[[], Bindings],
        decorators: Callable[[], Sequence[str | None]] = tuple,
    ) -> None:
        """A ``def``; ``decorators`` gives the last names of its decorators
        (see :func:`abstract_function`), asked only when a site needs it."""
        parent = self.frame

        def abstract() -> bool:
            if abstract_function(decorators()):
                return True
            return parent.kind == "class" and parent.is_abstract()

        self.frames.append(
            Frame(
                kind="function",
                qualname=child_qualname(parent.kind, parent.qualname, name),
                class_doc=parent.class_doc,
                function_doc=doc_summary(doc),
                bindings=bindings,
                abstract=abstract,
            )
        )

    def enter_class(
        self,
        name: str,
        doc: str | None,
        interface: Callable[[], bool] | bool = False,
    ) -> None:
        """A ``class``; ``interface`` says whether its bases declare an
        interface (see :func:`abstract_class`)."""
        parent = self.frame
        self.frames.append(
            Frame(
                kind="class",
                qualname=child_qualname(parent.kind, parent.qualname, name),
                class_doc=doc_summary(doc),
                abstract=interface,
            )
        )

    # blocks
    def enter_block(self, stmts: Callable[[], Sequence[Stmt]]) -> None:
        """A block of statements (a scope's body, a branch, a loop body...):
        ``stmts`` gives them in order, asked only when a site needs them."""
        self.frame.blocks.append(Block(stmts))

    def leave_block(self) -> None:
        self.frame.blocks.pop()

    def _path_facts(self, at: Position) -> tuple[tuple[Guard, ...], bool]:
        """The exits of a site at position ``at`` and whether it is alone in
        its function's body."""
        frame = self.frame
        last = len(frame.blocks) - 1
        count = 0
        levels: list[tuple[Block, int, list[tuple[Guard, ...]]]] = []
        for depth, block in enumerate(frame.blocks):
            count = block.before(at, holder=depth < last)
            levels.append((block, count, block.contributions(count)))
        exits: list[Guard] = []
        pending = [any(per) for _, _, per in levels]
        # Innermost block first: what runs later may change what was tested.
        later: frozenset[str] = frozenset()
        for depth in range(last, -1, -1):
            if not (frame.exits or any(pending[: depth + 1])):
                break
            block, count, per = levels[depth]
            if depth < last:  # the statement holding the site (a loop's next rounds too)
                later |= block.stmts[count].stores
            if pending[depth]:
                exits[:0] = surviving(block.stmts, per, later)
            if frame.exits or any(pending[:depth]):
                later |= block_stores(block.stmts[:count])
        exits[:0] = [g for g in frame.exits if not killed(g, later)]
        alone = (
            frame.kind == "function"
            and frame.alone
            and len(frame.blocks) == 1
            and frame.blocks[0].trivial_but(count)
        )
        return tuple(exits), alone

    def reach(self, at: Position) -> tuple[tuple[Guard, ...], tuple[Guard, ...]]:
        """The guards and exits a site at position ``at`` would get (for a
        statement that is not a site: a call of another function)."""
        return tuple(self.frame.guards), self._path_facts(at)[0]

    def leave_scope(self) -> None:
        self.frames.pop()

    # guards
    def push(
        self,
        kind: GuardKind,
        test: str,
        negated: bool,
        line: int,
        *,
        name: str | None = None,
        subject: str | None = None,
    ) -> None:
        self.frame.guards.append(Guard(kind, test, negated, line, name=name, subject=subject))

    def pop(self) -> None:
        self.frame.guards.pop()

    def enter_handler(
        self, kind: GuardKind, type_expr: Expr | None, name: str | None, line: int
    ) -> None:
        """An ``except`` / ``except*`` body: a guard (``test`` holds the caught
        types as written, ``name`` the bound name) and a handler for re-raises."""
        test = type_expr.source if type_expr is not None else ""
        self.push(kind, test, False, line, name=name)
        self.frame.handlers.append((handler_types(type_expr), name))

    def leave_handler(self) -> None:
        self.pop()
        self.frame.handlers.pop()

    # names
    def locals(self, at: Position) -> Locals:
        """The values of the locals just before the statement at position
        ``at`` (see :class:`Locals`)."""
        blocks = self.frame.blocks
        last = len(blocks) - 1
        counts = [block.before(at, holder=depth < last) for depth, block in enumerate(blocks)]
        return Locals(self, counts, last, counts[-1] if counts else 0)

    def caught_name(self, name: str) -> bool:
        """Whether ``name`` is bound by an enclosing ``except ... as name``."""
        return any(bound == name for _, bound in self.frame.handlers)

    def caught(self, expr: Expr) -> tuple[str, ...] | None:
        """The handler types when ``expr`` (or ``expr.attr``) names a caught exception."""
        if expr.kind == "attribute" and expr.value is not None:
            expr = expr.value
        if expr.kind != "name":
            return None
        for types, name in reversed(self.frame.handlers):
            if name == expr.name:
                return types
        return None

    def is_variable(self, expr: Expr) -> bool:
        """Whether a raised name holds an instance rather than naming a class."""
        if expr.kind == "name":
            bindings = self.frame.bound() if self.frame.kind == "function" else None
            if (
                bindings is not None
                and expr.name in bindings
                and not all(b.kind == "class" for b in bindings[expr.name])
            ):
                return True
            if self.caught(expr) is not None:
                return True
            return not expr.name[:1].isupper()
        last = attr_name(expr) or ""
        return not last[:1].isupper()

    # sites
    def raise_site(
        self, line: int, end_line: int, exc: Expr | None, cause: str | None, *, at: Position
    ) -> None:
        """A ``raise`` statement at position ``at`` (the walker's own position
        of its start): classify what is raised and add the site."""
        exception: str | None
        reraise = False
        reraised: tuple[str, ...] = ()
        if exc is None:
            exception, message = None, Message.none()
            if self.frame.handlers:
                reraise, reraised = True, self.frame.handlers[-1][0]
        elif exc.kind == "call" and exc.func is not None:
            func = exc.func
            exception = func.source
            caught = self.caught(func)
            if caught is not None and attr_name(func) == "with_traceback" and func.value:
                # ``raise err.with_traceback(tb)``: the caught exception again.
                exception = func.value.source
                reraise, reraised, message = True, caught, Message.none()
            else:
                message = self.formatted(exc, at) or call_message(exc, self.locals(at))
        elif exc.kind in ("name", "attribute") and not self.is_variable(exc):
            exception, message = exc.source, Message.none()
        else:
            # A variable holding an exception instance: the caught one or another.
            exception = exc.source
            caught = self.caught(exc)
            if caught is not None:
                reraise, reraised, message = True, caught, Message.none()
            else:
                message = Message.dynamic(exception, "exception-instance")
        self._add("raise", line, end_line, exception, message, cause, reraise, reraised, (), at)

    def assert_site(
        self, line: int, end_line: int, test: str, msg: Expr | None, *, at: Position
    ) -> None:
        """An ``assert`` statement at position ``at``; its failing test is its last guard."""
        message = Message.none() if msg is None else render(msg, self.locals(at))
        guard = Guard("assert", test, True, line)
        self._add(
            "assert", line, end_line, "AssertionError", message, None, False, (), (guard,), at
        )

    def is_helper_call(self, name: str) -> bool:
        """Whether a call of ``name`` may be a call of a raising helper."""
        return self.helpers is not None and any(not h.formats for h in self.helpers.get(name, ()))

    def formatted(self, call: Expr, at: Position) -> Message | None:
        """The message of ``Exc(...)`` when ``Exc`` names an exception class
        of the table that formats its text from its arguments (see
        :mod:`miner.extract.formats`) and the call binds them; else None."""
        func = call.func
        if not self.helpers or func is None or func.kind not in ("name", "attribute"):
            return None
        form: CallForm = "name" if func.kind == "name" else "attribute"
        shapes = [(arg.keyword, arg.star) for arg in call.args]
        scope = self.locals(at)
        for helper, bound in bound_helpers(self.helpers, func.name, form, shapes, formats=True):

            def argument(param: str, bound: dict[str, int] = bound) -> tuple[Message, str] | None:
                index = bound.get(param)
                if index is None:
                    return None
                value = call.args[index].value
                return render(value, scope), value.source

            message = helper.message(argument)
            if message.kind != "dynamic":
                return message
        return None

    def call_site(self, line: int, end_line: int, call: Expr, *, at: Position) -> None:
        """A call statement at position ``at``: a ``call`` site for each
        raising helper it binds (see :mod:`miner.extract.helpers`)."""
        func = call.func
        if func is None or func.kind not in ("name", "attribute"):
            return
        form: CallForm = "name" if func.kind == "name" else "attribute"
        shapes = [(arg.keyword, arg.star) for arg in call.args]
        scope = self.locals(at)
        for helper, bound in bound_helpers(self.helpers, func.name, form, shapes):

            def argument(param: str, bound: dict[str, int] = bound) -> tuple[Message, str] | None:
                index = bound.get(param)
                if index is None:
                    return None
                value = call.args[index].value
                return render(value, scope), value.source

            def source(param: str, bound: dict[str, int] = bound) -> str | None:
                index = bound.get(param)
                return None if index is None else call.args[index].value.source

            guards = helper.guards(source, line)
            message = helper.message(argument)
            self._add(
                "call",
                line,
                end_line,
                helper.exception,
                message,
                None,
                False,
                (),
                guards,
                at,
                via=helper.via,
            )

    def _add(
        self,
        kind: SiteKind,
        line: int,
        end_line: int,
        exception: str | None,
        message: Message,
        cause: str | None,
        reraise: bool,
        reraised: tuple[str, ...],
        extra_guards: tuple[Guard, ...],
        at: Position,
        *,
        via: tuple[str, ...] = (),
    ) -> None:
        frame = self.frame
        exits, alone = self._path_facts(at)
        self.sites.append(
            Site(
                path=self.path,
                line=line,
                end_line=end_line,
                kind=kind,
                exception=exception,
                message=message.template,
                message_parts=message.parts,
                message_kind=message.kind,
                message_style=message.style,
                message_source=message.source,
                message_reason=message.reason if message.kind == "dynamic" else None,
                cause=cause,
                reraise=reraise,
                reraised=reraised,
                scope=frame.qualname,
                guards=tuple(frame.guards) + extra_guards,
                excerpt=excerpt_for(self.lines, line),
                parser=self.parser,
                function_doc=frame.function_doc if frame.kind == "function" else None,
                class_doc=frame.class_doc,
                exits=exits,
                body_only=alone,
                abstract=frame.kind == "function" and frame.is_abstract(),
                via=via,
            )
        )
