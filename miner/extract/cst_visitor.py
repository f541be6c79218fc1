"""The libcst walker that turns ``raise`` and ``assert`` statements into sites.

The walker only knows libcst's tree: it translates the expressions the rules
read into :class:`~miner.extract.rules.Expr` and reports scopes, guards and
sites to a :class:`~miner.extract.rules.SiteSink`, where the meaning is decided
(the same rules serve the standard-library fallback,
:mod:`miner.extract.ast_fallback`). Guard and placeholder text comes from
``Module.code_for_node`` (the exact source), made single-line by
:func:`~miner.extract.text.one_line`.

The walker runs on a whole module or on one unit cut out of it (a function,
or a top-level statement; see :mod:`miner.extract.runner`), with
``line_offset`` mapping the unit's lines back to the file's.
"""

from __future__ import annotations

import dataclasses
import functools
from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any

import libcst as cst
from libcst.metadata import CodeRange, PositionProvider

from miner.extract.helpers import HelperTable
from miner.extract.rules import (
    OTHER,
    PARAMETER,
    Arg,
    Binding,
    Bindings,
    Clause,
    Effect,
    EffectKind,
    Expr,
    FieldPart,
    Piece,
    PieceKind,
    Position,
    SiteSink,
    Stmt,
    StmtKind,
    StmtParts,
    UnitContext,
    abstract_class,
    case_test,
    for_test,
    with_item,
)
from miner.extract.template import unescape_text
from miner.extract.text import one_line
from miner.model import GuardKind, Site

_STRING_NODES = (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString, cst.TemplatedString)
_TEXT_PARTS = (cst.FormattedStringText, cst.TemplatedStringText)
#: Small statements that leave the block, by the kind the exit analysis knows them as.
_LEAVING: dict[type, StmtKind] = {
    cst.Return: "return",
    cst.Raise: "raise",
    cst.Continue: "continue",
    cst.Break: "break",
}

#: Names libcst parses as names and ``ast`` as constants.
_CONSTANTS = frozenset({"None", "True", "False"})

