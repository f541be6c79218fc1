"""The rules, in the order their findings are kept (:data:`RULES`).

A rule is a function ``(Reading) -> Finding | None`` or ``(Reading) ->
Iterable[Finding]`` whose docstring documents it (``docs/rules.md`` is
generated from them: ``make rules-doc``). Rules make no sentences: names,
values and ``path:line`` only; the templates word them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from miner.analysis.findings import causes, fixes, notes, reasons
from miner.analysis.findings.reading import Reading
from miner.model import Finding

Rule = Callable[[Reading], "Finding | None | Iterable[Finding]"]

#: Every rule, by kind: causes, reasons (the first one kept wins), fixes,
#: then the notes on errors a user does not meet as a refusal.
RULES: tuple[Rule, ...] = (
    causes.cause_flag,
    causes.cause_env,
    causes.cause_model,
    causes.cause_request,
    causes.cause_hardware,
    causes.cause_package,
    reasons.reason_comment,
    reasons.reason_setting_comment,
    reasons.reason_help_requirement,
    reasons.reason_not_implemented,
    fixes.fix_flag_switch,
    fixes.fix_flag_value,
    fixes.fix_flag_leave_out,
    fixes.fix_env,
    fixes.fix_install,
    notes.logged,
    notes.unreachable,
    notes.report,
)


def rule_name(rule: Rule) -> str:
    """The key a rule's findings carry (``fix_flag_value`` -> ``fix-flag-value``)."""
    return rule.__name__.replace("_", "-")


def run(reading: Reading) -> list[Finding]:
    """Every finding of every rule of :data:`RULES` on ``reading``, in order."""
    out: list[Finding] = []
    for rule in RULES:
        made = rule(reading)
        if made is None:
            continue
        out += [made] if isinstance(made, Finding) else list(made)
    return out
