"""Hops through assignments: a name to the statements that reach it, ``self.x`` to
the class's assignments, ``<obj>.x`` to the commit's, and ``try: import``
flags to the packages whose import decides them."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from miner.analysis.code import call_name, dotted
from miner.analysis.origins import kinds
from miner.analysis.origins.calls import enter
from miner.analysis.origins.source import Binding, Function, Module, absolute_module
from miner.analysis.origins.walk import Place, Walk, satisfiable, unparsed
from miner.model import ANY, Constraint, Hop, OriginKind

if TYPE_CHECKING:
    from miner.analysis.origins.tracer import Tracer

#: Most bindings of one name (or attribute) followed; more give ``many-bindings``.
MAX_BINDINGS = 6
#: Most files assigning an attribute ``<obj>.x`` that are read for it.
MAX_WRITER_FILES = 3
_IMPORT_ERRORS = frozenset({"ImportError", "ModuleNotFoundError"})


def reaching(binds: list[Binding], body: list[ast.stmt]) -> list[Binding]:
    """The bindings that may reach a use after them all: from the last one
    that is a statement of ``body`` itself (unconditional) on."""
    top = {id(s) for s in body}
    last = max((i for i, b in enumerate(binds) if id(b.statement) in top), default=0)
    return binds[last:]


def follow_bindings(
    tracer: Tracer,
    binds: list[Binding],
    name: str,
    place: Place,
    demand: Constraint,
    walk: Walk,
    chain: tuple[Hop, ...],
) -> None:
    """Trace ``name`` through the bindings that reach ``place`` (its own
    function's when ``place.function`` is set, else the module's)."""
    body = place.function.node.body if place.function else place.module.tree.body
    binds = reaching(binds, body)
    if import_flag(tracer, binds, place, demand, walk, chain):
        return
    if len(binds) > MAX_BINDINGS:
        tracer.stop(walk, ast.Name(name), chain, "many-bindings", place)
        return
    for bind in binds:
        key = (place.path, bind.line, name)
        if key in walk.seen or not may_meet(bind.value, demand):
            continue
        walk.seen.add(key)
        _one_binding(tracer, bind, name, place, demand, walk, chain)


def _one_binding(
    tracer: Tracer,
    bind: Binding,
    name: str,
    place: Place,
    demand: Constraint,
    walk: Walk,
    chain: tuple[Hop, ...],
) -> None:
    at = Place(place.module, place.function, bind.line, place.bound)
    if bind.kind == "import":
        follow_import(tracer, bind, name, at, demand, walk, chain)
    elif bind.kind in ("def", "class"):
        hop = Hop(place.path, bind.line, f"{bind.kind} {name}")
        tracer.add(walk, OriginKind.CONSTANT, name, (*chain, hop), demand)
    elif bind.kind == "global":
        module_binds = place.module.globals.get(name, [])
        if module_binds:
            top = Place(place.module, None, bind.line)
            follow_bindings(tracer, module_binds, name, top, demand, walk, chain)
    elif bind.value is None:
        value = getattr(bind.statement, "value", None)
        if isinstance(value, ast.expr):
            hop = Hop(place.path, bind.line, unparsed(bind.statement))
            tracer.trace(value, at, ANY, walk, (*chain, hop))
    else:
        hop = Hop(place.path, bind.line, _bind_text(bind, name))
        wanted = demand if bind.kind in ("assign", "with") else ANY
        tracer.trace(bind.value, at, wanted, walk, (*chain, hop))


def may_meet(value: ast.expr | None, demand: Constraint) -> bool:
    """Whether a value assigned can meet ``demand``: a constant that cannot
    (``False`` for ``true``) or an object built by a class call, a
    container or a lambda for ``is None`` / ``false`` cannot."""
    if isinstance(value, ast.Constant):
        return satisfiable(value.value, demand)
    built = isinstance(value, (ast.Lambda, ast.Dict, ast.Set)) or (
        isinstance(value, ast.Call)
        and isinstance(value.func, (ast.Name, ast.Attribute))
        and (call_name(value) or "")[:1].isupper()
    )
    return not (built and demand.op == "is None")


def _bind_text(bind: Binding, name: str) -> str:
    value = unparsed(bind.value) if bind.value is not None else ""
    if bind.kind == "for":
        return f"for {name} in {value}"
    if bind.kind == "with":
        return f"with {value} as {name}"
    if bind.kind == "augmented":
        return unparsed(bind.statement)
    return f"{name} = {value}"


# --------------------------------------------------------------------------- imports


def _catches_import(handler: ast.ExceptHandler) -> bool:
    node = handler.type
    names = node.elts if isinstance(node, ast.Tuple) else [node]
    return any(
        (isinstance(n, ast.Name) and n.id in _IMPORT_ERRORS)
        or (isinstance(n, ast.Attribute) and n.attr in _IMPORT_ERRORS)
        for n in names
        if n is not None
    )


def try_packages(tracer: Tracer, module: Module, node: ast.Try) -> list[tuple[str, str, ast.stmt]]:
    """(top-level module, distribution, import statement) of the packages
    outside the repository that the ``try`` body imports, in order (nested
    ``if`` branches too)."""
    found: dict[str, tuple[str, str, ast.stmt]] = {}
    hint = _hint_text(tracer, module, node)
    for stmt in node.body:
        for inner in ast.walk(stmt):
            names: list[str] = []
            if isinstance(inner, ast.Import):
                names = [a.name for a in inner.names]
            elif isinstance(inner, ast.ImportFrom) and inner.level == 0 and inner.module:
                names = [inner.module]
            for dotted_name in names:
                top = dotted_name.split(".")[0]
                if not tracer.modules.local(top) and top not in found:
                    found[top] = (top, kinds.distribution(top, hint), inner)  # type: ignore[assignment]
    return list(found.values())


def _hint_text(tracer: Tracer, module: Module, node: ast.Try) -> str:
    """The comments just above a ``try`` and the source of its handlers:
    where the code says what to install."""
    lines = tracer.modules.lines(module.path)
    above = []
    number = node.lineno - 2
    while number >= 0 and lines[number].lstrip().startswith("#"):
        above.append(lines[number])
        number -= 1
    handlers = ["\n".join(lines[h.lineno - 1 : (h.end_lineno or h.lineno)]) for h in node.handlers]
    return "\n".join([*handlers, *above])


def package_origins(
    tracer: Tracer,
    module: Module,
    node: ast.Try,
    demand: Constraint,
    walk: Walk,
    chain: tuple[Hop, ...],
) -> bool:
    """One ``package`` origin per package the ``try`` imports; False when it imports none."""
    packages = try_packages(tracer, module, node)
    for top, dist, statement in packages:
        hop = Hop(module.path, statement.lineno, unparsed(statement))
        tracer.add(
            walk,
            OriginKind.PACKAGE,
            top,
            (*chain, hop),
            demand,
            owner=dist,
            defined=f"{module.path}:{node.lineno}",
        )
    return bool(packages)


def import_flag(
    tracer: Tracer,
    binds: list[Binding],
    place: Place,
    demand: Constraint,
    walk: Walk,
    chain: tuple[Hop, ...],
) -> bool:
    """A name a ``try`` binds when its imports work and its ``except
    ImportError`` handler binds otherwise (``use_deepep = True`` / ``=
    False``): the packages imported, ``missing`` when the condition needs
    the handler's value, ``installed`` when it needs the body's."""
    tries = {id(b.try_node): b.try_node for b in binds if b.try_node is not None}
    for node in tries.values():
        assert node is not None
        handlers = [h for h in node.handlers if _catches_import(h)]
        mine = [b for b in binds if b.try_node is node]
        failed = [b for b in mine if b.handler is not None and b.handler in handlers]
        if not handlers or not failed or len(mine) != len(binds):
            continue
        worked = [b for b in mine if b.handler is None]
        wanted = _import_demand(failed, worked, demand)
        if package_origins(tracer, place.module, node, wanted, walk, chain):
            return True
    return False


def _value_of(bind: Binding) -> object:
    """A binding's constant value; an import or other value counts as a true object."""
    if isinstance(bind.value, ast.Constant):
        return bind.value.value
    return True


