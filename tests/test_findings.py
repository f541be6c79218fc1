"""Findings (miner.analysis.findings) on small sources: a toy options class
and a raise per rule -> the exact findings, the verifier's drops, and the
words the templates give them (miner.publish.findings)."""

from __future__ import annotations

import dataclasses
import textwrap
from pathlib import Path

from miner import pipeline
from miner.analysis import analyze
from miner.analysis.facts import collect
from miner.analysis.findings.rules import RULES, rule_name, rules_markdown
from miner.analysis.findings.values import satisfies
from miner.analysis.findings.verify import verify
from miner.analysis.origins import trace_origins
from miner.checks import Card, finding_figures
from miner.extract.runner import extract_file
from miner.model import Analysis, CommitInfo, Finding, FixKind
from miner.publish.findings import shown

INFO = CommitInfo("repo", "acme/pkg", "v1", "1" * 40, "2026-01-01T00:00:00+00:00")

ARGS = """
import argparse
from dataclasses import dataclass


@dataclass
class ServerArgs:
    cache_strategy: str = "auto"
    backup: str = None
    enable_fast: bool = False
    use_graphs: bool = True

    @staticmethod
    def add_cli_args(parser):
        parser.add_argument("--cache-strategy", type=str, default="auto",
                            choices=["auto", "none", "extra"],
                            help="How to cache. 'none' keeps no cache.")
        parser.add_argument("--backup", type=str, default=None, choices=["cpu", "host"])
        parser.add_argument("--enable-fast", action="store_true",
                            help="Turn on the fast path. Requires --backup cpu.")
        parser.add_argument("--use-graphs", action=argparse.BooleanOptionalAction,
                            default=True, help="Capture graphs; saves launch time.")

    def resolve(self):
        if self.cache_strategy == "auto":
            self.cache_strategy = "extra"


def get_args() -> ServerArgs:
    return ServerArgs()
"""

MAIN = """
from pkg.ops import batch, fast, graphs, strategy, workers
from pkg.server_args import ServerArgs

if __name__ == "__main__":
    ServerArgs()
    strategy(), fast(), graphs(), workers(), batch([])
"""

OPS = """
import os

from pkg.server_args import get_args


def strategy():
    if get_args().cache_strategy == "extra":
        raise NotImplementedError("extra caching is not implemented here")


def fast():
    # The fast path skips the backup, so it cannot run with a host backup.
    if get_args().enable_fast:
        raise ValueError("fast path needs no backup")


def graphs():
    if get_args().use_graphs:
        raise RuntimeError("graphs are off limits")


def workers():
    if os.environ.get("PKG_DEBUG"):
        raise RuntimeError("debug workers are gone")


def internal(n):
    if n > 3:
        raise AssertionError(f"too many: {n}")


def batch(items):
    return internal(len(items))


def leftover(mode):
    if mode == "old":
        raise RuntimeError("the old mode is gone")
"""

FILES = {
    "pkg/__init__.py": "",
    "pkg/server_args.py": ARGS,
    "pkg/launch.py": MAIN,
    "pkg/ops.py": OPS,
}


def analysed(files: dict[str, str] = FILES) -> dict[str, Analysis]:
    """Message -> the analysis of its error, with origins traced."""
    data = {p: textwrap.dedent(t).lstrip("\n").encode() for p, t in files.items()}
    result = pipeline.assemble(INFO, [extract_file(p, "0" * 40, d) for p, d in data.items()])
    facts = collect(data, result.sites)
    traced = trace_origins(data, result.errors, facts)
    facts = dataclasses.replace(
        facts, origins=traced.origins, logged=traced.logged, unreachable=traced.unreachable
    )
    out = analyze(result, facts)
    return {str(e.message): out[e.error_id] for e in result.errors}


def kinds(analysis: Analysis) -> list[tuple[str, str, str]]:
    return [(f.kind, f.rule, f.name) for f in analysis.findings]


CARDS = analysed()


