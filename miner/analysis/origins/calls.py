"""Hops through calls: a probe of the machine or of a package, a repository
function entered to what it returns, a parameter to the arguments its calls give."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from miner.analysis.callers import target_name
from miner.analysis.code import call_name, dotted, literal_text, parse_expr
from miner.analysis.config import Option
from miner.analysis.origins import kinds
from miner.analysis.origins.overloads import signature_calls, unpacks
from miner.analysis.origins.source import Function, Module
from miner.analysis.origins.walk import Place, Walk, polar, satisfiable, unparsed
from miner.model import ANY, Constraint, Hop, Origin, OriginKind

if TYPE_CHECKING:
    from miner.analysis.origins.tracer import Tracer

#: Most calls of a function whose arguments are followed for a parameter.
MAX_CALLERS = 3
#: Most ``return`` statements of a function entered that are followed.
MAX_RETURNS = 4
#: Calls whose result keeps what the condition requires of their one argument.
#: ``str`` methods that trim blanks or change case: the text the user gave, normalized.
_TEXT_METHODS = frozenset({"strip", "lstrip", "rstrip", "lower", "upper", "casefold"})
_SAME = frozenset({"bool", "str", "int", "float", "sorted", "list", "tuple", "set", "frozenset"})
#: Builtins whose result is a function of their arguments' values (the
#: items ``enumerate``, ``zip``, ``reversed`` and ``iter`` give are theirs).
_OF_ARGUMENTS = frozenset(
    {"len", "abs", "min", "max", "sum", "round", "any", "all", "divmod", "pow"}
    | {"enumerate", "zip", "reversed", "iter"}
)


def trace_call(
    tracer: Tracer,
    node: ast.Call,
    place: Place,
    demand: Constraint,
    walk: Walk,
    chain: tuple[Hop, ...],
) -> None:
    """The origins of a call's result (see the module doc)."""
    name = call_name(node) or ""
    spelled = dotted(node.func) or name
    if tracer.linked(node, place, demand, walk, chain):
        return
    if spelled and kinds.hardware_probe(spelled):
        tracer.add(walk, OriginKind.HARDWARE, spelled, chain, demand)
        return
    bare = isinstance(node.func, ast.Name) and not node.args and not node.keywords
    package = kinds.package_probe(name, bare=bare)
    if package is not None:
        tracer.add(
            walk, OriginKind.PACKAGE, package, chain, demand, owner=kinds.distribution(package)
        )
        return
    if _builtin(tracer, node, name, place, demand, walk, chain):
        return
    if _is_method(tracer, node, place, demand, walk, chain):
        return
    function, module = _callee(tracer, node, place)
    if function is not None and module is not None:
        enter(
            tracer,
            function,
            module,
            bound_arguments(function, node, place),
            place,
            demand,
            walk,
            chain,
        )
        return
    variable = kinds.env_read(node)
    if variable is not None:
        tracer.env(walk, variable, chain, demand)
        return
    if demand != ANY and _normalized(node):
        tracer.trace(node.func.value, place, demand, walk, chain)  # type: ignore[attr-defined]
        return
    args = [*node.args, *(k.value for k in node.keywords)]
    if len(args) == 1 and not isinstance(args[0], ast.Starred) and demand != ANY:
        tracer.trace(args[0], place, demand, walk, chain)  # a conversion: Enum(value)
        return
    tracer.internal(walk, node, chain, demand)


def _builtin(
    tracer: Tracer,
    node: ast.Call,
    name: str,
    place: Place,
    demand: Constraint,
    walk: Walk,
    chain: tuple[Hop, ...],
) -> bool:
    """``isinstance``, ``hasattr`` / ``getattr``, version reads and conversions."""
    func = node.func
    args = node.args
    if not isinstance(func, ast.Name) and name not in kinds.VERSION_CALLS:
        return False
    if name == "isinstance" and len(args) == 2:
        tracer.trace(
            args[0], place, polar(Constraint("instance", (unparsed(args[1]),)), demand), walk, chain
        )
        return True
    if (
        name == "hasattr"
        and len(args) == 2
        and _package_has(tracer, args[0], place, demand, walk, chain)
    ):
        return True
    if name in ("hasattr", "getattr") and len(args) >= 2 and isinstance(args[1], ast.Constant):
        attr = literal_text(args[1])
        if attr:
            read = ast.copy_location(ast.Attribute(args[0], attr, ast.Load()), node)
            tracer.trace(read, place, ANY if name == "hasattr" else demand, walk, chain)
            return True
    if name in kinds.VERSION_CALLS and args and isinstance(args[0], ast.Constant):
        package = (literal_text(args[0]) or "").split(".")[0]
        if package:
            tracer.add(
                walk, OriginKind.PACKAGE, package, chain, demand, owner=kinds.distribution(package)
            )
            return True
    if name in _SAME and len(args) == 1 and isinstance(func, ast.Name):
        tracer.trace(args[0], place, demand if name == "bool" else ANY, walk, chain)
        return True
    if name in _OF_ARGUMENTS and isinstance(func, ast.Name) and name not in place.module.globals:
        for arg in args:
            tracer.trace(arg, place, ANY, walk, chain)
        return True
    return False


