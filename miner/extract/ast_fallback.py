"""The standard library's ``ast`` as a second extractor, for what libcst rejects.

libcst 1.9 rejects some valid Python (indentation mixing tabs and spaces
consistently, a raw f-string continued with a backslash-newline, a line holding
only a backslash) and cannot finish on some deep input. When the standard
library parses such a file, this walker mines it with the same rules as the
libcst visitor (:mod:`miner.extract.rules`), so the records have the same
fields and values; only ``parser`` says ``ast``.

What ``ast`` does not keep is read back from the source:

* Expression text comes from node positions (UTF-8 byte columns), made
  single-line by :func:`~miner.extract.text.one_line`. For replacement fields
  of f-strings the position is checked by re-parsing the text; when it does
  not match (older Pythons place some of them wrongly), ``ast.unparse`` gives
  the text instead.
* The self-documenting ``{expr=}`` form, which ``ast`` rewrites into literal
  text ``expr=`` and a ``!r`` conversion, is recognised from the source after
  the expression, and the conversion as written is kept.
* ``else`` / ``finally`` / ``case`` keyword lines, which ``ast`` does not record,
  are found by scanning the lines between the neighbouring blocks.

The walk is iterative (an explicit stack), so deep statement nesting such as
a long ``elif`` chain needs no recursion.
"""

from __future__ import annotations

import ast
import functools
import re
from collections import defaultdict
from collections.abc import Callable, Iterator

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
    ExprKind,
    FieldPart,
    Piece,
    SiteSink,
    Stmt,
    StmtKind,
    StmtParts,
    UnitContext,
    abstract_class,
    abstract_function,
    block_contributions,
    case_test,
    dotted_path,
    for_test,
    with_item,
)
from miner.extract.text import one_line
from miner.model import Guard, GuardKind, Site

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_DEBUG_TAIL = re.compile(r"[\s)]*=\s*(?:!([rsa]))?")
_TRY_STAR: tuple[type, ...] = (ast.TryStar,) if hasattr(ast, "TryStar") else ()
#: Statements that leave the block, by the kind the exit analysis knows them as.
_LEAVING: dict[type, StmtKind] = {
    ast.Return: "return",
    ast.Raise: "raise",
    ast.Continue: "continue",
    ast.Break: "break",
}


def collect_ast(
    tree: ast.Module,
    *,
    path: str,
    lines: list[str],
    context: UnitContext | None = None,
    helpers: HelperTable | None = None,
) -> list[Site]:
    """The sites of a module parsed by ``ast.parse`` from the text ``lines`` hold.

    Args:
        tree: the parsed module.
        path: repository-relative path, stored in each site.
        lines: the decoded file's lines (``\\n``-split, as parsed).
        context: the scope enclosing ``tree`` (default: module level).
        helpers: the raising helpers calls may name (``call`` sites).

    Returns:
        The sites in source order, with ``parser="ast"``.
    """
    walker = _Walker(path=path, lines=lines, context=context, helpers=helpers)
    walker.sink.enter_block(lambda: walker.stmts(tree.body))
    walker.walk(tree.body)
    return walker.sink.sites


def prefix_facts(
    body: list[ast.stmt], first: int, last: int, lines: list[str]
) -> tuple[tuple[Guard, ...], bool]:
    """For a unit made of ``body[first:last + 1]``: the exits of the statements
    of ``body`` before it (what the libcst walker of the whole block would have
    found there), and whether every statement of ``body`` outside the unit is
    trivial (a docstring, ``pass``, ``...``)."""
    walker = _Walker(path="", lines=lines, context=None)
    exits = tuple(block_contributions(walker.stmts(body[:first])))
    alone = all(_inert(stmt) for i, stmt in enumerate(body) if not first <= i <= last)
    return exits, alone


def block_statements(body: list[ast.stmt], lines: list[str]) -> list[Stmt]:
    """The parser-neutral views (:class:`~miner.extract.rules.Stmt`) of the
    statements of ``body``, parsed from the text ``lines`` hold, as the exit
    analysis reads them (for readers outside the extraction)."""
    return _Walker(path="", lines=lines, context=None).stmts(body)