__all__ = ["SiteCollector", "UnitContext"]


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
        helpers: HelperTable | None = None,
    ) -> None:
        super().__init__()
        self.module = module
        self.offset = line_offset
        self.sink = SiteSink(
            path=path, lines=lines, parser="libcst", context=context, helpers=helpers
        )
        self.matches: list[str] = []

    @property
    def sites(self) -> list[Site]:
        return self.sink.sites

    # -- helpers -----------------------------------------------------------
    def _range(self, node: cst.CSTNode) -> CodeRange:
        return self.get_metadata(PositionProvider, node)

    def _line(self, node: cst.CSTNode) -> int:
        return self._range(node).start.line + self.offset

    def code(self, node: cst.CSTNode) -> str:
        """One-line source of ``node``; outer parentheses dropped unless a tuple,
        and always one pair around a generator expression (as ``ast`` places it,
        even as a call's sole argument: ``f(x for x in y)``)."""
        lpar = getattr(node, "lpar", None)
        if isinstance(node, cst.GeneratorExp):
            inner = node.with_changes(lpar=[], rpar=[])
            return "(" + one_line(self.module.code_for_node(inner)) + ")"
        if lpar and not isinstance(node, cst.Tuple):
            node = node.with_changes(lpar=[], rpar=[])  # type: ignore[attr-defined]
        return one_line(self.module.code_for_node(node))

    def expr(self, node: cst.CSTNode) -> Expr:
        """The parser-neutral view of an expression (see :class:`Expr`)."""
        return to_expr(node, self.code)

    def _text(self, node: cst.CSTNode) -> Callable[[], str]:
        """The one-line source of ``node``, computed when asked."""
        return lambda: self.code(node)

    def _at(self, node: cst.CSTNode) -> Position:
        start = self._range(node).start
        return (start.line, start.column)

    # -- statements, for the exit analysis -----------------------------------
    def stmts(self, body: Sequence[cst.CSTNode]) -> list[Stmt]:
        """The parser-neutral views of a block's statements (a line of simple
        statements gives one view per statement)."""
        out: list[Stmt] = []
        for node in body:
            if isinstance(node, cst.SimpleStatementLine):
                out.extend(self._small(small) for small in node.body)
            elif isinstance(node, cst.BaseSmallStatement):
                out.append(self._small(node))
            else:
                out.append(self._compound(node))
        return out

    def _block(self, block: cst.BaseSuite) -> list[Stmt]:
        return self.stmts(block.body)

    def _lines_of(self, node: cst.CSTNode) -> str:
        """The source lines a statement spans, whole (the file's lines)."""
        where = self._range(node)
        lines = self.sink.lines
        return "\n".join(lines[where.start.line + self.offset - 1 : where.end.line + self.offset])

    def _small(self, node: cst.CSTNode) -> Stmt:
        at = self._at(node)
        changed = functools.partial(stores, node)
        text = functools.partial(self._lines_of, node)
        kind = _LEAVING.get(type(node))
        if kind is not None:
            return Stmt(kind, at, lambda: StmtParts(self._line(node)), changed, text=text)
        if isinstance(node, cst.Assert):
            return Stmt(
                "assert",
                at,
                lambda: StmtParts(self._line(node), test=self._text(node.test)),
                changed,
                text=text,
            )
        if isinstance(node, cst.Pass) or (isinstance(node, cst.Expr) and _inert(node.value)):
            return Stmt("trivial", at, None, changed, text=text)
        return Stmt("other", at, None, changed, effect=lambda: self._effect(node), text=text)

    def _effect(self, node: cst.CSTNode) -> Effect | None:
        """What a simple statement does to a local name (see
        :class:`~miner.extract.rules.Effect`), or None."""
        if isinstance(node, cst.Assign):
            if len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name):
                return Effect("assign", node.targets[0].target.value, self.expr(node.value))
        elif isinstance(node, cst.AnnAssign):
            if isinstance(node.target, cst.Name) and node.value is not None:
                return Effect("assign", node.target.value, self.expr(node.value))
        elif isinstance(node, cst.AugAssign):
            if isinstance(node.operator, cst.AddAssign) and isinstance(node.target, cst.Name):
                return Effect("augadd", node.target.value, self.expr(node.value))
        elif isinstance(node, cst.Expr) and isinstance(node.value, cst.Call):
            call = node.value
            func = call.func
            if (
                isinstance(func, cst.Attribute)
                and isinstance(func.value, cst.Name)
                and func.attr.value in ("append", "extend")
                and len(call.args) == 1
                and call.args[0].keyword is None
                and not call.args[0].star
            ):
                kind: EffectKind = "append" if func.attr.value == "append" else "extend"
                return Effect(kind, func.value.value, self.expr(call.args[0].value))
        return None

    def _compound(self, node: cst.CSTNode) -> Stmt:
        at = self._at(node)
        changed = functools.partial(stores, node)
        text = functools.partial(self._lines_of, node)
        if isinstance(node, cst.If):
            return Stmt("if", at, lambda: self._if_parts(node), changed, text=text)
        if isinstance(node, cst.While):
            return Stmt(
                "while",
                at,
                lambda: StmtParts(
                    self._line(node),
                    test=self._text(node.test),
                    body=self._block(node.body),
                    orelse=self._else(node.orelse),
                ),
                changed,
                text=text,
            )
        if isinstance(node, cst.For):
            return Stmt(
                "for",
                at,
                lambda: StmtParts(
                    self._line(node), body=self._block(node.body), orelse=self._else(node.orelse)
                ),
                changed,
                text=text,
            )
        if isinstance(node, (cst.Try, cst.TryStar)):
            return Stmt("try", at, lambda: self._try_parts(node), changed, text=text)
        if isinstance(node, cst.Match):
            return Stmt("match", at, lambda: self._match_parts(node), changed, text=text)
        if isinstance(node, cst.With):
            return Stmt("with", at, None, changed, text=text)
        if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            return Stmt("scope", at, None, changed, text=text)
        return Stmt("other", at, None, changed, text=text)

    def _else(self, orelse: cst.Else | None) -> list[Stmt] | None:
        return None if orelse is None else self._block(orelse.body)

    def _if_parts(self, node: cst.If) -> StmtParts:
        orelse: list[Stmt] | None
        if isinstance(node.orelse, cst.If):
            orelse = [self._compound(node.orelse)]
        else:
            orelse = self._else(node.orelse)
        return StmtParts(
            self._line(node),
            test=self._text(node.test),
            body=self._block(node.body),
            orelse=orelse,
        )

    def _try_parts(self, node: cst.Try | cst.TryStar) -> StmtParts:
        clauses = []
        for handler in node.handlers:
            kind = handler.type
            test = self._text(kind) if kind is not None else None
            clauses.append(Clause(self._line(handler), self._block(handler.body), test=test))
        final = node.finalbody
        return StmtParts(
            self._line(node),
            body=self._block(node.body),
            orelse=self._else(node.orelse),
            clauses=clauses,
            final=self._block(final.body) if final is not None else (),
        )

    def _match_parts(self, node: cst.Match) -> StmtParts:
        clauses = []
        for case in node.cases:
            pattern, guard = case.pattern, case.guard
            clauses.append(
                Clause(
                    self._line(case),
                    self._block(case.body),
                    test=self._text(pattern),
                    guard=self._text(guard) if guard is not None else None,
                    irrefutable=guard is None
                    and isinstance(pattern, cst.MatchAs)
                    and pattern.pattern is None,
                )
            )
        return StmtParts(self._line(node), clauses=clauses, subject=self._text(node.subject))

    # -- blocks ------------------------------------------------------------
    def visit_Module(self, node: cst.Module) -> None:
        self.sink.enter_block(lambda: self.stmts(node.body))

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        self.sink.enter_block(lambda: self.stmts(node.body))

    def leave_IndentedBlock(self, original_node: cst.IndentedBlock) -> None:
        self.sink.leave_block()

    # -- scopes ------------------------------------------------------------
    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.sink.enter_function(
            node.name.value,
            node.get_docstring(clean=True),
            lambda: self._bindings(node),
            lambda: [_last_name(d.decorator) for d in node.decorators],
        )

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self.sink.leave_scope()

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        def interface() -> bool:
            metaclass = None
            for arg in node.keywords:
                if arg.keyword is not None and arg.keyword.value == "metaclass":
                    metaclass = _last_name(arg.value)
            return abstract_class([_last_name(b.value) for b in node.bases], metaclass)

        self.sink.enter_class(node.name.value, node.get_docstring(clean=True), interface)

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self.sink.leave_scope()

    def _bindings(self, node: cst.FunctionDef) -> Bindings:
        finder = _BindingFinder(node, self.expr)
        node.visit(finder)
        return finder.found

    # -- guards: if / elif / else ------------------------------------------
    def visit_If_body(self, node: cst.If) -> None:
        self.sink.push("if", self.code(node.test), False, self._line(node))

    def leave_If_body(self, node: cst.If) -> None:
        self.sink.pop()

    def visit_If_orelse(self, node: cst.If) -> None:
        if node.orelse is not None:
            self.sink.push("if", self.code(node.test), True, self._line(node))

    def leave_If_orelse(self, node: cst.If) -> None:
        if node.orelse is not None:
            self.sink.pop()

    # -- loops -------------------------------------------------------------
    def visit_While_body(self, node: cst.While) -> None:
        self.sink.push("while", self.code(node.test), False, self._line(node))

    def leave_While_body(self, node: cst.While) -> None:
        self.sink.pop()

    def visit_While_orelse(self, node: cst.While) -> None:
        if node.orelse is not None:
            self.sink.push("while-else", self.code(node.test), False, self._line(node.orelse))

    def leave_While_orelse(self, node: cst.While) -> None:
        if node.orelse is not None:
            self.sink.pop()

    def _for_test(self, node: cst.For) -> str:
        return for_test(self.code(node.target), self.code(node.iter))

    def visit_For_body(self, node: cst.For) -> None:
        kind: GuardKind = "async for" if node.asynchronous else "for"
        self.sink.push(kind, self._for_test(node), False, self._line(node))

    def leave_For_body(self, node: cst.For) -> None:
        self.sink.pop()

    def visit_For_orelse(self, node: cst.For) -> None:
        if node.orelse is not None:
            self.sink.push("for-else", self._for_test(node), False, self._line(node.orelse))

    def leave_For_orelse(self, node: cst.For) -> None:
        if node.orelse is not None:
            self.sink.pop()

    # -- with --------------------------------------------------------------
    def visit_With_body(self, node: cst.With) -> None:
        items = [
            with_item(
                self.code(item.item),
                self.code(item.asname.name) if item.asname is not None else None,
            )
            for item in node.items
        ]
        kind: GuardKind = "async with" if node.asynchronous else "with"
        self.sink.push(kind, ", ".join(items), False, self._line(node))

    def leave_With_body(self, node: cst.With) -> None:
        self.sink.pop()

    # -- try / except / else / finally -------------------------------------
    def visit_Try_body(self, node: cst.Try) -> None:
        self.sink.push("try", "", False, self._line(node))

    def leave_Try_body(self, node: cst.Try) -> None:
        self.sink.pop()

    def visit_TryStar_body(self, node: cst.TryStar) -> None:
        self.sink.push("try", "", False, self._line(node))

    def leave_TryStar_body(self, node: cst.TryStar) -> None:
        self.sink.pop()

    def _enter_handler(
        self, node: cst.ExceptHandler | cst.ExceptStarHandler, kind: GuardKind
    ) -> None:
        type_expr = self.expr(node.type) if node.type is not None else None
        name = self.code(node.name.name) if node.name is not None else None
        self.sink.enter_handler(kind, type_expr, name, self._line(node))

    def visit_ExceptHandler_body(self, node: cst.ExceptHandler) -> None:
        self._enter_handler(node, "except")

    def leave_ExceptHandler_body(self, node: cst.ExceptHandler) -> None:
        self.sink.leave_handler()

    def visit_ExceptStarHandler_body(self, node: cst.ExceptStarHandler) -> None:
        self._enter_handler(node, "except*")

    def leave_ExceptStarHandler_body(self, node: cst.ExceptStarHandler) -> None:
        self.sink.leave_handler()

    def _try_orelse(self, node: cst.Try | cst.TryStar) -> None:
        if node.orelse is not None:
            self.sink.push("try-else", "", False, self._line(node.orelse))

    def _try_final(self, node: cst.Try | cst.TryStar) -> None:
        if node.finalbody is not None:
            self.sink.push("finally", "", False, self._line(node.finalbody))

    def _try_orelse_leave(self, node: cst.Try | cst.TryStar) -> None:
        if node.orelse is not None:
            self.sink.pop()

    def _try_final_leave(self, node: cst.Try | cst.TryStar) -> None:
        if node.finalbody is not None:
            self.sink.pop()

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
        guard = self.code(node.guard) if node.guard is not None else None
        test = case_test(self.code(node.pattern), guard)
        subject = self.matches[-1] if self.matches else ""
        self.sink.push("case", test, False, self._line(node), subject=subject)

    def leave_MatchCase_body(self, node: cst.MatchCase) -> None:
        self.sink.pop()

    # -- pruning -----------------------------------------------------------
    def _holds_site(self, body: Sequence[cst.BaseSmallStatement]) -> bool:
        return any(
            isinstance(stmt, (cst.Raise, cst.Assert)) or self._helper_call(stmt) is not None
            for stmt in body
        )

    def _helper_call(self, stmt: cst.CSTNode) -> cst.Call | None:
        """The call of a statement ``helper(...)`` when ``helper`` may be a
        raising helper (see :meth:`SiteSink.is_helper_call`)."""
        if not self.sink.helpers or not isinstance(stmt, cst.Expr):
            return None
        call = stmt.value
        if not isinstance(call, cst.Call):
            return None
        func = call.func
        name = (
            func.value
            if isinstance(func, cst.Name)
            else func.attr.value
            if isinstance(func, cst.Attribute)
            else None
        )
        return call if name is not None and self.sink.is_helper_call(name) else None

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> bool:
        """Enter a line of simple statements only when it holds a site: scopes
        and guards are compound statements, so nothing else inside matters here."""
        return self._holds_site(node.body)

    def visit_SimpleStatementSuite(self, node: cst.SimpleStatementSuite) -> bool:
        """A block on the line of its statement (``if x: raise E``): entered
        only when it holds a site, like a line of simple statements."""
        if not self._holds_site(node.body):
            return False
        self.sink.enter_block(lambda: self.stmts(node.body))
        return True

    def leave_SimpleStatementSuite(self, original_node: cst.SimpleStatementSuite) -> None:
        if self._holds_site(original_node.body):
            self.sink.leave_block()

    # -- sites -------------------------------------------------------------
    def visit_Raise(self, node: cst.Raise) -> None:
        where = self._range(node)
        exc = self.expr(node.exc) if node.exc is not None else None
        cause = self.code(node.cause.item) if node.cause is not None else None
        self.sink.raise_site(
            where.start.line + self.offset,
            where.end.line + self.offset,
            exc,
            cause,
            at=(where.start.line, where.start.column),
        )

    def visit_Expr(self, node: cst.Expr) -> None:
        call = self._helper_call(node)
        if call is None:
            return
        where = self._range(node)
        self.sink.call_site(
            where.start.line + self.offset,
            where.end.line + self.offset,
            self.expr(call),
            at=(where.start.line, where.start.column),
        )

    def visit_Assert(self, node: cst.Assert) -> None:
        where = self._range(node)
        msg = self.expr(node.msg) if node.msg is not None else None
        self.sink.assert_site(
            where.start.line + self.offset,
            where.end.line + self.offset,
            self.code(node.test),
            msg,
            at=(where.start.line, where.start.column),
        )