def _package_has(
    tracer: Tracer,
    holder: ast.expr,
    place: Place,
    demand: Constraint,
    walk: Walk,
    chain: tuple[Hop, ...],
) -> bool:
    """``hasattr(torch, "float4_e2m1fn_x2")``: whether an imported package
    has a name is a probe of the installed package's version; its origin is
    the package (``torch``), whose distribution gives it."""
    if not isinstance(holder, ast.Name):
        return False
    function = place.function
    binds = function.bindings(holder.id) if function is not None else []
    if not binds:
        binds = place.module.globals.get(holder.id, [])
    package = kinds.module_import(holder.id, [b.statement for b in binds if b.kind == "import"])
    if not package or len(binds) != sum(b.kind == "import" for b in binds):
        return False
    tracer.add(walk, OriginKind.PACKAGE, package, chain, demand, owner=kinds.distribution(package))
    return True


def _is_method(
    tracer: Tracer,
    node: ast.Call,
    place: Place,
    demand: Constraint,
    walk: Walk,
    chain: tuple[Hop, ...],
) -> bool:
    """``<value>.is_marlin()`` on a value that is not ``self``: the value
    is ``marlin`` (an enum's test of its member), traced with that demand."""
    func = node.func
    if not (isinstance(func, ast.Attribute) and func.attr.startswith("is_") and not node.args):
        return False
    if isinstance(func.value, ast.Name) and func.value.id in ("self", "cls"):
        return False
    member = func.attr[len("is_") :]
    tracer.trace(func.value, place, polar(Constraint("==", (member,)), demand), walk, chain)
    return True


def _normalized(node: ast.Call) -> bool:
    """``<text>.strip().lower()``: a text method that only trims or
    changes case (:data:`_TEXT_METHODS`), on a value that is not ``self``.
    The result is the value, as the user wrote it up to blanks and case,
    so the demand passes to it (``os.environ.get("X", "").strip().lower()
    not in mapping``: the variable ``X`` not in the mapping's keys). Only
    under a demand, as for a conversion: without one, the value is an
    operand (``Enum[str(x).strip().upper()]``) and stays runtime state."""
    func = node.func
    return (
        isinstance(func, ast.Attribute)
        and func.attr in _TEXT_METHODS
        and not node.keywords
        and all(isinstance(a, ast.Constant) for a in node.args)
        and not (isinstance(func.value, ast.Name) and func.value.id in ("self", "cls"))
    )


def _callee(tracer: Tracer, node: ast.Call, place: Place) -> tuple[Function | None, Module | None]:
    """The repository function a call runs: a function of the same module
    or imported from one of the repository's, or a method of ``self``'s class."""
    func = node.func
    module = place.module
    if (
        isinstance(func, ast.Attribute)
        and isinstance(func.value, ast.Name)
        and func.value.id in ("self", "cls")
    ):
        owner = place.function.owner if place.function else None
        method = module.method(owner, func.attr) if owner is not None else None
        return method, module if method else None
    if not isinstance(func, ast.Name):
        return None, None
    found = module.function_named(func.id)
    if found is not None:
        return found, module
    for bind in module.globals.get(func.id, []):
        statement = bind.statement
        if isinstance(statement, ast.ImportFrom) and statement.level == 0 and statement.module:
            original = next(
                (a.name for a in statement.names if (a.asname or a.name) == func.id), func.id
            )
            path = tracer.modules.path_of(statement.module)
            target = tracer.modules.get(path) if path else None
            function = target.function_named(original) if target else None
            if function is not None:
                return function, target
    return None, None


def bound_arguments(
    function: Function, node: ast.Call, caller: Place
) -> tuple[tuple[str, ast.expr, Place], ...]:
    """(parameter, argument, caller's place) for the arguments ``node`` gives ``function``."""
    params = function.params
    skip = 1 if function.owner is not None and params[:1] in (["self"], ["cls"]) else 0
    out: list[tuple[str, ast.expr, Place]] = []
    for i, arg in enumerate(node.args):
        if isinstance(arg, ast.Starred):
            break
        if skip + i < len(params):
            out.append((params[skip + i], arg, caller))
    out += [(k.arg, k.value, caller) for k in node.keywords if k.arg is not None]
    return tuple(out)


