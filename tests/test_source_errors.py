"""A repository that cannot be cloned is one line naming it, and offline the
line says how to mine a local clone instead."""

from __future__ import annotations

from pathlib import Path

from miner.cli import main


def test_an_unreachable_host_names_the_network_and_the_local_way_out(
    tmp_path: Path, capsys
) -> None:
    url = "https://host.invalid/sgl-project/sglang.git"  # .invalid never resolves
    args = ["mine", "--repo", url, "--commit", "0132848349", "--out", str(tmp_path / "o")]
    assert main([*args, "--cache-dir", str(tmp_path / "c")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith(f"miner: error: {url}: cannot reach it over the network (")
    assert err.rstrip().endswith(
        "mine a local clone instead: --repo PATH (make mine COMMIT=... REPO=PATH; make corpus "
        "builds SGLang's releases from PyPI into .corpus/sglang)"
    )
    assert not (tmp_path / "o").exists()


def test_a_missing_local_url_keeps_gits_reason(tmp_path: Path, capsys) -> None:
    url = f"file://{tmp_path}/nothing-here"
    args = ["mine", "--repo", url, "--commit", "v1", "--out", str(tmp_path / "o")]
    assert main([*args, "--cache-dir", str(tmp_path / "c")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"miner: error: {url}: cannot clone or fetch (")
    assert err.rstrip().endswith("); check the URL")
    assert "does not appear to be a git repository" in err
