"""Card analysis on the real SGLang v0.5.19 release (integration; corpus at $RAISE_MINER_CORPUS).

The release is mined once per session into a temporary folder and shared by
every test here.
"""

from __future__ import annotations

import json
import os
import re

import pytest
from test_analysis_cards import HEADINGS, OPTIONAL

from miner.analysis import analyze
from miner.publish.cards import render_card

pytestmark = pytest.mark.integration

CORPUS = os.environ.get("RAISE_MINER_CORPUS", "")
TAG = "v0.5.19"
MLX = ("python/sglang/srt/hardware_backend/mlx/kv_cache/auxiliary_state.py", 334)
HOST_POOL = ("python/sglang/srt/mem_cache/registry.py", 154)
TEACACHE = ("python/sglang/multimodal_gen/runtime/models/dits/hunyuanvideo.py", 959)
USER_FACING = ("user-setting", "user-input", "dependency", "unsupported")
#: The sections that may name flags and variables.
NAMING = ("## What it means", "## When it happens", "## Solutions", "## Example fix")
#: Sections of sentences; Solutions and Example fix may be one short change
#: (``1. Pass `--resume`.``), so only their presence is asserted.
PROSE = ("## What it means", "## When it happens")


@pytest.fixture(scope="session")
def release(analysed_release):
    """(Mined, analyses, output folder) of the release, shared by the session."""
    mined, out = analysed_release(TAG)
    return mined, mined.analyses, out


def card_text(release, error) -> str:
    """The card of ``error`` as published (``errors/<id>.md``) or, for an error
    with no card of its own (an internal check, a test...), as its analysis
    would render it: the prose is written for every error."""
    mined, analyses, out = release
    path = out / "errors" / f"{error.error_id}.md"
    if path.is_file():
        return path.read_text()
    return render_card(error, mined.result.commit, analyses[error.error_id])


def card_at(release, path: str, line: int) -> str:
    result = release[0].result
    error = next(e for e in result.errors if (e.primary.path, e.primary.line) == (path, line))
    return card_text(release, error)


def section(card: str, heading: str) -> str:
    start = card.index(heading)
    nxt = card.find("\n## ", start + 1)
    body = card[start + len(heading) : nxt if nxt != -1 else len(card)]
    return body.split("\nGuards, outermost first:")[0] + (
        body.split("\nHow the guards were linked")[1]
        if "\nHow the guards were linked" in body
        else ""
    )


def test_mlx_card_names_the_real_settings(release):
    card = card_at(release, *MLX)
    trigger, solutions = section(card, "## When it happens"), section(card, "## Solutions")
    for text in (trigger, solutions):
        assert "`--mamba-radix-cache-strategy`" in text
        assert "`--disable-radix-cache`" in text
    assert "`--mamba-radix-cache-strategy` is one of `extra_buffer` or `extra_buffer_lazy`" in (
        trigger
    )
    assert "`--disable-radix-cache` is off (not given)" in trigger
    assert "by name only" in trigger
    # `auto` (the default) may be resolved to `extra_buffer` at start-up: never proposed
    assert "set `--mamba-radix-cache-strategy` to `no_buffer`" in solutions
    assert "to `auto`" not in solutions and "`auto` or" not in solutions
    assert "Leaving the flag out may not help" in solutions
    assert "--enable-mamba-extra-buffer" not in card
    fix = section(card, "## Example fix")
    assert "python -m sglang.launch_server ... --mamba-radix-cache-strategy extra_buffer" in fix
    assert "python -m sglang.launch_server ... --mamba-radix-cache-strategy no_buffer" in fix


