"""Values traced back to what decides them (:func:`miner.analysis.origins.site_origins`).

:class:`Tracer` resolves one expression read by a site (an atom of its
condition, a placeholder of its message) in its place (file, function,
line) to :class:`~miner.model.Origin` records. It follows, one hop at a
time and at most :data:`MAX_DEPTH` hops: the reaching assignments of a
local, a parameter to the arguments of the calls found (the call being
traced first, else the callers the facts know), ``self.x`` to its
assignments in the class (and a property to what it returns), a module
global to its assignment or import, ``<obj>.x`` to the statements that
assign ``.x`` in the commit, a call of a repository function to what it
returns. What it reaches is classified by :mod:`~miner.analysis.origins.kinds`
and the settings :class:`~miner.analysis.links.Linker` knows.

A *demand* travels with each hop: what the condition requires of the value
(``true``; ``== "marlin"`` after ``x.is_marlin()``; ``in`` a list), which
becomes the origin's :class:`~miner.model.Constraint`.
"""

from __future__ import annotations

import ast
import builtins

from miner.analysis.code import dotted, literal_text
from miner.analysis.condition import Reach
from miner.analysis.config import Option
from miner.analysis.facts import RepoFacts
from miner.analysis.links import Linker, Read
from miner.analysis.origins import kinds
from miner.analysis.origins.bindings import follow_bindings, follow_self, follow_writers
from miner.analysis.origins.calls import trace_call, trace_parameter
from miner.analysis.origins.overloads import NamedCalls
from miner.analysis.origins.source import Binding, Module, Modules
from miner.analysis.origins.walk import (
    Place,
    Walk,
    chain_of,
    environ,
    flip,
    from_config,
    polar,
    satisfiable,
    show,
    unparsed,
)
from miner.model import (
    ANY,
    Constraint,
    ConstraintOp,
    Guard,
    Hop,
    Origin,
    OriginKind,
    OriginReason,
)

#: Most hops from the site to an origin; the trace says ``depth-limit`` beyond.
MAX_DEPTH = 7
#: Most steps (expressions resolved) for one read: a bound on the work.
MAX_STEPS = 150

_BUILTINS = frozenset(dir(builtins))
_COMPARE: dict[type, ConstraintOp] = {
    ast.Eq: "==",
    ast.NotEq: "!=",
    ast.Lt: "<",
    ast.LtE: "<=",
    ast.Gt: ">",
    ast.GtE: ">=",
    ast.In: "in",
    ast.NotIn: "not in",
}

#: The op of a comparison read from its right operand (``0 < x`` is ``x > 0``).
_MIRRORED: dict[ConstraintOp | None, ConstraintOp] = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}