def _last_name(node: cst.CSTNode) -> str | None:
    """The last name of a dotted name (``abc.abstractmethod`` -> ``abstractmethod``),
    of its subscript (``typing.Protocol[T]`` -> ``Protocol``); None for anything else."""
    if isinstance(node, cst.Subscript):
        node = node.value
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return node.attr.value
    return None


def stores(node: cst.CSTNode) -> frozenset[str]:
    """What a statement may rebind or change: the same names and attribute
    paths as :func:`miner.extract.ast_fallback.stores` finds.

    The subtree is walked through the nodes' fields (:func:`_children`), not
    with ``node.visit``: libcst's visit rebuilds every node it passes (a
    sixth of a worker's time went to this function with it)."""
    finder = _Stores()
    handlers = _STORE_HANDLERS
    stack = [node]
    while stack:
        current = stack.pop()
        handler = handlers.get(type(current))
        if handler is not None:
            handler(finder, current)
        stack.extend(_children(current))
    return frozenset(finder.found)


#: Nodes that never hold a name a statement stores: whitespace, comments,
#: brackets, punctuation and operators (not walked into by :func:`stores`).
_LEAVES = (
    cst.BaseParenthesizableWhitespace,
    cst.TrailingWhitespace,
    cst.EmptyLine,
    cst.Newline,
    cst.Comment,
    cst.LeftParen,
    cst.RightParen,
    cst.LeftSquareBracket,
    cst.RightSquareBracket,
    cst.LeftCurlyBrace,
    cst.RightCurlyBrace,
    cst.Comma,
    cst.Dot,
    cst.Colon,
    cst.Semicolon,
    cst.AssignEqual,
    cst.BaseBinaryOp,
    cst.BaseBooleanOp,
    cst.BaseCompOp,
    cst.BaseUnaryOp,
    cst.BaseAugOp,
    cst.SimpleString,
    cst.Integer,
    cst.Float,
    cst.Imaginary,
)


