"""Origins on the real SGLang release v0.5.19 (issue 33's examples): the
errors at these sites of the session's shared release (``analysed_release``,
mined without the origins stage) traced with
:func:`miner.analysis.origins.trace_origins` over the same files and facts,
and read as their JSON records carry them (``Origin.to_json``)."""

from __future__ import annotations

from typing import Any

import git
import pytest

from miner import pipeline
from miner.analysis.origins import Traced, kind_counts, trace_origins
from miner.mining import source
from miner.model import OriginKind

pytestmark = pytest.mark.integration

SRT = "python/sglang/srt"
GEN = "python/sglang/multimodal_gen"
LASER = f"{GEN}/runtime/layers/attention/backends/laser_attn.py"
#: The primary sites of the examples.
SITES = (
    (f"{SRT}/layers/moe/token_dispatcher/deepep.py", 376),
    (f"{SRT}/layers/quantization/mxfp4.py", 632),
    (f"{SRT}/arg_groups/attention_hook.py", 579),
    (f"{GEN}/configs/sample/sampling_params.py", 592),
    (f"{SRT}/entrypoints/openai/serving_chat.py", 2176),
    (f"{SRT}/layers/attention/dsv4/compressor.py", 104),
    (f"{SRT}/layers/attention/dsv4/compressor.py", 246),
)
COMPRESSOR = f"{SRT}/layers/attention/dsv4/compressor.py"
#: Errors the word rules put before users that only program state decides
#: (issue 33): a broker thread that did not stop, a kernel's argument check,
#: an elastic-EP consistency check, an ffprobe check of SGLang's own output,
#: an internal API contract, an out-of-tree plugin contract.
INTERNAL_SITES = (
    (f"{SRT}/utils/cuda_vmm_transport_utils.py", 106),
    ("python/sglang/kernels/ops/gemm/flashinfer_pr4266_dense_bf16_gemm_sm100_direct.py", 331),
    (f"{SRT}/managers/scheduler_components/dp_attn.py", 68),
    (
        f"{GEN}/runtime/pipelines_core/stages/model_specific_stages/minimax_h3/video_adapter.py",
        473,
    ),
    (f"{GEN}/runtime/distributed/group_coordinator.py", 535),
    (f"{SRT}/sampling/sampling_observer_pp.py", 52),
)
POOL = (f"{SRT}/model_executor/pool_configurator.py", 86)
#: A check whether the installed PyTorch has a dtype; a model config class
#: refusing a key of config.json it does not know.
TORCH_DTYPE = (f"{SRT}/mem_cache/memory_pool.py", 3292)
DBRX = (f"{SRT}/configs/dbrx.py", 52)
#: Rebuilding a pre-tokenized multimodal prompt: its only call (base_processor.py:1767)
#: is in a ``try`` whose ``except Exception`` logs a warning and falls back.
EXPAND = (f"{SRT}/multimodal/processors/base_processor.py", 1665)
#: Issue 33, the second review: the ``else`` of a dispatch on
#: ``--sampling-backend``, and on every member of ``DisaggregationMode``; an
#: environment variable trimmed and lowered; a raise caught two frames up.
SAMPLER = (f"{SRT}/layers/sampler.py", 329)
QUEUE = (f"{SRT}/managers/scheduler.py", 3040)
KLVAE = (f"{GEN}/runtime/models/vaes/minimax_h3_video_vae/klvae.py", 51)
MORI = (f"{SRT}/disaggregation/mori/conn.py", 1612)
REVIEWED = (SAMPLER, QUEUE, KLVAE, MORI)


@pytest.fixture(scope="module")
def traced(analysed_release, corpus) -> tuple[Traced, dict[tuple[str, int], str]]:
    """(origins of the examples' errors, (path, line) -> error id)."""
    mined, _ = analysed_release("v0.5.19")
    result = mined.result
    wanted = {(e.primary.path, e.primary.line): e for e in result.errors}
    keys = (*SITES, *INTERNAL_SITES, POOL, TORCH_DTYPE, DBRX, EXPAND, *REVIEWED)
    picked = {key: wanted[key] for key in keys}
    picked[(LASER, 23)] = wanted[(LASER, 23)]
    repo = git.Repo(corpus)
    entries = source.python_blobs(repo, source.resolve_commit(repo, "v0.5.19"))
    files = pipeline.facts_sources(repo, entries, result)
    found = trace_origins(files, picked.values(), mined.facts)
    return found, {key: error.error_id for key, error in picked.items()}