def _import_demand(failed: list[Binding], worked: list[Binding], demand: Constraint) -> Constraint:
    can_fail = any(satisfiable(_value_of(b), demand) for b in failed)
    can_work = any(satisfiable(_value_of(b), demand) for b in worked) or not worked
    if can_fail and not can_work:
        return Constraint("missing")
    if can_work and not can_fail:
        return Constraint("installed")
    return ANY


def follow_import(
    tracer: Tracer,
    bind: Binding,
    name: str,
    place: Place,
    demand: Constraint,
    walk: Walk,
    chain: tuple[Hop, ...],
) -> None:
    """``from X import name``: the binding of ``name`` in the repository's
    module ``X``; a module or a name of another package is a constant."""
    statement = bind.statement
    hop = Hop(place.path, bind.line, unparsed(statement))
    if isinstance(statement, ast.ImportFrom):
        source = absolute_module(place.path, statement)
        original = next((a.name for a in statement.names if (a.asname or a.name) == name), name)
        path = tracer.modules.path_of(source)
        target = tracer.modules.get(path) if path else None
        if target is not None and target.globals.get(original):
            top = Place(target, None, 10**9)
            follow_bindings(
                tracer, target.globals[original], original, top, demand, walk, (*chain, hop)
            )
            return
        if target is not None:
            function = target.function_named(original)
            if function is not None:
                tracer.add(walk, OriginKind.CONSTANT, original, (*chain, hop), demand)
                return
        tracer.add(walk, OriginKind.CONSTANT, f"{source}.{original}", (*chain, hop), demand)
        return
    tracer.add(walk, OriginKind.CONSTANT, name, (*chain, hop), demand)


