"""Acceptance on the real release: SGLang v0.5.19 from the release repository
($RAISE_MINER_CORPUS), mined once for this module, with its HTML site.

`miner lookup` gets pasted messages, log lines and tracebacks rendered from
real templates (placeholders filled with realistic values) and must return
the expected card first; texts from elsewhere must match nothing. The site is
opened in headless Chromium and searched the same way.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from browser import Watched, artifacts, chromium
from sample_repo import documented_at

from miner import cli
from miner.lookup import GOOD, LookupIndex, ReleaseBook, life_sentences, search_releases
from miner.model import MineResult

pytestmark = pytest.mark.integration

TAG = "v0.5.19"
SP = "/usr/lib/python3.11/site-packages/sglang"

HOST_POOL = f"""\
[2026-09-10 12:00:00 TP0] Scheduler hit an exception: Traceback (most recent call last):
  File "{SP}/srt/managers/scheduler.py", line 3712, in run_scheduler_process
    scheduler = Scheduler(server_args, port_args, gpu_id, tp_rank, moe_ep_rank, pp_rank, dp_rank)
                ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "{SP}/srt/managers/scheduler.py", line 402, in __init__
    self.init_cache_with_memory_pool()
  File "{SP}/srt/mem_cache/registry.py", line 147, in create_tree_cache
    return _create_unified_radix_cache(ctx, server_args, params)
           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "{SP}/srt/mem_cache/registry.py", line 154, in _create_unified_radix_cache
    raise ValueError("Host-pool retraction does not support Mamba models.")
ValueError: Host-pool retraction does not support Mamba models.

[2026-09-10 12:00:01] Received sigquit from a child process. It usually means the child failed.
"""

LORA = f"""\
Traceback (most recent call last):
  File "{SP}/srt/entrypoints/http_server.py", line 610, in generate_request
    ret = await _global_state.tokenizer_manager.generate_request(obj, request).__anext__()
  File "{SP}/srt/managers/tokenizer_manager.py", line 3368, in _resolve_lora_path
    raise ValueError(
ValueError: Got LoRA adapter that has never been loaded: /loras/sql-adapter
All loaded adapters: dict_keys(['chat-adapter', 'math-adapter']).
"""

CHAINED = f"""\
Traceback (most recent call last):
  File "{SP}/srt/mem_cache/storage/hf3fs/storage_hf3fs.py", line 329, in from_env_config
    config = json.load(f)
json.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)

During handling of the above exception, another exception occurred:

Traceback (most recent call last):
  File "{SP}/srt/mem_cache/storage/hf3fs/storage_hf3fs.py", line 331, in from_env_config
    raise RuntimeError(f"Failed to load config from {{config_path}}: {{str(e)}}")
