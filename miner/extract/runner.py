"""Mine one file: bytes in, a :class:`~miner.model.FileResult` out, never an exception.

The work per file, cheapest first:

1. A byte search rules out files that cannot hold a ``raise`` or ``assert``.
2. The file is decoded the way CPython does (:mod:`miner.extract.text`).
3. The standard library's ``ast`` (about 18 times faster than libcst) finds
   every ``raise`` and ``assert`` and plans *units*: for a site inside a
   function, the statement of the function's body that holds it (guards
   reset at a ``def``, so the path from the body down decides the site), or
   the whole function when the site may need the function's bindings; for a
   site at module or class level, the top-level statement that holds it. Only
   those units are parsed with libcst, with their line offset and enclosing
   scope (a third of the lines of the files holding sites in SGLang 0.5.19).
   What a unit's sites need from outside it comes with the scope: the exits
   of the statements of its block before it (read from the ``ast`` tree with
   the same rules), whether the rest of the function's body is trivial, and
   whether the function or class is abstract. A unit whose text and context
   were parsed before (``memo``, the blob cache's ``units`` table) is not
   parsed again: its stored sites are placed at its lines
   (:mod:`miner.extract.units`).
4. When ``ast`` cannot parse the file (newer grammar than the host Python, NUL
   bytes), when a unit does not parse on its own, or when the units' sites do
   not add up to ``ast``'s count, the whole module is parsed with libcst
   instead. The records are the same either way (tests compare both paths).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from miner.extract import limits
from miner.extract.ast_fallback import (
    class_is_interface,
    collect_ast,
    function_is_abstract,
    prefix_facts,
)
from miner.extract.cst_visitor import SiteCollector
from miner.extract.helpers import HelperTable, bound_helpers, call_shape
from miner.extract.rules import MESSAGE_KEYWORDS, UnitContext, child_qualname, doc_summary
from miner.extract.text import DecodeError, SourceText, decode_source
from miner.extract.units import UnitMemo, placed, relative, unit_key
from miner.model import FileResult, Site

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
#: The nodes that hold statements (expressions never do).
_BLOCKS = (ast.stmt, ast.excepthandler, ast.match_case)
#: Text that must occur in a file for it to hold a site.
_MARKERS = (b"raise", b"assert")


@dataclass(frozen=True, slots=True)
class Unit:
    """Lines ``start`` .. ``end`` of a file, parsed on their own."""

    start: int
    end: int
    context: UnitContext
    block: Sequence[ast.stmt] | None = field(default=None, compare=False)
    """The block the unit is cut from (a function's body or the module's), when
    the unit's sites may belong to its scope; the unit is ``block[first:last + 1]``."""
    first: int = 0
    last: int = 0

    def full_context(self, lines: list[str]) -> UnitContext:
        """The context with what the unit's sites need from the rest of the
        block: the exits of the statements before it, whether the rest is trivial."""
        if self.block is None:
            return self.context
        exits, alone = prefix_facts(list(self.block), self.first, self.last, lines)
        return replace(self.context, exits=exits, alone=alone)


@dataclass(frozen=True, slots=True)
class Plan:
    """What the ``ast`` pass found: the units to parse and how many sites they hold."""

    units: tuple[Unit, ...]
    site_count: int


def may_have_sites(data: bytes) -> bool:
    """False when the bytes cannot hold a ``raise`` or ``assert`` statement."""
    return any(marker in data for marker in _MARKERS)


