"""The libcst visitor that turns ``raise`` and ``assert`` statements into sites.

One traversal tracks three things with stacks it unwinds in ``leave_*``: the
``__qualname__`` scope, the guard path inside the current scope (it resets at
each ``def`` and ``class``), and the ``except`` handlers that enclose the
current point (for re-raises). Message templates are rendered from the nodes
(f-strings keep their expressions as written; see :mod:`miner.extract.template`).

The visitor runs on a whole module or on one unit cut out of it (a function,
or a top-level statement; see :mod:`miner.extract.runner`), with
``line_offset`` mapping the unit's lines back to the file's.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

import libcst as cst
from libcst.metadata import CodeRange, PositionProvider

from miner.extract.template import (
    Message,
    TemplateBuilder,
    format_template,
    percent_template,
    unescape_text,
)
from miner.extract.text import excerpt_for, one_line
from miner.model import Guard, MessageStyle, Site

_STRING_NODES = (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString, cst.TemplatedString)
#: Bindings that leave a name's meaning to its spelling (a class is Capitalised).
_CLASS_BINDERS = (cst.ClassDef, cst.Import, cst.ImportFrom)
#: Keywords of exception constructors that carry the message when there is no
#: positional argument (web frameworks' HTTP exceptions use ``detail=``).
MESSAGE_KEYWORDS = ("detail", "message", "msg")


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
class _Frame:
    kind: str
    qualname: str
    node: cst.CSTNode | None = None
    class_doc: str | None = None
    function_doc: str | None = None
    guards: list[Guard] = field(default_factory=list)
    handlers: list[tuple[tuple[str, ...], str | None]] = field(default_factory=list)


def doc_summary(doc: str | None) -> str | None:
    """The first paragraph of a cleaned docstring, on one line."""
    if not doc:
        return None
    first = doc.strip().split("\n\n", 1)[0]
    return " ".join(first.split()) or None


class SiteCollector(cst.CSTVisitor):
    """Collects one :class:`~miner.model.Site` per ``raise`` and ``assert``.

    Args:
        module: the parsed module (the whole file or one unit of it).
        path: repository-relative path, stored in each site.
        lines: the whole file's lines (for excerpts), ``\\n``-split.
        line_offset: added to positions in ``module`` to get file lines.
        context: the scope enclosing the unit (default: module level).
    """

    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(
        self,
        module: cst.Module,
        *,
        path: str,
        lines: list[str],
        line_offset: int = 0,
        context: UnitContext | None = None,
    ) -> None:
        super().__init__()
        self.module = module
        self.path = path
        self.lines = lines
        self.offset = line_offset
        ctx = context or UnitContext()
        top = _Frame(
            kind=ctx.kind,
            qualname=ctx.qualname or "<module>",
            class_doc=ctx.class_doc,
            function_doc=ctx.function_doc,
        )
        self.frames: list[_Frame] = [top]
        self.matches: list[str] = []
        self.sites: list[Site] = []
        self._bindings: dict[int, dict[str, list[cst.CSTNode]]] = {}

    # -- helpers -----------------------------------------------------------
    def _range(self, node: cst.CSTNode) -> CodeRange:
        return self.get_metadata(PositionProvider, node)

    def _line(self, node: cst.CSTNode) -> int:
        return self._range(node).start.line + self.offset

    def code(self, node: cst.CSTNode) -> str:
        """One-line source of ``node``; outer parentheses dropped unless a tuple."""
        lpar = getattr(node, "lpar", None)
        if lpar and not isinstance(node, cst.Tuple):
            node = node.with_changes(lpar=[], rpar=[])  # type: ignore[attr-defined]
        return one_line(self.module.code_for_node(node))

    @property
    def frame(self) -> _Frame:
        return self.frames[-1]

    def _push(self, guard: Guard) -> None:
        self.frame.guards.append(guard)

    def _pop(self) -> None:
        self.frame.guards.pop()

    # -- scopes ------------------------------------------------------------
    def _child_qualname(self, name: str) -> str:
        parent = self.frame
        if parent.kind == "module":
            return name
        if parent.kind == "class":
            return f"{parent.qualname}.{name}"
        return f"{parent.qualname}.<locals>.{name}"

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.frames.append(
            _Frame(
                kind="function",
                qualname=self._child_qualname(node.name.value),
                node=node,
                class_doc=self.frame.class_doc,
                function_doc=doc_summary(node.get_docstring(clean=True)),
            )
        )

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self.frames.pop()

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.frames.append(
            _Frame(
                kind="class",
                qualname=self._child_qualname(node.name.value),
                node=node,
                class_doc=doc_summary(node.get_docstring(clean=True)),
                function_doc=None,
            )
        )

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self.frames.pop()

    # -- guards: if / elif / else ------------------------------------------
    def visit_If_body(self, node: cst.If) -> None:
        self._push(Guard("if", self.code(node.test), False, self._line(node)))

    def leave_If_body(self, node: cst.If) -> None:
        self._pop()

    def visit_If_orelse(self, node: cst.If) -> None:
        if node.orelse is not None:
            self._push(Guard("if", self.code(node.test), True, self._line(node)))

    def leave_If_orelse(self, node: cst.If) -> None:
        if node.orelse is not None:
            self._pop()

    # -- loops -------------------------------------------------------------
    def visit_While_body(self, node: cst.While) -> None:
        self._push(Guard("while", self.code(node.test), False, self._line(node)))

    def leave_While_body(self, node: cst.While) -> None:
        self._pop()

    def visit_While_orelse(self, node: cst.While) -> None:
        if node.orelse is not None:
            self._push(Guard("while-else", self.code(node.test), False, self._line(node.orelse)))

    def leave_While_orelse(self, node: cst.While) -> None:
        if node.orelse is not None:
            self._pop()

    def _for_test(self, node: cst.For) -> str:
        return f"{self.code(node.target)} in {self.code(node.iter)}"

    def visit_For_body(self, node: cst.For) -> None:
        kind = "async for" if node.asynchronous else "for"
        self._push(Guard(kind, self._for_test(node), False, self._line(node)))

    def leave_For_body(self, node: cst.For) -> None:
        self._pop()

    def visit_For_orelse(self, node: cst.For) -> None:
        if node.orelse is not None:
            self._push(Guard("for-else", self._for_test(node), False, self._line(node.orelse)))

    def leave_For_orelse(self, node: cst.For) -> None:
        if node.orelse is not None:
            self._pop()

    # -- with --------------------------------------------------------------
    def visit_With_body(self, node: cst.With) -> None:
        items = []
        for item in node.items:
            text = self.code(item.item)
            if item.asname is not None:
                text += " as " + self.code(item.asname.name)
            items.append(text)
        kind = "async with" if node.asynchronous else "with"
        self._push(Guard(kind, ", ".join(items), False, self._line(node)))

    def leave_With_body(self, node: cst.With) -> None:
        self._pop()

    # -- try / except / else / finally -------------------------------------
    def visit_Try_body(self, node: cst.Try) -> None:
        self._push(Guard("try", "", False, self._line(node)))

    def leave_Try_body(self, node: cst.Try) -> None:
        self._pop()

    def visit_TryStar_body(self, node: cst.TryStar) -> None:
        self._push(Guard("try", "", False, self._line(node)))

    def leave_TryStar_body(self, node: cst.TryStar) -> None:
        self._pop()

    def _handler_types(self, type_node: cst.BaseExpression | None) -> tuple[str, ...]:
        if type_node is None:
            return ("BaseException",)
        if isinstance(type_node, cst.Tuple):
            return tuple(self.code(el.value) for el in type_node.elements)
        return (self.code(type_node),)

    def _enter_handler(self, node: cst.ExceptHandler | cst.ExceptStarHandler, kind: str) -> None:
        test = self.code(node.type) if node.type is not None else ""
        name = self.code(node.name.name) if node.name is not None else None
        self._push(Guard(kind, test, False, self._line(node), name=name))
        self.frame.handlers.append((self._handler_types(node.type), name))

    def _leave_handler(self) -> None:
        self._pop()
        self.frame.handlers.pop()

    def visit_ExceptHandler_body(self, node: cst.ExceptHandler) -> None:
        self._enter_handler(node, "except")

    def leave_ExceptHandler_body(self, node: cst.ExceptHandler) -> None:
        self._leave_handler()

    def visit_ExceptStarHandler_body(self, node: cst.ExceptStarHandler) -> None:
        self._enter_handler(node, "except*")

    def leave_ExceptStarHandler_body(self, node: cst.ExceptStarHandler) -> None:
        self._leave_handler()

    def _try_orelse(self, node: cst.Try | cst.TryStar) -> None:
        if node.orelse is not None:
            self._push(Guard("try-else", "", False, self._line(node.orelse)))

    def _try_orelse_leave(self, node: cst.Try | cst.TryStar) -> None:
        if node.orelse is not None:
            self._pop()

    def _try_final(self, node: cst.Try | cst.TryStar) -> None:
        if node.finalbody is not None:
            self._push(Guard("finally", "", False, self._line(node.finalbody)))

    def _try_final_leave(self, node: cst.Try | cst.TryStar) -> None:
        if node.finalbody is not None:
            self._pop()

    visit_Try_orelse = _try_orelse
    leave_Try_orelse = _try_orelse_leave
    visit_TryStar_orelse = _try_orelse
    leave_TryStar_orelse = _try_orelse_leave
    visit_Try_finalbody = _try_final
    leave_Try_finalbody = _try_final_leave
    visit_TryStar_finalbody = _try_final
    leave_TryStar_finalbody = _try_final_leave

    # -- match / case ------------------------------------------------------
    def visit_Match(self, node: cst.Match) -> None:
        self.matches.append(self.code(node.subject))

    def leave_Match(self, original_node: cst.Match) -> None:
        self.matches.pop()

    def visit_MatchCase_body(self, node: cst.MatchCase) -> None:
        test = self.code(node.pattern)
        if node.guard is not None:
            test += " if " + self.code(node.guard)
        subject = self.matches[-1] if self.matches else ""
        self._push(Guard("case", test, False, self._line(node), subject=subject))

    def leave_MatchCase_body(self, node: cst.MatchCase) -> None:
        self._pop()

    # -- pruning -----------------------------------------------------------
    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> bool:
        """Enter a line of simple statements only when it holds a site: scopes
        and guards are compound statements, so nothing else inside matters here."""
        return any(isinstance(stmt, (cst.Raise, cst.Assert)) for stmt in node.body)

    def visit_SimpleStatementSuite(self, node: cst.SimpleStatementSuite) -> bool:
        return any(isinstance(stmt, (cst.Raise, cst.Assert)) for stmt in node.body)

    # -- sites -------------------------------------------------------------
    def visit_Raise(self, node: cst.Raise) -> None:
        exc = node.exc
        cause = None
        if node.cause is not None:
            cause = self.code(node.cause.item)
        exception: str | None
        reraise = False
        reraised: tuple[str, ...] = ()
        if exc is None:
            exception = None
            message = Message.none()
            if self.frame.handlers:
                reraise = True
                reraised = self.frame.handlers[-1][0]
        elif isinstance(exc, cst.Call):
            exception = self.code(exc.func)
            caught = self._caught(exc.func)
            if caught is not None and _attr_name(exc.func) == "with_traceback":
                # ``raise err.with_traceback(tb)``: the caught exception again.
                exception = self.code(exc.func.value)  # type: ignore[attr-defined]
                reraise, reraised, message = True, caught, Message.none()
            else:
                message = self._call_message(exc)
        elif isinstance(exc, (cst.Name, cst.Attribute)) and not self._is_variable(exc):
            exception = self.code(exc)
            message = Message.none()
        else:
            # A variable holding an exception instance: the caught one or another.
            exception = self.code(exc)
            caught = self._caught(exc)
            if caught is not None:
                reraise, reraised = True, caught
                message = Message.none()
            else:
                message = Message.dynamic(exception)
        self._add_site(node, "raise", exception, message, cause, reraise, reraised, ())

    def visit_Assert(self, node: cst.Assert) -> None:
        test = self.code(node.test)
        message = Message.none() if node.msg is None else self.render(node.msg)
        guard = Guard("assert", test, True, self._line(node))
        self._add_site(node, "assert", "AssertionError", message, None, False, (), (guard,))

    def _add_site(
        self,
        node: cst.CSTNode,
        kind: str,
        exception: str | None,
        message: Message,
        cause: str | None,
        reraise: bool,
        reraised: tuple[str, ...],
        extra_guards: tuple[Guard, ...],
    ) -> None:
        where = self._range(node)
        line = where.start.line + self.offset
        frame = self.frame
        self.sites.append(
            Site(
                path=self.path,
                line=line,
                end_line=where.end.line + self.offset,
                kind=kind,  # type: ignore[arg-type]
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
                parser="libcst",
                function_doc=frame.function_doc if frame.kind == "function" else None,
                class_doc=frame.class_doc,
            )
        )

    # -- names and bindings ------------------------------------------------
    def _caught(self, node: cst.BaseExpression) -> tuple[str, ...] | None:
        """The handler types when ``node`` (or ``node.attr``) names a caught exception."""
        if isinstance(node, cst.Attribute):
            node = node.value
        if not isinstance(node, cst.Name):
            return None
        for types, name in reversed(self.frame.handlers):
            if name == node.value:
                return types
        return None

    def _function_bindings(self) -> dict[str, list[cst.CSTNode]] | None:
        node = self.frame.node
        if self.frame.kind != "function" or node is None:
            return None
        key = id(node)
        if key not in self._bindings:
            finder = _BindingFinder(node)
            node.visit(finder)
            self._bindings[key] = finder.found
        return self._bindings[key]

    def _is_variable(self, node: cst.BaseExpression) -> bool:
        """Whether a raised name holds an instance rather than naming a class."""
        if isinstance(node, cst.Name):
            bindings = self._function_bindings()
            if bindings is not None and node.value in bindings:
                owners = bindings[node.value]
                if not all(isinstance(b, _CLASS_BINDERS) for b in owners):
                    return True
            if self._caught(node) is not None:
                return True
            return not node.value[:1].isupper()
        last = _attr_name(node) or ""
        return not last[:1].isupper()

    # -- messages ----------------------------------------------------------
    def _call_message(self, call: cst.Call) -> Message:
        for arg in call.args:
            if arg.keyword is None:
                if arg.star:
                    return Message.dynamic(self.code(arg.value))
                return self.render(arg.value)
        for wanted in MESSAGE_KEYWORDS:
            for arg in call.args:
                if arg.keyword is not None and arg.keyword.value == wanted:
                    return self.render(arg.value)
        return Message.none()

    def render(self, expr: cst.BaseExpression, *, resolve_names: bool = True) -> Message:
        """The message an expression evaluates to, as far as the source tells."""
        source = self.code(expr)
        rendered = self._template(expr)
        if rendered is not None:
            builder, style = rendered
            return Message.of(builder, style, source)
        if resolve_names and isinstance(expr, cst.Name):
            value = self._single_assignment(expr.value)
            if value is not None:
                resolved = self.render(value, resolve_names=False)
                if resolved.kind in ("literal", "template"):
                    return Message(
                        kind=resolved.kind,
                        style=resolved.style,
                        template=resolved.template,
                        parts=resolved.parts,
                        source=source,
                    )
        return Message.dynamic(source)

    def _single_assignment(self, name: str) -> cst.BaseExpression | None:
        """The value of ``name`` when the current function binds it exactly once,
        by a plain assignment to the bare name; else None."""
        bindings = self._function_bindings()
        if not bindings:
            return None
        found = bindings.get(name, [])
        if len(found) != 1:
            return None
        owner = found[0]
        if isinstance(owner, cst.Assign):
            if any(
                isinstance(t.target, cst.Name) and t.target.value == name for t in owner.targets
            ):
                return owner.value
        if isinstance(owner, cst.AnnAssign) and isinstance(owner.target, cst.Name):
            return owner.value
        return None

    def _template(self, expr: cst.BaseExpression) -> tuple[TemplateBuilder, MessageStyle] | None:
        if isinstance(expr, _STRING_NODES):
            return self._strings(expr)
        if isinstance(expr, cst.BinaryOperation):
            if isinstance(expr.operator, cst.Modulo):
                return self._percent(expr)
            if isinstance(expr.operator, cst.Add):
                return self._concat(expr)
        if isinstance(expr, cst.Call) and _attr_name(expr.func) == "format":
            return self._format(expr)
        return None

    def _strings(self, expr: cst.BaseExpression) -> tuple[TemplateBuilder, MessageStyle] | None:
        pieces: list[cst.CSTNode] = []
        _flatten_concat(expr, pieces)
        builder = TemplateBuilder()
        kinds: set[str] = set()
        for piece in pieces:
            if isinstance(piece, cst.SimpleString):
                prefix = piece.prefix.lower()
                is_bytes = "b" in prefix
                kinds.add("bytes" if is_bytes else "literal")
                builder.text(
                    unescape_text(piece.raw_value, is_raw="r" in prefix, is_bytes=is_bytes)
                )
            elif isinstance(piece, (cst.FormattedString, cst.TemplatedString)):
                is_t = isinstance(piece, cst.TemplatedString)
                kinds.add("tstring" if is_t else "fstring")
                self._fstring_parts(piece, builder, is_raw="r" in piece.prefix.lower())
            else:
                return None
        if "tstring" in kinds:
            style: MessageStyle = "tstring"
        elif "fstring" in kinds:
            style = "fstring"
        elif kinds == {"bytes"}:
            style = "bytes"
        else:
            style = "literal"
        return builder, style

    def _fstring_parts(
        self,
        node: cst.FormattedString | cst.TemplatedString,
        builder: TemplateBuilder,
        *,
        is_raw: bool,
    ) -> None:
        for part in node.parts:
            if isinstance(part, (cst.FormattedStringText, cst.TemplatedStringText)):
                text = unescape_text(part.value, is_raw=is_raw)
                builder.text(text.replace("{{", "{").replace("}}", "}"))
            else:
                assert isinstance(
                    part, (cst.FormattedStringExpression, cst.TemplatedStringExpression)
                )
                spec = None
                if part.format_spec is not None:
                    spec = self._spec_text(part.format_spec)
                builder.field(
                    self.code(part.expression),
                    part.conversion,
                    spec,
                    debug=part.equal is not None,
                )

    def _spec_text(self, parts: object) -> str:
        out = []
        for part in parts:  # type: ignore[attr-defined]
            if isinstance(part, (cst.FormattedStringText, cst.TemplatedStringText)):
                out.append(part.value)
            else:
                inner = "{" + self.code(part.expression)
                if part.conversion:
                    inner += "!" + part.conversion
                if part.format_spec is not None:
                    inner += ":" + self._spec_text(part.format_spec)
                out.append(inner + "}")
        return "".join(out)

    def _literal_text(self, expr: cst.BaseExpression) -> str | None:
        """Runtime text of a plain (non-f) string literal or concatenation."""
        if not isinstance(expr, (cst.SimpleString, cst.ConcatenatedString)):
            return None
        rendered = self._strings(expr)
        if rendered is None or rendered[0].has_fields:
            return None
        return "".join(p.text or "" for p in rendered[0].parts)

    def _percent(self, expr: cst.BinaryOperation) -> tuple[TemplateBuilder, MessageStyle] | None:
        fmt = self._literal_text(expr.left)
        if fmt is None:
            return None
        right = expr.right
        positional: list[str] | None = None
        mapping: dict[str, str] | None = None
        if isinstance(right, cst.Tuple) and not any(
            isinstance(el, cst.StarredElement) for el in right.elements
        ):
            positional = [self.code(el.value) for el in right.elements]
        elif isinstance(right, cst.Dict):
            mapping = {}
            for el in right.elements:
                if isinstance(el, cst.DictElement):
                    key = self._literal_text(el.key)
                    if key is not None:
                        mapping[key] = self.code(el.value)
        builder = percent_template(fmt, positional, mapping, self.code(right))
        return None if builder is None else (builder, "percent")

    def _format(self, call: cst.Call) -> tuple[TemplateBuilder, MessageStyle] | None:
        fmt = self._literal_text(call.func.value)  # type: ignore[attr-defined]
        if fmt is None:
            return None
        positional: list[str] = []
        keywords: dict[str, str] = {}
        has_star = False
        for arg in call.args:
            if arg.star:
                has_star = True
            elif arg.keyword is not None:
                keywords[arg.keyword.value] = self.code(arg.value)
            else:
                positional.append(self.code(arg.value))
        builder = format_template(fmt, positional, keywords, has_star)
        return None if builder is None else (builder, "format")

    def _concat(self, expr: cst.BinaryOperation) -> tuple[TemplateBuilder, MessageStyle] | None:
        operands: list[cst.BaseExpression] = []
        _flatten_add(expr, operands)
        builder = TemplateBuilder()
        has_string = False
        for operand in operands:
            rendered = self._template(operand)
            if rendered is not None:
                has_string = True
                builder.extend(rendered[0])
            else:
                builder.field(self.code(operand))
        if not has_string:
            return None
        return builder, "concat"


def _attr_name(node: cst.BaseExpression) -> str | None:
    if isinstance(node, cst.Attribute):
        return node.attr.value
    if isinstance(node, cst.Name):
        return node.value
    return None


def _flatten_concat(node: cst.CSTNode, out: list[cst.CSTNode]) -> None:
    if isinstance(node, cst.ConcatenatedString):
        _flatten_concat(node.left, out)
        _flatten_concat(node.right, out)
    else:
        out.append(node)


def _flatten_add(node: cst.BaseExpression, out: list[cst.BaseExpression]) -> None:
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Add):
        _flatten_add(node.left, out)
        _flatten_add(node.right, out)
    else:
        out.append(node)


class _BindingFinder(cst.CSTVisitor):
    """Every binding of every name in one function's own scope.

    ``found[name]`` lists the nodes that bind ``name``: assignments, loop and
    ``with`` targets, ``except ... as``, walrus targets, imports, ``global`` /
    ``nonlocal`` / ``del``, match captures, parameters, nested ``def`` and
    ``class`` names. Nested functions, classes, lambdas and comprehensions are
    their own scopes and are not entered.
    """

    def __init__(self, root: cst.CSTNode) -> None:
        super().__init__()
        self.root = root
        self.found: dict[str, list[cst.CSTNode]] = defaultdict(list)

    def _bind(self, target: cst.CSTNode, owner: cst.CSTNode) -> None:
        if isinstance(target, cst.Name):
            self.found[target.value].append(owner)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for el in target.elements:
                self._bind(el.value, owner)
        elif isinstance(target, cst.StarredElement):
            self._bind(target.value, owner)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        if node is self.root:
            params = node.params
            every = [*params.posonly_params, *params.params, *params.kwonly_params]
            for extra in (params.star_arg, params.star_kwarg):
                if isinstance(extra, cst.Param):
                    every.append(extra)
            for param in every:
                self.found[param.name.value].append(param)
            return True
        self.found[node.name.value].append(node)
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        self.found[node.name.value].append(node)
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def visit_ListComp(self, node: cst.ListComp) -> bool:
        return False

    def visit_SetComp(self, node: cst.SetComp) -> bool:
        return False

    def visit_DictComp(self, node: cst.DictComp) -> bool:
        return False

    def visit_GeneratorExp(self, node: cst.GeneratorExp) -> bool:
        return False

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self._bind(target.target, node)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._bind(node.target, node)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._bind(node.target, node)

    def visit_For(self, node: cst.For) -> None:
        self._bind(node.target, node)

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            self._bind(node.asname.name, node)

    def visit_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        if node.name is not None:
            self._bind(node.name.name, node)

    def visit_ExceptStarHandler(self, node: cst.ExceptStarHandler) -> None:
        if node.name is not None:
            self._bind(node.name.name, node)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._bind(node.target, node)

    def visit_Import(self, node: cst.Import) -> None:
        for alias in node.names:
            if alias.asname is not None:
                self._bind(alias.asname.name, node)
            else:
                head = alias.name
                while isinstance(head, cst.Attribute):
                    head = head.value  # type: ignore[assignment]
                self._bind(head, node)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if isinstance(node.names, cst.ImportStar):
            return
        for alias in node.names:
            self._bind(alias.asname.name if alias.asname else alias.name, node)

    def visit_Global(self, node: cst.Global) -> None:
        for item in node.names:
            self._bind(item.name, node)

    def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
        for item in node.names:
            self._bind(item.name, node)

    def visit_Del(self, node: cst.Del) -> None:
        self._bind(node.target, node)

    def visit_MatchAs(self, node: cst.MatchAs) -> None:
        if node.name is not None:
            self._bind(node.name, node)

    def visit_MatchStar(self, node: cst.MatchStar) -> None:
        if node.name is not None:
            self._bind(node.name, node)

    def visit_MatchMapping(self, node: cst.MatchMapping) -> None:
        if node.rest is not None:
            self._bind(node.rest, node)