def record(traced: Any, path: str, line: int) -> dict[str, Any]:
    """The analysis JSON of the error whose primary site is ``path:line``."""
    found, ids = traced
    error_id = ids[(path, line)]
    logged = found.logged.get(error_id)
    unreachable = found.unreachable.get(error_id)
    return {
        "analysis": {
            "origins": [o.to_json() for o in found.origins[error_id]],
            "logged": None if logged is None else logged.to_json(),
            "unreachable": None if unreachable is None else unreachable.to_json(),
        }
    }


def origins(data: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [o for o in data["analysis"]["origins"] if o["kind"] == kind]


def test_deepep_buffer_needs_the_deep_ep_package(traced: Any) -> None:
    data = record(traced, f"{SRT}/layers/moe/token_dispatcher/deepep.py", 376)
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


def test_mxfp4_marlin_is_the_moe_runner_backend_flag(traced: Any) -> None:
    data = record(traced, f"{SRT}/layers/quantization/mxfp4.py", 632)
    flags = [o for o in origins(data, "flag") if o["name"] == "--moe-runner-backend"]
    assert flags[0]["constraint"] == {"op": "==", "values": ["marlin"]}
    assert flags[0]["owner"] == "ServerArgs"
    assert flags[0]["read"] == "self.use_marlin"
    assert [h["line"] for h in flags[0]["chain"][:2]] == [618, 396]
    assert flags[0]["chain"][1]["text"] == "self.use_marlin = get_moe_runner_backend().is_marlin()"


def test_is_deepseek_model_is_the_architectures_of_the_model_config(traced: Any) -> None:
    data = record(traced, f"{SRT}/arg_groups/attention_hook.py", 579)
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


def test_boundary_ratio_is_the_flag_of_the_diffusion_sampling_params(traced: Any) -> None:
    data = record(traced, f"{GEN}/configs/sample/sampling_params.py", 592)
    found = [o for o in origins(data, "flag") if o["name"] == "--boundary-ratio"]
    assert found, data["analysis"]["origins"]
    assert {o["owner"] for o in found} == {"SamplingParams"}
    # the flag's add_argument in SamplingParams.add_cli_args (not the diffusion ServerArgs)
    assert {o["defined"] for o in found} == {f"{GEN}/configs/sample/sampling_params.py:1232"}
    assert found[0]["constraint"] == {"op": "is not None", "values": []}


def test_laser_attention_needs_the_attentions_package_of_sgl_kernel_npu(
    traced: Any,
) -> None:
    data = record(traced, LASER, 23)
    assert [(o["name"], o["owner"], o["constraint"]["op"]) for o in origins(data, "package")] == [
        ("attentions", "sgl-kernel-npu", "missing")
    ]


def test_tool_call_parse_error_is_caught_and_logged(traced: Any) -> None:
    data = record(traced, f"{SRT}/entrypoints/openai/serving_chat.py", 2176)
    assert data["analysis"]["logged"] == {
        "path": f"{SRT}/entrypoints/openai/serving_chat.py",
        "line": 2203,
        "types": "Exception",
        "frame": "same",
        "logs": True,
    }


def test_the_hip_compressor_check_is_unreachable_every_call_passes_is_paged(
    traced: Any,
) -> None:
    """``git -C $RAISE_MINER_CORPUS grep -n "is_paged=" v0.5.19``: the only
    calls of the mixin's ``forward_compress`` (compressor.py:484,
    compress_hip.py:353; the call at compressor.py:514 cannot bind to it and
    goes to the NPU backend's) pass ``is_paged=True``; line 104 needs ``not
    is_paged``, and ``make_compressor_plan`` (line 246) is called only in
    its ``else`` (line 98)."""
    hip = record(traced, COMPRESSOR, 104)["analysis"]["unreachable"]
    assert (hip["path"], hip["line"], hip["condition"]) == (COMPRESSOR, 103, "not is_paged")
    calls = sorted((v["chain"][-1]["path"], v["chain"][-1]["line"]) for v in hip["values"])
    assert calls == [(f"{SRT}/layers/attention/dsv4/compress_hip.py", 353), (COMPRESSOR, 484)]
    assert {v["name"] for v in hip["values"]} == {"True"}
    plan = record(traced, COMPRESSOR, 246)["analysis"]["unreachable"]
    assert (plan["path"], plan["line"], plan["condition"]) == (COMPRESSOR, 88, "not is_paged")
    assert {v["chain"][-1]["text"] for v in plan["values"]} == {"is_paged=True"}


def test_a_user_setting_error_is_not_unreachable(traced: Any) -> None:
    for path, line in SITES[:5]:
        assert record(traced, path, line)["analysis"]["unreachable"] is None, (path, line)


def test_origins_are_counted_for_every_kind(traced: Any) -> None:
    found, _ = traced
    counts = kind_counts(found)
    assert set(counts) == {k.value for k in OriginKind}
    assert sum(counts.values()) == sum(len(o) for o in found.origins.values())
    assert counts["flag"] > 0 and counts["package"] > 0 and counts["model-config"] > 0


@pytest.fixture(scope="module")
def audiences(traced, analysed_release) -> dict[tuple[str, int], Any]:
    """(path, line) -> the audience decided from the traced origins."""
    from miner.analysis.audience import Settings, classify_by_origins

    mined, _ = analysed_release("v0.5.19")
    found, ids = traced
    settings = Settings.from_config(mined.facts.config, mined.facts.predicates)
    errors = {e.error_id: e for e in mined.result.errors}
    return {
        key: classify_by_origins(
            errors[i], found.origins[i], settings, found.logged.get(i), found.unreachable.get(i)
        )
        for key, i in ids.items()
    }


@pytest.mark.parametrize("site", INTERNAL_SITES, ids=lambda s: f"{s[0].rsplit('/', 1)[-1]}:{s[1]}")
def test_an_error_only_program_state_decides_is_internal(audiences, site) -> None:
    decision = audiences[site]
    assert (decision.audience.value, decision.rule) == ("internal", "origin-internal")


def test_not_enough_memory_is_a_setting_the_message_names(traced, audiences) -> None:
    """``pool_configurator.py:86`` builds its message in steps and names
    ``--mem-fraction-static``, whose value the message shows."""
    decision = audiences[POOL]
    assert (decision.audience.value, decision.rule) == ("user-setting", "origin-advice")
    shown = origins(record(traced, *POOL), "flag")
    assert [(o["name"], o["role"], o["owner"]) for o in shown] == [
        ("--mem-fraction-static", "message", "ServerArgs")
    ]


def test_deepep_is_a_dependency_and_marlin_on_an_old_gpu_a_combination(audiences) -> None:
    """deepep.py:376 raises when neither ``deep_ep`` nor NPU's ``zbal``
    imported; mxfp4.py:632, under ``--moe-runner-backend marlin`` (the guard
    at line 618), when the GPU is none of SM90, SM100 or SM120 (line 627):
    the hardware decides under a flag, a combination this release refuses."""
    deepep = audiences[SITES[0]]
    assert (deepep.audience.value, deepep.rule) == ("dependency", "origin-dependency")
    marlin = audiences[SITES[1]]
    assert (marlin.audience.value, marlin.rule) == ("unsupported", "origin-combination")
    assert marlin.reason == (
        "hardware get_platform().is_sm90 via get_platform().is_sm90 under "
        "flag --moe-runner-backend (ServerArgs) via self.use_marlin"
    )


def test_a_tool_call_parse_error_caught_and_logged_is_internal(audiences) -> None:
    decision = audiences[SITES[4]]
    assert (decision.audience.value, decision.rule) == ("internal", "origin-logged")


def test_mxfp8_kv_cache_needs_a_torch_with_the_e8m0_dtype(traced: Any) -> None:
    data = record(traced, *TORCH_DTYPE)
    assert [
        (o["name"], o["owner"], o["constraint"], o["read"]) for o in origins(data, "package")
    ] == [("torch", "torch", {"op": "false", "values": []}, 'hasattr(torch, "float8_e8m0fnu")')]


def test_an_unknown_key_of_the_dbrx_attention_config_is_the_models_config_json(
    traced: Any,
) -> None:
    data = record(traced, *DBRX)
    found = [(o["name"], o["owner"], o["role"]) for o in origins(data, "model-config")]
    assert found[0] == ("kwargs", "config.json (DbrxAttentionConfig)", "condition")
    # the caller: DbrxConfig.__init__ builds it from its own attn_config key
    assert ("attn_config", "config.json (DbrxConfig)", "caller") in found


def test_every_member_of_disaggregation_mode_is_handled_before_the_else(
    traced: Any, audiences: Any
) -> None:
    """``Scheduler._add_request_to_queue``: branches on ``DisaggregationMode``
    NULL (line 3021), PREFILL (3027) and DECODE (3033), the three members
    ``disaggregation/utils.py:101`` defines; the ``else`` raises (3040)."""
    fact = record(traced, *QUEUE)["analysis"]["unreachable"]
    assert fact == {
        "path": QUEUE[0],
        "line": 3033,
        "condition": "self.disaggregation_mode",
        "values": [],
        "subject": "DisaggregationMode",
        "choices": [
            "DisaggregationMode.NULL",
            "DisaggregationMode.PREFILL",
            "DisaggregationMode.DECODE",
        ],
        "uncalled": False,
        "guard": "",
    }
    decision = audiences[QUEUE]
    assert (decision.audience.value, decision.rule) == ("internal", "origin-unreachable")
    assert decision.reason == (
        "every value of DisaggregationMode (DisaggregationMode.NULL, "
        "DisaggregationMode.PREFILL, DisaggregationMode.DECODE) is handled before "
        f"the else ({QUEUE[0]}:3033)"
    )


def test_a_sampling_backend_the_branches_do_not_handle_keeps_the_else_a_setting(
    traced: Any, audiences: Any, analysed_release: Any
) -> None:
    """``--sampling-backend``'s choices are ``set(SAMPLING_BACKEND_CHOICES)``
    (server_args.py:268: flashinfer, pytorch, ascend) plus ``token_oracle``
    when ``SGLANG_KV_CANARY_ENABLE_TOKEN_ORACLE`` is set (3790-3791), and its
    default is None (``ServerArgs.sampling_backend``, line 1697).
    ``_sample_from_probs`` handles flashinfer (300) and pytorch (317); its
    one call (241) is past ``if self.use_ascend_backend`` (196), so ascend
    never reaches it, but token_oracle and None do, as far as the code
    says: the raise stays a setting's."""
    mined, _ = analysed_release("v0.5.19")
    option = mined.facts.config.option("sampling_backend")
    assert option is not None
    assert (option.flag, option.choices, option.default) == (
        "--sampling-backend",
        ("flashinfer", "pytorch", "ascend", "token_oracle"),
        "None",
    )
    data = record(traced, *SAMPLER)
    assert data["analysis"]["unreachable"] is None
    backend = [o for o in origins(data, "flag") if o["name"] == "--sampling-backend"]
    assert [(o["role"], o["constraint"]) for o in backend] == [
        ("condition", {"op": "!=", "values": ["flashinfer"]}),
        ("condition", {"op": "!=", "values": ["pytorch"]}),
        ("caller", {"op": "!=", "values": ["ascend"]}),
        ("message", {"op": "any", "values": []}),
    ]
    assert audiences[SAMPLER].audience.value == "user-setting"


def test_a_vae_dtype_variable_read_trimmed_and_lowered_is_the_env_origin(traced: Any) -> None:
    """klvae.py:36 ``raw = os.environ.get("MINIMAX_H3_VAE_DECODER_TEMPORAL_CAT_DTYPE",
    "").strip().lower()``; line 50 raises when ``raw not in mapping`` (the
    dict of line 41)."""
    found = origins(record(traced, *KLVAE), "env")
    assert {o["name"] for o in found} == {"MINIMAX_H3_VAE_DECODER_TEMPORAL_CAT_DTYPE"}
    assert {o["default"] for o in found} == {"''"}
    mapping = next(o for o in found if o["chain"][0]["line"] == 50)
    assert mapping["constraint"] == {
        "op": "not in",
        "values": ["fp16", "float16", "half", "bf16", "bfloat16", "fp32", "float32"],
    }
    assert mapping["chain"][1]["line"] == 36
    # the condition reads the variable alone; the message shows the value
    # with no demand on it (runtime state)
    assert [o["role"] for o in origins(record(traced, *KLVAE), "internal")] == ["message"]


def test_a_mori_transfer_failure_is_caught_by_the_worker_two_frames_up(
    traced: Any, audiences: Any
) -> None:
    """``_submit_kv_transfer`` raises at 1612; its one call (462) in
    ``_process_transfer_chunk`` has no ``try``; that function's one call
    (430) in ``_transfer_worker`` is in a ``try`` whose ``except Exception``
    (431) logs and does not raise again."""
    assert record(traced, *MORI)["analysis"]["logged"] == {
        "path": MORI[0],
        "line": 431,
        "types": "Exception",
        "frame": "caller",
        "logs": True,
    }
    decision = audiences[MORI]
    assert (decision.audience.value, decision.rule) == ("internal", "origin-logged")


def test_a_placeholder_mismatch_caught_by_the_callers_fallback_is_logged(traced: Any) -> None:
    """``_expand_input_ids`` raises at :1665; its one call (:1767) is inside
    ``try`` ... ``except Exception as e: logger.warning(... falling back to
    decode+retokenize ...)`` (:1774-1777): the user sees a warning, not the error."""
    data = record(traced, *EXPAND)
    assert data["analysis"]["logged"] == {
        "path": f"{SRT}/multimodal/processors/base_processor.py",
        "line": 1774,
        "types": "Exception",
        "frame": "caller",
        "logs": True,
    }