def expression(node: ast.expr, lines: list[str]) -> Expr:
    """The rules' view (:class:`~miner.extract.rules.Expr`) of an expression
    parsed from the text ``lines`` hold (for readers outside the extraction)."""
    return to_expr(node, _Walker(path="", lines=lines, context=None))


def last_name(node: ast.AST) -> str | None:
    """The last name of a dotted name (``abc.abstractmethod`` -> ``abstractmethod``),
    of its subscript (``typing.Protocol[T]`` -> ``Protocol``); None for anything else."""
    if isinstance(node, ast.Subscript):
        node = node.value
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def function_is_abstract(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Decorated ``abstractmethod`` and the like (see
    :func:`~miner.extract.rules.abstract_function`)."""
    return abstract_function([last_name(d) for d in node.decorator_list])


def class_is_interface(node: ast.ClassDef) -> bool:
    """Bases or metaclass declaring an interface (see
    :func:`~miner.extract.rules.abstract_class`)."""
    metaclass = None
    for keyword in node.keywords:
        if keyword.arg == "metaclass":
            metaclass = last_name(keyword.value)
    return abstract_class([last_name(b) for b in node.bases], metaclass)


def stores(node: ast.AST) -> frozenset[str]:
    """What a statement may rebind or change (see
    :attr:`~miner.extract.rules.Stmt.stores`): every name and attribute path
    it assigns, augments, deletes or binds (targets of ``for``, ``with``,
    ``except``, ``:=``, comprehensions, imports, ``def``, ``class``, ``global``,
    match captures), nested scopes included, but not the targets of
    comprehensions (their own scope); ``*`` for a star import."""
    out: set[str] = set()
    stack: list[ast.AST] = [node]
    while stack:
        sub = stack.pop()
        if isinstance(sub, ast.comprehension):
            stack.extend([sub.iter, *sub.ifs])
            continue
        stack.extend(ast.iter_child_nodes(sub))
        if isinstance(sub, (ast.Name, ast.Attribute, ast.Subscript)):
            if isinstance(sub.ctx, (ast.Store, ast.Del)):
                path = _store_path(sub)
                if path is not None:
                    out.add(path)
        elif isinstance(sub, (*_FUNCTIONS, ast.ClassDef)):
            out.add(sub.name)
        elif isinstance(sub, ast.ExceptHandler):
            if sub.name:
                out.add(sub.name)
        elif isinstance(sub, ast.alias):
            out.add(sub.asname or sub.name.split(".")[0])
        elif isinstance(sub, (ast.Global, ast.Nonlocal)):
            out.update(sub.names)
        elif isinstance(sub, (ast.MatchAs, ast.MatchStar)):
            if sub.name:
                out.add(sub.name)
        elif isinstance(sub, ast.MatchMapping) and sub.rest:
            out.add(sub.rest)
    return frozenset(out)


def _store_path(node: ast.AST) -> str | None:
    """The name or attribute path a target changes: ``a.b`` for ``a.b = ...``,
    ``x`` for ``x[i] = ...`` and ``x[i].a = ...``; None for ``f().a = ...``."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return dotted_path(node) or _store_path(node.value)
    if isinstance(node, ast.Subscript):
        return _store_path(node.value)
    return None


def _inert(node: ast.stmt) -> bool:
    """``pass``, ``...`` or a string constant (a docstring): a statement that does nothing."""
    if isinstance(node, ast.Pass):
        return True
    return (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and (node.value.value is Ellipsis or isinstance(node.value.value, (str, bytes)))
    )


class _Source:
    """Source text by ``ast`` positions (1-based lines, UTF-8 byte columns)."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self._encoded: dict[int, bytes] = {}

    def _bytes(self, line: int) -> bytes:
        data = self._encoded.get(line)
        if data is None:
            data = self.lines[line - 1].encode("utf-8", "surrogatepass")
            self._encoded[line] = data
        return data

    def _cut(self, line: int, start: int | None, end: int | None) -> str:
        text = self.lines[line - 1]
        if text.isascii():
            return text[start:end]
        return self._bytes(line)[start:end].decode("utf-8", "surrogatepass")

    def between(self, l1: int, c1: int, l2: int, c2: int) -> str:
        if l1 == l2:
            return self._cut(l1, c1, c2)
        middle = self.lines[l1 : l2 - 1]
        return "\n".join([self._cut(l1, c1, None), *middle, self._cut(l2, None, c2)])

    def segment(self, node: ast.AST) -> str:
        return self.between(
            node.lineno,  # type: ignore[attr-defined]
            node.col_offset,  # type: ignore[attr-defined]
            node.end_lineno,  # type: ignore[attr-defined]
            node.end_col_offset,  # type: ignore[attr-defined]
        )

    def after(self, line: int, col: int, lines: int = 3) -> str:
        """The text from a position on, through a few following lines."""
        rest = [self._cut(line, col, None), *self.lines[line : line + lines]]
        return "\n".join(rest)

    def before(self, line: int, col: int, lines: int = 3) -> str:
        """The text up to a position, from a few lines earlier."""
        head = self.lines[max(0, line - 1 - lines) : line - 1]
        return "\n".join([*head, self._cut(line, None, col)])


def _keyword_line(lines: list[str], keyword: str, low: int, high: int) -> int | None:
    """The last line in ``low .. high`` that starts with ``keyword`` (after
    indentation), or None."""
    pattern = re.compile(rf"[ \t\f]*{keyword}(?![\w])")
    for line in range(min(high, len(lines)), max(low, 1) - 1, -1):
        if pattern.match(lines[line - 1]):
            return line
    return None


Action = Callable[[], None]


class _Walker:
    def __init__(
        self,
        *,
        path: str,
        lines: list[str],
        context: UnitContext | None,
        helpers: HelperTable | None = None,
    ) -> None:
        self.lines = lines
        self.src = _Source(lines)
        self.sink = SiteSink(path=path, lines=lines, parser="ast", context=context, helpers=helpers)

    # -- text --------------------------------------------------------------
    def code(self, node: ast.AST) -> str:
        return one_line(self.src.segment(node))

    def expr(self, node: ast.AST) -> Expr:
        return to_expr(node, self)

    def _text(self, node: ast.AST) -> Callable[[], str]:
        """The source of ``node``, computed when asked."""
        return lambda: self.code(node)

    def field_text(self, node: ast.expr) -> tuple[str, bool]:
        """The source of an f-string field's expression, and whether its
        position is trustworthy (checked by re-parsing the text)."""
        text = self.src.segment(node)
        try:
            parsed = ast.parse("(" + text + "\n)", mode="eval").body
            if ast.dump(parsed) == ast.dump(node):
                return one_line(text), True
        except (SyntaxError, ValueError, RecursionError):
            pass
        return ast.unparse(node), False

    # -- statements, for the exit analysis -----------------------------------
    def stmts(self, body: list[ast.stmt]) -> list[Stmt]:
        """The parser-neutral views of a block's statements."""
        return [self._stmt(node) for node in body]

    def _lines_of(self, node: ast.stmt) -> str:
        """The source lines a statement spans, whole."""
        return "\n".join(self.lines[node.lineno - 1 : node.end_lineno or node.lineno])

    def _stmt(self, node: ast.stmt) -> Stmt:
        at = (node.lineno, node.col_offset)
        changed = functools.partial(stores, node)
        text = functools.partial(self._lines_of, node)
        kind = _LEAVING.get(type(node))
        if kind is not None:
            return Stmt(kind, at, lambda: StmtParts(node.lineno), changed, text=text)
        if isinstance(node, ast.Assert):
            return Stmt(
                "assert",
                at,
                lambda: StmtParts(node.lineno, test=self._text(node.test)),
                changed,
                text=text,
            )
        if isinstance(node, ast.If):
            return Stmt(
                "if",
                at,
                lambda: StmtParts(
                    node.lineno,
                    test=self._text(node.test),
                    body=self.stmts(node.body),
                    orelse=self.stmts(node.orelse) if node.orelse else None,
                ),
                changed,
                text=text,
            )
        if isinstance(node, ast.While):
            return Stmt(
                "while",
                at,
                lambda: StmtParts(
                    node.lineno,
                    test=self._text(node.test),
                    body=self.stmts(node.body),
                    orelse=self.stmts(node.orelse) if node.orelse else None,
                ),
                changed,
                text=text,
            )
        if isinstance(node, (ast.For, ast.AsyncFor)):
            return Stmt(
                "for",
                at,
                lambda: StmtParts(
                    node.lineno,
                    body=self.stmts(node.body),
                    orelse=self.stmts(node.orelse) if node.orelse else None,
                ),
                changed,
                text=text,
            )
        if isinstance(node, (ast.Try, *_TRY_STAR)):
            return Stmt("try", at, lambda: self._try_parts(node), changed, text=text)  # type: ignore[arg-type]
        if isinstance(node, ast.Match):
            return Stmt("match", at, lambda: self._match_parts(node), changed, text=text)
        if isinstance(node, (ast.With, ast.AsyncWith)):
            return Stmt("with", at, None, changed, text=text)
        if isinstance(node, (*_FUNCTIONS, ast.ClassDef)):
            return Stmt("scope", at, None, changed, text=text)
        if _inert(node):
            return Stmt("trivial", at, None, changed, text=text)
        return Stmt("other", at, None, changed, effect=lambda: _effect(node, self), text=text)

    def _try_parts(self, node: ast.Try) -> StmtParts:
        clauses = []
        for handler in node.handlers:
            kind = handler.type
            test = self._text(kind) if kind is not None else None
            clauses.append(Clause(handler.lineno, self.stmts(handler.body), test=test))
        return StmtParts(
            node.lineno,
            body=self.stmts(node.body),
            orelse=self.stmts(node.orelse) if node.orelse else None,
            clauses=clauses,
            final=self.stmts(node.finalbody),
        )

    def _match_parts(self, node: ast.Match) -> StmtParts:
        clauses = []
        for case, line in zip(node.cases, self._case_lines(node), strict=True):
            pattern, guard = case.pattern, case.guard
            clauses.append(
                Clause(
                    line,
                    self.stmts(case.body),
                    test=self._text(pattern),
                    guard=self._text(guard) if guard is not None else None,
                    irrefutable=guard is None
                    and isinstance(pattern, ast.MatchAs)
                    and pattern.pattern is None,
                )
            )
        return StmtParts(node.lineno, clauses=clauses, subject=self._text(node.subject))

    def _case_lines(self, node: ast.Match) -> list[int]:
        """The line of each ``case`` keyword (``ast`` records only the pattern's)."""
        out = []
        low = (node.subject.end_lineno or node.lineno) + 1
        for case in node.cases:
            line = _keyword_line(self.lines, "case", low, case.pattern.lineno)
            out.append(line or case.pattern.lineno)
            low = (case.body[-1].end_lineno or case.body[-1].lineno) + 1
        return out

    # -- the walk ----------------------------------------------------------
    def walk(self, body: list[ast.stmt]) -> None:
        stack: list[ast.stmt | Action] = list(reversed(body))
        while stack:
            item = stack.pop()
            if callable(item):
                item()
                continue
            stack.extend(reversed(list(self._steps(item))))

    def _block(
        self, enter: Action, body: list[ast.stmt], leave: Action
    ) -> Iterator[ast.stmt | Action]:
        yield enter
        yield lambda: self.sink.enter_block(lambda: self.stmts(body))
        yield from body
        yield self.sink.leave_block
        yield leave

    def _guarded(
        self,
        kind: GuardKind,
        test: str,
        negated: bool,
        line: int,
        body: list[ast.stmt],
        **extra: str | None,
    ) -> Iterator[ast.stmt | Action]:
        def enter() -> None:
            self.sink.push(kind, test, negated, line, **extra)

        return self._block(enter, body, self.sink.pop)

    def _else_line(self, keyword: str, after: ast.AST, block: list[ast.stmt]) -> int:
        low = (after.end_lineno or after.lineno) + 1  # type: ignore[attr-defined]
        high = block[0].lineno
        return _keyword_line(self.lines, keyword, low, high) or high

    def _steps(self, node: ast.stmt) -> Iterator[ast.stmt | Action]:
        """What to do for one statement, in order: actions and child statements."""
        if isinstance(node, ast.Raise):
            self._raise(node)
        elif isinstance(node, ast.Assert):
            self._assert(node)
        elif isinstance(node, ast.Expr) and self.sink.helpers:
            self._call(node)
        elif isinstance(node, ast.If):
            test = self.code(node.test)
            yield from self._guarded("if", test, False, node.lineno, node.body)
            if node.orelse:
                yield from self._guarded("if", test, True, node.lineno, node.orelse)
        elif isinstance(node, ast.While):
            test = self.code(node.test)
            yield from self._guarded("while", test, False, node.lineno, node.body)
            if node.orelse:
                line = self._else_line("else", node.body[-1], node.orelse)
                yield from self._guarded("while-else", test, False, line, node.orelse)
        elif isinstance(node, (ast.For, ast.AsyncFor)):
            test = for_test(self.code(node.target), self.code(node.iter))
            kind: GuardKind = "async for" if isinstance(node, ast.AsyncFor) else "for"
            yield from self._guarded(kind, test, False, node.lineno, node.body)
            if node.orelse:
                line = self._else_line("else", node.body[-1], node.orelse)
                yield from self._guarded("for-else", test, False, line, node.orelse)
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            items = ", ".join(
                with_item(
                    self.code(item.context_expr),
                    self.code(item.optional_vars) if item.optional_vars is not None else None,
                )
                for item in node.items
            )
            with_kind: GuardKind = "async with" if isinstance(node, ast.AsyncWith) else "with"
            yield from self._guarded(with_kind, items, False, node.lineno, node.body)
        elif isinstance(node, (ast.Try, *_TRY_STAR)):
            yield from self._try(node)  # type: ignore[arg-type]
        elif isinstance(node, ast.Match):
            yield from self._match(node)
        elif isinstance(node, _FUNCTIONS):
            doc = ast.get_docstring(node, clean=True)
            yield from self._block(
                lambda: self.sink.enter_function(
                    node.name,
                    doc,
                    lambda: _bindings(node, self),
                    lambda: [last_name(d) for d in node.decorator_list],
                ),
                node.body,
                self.sink.leave_scope,
            )
        elif isinstance(node, ast.ClassDef):
            doc = ast.get_docstring(node, clean=True)
            yield from self._block(
                lambda: self.sink.enter_class(node.name, doc, lambda: class_is_interface(node)),
                node.body,
                self.sink.leave_scope,
            )

    def _try(self, node: ast.Try) -> Iterator[ast.stmt | Action]:
        yield from self._guarded("try", "", False, node.lineno, node.body)
        kind: GuardKind = "except*" if _TRY_STAR and isinstance(node, _TRY_STAR) else "except"
        for handler in node.handlers:
            type_expr = self.expr(handler.type) if handler.type is not None else None

            def enter(h: ast.ExceptHandler = handler, t: Expr | None = type_expr) -> None:
                self.sink.enter_handler(kind, t, h.name, h.lineno)

            yield from self._block(enter, handler.body, self.sink.leave_handler)
        last: ast.AST = node.handlers[-1] if node.handlers else node.body[-1]
        if node.orelse:
            line = self._else_line("else", last, node.orelse)
            yield from self._guarded("try-else", "", False, line, node.orelse)
            last = node.orelse[-1]
        if node.finalbody:
            line = self._else_line("finally", last, node.finalbody)
            yield from self._guarded("finally", "", False, line, node.finalbody)

    def _match(self, node: ast.Match) -> Iterator[ast.stmt | Action]:
        subject = self.code(node.subject)
        for case, line in zip(node.cases, self._case_lines(node), strict=True):
            guard = self.code(case.guard) if case.guard is not None else None
            test = case_test(self.code(case.pattern), guard)
            yield from self._guarded("case", test, False, line, case.body, subject=subject)

    # -- sites -------------------------------------------------------------
    def _raise(self, node: ast.Raise) -> None:
        exc = self.expr(node.exc) if node.exc is not None else None
        cause = self.code(node.cause) if node.cause is not None else None
        self.sink.raise_site(
            node.lineno,
            node.end_lineno or node.lineno,
            exc,
            cause,
            at=(node.lineno, node.col_offset),
        )

    def _call(self, node: ast.Expr) -> None:
        call = node.value
        if not isinstance(call, ast.Call):
            return
        name = last_name(call.func) if isinstance(call.func, (ast.Name, ast.Attribute)) else None
        if name is None or not self.sink.is_helper_call(name):
            return
        self.sink.call_site(
            node.lineno,
            node.end_lineno or node.lineno,
            self.expr(call),
            at=(node.lineno, node.col_offset),
        )

    def _assert(self, node: ast.Assert) -> None:
        msg = self.expr(node.msg) if node.msg is not None else None
        self.sink.assert_site(
            node.lineno,
            node.end_lineno or node.lineno,
            self.code(node.test),
            msg,
            at=(node.lineno, node.col_offset),
        )


# -- expressions -------------------------------------------------------------
def to_expr(node: ast.AST, walker: _Walker) -> Expr:
    """Translate an ``ast`` expression into the rules' :class:`Expr`."""

    def text() -> str:
        return walker.code(node)

    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return Expr("strings", text, pieces=(Piece("str", (node.value,)),))
    if isinstance(node, ast.Constant) and isinstance(node.value, bytes):
        value = node.value.decode("utf-8", "backslashreplace")
        return Expr("strings", text, pieces=(Piece("bytes", (value,)),))
    if isinstance(node, ast.JoinedStr):
        return Expr("strings", text, pieces=(Piece("f", _fstring_parts(node, walker)),))
    if isinstance(node, ast.BinOp):
        op = "%" if isinstance(node.op, ast.Mod) else "+" if isinstance(node.op, ast.Add) else "?"
        return Expr(
            "binop", text, op=op, left=to_expr(node.left, walker), right=to_expr(node.right, walker)
        )
    if isinstance(node, ast.Call):
        ordered: list[ast.AST] = [*node.args, *node.keywords]
        ordered.sort(key=lambda n: (n.lineno, n.col_offset))  # type: ignore[attr-defined]
        args = []
        for arg in ordered:
            if isinstance(arg, ast.Starred):
                args.append(Arg(to_expr(arg.value, walker), star="*"))
            elif isinstance(arg, ast.keyword):
                star = "**" if arg.arg is None else ""
                args.append(Arg(to_expr(arg.value, walker), keyword=arg.arg, star=star))
            else:
                args.append(Arg(to_expr(arg, walker)))
        return Expr("call", text, func=to_expr(node.func, walker), args=tuple(args))
    if isinstance(node, ast.Name):
        return Expr("name", text, name=node.id)
    if isinstance(node, ast.Attribute):
        return Expr("attribute", text, value=to_expr(node.value, walker), name=node.attr)
    if isinstance(node, ast.Subscript):
        return Expr("subscript", text, value=to_expr(node.value, walker))
    return _collection(node, walker, text)


def _collection(node: ast.AST, walker: _Walker, text: Callable[[], str]) -> Expr:
    """:func:`to_expr` of a tuple, list, dict or starred element (else ``other``)."""
    if isinstance(node, (ast.Tuple, ast.List)):
        kind: ExprKind = "tuple" if isinstance(node, ast.Tuple) else "list"
        return Expr(kind, text, elements=tuple(to_expr(el, walker) for el in node.elts))
    if isinstance(node, ast.Starred):
        return Expr("starred", lambda: walker.code(node.value))
    if isinstance(node, ast.Dict):
        items = tuple(
            (to_expr(key, walker) if key is not None else None, to_expr(value, walker))
            for key, value in zip(node.keys, node.values, strict=True)
        )
        return Expr("dict", text, items=items)
    return Expr("other", text)


def _fstring_parts(node: ast.JoinedStr, walker: _Walker) -> tuple[str | FieldPart, ...]:
    parts: list[str | FieldPart] = []
    for value in node.values:
        if isinstance(value, ast.Constant):
            parts.append(str(value.value))
            continue
        assert isinstance(value, ast.FormattedValue)
        expr, exact = walker.field_text(value.value)
        conversion = chr(value.conversion) if value.conversion != -1 else None
        spec = _spec_text(value.format_spec, walker) if value.format_spec is not None else None
        debug = False
        if exact:
            found = _debug_text(value.value, walker.src)
            if found is not None and parts and isinstance(parts[-1], str):
                shown, written = found
                if parts[-1].endswith(shown):
                    debug, conversion = True, written
                    parts[-1] = parts[-1][: len(parts[-1]) - len(shown)]
                    if not parts[-1]:
                        parts.pop()
        parts.append(FieldPart(expr, conversion, spec, debug=debug))
    return tuple(parts)


def _debug_text(node: ast.expr, src: _Source) -> tuple[str, str | None] | None:
    """For a ``{expr=}`` field: the literal text ``ast`` put before it (the
    source from after ``{`` through ``=`` and the white space after it) and the
    conversion as written; None when the field is not self-documenting."""
    assert node.end_lineno is not None and node.end_col_offset is not None
    tail = src.after(node.end_lineno, node.end_col_offset)
    match = _DEBUG_TAIL.match(tail)
    if match is None:
        return None
    head = src.before(node.lineno, node.col_offset)
    brace = len(head.rstrip(" \t\n\f(")) - 1
    if brace < 0 or head[brace] != "{":
        return None
    equals = tail.index("=")
    after_eq = re.match(r"\s*", tail[equals + 1 :])
    assert after_eq is not None
    shown = head[brace + 1 :] + src.segment(node) + tail[: equals + 1 + after_eq.end()]
    return shown, match.group(1)


def _spec_text(spec: ast.expr, walker: _Walker) -> str:
    assert isinstance(spec, ast.JoinedStr)
    out = []
    for value in spec.values:
        if isinstance(value, ast.Constant):
            out.append(str(value.value))
        else:
            assert isinstance(value, ast.FormattedValue)
            inner = "{" + walker.field_text(value.value)[0]
            if value.conversion != -1:
                inner += "!" + chr(value.conversion)
            if value.format_spec is not None:
                inner += ":" + _spec_text(value.format_spec, walker)
            out.append(inner + "}")
    return "".join(out)


def _effect(node: ast.stmt, walker: _Walker) -> Effect | None:
    """What a simple statement does to a local name (see
    :class:`~miner.extract.rules.Effect`), or None."""
    if isinstance(node, ast.Assign):
        if len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            return Effect("assign", node.targets[0].id, to_expr(node.value, walker))
    elif isinstance(node, ast.AnnAssign):
        if isinstance(node.target, ast.Name) and node.value is not None:
            return Effect("assign", node.target.id, to_expr(node.value, walker))
    elif isinstance(node, ast.AugAssign):
        if isinstance(node.op, ast.Add) and isinstance(node.target, ast.Name):
            return Effect("augadd", node.target.id, to_expr(node.value, walker))
    elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
        call = node.value
        func = call.func
        if (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and func.attr in ("append", "extend")
            and len(call.args) == 1
            and not call.keywords
            and not isinstance(call.args[0], ast.Starred)
        ):
            kind: EffectKind = "append" if func.attr == "append" else "extend"
            return Effect(kind, func.value.id, to_expr(call.args[0], walker))
    return None


# -- bindings ----------------------------------------------------------------
def _bindings(root: ast.FunctionDef | ast.AsyncFunctionDef, walker: _Walker) -> Bindings:
    """Every binding of every name in one function's own scope (the same
    statements the libcst visitor's finder records; see
    :class:`~miner.extract.rules.Binding`)."""
    found: dict[str, list[Binding]] = defaultdict(list)
    other = OTHER

    def bind(target: ast.AST, binding: Binding = other) -> None:
        if isinstance(target, ast.Name):
            found[target.id].append(binding)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for el in target.elts:
                bind(el)
        elif isinstance(target, ast.Starred):
            bind(target.value)

    def value(node: ast.expr) -> Binding:
        return Binding("value", lambda: to_expr(node, walker))

    args = root.args
    for param in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]:
        if param is not None:
            found[param.arg].append(PARAMETER)
    stack: list[ast.AST] = list(reversed(root.body))
    while stack:
        node = stack.pop()
        if isinstance(node, _FUNCTIONS):
            found[node.name].append(other)
            continue
        if isinstance(node, ast.ClassDef):
            found[node.name].append(Binding("class"))
            continue
        if isinstance(node, (ast.Lambda, *_COMPREHENSIONS)):
            continue
        if not _bind_assignment(node, bind, value):
            # an import binds a module or a class; the other statements, a value
            imported = isinstance(node, ast.Import | ast.ImportFrom)
            for name in names_bound(node):
                found[name].append(Binding("class") if imported else other)
        stack.extend(reversed(list(ast.iter_child_nodes(node))))
    return found


