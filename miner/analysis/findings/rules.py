"""The rules, in the order their findings are kept (:data:`RULES`).

A rule is a function ``(Reading) -> Finding | None`` or ``(Reading) ->
Iterable[Finding]`` whose docstring documents it (``docs/rules.md`` is
generated from them: ``make rules-doc``). Rules make no sentences: names,
values and ``path:line`` only; the templates word them.
"""

from __future__ import annotations

import inspect
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
    notes.unreachable_dispatch,
    notes.unreachable_callers,
    notes.unreachable_uncalled,
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


#: The heading of each kind's part of ``docs/rules.md``, in order.
KIND_HEADINGS = (
    ("cause", "Causes: what the user did"),
    ("reason", "Reasons: why it is refused"),
    ("fix", "Fixes: what to change"),
    ("note", "Errors a user does not meet as a refusal"),
)


def _part(rule: Rule) -> str:
    name = rule.__module__.rsplit(".", 1)[-1]
    return {"causes": "cause", "reasons": "reason", "fixes": "fix"}.get(name, "note")


def rules_markdown() -> str:
    """``docs/rules.md``: every rule of :data:`RULES` under its kind, in
    order, with its docstring as written (``make rules-doc`` writes it; a
    test fails when the file is stale)."""
    lines = [
        "# Findings rules",
        "",
        "Generated from the docstrings of `miner/analysis/findings/` by `make rules-doc`;",
        "do not edit. Each rule reads one error's origins and the commit's facts and",
        "returns findings (names, values, `path:line`); the verifier (`verify.py`) drops",
        "any that fails its checks, and `templates/findings.md.j2` words the rest.",
    ]
    for kind, heading in KIND_HEADINGS:
        lines += ["", f"## {heading}"]
        for rule in RULES:
            if _part(rule) == kind:
                doc = inspect.cleandoc(rule.__doc__ or "")
                lines += ["", f"### `{rule_name(rule)}`", "", doc]
    return "\n".join(lines) + "\n"
