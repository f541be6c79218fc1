"""The commit store: mined results reused by commit SHA and extractor version."""

from __future__ import annotations

import gzip
import logging

import pytest

from miner import pipeline
from miner.mining import store

FILES = {
    "pkg/a.py": 'def f(x):\n    if x:\n        raise ValueError("x is set")\n',
    "pkg/b.py": "assert True, 'never'\n",
    "pkg/empty.py": "",
}


def test_second_mine_reads_the_store(make_repo, tmp_path, monkeypatch):
    root = make_repo(FILES)
    cache = tmp_path / "cache"
    first = pipeline.mine(str(root), "v1", cache_dir=cache, reuse=True)
    (entry,) = (cache / "commits").glob("*.jsonl.gz")
    assert entry.name == f"{first.commit.sha}-{store.extractor_version()[:16]}.jsonl.gz"

    def no_mining(*args, **kwargs):
        raise AssertionError("mined again instead of reusing the store")

    monkeypatch.setattr(pipeline, "extract", no_mining)
    second = pipeline.mine(str(root), "v1", cache_dir=cache, reuse=True)
    assert second == first
    assert [e.message for e in second.errors] == ["x is set", "never"]
    assert [f.path for f in second.files] == ["pkg/a.py", "pkg/b.py", "pkg/empty.py"]


def test_store_matches_plain_mining(make_repo, tmp_path):
    root = make_repo(FILES)
    stored = pipeline.mine(str(root), "v1", cache_dir=tmp_path / "cache", reuse=True)
    reread = pipeline.mine(str(root), "v1", cache_dir=tmp_path / "cache", reuse=True)
    assert reread == pipeline.mine(str(root), "v1") == stored


def test_entries_are_deterministic(make_repo, tmp_path):
    root = make_repo(FILES)
    one = pipeline.mine(str(root), "v1", cache_dir=tmp_path / "one", reuse=True)
    pipeline.mine(str(root), "v1", cache_dir=tmp_path / "two", reuse=True)
    path_one = store.entry_path(tmp_path / "one", one.commit.sha)
    path_two = store.entry_path(tmp_path / "two", one.commit.sha)
    assert path_one.read_bytes() == path_two.read_bytes()
    header = gzip.decompress(path_one.read_bytes()).decode().splitlines()[0]
    assert f'"sha": "{one.commit.sha}"' in header and '"files": 3' in header


@pytest.mark.parametrize(
    "damage",
    [
        lambda data: data[: len(data) // 2],  # truncated gzip
        lambda data: b"not gzip at all",
        lambda data: gzip.compress(gzip.decompress(data).splitlines(keepends=True)[0], mtime=0),
    ],
    ids=["truncated", "garbage", "lines missing"],
)
def test_damaged_entry_is_mined_again(make_repo, tmp_path, caplog, damage):
    root = make_repo(FILES)
    cache = tmp_path / "cache"
    first = pipeline.mine(str(root), "v1", cache_dir=cache, reuse=True)
    path = store.entry_path(cache, first.commit.sha)
    path.write_bytes(damage(path.read_bytes()))
    with caplog.at_level(logging.WARNING, logger="miner"):
        again = pipeline.mine(str(root), "v1", cache_dir=cache, reuse=True)
    assert again == first
    assert str(path) in caplog.text
    assert store.load_files(cache, first.commit.sha) is not None  # rewritten


def test_full_parse_has_its_own_entry(make_repo, tmp_path):
    root = make_repo(FILES)
    cache = tmp_path / "cache"
    partial = pipeline.mine(str(root), "v1", cache_dir=cache, reuse=True)
    full = pipeline.mine(str(root), "v1", cache_dir=cache, partial=False, reuse=True)
    assert full == partial
    names = sorted(p.name for p in (cache / "commits").iterdir())
    assert names == sorted(
        [
            f"{partial.commit.sha}-{store.extractor_version()[:16]}.jsonl.gz",
            f"{partial.commit.sha}-{store.extractor_version()[:16]}-full.jsonl.gz",
        ]
    )


def test_unwritable_cache_only_costs_reuse(make_repo, tmp_path):
    root = make_repo(FILES)
    blocker = tmp_path / "cache"
    blocker.write_text("a file where the cache folder should be")
    result = pipeline.mine(str(root), "v1", cache_dir=blocker, reuse=True)
    assert [e.message for e in result.errors] == ["x is set", "never"]