def _bind_assignment(
    node: ast.AST,
    bind: Callable[..., None],
    value: Callable[[ast.expr], Binding],
) -> bool:
    """Bind the targets of an assignment-like statement; False for other nodes."""
    if isinstance(node, ast.Assign):
        for target in node.targets:
            if isinstance(target, ast.Name):
                bind(target, value(node.value))
            else:
                bind(target)
    elif isinstance(node, ast.AnnAssign):
        if isinstance(node.target, ast.Name):
            bind(node.target, value(node.value) if node.value else Binding("value"))
        else:
            bind(node.target)
    elif isinstance(node, (ast.AugAssign, ast.For, ast.AsyncFor, ast.NamedExpr)):
        bind(node.target)
    elif isinstance(node, ast.withitem) and node.optional_vars is not None:
        bind(node.optional_vars)
    elif isinstance(node, ast.Delete):
        for target in node.targets:
            bind(target)
    else:
        return False
    return True


def names_bound(node: ast.AST) -> list[str]:
    """Plain names bound by imports, ``global``/``nonlocal``, ``except ... as``
    and ``match`` captures, in source order."""
    if isinstance(node, ast.Import | ast.ImportFrom):
        if isinstance(node, ast.Import):
            return [alias.asname or alias.name.split(".")[0] for alias in node.names]
        return [alias.asname or alias.name for alias in node.names if alias.name != "*"]
    if isinstance(node, ast.Global | ast.Nonlocal):
        return list(node.names)
    if isinstance(node, ast.ExceptHandler) and node.name:
        return [node.name]
    if isinstance(node, ast.MatchAs | ast.MatchStar) and node.name:
        return [node.name]
    if isinstance(node, ast.MatchMapping) and node.rest:
        return [node.rest]
    return []


