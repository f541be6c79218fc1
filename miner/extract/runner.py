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
from dataclasses import dataclass

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from miner.extract.cst_visitor import SiteCollector, UnitContext, doc_summary
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
    """Mine the ``raise`` and ``assert`` sites of one file.

    Args:
        path: repository-relative path (stored in the sites).
        blob: the git blob id of ``data``.
        data: the file's bytes.
        partial: parse only the units that hold sites (see the module doc);
            False parses the whole module with libcst.

    Returns:
        A ``mined`` result (possibly with no sites), or ``failed`` with the
        reason. Sites come in file order; their ``error_id`` / ``site_id`` are
        empty (the pipeline assigns them).
    """
    if not data.strip():
        return FileResult(path=path, blob=blob, status="mined", reason="empty file")
    if not may_have_sites(data):
        return FileResult(path=path, blob=blob, status="mined")
    try:
        source = decode_source(data)
    except DecodeError as exc:
        return FileResult(path=path, blob=blob, status="failed", reason=f"cannot decode: {exc}")
    note = "decoded with replacement characters (invalid bytes)" if source.lossy else None
    try:
        sites = _extract(path, source, partial=partial)
    except cst.ParserSyntaxError as exc:
        reason = "libcst cannot parse: " + " ".join(str(exc).split())
        return FileResult(
            path=path, blob=blob, status="failed", reason=reason, encoding=source.encoding
        )
    except RecursionError:
        return FileResult(
            path=path,
            blob=blob,
            status="failed",
            reason="recursion limit reached while parsing",
            encoding=source.encoding,
        )
    except Exception as exc:  # noqa: BLE001 - one bad file is data, not a crash
        reason = f"{type(exc).__name__} while parsing: {exc}"
        return FileResult(
            path=path, blob=blob, status="failed", reason=reason, encoding=source.encoding
        )
    return FileResult(
        path=path,
        blob=blob,
        status="mined",
        sites=tuple(sites),
        reason=note,
        encoding=source.encoding,
    )


def _extract(path: str, source: SourceText, *, partial: bool) -> list[Site]:
    lines = source.lines
    if partial:
        plan = plan_units(source.text)
        if plan is not None:
            if plan.site_count == 0:
                return []
            sites = _extract_units(path, lines, plan)
            if sites is not None:
                return sites
    return collect(cst.parse_module(source.text), path=path, lines=lines)


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


def plan_units(text: str) -> Plan | None:
    """The units holding the file's sites, or None when ``ast`` cannot parse it."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
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
                qual = _qualname(scope, child.name)
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


def _qualname(scope: UnitContext, name: str) -> str:
    if scope.kind == "module":
        return name
    if scope.kind == "class":
        return f"{scope.qualname}.{name}"
    return f"{scope.qualname}.<locals>.{name}"


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
