"""A repository that cannot be cloned is one line naming it, and offline the
line says how to mine a local clone instead."""

from __future__ import annotations

from pathlib import Path

import pytest

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


@pytest.mark.parametrize("url", ["ext::sh -c touch% /tmp/x% ://", "fd::3://"])
@pytest.mark.parametrize("command", ["mine", "diff", "history"])
def test_a_transport_gitpython_refuses_is_one_line(
    tmp_path: Path, capsys, url: str, command: str
) -> None:
    """``ext::`` runs a command and ``fd::`` reads a descriptor: GitPython
    refuses both (``UnsafeProtocolError``); one line naming the URL, exit 2."""
    argv = {
        "mine": ["mine", "--repo", url, "--commit", "v1", "--out", str(tmp_path / "o")],
        "diff": ["diff", "--repo", url, "v1", "v2"],
        "history": ["history", "--repo", url, "--out", str(tmp_path / "o")],
    }[command]
    assert main([*argv, "--cache-dir", str(tmp_path / "c")]) == 2
    scheme = url.split("::")[0]
    assert capsys.readouterr().err.splitlines() == [
        f"miner: error: {url}: git's {scheme}:: transport is refused (it runs commands or "
        "reads descriptors of this process); pass an https://, ssh:// or file:// URL or a "
        "local path"
    ]
    assert not (tmp_path / "o").exists()


def test_a_fatal_line_in_the_middle_of_gits_output_is_the_reason(tmp_path: Path, capsys) -> None:
    """git:// prints ``fatal:`` after other words on its line, and its last
    line is GitPython's closing quote: the reason is the fatal line and the
    line it ends with a colon for."""
    url = "git://127.0.0.1:1/x.git"
    args = ["mine", "--repo", url, "--commit", "v1", "--out", str(tmp_path / "o")]
    assert main([*args, "--cache-dir", str(tmp_path / "c")]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err == [
        f"miner: error: {url}: cannot reach it over the network (unable to connect to "
        "127.0.0.1: 127.0.0.1[0: 127.0.0.1]: errno=Connection refused); mine a local clone "
        "instead: --repo PATH (make mine COMMIT=... REPO=PATH; make corpus builds SGLang's "
        "releases from PyPI into .corpus/sglang)"
    ]