def _returns(function: Function) -> list[ast.Return]:
    """The ``return value`` statements of a function's own body."""
    found: list[ast.Return] = []
    stack: list[ast.AST] = list(function.node.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Return) and node.value is not None:
            found.append(node)
        elif not isinstance(
            node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.expr)
        ):
            stack.extend(ast.iter_child_nodes(node))
    return sorted(found, key=lambda r: r.lineno)


def enter(
    tracer: Tracer,
    function: Function,
    module: Module,
    bound: tuple[tuple[str, ast.expr, Place], ...],
    place: Place,
    demand: Constraint,
    walk: Walk,
    chain: tuple[Hop, ...],
) -> None:
    """What ``function`` returns, traced in it with the call's arguments bound."""
    key = (module.path, function.node.lineno, "def " + ",".join(unparsed(a) for _, a, _ in bound))
    if key in walk.seen:
        return
    walk.seen.add(key)
    returns = _returns(function)
    if len(returns) > MAX_RETURNS:
        tracer.stop(walk, ast.Name(function.qualname), chain, "many-bindings", place)
        return
    for ret in returns:
        assert ret.value is not None
        hop = Hop(module.path, ret.lineno, f"return {unparsed(ret.value)}")
        inside = Place(module, function, ret.lineno, bound)
        tracer.trace(ret.value, inside, demand, walk, (*chain, hop))


def trace_parameter(
    tracer: Tracer, name: str, place: Place, demand: Constraint, walk: Walk, chain: tuple[Hop, ...]
) -> None:
    """A parameter: the arguments the facts' calls give it (or its default)."""
    function = place.function
    assert function is not None
    if name in ("self", "cls"):
        tracer.internal(walk, ast.Name(name), chain, demand)
        return
    given = tracer.facts.arguments.get((place.path, function.qualname, name))
    if not given:
        _from_callers(tracer, name, function, place, demand, walk, chain)
        return
    for arg in given:
        node = parse_expr(arg.text)
        module = tracer.modules.get(arg.path)
        if node is None or module is None:
            tracer.stop(walk, ast.Name(name), chain, "unparsed", place)
            continue
        at = Place(module, module.function_at(arg.line, arg.scope), arg.line)
        hop = Hop(arg.path, arg.line, f"{name}={arg.text}")
        _argument(tracer, node, at, demand, walk, (*chain, hop))


def _argument(
    tracer: Tracer,
    node: ast.expr,
    at: Place,
    demand: Constraint,
    walk: Walk,
    chain: tuple[Hop, ...],
) -> None:
    """One value a call gives a parameter (``node``, at the call's ``at``):
    a constant that cannot meet ``demand`` is kept in
    :attr:`Walk.excluded`, anything but a constant makes the walk
    :attr:`~Walk.indirect`; then it is traced."""
    if isinstance(node, ast.Constant):
        if not satisfiable(node.value, demand):
            walk.excluded.append(
                Origin(
                    OriginKind.CONSTANT,
                    repr(node.value),
                    walk.read,
                    walk.role,
                    constraint=demand,
                    chain=chain,
                )
            )
            return
    else:
        walk.indirect = True
    tracer.trace(node, at, demand, walk, chain)


#: Methods of a web framework's app or router that register a request handler
#: (FastAPI, Starlette, Flask): ``@app.post("/v1/x")``, ``@router.api_route(...)``.
_ROUTE_METHODS = frozenset(
    {"get", "post", "put", "patch", "delete", "api_route", "route", "websocket"}
)


def endpoint_route(function: Function) -> str | None:
    """The route of a request handler (``@app.post("/generate")`` ->
    ``/generate``; ``""`` when not a literal), None when ``function`` is not
    one: its parameters are fields of the request the client sent."""
    for deco in function.node.decorator_list:
        if (
            isinstance(deco, ast.Call)
            and isinstance(deco.func, ast.Attribute)
            and deco.func.attr in _ROUTE_METHODS
            and isinstance(deco.func.value, (ast.Name, ast.Attribute))
        ):
            first = deco.args[0] if deco.args else None
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                return first.value
            return ""
    return None


def _annotation(function: Function, name: str) -> str:
    """The annotation of the parameter ``name`` as written
    (``ChatCompletionRequest``), or ``""``."""
    a = function.node.args
    for arg in (*a.posonlyargs, *a.args, *a.kwonlyargs):
        if arg.arg == name and arg.annotation is not None:
            return unparsed(arg.annotation)
    return ""


