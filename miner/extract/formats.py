"""Exception classes that format their text from their constructor's arguments.

Some exception classes of a repository build the text a traceback shows from
what they are given::

    class KVTransferError(Exception):
        def __init__(self, bootstrap_room, failure_reason, is_from_another_rank=False):
            super().__init__(failure_reason)
            self.bootstrap_room = bootstrap_room
            self.failure_reason = failure_reason

        def __str__(self):
            return f"KVTransferError(bootstrap_room={self.bootstrap_room}): {self.failure_reason}"

so ``raise KVTransferError(self.bootstrap_room, reason)`` shows neither of
its arguments alone but ``KVTransferError(bootstrap_room={self.bootstrap_room}):
{reason}``. :func:`exception_format` reads such a class (parsed with ``ast``)
into a :class:`~miner.extract.helpers.Helper` with ``formats`` set: its parts
are the class's text with each attribute replaced by the parameter it holds,
and its binding is the constructor's (:meth:`Helper.bind`), so a ``raise`` of
a call of the class takes :meth:`Helper.message` as its message
(:meth:`~miner.extract.rules.SiteSink.formatted`).

The text is, in order of precedence:

* ``__str__`` whose body (after a docstring) is ``return <template>``, over
  attributes that ``__init__`` sets from its parameters (``self.x = x``, each
  attribute set once in the class and the parameter never rebound); other
  placeholders are kept as written;
* else ``super().__init__(<template>)`` (or ``Base.__init__(self, <template>)``)
  with one argument in the body of ``__init__``, over its parameters.

Which raises name which class is decided repository-wide by
:mod:`miner.mining.calls` (a class defined once in the repository).
"""

from __future__ import annotations

import ast

from miner.extract.ast_fallback import expression
from miner.extract.helpers import Helper, rebound
from miner.extract.rules import template_of
from miner.model import MessagePart

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


def exception_format(cls: ast.ClassDef, path: str, lines: list[str]) -> Helper | None:
    """The format of the class ``cls`` defined in the file ``path`` (whose
    decoded ``lines`` it was parsed from), or None when it formats no text
    from its arguments (see the module doc)."""
    methods = {
        node.name: node
        for node in cls.body
        if isinstance(node, _FUNCTIONS) and not node.decorator_list
    }
    init = methods.get("__init__")
    if not isinstance(init, ast.FunctionDef) or init.args.vararg or init.args.kwarg:
        return None
    params = [a.arg for a in (*init.args.posonlyargs, *init.args.args)][1:]
    keywords = [a.arg for a in init.args.args][1:] + [a.arg for a in init.args.kwonlyargs]
    every = set(params) | set(keywords)
    if every & rebound(init):
        return None
    found = _str_text(methods.get("__str__"), _attributes(cls, init, every), lines)
    if found is None and "__str__" not in methods:
        found = _init_text(init, every, lines)
    if found is None:
        return None
    parts, line = found
    all_positional = [*init.args.posonlyargs, *init.args.args]
    pairs = list(
        zip(
            all_positional[len(all_positional) - len(init.args.defaults) :],
            init.args.defaults,
            strict=True,
        )
    )
    pairs += [
        (a, d)
        for a, d in zip(init.args.kwonlyargs, init.args.kw_defaults, strict=True)
        if d is not None
    ]
    defaults = {a.arg: ast.unparse(d) for a, d in pairs}
    return Helper(
        name=cls.name,
        qualname=cls.name,
        path=path,
        line=line,
        exception=cls.name,
        parts=parts,
        style="fstring" if any(p.expr is not None for p in parts) else "literal",
        positional=tuple(params),
        keywords=tuple(keywords),
        defaults=tuple(sorted((k, v) for k, v in defaults.items() if k in every)),
        varargs=False,
        varkw=False,
        method=False,
        conditions=(),
        via=(f"{path}:{line} {cls.name}",),
        formats=True,
    )


def _attributes(cls: ast.ClassDef, init: ast.FunctionDef, params: set[str]) -> dict[str, str]:
    """``self.<attribute>`` -> the parameter that the body of ``__init__`` sets
    it to (``self.x = x`` at the top level), for attributes set nowhere else
    in the class."""
    counts: dict[str, int] = {}
    for node in ast.walk(cls):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = list(node.targets)
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        for target in targets:
            if _self_attribute(target) is not None:
                name = _self_attribute(target)
                assert name is not None
                counts[name] = counts.get(name, 0) + 1
    out: dict[str, str] = {}
    for stmt in init.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            name = _self_attribute(stmt.targets[0])
            value = stmt.value
            if (
                name
                and counts.get(name) == 1
                and isinstance(value, ast.Name)
                and value.id in params
            ):
                out[name] = value.id
    return out


def _self_attribute(node: ast.AST) -> str | None:
    """``x`` for ``self.x``, else None."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return node.attr if node.value.id == "self" else None
    return None


def _returned(func: ast.FunctionDef | ast.AsyncFunctionDef | None) -> ast.expr | None:
    """The expression of a function whose body (after a docstring) is one ``return``."""
    if func is None:
        return None
    body = func.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    if len(body) == 1 and isinstance(body[0], ast.Return) and body[0].value is not None:
        return body[0].value
    return None


def _str_text(
    func: ast.FunctionDef | ast.AsyncFunctionDef | None,
    attributes: dict[str, str],
    lines: list[str],
) -> tuple[tuple[MessagePart, ...], int] | None:
    """The parts of what ``__str__`` returns, attributes as their parameters."""
    value = _returned(func)
    if value is None:
        return None
    rendered = template_of(expression(value, lines))
    if rendered is None:
        return None
    parts = []
    for part in rendered[0].parts:
        if part.expr is not None and part.expr.startswith("self."):
            param = attributes.get(part.expr[len("self.") :])
            if param is not None:
                part = MessagePart(expr=param, conversion=part.conversion, spec=part.spec)
        parts.append(part)
    return tuple(parts), value.lineno


def _init_text(
    init: ast.FunctionDef, params: set[str], lines: list[str]
) -> tuple[tuple[MessagePart, ...], int] | None:
    """The parts of the one argument ``__init__`` passes to its base's
    ``__init__`` at the top level of its body, when they use a parameter."""
    for stmt in init.body:
        if not isinstance(stmt, ast.Expr) or not isinstance(stmt.value, ast.Call):
            continue
        call = stmt.value
        func = call.func
        if not isinstance(func, ast.Attribute) or func.attr != "__init__" or call.keywords:
            continue
        args = list(call.args)
        if isinstance(func.value, ast.Name) and args and _is_self(args[0]):
            args = args[1:]  # ``Base.__init__(self, text)``
        elif not _is_super(func.value):
            continue
        if len(args) != 1 or isinstance(args[0], ast.Starred):
            return None
        arg = args[0]
        if isinstance(arg, ast.Name):
            if arg.id not in params:
                return None
            return (MessagePart(expr=arg.id),), stmt.lineno
        rendered = template_of(expression(arg, lines))
        if rendered is None:
            return None
        return tuple(rendered[0].parts), stmt.lineno
    return None


def _is_self(node: ast.expr) -> bool:
    return isinstance(node, ast.Name) and node.id == "self"


def _is_super(node: ast.expr) -> bool:
    """``super()`` or ``super(Cls, self)``."""
    return (
        isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "super"
    )
