"""Origins: every value a site's path condition and message read, traced to what decides it.

The card layer reads facts -> **origins** -> findings -> words. For each
error's primary site, :func:`trace_origins` takes every atom of its reach
condition (:func:`miner.analysis.condition.site_reach`: guards and early
exits) and every placeholder of its message, and resolves each name,
attribute and call in them (:class:`~miner.analysis.origins.tracer.Tracer`)
to :class:`~miner.model.Origin` records of a closed set of kinds: a flag
of the right options class, an environment variable, a model config field,
a request field, the hardware, a package, a constant, runtime state, or
``unknown`` with why the trace stopped. It also finds the ``logged`` fact
(:mod:`~miner.analysis.origins.caught`) and the ``unreachable`` fact
(:func:`site_unreachable`).

A pure function of the commit's files (path -> bytes), its sites and its
:class:`~miner.analysis.facts.RepoFacts`; no I/O.
"""

from __future__ import annotations

import ast
import gc
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace

from miner.analysis.callers import Caller, target_name
from miner.analysis.code import dotted
from miner.analysis.condition import Reach, reach_of
from miner.analysis.facts import RepoFacts
from miner.analysis.links import Linker
from miner.analysis.origins import dispatch, kinds
from miner.analysis.origins.bindings import follow_self, package_origins
from miner.analysis.origins.calls import function_calls
from miner.analysis.origins.caught import logged
from miner.analysis.origins.restated import restated
from miner.analysis.origins.source import Module, Modules
from miner.analysis.origins.tracer import MAX_DEPTH, Tracer
from miner.analysis.origins.walk import Place, Walk, show, unparsed
from miner.lifecycle import fork_map
from miner.model import (
    ANY,
    Caught,
    Condition,
    Constraint,
    Error,
    Guard,
    Hop,
    Origin,
    OriginKind,
    Site,
    Unreachable,
)

__all__ = [
    "MAX_DEPTH",
    "MAX_ORIGINS",
    "Traced",
    "site_origins",
    "site_unreachable",
    "trace_origins",
]

#: Most origins kept per site (condition first, then message).
MAX_ORIGINS = 40
#: Fewer errors than this are traced in this process (a pool costs more).
PARALLEL_MIN = 1000
#: Most calls of a site's function whose conditions are traced.
MAX_CALLERS = 3
_RAISED = re.compile(r"\(except at line (\d+)\)$")


@dataclass(frozen=True, slots=True)
class Traced:
    """The origins stage's output, by error id."""

    origins: Mapping[str, tuple[Origin, ...]] = field(default_factory=dict)
    logged: Mapping[str, Caught] = field(default_factory=dict)
    unreachable: Mapping[str, Unreachable] = field(default_factory=dict)


def request_fields(modules: Modules) -> dict[str, str]:
    """Field name -> its request class (``""`` when several have it): the
    annotated fields and ``__init__`` parameters of the classes of the
    request files (:data:`~miner.analysis.origins.kinds.REQUEST_FILES`)."""
    owners: dict[str, set[str]] = {}
    for path in sorted(p for p in modules.files if kinds.REQUEST_FILES.search(p)):
        module = modules.get(path)
        if module is None:
            continue
        for name, group in module.classes.items():
            for cls in group:
                for stmt in cls.body:
                    if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                        owners.setdefault(stmt.target.id, set()).add(name)
                init = module.method(cls, "__init__")
                for param in init.params[1:] if init else ():
                    owners.setdefault(param, set()).add(name)
    return {f: (next(iter(c)) if len(c) == 1 else "") for f, c in owners.items()}


def _atom_place(module: Module, site: Site, line: int) -> Place:
    return Place(module, module.function_at(site.line, site.scope), line)


