"""Rules for errors a user does not meet as a refusal of their settings:
caught and logged, unreachable from in-tree calls, or an internal check
whose bug report needs the message's runtime fields and the flags that lead
there.
"""

from __future__ import annotations

from miner.analysis.findings.reading import Reading
from miner.model import Finding, OriginKind, Unreachable

#: Audiences whose errors are checks of the program itself.
INTERNAL_AUDIENCES = frozenset({"internal"})


def logged(reading: Reading) -> Finding | None:
    """**logged**: a handler in the same or a calling frame catches the
    error without re-raising it (:attr:`Analysis.logged`): the user sees at
    most a log line. ``values`` are the caught types; evidence the
    ``except`` line."""
    caught = reading.logged
    if caught is None:
        return None
    return Finding(
        kind="logged",
        rule="logged",
        values=(caught.types,) if caught.types else (),
        source="logs" if caught.logs else "",
        evidence=(f"{caught.path}:{caught.line}",),
    )


def _unreachable(reading: Reading, way: str) -> Unreachable | None:
    """The error's ``unreachable`` fact when it is of the kind ``way``
    (:attr:`~miner.model.Unreachable.way`), else None."""
    found = reading.unreachable
    return found if found is not None and found.way == way else None


def unreachable(reading: Reading) -> Finding | None:
    """**unreachable**: every in-tree call gives a constant the condition
    cannot accept (:attr:`Analysis.unreachable`); ``name`` is the atom,
    ``values`` the constants given, evidence the guard and the calls."""
    found = _unreachable(reading, "arguments")
    if found is None:
        return None
    calls = [f"{v.chain[-1].path}:{v.chain[-1].line}" for v in found.values if v.chain]
    return Finding(
        kind="unreachable",
        rule="unreachable",
        name=found.condition,
        values=tuple(dict.fromkeys(v.name for v in found.values)),
        evidence=tuple(dict.fromkeys([f"{found.path}:{found.line}", *calls])),
    )


def unreachable_dispatch(reading: Reading) -> Finding | None:
    """**unreachable-dispatch**: the site is the ``else`` of a chain whose
    branches handle every value of a flag or every member of an enum;
    ``name`` is that flag or enum, ``values`` its values, evidence the last
    branch before the ``else``."""
    found = _unreachable(reading, "dispatch")
    if found is None:
        return None
    return Finding(
        kind="unreachable",
        rule="unreachable-dispatch",
        name=found.subject,
        values=found.choices,
        evidence=(f"{found.path}:{found.line}",),
    )


def unreachable_callers(reading: Reading) -> Finding | None:
    """**unreachable-callers**: every call of the site's function is made
    only where its own condition rules out the site's: ``name`` is the
    site's conjunct, ``values`` the first call's conjunct, evidence that
    call's guard."""
    found = _unreachable(reading, "callers")
    if found is None:
        return None
    return Finding(
        kind="unreachable",
        rule="unreachable-callers",
        name=found.guard,
        values=(found.condition,),
        evidence=(f"{found.path}:{found.line}",),
    )


def unreachable_uncalled(reading: Reading) -> Finding | None:
    """**unreachable-uncalled**: no file of the commit calls or names the
    site's function but its own ``def``; ``name`` is the function, evidence
    its ``def`` line."""
    found = _unreachable(reading, "uncalled")
    if found is None:
        return None
    return Finding(
        kind="unreachable",
        rule="unreachable-uncalled",
        name=found.condition,
        evidence=(f"{found.path}:{found.line}",),
    )


def report(reading: Reading) -> Finding | None:
    """**report**: an internal check (audience ``internal``, not logged, not
    unreachable): what a bug report should hold: the message's runtime
    fields (``values``, the placeholders as written) and the flags whose
    constraints lead there (``words``)."""
    if reading.audience not in INTERNAL_AUDIENCES or reading.logged or reading.unreachable:
        return None
    error = reading.error
    fields = tuple(dict.fromkeys(p.expr for p in error.message_parts if p.expr))
    flags = tuple(
        dict.fromkeys(
            o.name for o in reading.origins if o.kind is OriginKind.FLAG and o.name.startswith("-")
        )
    )
    site = error.primary
    return Finding(
        kind="report",
        rule="report",
        values=fields,
        words=flags,
        evidence=(f"{site.path}:{site.line}",),
    )