def test_switch_given_is_the_cause_and_dropping_it_the_fix() -> None:
    card = CARDS["fast path needs no backup"]
    cause, reason, fix = card.findings
    assert (cause.kind, cause.rule, cause.name, cause.op, cause.words) == (
        "cause",
        "cause-flag",
        "--enable-fast",
        "true",
        ("--enable-fast",),
    )
    assert cause.evidence == ("pkg/ops.py:13", "pkg/server_args.py:18")
    assert (reason.rule, reason.quote, reason.quote_at) == (
        "reason-comment",
        "The fast path skips the backup, so it cannot run with a host backup.",
        "pkg/ops.py:12",
    )
    assert (fix.rule, fix.action, fix.words, fix.value) == (
        "fix-flag-switch",
        "drop",
        ("--enable-fast",),
        "False",
    )
    assert (fix.quote, fix.quote_at) == (
        "Turn on the fast path. Requires --backup cpu.",
        "pkg/server_args.py:18",
    )
    assert card.dropped == ()


def test_boolean_optional_flag_is_turned_off_with_its_no_form() -> None:
    card = CARDS["graphs are off limits"]
    assert kinds(card) == [
        ("cause", "cause-flag", "--use-graphs"),
        ("fix", "fix-flag-switch", "--use-graphs"),
    ]
    cause, fix = card.findings
    assert cause.value == "True"  # on by default: the user changed nothing
    assert (fix.action, fix.words) == ("off", ("--no-use-graphs",))


def test_value_fix_is_another_choice_never_the_default_that_resolves_to_the_raising_one() -> None:
    card = CARDS["extra caching is not implemented here"]
    assert kinds(card) == [
        ("cause", "cause-flag", "--cache-strategy"),
        ("reason", "reason-not-implemented", ""),
        ("fix", "fix-flag-value", "--cache-strategy"),
    ]
    cause, reason, fix = card.findings
    assert (cause.op, cause.values, cause.words) == (
        "==",
        ("extra",),
        ("--cache-strategy", "extra"),
    )
    assert (reason.values, reason.evidence) == (("--cache-strategy",), ("pkg/ops.py:8",))
    assert (fix.value, fix.words, fix.default) == ("none", ("--cache-strategy", "none"), "'auto'")
    # `resolve` stores "extra" into it: leaving the flag out (default auto) is no fix
    assert (fix.resolves, fix.resolved_at) == (("extra",), ("pkg/server_args.py:25",))
    assert "fix-flag-leave-out" not in {f.rule for f in card.findings}


def test_env_variable_set_is_unset() -> None:
    card = CARDS["debug workers are gone"]
    cause, fix = card.findings
    assert (cause.rule, cause.name, cause.op, cause.words) == (
        "cause-env",
        "PKG_DEBUG",
        "true",
        ("PKG_DEBUG=1",),
    )
    assert (fix.rule, fix.action, fix.words) == ("fix-env", "unset", ("unset", "PKG_DEBUG"))


def test_internal_check_gets_a_report_with_the_message_fields() -> None:
    card = CARDS["too many: {n}"]
    assert card.audience == "internal"
    (report,) = card.findings
    assert (report.kind, report.values, report.evidence) == ("report", ("n",), ("pkg/ops.py:29",))


def test_a_function_nothing_calls_gets_an_unreachable_note_not_a_cause() -> None:
    card = CARDS["the old mode is gone"]
    assert card.audience == "internal"
    assert kinds(card) == [("unreachable", "unreachable-uncalled", "leftover")]
    assert card.findings[0].evidence == ("pkg/ops.py:36",)
    assert shown(card).what_it_means == (
        "No code in this release calls or names `leftover` (`pkg/ops.py:36`): "
        "only code outside it can get here."
    )


def finding(**given: object) -> Finding:
    base: dict[str, object] = dict(kind="fix", rule="r", origin="flag", owner="ServerArgs")
    return Finding(**{**base, "evidence": ("pkg/ops.py:1",), **given})  # type: ignore[arg-type]


def config_of() -> object:
    data = {p: textwrap.dedent(t).lstrip("\n").encode() for p, t in FILES.items()}
    result = pipeline.assemble(INFO, [extract_file(p, "0" * 40, d) for p, d in data.items()])
    return collect(data, result.sites).config


