"""The ``logged`` fact: a handler that catches a site's exception and does not re-raise it.

A ``try`` around the site in its own function, or around every call of its
function the facts know (:attr:`~miner.analysis.facts.RepoFacts.callers`),
or, for a call with no ``try`` around it, around every call of the calling
function (two frames up, when that function is used only by calls),
whose first handler matching the raised type (by the builtin hierarchy and
the repository's own classes, :attr:`~miner.analysis.facts.RepoFacts.exceptions`)
has no ``raise`` in it: the user sees a log line (or nothing), not the error.
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass

from miner.analysis.callers import Caller, target_name
from miner.analysis.exceptions import ExceptionInfo
from miner.analysis.origins.source import Module, Modules
from miner.model import Caught, Site

#: Most calls of the site's function that are read for a handler around them.
MAX_CALLERS = 3
#: Exceptions an ``except Exception`` does not catch.
_NOT_EXCEPTION = frozenset({"BaseException", "SystemExit", "KeyboardInterrupt", "GeneratorExit"})
_LOG_METHODS = frozenset(
    {
        "debug",
        "info",
        "warning",
        "warn",
        "error",
        "exception",
        "critical",
        "warning_once",
        "info_once",
    }
)


def _builtin(name: str) -> type | None:
    found = getattr(builtins, name, None)
    return found if isinstance(found, type) and issubclass(found, BaseException) else None


def ancestry(name: str, exceptions: Mapping[str, ExceptionInfo]) -> list[str]:
    """``name`` and its base classes, nearest first: the repository's classes
    by their written bases, then the builtin root's Python hierarchy."""
    out: list[str] = []
    todo = [name]
    while todo:
        current = todo.pop(0).rsplit(".", 1)[-1]
        if current in out:
            continue
        out.append(current)
        info = exceptions.get(current)
        if info is not None:
            todo += [b.split("[")[0] for b in info.bases]
        found = _builtin(current)
        if found is not None:
            todo += [c.__name__ for c in found.__mro__[1:] if c is not object]
    return out


def catches(
    handler: ast.ExceptHandler, raised: str, exceptions: Mapping[str, ExceptionInfo]
) -> bool:
    """Whether ``handler`` catches an exception of the class named ``raised``."""
    if handler.type is None:
        return True
    names = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    line = ancestry(raised, exceptions)
    rooted = any(_builtin(n) is not None for n in line)
    for node in names:
        caught = node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", None)
        if caught is None:
            continue
        if caught in line or (
            caught == "Exception" and not rooted and line[0] not in _NOT_EXCEPTION
        ):
            return True
    return False


def _leaves(handler: ast.ExceptHandler) -> bool:
    """Whether the handler raises (re-raises or raises another exception)."""
    stack: list[ast.AST] = list(handler.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Raise):
            return True
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            stack.extend(ast.iter_child_nodes(node))
    return False


def _hands_back(handler: ast.ExceptHandler) -> bool:
    """Whether the handler returns or yields a value built from the exception
    it binds (``except ValueError as e: return create_error_response(str(e))``,
    ``return False, str(e)``): the message reaches whoever called, often a
    client as an error response, so the error is not hidden in a log."""
    if handler.name is None:
        return False
    for node in ast.walk(handler):
        if (
            isinstance(node, (ast.Return, ast.Yield, ast.YieldFrom))
            and node.value is not None
            and any(isinstance(n, ast.Name) and n.id == handler.name for n in ast.walk(node.value))
        ):
            return True
    return False


def _logs(handler: ast.ExceptHandler) -> bool:
    for node in ast.walk(handler):
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Attribute) and func.attr in _LOG_METHODS:
                return True
            if isinstance(func, ast.Name) and func.id in ("print", "warn"):
                return True
    return False


