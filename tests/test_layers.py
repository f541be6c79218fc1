"""The package's layers: every import of every module under ``miner/`` points
down (or sideways within a layer), never up.

Layers, lowest first::

    0  miner (the package: __version__), miner.errors, miner.model, miner.files,
       miner.trees (the walks of an output's tree),
       miner.lifecycle (signals, workers that die with their parent),
       miner.progress (what a run shows on stderr)
    1  miner.extract      the parsers
    2  miner.mining       source, pool, cache, store, ids, extraction
    3  miner.analysis
    4  miner.releases     diff, history, versions
    5  miner.publish      records, cards, html, releases, patterns
    6  miner.lookup, miner.checks, miner.explain (readers of a published folder)
    7  miner.pipeline
    8  miner.cli, miner.entry (the command's first code), miner.__main__

``miner.corpus`` is a separate tool: it imports only layer 0, and only the
command line imports it. Imports are read with :mod:`ast`, at module level and
inside functions alike; those under ``if TYPE_CHECKING:`` are annotations only
and are not counted. ``importlib.import_module("miner...")`` with a literal
name counts as an import.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import miner

PACKAGE_ROOT = Path(miner.__file__).resolve().parent

#: Module or package name -> layer; a module belongs to its longest listed prefix.
LAYERS: dict[str, int] = {
    "miner": 0,
    "miner.errors": 0,
    "miner.model": 0,
    "miner.files": 0,
    "miner.trees": 0,
    "miner.lifecycle": 0,
    "miner.progress": 0,
    "miner.extract": 1,
    "miner.mining": 2,
    "miner.analysis": 3,
    "miner.releases": 4,
    "miner.publish": 5,
    "miner.lookup": 6,
    "miner.checks": 6,
    "miner.explain": 6,
    "miner.pipeline": 7,
    "miner.cli": 8,
    "miner.entry": 8,
    "miner.__main__": 8,
}
CORPUS = "miner.corpus"
#: The only modules that may import the corpus tool.
CORPUS_USERS = ("miner.cli", "miner.__main__")
#: Sub-packages whose modules may import each other in any direction.
PACKAGES = (
    "miner.extract",
    "miner.mining",
    "miner.analysis",
    "miner.releases",
    "miner.publish",
    "miner.corpus",
)
#: Imports forbidden although lower: publishing renders records (and their
#: analyses, as data), it never runs the analysis or the pipeline.
FORBIDDEN: dict[str, tuple[str, ...]] = {"miner.publish": ("miner.analysis", "miner.pipeline")}


def module_files() -> dict[str, Path]:
    """Dotted module name -> file, for every module under ``miner/``."""
    found: dict[str, Path] = {}
    for path in sorted(PACKAGE_ROOT.rglob("*.py")):
        rel = path.relative_to(PACKAGE_ROOT.parent).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


MODULES = module_files()
#: Packages, namespace ones (folders without ``__init__.py``) included.
PACKAGE_NAMES = {
    ".".join(p.relative_to(PACKAGE_ROOT.parent).parts)
    for p in [PACKAGE_ROOT, *PACKAGE_ROOT.rglob("*")]
    if p.is_dir() and p.name != "__pycache__"
}


def _is_type_checking(test: ast.expr) -> bool:
    if isinstance(test, ast.Name):
        return test.id == "TYPE_CHECKING"
    return isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"


def _resolve_from(module: str, node: ast.ImportFrom) -> str:
    """The absolute name ``from ... import`` reads from in ``module``."""
    if not node.level:
        return node.module or ""
    is_package = MODULES.get(module, Path()).name == "__init__.py"
    base = module.split(".")
    if not is_package:
        base = base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def imports_of(module: str, path: Path) -> list[tuple[str, int]]:
    """``(imported miner module, line)`` for every runtime import in ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: list[tuple[str, int]] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.extend((alias.name, node.lineno) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            source = _resolve_from(module, node)
            for alias in node.names:
                sub = f"{source}.{alias.name}"
                # ``from miner import pipeline`` imports the module miner.pipeline.
                found.append(
                    (sub if sub in MODULES or sub in PACKAGE_NAMES else source, node.lineno)
                )
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute | ast.Name)
            and getattr(node.func, "attr", getattr(node.func, "id", "")) == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            found.append((node.args[0].value, node.lineno))
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return [(name, line) for name, line in found if name == "miner" or name.startswith("miner.")]