_WALKED: dict[type, bool] = {}
_FIELDS: dict[type, tuple[str, ...]] = {}


def _walked(cls: type) -> bool:
    """Whether :func:`stores` walks into a node of class ``cls``."""
    found = _WALKED.get(cls)
    if found is None:
        found = _WALKED[cls] = issubclass(cls, cst.CSTNode) and not issubclass(cls, _LEAVES)
    return found


def _node_fields(cls: type) -> tuple[str, ...]:
    """The fields of a libcst node class (a libcst node is a dataclass whose
    children are among its fields)."""
    found = _FIELDS.get(cls)
    if found is None:
        found = _FIELDS[cls] = tuple(f.name for f in dataclasses.fields(cls))
    return found


def _children(node: cst.CSTNode) -> list[cst.CSTNode]:
    """The node's child nodes (the same nodes ``node.children`` lists, less
    the :data:`_LEAVES`), in no particular order."""
    out: list[cst.CSTNode] = []
    walked = _walked
    for name in _node_fields(type(node)):
        value = getattr(node, name)
        kind = type(value)
        if kind is tuple or kind is list:
            out.extend(v for v in value if walked(type(v)))
        elif walked(kind):
            out.append(value)
    return out


def _store_path(node: cst.CSTNode) -> str | None:
    """``a.b`` for ``a.b = ...``, ``x`` for ``x[i] = ...`` and ``x[i].a = ...``."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        parts = [node.attr.value]
        head: cst.CSTNode = node.value
        while isinstance(head, cst.Attribute):
            parts.append(head.attr.value)
            head = head.value
        if isinstance(head, cst.Name):
            return ".".join([head.value, *reversed(parts)])
        return _store_path(node.value)
    if isinstance(node, cst.Subscript):
        return _store_path(node.value)
    return None


class _Stores:
    """Collects :func:`stores` (nested scopes and expressions included): its
    ``visit_<Node>`` methods are called by :func:`stores` for each node of
    that libcst class."""

    def __init__(self) -> None:
        self.found: set[str] = set()

    def _target(self, node: cst.CSTNode) -> None:
        if isinstance(node, (cst.Tuple, cst.List)):
            for element in node.elements:
                self._target(element.value)
        elif isinstance(node, (cst.StarredElement, cst.Element)):
            self._target(node.value)
        else:
            path = _store_path(node)
            if path is not None:
                self.found.add(path)

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self._target(target.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._target(node.target)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._target(node.target)

    def visit_For(self, node: cst.For) -> None:
        self._target(node.target)

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            self._target(node.asname.name)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._target(node.target)

    def visit_Del(self, node: cst.Del) -> None:
        self._target(node.target)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.found.add(node.name.value)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.found.add(node.name.value)

    def visit_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        if node.name is not None:
            self._target(node.name.name)

    def visit_ExceptStarHandler(self, node: cst.ExceptStarHandler) -> None:
        if node.name is not None:
            self._target(node.name.name)

    def visit_Import(self, node: cst.Import) -> None:
        for alias in node.names:
            if alias.asname is not None:
                self._target(alias.asname.name)
            else:
                head: cst.CSTNode = alias.name
                while isinstance(head, cst.Attribute):
                    head = head.value
                self._target(head)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if isinstance(node.names, cst.ImportStar):
            self.found.add("*")
            return
        for alias in node.names:
            self._target(alias.asname.name if alias.asname is not None else alias.name)

    def visit_Global(self, node: cst.Global) -> None:
        self.found.update(item.name.value for item in node.names)

    def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
        self.found.update(item.name.value for item in node.names)

    def visit_MatchAs(self, node: cst.MatchAs) -> None:
        if node.name is not None:
            self.found.add(node.name.value)

    def visit_MatchStar(self, node: cst.MatchStar) -> None:
        if node.name is not None:
            self.found.add(node.name.value)

    def visit_MatchMapping(self, node: cst.MatchMapping) -> None:
        if node.rest is not None:
            self.found.add(node.rest.value)


#: libcst node class -> the :class:`_Stores` method for it.
_STORE_HANDLERS: dict[type, Callable[[_Stores, Any], None]] = {
    getattr(cst, name[len("visit_") :]): method
    for name, method in vars(_Stores).items()
    if name.startswith("visit_")
}


def _inert(node: cst.BaseExpression) -> bool:
    """``...`` or a string constant (a docstring): a statement that does nothing."""
    if isinstance(node, (cst.Ellipsis, cst.SimpleString)):
        return True
    if isinstance(node, cst.ConcatenatedString):
        return _inert(node.left) and _inert(node.right)
    return False


# -- expressions -------------------------------------------------------------
def to_expr(node: cst.CSTNode, code: Callable[[cst.CSTNode], str]) -> Expr:
    """Translate a libcst expression into the rules' :class:`Expr`."""

    def text() -> str:
        return code(node)

    if isinstance(node, _STRING_NODES):
        return Expr("strings", text, pieces=tuple(_pieces(node, code)))
    if isinstance(node, cst.BinaryOperation):
        op = node.operator
        symbol = "%" if isinstance(op, cst.Modulo) else "+" if isinstance(op, cst.Add) else "?"
        return Expr(
            "binop", text, op=symbol, left=to_expr(node.left, code), right=to_expr(node.right, code)
        )
    if isinstance(node, cst.Call):
        args = tuple(
            Arg(
                to_expr(arg.value, code),
                keyword=arg.keyword.value if arg.keyword is not None else None,
                star=arg.star,
            )
            for arg in node.args
        )
        return Expr("call", text, func=to_expr(node.func, code), args=args)
    if isinstance(node, cst.Name):
        if node.value in _CONSTANTS:
            return Expr("other", text)  # a constant to ``ast``, not a name
        return Expr("name", text, name=node.value)
    if isinstance(node, cst.Attribute):
        return Expr("attribute", text, value=to_expr(node.value, code), name=node.attr.value)
    if isinstance(node, cst.Tuple):
        return Expr("tuple", text, elements=tuple(to_expr(el, code) for el in node.elements))
    if isinstance(node, cst.List):
        return Expr("list", text, elements=tuple(to_expr(el, code) for el in node.elements))
    if isinstance(node, cst.Subscript):
        return Expr("subscript", text, value=to_expr(node.value, code))
    if isinstance(node, cst.Element):
        return to_expr(node.value, code)
    if isinstance(node, cst.StarredElement):
        return Expr("starred", lambda: code(node.value))
    if isinstance(node, cst.Dict):
        items = tuple(
            (to_expr(el.key, code), to_expr(el.value, code))
            if isinstance(el, cst.DictElement)
            else (None, to_expr(el.value, code))
            for el in node.elements
        )
        return Expr("dict", text, items=items)
    return Expr("other", text)


