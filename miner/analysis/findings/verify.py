"""The verifier: every finding is checked against the configuration model
at the commit before anything is printed. A finding that fails is dropped and
its rule counted (:attr:`miner.model.Analysis.dropped`), never softened.

Checks, by kind:

* every finding cites at least one ``path:line``; a cause or fix whose op
  compares with values has some;
* ``cause`` of a flag: the flag exists (``ConfigModel.flag_names``), its
  values are among the option's choices, and they meet the constraint;
  of a variable: the variable is known to the model;
* ``fix`` of a flag: the flag exists; ``set`` gives a flag that takes a value
  one of its choices, never a switch (``--x VALUE``), never the default, and
  the value makes the constraint false; ``on`` / ``off`` / ``drop`` are a
  switch's own words (``--x``, ``--no-x``) and the truth they leave makes it
  false; ``leave-out``: the default (or the resolver's other value) makes it
  false; of a variable: the variable exists and the value left makes it
  false; ``install``: a ``pip install`` of the origin's distribution;
* ``reason``: a quote, or the not-implemented source.
"""

from __future__ import annotations

from collections.abc import Iterable

from miner.analysis.config import ConfigModel, Option
from miner.analysis.findings.values import satisfies
from miner.model import Finding


def _option(config: ConfigModel, finding: Finding) -> Option | None:
    """The option of ``finding``'s options class named by its flag, or by
    its field name when it has no flag (a setting set in code or a file)."""
    for opt in config.options:
        named = finding.name in opt.flags or (not opt.flags and finding.name == opt.name)
        if named and opt.owner == finding.owner:
            return opt
    return None


def _flag_cause(config: ConfigModel, finding: Finding) -> bool:
    opt = _option(config, finding)
    if opt is None:
        return False
    if (
        finding.op in ("==", "in")
        and opt.choices
        and not all(v in opt.choices for v in finding.values)
    ):
        return False
    if finding.op in ("==", "in") and finding.values:
        return satisfies(finding.op, finding.values, finding.values[0]) is True
    return True


def _set_fix(opt: Option, finding: Finding) -> bool:
    value = finding.value
    if opt.switch or opt.is_bool or len(finding.words) != 2 or value is None:
        return False
    if finding.words != (opt.flag, value) or (opt.choices and value not in opt.choices):
        return False
    if opt.default is not None and value == opt.default.strip("'\""):
        return False
    return satisfies(finding.op, finding.values, value) is False


def _switch_fix(opt: Option, finding: Finding) -> bool:
    if not (opt.switch or opt.is_bool) or len(finding.words) != 1:
        return False
    word = finding.words[0]
    if finding.action == "off" and word != opt.negation:
        return False
    if finding.action in ("on", "drop") and word != opt.flag:
        return False
    left = "True" if finding.action == "on" else "False"
    return satisfies(finding.op, (), left) is False


def _flag_fix(config: ConfigModel, finding: Finding) -> bool:
    opt = _option(config, finding)
    if (
        opt is None
        or not set(w for w in finding.words if w.startswith("--")) <= config.flag_names()
    ):
        return False
    if finding.action == "set":
        return _set_fix(opt, finding)
    if finding.action in ("on", "off", "drop"):
        return _switch_fix(opt, finding)
    if finding.action == "leave-out":
        left = finding.value if finding.resolves else opt.default
        return not finding.words and satisfies(finding.op, finding.values, left) is False
    return False


def _env_fix(config: ConfigModel, finding: Finding) -> bool:
    if config.env_var(finding.name) is None:
        return False
    left = finding.default if finding.action == "unset" else finding.value
    return satisfies(finding.op, finding.values, left) is False


def _fix(config: ConfigModel, finding: Finding) -> bool:
    if finding.origin == "flag":
        return _flag_fix(config, finding)
    if finding.origin == "env":
        return _env_fix(config, finding)
    if finding.origin == "package":
        return finding.action == "install" and finding.words[:2] == ("pip", "install")
    return False


#: Ops that compare with values: a cause or fix with one of them and no
#: value is not about a value a reader can be told.
VALUED_OPS = frozenset(
    {"==", "!=", "<", "<=", ">", ">=", "in", "not in", "instance", "not instance"}
)


def verified(config: ConfigModel, finding: Finding) -> bool:
    """Whether ``finding`` passes the checks of the module docstring."""
    if not finding.evidence:
        return False
    if finding.kind in ("cause", "fix") and finding.op in VALUED_OPS and not finding.values:
        return False
    if finding.kind == "cause":
        if finding.origin == "flag":
            return _flag_cause(config, finding)
        if finding.origin == "env":
            return config.env_var(finding.name) is not None
        return True
    if finding.kind == "fix":
        return _fix(config, finding)
    if finding.kind == "reason":
        return bool(finding.quote) or finding.source == "not-implemented"
    return True


def verify(
    config: ConfigModel, findings: Iterable[Finding]
) -> tuple[tuple[Finding, ...], tuple[str, ...]]:
    """(the findings that pass :func:`verified`, the rule of each dropped one)."""
    kept: list[Finding] = []
    dropped: list[str] = []
    for finding in findings:
        (kept.append(finding) if verified(config, finding) else dropped.append(finding.rule))
    return tuple(kept), tuple(dropped)