def _within(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def layer_of(name: str) -> int | None:
    """The layer of a module, or None when no listed prefix covers it."""
    best = max((p for p in LAYERS if _within(name, p)), key=len)
    if best == "miner" and name != "miner":
        return None  # a new top-level module: it must be given a layer
    return LAYERS[best]


def package_of(name: str) -> str | None:
    return next((p for p in PACKAGES if _within(name, p)), None)


def violation(importer: str, imported: str) -> str | None:
    """Why ``importer`` may not import ``imported``, or None."""
    for source, targets in FORBIDDEN.items():
        if _within(importer, source) and any(_within(imported, t) for t in targets):
            return f"{source} may not import {imported}"
    own = package_of(importer)
    if own is not None and own == package_of(imported):
        return None  # within a package, any direction
    if _within(imported, CORPUS):
        return None if importer in CORPUS_USERS else "only the command line imports the corpus tool"
    if _within(importer, CORPUS):
        target = layer_of(imported)
        return None if target == 0 else f"the corpus tool imports only layer 0 (this is {target})"
    low, high = layer_of(importer), layer_of(imported)
    if low is None or high is None:
        return "module without a layer: add it to LAYERS in tests/test_layers.py"
    if high > low:
        return f"layer {low} imports layer {high}"
    return None


def all_edges() -> list[tuple[str, str, int]]:
    return [
        (module, imported, line)
        for module, path in MODULES.items()
        for imported, line in imports_of(module, path)
    ]


def test_every_module_has_a_layer() -> None:
    unplaced = [m for m in MODULES if not _within(m, CORPUS) and layer_of(m) is None]
    assert not unplaced, f"modules without a layer (add them to LAYERS): {unplaced}"


def test_imports_point_down() -> None:
    edges = all_edges()
    assert len(edges) > 50, "the import walk found suspiciously few imports"
    bad = sorted(
        f"{MODULES[src].relative_to(PACKAGE_ROOT.parent)}:{line}: {src} -> {dst} ({why})"
        for src, dst, line in edges
        if (why := violation(src, dst)) is not None
    )
    assert not bad, "imports against the layers:\n" + "\n".join(bad)


def test_publish_reads_records_not_analysis_or_pipeline() -> None:
    assert FORBIDDEN["miner.publish"] == ("miner.analysis", "miner.pipeline")
    bad = sorted(
        f"{src} -> {dst} (line {line})"
        for src, dst, line in all_edges()
        if _within(src, "miner.publish")
        and (_within(dst, "miner.analysis") or _within(dst, "miner.pipeline"))
    )
    assert not bad, "miner.publish imports analysis or pipeline:\n" + "\n".join(bad)


# -- the checker itself ------------------------------------------------------


@pytest.mark.parametrize(
    ("importer", "imported", "ok"),
    [
        ("miner.cli", "miner.pipeline", True),
        ("miner.pipeline", "miner.cli", False),
        ("miner.publish.html", "miner.analysis.facts", False),
        ("miner.publish.releases", "miner.releases.diff", True),
        ("miner.extract.rules", "miner.model", True),
        ("miner.model", "miner.extract.rules", False),
        ("miner.mining.pool", "miner.extract.runner", True),
        ("miner.extract.runner", "miner.mining.cache", False),
        ("miner.analysis.sections", "miner.analysis.facts", True),
        ("miner.corpus.build", "miner.errors", True),
        ("miner.corpus.build", "miner.mining.source", False),
        ("miner.cli", "miner.corpus.build", True),
        ("miner.pipeline", "miner.corpus.build", False),
        ("miner.lookup", "miner.publish.records", True),
        ("miner.publish.records", "miner.lookup", False),
        ("miner.newthing", "miner.model", False),
    ],
)
def test_violation_rules(importer: str, imported: str, ok: bool) -> None:
    assert (violation(importer, imported) is None) is ok


def test_import_walk_sees_functions_and_skips_type_checking(tmp_path: Path) -> None:
    src = tmp_path / "m.py"
    src.write_text(
        "from __future__ import annotations\n"
        "from typing import TYPE_CHECKING\n"
        "import miner.model\n"
        "from miner import pipeline, __version__\n"
        "if TYPE_CHECKING:\n"
        "    from miner.cli import main\n"
        "else:\n"
        "    import miner.lookup\n"
        "def f():\n"
        "    from miner.publish import html\n"
        "    import importlib\n"
        "    return importlib.import_module('miner.analysis')\n"
        "class C:\n"
        "    def g(self):\n"
        "        from miner.releases.diff import diff\n",
        encoding="utf-8",
    )
    names = [name for name, _ in imports_of("miner.errors", src)]
    assert names == [
        "miner.model",
        "miner.pipeline",
        "miner",
        "miner.lookup",
        "miner.publish.html",
        "miner.analysis",
        "miner.releases.diff",
    ]


def test_relative_imports_resolve() -> None:
    node = ast.parse("from ..model import Site").body[0]
    assert isinstance(node, ast.ImportFrom)
    assert _resolve_from("miner.extract.rules", node) == "miner.model"
    node = ast.parse("from . import rules").body[0]
    assert isinstance(node, ast.ImportFrom)
    assert _resolve_from("miner.extract", node) == "miner.extract"


def import_circles(edges: list[tuple[str, str, int]]) -> list[list[str]]:
    """The groups (sorted) of two or more modules that import each other
    through a chain of runtime imports (the strongly connected components of
    the import graph, Tarjan's algorithm without recursion)."""
    graph: dict[str, list[str]] = {}
    for importer, imported, _ in edges:
        if imported in MODULES and imported != importer:
            graph.setdefault(importer, []).append(imported)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            node, i = work.pop()
            if i == 0:
                index[node] = low[node] = len(index)
                stack.append(node)
                on_stack.add(node)
            targets = graph.get(node, [])
            if i < len(targets):
                work.append((node, i + 1))
                target = targets[i]
                if target not in index:
                    work.append((target, 0))
                elif target in on_stack:
                    low[node] = min(low[node], index[target])
                continue
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    circles.append(sorted(group))
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
    return circles


def test_import_circles_are_found() -> None:
    edges = [("miner.model", "miner.errors", 1), ("miner.errors", "miner.files", 2)]
    assert import_circles(edges) == []
    edges.append(("miner.files", "miner.model", 3))
    assert import_circles(edges) == [["miner.errors", "miner.files", "miner.model"]]


def test_no_modules_import_each_other_also_inside_a_package() -> None:
    """No chain of runtime imports (lazy ones inside functions included)
    leads from a module back to itself, inside a package too."""
    assert import_circles(all_edges()) == []


#: Most lines (docstring included) of a function of ``miner/analysis``.
MAX_FUNCTION_LINES = 60
#: The rule-written card sections (the Writer of ``analysis/sections.py``)
#: that the findings and their templates are replacing (issue 34): their
#: long functions are listed at their length, so that none grows and no
#: other is added.
LONG_WRITER_FUNCTIONS = {
    "read": 84,
    "barred_calls": 62,
    "sources": 76,
    "option_state": 71,
    "situations": 127,
    "_option_fix_in": 167,
    "env_fix": 72,
    "solutions": 358,
}


def test_analysis_functions_are_at_most_60_lines() -> None:
    """Every function of ``miner/analysis`` has at most
    :data:`MAX_FUNCTION_LINES` lines, but the Writer's listed ones, which may
    only shrink."""
    long: dict[str, int] = {}
    for path in sorted((PACKAGE_ROOT / "analysis").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                allowed = MAX_FUNCTION_LINES
                if path.name == "sections.py":
                    allowed = max(allowed, LONG_WRITER_FUNCTIONS.get(node.name, 0))
                if lines > allowed:
                    long[f"{path.relative_to(PACKAGE_ROOT)}:{node.lineno} {node.name}"] = lines
    assert long == {}