# --------------------------------------------------------------------------- attributes


def _class_assignments(
    module: Module, cls: ast.ClassDef, attr: str
) -> list[tuple[Binding, Function | None]]:
    """``self.attr = ...`` in the methods of ``cls`` and ``attr = ...`` in its body."""
    found: list[tuple[Binding, Function | None]] = list(module.self_assignments(cls, attr))
    field = _is_dataclass(cls)
    for stmt in cls.body:
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [getattr(stmt, "target", None)]
        value = getattr(stmt, "value", None)
        if value is not None and any(isinstance(t, ast.Name) and t.id == attr for t in targets):
            kind = "field" if field and isinstance(stmt, ast.AnnAssign) else "assign"
            found.append((Binding(attr, stmt.lineno, kind, value, stmt), None))
    return found


def _is_dataclass(cls: ast.ClassDef) -> bool:
    """Whether ``cls`` is decorated ``@dataclass`` / ``@dataclasses.dataclass(...)``:
    its annotated class-level assignments are fields whose values are given
    where an object is built, the value written being only a default."""
    for deco in cls.decorator_list:
        target = deco.func if isinstance(deco, ast.Call) else deco
        if (dotted(target) or "").rsplit(".", 1)[-1] == "dataclass":
            return True
    return False


def _holders(tracer: Tracer) -> dict[str, str]:
    """Class name -> the options class with a field annotated with it (the
    diffusion ``ServerArgs.kv_cache_quant_config: QVGKVQuantArgs``: a typed
    config object an options class carries), read from the files defining
    the options (:attr:`ConfigModel.options`); built once per tracer and
    kept on it (:attr:`Tracer.holders`: a table keyed by ``id(tracer)`` gave
    a later tracer at the same address the table of an earlier one)."""
    if tracer.holders is not None:
        return tracer.holders
    found: dict[str, str] = {}
    owners = {(o.owner, o.path) for o in tracer.config.options if o.owner in tracer.config.classes}
    for owner, path in sorted(owners):
        module = tracer.modules.get(path)
        for cls in module.classes.get(owner, []) if module is not None else []:
            for stmt in cls.body:
                if isinstance(stmt, ast.AnnAssign):
                    for name in ast.walk(stmt.annotation):
                        if isinstance(name, ast.Name) and name.id[:1].isupper():
                            found.setdefault(name.id, owner)
    tracer.holders = found
    return found


def _options_class(tracer: Tracer, module: Module, cls: ast.ClassDef) -> str | None:
    """The options class (:attr:`ConfigModel.classes`) that ``cls`` is,
    derives from by a base's name (``Cosmos3SamplingParams(SamplingParams)``)
    or is carried by as a field's type (:func:`_holders`), or None."""
    known = set(tracer.config.classes)
    held = _holders(tracer).get(cls.name)
    if held is not None and cls.name not in known:
        return held
    seen: set[str] = set()
    todo = [cls]
    while todo:
        one = todo.pop()
        if one.name in known:
            return one.name
        seen.add(one.name)
        for base in one.bases:
            name = (dotted(base) or "").rsplit(".", 1)[-1]
            if name in known:
                return name
            if name and name not in seen:
                todo += module.classes.get(name, [])
    return None


def _field(
    tracer: Tracer,
    node: ast.Attribute,
    cls: ast.ClassDef,
    bind: Binding,
    place: Place,
    demand: Constraint,
    walk: Walk,
    chain: tuple[Hop, ...],
) -> None:
    """``self.x`` where ``x`` is a field of the dataclass ``cls``: a setting of
    an options class when ``cls`` is one or derives from one (the flag when
    one is defined for ``x``, else the field by name with the class as owner:
    a ``request`` field in a sampling parameters class,
    :func:`~miner.analysis.origins.kinds.setting_kind`);
    otherwise an ``unknown`` ``field``: the value is given where the object is
    built, and its default (``bind``) does not decide it."""
    module = place.module
    hop = Hop(module.path, bind.line, unparsed(bind.statement))
    owner = _options_class(tracer, module, cls)
    if owner is None:
        tracer.stop(walk, node, chain, "field", Place(module, None, bind.line))
        return
    carried = owner != cls.name and cls.name in _holders(tracer)
    options = () if carried else tracer.config.options_named(node.attr)
    opt = next((o for o in options if o.owner == owner), None)
    if opt is not None:
        tracer.flag(walk, opt, (*chain, hop), demand)
        return
    default = unparsed(bind.value) if bind.value is not None else None
    tracer.add(
        walk,
        kinds.setting_kind(cls.name, flagged=False),
        node.attr,
        (*chain, hop),
        demand,
        owner=cls.name,
        defined=f"{module.path}:{bind.line}",
        default=default,
    )