def test_host_pool_card_names_the_flag_and_the_model_state(release):
    card = card_at(release, *HOST_POOL)
    meaning = section(card, "## What it means")
    trigger, solutions = section(card, "## When it happens"), section(card, "## Solutions")
    # the first sentence names both: the flag with its value and the model's SSM state
    # the model condition in words, from the docstring of the predicate the
    # guard variable is assigned from
    assert meaning.strip().startswith(
        "You get this with `--disaggregation-decode-retraction-backup host_pool` when "
        "`ctx.is_hybrid_ssm` is true (the model keeps recurrent/conv state alongside its "
        "attention KV), in `_create_unified_radix_cache`."
    )
    assert (
        "`is_hybrid_ssm` is set as `uses_ssm_state(tp_worker.model_runner.model_config)` "
        "(`python/sglang/srt/mem_cache/kv_cache_builder.py:224`), and `uses_ssm_state()` is "
        'documented as "Whether the model keeps recurrent/conv state alongside its attention '
        'KV." (`python/sglang/srt/mem_cache/kv_cache_builder.py:122`)' in meaning
    )
    # why, from the comment where the setting is resolved
    assert (
        "Where `--disaggregation-decode-retraction-backup` is resolved, in "
        "`resolve_decode_retraction_backup` (`python/sglang/srt/mem_cache/kv_cache_builder.py"
        ':153`), a comment says: "Host-pool retraction transfers full and sliding-window '
        'components only, so a model with recurrent state stays on cpu_tensor."' in meaning
    )
    assert (
        '`--disaggregation-decode-retraction-backup` is described as "Storage backend for KV '
        "preserved across PD decode retraction. 'cpu_tensor' uses per-request CPU tensors.\" "
        "(`python/sglang/srt/server_args.py:3211`)"
    ) in meaning
    assert "- `--disaggregation-decode-retraction-backup` is `host_pool` (line 152)" in trigger
    assert "- `ctx.is_hybrid_ssm` is true (line 153)" in trigger
    assert (
        "Set `--disaggregation-decode-retraction-backup` to `cpu_tensor`; or leave "
        "`--disaggregation-decode-retraction-backup` out: its default is `None` "
        '("If omitted, the backend is inferred from the decode KV pool").' in solutions
    )
    assert "'cpu_tensor' uses per-request CPU tensors" in solutions
    # leaving the flag out: the resolver picks cpu_tensor for such models
    assert (
        "Left out, it is resolved in `resolve_decode_retraction_backup` "
        "(`python/sglang/srt/mem_cache/kv_cache_builder.py:180`): `host_pool` needs "
        "`not uses_ssm_state(tp_worker.model_runner.model_config)` (through "
        "`supports_host_pool`, line 155), so where `ctx.is_hybrid_ssm` is true it becomes "
        "`cpu_tensor`." in solutions
    )
    # "It is not raised when `ctx.is_hybrid_ssm` is false" (and the message's
    # refusal, quoted with it) is no solution: left out
    assert "2. " not in solutions and "not raised" not in solutions
    fix = section(card, "## Example fix")
    assert "--disaggregation-decode-retraction-backup host_pool" in fix
    assert "--disaggregation-decode-retraction-backup cpu_tensor" in fix


def test_teacache_card_says_it_needs_teacache_enabled(release):
    card = card_at(release, *TEACACHE)
    meaning = section(card, "## What it means")
    trigger = section(card, "## When it happens")
    assert (
        "In `HunyuanVideoTransformer3DModel.should_skip_forward_for_cached_states`, this is "
        "raised only when `forward_batch` is not `None` and `enable_teacache` is true."
    ) in meaning
    # `--enable-teacache` is a flag of multimodal_gen's SamplingParams, added
    # through its local add_argument wrapper (sampling_params.py)
    assert (
        "- `enable_teacache` is true (by its name, `enable_teacache` is the flag "
        "`--enable-teacache`): the code returns early at "
        "line 958 otherwise (`if not enable_teacache: return False`)" in trigger
    )
    assert "every time this line is reached" not in card
    assert (
        "If `enable_teacache` holds the command-line value: drop `--enable-teacache`: it is off "
        "by default." in section(card, "## Solutions")
    )


def test_check_cards_reports_no_defects(release):
    from miner.checks import check_cards, format_report

    report = check_cards(release[2])
    assert not report.has_defects, format_report(report)
    facing = [report.figures(a) for a in USER_FACING]
    cards = sum(f.cards for f in facing)
    assert sum(f.same_meaning for f in facing) <= 0.20 * cards
    assert sum(f.same_solutions for f in facing) <= 0.30 * cards
    for f in facing:  # duplicate prose per user-facing audience
        assert f.meaning_share <= 0.20 and f.solutions_share <= 0.30, f
    # cited evidence besides the message and the guards, in "What it means"
    assert report.evidence_share(USER_FACING) >= 0.60, format_report(report)


def test_other_sites_told_through_the_condition_model(release):
    result = release[0].result
    error = next(
        e
        for e in result.errors
        if e.message == "LoRA is not enabled. Please set `--enable-lora` to enable LoRA."
        and e.primary.line == 613
    )
    trigger = section(card_text(release, error), "## When it happens")
    path = "python/sglang/srt/managers/tokenizer_control_mixin.py"
    assert (
        f"- `{path}:691` in `TokenizerControlMixin.load_lora_adapter_from_tensors` (module "
        "`sglang.srt.managers.tokenizer_control_mixin`), when `--enable-lora` is off (not given)"
    ) in trigger
    assert (
        f"- `{path}:767` in `TokenizerControlMixin.unload_lora_adapter` (module "
        "`sglang.srt.managers.tokenizer_control_mixin`), when `--enable-lora` is off (not given)"
    ) in trigger
    assert "when `not get_lora().enable_lora`" not in trigger


