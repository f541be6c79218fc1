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
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from miner.extract.template import Message, TemplateBuilder, format_template, percent_template
from miner.extract.text import excerpt_for
from miner.model import Guard, MessageStyle, Parser, Site, SiteKind

#: Keywords of exception constructors that carry the message when there is no
#: positional argument (web frameworks' HTTP exceptions use ``detail=``).
MESSAGE_KEYWORDS = ("detail", "message", "msg")

ExprKind = Literal[
    "strings", "binop", "call", "name", "attribute", "tuple", "dict", "starred", "other"
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
    * ``tuple``: ``elements``. ``dict``: ``items`` (key is None for ``**d``).
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


BindingKind = Literal["value", "class", "other"]


@dataclass(frozen=True, slots=True)
class Binding:
    """One statement that binds a name in a function's own scope.

    ``value``: a plain assignment to the bare name (``x = ...``, ``x: T = ...``;
    ``value`` is None for ``x: T`` alone). ``class``: a
    ``class`` statement or an import, which leave the name's meaning to its
    spelling. ``other``: anything else (parameters, loop and ``with`` targets,
    ``except ... as``, ``+=``, walrus, tuple targets, ``global``, ``del``, match
    captures, nested ``def``).
    """

    kind: BindingKind
    value: Callable[[], Expr] | None = None
    """For ``value``: gives the assigned value (translated on first use)."""


Bindings = Mapping[str, Sequence[Binding]]
#: The binding of every statement that is neither a plain assignment nor a class.
OTHER = Binding("other")


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


def _percent(expr: Expr) -> TemplateBuilder | None:
    fmt = literal_text(expr.left)
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


def _format(call: Expr) -> TemplateBuilder | None:
    assert call.func is not None
    fmt = literal_text(call.func.value)
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


def _concat(expr: Expr) -> TemplateBuilder | None:
    builder = TemplateBuilder()
    has_string = False
    for operand in _flatten_add(expr):
        rendered = template_of(operand)
        if rendered is not None:
            has_string = True
            builder.extend(rendered[0])
        else:
            builder.field(operand.source)
    return builder if has_string else None


def template_of(expr: Expr) -> tuple[TemplateBuilder, MessageStyle] | None:
    """The template of a string-building expression: a literal or f-string
    (implicit concatenations joined), ``fmt % args``, ``a + b`` with at least one
    string operand, ``fmt.format(...)``; None for anything else."""
    if expr.kind == "strings":
        return _strings(expr)
    built: TemplateBuilder | None = None
    style: MessageStyle = "percent"
    if expr.kind == "binop" and expr.op == "%":
        built = _percent(expr)
    elif expr.kind == "binop" and expr.op == "+":
        built, style = _concat(expr), "concat"
    elif (
        expr.kind == "call"
        and expr.func is not None
        and expr.func.kind == "attribute"
        and expr.func.name == "format"
    ):
        built, style = _format(expr), "format"
    return None if built is None else (built, style)


def render(expr: Expr, resolve: Callable[[str], Expr | None] | None = None) -> Message:
    """The message an expression evaluates to, as far as the source tells.

    ``resolve(name)`` gives the value of a local variable assigned exactly once
    (see :func:`single_assignment`); a name resolved that way keeps its own
    source as ``message_source``.
    """
    rendered = template_of(expr)
    if rendered is not None:
        return Message.of(rendered[0], rendered[1], expr.source)
    if resolve is not None and expr.kind == "name":
        value = resolve(expr.name)
        if value is not None:
            resolved = render(value)
            if resolved.kind in ("literal", "template"):
                return Message(
                    kind=resolved.kind,
                    style=resolved.style,
                    template=resolved.template,
                    parts=resolved.parts,
                    source=expr.source,
                )
    return Message.dynamic(expr.source)


def call_message(call: Expr, resolve: Callable[[str], Expr | None] | None) -> Message:
    """The message of ``Exc(...)``: the first positional argument, else a
    ``detail=`` / ``message=`` / ``msg=`` keyword; a ``*args`` / ``**kwargs``
    reached first makes it dynamic."""
    for arg in call.args:
        if arg.keyword is None:
            if arg.star:
                return Message.dynamic(arg.value.source)
            return render(arg.value, resolve)
    for wanted in MESSAGE_KEYWORDS:
        for arg in call.args:
            if arg.keyword == wanted:
                return render(arg.value, resolve)
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
    _bound: Bindings | None = None

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
    """

    def __init__(
        self,
        *,
        path: str,
        lines: list[str],
        parser: Parser,
        context: UnitContext | None = None,
    ) -> None:
        ctx = context or UnitContext()
        self.path = path
        self.lines = lines
        self.parser: Parser = parser
        self.frames = [
            Frame(
                kind=ctx.kind,
                qualname=ctx.qualname or "<module>",
                class_doc=ctx.class_doc,
                function_doc=ctx.function_doc,
            )
        ]
        self.sites: list[Site] = []

    @property
    def frame(self) -> Frame:
        return self.frames[-1]

    # scopes
    def enter_function(self, name: str, doc: str | None, bindings: Callable[[], Bindings]) -> None:
        parent = self.frame
        self.frames.append(
            Frame(
                kind="function",
                qualname=child_qualname(parent.kind, parent.qualname, name),
                class_doc=parent.class_doc,
                function_doc=doc_summary(doc),
                bindings=bindings,
            )
        )

    def enter_class(self, name: str, doc: str | None) -> None:
        parent = self.frame
        self.frames.append(
            Frame(
                kind="class",
                qualname=child_qualname(parent.kind, parent.qualname, name),
                class_doc=doc_summary(doc),
            )
        )

    def leave_scope(self) -> None:
        self.frames.pop()

    # guards
    def push(
        self,
        kind: str,
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

    def enter_handler(self, kind: str, type_expr: Expr | None, name: str | None, line: int) -> None:
        """An ``except`` / ``except*`` body: a guard (``test`` holds the caught
        types as written, ``name`` the bound name) and a handler for re-raises."""
        test = type_expr.source if type_expr is not None else ""
        self.push(kind, test, False, line, name=name)
        self.frame.handlers.append((handler_types(type_expr), name))

    def leave_handler(self) -> None:
        self.pop()
        self.frame.handlers.pop()

    # names
    def resolve(self, name: str) -> Expr | None:
        """The single assigned value of a local variable (see :func:`single_assignment`)."""
        if self.frame.kind != "function":
            return None
        return single_assignment(self.frame.bound(), name)

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
            if bindings is not None and expr.name in bindings:
                if not all(b.kind == "class" for b in bindings[expr.name]):
                    return True
            if self.caught(expr) is not None:
                return True
            return not expr.name[:1].isupper()
        last = attr_name(expr) or ""
        return not last[:1].isupper()

    # sites
    def raise_site(self, line: int, end_line: int, exc: Expr | None, cause: str | None) -> None:
        """A ``raise`` statement: classify what is raised and add the site."""
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
                message = call_message(exc, self.resolve)
        elif exc.kind in ("name", "attribute") and not self.is_variable(exc):
            exception, message = exc.source, Message.none()
        else:
            # A variable holding an exception instance: the caught one or another.
            exception = exc.source
            caught = self.caught(exc)
            if caught is not None:
                reraise, reraised, message = True, caught, Message.none()
            else:
                message = Message.dynamic(exception)
        self._add("raise", line, end_line, exception, message, cause, reraise, reraised, ())

    def assert_site(self, line: int, end_line: int, test: str, msg: Expr | None) -> None:
        """An ``assert`` statement; its failing test is its last guard."""
        message = Message.none() if msg is None else render(msg, self.resolve)
        guard = Guard("assert", test, True, line)
        self._add("assert", line, end_line, "AssertionError", message, None, False, (), (guard,))

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
    ) -> None:
        frame = self.frame
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
                cause=cause,
                reraise=reraise,
                reraised=reraised,
                scope=frame.qualname,
                guards=tuple(frame.guards) + extra_guards,
                excerpt=excerpt_for(self.lines, line),
                parser=self.parser,
                function_doc=frame.function_doc if frame.kind == "function" else None,
                class_doc=frame.class_doc,
            )
        )
