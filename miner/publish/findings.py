"""The sections of a card that its findings answer, worded by the templates.

:func:`shown` renders the macros of ``templates/findings.md.j2`` into an
error's analysis, once, before the card, the site and the JSON record are
written (so all three show the same words):

* "What it means": the causes (at most three, in the user's terms), the
  first reason and the logged note; for an error without a cause, its
  unreachable / report notes;
* "Solutions": at most :data:`MAX_FIXES` verified fixes, each with its cost;
* "Example fix": the cause's command line (it raises) and the first fix's
  (it does not), only when both are flag or environment changes of the
  same command.

A section whose kinds have no finding keeps the rule-written text of
:mod:`miner.analysis.sections` (transitional, until every section comes from
findings); it is never filled otherwise.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from functools import cache
from typing import Any

from miner.model import Analysis, ExampleFix, Finding, FixKind, SolutionKind

#: Most fixes the Solutions section shows.
MAX_FIXES = 3


@cache
def _macros() -> Any:
    from miner.publish.cards import environment

    return environment().get_template("findings.md.j2").module


def _of(findings: Sequence[Finding], *kinds: str) -> list[Finding]:
    return [f for f in findings if f.kind in kinds]


def example(findings: Sequence[Finding]) -> ExampleFix | None:
    """The before/after command lines of the first flag or environment fix
    whose origin a cause gives on a command line: before, every cause's
    words (of the same command); after, the same with the fix's change."""
    causes = [f for f in _of(findings, "cause") if f.words and f.origin in ("flag", "env")]
    for fix in _of(findings, "fix"):
        if fix.origin not in ("flag", "env") or not fix.command:
            continue
        same = [c for c in causes if c.command == fix.command or c.origin == "env"]
        if not any(c.name == fix.name for c in same):
            continue
        before_env = [w for c in same if c.origin == "env" for w in c.words]
        before_flags = [w for c in same if c.origin == "flag" for w in c.words]
        after_env = [w for c in same if c.origin == "env" and c.name != fix.name for w in c.words]
        after_flags = [
            w for c in same if c.origin == "flag" and c.name != fix.name for w in c.words
        ]
        if fix.origin == "flag" and fix.action in ("set", "on", "off"):
            after_flags += fix.words
        elif fix.action == "set-env":
            after_env += fix.words
        line = _macros().command_line
        return ExampleFix(
            "shell",
            str(line(fix.command, before_env, before_flags)),
            str(line(fix.command, after_env, after_flags)),
            FixKind.FLAG if fix.origin == "flag" else FixKind.ENV,
        )
    return None


def _kind(fix: Finding) -> SolutionKind:
    return SolutionKind.INSTALL if fix.action == "install" else SolutionKind.FIX


def shown(analysis: Analysis) -> Analysis:
    """``analysis`` with the sections its findings answer worded by the
    templates (module docstring); unchanged without findings."""
    findings = analysis.findings
    if not findings:
        return analysis
    macros = _macros()
    causes = _of(findings, "cause")
    reasons = _of(findings, "reason")
    notes = _of(findings, "logged") + (_of(findings, "unreachable", "report") if not causes else [])
    changes: dict[str, Any] = {}
    if causes or notes:  # a reason alone keeps the Writer's account of the condition
        changes["what_it_means"] = str(macros.what_it_means(causes, reasons, notes)).strip()
    fixes = _of(findings, "fix")[:MAX_FIXES]
    if fixes:
        changes["solutions"] = tuple(str(macros.fix(f)).strip() for f in fixes)
        changes["solution_kinds"] = tuple(_kind(f) for f in fixes)
        # the Writer's example may contradict a verified fix: only the findings' one
        changes["example_fix"] = example(findings)
    return replace(analysis, **changes) if changes else analysis


def worded(analyses: dict[str, Analysis]) -> dict[str, Analysis]:
    """:func:`shown` of every analysis, by the same error ids."""
    return {error_id: shown(a) for error_id, a in analyses.items()}
