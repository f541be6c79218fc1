"""The commit store: mined results reused by commit SHA and extractor version."""

from __future__ import annotations

import gzip
import logging
import pickle

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
    (entry,) = (cache / "commits").glob("*.pickle.gz")
    assert entry.name == f"{first.commit.sha}-{store.entry_key()}.pickle.gz"

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


def test_entry_holds_the_assembled_records(make_repo, tmp_path):
    root = make_repo(FILES)
    one = pipeline.mine(str(root), "v1", cache_dir=tmp_path / "one", reuse=True)
    path = store.entry_path(tmp_path / "one", one.commit.sha)
    header, files, sites, errors = pickle.loads(gzip.decompress(path.read_bytes()))
    assert header["sha"] == one.commit.sha and header["files"] == 3
    assert (files, sites, errors) == (one.files, one.sites, one.errors)
    assert [s.error_id for s in sites] == [s.error_id for s in one.sites] != ["", ""]


def test_entry_serves_another_slug(make_repo, tmp_path, monkeypatch):
    root = make_repo(FILES)
    cache = tmp_path / "cache"
    pipeline.mine(str(root), "v1", cache_dir=cache, reuse=True, slug="a/b")
    plain = pipeline.mine(str(root), "v1", slug="c/d")
    monkeypatch.setattr(pipeline, "extract", lambda *a, **k: pytest.fail("mined again"))
    again = pipeline.mine(str(root), "v1", cache_dir=cache, reuse=True, slug="c/d")
    assert again.commit.slug == "c/d"
    assert again == plain


@pytest.mark.parametrize(
    "damage",
    [
        lambda data: data[: len(data) // 2],  # truncated gzip
        lambda data: b"not gzip at all",
        lambda data: gzip.compress(pickle.dumps(("header", (), (), ())), mtime=0),
        lambda data: gzip.compress(pickle.dumps((1, 2)), mtime=0),
    ],
    ids=["truncated", "garbage", "foreign header", "wrong shape"],
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
    assert store.load_result(cache, first.commit.sha, first.commit) is not None  # rewritten


def test_full_parse_has_its_own_entry(make_repo, tmp_path):
    root = make_repo(FILES)
    cache = tmp_path / "cache"
    partial = pipeline.mine(str(root), "v1", cache_dir=cache, reuse=True)
    full = pipeline.mine(str(root), "v1", cache_dir=cache, partial=False, reuse=True)
    assert full == partial
    names = sorted(p.name for p in (cache / "commits").iterdir())
    assert names == sorted(
        [
            f"{partial.commit.sha}-{store.entry_key()}.pickle.gz",
            f"{partial.commit.sha}-{store.entry_key()}-full.pickle.gz",
        ]
    )


def test_unwritable_cache_only_costs_reuse(make_repo, tmp_path):
    root = make_repo(FILES)
    blocker = tmp_path / "cache"
    blocker.write_text("a file where the cache folder should be")
    result = pipeline.mine(str(root), "v1", cache_dir=blocker, reuse=True)
    assert [e.message for e in result.errors] == ["x is set", "never"]