def _related_classes(module: Module, cls: ast.ClassDef) -> list[ast.ClassDef]:
    """``cls``, its bases defined in the same module, then its subclasses there."""
    out = [cls]
    for base in cls.bases:
        if isinstance(base, ast.Name):
            out += module.classes.get(base.id, [])
    for group in module.classes.values():
        for other in group:
            if any(isinstance(b, ast.Name) and b.id == cls.name for b in other.bases):
                out.append(other)
    return list({id(c): c for c in out}.values())


def follow_self(
    tracer: Tracer,
    node: ast.Attribute,
    place: Place,
    demand: Constraint,
    walk: Walk,
    chain: tuple[Hop, ...],
) -> None:
    """``self.x``: its assignments in the class (its bases and subclasses of
    the same module), or what the property ``x`` returns; else the
    statements of the commit assigning ``.x``."""
    function = place.function
    cls = function.owner if function is not None else None
    if cls is None:
        follow_writers(tracer, node, place, demand, walk, chain)
        return
    module = place.module
    found: list[tuple[Binding, Function | None]] = []
    for related in _related_classes(module, cls):
        prop = module.method(related, node.attr)
        if prop is not None and _is_property(prop):
            enter(tracer, prop, module, (), place, demand, walk, chain)
            return
        found += _class_assignments(module, related, node.attr)
    if not found:
        follow_writers(tracer, node, place, demand, walk, chain)
        return
    _follow_attribute(tracer, node, found, module, place, demand, walk, chain)


def _follow_attribute(
    tracer: Tracer,
    node: ast.Attribute,
    found: list[tuple[Binding, Function | None]],
    module: Module,
    place: Place,
    demand: Constraint,
    walk: Walk,
    chain: tuple[Hop, ...],
) -> None:
    if len(found) > MAX_BINDINGS:
        tracer.stop(walk, node, chain, "many-bindings", place)
        return
    for bind, method in found:
        key = (module.path, bind.line, node.attr)
        if key in walk.seen:
            continue
        if bind.kind == "field":
            walk.seen.add(key)
            cls = _field_class(module, bind)
            if cls is not None:
                _field(tracer, node, cls, bind, place, demand, walk, chain)
            continue
        if not may_meet(bind.value, demand):
            continue
        walk.seen.add(key)
        owner = unparsed(getattr(bind.statement, "targets", [None])[0] or node)
        hop = Hop(module.path, bind.line, f"{owner} = {unparsed(bind.value) if bind.value else ''}")
        at = Place(module, method, bind.line)
        if bind.value is not None:
            wanted = demand if bind.kind == "assign" else ANY
            tracer.trace(bind.value, at, wanted, walk, (*chain, hop))


def _field_class(module: Module, bind: Binding) -> ast.ClassDef | None:
    """The class of the module whose body holds the field statement of ``bind``."""
    for group in module.classes.values():
        for cls in group:
            if any(stmt is bind.statement for stmt in cls.body):
                return cls
    return None


def _is_property(function: Function) -> bool:
    return any(
        (isinstance(d, ast.Name) and d.id in ("property", "cached_property"))
        or (isinstance(d, ast.Attribute) and d.attr in ("cached_property",))
        for d in function.node.decorator_list
    )


def follow_writers(
    tracer: Tracer,
    node: ast.Attribute,
    place: Place,
    demand: Constraint,
    walk: Walk,
    chain: tuple[Hop, ...],
) -> None:
    """``<obj>.x``: the statements of the commit that assign ``.x`` on any
    object (at most :data:`MAX_WRITER_FILES` files, :data:`MAX_BINDINGS`
    statements); none found: the object itself is traced."""
    paths = tracer.modules.attribute_writers(node.attr)
    if len(paths) > MAX_WRITER_FILES:
        tracer.stop(walk, node, chain, "many-bindings", place)
        return
    found: list[tuple[Module, Binding, Function | None]] = []
    for path in paths:
        module = tracer.modules.get(path)
        if module is not None:
            found += [(module, b, f) for b, f in module.attribute_writes(node.attr)]
    if not found:
        tracer.trace(node.value, place, ANY, walk, chain)
        return
    if len(found) > MAX_BINDINGS:
        tracer.stop(walk, node, chain, "many-bindings", place)
        return
    for module, bind, function in found:
        _follow_attribute(tracer, node, [(bind, function)], module, place, demand, walk, chain)
