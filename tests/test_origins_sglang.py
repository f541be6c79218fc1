"""Origins on the real SGLang release v0.5.19 (issue 33's examples), read from the
published JSON of the shared mined release."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from miner.model import OriginKind

pytestmark = pytest.mark.integration

SRT = "python/sglang/srt"
GEN = "python/sglang/multimodal_gen"


def record(mined_release: Any, path: str, line: int) -> dict[str, Any]:
    """The published error record whose primary site is ``path:line``."""
    result, out = mined_release("v0.5.19")
    error = next(e for e in result.errors if (e.primary.path, e.primary.line) == (path, line))
    return json.loads((Path(out) / "api" / "errors" / f"{error.error_id}.json").read_text())


def origins(data: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [o for o in data["analysis"]["origins"] if o["kind"] == kind]


def test_deepep_buffer_needs_the_deep_ep_package(mined_release: Any) -> None:
    data = record(mined_release, f"{SRT}/layers/moe/token_dispatcher/deepep.py", 376)
    found = {o["name"]: o for o in origins(data, "package")}
    assert found["deep_ep"]["owner"] == "deep_ep"
    assert found["deep_ep"]["constraint"] == {"op": "missing", "values": []}
    assert found["deep_ep"]["read"] == "use_deepep"
    assert found["deep_ep"]["defined"] == f"{SRT}/layers/moe/token_dispatcher/deepep.py:47"
    assert found["deep_ep"]["chain"][-1] == {
        "path": f"{SRT}/layers/moe/token_dispatcher/deepep.py",
        "line": 52,
        "text": "from deep_ep import Buffer, Config",
    }


def test_mxfp4_marlin_is_the_moe_runner_backend_flag(mined_release: Any) -> None:
    data = record(mined_release, f"{SRT}/layers/quantization/mxfp4.py", 632)
    flags = [o for o in origins(data, "flag") if o["name"] == "--moe-runner-backend"]
    assert flags[0]["constraint"] == {"op": "==", "values": ["marlin"]}
    assert flags[0]["owner"] == "ServerArgs"
    assert flags[0]["read"] == "self.use_marlin"
    assert [h["line"] for h in flags[0]["chain"][:2]] == [618, 396]
    assert flags[0]["chain"][1]["text"] == "self.use_marlin = get_moe_runner_backend().is_marlin()"


def test_is_deepseek_model_is_the_architectures_of_the_model_config(mined_release: Any) -> None:
    data = record(mined_release, f"{SRT}/arg_groups/attention_hook.py", 579)
    found = origins(data, "model-config")
    assert found[0]["name"] == "architectures"
    assert found[0]["owner"] == "config.json"
    assert found[0]["constraint"]["op"] == "in"
    assert found[0]["constraint"]["values"] == [
        "DeepseekV2ForCausalLM",
        "DeepseekV3ForCausalLM",
        "DeepseekV32ForCausalLM",
        "MistralLarge3ForCausalLM",
        "PixtralForConditionalGeneration",
        "GlmMoeDsaForCausalLM",
        "Glm4MoeLiteForCausalLM",
    ]
    backend = [o for o in origins(data, "flag") if o["name"] == "--attention-backend"]
    assert backend[0]["constraint"] == {
        "op": "not in",
        "values": ["ascend", "fa3", "fa4", "triton"],
    }


def test_boundary_ratio_is_the_flag_of_the_diffusion_sampling_params(mined_release: Any) -> None:
    data = record(mined_release, f"{GEN}/configs/sample/sampling_params.py", 592)
    found = [o for o in origins(data, "flag") if o["name"] == "--boundary-ratio"]
    assert found, data["analysis"]["origins"]
    assert {o["owner"] for o in found} == {"SamplingParams"}
    # the flag's add_argument in SamplingParams.add_cli_args (not the diffusion ServerArgs)
    assert {o["defined"] for o in found} == {f"{GEN}/configs/sample/sampling_params.py:1232"}
    assert found[0]["constraint"] == {"op": "is not None", "values": []}


def test_laser_attention_needs_the_attentions_package_of_sgl_kernel_npu(
    mined_release: Any,
) -> None:
    path = f"{GEN}/runtime/layers/attention/backends/laser_attn.py"
    data = record(mined_release, path, 23)
    assert [(o["name"], o["owner"], o["constraint"]["op"]) for o in origins(data, "package")] == [
        ("attentions", "sgl-kernel-npu", "missing")
    ]


def test_tool_call_parse_error_is_caught_and_logged(mined_release: Any) -> None:
    data = record(mined_release, f"{SRT}/entrypoints/openai/serving_chat.py", 2176)
    assert data["analysis"]["logged"] == {
        "path": f"{SRT}/entrypoints/openai/serving_chat.py",
        "line": 2203,
        "types": "Exception",
        "frame": "same",
        "logs": True,
    }


def test_manifest_counts_origins_per_kind_and_logged_errors(mined_release: Any) -> None:
    result, out = mined_release("v0.5.19")
    counts = json.loads((Path(out) / "manifest.json").read_text())["counts"]
    by_kind = counts["origins_by_kind"]
    assert set(by_kind) == {k.value for k in OriginKind}  # written with sorted keys
    rows = [json.loads(line) for line in (Path(out) / "analyses.jsonl").read_text().splitlines()]
    total = {k.value: 0 for k in OriginKind}
    for row in rows:
        for origin in row["analysis"]["origins"]:
            total[origin["kind"]] += 1
    assert by_kind == total
    assert by_kind["flag"] > 1000 and by_kind["package"] > 100
    assert counts["errors_logged"] == sum(1 for r in rows if r["analysis"]["logged"])
    assert counts["errors_logged"] > 0
