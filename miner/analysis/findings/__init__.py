"""Typed findings about an error, from its origins and the commit's facts.

Data flows one way: the error's :class:`~.reading.Reading` -> the rules of
:mod:`.rules` (each a small function, documented by its docstring:
``docs/rules.md``) -> :mod:`.verify` (names exist, values accepted, a fix
makes the condition false; failures dropped and counted) -> the verified
findings on :attr:`miner.model.Analysis.findings`. The words are the
templates' (``templates/findings.md.j2``); nothing here makes a sentence.

Only the first reason is kept (rule order: the nearest comment first).
"""

from __future__ import annotations

from miner.analysis.facts import RepoFacts
from miner.analysis.findings.reading import Reading
from miner.analysis.findings.rules import run
from miner.analysis.findings.verify import verify
from miner.model import Caught, Condition, Error, Finding, Origin, Unreachable

__all__ = ["Reading", "findings_of"]


def _first_reason(findings: tuple[Finding, ...]) -> tuple[Finding, ...]:
    first = next((f for f in findings if f.kind == "reason"), None)
    return tuple(f for f in findings if f.kind != "reason" or f is first)


def findings_of(
    error: Error,
    origins: tuple[Origin, ...],
    audience: str,
    facts: RepoFacts,
    logged: Caught | None = None,
    unreachable: Unreachable | None = None,
    condition: Condition | None = None,
) -> tuple[tuple[Finding, ...], tuple[str, ...]]:
    """(the verified findings of ``error``, the rule of each finding the
    verifier dropped). ``origins`` are the primary site's
    (:mod:`miner.analysis.origins`); ``facts`` the commit's; ``condition``
    the site's reach condition (:func:`miner.analysis.condition.condition_of`)."""
    reading = Reading(error, origins, audience, facts, logged, unreachable, condition)
    kept, dropped = verify(facts.config, run(reading))
    return _first_reason(kept), dropped
