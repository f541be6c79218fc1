"""``miner mine`` end to end on fixture repositories: pinning, output files,
cards, determinism, and bad input."""

from __future__ import annotations

import json
import os
from pathlib import Path

import git
import pytest
from conftest import add_commit

from miner.cli import main
from miner.mining import source

SOURCE = '''\
class MlxAuxiliaryStateComponent:
    """Unified radix component for MLX native auxiliary-state snapshots."""

    def __init__(self, cache, params):
        if params.enable_mamba_extra_buffer:
            raise NotImplementedError(
                "MLX auxiliary-state radix cache does not support "
                "enable_mamba_extra_buffer yet."
            )
        pool = getattr(cache, "pool", None)
        if not isinstance(pool, dict):
            raise TypeError(
                "MlxAuxiliaryStateComponent requires MlxAuxiliaryStatePool, "
                f"got {type(pool)}"
            )


def check(x):
    if x is None:
        raise NotImplementedError(
            "MLX auxiliary-state radix cache does not support "
            "enable_mamba_extra_buffer yet."
        )
    try:
        x()
    except ValueError:
        raise
'''


def read_tree(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


@pytest.fixture
def repo(make_repo) -> Path:
    return make_repo({"pkg/mlx.py": SOURCE, "pkg/empty.py": "", "README.md": "raise X"})


def test_mine_writes_records_and_cards(repo: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "out"
    assert (
        main(
            ["mine", "--repo", str(repo), "--commit", "v1", "--out", str(out), "--slug", "acme/mlx"]
        )
        == 0
    )
    manifest = json.loads((out / "manifest.json").read_text())
    sha = git.Repo(repo).commit("v1").hexsha
    assert manifest["commit"]["sha"] == sha
    assert manifest["commit"]["date"] == "2026-01-02T03:04:05+00:00"
    assert manifest["counts"]["files"] == 2
    assert manifest["counts"]["raise_sites"] == 4
    assert manifest["counts"]["errors"] == 2  # the re-raise makes no card

    sites = [json.loads(line) for line in (out / "sites.jsonl").read_text().splitlines()]
    assert [(s["path"], s["line"], s["exception"]) for s in sites] == [
        ("pkg/mlx.py", 6, "NotImplementedError"),
        ("pkg/mlx.py", 12, "TypeError"),
        ("pkg/mlx.py", 20, "NotImplementedError"),
        ("pkg/mlx.py", 27, None),
    ]
    # One error raised at two sites: one card, primary site first.
    assert sites[0]["error_id"] == sites[2]["error_id"]
    assert sites[0]["site_id"] != sites[2]["site_id"]
    error_id = sites[0]["error_id"]
    api = json.loads((out / "api" / "errors" / f"{error_id}.json").read_text())
    assert [s["line"] for s in api["sites"]] == [6, 20]
    assert api["sites"][0]["url"] == f"https://github.com/acme/mlx/blob/{sha}/pkg/mlx.py#L6"

    card = (out / "errors" / f"{error_id}.md").read_text()
    assert card.startswith("acme/mlx · error · NotImplementedError\n")
    assert "# MLX auxiliary-state radix cache does not support…\n" in card
    assert "Thrown at `pkg/mlx.py:6` in `MlxAuxiliaryStateComponent.__init__`" in card
    assert (
        f"[View on GitHub (pinned to {sha[:10]})](https://github.com/acme/mlx/blob/{sha}/pkg/mlx.py#L6)"
        in card
    )
    assert "- `params.enable_mamba_extra_buffer` is true (line 5)" in card
    assert "Raised at `pkg/mlx.py:6` when `MlxAuxiliaryStateComponent` is constructed" in card
    assert "- [`pkg/mlx.py:20`]" in card
    assert f"Extracted from acme/mlx@{sha[:10]} (2026-01-02)" in card
    index = (out / "index.md").read_text()
    assert f"[{error_id}](errors/{error_id}.md)" in index
    assert "cards:" in capsys.readouterr().out


def test_same_commit_gives_byte_identical_output(repo: Path, tmp_path: Path) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    for out in (one, two):
        assert main(["mine", "--repo", str(repo), "--commit", "v1", "--out", str(out)]) == 0
    assert read_tree(one) == read_tree(two)
    # A second run into the same folder rewrites nothing.
    before = {p: p.stat().st_mtime_ns for p in one.rglob("*") if p.is_file()}
    assert main(["mine", "--repo", str(repo), "--commit", "v1", "--out", str(one)]) == 0
    assert before == {p: p.stat().st_mtime_ns for p in one.rglob("*") if p.is_file()}


def test_revisions_resolve_and_stale_cards_are_removed(repo: Path, tmp_path: Path) -> None:
    first = git.Repo(repo).head.commit.hexsha
    second = add_commit(repo, {"pkg/mlx.py": "def f():\n    raise KeyError('gone')\n"}, tag="v2")
    out = tmp_path / "out"
    assert main(["mine", "--repo", str(repo), "--commit", first[:10], "--out", str(out)]) == 0
    # the unsupported feature has a card; the type check is an internal check's entry
    assert len(list((out / "errors").glob("*.md"))) == 1
    assert len(list((out / "api" / "errors").glob("*.json"))) == 2
    assert sorted(p.name for p in (out / "internal").iterdir()) == ["README.md", "pkg.mlx.md"]
    (out / "test").mkdir()
    (out / "test" / "pkg.old.md").write_text("written by an earlier run")
    (out / "test" / "notes.txt").write_text("not ours")
    (out / "test" / "pkg.mine.md").write_text("a reader's page, named like ours")
    # the earlier run listed its page in the manifest; the reader's are not listed
    manifest = json.loads((out / "manifest.json").read_text())
    manifest["written"].append("test/pkg.old.md")
    (out / "manifest.json").write_text(json.dumps(manifest))
    assert main(["mine", "--repo", str(repo), "--commit", "main", "--out", str(out)]) == 0
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["commit"]["sha"] == second
    assert len(list((out / "errors").glob("*.md"))) == 0
    assert len(list((out / "api" / "errors").glob("*.json"))) == 1
    entries = (out / "internal" / "pkg.mlx.md").read_text()
    assert entries.count('<a id="') == 1 and "`KeyError`: `gone`" in entries
    # what the earlier run wrote and this one did not is removed, nothing else
    assert sorted(p.name for p in (out / "test").iterdir()) == ["notes.txt", "pkg.mine.md"]


def test_unknown_commit_exits_2_and_writes_nothing(repo: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "out"
    assert main(["mine", "--repo", str(repo), "--commit", "deadbeef12", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert err[0].startswith("miner: error: deadbeef12: unknown revision in ")
    assert not out.exists()


def test_not_a_repository_exits_2(tmp_path: Path, capsys) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    out = tmp_path / "out"
    assert main(["mine", "--repo", str(plain), "--commit", "HEAD", "--out", str(out)]) == 2
    assert capsys.readouterr().err == (
        f"miner: error: {plain}: not a git repository; pass the top folder of a clone or a URL\n"
    )
    assert (
        main(["mine", "--repo", str(tmp_path / "missing"), "--commit", "HEAD", "--out", str(out)])
        == 2
    )
    assert not out.exists()


@pytest.mark.skipif(os.geteuid() == 0, reason="root can write anywhere")
def test_unwritable_output_exits_2(repo: Path, tmp_path: Path, capsys) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        assert (
            main(["mine", "--repo", str(repo), "--commit", "v1", "--out", str(locked / "o")]) == 2
        )
    finally:
        locked.chmod(0o700)
    assert "cannot write the output folder" in capsys.readouterr().err


def test_output_path_that_is_a_file_exits_2(repo: Path, tmp_path: Path, capsys) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert main(["mine", "--repo", str(repo), "--commit", "v1", "--out", str(blocker / "o")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"miner: error: {blocker / 'o'}: cannot write the output folder")
    assert blocker.read_text() == "x"


def test_symlink_and_submodule_entries_are_skipped(make_repo, tmp_path: Path) -> None:
    root = make_repo(
        {"pkg/real.py": "def f(p):\n    if not p:\n        raise ValueError('path is empty')\n"}
    )
    (root / "pkg" / "alias.py").symlink_to("real.py")
    sub = make_repo({"inner.py": "raise E('x')\n"}, name="sub")
    repo = git.Repo(root)
    repo.git.update_index(
        "--add", "--cacheinfo", f"160000,{git.Repo(sub).head.commit.hexsha},vendor.py"
    )
    repo.git.add("pkg/alias.py")
    add_commit(root, {}, tag="v2", stage=False)
    out = tmp_path / "out"
    assert main(["mine", "--repo", str(root), "--commit", "v2", "--out", str(out)]) == 1
    manifest = json.loads((out / "manifest.json").read_text())
    assert {(f["path"], f["status"]) for f in manifest["files"]} == {
        ("pkg/alias.py", "skipped"),
        ("vendor.py", "skipped"),
    }
    assert manifest["counts"]["raise_sites"] == 1


def test_url_is_cloned_once_and_fetched_when_rev_is_missing(repo: Path, tmp_path: Path) -> None:
    url = f"file://{repo}"
    cache = tmp_path / "cache"
    args = ["mine", "--repo", url, "--cache-dir", str(cache), "--out", str(tmp_path / "o")]
    assert main([*args, "--commit", "v1"]) == 0
    clones = list((cache / "repos").iterdir())
    assert len(clones) == 1
    assert git.Repo(clones[0]).config_reader().get_value('remote "origin"', "promisor") is True
    clone = git.Repo(clones[0])
    assert source.is_partial_clone(clone)
    v1 = clone.commit("v1")
    wanted = {e.blob for e in source.python_blobs(clone, v1)}
    assert source.missing_blobs(clone, v1, wanted) == set()  # fetched in one batch
    new_sha = add_commit(repo, {"pkg/new.py": "raise KeyError('new')\n"}, tag="v2")
    assert main([*args, "--commit", "v2"]) == 0
    manifest = json.loads((tmp_path / "o" / "manifest.json").read_text())
    assert manifest["commit"]["sha"] == new_sha
    assert list((cache / "repos").iterdir()) == clones


def test_bad_url_exits_2(tmp_path: Path, capsys) -> None:
    url = f"file://{tmp_path}/nothing-here"
    args = ["mine", "--repo", url, "--commit", "v1", "--cache-dir", str(tmp_path / "c")]
    assert main([*args, "--out", str(tmp_path / "o")]) == 2
    assert capsys.readouterr().err.startswith(f"miner: error: {url}: cannot clone or fetch")