def _pieces(node: cst.CSTNode, code: Callable[[cst.CSTNode], str]) -> list[Piece]:
    """The literals of a string or implicit concatenation, in order."""
    pieces: list[Piece] = []
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, cst.ConcatenatedString):
            stack.append(item.right)
            stack.append(item.left)
        elif isinstance(item, cst.SimpleString):
            prefix = item.prefix.lower()
            is_bytes = "b" in prefix
            value = unescape_text(item.raw_value, is_raw="r" in prefix, is_bytes=is_bytes)
            pieces.append(Piece("bytes" if is_bytes else "str", (value,)))
        else:
            assert isinstance(item, (cst.FormattedString, cst.TemplatedString))
            kind: PieceKind = "t" if isinstance(item, cst.TemplatedString) else "f"
            is_raw = "r" in item.prefix.lower()
            parts: list[str | FieldPart] = []
            for part in item.parts:
                if isinstance(part, _TEXT_PARTS):
                    raw = part.value.replace("{{", "{").replace("}}", "}")
                    parts.append(unescape_text(raw, is_raw=is_raw))
                else:
                    assert isinstance(
                        part, (cst.FormattedStringExpression, cst.TemplatedStringExpression)
                    )
                    spec = None
                    if part.format_spec is not None:
                        spec = _spec_text(part.format_spec, code)
                    parts.append(
                        FieldPart(
                            code(part.expression),
                            part.conversion,
                            spec,
                            debug=part.equal is not None,
                        )
                    )
            pieces.append(Piece(kind, tuple(parts)))
    return pieces