RuntimeError: Failed to load config from /etc/hf3fs/config.json: Expecting value: line 1 column 1 (char 0)
"""  # noqa: E501

#: (pasted text, path, line of the site whose card must come first)
CASES: list[tuple[str, str, int]] = [
    (HOST_POOL, "python/sglang/srt/mem_cache/registry.py", 154),
    (
        "MlxAuxiliaryStateComponent requires MlxAuxiliaryStatePool, got <class 'NoneType'>",
        "python/sglang/srt/hardware_backend/mlx/kv_cache/auxiliary_state.py",
        340,
    ),
    (LORA, "python/sglang/srt/managers/tokenizer_manager.py", 3368),
    (CHAINED, "python/sglang/srt/mem_cache/storage/hf3fs/storage_hf3fs.py", 331),
    (
        "[2026-09-10 12:00:00 TP0] ValueError: speculative_eagle_topk(4) > 1 with page_size(16)"
        " > 1 is unstable and produces incorrect results for paged attention backends. This"
        " combination is only supported for the 'flashinfer' backend.",
        "python/sglang/srt/arg_groups/speculative_hook.py",
        897,
    ),
    (
        "sglang.srt.hardware_backend.mlx.remote_code_gate.RemoteCodeGateError: config.json in "
        "/root/.cache/huggingface/hub/models--Qwen--Qwen3-8B must contain a JSON object, "
        "found list",
        "python/sglang/srt/hardware_backend/mlx/remote_code_gate.py",
        92,
    ),
    (
        "ValueError: mamba_state_scatter: dst entry dims (dims 2..3) must be contiguous; "
        "got shape=(8, 4, 128) strides=(512, 1, 4)",
        "python/sglang/kernels/ops/mamba/mamba_state_scatter_triton.py",
        25,
    ),
    (
        "registration_granularity_bytes must be positive, got 0",
        "python/sglang/srt/mem_cache/pool_host/common.py",
        140,
    ),
    (
        "AssertionError: Req 3f9c2a1b7d4e4c8f9a0b does not have metadata buffer allocated",
        "python/sglang/srt/disaggregation/prefill.py",
        855,
    ),
    (
        "ValueError: FA3 `_apply_cuda_graph_metadata` only supports the modes the full cuda-graph"
        " runner captures (decode / idle / target_verify / draft_extend / draft_extend_v2). Got "
        "forward_mode=<ForwardMode.EXTEND: 1>. Piecewise / breakable capture must route through "
        "`init_forward_metadata(fb)` (the eager entry) instead of "
        "`init_forward_metadata_out_graph(fb, in_capture=True)`.",
        "python/sglang/srt/layers/attention/flashattention_backend.py",
        3115,
    ),
    (
        "hc_fn shape torch.Size([4, 1024]) does not match (hc_mult=4, hc_mult*hidden_size=28672)",
        "python/sglang/kernels/ops/layernorm/mhc_head.py",
        118,
    ),
    (
        "RuntimeError: KDA verify needs 8 scratch steps, but intermediate_ssm only has 4.",
        "python/sglang/srt/layers/attention/linear/kernels/kda_flashinfer.py",
        299,
    ),
    (
        "RuntimeError: attn_res_fused_tma requires SM100+ excluding SM12x; SM90 is unsupported",
        "python/sglang/kernels/ops/kimi_k3/attn_res.py",
        40,
    ),
    (
        "OSError: insufficient free space: free=1073741824, remaining_pack=4294967296, "
        "safety=536870912",
        "python/sglang/srt/model_loader/expert_pack/build.py",
        339,
    ),
    (
        "DSpark NPU graph sparse-index shape mismatch: runtime=(4, 2048), captured=(8, 2048).",
        "python/sglang/srt/hardware_backend/npu/attention/ascend_dsv4_backend.py",
        1364,
    ),
    (
        "2026-09-10 12:00:00,123 ERROR: ValueError: noise_aug must be in [0, 1], got 1.5",
        "python/sglang/multimodal_gen/runtime/pipelines_core/stages/model_specific_stages/"
        "minimax_h3/condition_noise.py",
        144,
    ),
    (
        "ValueError: kv must be on q's device cuda:0, got cpu",
        "python/sglang/kernels/ops/attention/sparse_mla_q8kv8_prefill_sm90.py",
        324,
    ),
    (
        "RuntimeError: Invalid scatter_dim=3, gather_dim=1. Only (scatter_dim=2, gather_dim=1) "
        "and (scatter_dim=1, gather_dim=2) are supported.",
        "python/sglang/multimodal_gen/runtime/distributed/device_communicators/"
        "base_device_communicator.py",
        230,
    ),
    (
        "RuntimeError: Platform plugin 'ascend' is installed but activate() returned None "
        "(hardware not available on this machine?).",
        "python/sglang/srt/platforms/__init__.py",
        101,
    ),
    (
        "AssertionError: swa_evicted_seqlen must be page aligned, swa_evicted_seqlen=130, "
        "self.page_size=64",
        "python/sglang/srt/mem_cache/swa_radix_cache.py",
        1192,
    ),
    (
        "[2026-09-10 12:00:00 DP0 TP3] ValueError: Kimi-K3 MLA K projection must remain GGUF Q4_0",
        "python/sglang/srt/models/kimi_k3.py",
        3168,
    ),
    (
        "ImportError: Failed to import backend 'mooncake' from "
        "'sglang.srt.mem_cache.storage.mooncake_store.mooncake_store': No module named 'mooncake'",
        "python/sglang/srt/mem_cache/storage/backend_factory.py",
        35,
    ),
    (
        "KeyError: 'seq_len 4096 not supported for STA'",
        "python/sglang/multimodal_gen/runtime/layers/attention/backends/sliding_tile_attn.py",
        47,
    ),
    (
        "Exception: Capture CPU graph failed: shape mismatch\nPossible solutions:\n"
        "1. set --mem-fraction-static to a smaller value\n2. disable torch compile",
        "python/sglang/srt/model_executor/cpu_graph_runner.py",
        702,
    ),
    ("must remain GGUF Q4_0", "python/sglang/srt/models/kimi_k3.py", 3168),
]

MM = [
    "RuntimeError: Insufficient multimodal embedding length:",
    "num_mm_tokens_in_input_ids=16325",
    "vs num_mm_tokens_in_embedding=5391.",
    "This is an internal error",
]
#: Where the rendered mm_schedule message comes from (a literal of several lines).
MM_SITE = ("python/sglang/srt/managers/mm_schedule.py", 682)
POOL_LEAK = (
    "ValueError: pool memory leak detected! [full] total=9116160, available=768, "
    "evictable=9115392, protected=0, session_held=0, uncached=0"
)
#: The call of ``_report_leak`` (through ``raise_error_or_warn``) that renders it.
POOL_LEAK_SITE = ("python/sglang/srt/managers/scheduler.py", 4525)
HELPER_TRACEBACK = f"""\
Traceback (most recent call last):
  File "{SP}/srt/managers/scheduler.py", line 4525, in on_idle
    self.invariant_checker._report_leak("pool", "\\n".join(messages))
  File "{SP}/srt/managers/scheduler_components/invariant_checker.py", line 448, in _report_leak
    raise_error_or_warn(
  File "{SP}/srt/utils/common.py", line 4730, in raise_error_or_warn
    raise ValueError(message)
ValueError: pool memory leak detected! [swa] total=8192, available=12, evictable=8000, protected=0, session_held=0, uncached=0
"""  # noqa: E501
HIRADIX_OLD = f"""\
Traceback (most recent call last):
  File "{SP}/srt/managers/scheduler.py", line 402, in __init__
    self.init_cache_with_memory_pool()
  File "{SP}/srt/mem_cache/hiradix_cache.py", line 96, in __init__
    raise ValueError("HiRadixCache only supports MHA, MLA, and NSA (DSA) models")
ValueError: HiRadixCache only supports MHA, MLA, and NSA (DSA) models
"""
MXFP4_V0516 = f"""\
[2026-08-23 09:11:04 TP6 EP6] Scheduler hit an exception: Traceback (most recent call last):
[2026-08-23 09:11:04 TP6 EP6]   File "{SP}/srt/model_loader/loader.py", line 733, in load_model
[2026-08-23 09:11:04 TP6 EP6]     quant_method.process_weights_after_loading(module)
[2026-08-23 09:11:04 TP6 EP6]   File "{SP}/srt/layers/quantization/mxfp4.py", line 521, in process_weights_after_loading
[2026-08-23 09:11:04 TP6 EP6]     raise RuntimeError("MXFP4 Marlin requires SM90 or SM120.")
[2026-08-23 09:11:04 TP6 EP6] RuntimeError: MXFP4 Marlin requires SM90 or SM120.
"""  # noqa: E501
ASSERT_SHIFTED = f"""\
Traceback (most recent call last):
  File "{SP}/srt/managers/scheduler.py", line 2801, in event_loop_normal
    batch = self.get_next_batch_to_run()
  File "{SP}/srt/layers/dp_attention.py", line 451, in memcpy_cpu
    assert src.shape[1:] == dst.shape[1:], "src and dst must have same trailing shape"
AssertionError: src and dst must have same trailing shape
"""
CPU_LORA_ASSERT = f"""\
Traceback (most recent call last):
  File "{SP}/srt/model_executor/cpu_graph_runner.py", line 600, in __init__
    assert not get_lora().enable_lora, "CPUGraphRunner does not support LoRA yet."
AssertionError
"""
TWO_BLOCKS = (
    HOST_POOL
    + "[2026-09-10 12:00:02 TP1] Scheduler hit an exception: Traceback (most recent call last):\n"
    + f'  File "{SP}/srt/managers/scheduler.py", line 3712, in run_scheduler_process\n'
    + "    scheduler = Scheduler(server_args, port_args, gpu_id, tp_rank, moe_ep"
)
SHIFTED_FRAMES = f"""\
Traceback (most recent call last):
  File "{SP}/srt/layers/quantization/base_config.py", line 201, in get_from_keys
    raise ValueError(
ValueError: Cannot find any of ['quant_method', 'quantization'] in the model's quantization config.
"""

#: (pasted text, path, line of the site whose card must come first, release
#: whose wording the paste shows): every form a paste comes in.
FORMS: list[tuple[str, str, int, str]] = [
    # 1. Raised through a helper: the call site's template.
    (POOL_LEAK, *POOL_LEAK_SITE, TAG),
    (HELPER_TRACEBACK, *POOL_LEAK_SITE, TAG),
    (
        "[2026-11-30 10:12:44 TP0] ValueError: KV double free: sub-pool 1 has 3 duplicate pages.",
        "python/sglang/srt/managers/scheduler_components/invariant_checker.py",
        403,
        TAG,
    ),
    (
        "ValueError: pool-bytes memory leak detected! [kv_bytes] total=1024, available=0",
        "python/sglang/srt/managers/scheduler.py",
        4531,
        TAG,
    ),
    (
        "ValueError: KV page use-after-free: 2 owner page refs are in the free pool, "
        "sample pages=[17, 18].",
        "python/sglang/srt/managers/scheduler_components/invariant_checker.py",
        415,
        TAG,
    ),
    # 2. End punctuation missing or added.
    (
        "ValueError: Cannot find any of ['quant_method'] in the model's quantization config",
        "python/sglang/srt/layers/quantization/base_config.py",
        236,
        TAG,
    ),
    (
        "ValueError: FlashInfer allreduce fusion does not support multi-node on non-Blackwell "
        "systems",
        "python/sglang/srt/layers/flashinfer_comm_fusion.py",
        60,
        TAG,
    ),
    (
        "RuntimeError: Failed to setup Mooncake Embedding Store: -1.",
        "python/sglang/srt/mem_cache/storage/mooncake_store/mooncake_embedding_store.py",
        46,
        TAG,
    ),
    (
        "AssertionError: forward_batch is required for DeepEP MoE.",
        "python/sglang/srt/models/bailing_moe_v3.py",
        725,
        TAG,
    ),
    # 3. Collectors' line prefixes on every line of a multi-line message.
    ("\n".join(f"sglang_service-1  | {line}" for line in MM), *MM_SITE, TAG),
    ("\n".join(f"Nov 30 10:12:44 gpu-node-7 python[1234]: {line}" for line in MM), *MM_SITE, TAG),
    ("\n".join(f"sglang-router-7d9f8c-x2k sglang {line}" for line in MM), *MM_SITE, TAG),
    ("\n".join(f"[2026-08-23 09:11:04 TP6 EP6] {line}" for line in MM), *MM_SITE, TAG),
    (
        "sglang_service-1  | [2026-08-23 09:11:04 TP6 EP6] ValueError: Mismatch between image "
        "tokens and estimated frame counts.",
        "python/sglang/srt/multimodal/processors/base_processor.py",
        1044,
        TAG,
    ),
    (
        "Nov 30 10:12:44 gpu-node-7 python3[88]: RuntimeError: SGLANG_DISAGG_STAGING_BUFFER does "
        "not support prefill context parallelism.",
        "python/sglang/srt/disaggregation/prefill.py",
        198,
        TAG,
    ),
    # 4. Reworded since the user's release: the frame's file, function and line decide.
    (HIRADIX_OLD, "python/sglang/srt/mem_cache/hiradix_cache.py", 121, "older"),
    (MXFP4_V0516, "python/sglang/srt/layers/quantization/mxfp4.py", 632, "v0.5.16"),
    # 5. A bare assert by its source line, its line moved; frames of another release.
    (ASSERT_SHIFTED, "python/sglang/srt/layers/dp_attention.py", 469, TAG),
    (CPU_LORA_ASSERT, "python/sglang/srt/model_executor/cpu_graph_runner.py", 621, TAG),
    (SHIFTED_FRAMES, "python/sglang/srt/layers/quantization/base_config.py", 236, TAG),
    # Several blocks, the second cut short.
    (TWO_BLOCKS, "python/sglang/srt/mem_cache/registry.py", 154, TAG),
    # The exception in the middle of a log line; words between the prefix and the message.
    (
        "[2026-11-30 10:12:44 TP0] Scheduler hit an exception: ValueError: Kimi-K3 deferred "
        "feature length does not match image grids",
        "python/sglang/srt/models/kimi_k3.py",
        3516,
        TAG,
    ),
    (
        "[2026-11-30 10:12:44 TP0] Scheduler hit an exception: Context parallel only supports "
        "single machine (tp_size <= 8)...",
        "python/sglang/srt/arg_groups/deepseek_v4_hook.py",
        202,
        TAG,
    ),
    (
        "[2026-11-30 10:12:44 TP0] Scheduler hit an exception: GPTQ CUDA kernels are "
        "unavailable on the current platform.",
        "python/sglang/srt/hardware_backend/gpu/quantization/gptq_kernels.py",
        40,
        TAG,
    ),
    (
        "2026-11-30 10:12:44 TP0 detokenizer failed: KeyError: 'Layer 7 is not a "
        "full-attention layer'",
        "python/sglang/srt/hardware_backend/mlx/kv_cache/layout.py",
        125,
        TAG,
    ),
    # A logger's name is no exception type.
    (
        "2026-11-30 10:12:44,123 ERROR sglang.srt.managers.tokenizer_manager: Batch "
        "tokenization is not needed for pre-tokenized input_ids. Do not set "
        "`enable_tokenizer_batch_encode`.",
        "python/sglang/srt/managers/tokenizer_manager.py",
        1521,
        TAG,
    ),
    (
        "2026-11-30 10:12:44,123 ERROR sglang.srt.model_executor.runner.eager_runner: "
        "Invalid forward mode for eager runner: ForwardMode.IDLE",
        "python/sglang/srt/model_executor/runner/eager_runner.py",
        228,
        TAG,
    ),
    # path:line, as the site's search box.
    (
        "python/sglang/srt/mem_cache/registry.py:154",
        "python/sglang/srt/mem_cache/registry.py",
        154,
        TAG,
    ),
    (
        "sglang/srt/model_executor/cpu_graph_runner.py:621",
        "python/sglang/srt/model_executor/cpu_graph_runner.py",
        621,
        TAG,
    ),
    # Plain messages and typed messages with the usual prefixes.
    (
        "ValueError: SGLANG_MLX_CACHE_LIMIT_GB must be >= 0, got -2.0",
        "python/sglang/srt/hardware_backend/mlx/model_runner.py",
        212,
        TAG,
    ),
    (
        "[2026-11-30 10:12:44 DP1 TP3] ValueError: Mooncake group_ids length must match "
        "key_strs length: 3 != 4",
        "python/sglang/srt/mem_cache/storage/mooncake_store/mooncake_store.py",
        1323,
        TAG,
    ),
    (
        "NotImplementedError: QuarkW4A8MXFp4MoE is currently only supported with AITER.",
        "python/sglang/srt/layers/quantization/quark/schemes/quark_w4a8_mxfp4_moe.py",
        421,
        TAG,
    ),
    (
        "OSError: insufficient space for Kimi Expert Pack: available=1073741824, "
        "required=4294967296",
        "python/sglang/srt/model_loader/expert_pack/prepare_kimi_pack.py",
        102,
        TAG,
    ),
    (
        "AssertionError: MambaComponent requires page_size=1 when mamba_extra_buffer is "
        "disabled, got 16",
        "python/sglang/srt/mem_cache/unified_cache/components/mamba_component.py",
        69,
        TAG,
    ),
    (
        "FileNotFoundError: No model weights found in /models/mimo-audio (expected "
        "model.safetensors or pytorch_model.bin)",
        "python/sglang/srt/models/mimo_audio.py",
        1295,
        TAG,
    ),
    (
        "ValueError: DSparkStsCalibration temperatures must all be > 0, got (0.0, 1.0).",
        "python/sglang/srt/speculative/dspark_components/dspark_sts.py",
        21,
        TAG,
    ),
    (
        "RuntimeError: NIXL KV part index out of range for room=1234, chunk=0, pp_rank=1: "
        "part=5, num_parts=4",
        "python/sglang/srt/disaggregation/nixl/conn.py",
        2601,
        TAG,
    ),
    (
        "NotImplementedError: DSV4 ragged verify does not support online c128 MTP; set "
        "SGLANG_RAGGED_VERIFY_MODE off or disable online compress.",
        "python/sglang/srt/layers/attention/deepseek_v4_backend.py",
        646,
        TAG,
    ),
    (
        "ValueError: `task` requires at least one message with role='user' or 'developer'.",
        "python/sglang/srt/entrypoints/openai/encoding_dsv4.py",
        254,
        TAG,
    ),
    (
        "(Scheduler pid=4242) RuntimeError: multiple MNNVL CuTe DSL fusion workspaces exist; "
        "configuration arguments are required",
        "python/sglang/srt/layers/flashinfer_mnnvl_cutedsl.py",
        314,
        TAG,
    ),
    (
        "sglang.srt.disaggregation.encoder.server.InternalError: Encoder request was released: "
        "req-42",
        "python/sglang/srt/disaggregation/encoder/server.py",
        680,
        TAG,
    ),
]

NOTHING = [
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
    "capacity of 79.15 GiB of which 1.02 GiB is free.",
    "ConnectionRefusedError: [Errno 111] Connection refused",
    "Segmentation fault (core dumped)",
    "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/"
    "ProcessGroupNCCL.cpp:1970, unhandled cuda error (run with NCCL_DEBUG=INFO for details)",
    "KeyboardInterrupt",
    "zsh: command not found: sglang-server",
    "RuntimeError: CUDA error: device-side assert triggered\nCUDA kernel errors might be "
    "asynchronously reported at some other API call, so the stacktrace below might be incorrect.",
    "KeyError: 'x'",
    "ZeroDivisionError: division by zero",
    "TypeError: 'NoneType' object is not subscriptable",
    "UnboundLocalError: cannot access local variable 'x' where it is not associated with a value",
    "IndexError: list index out of range",
    "ModuleNotFoundError: No module named 'flashinfer'",
    "OSError: We couldn't connect to 'https://huggingface.co' to load the files, and couldn't "
    "find them in the cached files.",
    "ValueError: too many values to unpack (expected 2)",
    "RecursionError: maximum recursion depth exceeded while calling a Python object",
    f"""Traceback (most recent call last):
  File "{SP}/srt/managers/scheduler.py", line 402, in __init__
    self.init_cache_with_memory_pool()
  File "/usr/lib/python3.11/site-packages/torch/cuda/memory.py", line 120, in empty_cache
    torch._C._cuda_emptyCache()
torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.
""",
]


#: The releases of the release site searched by ``miner lookup --history``.
HISTORY_TAGS = ["v0.5.16", "v0.5.17", "v0.5.18", TAG]
THINK_END = (
    "ValueError: think_end_token '</think>' must encode to exactly one token for "
    "constrained reasoning."
)
THINK_END_SITE = ("python/sglang/srt/constrained/reasoner_grammar_backend.py", 246)
THINK_END_TRACEBACK = f"""\
[2026-11-30 10:12:44 TP0] Scheduler hit an exception: Traceback (most recent call last):
  File "{SP}/srt/managers/scheduler.py", line 402, in __init__
    self.init_grammar_backend()
  File "{SP}/srt/constrained/reasoner_grammar_backend.py", line 246, in __init__
    raise ValueError(
{THINK_END}
"""
DSPARK = "ValueError: DSpark speculative decoding only supports CUDA device."


def dspark_traceback(line: int) -> str:
    return f"""\
Traceback (most recent call last):
  File "{SP}/srt/server_args.py", line 812, in __post_init__
    self._handle_speculative_decoding()
  File "{SP}/srt/arg_groups/speculative_hook.py", line {line}, in _handle_dspark
    raise ValueError("DSpark speculative decoding only supports CUDA device.")
{DSPARK}
"""


ZMQ = f"""\
Traceback (most recent call last):
  File "{SP}/srt/disaggregation/encode_receiver.py", line 776, in __init__
    raise ValueError("zmq_context is required for a per-request socket")
ValueError: zmq_context is required for a per-request socket
"""
MXFP8 = f"""\
Traceback (most recent call last):
  File "{SP}/srt/mem_cache/memory_pool.py", line 3546, in get_cpu_copy
    raise NotImplementedError("CPU offloading is unsupported for MXFP8 KV cache.")
NotImplementedError: CPU offloading is unsupported for MXFP8 KV cache.
"""

#: Pastes of errors as older releases raised them, for ``--history``: (paste,
#: path, line, release whose site must be the card: the paste fits it).
HISTORY: list[tuple[str, str, int, str]] = [
    # 5. An error only an older release raises, in every form.
    (THINK_END, *THINK_END_SITE, "v0.5.16"),
    (THINK_END.rstrip("."), *THINK_END_SITE, "v0.5.16"),
    (f"[2026-11-30 10:12:44 TP0] {THINK_END}", *THINK_END_SITE, "v0.5.16"),
    (THINK_END_TRACEBACK, *THINK_END_SITE, "v0.5.16"),
    (
        "\n".join(
            f"sglang_service-1  | {line}"
            for line in THINK_END.replace(" must", "\nmust").split("\n")
        ),
        *THINK_END_SITE,
        "v0.5.16",
    ),
    (
        "NotImplementedError: Interleave KV gather will land in a follow-up PR.",
        "python/sglang/srt/layers/cp/interleave.py",
        88,
        "v0.5.16",
    ),
    (
        "python/sglang/srt/layers/cp/interleave.py:88",
        "python/sglang/srt/layers/cp/interleave.py",
        88,
        "v0.5.16",
    ),
    (
        "sglang_service-1  | ValueError: DFLASH speculative decoding only supports CUDA device",
        "python/sglang/srt/arg_groups/speculative_hook.py",
        151,
        "v0.5.16",
    ),
    (
        "Nov 30 10:12:44 gpu-node-7 python[1234]: ValueError: Only one of regex, json_schema, "
        "or ebnf can be set.",
        "python/sglang/srt/sampling/sampling_params.py",
        231,
        "v0.5.16",
    ),
    (
        "[2026-11-30 10:12:44 TP0] Scheduler hit an exception: Cannot create tensor from null "
        "pointer",
        "python/sglang/srt/layers/moe/dwdp/vmm.py",
        208,
        "v0.5.17",
    ),
    (
        "2026-11-30 10:12:44,123 ERROR sglang.srt.layers.quantization.unquant: "
        "--bf16-gemm-backend cutedsl requires an SM10x GPU",
        "python/sglang/srt/layers/quantization/unquant.py",
        109,
        "v0.5.18",
    ),
    # The same message in several releases: the frame's line tells which.
    (dspark_traceback(278), "python/sglang/srt/arg_groups/speculative_hook.py", 278, "v0.5.16"),
    (dspark_traceback(280), "python/sglang/srt/arg_groups/speculative_hook.py", 280, "v0.5.17"),
    (ZMQ, "python/sglang/srt/disaggregation/encode_receiver.py", 776, "v0.5.17"),
    (MXFP8, "python/sglang/srt/mem_cache/memory_pool.py", 3546, "v0.5.18"),
    # 4. Reworded or moved since: the older release's own site.
    (MXFP4_V0516, "python/sglang/srt/layers/quantization/mxfp4.py", 521, "v0.5.16"),
]


@pytest.fixture(scope="module")
def release(mined_release) -> tuple[MineResult, Path]:
    """(MineResult, output folder with the site) of the release, shared by the session."""
    return mined_release(TAG)


@pytest.fixture(scope="module")
def index(release) -> LookupIndex:
    return LookupIndex.load(release[1])


def card_at(result: MineResult, path: str, line: int) -> str:
    (site,) = [s for s in result.sites if s.path == path and s.line == line]
    return site.error_id


@pytest.mark.parametrize(("paste", "path", "line"), CASES, ids=[c[1][-40:] for c in CASES])
def test_lookup_finds_the_card(release, index: LookupIndex, paste: str, path: str, line: int):
    matches = index.search(paste)
    assert matches, "nothing found"
    expected = card_at(release[0], path, line)
    assert matches[0].card.error_id == expected, [
        (m.score, m.card.message, m.site.path, m.site.line) for m in matches
    ]
    assert matches[0].good
    # Ties would make the answer arbitrary: the expected card stands alone.
    assert len(matches) == 1 or matches[1].score < matches[0].score


@pytest.mark.parametrize(
    ("paste", "path", "line", "wording"), FORMS, ids=[f"{c[1][-30:]}:{c[2]}" for c in FORMS]
)
def test_lookup_finds_the_card_in_every_form(
    release, index: LookupIndex, paste: str, path: str, line: int, wording: str
) -> None:
    """``wording``: the release whose message the paste shows (``older``: one
    before the corpus)."""
    matches = index.search(paste)
    assert matches, "nothing found"
    expected = card_at(release[0], path, line)
    shown = [(m.score, m.card.message, m.site.path, m.site.line, m.reasons) for m in matches]
    assert matches[0].card.error_id == expected, shown
    assert matches[0].good, shown
    assert len(matches) == 1 or matches[1].score < matches[0].score, shown


def test_call_sites_of_raising_helpers(release) -> None:
    result, out = release
    calls = [s for s in result.sites if s.kind == "call"]
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["counts"]["call_sites"] == len(calls) >= 6
    (leak,) = [s for s in calls if (s.path, s.line) == POOL_LEAK_SITE]
    assert leak.message == 'pool memory leak detected! {"\\n".join(messages)}'
    assert leak.guards[-1].test == "envs.SGLANG_ENABLE_STRICT_MEM_CHECK_DURING_IDLE.get()"
    assert [v.split()[1] for v in leak.via] == [
        "SchedulerInvariantChecker._report_leak",
        "raise_error_or_warn",
    ]


@pytest.mark.parametrize("paste", NOTHING)
def test_lookup_matches_nothing(index: LookupIndex, paste: str) -> None:
    assert all(m.score < GOOD for m in index.search(paste))


def test_host_pool_traceback_pins_line_154(release, capsys) -> None:
    result, out = release
    code = cli.main(["lookup", "--out", str(out), "--json", HOST_POOL])
    payload = json.loads(capsys.readouterr().out)
    assert code == 0 and payload["matched"]
    top = payload["results"][0]
    assert (top["path"], top["line"], top["exception"], top["score"]) == (
        "python/sglang/srt/mem_cache/registry.py",
        154,
        "ValueError",
        1.0,
    )
    # a setting's error: its own card
    assert documented_at(out, top["error_id"], ".html") == f"errors/{top['error_id']}.html"
    assert top["card"] == str(out / "site" / "errors" / f"{top['error_id']}.html")
    assert (out / "site" / "errors" / f"{top['error_id']}.html").is_file()


def test_lookup_reads_records_when_no_site(release) -> None:
    result, out = release
    from_records = LookupIndex.from_errors(result.errors)
    from_site = LookupIndex.load(out)
    assert len(from_records.entries) == len(from_site.entries) == len(result.errors)
    for paste, _, _ in CASES[:5]:
        a, b = from_records.search(paste), from_site.search(paste)
        assert [(m.card.error_id, m.score) for m in a] == [(m.card.error_id, m.score) for m in b]


def test_release_site_in_browser(release, tmp_path: Path) -> None:
    result, out = release
    error_id = card_at(
        result, "python/sglang/srt/hardware_backend/mlx/kv_cache/auxiliary_state.py", 340
    )
    # an internal check: its entry on the page of its module
    expected = documented_at(out, error_id, ".html")
    assert expected.startswith("internal/sglang.srt.hardware_backend.mlx.kv_cache.")
    with chromium() as browser:
        watched: Any = Watched(browser)
        watched.page.goto((out / "site" / "index.html").as_uri())
        shown = watched.search(
            "MlxAuxiliaryStateComponent requires MlxAuxiliaryStatePool, got <class 'NoneType'>"
        )
        assert shown[0]["href"] == expected
        traceback = watched.search(HOST_POOL)
        assert traceback[0]["where"].startswith("python/sglang/srt/mem_cache/registry.py:154 ")
        watched.search(
            "MlxAuxiliaryStateComponent requires MlxAuxiliaryStatePool, got <class 'NoneType'>"
        )
        watched.page.screenshot(path=str(artifacts(tmp_path) / "release-search.png"))
        watched.page.press("#q", "Enter")
        watched.page.wait_for_url(f"**/{expected}")
        watched.page.screenshot(path=str(artifacts(tmp_path) / "release-card.png"), full_page=True)
        assert watched.errors == [] and watched.dialogs == []


@pytest.fixture(scope="module")
def release_site(history_site) -> Path:
    """The release site of v0.5.16 to v0.5.19 (``miner history``'s output),
    shared by the session."""
    return history_site[0]


@pytest.fixture(scope="module")
def book(release_site: Path) -> ReleaseBook:
    return ReleaseBook.load(release_site)


def id_in(book: ReleaseBook, release: str, path: str, line: int) -> str:
    """The id of the error raised at ``path:line`` in ``release``."""
    (found,) = [
        error_id
        for error_id, releases in book.raised.items()
        for site in releases.get(release, ())
        if (site.path, site.line) == (path, line)
    ]
    return found


def test_think_end_token_is_raised_by_v0516_only(book: ReleaseBook) -> None:
    """Checked against the corpus: `git grep` finds the message in v0.5.16 only."""
    error_id = id_in(book, "v0.5.16", *THINK_END_SITE)
    assert sorted(book.raised[error_id]) == ["v0.5.16"]
    (top, *_) = search_releases(book, THINK_END)
    assert top.card.error_id == error_id and top.good
    assert life_sentences(book, top.history) == ["raised in v0.5.16 only", "removed in v0.5.17"]
    assert top.newest is None and top.fits == ("v0.5.16",)


@pytest.mark.parametrize(
    ("paste", "path", "line", "release"),
    HISTORY,
    ids=[f"{c[3]}:{c[1][-28:]}:{c[2]}" for c in HISTORY],
)
def test_history_lookup_finds_the_release(
    book: ReleaseBook, paste: str, path: str, line: int, release: str
) -> None:
    found = search_releases(book, paste)
    expected = id_in(book, release, path, line)
    shown = [(f.score, f.card.error_id, f.fits, f.match.reasons) for f in found]
    assert found and found[0].card.error_id == expected, shown
    assert found[0].good and release in found[0].fits, shown
    assert len(found) == 1 or found[1].score < found[0].score, shown


@pytest.mark.parametrize(
    ("paste", "path", "line", "wording"),
    [f for f in FORMS if f[3] == TAG],
    ids=[f"{c[1][-30:]}:{c[2]}" for c in FORMS if c[3] == TAG],
)
def test_history_lookup_finds_current_errors(
    book: ReleaseBook, paste: str, path: str, line: int, wording: str
) -> None:
    """Every form of the v0.5.19 table, searched over four releases: the
    error's lineage first, fitting v0.5.19."""
    found = search_releases(book, paste)
    expected = id_in(book, wording, path, line)
    shown = [(f.score, f.card.error_id, f.fits, f.match.reasons) for f in found]
    assert found and expected in found[0].history.ids and found[0].good, shown
    assert wording in found[0].fits, shown


@pytest.mark.parametrize("paste", NOTHING)
def test_history_lookup_matches_nothing(book: ReleaseBook, paste: str) -> None:
    assert all(not f.good for f in search_releases(book, paste))


def test_history_cli_names_both_cards(release_site: Path, book: ReleaseBook, capsys) -> None:
    """A reworded error: the card of the paste's release and the newest one."""
    code = cli.main(["lookup", "--history", str(release_site), "--json", MXFP4_V0516])
    payload = json.loads(capsys.readouterr().out)
    assert code == 0 and payload["releases"] == HISTORY_TAGS
    top = payload["results"][0]
    old = id_in(book, "v0.5.16", "python/sglang/srt/layers/quantization/mxfp4.py", 521)
    assert top["error_id"] == old and top["fits"] == ["v0.5.16"]
    assert top["fit_by"] == ["frames", "message"]
    assert top["raised"][0] == {
        "release": "v0.5.16",
        "error_id": old,
        "path": "python/sglang/srt/layers/quantization/mxfp4.py",
        "line": 521,
        "scope": top["raised"][0]["scope"],
    }