def _tries_around(module: Module, line: int) -> Iterator[ast.Try]:
    """The ``try`` statements of the function around ``line`` (or of module
    level) whose body holds the line, innermost first."""
    function = module.function_at(line)
    first, last = (function.node.lineno, function.node.end_lineno or 0) if function else (0, 10**9)
    found = []
    for node in module.tries():
        if not (first <= node.lineno and (node.end_lineno or 0) <= last):
            continue
        inside = node.body[0].lineno <= line <= (node.body[-1].end_lineno or 0)
        if inside and module.function_at(node.lineno) is function:
            found.append(node)
    yield from reversed(found)


def handled(
    module: Module, line: int, raised: str, exceptions: Mapping[str, ExceptionInfo]
) -> tuple[ast.ExceptHandler | None, bool]:
    """(the first handler catching ``raised`` raised at ``line``, whether
    the error leaves it: re-raised, or its text returned, :func:`_hands_back`);
    (None, True) when no handler of the function catches it."""
    for node in _tries_around(module, line):
        for handler in node.handlers:
            if catches(handler, raised, exceptions):
                return handler, _leaves(handler) or _hands_back(handler)
    return None, True


def _raised(site: Site) -> str | None:
    if site.kind == "assert":
        return "AssertionError"
    text = (site.exception or "").split("(")[0].strip()
    return text.rsplit(".", 1)[-1] or None


#: A predicate: whether every call of the function ``scope`` spanning
#: ``path:line`` is in the facts' callers (it is used only by calls).
Known = Callable[[str, str, int], bool]


def logged(
    site: Site,
    modules: Modules,
    exceptions: Mapping[str, ExceptionInfo],
    callers: Mapping[str, tuple[Caller, ...]],
    known: Known | None = None,
) -> Caught | None:
    """The handler that keeps ``site``'s exception from the user, or None:
    in the site's own function, else around every call of it, else (when
    ``known`` says the calls of the calling function are all listed) around
    every call of that function: :data:`FRAMES` calling frames at most."""
    raised = _raised(site)
    module = modules.get(site.path)
    if raised is None or module is None:
        return None
    handler, leaves = handled(module, site.line, raised, exceptions)
    if handler is not None and not leaves:
        return _caught(site.path, handler, "same")
    if handler is not None:
        return None
    context = _Callers(modules, exceptions, callers, known)
    return context.caught_above(site.scope, raised, FRAMES)


#: Most calling frames read for a handler (the caller, the caller's caller).
FRAMES = 2


@dataclass(frozen=True, slots=True)
class _Callers:
    """What :meth:`caught_above` reads: the trees, the exception classes,
    the calls by name and which functions' calls are all known."""

    modules: Modules
    exceptions: Mapping[str, ExceptionInfo]
    callers: Mapping[str, tuple[Caller, ...]]
    known: Known | None

    def caught_above(self, scope: str, raised: str, frames: int) -> Caught | None:
        """The first handler that catches ``raised`` around every call of
        ``scope`` (at most :data:`MAX_CALLERS`), or, for a call with no
        handler of its own function, around every call of that function
        (``frames`` levels in all); None when some call path lets it out."""
        target = target_name(scope) or ""
        calls = [c for c in self.callers.get(target, ()) if c.target.rsplit(".", 1)[-1] == target]
        if not calls or len(calls) > MAX_CALLERS:
            return None
        found: list[Caught] = []
        for call in calls:
            other = self.modules.get(call.path)
            if other is None:
                return None
            hit, leaves = handled(other, call.line, raised, self.exceptions)
            if hit is not None and not leaves:
                found.append(_caught(call.path, hit, "caller"))
                continue
            if hit is not None or frames <= 1 or self.known is None:
                return None
            if not self.known(call.path, call.scope, call.line):
                return None
            above = self.caught_above(call.scope, raised, frames - 1)
            if above is None:
                return None
            found.append(above)
        return found[0]


def _caught(path: str, handler: ast.ExceptHandler, frame: str) -> Caught:
    types = ast.unparse(handler.type) if handler.type is not None else ""
    return Caught(path, handler.lineno, types, frame, _logs(handler))  # type: ignore[arg-type]