def extract_file(
    path: str,
    blob: str,
    data: bytes,
    *,
    partial: bool = True,
    helpers: HelperTable | None = None,
    memo: UnitMemo | None = None,
) -> FileResult:
    """Mine the ``raise`` and ``assert`` sites of one file; never raises.

    Args:
        path: repository-relative path (stored in the sites).
        blob: the git blob id of ``data``.
        data: the file's bytes.
        partial: parse only the units that hold sites (see the module doc);
            False parses the whole module with libcst (up to
            :data:`~miner.extract.limits.MAX_WHOLE_PARSE_BYTES`).
        helpers: raising helpers the file's calls may name: each call of one
            is a ``call`` site (:mod:`miner.extract.helpers`).
        memo: the sites of units parsed before, by their text and context
            (:mod:`miner.extract.units`): a unit found there is not parsed,
            and each unit parsed is stored. Not used with ``helpers``.

    Returns:
        ``mined`` (possibly with no sites; ``reason`` notes a lossy decode or
        the ``ast`` fallback), ``skipped`` (over the size limit) or ``failed``
        with the reason (not decodable, nested too deeply, parsed by neither
        parser: both reasons). Sites come in file order; their ``error_id`` /
        ``site_id`` are empty (the pipeline assigns them).
    """
    if not data.strip():
        return FileResult(path=path, blob=blob, status="mined", reason="empty file")
    if not helpers and not may_have_sites(data):
        return FileResult(path=path, blob=blob, status="mined")
    if len(data) > limits.MAX_FILE_BYTES:
        reason = (
            f"file too large ({len(data) / 2**20:.1f} MiB; "
            f"limit {limits.MAX_FILE_BYTES // 2**20} MiB)"
        )
        return FileResult(path=path, blob=blob, status="skipped", reason=reason)
    try:
        source = decode_source(data)
    except DecodeError as exc:
        return FileResult(path=path, blob=blob, status="failed", reason=f"cannot decode: {exc}")
    notes = ["decoded with replacement characters (invalid bytes)"] if source.lossy else []

    def failed(reason: str) -> FileResult:
        return FileResult(
            path=path,
            blob=blob,
            status="failed",
            reason="; ".join([reason, *notes]),
            encoding=source.encoding,
        )

    tree, ast_reason, refused = _parse_with_ast(source.text)
    if refused is not None:
        return failed(refused)

    try:
        try:
            sites, note = _extract(
                path, source, tree, partial=partial, deep=False, helpers=helpers, memo=memo
            )
        except RecursionError:
            sites, note = limits.call_with_deep_stack(
                lambda: _extract(
                    path, source, tree, partial=partial, deep=True, helpers=helpers, memo=memo
                )
            )
    except RecursionError:
        return failed(f"recursion limit ({limits.DEEP_RECURSION_LIMIT}) reached while mining")
    except limits.DeepStackUnavailableError as exc:
        return failed(f"recursion limit reached while mining; {exc}")
    except Exception as exc:  # noqa: BLE001 - one bad file is data, not a crash
        # MemoryError too: "MemoryError while mining: ..." (the worker pool reads it).
        return failed(f"{type(exc).__name__} while mining: {_one_line(str(exc))}")
    if sites is None:
        return failed(f"{note}; {ast_reason}")
    if note:
        notes.append(note)
    return FileResult(
        path=path,
        blob=blob,
        status="mined",
        sites=tuple(sites),
        reason="; ".join(notes) or None,
        encoding=source.encoding,
    )


def _parse_with_ast(text: str) -> tuple[ast.Module | None, str | None, str | None]:
    """``(tree, why ast failed, why the file is refused)``.

    The standard library's parser runs first, at the normal recursion limit:
    what it refuses for nesting is never handed to libcst (which may crash).
    A file ``ast`` cannot parse for other reasons (newer grammar) goes on to
    libcst with the reason kept.
    """
    try:
        return ast.parse(text), None, None
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        if isinstance(exc, MemoryError) and len(text) > limits.MAX_WHOLE_PARSE_BYTES:
            # A large file: more likely out of memory than a parser stack overflow.
            return None, None, "MemoryError while parsing with ast: out of memory"
        refusal = limits.nesting_refusal(exc)
        if refusal is not None:
            return None, None, f"nesting too deep for libcst ({refusal})"
        ast_reason = _ast_reason(exc, text)
    depth = limits.bracket_depth(text)
    if depth > limits.MAX_BRACKET_DEPTH:
        return (
            None,
            ast_reason,
            (
                f"nesting too deep for libcst ({depth} levels of brackets; "
                f"limit {limits.MAX_BRACKET_DEPTH})"
            ),
        )
    return None, ast_reason, None


def _one_line(text: str, limit: int = 200) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def libcst_reason(exc: cst.ParserSyntaxError) -> str:
    """libcst's parse error as one short line: the message and its position
    (libcst's own; it can differ from CPython's, e.g. ``@ 1:1`` for tokenizer errors)."""
    where = f"{exc.editor_line}:{exc.editor_column}"
    return f"libcst cannot parse: {_one_line(exc.message, 160)} @ {where}"


_PY2_HINTS = re.compile(
    r"^[ \t]*(?:print[ \t]+[\"'\w]|exec[ \t]+[\"'\w]|raise[ \t]+[\w.]+[ \t]*,"
    r"|except[ \t]+[\w.]+[ \t]*,[ \t]*\w+[ \t]*:)",
    re.MULTILINE,
)