def test_message_named_settings_are_linked_and_used(release):
    from miner.analysis.audience import USER_FACING, named_env_vars, named_flags

    USER_FACING_NAMES = {a.value for a in USER_FACING}  # noqa: N806
    from miner.checks import message_words, parse_card

    result, out = release[0].result, release[2]
    config = release[0].facts.config
    flags = config.flag_names()
    variables = {e.name for e in config.env}
    named = 0
    for error in result.errors:
        record = json.loads((out / "api" / "errors" / f"{error.error_id}.json").read_text())
        words = message_words(record)
        names = [f for f in named_flags(words) if f in flags] + named_env_vars(words, variables)
        if not names:
            continue
        if release[1][error.error_id].audience not in USER_FACING_NAMES:
            # test, script, abstract and internal errors have compact entries, no card
            assert not (out / "errors" / f"{error.error_id}.md").exists()
            continue
        named += 1
        card = parse_card(error.error_id, (out / "errors" / f"{error.error_id}.md").read_text())
        for name in names:
            assert name in card.sections["When it happens"], (error.error_id, name)
            assert name in card.sections["Solutions"], (error.error_id, name)
        assert "No flag or environment variable is involved" not in card.sections["When it happens"]
    assert named > 500


def without_quoted_code(prose: str, error) -> str:
    """``prose`` less what quotes the code rather than names a setting: code
    spans of the site's own source (guard and exit tests, the message
    expression) or with a string literal in them (``"--worker" not in
    sys.argv``), Python example fixes, and text in double quotes (comments,
    docstrings, help texts and the message, cited as they are)."""
    site = error.primary
    tests = [g.test for g in (*site.guards, *site.exits)]
    quoted = [q for q in [*tests, site.message_source or ""] if q]
    prose = re.sub(r"```python\n.*?```", " ", prose, flags=re.S)
    prose = re.sub(
        r"`([^`]+)`",
        lambda m: (
            " "
            if any(m.group(1) in q for q in quoted) or re.search(r"[\"']", m.group(1))
            else m.group(0)
        ),
        prose,
    )
    return re.sub(r'"[^"\n]*"', " ", prose)


def test_every_flag_and_variable_named_exists(release):
    result, out = release[0].result, release[2]
    config = release[0].facts.config
    flags = config.flag_names()
    variables = {e.name for e in config.env}
    named_flags = named_vars = 0
    for error in result.errors:
        path = out / "errors" / f"{error.error_id}.md"
        card = card_text(release, error)
        prose = "\n".join(section(card, h) for h in NAMING if f"\n{h}\n" in card)
        prose = without_quoted_code(prose, error)
        for flag in re.findall(r"(?<![\w-])--[a-z][\w-]*", prose):
            named_flags += 1
            assert flag in flags, f"{path.name}: {flag}"
        for var in re.findall(
            r"environment variable `([A-Za-z_]\w*)`|(?:Unset|Set|unset) `?([A-Z_][A-Z0-9_]*)`?"
            r"|^([A-Z_][A-Z0-9_]*)=",
            prose,
            flags=re.M,
        ):
            name = next(v for v in var if v)
            named_vars += 1
            assert name in variables, f"{path.name}: {name}"
    assert named_flags > 1000 and named_vars > 50


def test_every_card_has_every_section(release):
    result = release[0].result
    for error in result.errors:
        card = card_text(release, error)
        shown = [h for h in HEADINGS if f"\n{h}\n" in card]
        assert [h for h in HEADINGS if h not in OPTIONAL] == [h for h in shown if h not in OPTIONAL]
        assert sorted(shown, key=card.index) == shown, error.error_id  # the sample cards' order
        for heading in shown:
            start = card.index(heading) + len(heading)
            nxt = card.find("\n## ", start)
            body = card[start : nxt if nxt != -1 else len(card)].strip()
            assert body, f"{error.error_id}: {heading}"
            if heading in PROSE:
                assert len(body) >= 20 and body.upper() not in ("TODO", "TBD", "N/A"), (
                    error.error_id
                )
        assert "No flag or environment variable is involved" not in card, error.error_id


def test_related_errors_deterministic_and_never_self(release):
    mined, analyses, _ = release
    result = mined.result
    again = analyze(result, mined.facts)
    assert {k: a.related for k, a in again.items()} == {k: a.related for k, a in analyses.items()}
    for eid, analysis in analyses.items():
        assert eid not in analysis.related
        assert 1 <= len(analysis.related) <= 5


def test_config_json_written(release):
    _, _, out = release
    text = (out / "config.json").read_text()
    assert '"--disaggregation-decode-retraction-backup"' in text
    assert '"SGLANG_IS_IN_CI"' in text
