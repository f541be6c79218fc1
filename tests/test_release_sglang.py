"""Diffs and histories on the SGLang release repository built from PyPI wheels.

Each release is mined at most once per session (and reused across sessions
through the commit store in the cache folder: ``$RAISE_MINER_CACHE`` or
``~/.cache/raise-miner``). Expected values were checked by hand against the
wheels, e.g. ``git -C $RAISE_MINER_CORPUS grep -n "Host-pool retraction does
not support Mamba" v0.5.18``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from miner import pipeline
from miner.cli import main
from miner.releases import diff, history
from miner.releases.diff import ChangeKind, MatchRule

pytestmark = pytest.mark.integration

SLUG = "sgl-project/sglang"
HOST_POOL = "Host-pool retraction does not support Mamba models."
HOST_POOL_PATH = "python/sglang/srt/mem_cache/registry.py"
MLX = "MLX auxiliary-state radix cache does not support enable_mamba_extra_buffer yet."
MLX_PATH = "python/sglang/srt/hardware_backend/mlx/kv_cache/auxiliary_state.py"
#: The releases the history test walks (mined once per session).
HISTORY_TAGS = ("v0.5.17", "v0.5.18", "v0.5.19")
#: Every release of the corpus; walked only with RAISE_MINER_ALL_RELEASES=1
#: (about 5 minutes of mining per release on a cold cache).
ALL_TAGS = tuple(f"v0.5.{n}" for n in range(16, 24))
#: Line of each seed error's ``raise`` per release (None: not raised), checked
#: by hand: ``git -C $RAISE_MINER_CORPUS grep -n "<message>" <tag>``.
SEED_LINES = {
    HOST_POOL: dict(zip(ALL_TAGS, (None, None, 178, 154, 157, 160, 158, 158), strict=True)),
    MLX: dict(zip(ALL_TAGS, (306, 306, 307, 334, 334, 334, 309, 310), strict=True)),
}


@pytest.fixture(scope="session")
def corpus() -> str:
    path = os.environ.get("RAISE_MINER_CORPUS")
    if not path:
        pytest.skip("RAISE_MINER_CORPUS is not set (make test sets it; make corpus builds it)")
    if not (Path(path) / ".git").exists() and not (Path(path) / "HEAD").exists():
        pytest.skip(f"RAISE_MINER_CORPUS={path} is not a git repository (run make corpus)")
    return path


@pytest.fixture(scope="session")
def mined(corpus):
    """tag -> MineResult, each release mined (or read from the store) once."""
    cache: dict[str, object] = {}

    def get(tag: str):
        if tag not in cache:
            cache[tag] = pipeline.mine(corpus, tag, slug=SLUG, link_ref=tag, reuse=True)
        return cache[tag]

    return get


def find(errors, message):
    (error,) = [e for e in errors if e.message == message]
    return error


def assert_seed_lines(mined, tags):
    """Each seed error is raised at the hand-checked line of each release."""
    for tag in tags:
        for message, lines in SEED_LINES.items():
            found = [e.primary.line for e in mined(tag).errors if e.message == message]
            assert found == ([] if lines[tag] is None else [lines[tag]]), (tag, message)


def test_host_pool_error_is_unchanged_from_v0_5_18_to_v0_5_19(mined):
    old, new = mined("v0.5.18"), mined("v0.5.19")
    result = diff.diff(old.commit, old.errors, new.commit, new.errors)
    before, after = find(old.errors, HOST_POOL), find(new.errors, HOST_POOL)
    change = result.find(before.error_id)
    assert change is not None and change is result.find(after.error_id)
    assert change.kind == ChangeKind.UNCHANGED and change.rule == MatchRule.SAME_ID
    assert change.aspects == ()
    (pair,) = change.sites
    assert (pair.old.path, pair.old.line) == (HOST_POOL_PATH, 178)
    assert (pair.new.path, pair.new.line) == (HOST_POOL_PATH, 154)
    assert pair.old.scope == pair.new.scope == "_create_unified_radix_cache"
    assert [g.describe() for g in pair.new.guards] == [
        'get_disagg().disaggregation_decode_retraction_backup == "host_pool"',
        "ctx.is_hybrid_ssm",
    ]
    for kind in (ChangeKind.ADDED, ChangeKind.REMOVED):
        assert all(HOST_POOL not in (c.error.message or "") for c in result.of_kind(kind))


def test_diff_command_lists_host_pool_error_with_unchanged(mined, corpus, tmp_path, capsys):
    mined("v0.5.18"), mined("v0.5.19")  # in the store
    out = tmp_path / "diffs"
    argv = ["diff", "--repo", corpus, "v0.5.18", "v0.5.19", "--out", str(out), "--slug", SLUG]
    assert main([*argv, "--unchanged"]) == 0
    data = json.loads((out / "v0.5.18..v0.5.19.json").read_text())
    (entry,) = [c for c in data["changes"] if c["new"] and c["new"]["message"] == HOST_POOL]
    assert entry["kind"] == "unchanged" and entry["rule"] == "same_id"
    (site,) = entry["sites"]
    assert (site["old"]["line"], site["new"]["line"]) == (178, 154)
    assert site["new"]["url"] == (f"https://github.com/{SLUG}/blob/v0.5.19/{HOST_POOL_PATH}#L154")
    assert data["counts"]["unchanged"] == sum(
        1 for c in data["changes"] if c["kind"] == "unchanged"
    )
    assert "v0.5.18 -> v0.5.19:" in capsys.readouterr().out


def test_seed_error_histories(mined):
    book, _ = history.build_history((tag, mined(tag)) for tag in HISTORY_TAGS)
    newest = mined(HISTORY_TAGS[-1])
    host = book.histories[find(newest.errors, HOST_POOL).error_id]
    assert (host.first_seen, host.last_seen, host.present) == ("v0.5.18", "v0.5.19", True)
    assert host.seen == ("v0.5.18", "v0.5.19")
    assert [(e.release, e.kind) for e in host.events] == [("v0.5.18", "added")]

    mlx_error = find(newest.errors, MLX)
    assert mlx_error.exception == "NotImplementedError"
    assert mlx_error.primary.path == MLX_PATH and mlx_error.primary.line == 334
    mlx = book.histories[mlx_error.error_id]
    assert (mlx.first_seen, mlx.oldest, mlx.present) == ("v0.5.17", "v0.5.17", True)
    assert mlx.seen == HISTORY_TAGS
    assert mlx.changes == ()
    assert mlx.ids == (mlx_error.error_id,)
    assert_seed_lines(mined, HISTORY_TAGS)


@pytest.mark.skipif(
    os.environ.get("RAISE_MINER_ALL_RELEASES") != "1",
    reason="walks all eight releases; set RAISE_MINER_ALL_RELEASES=1",
)
def test_seed_error_histories_over_all_releases(mined):
    book, _ = history.build_history((tag, mined(tag)) for tag in ALL_TAGS)
    newest = mined(ALL_TAGS[-1])
    host = book.histories[find(newest.errors, HOST_POOL).error_id]
    assert host.seen == ALL_TAGS[2:] and host.present
    # v0.5.21 renamed _create_unified_radix_cache to create_unified_radix_cache
    assert [(e.release, e.kind, e.aspects) for e in host.events] == [
        ("v0.5.18", "added", ()),
        ("v0.5.21", "moved", ("scope",)),
    ]
    mlx = book.histories[find(newest.errors, MLX).error_id]
    assert mlx.seen == ALL_TAGS and mlx.events[1:] == ()
    assert_seed_lines(mined, ALL_TAGS)