def _atom(
    tracer: Tracer,
    atom: Condition,
    line: int,
    place: Place,
    module: Module,
    before: tuple[Hop, ...] = (),
) -> Walk:
    """The trace of one atom of a condition read at ``place`` (the guard's
    ``line``), after the hops ``before``: its origins and the constants
    it excluded."""
    walk = Walk(atom.atom if atom.kind == "expr" else atom.shown, "condition")
    demand = Constraint("false" if atom.negated else "true")
    chain = (*before, Hop(module.path, line, atom.shown))
    if atom.kind == "raised":
        _raised(tracer, atom, module, walk, chain)
        return walk
    text = atom.atom
    if atom.kind == "loop":
        text, demand = text[len("loop:") :].rsplit(" in ", 1)[-1], ANY
    elif atom.kind == "match":
        text, demand = text[len("match:") :].split("\x1f", 1)[0], ANY
    try:
        node = ast.parse(text, mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        tracer.stop(walk, ast.Name(text), chain, "unparsed", place)
        return walk
    tracer.trace(node, place, demand, walk, chain)
    return walk


def _raised(
    tracer: Tracer, atom: Condition, module: Module, walk: Walk, chain: tuple[Hop, ...]
) -> None:
    """A ``try`` body raising X: the packages it imports for an import
    error, else the runtime state of the body."""
    m = _RAISED.search(atom.atom)
    line = int(m.group(1)) if m else 0
    node = module.try_of_handler(line)
    if node is not None:
        demand = Constraint("installed" if atom.negated else "missing")
        if package_origins(tracer, module, node, demand, walk, chain):
            return
    tracer.internal(walk, ast.Name(atom.shown), chain, ANY)


def _site_calls(tracer: Tracer, site: Site) -> list[Caller]:
    """The calls of the site's function the facts found by its name."""
    target = target_name(site.scope) or ""
    return [
        c for c in tracer.facts.callers.get(target, ()) if c.target.rsplit(".", 1)[-1] == target
    ]


def _call_reach(tracer: Tracer, call: Caller) -> tuple[Module, Reach] | None:
    """The module of ``call`` and the condition around it
    (:attr:`~miner.analysis.facts.RepoFacts.call_reach`), or None."""
    reach = tracer.facts.call_reach.get((call.target, call.path, call.line))
    module = tracer.modules.get(call.path)
    if reach is None or module is None:
        return None
    return module, _reach(tracer, reach.guards, reach.exits)


def _reach(tracer: Tracer, guards: tuple[Guard, ...], exits: tuple[Guard, ...]) -> Reach:
    """:func:`~miner.analysis.condition.reach_of` the guards and exits,
    memoized (the sites after the same guards share it; each error reads
    its site's twice)."""
    key = (guards, exits)
    found = tracer.reaches.get(key)
    if found is None:
        found = tracer.reaches[key] = reach_of(guards, exits)
    return found


def _call_atom_walk(
    tracer: Tracer, site: Site, call: Caller, module: Module, built: Reach, atom: Condition
) -> tuple[int, Walk]:
    """(guard line, trace) of one atom of the condition around ``call`` of
    ``site``'s function, memoized (the origins and the ``unreachable`` fact
    read the same trace)."""
    guard = built.origin(atom)
    line = guard.line if guard else call.line
    key = ("call", site.path, site.line, call.path, call.line, line, atom.atom, atom.negated)
    if key not in tracer.memo:
        at = Place(module, module.function_at(call.line, call.scope), line)
        before = (Hop(site.path, site.line, site.scope),)
        tracer.memo[key] = _atom(tracer, atom, line, at, module, before)
    walk: Walk = tracer.memo[key]
    return line, walk


def _caller_origins(tracer: Tracer, site: Site) -> list[Origin]:
    """The origins of the conditions around the calls of the site's function
    (:attr:`~miner.analysis.facts.RepoFacts.call_reach`, at most
    :data:`MAX_CALLERS` calls), role ``caller``."""
    found: list[Origin] = []
    for call in _site_calls(tracer, site)[:MAX_CALLERS]:
        around = _call_reach(tracer, call)
        if around is None:
            continue
        module, built = around
        for atom in built.condition.atoms():
            _, walked = _call_atom_walk(tracer, site, call, module, built, atom)
            found += [replace(o, role="caller") for o in walked.found]
    return found


def site_origins(tracer: Tracer, site: Site, error: Error | None = None) -> tuple[Origin, ...]:
    """Every origin of ``site``'s condition and of its message's placeholders
    (``error``'s template when given), at most :data:`MAX_ORIGINS`."""
    module = tracer.modules.get(site.path)
    if module is None:
        return ()
    reach = _reach(tracer, site.guards, site.exits)
    found: list[Origin] = []
    for atom in reach.condition.atoms():
        found += _atom_walk(tracer, module, site, reach, atom).found
    found += _caller_origins(tracer, site)
    parts = error.message_parts if error is not None else site.message_parts
    place = _atom_place(module, site, site.line)
    for part in parts:
        if part.expr is None:
            continue
        walk = Walk(part.expr, "message")
        try:
            node = ast.parse(part.expr, mode="eval").body
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        tracer.trace(node, place, ANY, walk, (Hop(site.path, site.line, part.expr),))
        found += walk.found
    return tuple(dict.fromkeys(found))[:MAX_ORIGINS]


def _atom_walk(tracer: Tracer, module: Module, site: Site, reach: Reach, atom: Condition) -> Walk:
    """The trace of one atom of ``site``'s reach condition, memoized (the
    sites after one exit share its atom)."""
    guard = reach.origin(atom)
    line = guard.line if guard else site.line
    key = (site.path, site.scope, line, atom.atom, atom.negated, atom.kind)
    if key not in tracer.memo:
        tracer.memo[key] = _atom(tracer, atom, line, _atom_place(module, site, line), module)
    walk: Walk = tracer.memo[key]
    return walk


def site_unreachable(tracer: Tracer, site: Site) -> Unreachable | None:
    """Why no in-tree call can reach ``site``, or None: an atom of its
    condition's top-level ``and`` that no call can make true
    (:func:`_never_true`), else such an atom in the condition around every
    call of its function (at most :data:`MAX_CALLERS` calls); both only
    when every call of the function can be listed (:func:`_calls_known`).
    Else every call made only where the site's condition cannot hold
    (:func:`_callers_exclude`), or only after the caller required the
    opposite of one of its conjuncts on the same arguments
    (:func:`_checked_first`). Else the ``else`` of an exhaustive dispatch
    (:func:`_dispatch_unreachable`). Else a function no file calls or names
    (:func:`_uncalled`)."""
    module = tracer.modules.get(site.path)
    if module is None:
        return None
    reach = _reach(tracer, site.guards, site.exits)
    if _calls_known(tracer, module, site.scope, site.line):
        for conjunct in reach.condition.conjuncts():
            walk = _atom_walk(tracer, module, site, reach, conjunct) if _plain(conjunct) else None
            if walk is not None and _never_true(walk):
                guard = reach.origin(conjunct)
                line = guard.line if guard else site.line
                excluded = tuple(dict.fromkeys(walk.excluded))
                return Unreachable(site.path, line, conjunct.shown, excluded)
        found = _callers_unreachable(tracer, site)
        if found is not None:
            return found
        found = _callers_exclude(tracer, module, site, reach) or _checked_first(
            tracer, module, site, reach
        )
        if found is not None:
            return found
    return _dispatch_unreachable(tracer, module, site, reach) or _uncalled(tracer, module, site)


#: Pairs of constraint ops no value meets both of.
_OPPOSED = frozenset(
    {("true", "false"), ("is None", "is not None"), ("true", "is None"), ("set", "unset")}
)


def disjoint(one: Constraint, other: Constraint) -> bool:
    """Whether no value meets both constraints: ``true`` and ``false``,
    ``is None`` and ``is not None`` (or ``true``), ``==``/``in`` values
    that share none, ``==``/``in`` values all of which the other's
    ``!=``/``not in`` excludes."""
    if (one.op, other.op) in _OPPOSED or (other.op, one.op) in _OPPOSED:
        return True
    equal, unequal = ("==", "in"), ("!=", "not in")
    mine, theirs = set(one.values), set(other.values)
    if one.op in equal and other.op in equal:
        return not mine & theirs
    if one.op in equal and other.op in unequal:
        return mine <= theirs
    if one.op in unequal and other.op in equal:
        return theirs <= mine
    return False


def _sole(walk: Walk) -> Origin | None:
    """The one origin a conjunct's trace found (its kind neither ``unknown``
    nor ``constant``), or None when it found none or several."""
    found = {(o.kind, o.name, o.owner): o for o in walk.found}
    if len(found) != 1 or walk.indirect:
        return None
    (origin,) = found.values()
    if origin.kind in (OriginKind.UNKNOWN, OriginKind.CONSTANT) or origin.constraint == ANY:
        return None
    return origin


def _callers_exclude(
    tracer: Tracer, module: Module, site: Site, reach: Reach
) -> Unreachable | None:
    """Every call of the site's function (all of them known, at most
    :data:`MAX_CALLERS`) is made only when a conjunct of its own condition
    holds that a conjunct of the site's condition contradicts: both read
    the one same origin, with :func:`disjoint` constraints (the only call
    of a function asserting ``_is_cuda`` is under ``if is_cuda():``).
    ``condition`` is the first call's conjunct, ``guard`` the site's."""
    mine = [
        (c, o)
        for c in reach.condition.conjuncts()
        if _plain(c) and (o := _sole(_atom_walk(tracer, module, site, reach, c))) is not None
    ]

    def excluded(call: Caller, line: int, conjunct: Condition, walk: Walk) -> Unreachable | None:
        theirs = _sole(walk)
        own = _contradicted(mine, theirs) if theirs is not None else None
        if own is None or theirs is None:
            return None
        return Unreachable(call.path, line, conjunct.shown, (theirs,), guard=own.shown)

    hits = _every_call(tracer, site, excluded, known=False) if mine else None
    return hits[0] if hits else None


def _checked_first(tracer: Tracer, module: Module, site: Site, reach: Reach) -> Unreachable | None:
    """Every call of the site's function (at most :data:`MAX_CALLERS`) is
    made only after its caller required the opposite of a conjunct of the
    site's condition, written with the call's arguments
    (:func:`~miner.analysis.origins.restated.restated`)."""
    function = module.function_at(site.line, site.scope)
    calls = _site_calls(tracer, site)
    if function is None or function.qualname != site.scope or not calls:
        return None
    if len(calls) > MAX_CALLERS:
        return None
    arounds = []
    for call in calls:
        around = _call_reach(tracer, call)
        if around is None:
            return None
        arounds.append((call, *around))
    mine = [c for c in reach.condition.conjuncts() if _plain(c)]
    return restated(function, mine, arounds) if mine else None


def _contradicted(mine: list[tuple[Condition, Origin]], theirs: Origin) -> Condition | None:
    """The first of the site's conjuncts whose origin is ``theirs`` with a
    constraint :func:`disjoint` from what the call needs of it."""
    for conjunct, origin in mine:
        if _same(origin, theirs) and disjoint(origin.constraint, theirs.constraint):
            return conjunct
    return None


def _same(one: Origin, other: Origin) -> bool:
    """Whether two origins are the same value (kind, name and owner)."""
    return (one.kind, one.name, one.owner) == (other.kind, other.name, other.owner)


#: Decorators that leave a function called only by its name.
_PLAIN_DECORATORS = frozenset({"staticmethod", "classmethod", "cache", "lru_cache", "cached"})
#: Bases that call no method of their subclasses by a name of their own.
_PLAIN_BASES = frozenset({"object", "ABC", "Generic", "Protocol"})


def _uncalled(tracer: Tracer, module: Module, site: Site) -> Unreachable | None:
    """The site's function is one no file of the commit calls or names but
    by its ``def`` (:attr:`~miner.analysis.facts.RepoFacts.unmentioned`).
    Not for a special method (``__init__``, ``_missing_``: Python calls
    those), a decorated function (the decorator may register it: a route,
    a kernel, a property), nor a method of a class with a base this file
    does not define (a framework may call it by its name: ``forward``,
    ``emit``, ``visit_Call``) or that a package's ``__init__`` names (its
    users call its methods)."""
    target = target_name(site.scope) or ""
    last = site.scope.rsplit(".", 1)[-1]
    if target not in tracer.facts.unmentioned or (last.startswith("_") and last.endswith("_")):
        return None
    function = module.function_at(site.line, site.scope)
    if function is None or function.qualname != site.scope:
        return None
    if any(_decorator_name(d) not in _PLAIN_DECORATORS for d in function.node.decorator_list):
        return None
    if function.owner is not None and not _own_class(tracer, module, function.owner, 0):
        return None
    return Unreachable(site.path, function.node.lineno, target, (), uncalled=True)


def _decorator_name(node: ast.expr) -> str:
    """The last name of a decorator (``functools.lru_cache(maxsize=2)`` -> ``lru_cache``)."""
    if isinstance(node, ast.Call):
        node = node.func
    return (dotted(node) or "").rsplit(".", 1)[-1]


def _own_class(tracer: Tracer, module: Module, cls: ast.ClassDef, depth: int) -> bool:
    """Whether ``cls`` is undecorated, has only bases that call no method by
    name (:data:`_PLAIN_BASES`) or such classes of ``module`` (three levels
    at most), and no package's ``__init__.py`` names it."""
    if cls.decorator_list or depth > 3 or tracer.modules.exported(cls.name):
        return False
    for base in cls.bases:
        name = dotted(base.value if isinstance(base, ast.Subscript) else base) or ""
        name = name.rsplit(".", 1)[-1]
        if name in _PLAIN_BASES:
            continue
        found = module.classes.get(name) or []
        if len(found) != 1 or not _own_class(tracer, module, found[0], depth + 1):
            return False
    return not cls.keywords


def _dispatch_unreachable(
    tracer: Tracer, module: Module, site: Site, reach: Reach
) -> Unreachable | None:
    """The site is the ``else`` of a chain whose branches handle every
    member of an enum, or every value of a flag that can reach it
    (:mod:`~miner.analysis.origins.dispatch`): ``subject`` names the enum
    or the flag, ``choices`` its values."""
    found = dispatch.branches(site.guards, site.exits)
    if found is None:
        return None
    enum = dispatch.enum_of(found)
    if enum is not None:
        members = dispatch.enum_members(tracer.modules, module, enum)
        if members is None or not set(members) <= set(found.handled):
            return None
        return Unreachable(site.path, found.line, found.subject, (), enum, members)
    origin = _subject_origin(tracer, module, site, found)
    if origin is None:
        return None
    options = tracer.config.options if origin.kind is OriginKind.FLAG else ()
    option = next(
        (
            o
            for o in options
            if (o.flag or o.name, f"{o.path}:{o.line}") == (origin.name, origin.defined)
        ),
        None,
    )
    domain = dispatch.flag_domain(option) if option is not None else None
    if domain is None:
        return None
    mine = [
        o
        for c in reach.condition.conjuncts()
        if _plain(c)
        for o in _atom_walk(tracer, module, site, reach, c).found
    ]
    if dispatch.left_values(domain, origin.name, mine, _calls_origins(tracer, site)):
        return None
    choices = tuple(show(v) for v in domain)
    return Unreachable(site.path, found.line, found.subject, (origin,), origin.name, choices)


def _subject_origin(
    tracer: Tracer, module: Module, site: Site, found: dispatch.Branches
) -> Origin | None:
    """The one origin of the read the branches test, or None. ``self.x`` is
    followed to every assignment of ``x`` in its class (not first to a
    setting of the same name), and only when no other file assigns ``.x``:
    ``RequestLogger.configure`` sets ``self.log_requests_level`` from a
    request, not only from ``--log-requests-level``."""
    walk = Walk(found.subject, "condition")
    place = _atom_place(module, site, found.line)
    chain = (Hop(site.path, found.line, found.subject),)
    node = found.node
    if (
        isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id == "self"
    ):
        if any(p != site.path for p in tracer.modules.attribute_writers(node.attr)):
            return None
        follow_self(tracer, node, place, ANY, walk, chain)
    if not walk.found:
        tracer.trace(node, place, ANY, walk, chain)
    if len({(o.kind, o.name, o.defined) for o in walk.found}) != 1:
        return None
    return walk.found[0]


def _calls_origins(tracer: Tracer, site: Site) -> list[list[Origin]] | None:
    """The origins of the top-level conjuncts around each call of the site's
    function, or None when those calls are not all known (or too many)."""
    module = tracer.modules.get(site.path)
    calls = _site_calls(tracer, site)
    if module is None or not calls or len(calls) > MAX_CALLERS:
        return None
    if not _calls_known(tracer, module, site.scope, site.line):
        return None
    found: list[list[Origin]] = []
    for call in calls:
        around = _call_reach(tracer, call)
        if around is None:
            return None
        at, built = around
        found.append(
            [
                o
                for c in built.condition.conjuncts()
                if _plain(c)
                for o in _call_atom_walk(tracer, site, call, at, built, c)[1].found
            ]
        )
    return found


def _plain(conjunct: Condition) -> bool:
    return conjunct.op == "atom" and conjunct.kind == "expr"


def _never_true(walk: Walk) -> bool:
    """The trace found no origin that can meet the demand, only constants
    written as the calls' arguments (or the default) that cannot
    (:attr:`Walk.excluded`), and no call gives anything else."""
    return not walk.found and bool(walk.excluded) and not walk.indirect


def _calls_known(tracer: Tracer, module: Module, scope: str, line: int) -> bool:
    """Whether every call of the function ``scope`` (spanning ``line`` of
    ``module``) can be listed: a function whose name is used only in calls
    (and, defined once, called from few enough files to list; defined more
    than once, at most :data:`MAX_CALLERS` calls bind to it:
    :func:`~miner.analysis.origins.calls.function_calls`)."""
    facts = tracer.facts
    target = target_name(scope)
    if not target or scope == "<module>":
        return False
    if facts.definitions.get(target, 1) > 1:
        function = module.function_at(line, scope)
        if function is None or function.qualname != scope:
            return False
        calls = function_calls(tracer, function, module.path)
        return calls is not None and len(calls) <= MAX_CALLERS
    return not (target in facts.referenced or target in facts.crowded or target in facts.uses)


def _callers_unreachable(tracer: Tracer, site: Site) -> Unreachable | None:
    """The site's function is called only where an atom of the call's own
    condition can never be true (every call; the first call's atom is kept)."""

    def never(call: Caller, line: int, conjunct: Condition, walk: Walk) -> Unreachable | None:
        if not _never_true(walk):
            return None
        return Unreachable(call.path, line, conjunct.shown, tuple(dict.fromkeys(walk.excluded)))

    found = _every_call(tracer, site, never, known=True)
    if not found:
        return None
    values = tuple(dict.fromkeys(v for f in found for v in f.values))
    return replace(found[0], values=values)


_Hit = Callable[[Caller, int, Condition, Walk], "Unreachable | None"]


def _every_call(tracer: Tracer, site: Site, hit: _Hit, known: bool) -> list[Unreachable] | None:
    """For every call of the site's function (at most :data:`MAX_CALLERS`),
    the first plain conjunct of the condition around it for which ``hit``
    gives a fact (``hit(call, guard line, conjunct, its trace)``), in call
    order; None when there is no call, too many, one whose condition is not
    known (with ``known``: or whose own function's calls are not all
    listed: :func:`_calls_known`), or one with no such conjunct."""
    calls = _site_calls(tracer, site)
    if not calls or len(calls) > MAX_CALLERS:
        return None
    found: list[Unreachable] = []
    for call in calls:
        around = _call_reach(tracer, call)
        if around is None or (known and not _calls_known(tracer, around[0], call.scope, call.line)):
            return None
        module, built = around
        made = None
        for conjunct in (c for c in built.condition.conjuncts() if _plain(c)):
            line, walk = _call_atom_walk(tracer, site, call, module, built, conjunct)
            made = hit(call, line, conjunct, walk)
            if made is not None:
                break
        if made is None:
            return None
        found.append(made)
    return found


@dataclass(frozen=True)
class _Job:
    """What tracing each error reads (built once; forked workers share it)."""

    tracer: Tracer
    modules: Modules
    facts: RepoFacts

    def calls_known(self, path: str, scope: str, line: int) -> bool:
        """Whether every call of the function ``scope`` spanning ``path:line``
        is listed (:func:`_calls_known`)."""
        module = self.modules.get(path)
        return module is not None and _calls_known(self.tracer, module, scope, line)

    def one(self, error: Error) -> _Row:
        site = error.primary
        found = logged(
            site, self.modules, self.facts.exceptions, self.facts.callers, self.calls_known
        )
        origins = site_origins(self.tracer, site, error)
        return error.error_id, origins, found, site_unreachable(self.tracer, site)


_Row = tuple[str, tuple[Origin, ...], Caught | None, Unreachable | None]


def _rows(
    files: Mapping[str, bytes], errors: list[Error], facts: RepoFacts, jobs: int
) -> list[_Row]:
    """One row per error (:meth:`_Job.one`), in the order of ``errors``.

    With ``jobs`` > 1, each worker gets one task: the errors of a run of
    files (by path), so that it parses the files of its own errors and
    few others (the trees a worker builds are its own; with tasks of mixed
    files, every worker would parse nearly every file). What the trace
    built is freed on return (the trees with their last reference, not by
    a collection)."""
    modules = Modules(files)
    linker = Linker(facts.config, dict(facts.predicates))
    tracer = Tracer(modules, linker, facts, request_fields(modules))
    modules.attribute_writers("")  # the indexes, built once before any fork
    modules.exported("")
    tracer.named.index()
    job = _Job(tracer, modules, facts)
    jobs = jobs if len(errors) >= PARALLEL_MIN else 1
    by_file = sorted(errors, key=lambda e: e.primary.path)
    rows = fork_map(jobs, job.one, by_file, -(-len(errors) // jobs))
    unparsed.cache_clear()
    found = {row[0]: row for row in rows}
    return [found[e.error_id] for e in errors]


@contextmanager
def _uncollected() -> Iterator[None]:
    """No garbage collection while the block runs (forks made in it
    included): the stage builds millions of syntax-tree nodes that live to
    its end and make no cycles, and each full collection would visit them
    all (it took three times the parsing's time)."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()


def trace_origins(
    files: Mapping[str, bytes], errors: Iterable[Error], facts: RepoFacts, jobs: int = 1
) -> Traced:
    """The origins and the ``logged`` fact of every error's primary site.

    ``files`` are the commit's ``.py`` files the facts read (path -> bytes);
    ``facts`` what :func:`miner.analysis.facts.collect` gathered from them.
    ``jobs`` > 1: the errors are traced in that many forked processes (the
    same result: each error's trace reads only the files and the facts)."""
    with _uncollected():
        rows = _rows(files, list(errors), facts, jobs)
    return Traced(
        origins={row[0]: row[1] for row in rows},
        logged={row[0]: row[2] for row in rows if row[2] is not None},
        unreachable={row[0]: row[3] for row in rows if row[3] is not None},
    )


def kind_counts(traced: Traced) -> dict[str, int]:
    """Origins per kind over every error (every kind, zero included)."""
    counts = dict.fromkeys((k.value for k in OriginKind), 0)
    for found in traced.origins.values():
        for origin in found:
            counts[origin.kind.value] += 1
    return counts