def test_verifier_drops_a_switch_given_a_value_the_default_and_an_unknown_flag() -> None:
    config = config_of()
    switch_valued = finding(
        name="--enable-fast",
        op="true",
        action="set",
        value="False",
        words=("--enable-fast", "False"),
    )
    default = finding(
        name="--cache-strategy",
        op="==",
        values=("extra",),
        action="set",
        value="auto",
        words=("--cache-strategy", "auto"),
    )
    unknown = finding(name="--no-such-flag", op="true", action="drop", words=("--no-such-flag",))
    not_false = finding(
        name="--cache-strategy",
        op="in",
        values=("none", "extra"),
        action="set",
        value="none",
        words=("--cache-strategy", "none"),
    )
    good = finding(
        name="--cache-strategy",
        op="==",
        values=("extra",),
        action="set",
        value="none",
        words=("--cache-strategy", "none"),
        rule="kept",
    )
    unsourced = dataclasses.replace(good, evidence=(), rule="no-evidence")
    kept, dropped = verify(config, [switch_valued, default, unknown, not_false, good, unsourced])  # type: ignore[arg-type]
    assert [f.rule for f in kept] == ["kept"]
    assert dropped == ("r", "r", "r", "r", "no-evidence")


def test_op_semantics() -> None:
    assert satisfies("==", ("a",), "'a'") is True
    assert satisfies("in", ("a", "b"), "c") is False
    assert satisfies("not in", ("a",), "c") is True
    assert satisfies("true", (), "False") is False
    assert satisfies("false", (), "None") is True
    assert satisfies("is None", (), None) is True
    assert satisfies("unset", (), None) is True
    assert satisfies(">", ("3",), "4") is True
    assert satisfies("<=", ("3",), "4") is False
    assert satisfies("true", (), "auto") is None


def test_templates_word_the_findings_and_the_example_changes_one_flag() -> None:
    card = shown(CARDS["extra caching is not implemented here"])
    assert card.what_it_means == (
        "You get this error when you pass `--cache-strategy extra`. This release has no "
        "implementation for this setting of `--cache-strategy` (`pkg/ops.py:8`)."
    )
    assert card.solutions == (
        "Set `--cache-strategy` to `none`: `--cache-strategy none`. Its help says: "
        "\"'none' keeps no cache.\" (`pkg/server_args.py:14`). Leaving `--cache-strategy` out "
        "does not avoid it: its default is `auto`, and the argument handling may set it to "
        "`extra` at start-up "
        "(`pkg/server_args.py:25`).",
    )
    assert card.example_fix is not None
    assert (card.example_fix.before, card.example_fix.after, card.example_fix.kind) == (
        "python -m pkg.launch ... --cache-strategy extra",
        "python -m pkg.launch ... --cache-strategy none",
        FixKind.FLAG,
    )


def test_env_example_and_switch_words() -> None:
    env = shown(CARDS["debug workers are gone"])
    assert env.example_fix is not None
    assert (env.example_fix.before, env.example_fix.after) == (
        "PKG_DEBUG=1 python -m pkg.launch ...",
        "python -m pkg.launch ...",
    )
    assert env.solutions == ("Unset `PKG_DEBUG`: `unset PKG_DEBUG`.",)
    graphs = shown(CARDS["graphs are off limits"])
    assert graphs.what_it_means == (
        "You get this error when `--use-graphs` is on (its default, `True`)."
    )
    assert graphs.solutions[0].startswith("Pass `--no-use-graphs` to turn `--use-graphs` off.")


def test_without_findings_the_writer_text_stays() -> None:
    bare = dataclasses.replace(CARDS["graphs are off limits"], findings=())
    assert shown(bare) is bare


def test_docs_rules_md_is_generated_from_the_rule_docstrings() -> None:
    """docs/rules.md is what ``make rules-doc`` writes now (stale: run it)."""
    written = (Path(__file__).resolve().parent.parent / "docs" / "rules.md").read_text("utf-8")
    assert written == rules_markdown()


