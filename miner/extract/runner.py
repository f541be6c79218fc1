"""Mine one file: bytes in, a :class:`~miner.model.FileResult` out, never an exception.

The work per file, cheapest first:

1. A byte search rules out files that cannot hold a ``raise`` or ``assert``.
2. The file is decoded the way CPython does (:mod:`miner.extract.text`).
3. The standard library's ``ast`` (about 18 times faster than libcst) finds
   every ``raise`` and ``assert`` and plans *units*: for a site inside a
   function, the outermost-needed function that holds it (guards reset at a
   ``def``, so the function alone decides its sites); for a site at module or
   class level, the top-level statement that holds it. Only those units are
   parsed with libcst, with their line offset and enclosing scope.
4. When ``ast`` cannot parse the file (newer grammar than the host Python, NUL
   bytes), when a unit does not parse on its own, or when the units' sites do
   not add up to ``ast``'s count, the whole module is parsed with libcst
   instead. The records are the same either way (tests compare both paths).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from miner.extract import limits
from miner.extract.ast_fallback import collect_ast
from miner.extract.cst_visitor import SiteCollector
from miner.extract.rules import UnitContext, child_qualname, doc_summary
from miner.extract.text import DecodeError, SourceText, decode_source
from miner.model import FileResult, Site

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
#: Text that must occur in a file for it to hold a site.
_MARKERS = (b"raise", b"assert")


@dataclass(frozen=True, slots=True)
class Unit:
    """Lines ``start`` .. ``end`` of a file, parsed on their own."""

    start: int
    end: int
    context: UnitContext


@dataclass(frozen=True, slots=True)
class Plan:
    """What the ``ast`` pass found: the units to parse and how many sites they hold."""

    units: tuple[Unit, ...]
    site_count: int


def may_have_sites(data: bytes) -> bool:
    """False when the bytes cannot hold a ``raise`` or ``assert`` statement."""
    return any(marker in data for marker in _MARKERS)


def extract_file(path: str, blob: str, data: bytes, *, partial: bool = True) -> FileResult:
    """Mine the ``raise`` and ``assert`` sites of one file; never raises.

    Args:
        path: repository-relative path (stored in the sites).
        blob: the git blob id of ``data``.
        data: the file's bytes.
        partial: parse only the units that hold sites (see the module doc);
            False parses the whole module with libcst (up to
            :data:`~miner.extract.limits.MAX_WHOLE_PARSE_BYTES`).

    Returns:
        ``mined`` (possibly with no sites; ``reason`` notes a lossy decode or
        the ``ast`` fallback), ``skipped`` (over the size limit) or ``failed``
        with the reason (not decodable, nested too deeply, parsed by neither
        parser: both reasons). Sites come in file order; their ``error_id`` /
        ``site_id`` are empty (the pipeline assigns them).
    """
    if not data.strip():
        return FileResult(path=path, blob=blob, status="mined", reason="empty file")
    if not may_have_sites(data):
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

    # The standard library's parser runs first, at the normal recursion limit:
    # what it refuses for nesting is never handed to libcst (which may crash).
    tree: ast.Module | None = None
    ast_reason: str | None = None
    try:
        tree = ast.parse(source.text)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        if isinstance(exc, MemoryError) and len(source.text) > limits.MAX_WHOLE_PARSE_BYTES:
            # A large file: more likely out of memory than a parser stack overflow.
            return failed("MemoryError while parsing with ast: out of memory")
        refusal = limits.nesting_refusal(exc)
        if refusal is not None:
            return failed(f"nesting too deep for libcst ({refusal})")
        ast_reason = _ast_reason(exc, source.text)
    if tree is None:
        depth = limits.bracket_depth(source.text)
        if depth > limits.MAX_BRACKET_DEPTH:
            return failed(
                f"nesting too deep for libcst ({depth} levels of brackets; "
                f"limit {limits.MAX_BRACKET_DEPTH})"
            )

    try:
        try:
            sites, note = _extract(path, source, tree, partial=partial, deep=False)
        except RecursionError:
            sites, note = limits.call_with_deep_stack(
                lambda: _extract(path, source, tree, partial=partial, deep=True)
            )
    except RecursionError:
        return failed(f"recursion limit ({limits.DEEP_RECURSION_LIMIT}) reached while mining")
    except limits.DeepStackUnavailable as exc:
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
    path: str, source: SourceText, tree: ast.Module | None, *, partial: bool, deep: bool
) -> tuple[list[Site] | None, str]:
    """Sites by libcst, else by the ``ast`` fallback; ``(None, libcst's reason)``
    when neither parser can. The second item is a note for the file's result.

    ``RecursionError`` propagates unless ``deep`` (the caller then retries
    with :func:`~miner.extract.limits.call_with_deep_stack`).
    """
    lines = source.lines
    plan = plan_units(tree) if tree is not None else None
    if plan is not None and plan.site_count == 0:
        return [], ""
    try:
        if plan is not None and partial:
            sites = _extract_units(path, lines, plan)
            if sites is not None:
                return sites, ""
        if tree is not None and len(source.text) > limits.MAX_WHOLE_PARSE_BYTES:
            note = (
                f"mined with the ast fallback: {len(source.text) / 2**20:.1f} MiB is over "
                f"the whole-module libcst limit ({limits.MAX_WHOLE_PARSE_BYTES // 2**20} MiB)"
            )
            return collect_ast(tree, path=path, lines=lines), note
        return collect(cst.parse_module(source.text), path=path, lines=lines), ""
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
    return collect_ast(tree, path=path, lines=lines), f"mined with the ast fallback ({reason})"


def collect(
    module: cst.Module,
    *,
    path: str,
    lines: list[str],
    line_offset: int = 0,
    context: UnitContext | None = None,
) -> list[Site]:
    """Run :class:`SiteCollector` over a parsed module (or unit)."""
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    collector = SiteCollector(
        wrapper.module, path=path, lines=lines, line_offset=line_offset, context=context
    )
    # ``wrapper.visit`` would resolve PositionProvider and then walk the whole
    # tree once more for an empty batch of providers (libcst 1.9): a sixth of
    # the time per file. Resolving the one provider directly skips that walk.
    collector.metadata = {PositionProvider: PositionProvider()._gen(wrapper)}
    wrapper.module.visit(collector)
    return collector.sites


def _extract_units(path: str, lines: list[str], plan: Plan) -> list[Site] | None:
    sites: list[Site] = []
    for unit in plan.units:
        text = "\n".join(lines[unit.start - 1 : unit.end]) + "\n"
        offset = unit.start - 1
        if text[:1] in (" ", "\t", "\f"):
            # An indented def: a block opener lets it parse where it stands.
            text = "if 1:\n" + text
            offset -= 1
        try:
            module = cst.parse_module(text)
        except cst.ParserSyntaxError:
            return None
        sites.extend(
            collect(module, path=path, lines=lines, line_offset=offset, context=unit.context)
        )
    if len(sites) != plan.site_count:
        return None
    return sites


def plan_units(tree: ast.Module) -> Plan:
    """The units holding the sites of a file parsed by ``ast``."""
    clusters = _top_level_clusters(tree)
    units: dict[tuple[int, int], Unit] = {}
    count = 0
    # Iterative walk: (node, top-level cluster, innermost function and its context, scope).
    stack: list[tuple[ast.AST, tuple[int, int] | None, Unit | None, UnitContext]] = [
        (tree, None, None, UnitContext())
    ]
    while stack:
        node, top, func_unit, scope = stack.pop()
        if isinstance(node, (ast.Raise, ast.Assert)):
            count += 1
            if func_unit is not None:
                units.setdefault((func_unit.start, func_unit.end), func_unit)
            elif top is not None:
                units.setdefault(top, Unit(top[0], top[1], UnitContext()))
            continue
        for child in ast.iter_child_nodes(node):
            child_top = top
            if node is tree and isinstance(child, ast.stmt):
                child_top = clusters[child.lineno]
            child_unit, child_scope = func_unit, scope
            if isinstance(child, (*_FUNCTIONS, ast.ClassDef)):
                qual = child_qualname(scope.kind, scope.qualname, child.name)
                doc = doc_summary(ast.get_docstring(child, clean=True))
                if isinstance(child, ast.ClassDef):
                    child_scope = UnitContext("class", qual, doc, None)
                else:
                    if func_unit is None:
                        end = child.end_lineno or child.lineno
                        child_unit = Unit(child.lineno, end, scope)
                    child_scope = UnitContext("function", qual, scope.class_doc, doc)
            stack.append((child, child_top, child_unit, child_scope))
    ordered = sorted(units.values(), key=lambda u: (u.start, -u.end))
    kept: list[Unit] = []
    for unit in ordered:
        if kept and unit.end <= kept[-1].end:
            continue  # inside a unit already kept
        kept.append(unit)
    return Plan(units=tuple(kept), site_count=count)


def _top_level_clusters(tree: ast.Module) -> dict[int, tuple[int, int]]:
    """Map each top-level statement's first line to the line range of the
    group of top-level statements that share lines with it (``a = (1,\\n 2); b``),
    so that a unit never cuts a line in half."""
    spans = [(stmt.lineno, stmt.end_lineno or stmt.lineno) for stmt in tree.body]
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
