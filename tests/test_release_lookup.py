"""Acceptance on the real release: SGLang v0.5.19 from the release repository
($RAISE_MINER_CORPUS), mined once for this module, with its HTML site.

`miner lookup` gets pasted messages, log lines and tracebacks rendered from
real templates (placeholders filled with realistic values) and must return
the expected card first; texts from elsewhere must match nothing. The site is
opened in headless Chromium and searched the same way.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from browser import Watched, artifacts, chromium
from sample_repo import documented_at

from miner import cli
from miner.lookup import GOOD, LookupIndex
from miner.model import MineResult
from miner.pipeline import mine_and_analyze, publish

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

NOTHING = [
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
    "capacity of 79.15 GiB of which 1.02 GiB is free.",
    "ConnectionRefusedError: [Errno 111] Connection refused",
    "Segmentation fault (core dumped)",
    "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/"
    "ProcessGroupNCCL.cpp:1970, unhandled cuda error (run with NCCL_DEBUG=INFO for details)",
    "KeyboardInterrupt",
    "zsh: command not found: sglang-server",
]


@pytest.fixture(scope="module")
def release(tmp_path_factory) -> tuple[MineResult, Path]:
    corpus = os.environ.get("RAISE_MINER_CORPUS")
    if not corpus or not Path(corpus).is_dir():
        pytest.skip("RAISE_MINER_CORPUS is unset or missing: `make corpus` builds it")
    out = tmp_path_factory.mktemp("release") / "out"
    mined = mine_and_analyze(corpus, TAG, slug="sgl-project/sglang", link_ref=TAG)
    publish(mined, out, site=True)
    return mined.result, out


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