def _ast_reason(exc: BaseException, text: str) -> str:
    """The standard library parser's reason, with a hint for Python 2 files."""
    if isinstance(exc, SyntaxError):
        reason = f"Python's parser: {exc.msg}" + (f" (line {exc.lineno})" if exc.lineno else "")
    else:
        reason = f"Python's parser: {type(exc).__name__}: {_one_line(str(exc))}"
    if _PY2_HINTS.search(text):
        reason += " (Python 2 syntax?)"
    return reason


def _extract(
    path: str,
    source: SourceText,
    tree: ast.Module | None,
    *,
    partial: bool,
    deep: bool,
    helpers: HelperTable | None = None,
    memo: UnitMemo | None = None,
) -> tuple[list[Site] | None, str]:
    """Sites by libcst, else by the ``ast`` fallback; ``(None, libcst's reason)``
    when neither parser can. The second item is a note for the file's result.

    ``RecursionError`` propagates unless ``deep`` (the caller then retries
    with :func:`~miner.extract.limits.call_with_deep_stack`).
    """
    lines = source.lines
    plan = plan_units(tree, lines, helpers) if tree is not None else None
    if plan is not None and plan.site_count == 0:
        return [], ""
    try:
        if plan is not None and partial:
            sites = _extract_units(path, lines, plan, helpers, memo)
            if sites is not None:
                return sites, ""
        if tree is not None and len(source.text) > limits.MAX_WHOLE_PARSE_BYTES:
            note = (
                f"mined with the ast fallback: {len(source.text) / 2**20:.1f} MiB is over "
                f"the whole-module libcst limit ({limits.MAX_WHOLE_PARSE_BYTES // 2**20} MiB)"
            )
            return collect_ast(tree, path=path, lines=lines, helpers=helpers), note
        module = cst.parse_module(source.text)
        return collect(module, path=path, lines=lines, helpers=helpers), ""
    except RecursionError:
        if not deep:
            raise
        reason = f"libcst: recursion limit ({limits.DEEP_RECURSION_LIMIT}) reached"
    except cst.ParserSyntaxError as exc:
        reason = libcst_reason(exc)
    except MemoryError:
        raise
    except Exception as exc:  # noqa: BLE001 - any libcst failure falls back to ast
        reason = f"libcst failed: {type(exc).__name__}: {_one_line(str(exc))}"
    if tree is None:
        return None, reason
    sites = collect_ast(tree, path=path, lines=lines, helpers=helpers)
    return sites, f"mined with the ast fallback ({reason})"


def collect(
    module: cst.Module,
    *,
    path: str,
    lines: list[str],
    line_offset: int = 0,
    context: UnitContext | None = None,
    helpers: HelperTable | None = None,
) -> list[Site]:
    """Run :class:`SiteCollector` over a parsed module (or unit)."""
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    collector = SiteCollector(
        wrapper.module,
        path=path,
        lines=lines,
        line_offset=line_offset,
        context=context,
        helpers=helpers,
    )
    # ``wrapper.visit`` would resolve PositionProvider and then walk the whole
    # tree once more for an empty batch of providers (libcst 1.9): a sixth of
    # the time per file. Resolving the one provider directly skips that walk.
    collector.metadata = {PositionProvider: PositionProvider()._gen(wrapper)}
    wrapper.module.visit(collector)
    return collector.sites


def _extract_units(
    path: str,
    lines: list[str],
    plan: Plan,
    helpers: HelperTable | None = None,
    memo: UnitMemo | None = None,
) -> list[Site] | None:
    sites: list[Site] = []
    for unit in plan.units:
        text = "\n".join(lines[unit.start - 1 : unit.end]) + "\n"
        offset = unit.start - 1
        context = unit.full_context(lines)
        key = None
        if memo is not None and not helpers:
            key = unit_key(text, context, offset)
            kept = memo.get(key)
            if kept is not None:
                sites.extend(placed(kept, path, offset, lines))
                continue
        indented = text[:1] in (" ", "\t", "\f")
        if indented:
            # An indented unit: a block opener lets it parse where it stands.
            text = "if 1:\n" + text
        try:
            module = cst.parse_module(text)
        except cst.ParserSyntaxError:
            return None
        if indented:
            # Take the unit's statements out of the opener again, so that it
            # is not seen as a guard; the opener's line goes with it.
            opener = module.body[0]
            assert isinstance(opener, cst.If) and isinstance(opener.body, cst.IndentedBlock)
            module = module.with_changes(body=opener.body.body)
        found = collect(
            module,
            path=path,
            lines=lines,
            line_offset=offset,
            context=context,
            helpers=helpers,
        )
        if memo is not None and key is not None:
            memo.put(key, relative(found, offset))
        sites.extend(found)
    if len(sites) != plan.site_count:
        return None
    return sites


