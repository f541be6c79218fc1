"""The "When it happens" trigger, written from a site's guards and scope."""

from __future__ import annotations

from miner.model import Guard, Site


def guard_clause(guard: Guard) -> str | None:
    """One guard as a clause of English (Markdown code spans), or None for a
    guard that says nothing about when (a plain ``try:`` block)."""
    test = f"`{guard.test}`"
    if guard.kind == "if":
        return f"{test} is false" if guard.negated else f"{test} is true"
    if guard.kind == "assert":
        return f"the assertion {test} fails"
    if guard.kind == "while":
        return f"inside the loop `while {guard.test}`"
    if guard.kind == "while-else":
        return f"the loop `while {guard.test}` ends without `break`"
    if guard.kind in ("for", "async for"):
        return f"inside the loop `{guard.kind} {guard.test}`"
    if guard.kind == "for-else":
        return f"the loop `for {guard.test}` ends without `break`"
    if guard.kind in ("except", "except*"):
        caught = f"`{guard.test}`" if guard.test else "any exception"
        return f"{caught} was caught (`{guard.describe()}`)"
    if guard.kind == "try-else":
        return "the `try` block finished without an exception"
    if guard.kind == "finally":
        return "the `finally` block runs"
    if guard.kind in ("with", "async with"):
        return f"inside `{guard.kind} {guard.test}`"
    if guard.kind == "case":
        return f"`{guard.subject}` matches `case {guard.test}`"
    return None


def trigger_sentence(site: Site) -> str:
    """E.g. "`params.enable_mamba_extra_buffer` is true when
    `MlxAuxiliaryStateComponent.__init__` runs."."""
    clauses = [c for c in (guard_clause(g) for g in site.guards) if c]
    where = (
        "at import time of the module" if site.scope == "<module>" else f"when `{site.scope}` runs"
    )
    if not clauses:
        return f"Raised every time this line is reached {where}; no condition guards it."
    if len(clauses) == 1:
        joined = clauses[0]
    else:
        joined = ", ".join(clauses[:-1]) + ", and " + clauses[-1]
    sentence = f"{joined} {where}."
    return sentence[0].upper() + sentence[1:]