def _spec_text(parts: Sequence[cst.CSTNode], code: Callable[[cst.CSTNode], str]) -> str:
    out = []
    for part in parts:
        if isinstance(part, _TEXT_PARTS):
            out.append(part.value)
        else:
            assert isinstance(part, (cst.FormattedStringExpression, cst.TemplatedStringExpression))
            inner = "{" + code(part.expression)
            if part.conversion:
                inner += "!" + part.conversion
            if part.format_spec is not None:
                inner += ":" + _spec_text(part.format_spec, code)
            out.append(inner + "}")
    return "".join(out)


class _BindingFinder(cst.CSTVisitor):
    """Every binding of every name in one function's own scope.

    ``found[name]`` lists the statements that bind ``name`` (see
    :class:`~miner.extract.rules.Binding`). Nested functions, classes, lambdas
    and comprehensions are their own scopes and are not entered.
    """

    def __init__(self, root: cst.FunctionDef, expr: Callable[[cst.CSTNode], Expr]) -> None:
        super().__init__()
        self.root = root
        self.expr = expr
        self.found: dict[str, list[Binding]] = defaultdict(list)

    def _bind(self, target: cst.CSTNode, binding: Binding = OTHER) -> None:
        if isinstance(target, cst.Name):
            self.found[target.value].append(binding)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for el in target.elements:
                self._bind(el.value)
        elif isinstance(target, cst.StarredElement):
            self._bind(target.value)

    def _value(self, node: cst.BaseExpression) -> Binding:
        return Binding("value", lambda: self.expr(node))

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        if node is self.root:
            params = node.params
            every = [*params.posonly_params, *params.params, *params.kwonly_params]
            for extra in (params.star_arg, params.star_kwarg):
                if isinstance(extra, cst.Param):
                    every.append(extra)
            for param in every:
                self._bind(param.name, PARAMETER)
            return True
        self._bind(node.name)
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        self._bind(node.name, Binding("class"))
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
            if isinstance(target.target, cst.Name):
                self._bind(target.target, self._value(node.value))
            else:
                self._bind(target.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if isinstance(node.target, cst.Name):
            value = node.value
            self._bind(node.target, self._value(value) if value else Binding("value"))
        else:
            self._bind(node.target)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._bind(node.target)

    def visit_For(self, node: cst.For) -> None:
        self._bind(node.target)

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            self._bind(node.asname.name)

    def visit_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        if node.name is not None:
            self._bind(node.name.name)

    def visit_ExceptStarHandler(self, node: cst.ExceptStarHandler) -> None:
        if node.name is not None:
            self._bind(node.name.name)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._bind(node.target)

    def visit_Import(self, node: cst.Import) -> None:
        for alias in node.names:
            if alias.asname is not None:
                self._bind(alias.asname.name, Binding("class"))
            else:
                head = alias.name
                while isinstance(head, cst.Attribute):
                    head = head.value  # type: ignore[assignment]
                self._bind(head, Binding("class"))

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if isinstance(node.names, cst.ImportStar):
            return
        for alias in node.names:
            self._bind(alias.asname.name if alias.asname else alias.name, Binding("class"))

    def visit_Global(self, node: cst.Global) -> None:
        for item in node.names:
            self._bind(item.name)

    def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
        for item in node.names:
            self._bind(item.name)

    def visit_Del(self, node: cst.Del) -> None:
        self._bind(node.target)

    def visit_MatchAs(self, node: cst.MatchAs) -> None:
        if node.name is not None:
            self._bind(node.name)

    def visit_MatchStar(self, node: cst.MatchStar) -> None:
        if node.name is not None:
            self._bind(node.name)

    def visit_MatchMapping(self, node: cst.MatchMapping) -> None:
        if node.rest is not None:
            self._bind(node.rest)