#: One step of :func:`plan_units`' walk: the node, its top-level cluster, the
#: innermost function unit, the unit of the statement of that function's body
#: that holds the node, and the enclosing scope.
_WalkEntry = tuple[ast.AST, tuple[int, int] | None, "Unit | None", "Unit | None", UnitContext]


def plan_units(tree: ast.Module, lines: list[str], helpers: HelperTable | None = None) -> Plan:
    """The units holding the file's sites, given the file's parsed ``tree`` and its ``lines``.

    A site inside a function gets the statement of that function's body that
    holds it (with the function as context: guards, handlers and the match
    subject all lie on the path inside that statement), unless the collector
    may need the function's bindings for it (see :func:`_needs_bindings`) or
    the statement shares a line with the ``def``; then the whole (innermost)
    function, from its first decorator. A site outside functions gets its
    top-level statement. A call statement of a raising helper (``helpers``)
    is a site like a ``raise`` (one per helper it binds).
    """
    clusters = _clusters(tree.body)
    tops = _block_units(tree.body, clusters, UnitContext())
    units: dict[tuple[int, int], Unit] = {}
    count = 0
    # Iterative walk: (node, top-level cluster, innermost function unit, unit of
    # the statement of that function's body that holds the node, scope).
    stack: list[_WalkEntry] = [(tree, None, None, None, UnitContext())]
    while stack:
        node, top, func_unit, body_unit, scope = stack.pop()
        found = _sites_of(node, helpers)
        if found:
            count += found
            unit = func_unit
            if body_unit is not None and not _needs_bindings(node):
                unit = body_unit
            if unit is not None:
                units.setdefault((unit.start, unit.end), unit)
            elif top is not None:
                units.setdefault(top, tops[top])
            continue
        body: dict[int, Unit | None] = {}
        if isinstance(node, _FUNCTIONS):
            body = _body_units(node, lines, scope)
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, _BLOCKS):
                continue  # an expression: it holds no statement, so no site
            child_top = top
            if node is tree and isinstance(child, ast.stmt):
                child_top = clusters[child.lineno]
            child_unit, child_body, child_scope = func_unit, body_unit, scope
            if id(child) in body:
                child_body = body[id(child)]
            if isinstance(child, (*_FUNCTIONS, ast.ClassDef)):
                qual = child_qualname(scope.kind, scope.qualname, child.name)
                doc = doc_summary(ast.get_docstring(child, clean=True))
                if isinstance(child, ast.ClassDef):
                    interface = class_is_interface(child)
                    child_scope = UnitContext("class", qual, doc, None, abstract=interface)
                else:
                    end = child.end_lineno or child.lineno
                    # From the first decorator: the unit's walker reads them.
                    start = min([child.lineno, *(d.lineno for d in child.decorator_list)])
                    child_unit, child_body = Unit(start, end, scope), None
                    abstract = function_is_abstract(child) or (
                        scope.kind == "class" and scope.abstract
                    )
                    child_scope = UnitContext(
                        "function", qual, scope.class_doc, doc, abstract=abstract
                    )
            stack.append((child, child_top, child_unit, child_body, child_scope))
    ordered = sorted(units.values(), key=lambda u: (u.start, -u.end))
    kept: list[Unit] = []
    for unit in ordered:
        if kept and unit.end <= kept[-1].end:
            continue  # inside a unit already kept
        kept.append(unit)
    return Plan(units=tuple(kept), site_count=count)


def _body_units(
    func: ast.FunctionDef | ast.AsyncFunctionDef, lines: list[str], context: UnitContext
) -> dict[int, Unit | None]:
    """For each statement of ``func``'s body (by ``id``), the unit of the lines
    it shares with its neighbours, in ``context`` (the function's own scope);
    None when the statement starts on a line that holds more than it (the
    ``def`` line of a one-liner)."""
    spans = _clusters(func.body)
    first: dict[int, int] = {}  # line -> column of the first statement on it
    for stmt in func.body:
        first[stmt.lineno] = min(first.get(stmt.lineno, stmt.col_offset), stmt.col_offset)
    units = _block_units(func.body, spans, context)
    out: dict[int, Unit | None] = {}
    for stmt in func.body:
        start, end = spans[stmt.lineno]
        head = lines[start - 1].encode("utf-8", "surrogatepass")
        alone = start > func.lineno and not head[: first[start]].strip()
        out[id(stmt)] = units[(start, end)] if alone else None
    return out


