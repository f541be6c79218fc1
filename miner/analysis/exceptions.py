"""What an exception type means: a short table for the builtins, the repository's own classes
by their base classes and docstrings."""

from __future__ import annotations

import ast
import builtins
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from miner.analysis.code import SourceIndex, docstring, unparse, walk

#: Our own one-line meaning of the common builtin exceptions (Markdown).
MEANINGS: dict[str, str] = {
    "NotImplementedError": "this combination of settings or inputs is not implemented on this "
    "code path; it is a known gap, not a crash",
    "AssertionError": "an internal invariant failed; this is most likely a bug, worth "
    "reporting with the details shown (asserts are skipped under `python -O`)",
    "ImportError": "an optional dependency is missing or cannot be imported",
    "ModuleNotFoundError": "an optional dependency is not installed",
    "ValueError": "a value (a setting, an argument or data) has the right type but is not "
    "accepted here",
    "TypeError": "an object of the wrong type was passed or returned",
    "RuntimeError": "the program reached a state in which it cannot go on",
    "KeyError": "a lookup by key found nothing: a name that is not registered or not present",
    "IndexError": "an index is out of range",
    "FileNotFoundError": "a file or folder that the code needs does not exist",
    "TimeoutError": "an operation did not finish in the time allowed",
    "OSError": "an operating-system call failed (a file, a socket, a device)",
    "PermissionError": "the process lacks the permission for a file or device operation",
    "ConnectionError": "a network connection failed",
    "AttributeError": "an object lacks an attribute the code expects",
    "StopIteration": "an iterator ran out of items",
    "MemoryError": "memory ran out",
    "OverflowError": "a number is too large",
    "ZeroDivisionError": "a division by zero",
    "EnvironmentError": "an operating-system call failed",
    "SystemExit": "the process exits",
    "KeyboardInterrupt": "the user interrupted the process",
    "Exception": "a generic failure with no more specific type",
    "BaseException": "a generic failure with no more specific type",
}

#: HTTP exceptions of web frameworks: the status code is the first argument.
HTTP_EXCEPTIONS = ("HTTPException", "RequestValidationError")


@dataclass(frozen=True, slots=True)
class ExceptionInfo:
    """One exception class of the repository."""

    name: str
    bases: tuple[str, ...]
    doc: str | None
    path: str
    line: int
    root: str | None
    """The first builtin exception reached through the bases, if any."""

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "bases": list(self.bases),
            "doc": self.doc,
            "path": self.path,
            "line": self.line,
            "root": self.root,
        }


def short(name: str | None) -> str:
    """``errors.ConfigError`` -> ``ConfigError``; ``type(e)`` stays as written."""
    if not name:
        return ""
    return name.rsplit(".", 1)[-1] if name.replace(".", "").replace("_", "").isalnum() else name


def is_builtin(name: str) -> bool:
    obj = getattr(builtins, name, None)
    return isinstance(obj, type) and issubclass(obj, BaseException)


def repo_exceptions(index: SourceIndex, names: Iterable[str]) -> dict[str, ExceptionInfo]:
    """The repository's own exception classes among ``names`` (short names),
    with their bases followed to a builtin (through other classes of the repo)."""
    out: dict[str, ExceptionInfo] = {}
    todo = sorted({short(n) for n in names if n and not is_builtin(short(n))})
    seen: set[str] = set()
    while todo:
        name = todo.pop()
        if name in seen or not name.isidentifier():
            continue
        seen.add(name)
        paths = sorted(set(index.definitions(name)))
        if not paths or len(paths) > 3:
            continue
        tree = index.tree(paths[0])
        if tree is None:
            continue
        for node in walk(tree):
            if isinstance(node, ast.ClassDef) and node.name == name:
                bases = tuple(b for b in (unparse(x) for x in node.bases) if b)
                out[name] = ExceptionInfo(name, bases, docstring(node), paths[0], node.lineno, None)
                todo.extend(short(b) for b in bases if not is_builtin(short(b)))
                break
    resolved: dict[str, ExceptionInfo] = {}
    for name, info in out.items():
        resolved[name] = ExceptionInfo(
            info.name, info.bases, info.doc, info.path, info.line, _root(name, out, set())
        )
    return resolved


def _root(name: str, classes: dict[str, ExceptionInfo], seen: set[str]) -> str | None:
    if is_builtin(name):
        return name
    info = classes.get(name)
    if info is None or name in seen:
        return None
    seen.add(name)
    for base in info.bases:
        root = _root(short(base), classes, seen)
        if root is not None:
            return root
    return None


def meaning(exception: str | None, classes: dict[str, ExceptionInfo]) -> tuple[str, str | None]:
    """(what the type means, the repository class's docstring or None), Markdown."""
    name = short(exception)
    if not name:
        return "an exception re-raised from elsewhere", None
    if name in MEANINGS:
        return MEANINGS[name], None
    if name in HTTP_EXCEPTIONS:
        return "an HTTP error response: the status code and detail are sent to the client", None
    info = classes.get(name)
    if info is not None:
        bases = ", ".join(f"`{b}`" for b in info.bases) or "no base class"
        root = info.root
        text = (
            f"`{name}` is this repository's own exception "
            f"(defined in `{info.path}`, based on {bases})"
        )
        if root and root in MEANINGS and root != name:
            text += f"; like `{root}`, it means {MEANINGS[root]}"
        return text, info.doc
    if is_builtin(name):
        return f"the builtin `{name}`", None
    return f"`{exception}` (defined outside this repository or computed at run time)", None
