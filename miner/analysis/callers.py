"""Who calls a function, in the same commit: a byte search for ``name(``, then ``ast``.

Only names defined once in the commit are looked up (``forward`` or ``run``
defined in forty classes say nothing about where a user reaches one of them),
and only when at most :data:`MAX_FILES` files mention the call; a constructor
``Cls.__init__`` is looked up as calls of ``Cls``.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from miner.analysis.code import SourceIndex, call_name

#: A name called from more files than this is "called from many places".
MAX_FILES = 25


@dataclass(frozen=True, slots=True)
class Caller:
    """One call of ``target`` at ``path:line`` inside ``scope`` (a ``__qualname__``)."""

    target: str
    scope: str
    path: str
    line: int

    def to_json(self) -> dict[str, Any]:
        return {"target": self.target, "scope": self.scope, "path": self.path, "line": self.line}


def target_name(scope: str) -> str | None:
    """The name a caller writes to reach ``scope``: the function's own name,
    the class name for ``Cls.__init__``; None for module level and other dunders."""
    parts = [p for p in scope.split(".") if p != "<locals>"]
    if not parts or parts[-1] in ("<module>", "<lambda>") or parts[-1].startswith("<"):
        return None
    last = parts[-1]
    if last == "__init__":
        return parts[-2] if len(parts) >= 2 else None
    if last.startswith("__") and last.endswith("__"):
        return None
    return last


def _calls(tree: ast.Module, wanted: set[str]) -> list[tuple[str, str, int]]:
    """(called name, caller qualname, line) of every call of a wanted name."""
    out: list[tuple[str, str, int]] = []

    def walk(node: ast.AST, qual: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                inner = f"{qual}.{child.name}" if qual != "<module>" else child.name
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) and "." in qual:
                    pass
                walk(child, inner)
                continue
            if isinstance(child, ast.Call):
                name = call_name(child)
                if name in wanted:
                    out.append((name, qual, child.lineno))
            walk(child, qual)

    walk(tree, "<module>")
    return out


def find_callers(index: SourceIndex, names: Iterable[str]) -> dict[str, tuple[Caller, ...]]:
    """Callers of each name (defined once in the commit), in (path, line) order.

    A name mentioned by more than :data:`MAX_FILES` files maps to an empty
    tuple and is listed in the result of :func:`crowded`.
    """
    unique = sorted({n for n in names if len(index.definitions(n)) == 1})
    mentions = index.callers_of(unique)
    by_path: dict[str, set[str]] = defaultdict(set)
    for name in unique:
        paths = mentions.get(name, [])
        if len(paths) <= MAX_FILES:
            for path in paths:
                by_path[path].add(name)
    found: dict[str, list[Caller]] = defaultdict(list)
    for path in sorted(by_path):
        tree = index.tree(path)
        if tree is None:
            continue
        for name, scope, line in _calls(tree, by_path[path]):
            found[name].append(Caller(name, scope, path, line))
    return {
        name: tuple(sorted(found.get(name, []), key=lambda c: (c.path, c.line))) for name in unique
    }


def crowded(index: SourceIndex, names: Iterable[str]) -> dict[str, int]:
    """Names defined once but called from more than :data:`MAX_FILES` files -> file count."""
    unique = sorted({n for n in names if len(index.definitions(n)) == 1})
    mentions = index.callers_of(unique)
    return {n: len(mentions[n]) for n in unique if len(mentions.get(n, [])) > MAX_FILES}