def _block_units(
    body: list[ast.stmt], spans: dict[int, tuple[int, int]], context: UnitContext
) -> dict[tuple[int, int], Unit]:
    """One unit per group of statements of ``body`` sharing lines, by line
    range. A group of only ``def`` / ``class`` statements holds no site of the
    scope itself, so it needs nothing from the rest of the block."""
    groups: dict[tuple[int, int], list[int]] = {}
    for index, stmt in enumerate(body):
        groups.setdefault(spans[stmt.lineno], []).append(index)
    out = {}
    for (start, end), indices in groups.items():
        scopes = all(isinstance(body[i], (*_FUNCTIONS, ast.ClassDef)) for i in indices)
        block = None if scopes else body
        out[(start, end)] = Unit(start, end, context, block, indices[0], indices[-1])
    return out


def _sites_of(node: ast.AST, helpers: HelperTable | None) -> int:
    """How many sites a statement is: one for a ``raise`` or ``assert``; for
    a call statement ``helper(...)``, one per raising helper it binds (see
    :mod:`miner.extract.helpers`); else none."""
    if isinstance(node, (ast.Raise, ast.Assert)):
        return 1
    if not helpers or not isinstance(node, ast.Expr):
        return 0
    call = node.value
    if not isinstance(call, ast.Call):
        return 0
    shape = call_shape(call.func, call.args, call.keywords)
    if shape is None:
        return 0
    return sum(1 for _ in bound_helpers(helpers, *shape))


def _needs_bindings(node: ast.AST) -> bool:
    """Whether the collector may look up the enclosing function's bindings for
    this site: a raised bare name (``raise err``: an instance or a class?), or a
    message argument that may name a local (resolved through the statements
    before the site: :class:`~miner.extract.rules.Locals`). Errs on the side of True."""
    if isinstance(node, ast.Expr):
        return isinstance(node.value, ast.Call) and any(
            isinstance(arg, ast.Name)
            for arg in (*node.value.args, *(kw.value for kw in node.value.keywords))
        )
    if isinstance(node, ast.Assert):
        return node.msg is not None and _names_local(node.msg)
    if not isinstance(node, ast.Raise):
        return False
    exc = node.exc
    if exc is None:
        return False
    if not isinstance(exc, ast.Call):
        return isinstance(exc, ast.Name)
    return any(isinstance(arg, ast.Name) or _names_local(arg) for arg in exc.args) or any(
        kw.arg in MESSAGE_KEYWORDS and _names_local(kw.value) for kw in exc.keywords
    )


def _names_local(node: ast.expr) -> bool:
    """Whether a message expression has a name where the message rules may
    resolve a local: the whole message, an operand of ``+``, the format of
    ``%`` or ``.format``, the list of ``sep.join``."""
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, ast.Name):
            return True
        if isinstance(item, ast.BinOp) and isinstance(item.op, ast.Add):
            stack.extend((item.left, item.right))
        elif isinstance(item, ast.BinOp) and isinstance(item.op, ast.Mod):
            stack.append(item.left)
        elif isinstance(item, (ast.List, ast.Tuple)):
            stack.extend(item.elts)
        elif isinstance(item, ast.Call) and isinstance(item.func, ast.Attribute):
            if item.func.attr == "format":
                stack.append(item.func.value)
            elif item.func.attr == "join" and item.args:
                stack.append(item.args[0])
    return False


def _clusters(body: list[ast.stmt]) -> dict[int, tuple[int, int]]:
    """Map each statement's first line to the line range of the group of
    statements of ``body`` that share lines with it (``a = (1,\\n 2); b``),
    so that a unit never cuts a line in half."""
    spans = [(stmt.lineno, stmt.end_lineno or stmt.lineno) for stmt in body]
    result: dict[int, tuple[int, int]] = {}
    group: list[int] = []
    start = end = 0
    for first, last in spans:
        if group and first <= end:
            end = max(end, last)
            group.append(first)
            continue
        for line in group:
            result[line] = (start, end)
        group, start, end = [first], first, last
    for line in group:
        result[line] = (start, end)
    return result