def _action_options(tracer: Tracer, name: str, function: Function) -> list[Option]:
    """The options whose ``add_argument`` names as its ``action=`` the class
    of ``function`` when ``function`` is that class's ``__call__`` and
    ``name`` its ``values`` parameter (argparse calls it with the value the
    user gave the flag: ``LoRAPathAction`` of ``--lora-paths``); else none."""
    a = function.node.args
    params = [p.arg for p in (*a.posonlyargs, *a.args)]
    owner = function.owner
    if owner is None or function.node.name != "__call__" or params[3:4] != [name]:
        return []
    return [o for o in tracer.config.options if (o.action or "").rsplit(".", 1)[-1] == owner.name]


def _from_callers(
    tracer: Tracer,
    name: str,
    function: Function,
    place: Place,
    demand: Constraint,
    walk: Walk,
    chain: tuple[Hop, ...],
) -> None:
    if endpoint_route(function) is not None:
        owner = _annotation(function, name)
        defined = f"{place.module.path}:{function.node.lineno}"
        tracer.add(walk, OriginKind.REQUEST, name, chain, demand, owner=owner, defined=defined)
        return
    options = _action_options(tracer, name, function)
    if options:
        hop = Hop(place.path, function.node.lineno, f"{name} (the value argparse parsed)")
        for option in options:
            tracer.flag(walk, option, (*chain, hop), demand)
        return
    calls = function_calls(tracer, function, place.module.path)
    if calls is None or len(calls) > MAX_CALLERS:
        tracer.stop(walk, ast.Name(name), chain, "many-callers", place)
        return
    if not calls:
        tracer.stop(walk, ast.Name(name), chain, "no-callers", place)
        return
    for module, call, at in calls:
        if module is None or call is None or at is None:
            tracer.stop(walk, ast.Name(name), chain, "unparsed", place)
            continue
        arg = dict((p, a) for p, a, _ in bound_arguments(function, call, at)).get(name)
        if arg is None and unpacks(call):
            tracer.stop(walk, ast.Name(name), chain, "dynamic", place)
            continue
        if arg is None:
            arg = _default(function, name)
            if arg is None:
                tracer.stop(walk, ast.Name(name), chain, "dynamic", place)
                continue
            hop = Hop(place.path, function.node.lineno, f"{name}={unparsed(arg)} (default)")
            _argument(tracer, arg, place, demand, walk, (*chain, hop))
            continue
        hop = Hop(at.path, at.line, f"{name}={unparsed(arg)}")
        _argument(tracer, arg, at, demand, walk, (*chain, hop))


Call = tuple["Module | None", "ast.Call | None", Place | None]


def function_calls(tracer: Tracer, function: Function, home: str) -> list[Call] | None:
    """The calls of ``function`` (defined in the file ``home``) as (module,
    call, place of the call): those
    the facts found by its name when the commit defines it once, else those
    that can bind to its signature
    (:func:`~miner.analysis.origins.overloads.signature_calls`). A caller
    in a file that does not parse gives ``(None, None, None)``; None when
    the calls cannot all be known."""
    target = target_name(function.qualname) or ""
    if tracer.facts.definitions.get(target, 1) > 1:
        key = (home, function.qualname, function.node.lineno)
        if key not in tracer.overloads:
            found = signature_calls(tracer.named, function, target, home)
            tracer.overloads[key] = found
        named = tracer.overloads[key]
        if named is None:
            return None
        return [
            (module, call, Place(module, module.function_at(call.lineno), call.lineno))
            for module, call in named
        ]
    out: list[Call] = []
    for caller in tracer.facts.callers.get(target, ()):
        if caller.target.rsplit(".", 1)[-1] != target:
            continue
        module = tracer.modules.get(caller.path)
        if module is None:
            out.append((None, None, None))
            continue
        at = Place(module, module.function_at(caller.line, caller.scope), caller.line)
        out += [(module, call, at) for call in calls_named_at(module, caller.line, target)]
    return out


def calls_named_at(module: Module, line: int, target: str) -> list[ast.Call]:
    """The calls of ``target`` that start on ``line`` of the module."""
    return [n for n in module.calls_at(line) if call_name(n) == target]


def _default(function: Function, name: str) -> ast.expr | None:
    a = function.node.args
    positional = [*a.posonlyargs, *a.args]
    defaults = dict(
        zip(
            [p.arg for p in positional[len(positional) - len(a.defaults) :]],
            a.defaults,
            strict=True,
        )
    )
    defaults.update(
        (p.arg, d) for p, d in zip(a.kwonlyargs, a.kw_defaults, strict=True) if d is not None
    )
    return defaults.get(name)