def test_every_finding_carries_the_key_of_the_rule_that_made_it() -> None:
    keys = {rule_name(r) for r in RULES}
    assert {f.rule for card in CARDS.values() for f in card.findings} <= keys
    assert all(r.__doc__ and f"**{rule_name(r)}**" in r.__doc__ for r in RULES)


def test_check_cards_counts_causes_fixes_and_drops_by_rule() -> None:
    def card(error_id: str, findings: list[dict[str, str]], dropped: list[str]) -> Card:
        record = {"analysis": {"findings": findings, "dropped": dropped}}
        return Card(error_id, error_id, {}, record)

    cards = [
        card("a", [{"kind": "cause", "origin": "flag"}, {"kind": "fix"}], ["fix-flag-value"]),
        card("b", [{"kind": "cause", "origin": "internal"}], []),
        card("c", [{"kind": "cause", "origin": "env"}], ["fix-env", "fix-flag-value"]),
        card("d", [{"kind": "report"}], ["cause-flag"]),
    ]
    audiences = {"a": "user-setting", "b": "user-input", "c": "unsupported", "d": "internal"}
    figures = finding_figures(cards, audiences)
    assert (figures.cards, figures.with_cause, figures.with_cause_and_fix) == (3, 2, 1)
    assert figures.dropped == (("fix-flag-value", 2), ("fix-env", 1), ("cause-flag", 1))


def test_the_cards_take_the_findings_words_only_with_findings_words(make_repo, tmp_path) -> None:
    """``miner mine`` keeps the rule writer's sections by default and words
    them from the findings with ``--findings-words``; the record carries the
    findings either way."""
    import json

    from miner.cli import main

    repo = make_repo({p: textwrap.dedent(t).lstrip("\n") for p, t in FILES.items()})
    cards = {}
    for extra in ((), ("--findings-words",)):
        out = tmp_path / ("words" if extra else "writer")
        assert (
            main(["mine", "--repo", str(repo), "--commit", "v1", "--out", str(out), "-q", *extra])
            == 0
        )
        records = [json.loads(p.read_text()) for p in (out / "api" / "errors").glob("*.json")]
        record = next(r for r in records if r["message"] == "extra caching is not implemented here")
        assert [f["rule"] for f in record["analysis"]["findings"]][:1] == ["cause-flag"]
        cards[bool(extra)] = record["analysis"]["what_it_means"]
    assert cards[True] == CARDS_WORDED
    assert cards[False] != cards[True]


CARDS_WORDED = shown(CARDS["extra caching is not implemented here"]).what_it_means


DECIDING = """
import torch

from pkg.server_args import get_args


def nested():
    if get_args().enable_fast:
        device = torch.get_device_module()
        if device is None:
            raise RuntimeError("no device module")


def inner(pool):
    if pool is None:
        return
    if get_args().cache_strategy == "none" and len(pool) > 3:
        raise ValueError("a pool needs a cache")


def given(request):
    if request.input_ids is not None and len(request.input_ids) == 0:
        raise ValueError("input_ids is empty")


def run(request):
    nested(), inner([]), given(request)
"""


def test_a_cause_is_what_the_deciding_guard_reads_with_its_most_specific_constraint() -> None:
    """The flag of an outer ``if`` that only leads to a check of runtime
    state is no cause; the flag the innermost guard reads is; a request
    field the check reads as an operand is not caused by being given."""
    protocol = "class GenerateRequest:\n    input_ids: list | None = None\n"
    cards = analysed({**FILES, "pkg/deciding.py": DECIDING, "pkg/openai/protocol.py": protocol})
    origins = [(o.kind.value, o.name, o.constraint.op) for o in cards["input_ids is empty"].origins]
    assert ("request", "input_ids", "is not None") in origins
    assert [f for f in cards["no device module"].findings if f.kind == "cause"] == []
    causes = [(f.rule, f.name, f.op, f.values) for f in cards["a pool needs a cache"].findings]
    assert ("cause-flag", "--cache-strategy", "==", ("none",)) in causes
    assert [f for f in cards["input_ids is empty"].findings if f.kind == "cause"] == []