def statement_reach(
    body: list[ast.stmt], *, lines: list[str], context: UnitContext, line: int
) -> tuple[tuple[Guard, ...], tuple[Guard, ...]] | None:
    """The guards and exits a site would get on the statement that holds
    ``line`` (a statement, not only a ``raise``: a call of another function),
    in the scope ``context`` names.

    ``body`` is a unit of the file cut out of that scope's body, parsed with
    the file's own positions (``lines`` is the whole file); ``context`` gives
    the scope and the exits of its statements before the unit. The innermost
    statement whose lines hold ``line`` decides (for a compound statement whose
    header holds it, the statement itself). None when no statement of the
    scope holds ``line``.
    """
    walker = _ReachWalker(lines=lines, context=context, line=line)
    walker.sink.enter_block(lambda: walker.stmts(body))
    walker.walk(body)
    return walker.found


class _ReachWalker(_Walker):
    """A walker that records the path facts of the statement holding one line."""

    def __init__(self, *, lines: list[str], context: UnitContext, line: int) -> None:
        super().__init__(path="", lines=lines, context=context)
        self.scope = context.qualname
        self.line = line
        self.found: tuple[tuple[Guard, ...], tuple[Guard, ...]] | None = None

    def _holds(self, node: ast.AST) -> bool:
        start = getattr(node, "lineno", 0)
        return start <= self.line <= (getattr(node, "end_lineno", None) or start)

    def _steps(self, node: ast.stmt) -> Iterator[ast.stmt | Action]:
        if self.found is not None or not self._holds(node):
            return iter(())
        inner = [child for child in _children(node) if self._holds(child)]
        if not inner and self.sink.frame.qualname == self.scope:
            self.found = self.sink.reach((node.lineno, node.col_offset))
            return iter(())
        if isinstance(node, (*_FUNCTIONS, ast.ClassDef)) and not inner:
            return iter(())  # the line is in a decorator or the signature
        return super()._steps(node)


def _children(node: ast.stmt) -> Iterator[ast.stmt]:
    """The statements of a compound statement's blocks (handlers' and cases' too)."""
    for field in ("body", "orelse", "finalbody"):
        yield from getattr(node, field, ()) or ()
    for holder in (*getattr(node, "handlers", ()), *getattr(node, "cases", ())):
        yield from holder.body