class Tracer:
    """Resolves expressions of one commit to origins (see the module doc)."""

    def __init__(
        self, modules: Modules, linker: Linker, facts: RepoFacts, requests: dict[str, str]
    ) -> None:
        self.modules = modules
        self.linker = linker
        self.config = linker.config
        self.facts = facts
        self.requests = requests
        """Request field name -> its class (``""`` when several classes have it)."""
        self.memo: dict[tuple[object, ...], Walk] = {}
        """The trace of a condition atom at a guard, by (path, scope, line,
        atom, negated, kind): every site after the guard reads it; and of an
        atom around a call of a site's function, by ``("call", ...)``."""
        self.overloads: dict[tuple[str, str, int], list[tuple[Module, ast.Call]] | None] = {}
        """The calls that bind to a function whose name is defined more than
        once, by (``__qualname__``, line) (:func:`~miner.analysis.origins.calls.function_calls`)."""
        self.reaches: dict[tuple[tuple[Guard, ...], tuple[Guard, ...]], Reach] = {}
        """The condition of guards and exits (:func:`~miner.analysis.condition.reach_of`)."""
        self._reads: dict[tuple[str, str, frozenset[str]], Read | None] = {}
        """The first read :meth:`Linker.reads_in` finds in a text, by (text,
        file, the names holding a view of the arguments object there)."""
        self.named = NamedCalls(modules, (n for n, c in facts.definitions.items() if c > 1))
        """The calls of each name defined more than once."""
        self.holders: dict[str, str] | None = None
        """Class name -> the options class carrying it as a field's type
        (:func:`~miner.analysis.origins.bindings._holders`), built on first use."""

    # ------------------------------------------------------------ entry points

    def trace(
        self, node: ast.expr, place: Place, demand: Constraint, walk: Walk, chain: tuple[Hop, ...]
    ) -> None:
        """Every origin of ``node``'s value at ``place`` that can meet ``demand``, into ``walk``."""
        walk.steps += 1
        if walk.steps > MAX_STEPS or len(chain) > MAX_DEPTH:
            self.stop(walk, node, chain, "depth-limit", place)
            return
        if isinstance(node, ast.Constant):
            if len(chain) > 1 and satisfiable(node.value, demand):
                self.add(walk, OriginKind.CONSTANT, repr(node.value), chain, demand)
            return
        if len(chain) > 1 and _literal(node):
            self.add(walk, OriginKind.CONSTANT, unparsed(node), chain, demand)
            return
        handler = _DISPATCH.get(type(node))
        if handler is None:
            for child in ast.iter_child_nodes(node):  # an operand of arithmetic, a display
                if isinstance(child, ast.expr) and not isinstance(child, ast.Constant):
                    self.trace(child, place, ANY, walk, chain)
            return
        handler(self, node, place, demand, walk, chain)  # type: ignore[operator]

    # ------------------------------------------------------------ structure

    def _boolop(
        self, node: ast.BoolOp, place: Place, demand: Constraint, walk: Walk, chain: tuple[Hop, ...]
    ) -> None:
        keep = (isinstance(node.op, ast.And) and demand.op == "true") or (
            isinstance(node.op, ast.Or) and demand.op == "false"
        )
        for value in node.values:
            self.trace(value, place, demand if keep else ANY, walk, chain)

    def _unary(
        self,
        node: ast.UnaryOp,
        place: Place,
        demand: Constraint,
        walk: Walk,
        chain: tuple[Hop, ...],
    ) -> None:
        inner = flip(demand) if isinstance(node.op, ast.Not) else ANY
        self.trace(node.operand, place, inner, walk, chain)

    def _ifexp(
        self, node: ast.IfExp, place: Place, demand: Constraint, walk: Walk, chain: tuple[Hop, ...]
    ) -> None:
        self.trace(node.test, place, ANY, walk, chain)
        self.trace(node.body, place, demand, walk, chain)
        self.trace(node.orelse, place, demand, walk, chain)

    def _comprehension(
        self,
        node: ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp,
        place: Place,
        demand: Constraint,
        walk: Walk,
        chain: tuple[Hop, ...],
    ) -> None:
        """The iterables of a comprehension, and its tests and items without
        the names its ``for`` clauses bind."""
        bound = {
            n.id for g in node.generators for n in ast.walk(g.target) if isinstance(n, ast.Name)
        }
        added = bound - walk.hidden
        walk.hidden |= added
        try:
            for generator in node.generators:
                self.trace(generator.iter, place, ANY, walk, chain)
                for test in generator.ifs:
                    self.trace(test, place, ANY, walk, chain)
            items = [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
            for item in items:
                self.trace(item, place, ANY, walk, chain)
        finally:
            walk.hidden -= added

    def _compare(
        self,
        node: ast.Compare,
        place: Place,
        demand: Constraint,
        walk: Walk,
        chain: tuple[Hop, ...],
    ) -> None:
        if len(node.ops) != 1:
            for part in (node.left, *node.comparators):
                self.trace(part, place, ANY, walk, chain)
            return
        left, right, op = node.left, node.comparators[0], node.ops[0]
        if (
            environ(right)
            and isinstance(left, ast.Constant)
            and isinstance(op, (ast.In, ast.NotIn))
        ):
            var = literal_text(left)
            if var:
                is_set: ConstraintOp = "set" if isinstance(op, ast.In) else "unset"
                self.env(walk, var, chain, polar(Constraint(is_set), demand))
                return
        values = self._values(right, place, keys=isinstance(op, (ast.In, ast.NotIn)))
        subject = left
        name = _COMPARE.get(type(op))
        if values is None and not isinstance(op, (ast.In, ast.NotIn)):
            values, subject = self._values(left, place), right
            name = _MIRRORED.get(name, name)  # 0 < x: x > 0
        wanted: Constraint
        if (
            isinstance(op, (ast.Is, ast.IsNot))
            and isinstance(right, ast.Constant)
            and right.value is None
        ):
            wanted = Constraint("is None" if isinstance(op, ast.Is) else "is not None")
        elif values is not None and name is not None:
            wanted = Constraint(name, values)
        else:
            self.trace(left, place, ANY, walk, chain)
            self.trace(right, place, ANY, walk, chain)
            return
        self.trace(subject, place, polar(wanted, demand), walk, chain)

    def _module_value(
        self, name: str, module: Module, hops: int = 2, local: list[Binding] | None = None
    ) -> ast.expr | None:
        """The value a module (or the function whose bindings of ``name`` are
        ``local``) binds ``name`` to once, through at most ``hops`` imports
        from the repository's modules; None when not one such value."""
        binds = local or module.globals.get(name, [])
        if len(binds) != 1:
            return None
        bind = binds[0]
        statement = bind.statement
        if bind.value is not None:
            return bind.value
        if hops and isinstance(statement, ast.ImportFrom) and statement.level == 0:
            alias = next((a for a in statement.names if (a.asname or a.name) == name), None)
            path = self.modules.path_of(statement.module or "")
            target = self.modules.get(path) if path else None
            if alias is not None and target is not None:
                return self._module_value(alias.name, target, hops - 1)
        return None

    def _values(self, node: ast.expr, place: Place, keys: bool = False) -> tuple[str, ...] | None:
        """The literal values of a comparison operand: a literal, a tuple,
        list or set of them, or a module constant bound once to one; with
        ``keys`` (the right of ``in``), the literal keys of a dict too
        (``raw not in {"fp16": torch.float16, ...}``)."""
        if isinstance(node, ast.Name):
            local = place.function.bindings(node.id) if place.function else []
            node = self._module_value(node.id, place.module, local=local) or node
        if isinstance(node, ast.Constant):
            return (show(node.value),)
        if keys and isinstance(node, ast.Dict):
            if node.keys and all(isinstance(k, ast.Constant) for k in node.keys):
                return tuple(show(k.value) for k in node.keys if isinstance(k, ast.Constant))
            return None
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            items = [e for e in node.elts if isinstance(e, ast.Constant)]
            if len(items) == len(node.elts):
                return tuple(show(e.value) for e in items)
        return None

    # ------------------------------------------------------------ reads

    def _name(
        self, node: ast.Name, place: Place, demand: Constraint, walk: Walk, chain: tuple[Hop, ...]
    ) -> None:
        name = node.id
        if name in walk.hidden:
            return
        if name in ("True", "False", "None") or (
            name in _BUILTINS and not self._bound(name, place)
        ):
            return
        for param, arg, caller in place.bound:
            if param == name:
                hop = Hop(caller.path, caller.line, f"{name}={unparsed(arg)}")
                self.trace(arg, caller, demand, walk, (*chain, hop))
                return
        function = place.function
        if function is not None:
            binds = [b for b in function.bindings(name) if b.line < place.line or b.kind == "for"]
            if binds:
                follow_bindings(self, binds, name, place, demand, walk, chain)
                return
            if name in function.params and name in kinds.CHECKPOINT_PARAMS:
                self.add(walk, OriginKind.CHECKPOINT, name, chain, demand)
                return
            holder = kinds.config_class(function.owner, place.module.tree)
            if name in function.params and holder and function.node.name == "__init__":
                owner = f"config.json ({holder})"
                self.add(walk, OriginKind.MODEL_CONFIG, name, chain, demand, owner=owner)
                return
            if name in function.params:
                trace_parameter(self, name, place, demand, walk, chain)
                return
        binds = place.module.globals.get(name, [])
        if binds:
            follow_bindings(
                self, binds, name, Place(place.module, None, place.line), demand, walk, chain
            )
            return
        if self.linked(node, place, demand, walk, chain):
            return
        self.stop(walk, node, chain, "no-binding", place)

    def _bound(self, name: str, place: Place) -> bool:
        if place.function is not None and (
            place.function.bindings(name) or name in place.function.params
        ):
            return True
        return bool(place.module.globals.get(name))

    def _attribute(
        self,
        node: ast.Attribute,
        place: Place,
        demand: Constraint,
        walk: Walk,
        chain: tuple[Hop, ...],
    ) -> None:
        parts = chain_of(node)
        spelled = dotted(node) or ".".join(parts)
        if spelled and kinds.hardware_probe(spelled, called=False):
            self.add(walk, OriginKind.HARDWARE, unparsed(node), chain, demand)
            return
        if node.attr == "__version__":
            top = (dotted(node.value) or node.attr).split(".")[0]
            self.add(walk, OriginKind.PACKAGE, top, chain, demand, owner=kinds.distribution(top))
            return
        if self._class_option(node, place, demand, walk, chain):
            return
        if self.linked(node, place, demand, walk, chain):
            return
        found = kinds.config_field(parts)
        if found is not None:
            self.add(walk, OriginKind.MODEL_CONFIG, found[0], chain, demand, owner=found[1])
            return
        if self._request(node, parts, place, demand, walk, chain):
            return
        if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
            follow_self(self, node, place, demand, walk, chain)
            return
        if self._member(node, place, demand, walk, chain):
            return
        follow_writers(self, node, place, demand, walk, chain)

    def _member(
        self,
        node: ast.Attribute,
        place: Place,
        demand: Constraint,
        walk: Walk,
        chain: tuple[Hop, ...],
    ) -> bool:
        """``Enum.MEMBER`` (an attribute of a class of the module or imported
        by name): a constant, left out when it cannot meet ``demand``
        (``MoeRunnerBackend.AUTO`` is not ``marlin``)."""
        base = node.value
        if not isinstance(base, ast.Name) or not base.id[:1].isupper():
            return False
        binds = place.module.globals.get(base.id, [])
        if not binds or any(b.kind not in ("class", "import") for b in binds):
            return False
        member = node.attr.lower()
        if demand.op in ("==", "in") and member not in {v.lower() for v in demand.values}:
            return True
        if demand.op in ("!=", "not in") and member in {v.lower() for v in demand.values}:
            return True
        self.add(walk, OriginKind.CONSTANT, unparsed(node), chain, demand)
        return True

    def _subscript(
        self,
        node: ast.Subscript,
        place: Place,
        demand: Constraint,
        walk: Walk,
        chain: tuple[Hop, ...],
    ) -> None:
        if self.linked(node, place, demand, walk, chain):
            return
        key = literal_text(node.slice) if isinstance(node.slice, ast.Constant) else None
        parts = chain_of(node.value)
        if key and parts and parts[-1] in kinds.MODEL_CONFIG_HOLDERS | kinds.QUANT_CONFIG_HOLDERS:
            found = kinds.config_field([*parts, key])
            if found is not None:
                self.add(walk, OriginKind.MODEL_CONFIG, found[0], chain, demand, owner=found[1])
                return
        self.trace(node.value, place, demand, walk, chain)
        if not isinstance(node.slice, ast.Constant):
            self.trace(node.slice, place, ANY, walk, chain)

    def _call(
        self, node: ast.Call, place: Place, demand: Constraint, walk: Walk, chain: tuple[Hop, ...]
    ) -> None:
        trace_call(self, node, place, demand, walk, chain)

    # ------------------------------------------------------------ settings

    def _class_option(
        self,
        node: ast.Attribute,
        place: Place,
        demand: Constraint,
        walk: Walk,
        chain: tuple[Hop, ...],
    ) -> bool:
        """``self.x`` in an options class that has the setting ``x`` itself
        (the diffusion ``SamplingParams.boundary_ratio``, not the diffusion
        ``ServerArgs`` field of the same name)."""
        function = place.function
        if not (
            isinstance(node.value, ast.Name)
            and node.value.id == "self"
            and function
            and function.owner
        ):
            return False
        owner = function.owner.name
        for opt in self.config.options_named(node.attr):
            if opt.owner == owner and opt.path == place.path:
                self.flag(walk, opt, chain, demand)
                return True
        return False

    def linked(
        self, node: ast.expr, place: Place, demand: Constraint, walk: Walk, chain: tuple[Hop, ...]
    ) -> bool:
        """A read the :class:`Linker` knows: a setting, a derived setting or a variable."""
        text = unparsed(node)
        key = (text, place.path, self.config.views_in(place.path, place.line))
        if key not in self._reads:
            reads = self.linker.reads_in(text, place.path, place.line)
            self._reads[key] = reads[0] if reads else None
        read = self._reads[key]
        if read is None or read.text != text:
            return False
        self._read(read, place, demand, walk, chain)
        return True

    def _read(
        self, read: Read, place: Place, demand: Constraint, walk: Walk, chain: tuple[Hop, ...]
    ) -> None:
        if read.kind == "env":
            self.env(walk, read.target, chain, demand)
        elif read.kind == "option":
            opt = self.config.option_in(read.target, read.option_path)
            if opt is not None:
                self.flag(walk, opt, chain, demand)
        else:
            self._derived(read.target, place, demand, walk, chain)

    def _derived(
        self, name: str, place: Place, demand: Constraint, walk: Walk, chain: tuple[Hop, ...]
    ) -> None:
        derived = self.config.derived_setting(name) or self.linker.predicates.get(name)
        if derived is None:
            return
        hop = Hop(derived.path, derived.line, derived.expression)
        for cond in derived.conditions:
            opt = self.config.option(cond.name, place.path)
            wanted = (
                from_config(cond.op, cond.values)
                if demand.op == "true" and derived.mode == "all"
                else ANY
            )
            if cond.env:
                self.env(walk, cond.name, (*chain, hop), wanted)
            elif opt is not None:
                self.flag(walk, opt, (*chain, hop), wanted)

    # ------------------------------------------------------------ results

    def flag(self, walk: Walk, opt: Option, chain: tuple[Hop, ...], demand: Constraint) -> None:
        """The origin of the option ``opt``: its flag (or name), owner,
        definition, default; a ``request`` field when only a request gives
        it (:func:`~miner.analysis.origins.kinds.setting_kind`)."""
        name = opt.flag or opt.name
        self.add(
            walk,
            kinds.setting_kind(opt.owner, flagged=opt.flag is not None),
            name,
            chain,
            demand,
            owner=opt.owner,
            defined=f"{opt.path}:{opt.line}",
            default=opt.default,
        )

    def env(self, walk: Walk, name: str, chain: tuple[Hop, ...], demand: Constraint) -> None:
        """An environment variable's origin, with its default and where it is defined."""
        var = self.config.env_var(name)
        defined = f"{var.path}:{var.line}" if var is not None and var.path else ""
        self.add(
            walk,
            OriginKind.ENV,
            name,
            chain,
            demand,
            owner=(var.registry or "") if var else "",
            defined=defined,
            default=var.default if var else None,
        )

    def add(
        self,
        walk: Walk,
        kind: OriginKind,
        name: str,
        chain: tuple[Hop, ...],
        demand: Constraint,
        **extra: object,
    ) -> None:
        """One origin found (the same kind, name and constraint only once)."""
        if any(o.kind is kind and o.name == name and o.constraint == demand for o in walk.found):
            return
        walk.found.append(
            Origin(kind, name, walk.read, walk.role, constraint=demand, chain=chain, **extra)  # type: ignore[arg-type]
        )

    def stop(
        self, walk: Walk, node: ast.AST, chain: tuple[Hop, ...], reason: OriginReason, place: Place
    ) -> None:
        """The trace ends at ``node`` for ``reason`` (an ``unknown`` origin)."""
        text = unparsed(node)
        if any(o.kind is OriginKind.UNKNOWN and o.name == text for o in walk.found):
            return
        hop = Hop(place.path, place.line, text)
        walk.found.append(
            Origin(
                OriginKind.UNKNOWN, text, walk.read, walk.role, chain=(*chain, hop), reason=reason
            )  # type: ignore[arg-type]
        )

    def _request(
        self,
        node: ast.Attribute,
        parts: list[str],
        place: Place,
        demand: Constraint,
        walk: Walk,
        chain: tuple[Hop, ...],
    ) -> bool:
        """``request.x`` (a request holder's field), or ``self.x`` in a request
        class; ``<holder>.sampling_params.x`` where ``x`` is a field of a
        sampling parameters class (the diffusion ``SamplingParams`` and its
        subclasses: a flag of ``sglang generate`` or a request field)."""
        holder = parts[-2] if len(parts) >= 2 else ""
        if holder == "sampling_params":
            fields = [
                o for o in self.config.options_named(node.attr) if kinds.sampling_class(o.owner)
            ]
            if fields:
                self.flag(walk, fields[0], chain, demand)
                return True
        if node.attr not in self.requests:
            return False
        function = place.function
        in_request = (
            holder == "self"
            and function is not None
            and function.owner is not None
            and kinds.REQUEST_FILES.search(place.path) is not None
        )
        if holder not in kinds.REQUEST_HOLDERS and not in_request:
            return False
        owner = (
            function.owner.name
            if in_request and function and function.owner
            else self.requests[node.attr]
        )
        self.add(walk, OriginKind.REQUEST, node.attr, chain, demand, owner=owner)
        return True

    def internal(
        self, walk: Walk, node: ast.AST, chain: tuple[Hop, ...], demand: Constraint
    ) -> None:
        """Runtime state: a value the program computes (a call outside the repository)."""
        self.add(walk, OriginKind.INTERNAL, unparsed(node), chain, demand)


def _literal(node: ast.expr) -> bool:
    """A display of constants only (``["fa3", "triton"]``, ``{"a": 1}``)."""
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return all(isinstance(e, ast.Constant) for e in node.elts)
    if isinstance(node, ast.Dict):
        return all(isinstance(e, ast.Constant) for e in (*node.keys, *node.values))
    return False


_DISPATCH = {
    ast.BoolOp: Tracer._boolop,
    ast.UnaryOp: Tracer._unary,
    ast.IfExp: Tracer._ifexp,
    ast.Compare: Tracer._compare,
    ast.Name: Tracer._name,
    ast.Attribute: Tracer._attribute,
    ast.Subscript: Tracer._subscript,
    ast.Call: Tracer._call,
    ast.ListComp: Tracer._comprehension,
    ast.SetComp: Tracer._comprehension,
    ast.GeneratorExp: Tracer._comprehension,
    ast.DictComp: Tracer._comprehension,
}
