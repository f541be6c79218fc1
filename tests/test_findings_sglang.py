"""Findings on SGLang v0.5.19 (integration): errors of ten subsystems, each
with its exact findings, read against the source of the tag
(``git -C .corpus/sglang show v0.5.19:<path>``; the lines are cited below).

The release is mined once per session with its origins (``mined_release``);
the findings are read from the published JSON record, and the words of the
card from its Markdown.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.integration

TAG = "v0.5.19"


@pytest.fixture(scope="module")
def out(mined_release) -> Path:
    return mined_release(TAG)[1]


def findings(out: Path, error_id: str) -> list[tuple[Any, ...]]:
    """(kind, rule, name, op, values, action, words, value) of each finding."""
    record = json.loads((out / "api" / "errors" / f"{error_id}.json").read_text("utf-8"))
    return [
        (
            f["kind"],
            f["rule"],
            f["name"],
            f["op"],
            tuple(f["values"]),
            f["action"],
            tuple(f["words"]),
            f["value"],
        )
        for f in record["analysis"]["findings"]
    ]


def finding(out: Path, error_id: str, rule: str) -> dict[str, Any]:
    record = json.loads((out / "api" / "errors" / f"{error_id}.json").read_text("utf-8"))
    return next(f for f in record["analysis"]["findings"] if f["rule"] == rule)


def card(out: Path, error_id: str) -> str:
    return (out / "errors" / f"{error_id}.md").read_text("utf-8")


def worded(out: Path, error_id: str) -> str:
    """What it means, Solutions and Example fix as ``miner mine --findings-words``
    words them (:func:`miner.publish.findings.shown` of the record's analysis)."""
    from miner.model import Analysis
    from miner.publish.findings import shown

    record = json.loads((out / "api" / "errors" / f"{error_id}.json").read_text("utf-8"))
    analysis = shown(Analysis.from_json(error_id, record["analysis"]))
    fix = analysis.example_fix
    example = f"{fix.before}\n{fix.after}" if fix else ""
    return "\n".join([analysis.what_it_means or "", *analysis.solutions, example])


BACKUP = "--disaggregation-decode-retraction-backup"


def test_memory_pool_host_pool_retraction(out: Path) -> None:
    """registry.py:152-154 raises for host_pool with ctx.is_hybrid_ssm; the
    flag takes cpu_tensor/host_pool, default None (server_args.py:3211); left
    out, resolve_decode_retraction_backup picks host_pool only when
    supports_host_pool, which needs not uses_ssm_state(...) (kv_cache_builder.py:155,
    :167-180), so a model with SSM state gets cpu_tensor; the comment at :153
    says why."""
    assert findings(out, "8865a830b5941226") == [
        ("cause", "cause-flag", BACKUP, "==", ("host_pool",), "", (BACKUP, "host_pool"), None),
        ("reason", "reason-setting-comment", BACKUP, "", (), "", (), None),
        ("fix", "fix-flag-value", BACKUP, "==", ("host_pool",), "set", (BACKUP, "cpu_tensor"),
         "cpu_tensor"),
        ("fix", "fix-flag-leave-out", BACKUP, "==", ("host_pool",), "leave-out", (), "cpu_tensor"),
    ]  # fmt: skip
    reason = finding(out, "8865a830b5941226", "reason-setting-comment")
    assert reason["quote_at"] == "python/sglang/srt/mem_cache/kv_cache_builder.py:153"
    assert "recurrent state stays on cpu_tensor" in reason["quote"]
    leave = finding(out, "8865a830b5941226", "fix-flag-leave-out")
    assert leave["resolved_at"] == ["python/sglang/srt/mem_cache/kv_cache_builder.py:180"]
    assert leave["quote"] == "not uses_ssm_state(tp_worker.model_runner.model_config)"


def test_mlx_auxiliary_state_offers_no_buffer_or_disabling_never_auto(out: Path) -> None:
    """auxiliary_state.py:333-334 raises when params.enable_mamba_extra_buffer,
    which is --disable-radix-cache off and --mamba-radix-cache-strategy in
    extra_buffer/extra_buffer_lazy (model_override_base.py:260-270); the
    default auto is turned into extra_buffer (overrides.py:591)."""
    strategy = "--mamba-radix-cache-strategy"
    both = ("--disable-radix-cache", strategy)
    buffers = ("extra_buffer", "extra_buffer_lazy")
    assert findings(out, "a56ddfd77b7a8221") == [
        ("cause", "cause-flag", strategy, "in", buffers, "", (strategy, "extra_buffer"), None),
        ("cause", "cause-flag", "--disable-radix-cache", "false", (), "", (), "False"),
        ("reason", "reason-not-implemented", "", "", both, "", (), None),
        ("fix", "fix-flag-switch", "--disable-radix-cache", "false", (), "on",
         ("--disable-radix-cache",), "True"),
        ("fix", "fix-flag-value", strategy, "in", buffers, "set", (strategy, "no_buffer"),
         "no_buffer"),
    ]  # fmt: skip
    value = finding(out, "a56ddfd77b7a8221", "fix-flag-value")
    assert "python/sglang/srt/arg_groups/overrides.py:591" in value["resolved_at"]
    assert f"{strategy} auto" not in card(out, "a56ddfd77b7a8221")
    assert f"{strategy} auto" not in worded(out, "a56ddfd77b7a8221")


def test_diffusion_teacache_needs_teacache_enabled(out: Path) -> None:
    """hunyuanvideo.py:955-959: enable_teacache = forward_batch.enable_teacache,
    raised when it is true; --enable-teacache is a SamplingParams switch off by
    default (sampling_params.py:938)."""
    assert findings(out, "1937cfc6f7eed527") == [
        ("cause", "cause-flag", "--enable-teacache", "true", (), "", ("--enable-teacache",), None),
        ("reason", "reason-not-implemented", "", "", ("--enable-teacache",), "", (), None),
        ("fix", "fix-flag-switch", "--enable-teacache", "true", (), "drop",
         ("--enable-teacache",), "False"),
    ]  # fmt: skip
    assert "you pass `--enable-teacache`" in worded(out, "1937cfc6f7eed527")


def test_scheduler_custom_logit_processor_needs_the_switch(out: Path) -> None:
    """tokenizer_manager.py:1246-1250: a request's custom_logit_processor
    without --enable-custom-logit-processor (server_args.py:3570, off by default)."""
    assert findings(out, "715876c5ceb83d4e")[-1] == (
        "fix", "fix-flag-switch", "--enable-custom-logit-processor", "false", (), "on",
        ("--enable-custom-logit-processor",), "True",
    )  # fmt: skip
    kinds = [(f[0], f[1], f[2]) for f in findings(out, "715876c5ceb83d4e")]
    assert ("cause", "cause-request", "custom_logit_processor") in kinds


def test_quantization_svdquant_is_dropped(out: Path) -> None:
    """nunchaku.py:103-104 returns early unless enable_svdquant, :129-130
    raises without --transformer-weights-path: that is the cause (the
    guard that decides it reads it); dropping --enable-svdquant returns at
    :104."""
    assert findings(out, "530b498e8e3ef789")[0][:4] == (
        "cause", "cause-flag", "--transformer-weights-path", "false"
    )  # fmt: skip
    assert findings(out, "530b498e8e3ef789")[-1] == (
        "fix", "fix-flag-switch", "--enable-svdquant", "true", (), "drop",
        ("--enable-svdquant",), "False",
    )  # fmt: skip


def test_disaggregation_decode_dcp_radix_cache(out: Path) -> None:
    """pd_disaggregation_hook.py:53 (decode and dcp_size > 1), :56-65 (a raise
    for other transfer backends: not a fix), :66-67 raises for the decode
    radix cache (server_args.py:3201, a switch)."""
    fixes = [f for f in findings(out, "4c64b5ae7c03a4bc") if f[0] == "fix"]
    assert fixes == [
        ("fix", "fix-flag-switch", "--disaggregation-decode-enable-radix-cache", "true", (),
         "drop", ("--disaggregation-decode-enable-radix-cache",), "False"),
        ("fix", "fix-flag-value", "--disaggregation-mode", "==", ("decode",), "set",
         ("--disaggregation-mode", "prefill"), "prefill"),
        ("fix", "fix-flag-leave-out", "--disaggregation-mode", "==", ("decode",), "leave-out",
         (), "'null'"),
        ("fix", "fix-flag-leave-out", "--dcp-size", ">", ("1",), "leave-out", (), "1"),
    ]  # fmt: skip


def test_openai_rerank_needs_jinja2_installed(out: Path) -> None:
    """serving_rerank.py:122-126: import jinja2 fails -> ValueError."""
    assert findings(out, "0bdc2b4ee62362b7") == [
        ("cause", "cause-package", "jinja2", "missing", (), "", (), None),
        ("fix", "fix-install", "jinja2", "missing", (), "install", ("pip", "install", "jinja2"),
         "jinja2"),
    ]  # fmt: skip


def test_model_config_context_length_env(out: Path) -> None:
    """model_config.py:873-886: raised unless
    SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN (environ.py:308, EnvBool(False))
    or is_in_ci()."""
    fixes = [f for f in findings(out, "041373c1119102fb") if f[0] == "fix"]
    assert fixes[0] == (
        "fix", "fix-env", "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN", "false", (), "set-env",
        ("SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1",), "1",
    )  # fmt: skip


def test_speculative_dflash_device(out: Path) -> None:
    """speculative_hook.py:190-191: not (device startswith cuda or == npu)."""
    assert findings(out, "0c031f4019de5e0f") == [
        ("cause", "cause-flag", "--device", "!=", ("npu",), "", (), "None"),
        ("fix", "fix-flag-value", "--device", "!=", ("npu",), "set", ("--device", "npu"), "npu"),
    ]


def test_lora_embedding_reason_is_the_comment_above(out: Path) -> None:
    """lora/layers.py:110-112 says why: input_scattered skips the base
    all-reduce; the assert at :114-116 reads allow_input_scattered, set from
    --enable-attn-tp-input-scattered and more (communicator.py:297-305)."""
    reason = finding(out, "5768a7b2850c9a1a", "reason-comment")
    assert reason["quote_at"] == "python/sglang/srt/lora/layers.py:110"
    assert reason["quote"].startswith("input_scattered mode (DeepSeek-v2 MLA) skips the base")
    assert findings(out, "5768a7b2850c9a1a")[0][:3] == (
        "cause",
        "cause-flag",
        "--enable-attn-tp-input-scattered",
    )


def test_moe_a2a_alternatives_give_no_fix(out: Path) -> None:
    """runner.py:79-80: get_moe_a2a_backend() is either a2a flag; the check at
    :70 raises for hpc_ops, so --moe-runner-backend is no fix either."""
    assert [f for f in findings(out, "035199087bd561f0") if f[0] == "fix"] == []
