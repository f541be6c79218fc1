"""``miner mine`` end to end on fixture repositories: pinning, output files,
cards, determinism, and bad input."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import git
import pytest
from conftest import add_commit

from miner import __version__
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

#: The fixtures' errors are cards by their words: their toy code has no options
#: class an origin could reach, so these runs skip the origins stage.
WORDS = ["--no-origins", "-j", "0"]


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
            + WORDS
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
    assert (
        main(["mine", "--repo", str(repo), "--commit", first[:10], "--out", str(out), *WORDS]) == 0
    )
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


# ---- The conventions of the command line: -V, --help, --format, --, stdin. ----

COMMANDS = [
    "mine",
    "corpus",
    "site",
    "lookup",
    "check-cards",
    "explain",
    "diff",
    "history",
    "release",
]


@pytest.mark.parametrize("flag", ["-V", "--version"])
def test_version_flag_prints_the_version(flag: str, capsys) -> None:
    with pytest.raises(SystemExit) as stop:
        main([flag])
    assert stop.value.code == 0
    assert capsys.readouterr().out == f"miner {__version__}\n"


def test_top_level_help_lists_each_command_on_one_line_and_the_exit_codes(
    capsys, monkeypatch
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    with pytest.raises(SystemExit) as stop:
        main(["--help"])
    assert stop.value.code == 0
    out = capsys.readouterr().out
    listing = out.split("\ncommands:\n  COMMAND\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert [line.split()[0] for line in listing] == COMMANDS  # one line each
    assert all(len(line) <= 80 and re.match(r"    \S+  +\S", line) for line in listing)
    assert "\nExit codes:\n  0    success\n" in out
    assert "\n  2    bad input: one line on stderr names it and what to do\n" in out
    assert "\n  130  interrupted (Ctrl-C)\n" in out


@pytest.mark.parametrize("command", COMMANDS)
def test_command_help_has_a_description_an_example_and_exit_codes(
    command: str, capsys, monkeypatch
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    with pytest.raises(SystemExit) as stop:
        main([command, "--help"])
    assert stop.value.code == 0
    out = capsys.readouterr().out
    usage, description, *_ = out.split("\n\n")
    assert usage.startswith(f"usage: miner {command} ")
    assert len(description.split()) >= 30  # a paragraph, not a line
    example = out.split("\nExample:\n", 1)[1]
    assert example.startswith(f"  miner {command} ")
    codes = out.split("\nExit codes:\n", 1)[1]
    assert codes.startswith("  0    ")
    assert re.search(r"^  2    bad input", codes, flags=re.MULTILINE)


ARGS_SOURCE = """\
def check(tp):
    if tp < 1:
        raise ValueError(f"--tp-size {tp} must be at least 1")
"""
PASTE = "--tp-size 0 must be at least 1"


@pytest.fixture
def flag_output(make_repo, tmp_path: Path) -> Path:
    """A mined folder whose one error's message starts with ``--``."""
    root = make_repo({"pkg/args.py": ARGS_SOURCE})
    out = tmp_path / "flag-out"
    assert main(["mine", "--repo", str(root), "--commit", "v1", "--out", str(out), *WORDS]) == 0
    return out


def lookup(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["lookup", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_double_dash_ends_options_before_a_paste_starting_with_dashes(
    flag_output: Path, capsys
) -> None:
    capsys.readouterr()
    code, out, err = lookup(capsys, "--out", str(flag_output), "--", PASTE)
    assert (code, err) == (0, "")
    assert out.startswith("1. ")
    assert out.splitlines()[0].endswith("  ValueError: --tp-size {tp} must be at least 1")
    assert out.splitlines()[1] == "   pkg/args.py:3 in check"
    # the words of an unquoted paste are joined, options after -- included
    assert lookup(capsys, "--out", str(flag_output), "--", *PASTE.split()) == (code, out, "")
    # argparse reads an argument with a space as a positional, -- or not ...
    assert lookup(capsys, "--out", str(flag_output), PASTE) == (code, out, "")
    # ... but without --, a word of the paste reads as an unknown option
    with pytest.raises(SystemExit) as stop:
        main(["lookup", "--out", str(flag_output), *PASTE.split()])
    assert stop.value.code == 2
    assert "unrecognized arguments: --tp-size" in capsys.readouterr().err


def test_paste_on_standard_input_is_looked_up(flag_output: Path, capsys, monkeypatch) -> None:
    capsys.readouterr()
    expected = lookup(capsys, "--out", str(flag_output), "--", f"ValueError: {PASTE}\n")
    assert expected[0] == 0 and "same exception type ValueError" in expected[1]
    for argv in ([], ["-"]):
        monkeypatch.setattr("sys.stdin", io.StringIO(f"ValueError: {PASTE}\n"))
        assert lookup(capsys, "--out", str(flag_output), *argv) == expected
    # bytes that are not UTF-8 on a line of their own do not stop the lookup
    stdin = io.TextIOWrapper(io.BytesIO(f"ValueError: {PASTE}\n\xff\xfe\n".encode("latin-1")))
    monkeypatch.setattr("sys.stdin", stdin)
    assert lookup(capsys, "--out", str(flag_output)) == expected


def test_paste_through_a_real_pipe_and_a_redirected_file(flag_output: Path, tmp_path: Path) -> None:
    command = [sys.executable, "-m", "miner", "lookup", "--out", str(flag_output), "--json"]
    piped = subprocess.run(
        command, input=f"ValueError: {PASTE}\n".encode(), capture_output=True, check=False
    )
    assert (piped.returncode, piped.stderr) == (0, b"")
    payload = json.loads(piped.stdout)
    assert payload["matched"] is True
    assert (payload["results"][0]["path"], payload["results"][0]["line"]) == ("pkg/args.py", 3)
    paste = tmp_path / "paste.txt"
    paste.write_text(f"ValueError: {PASTE}\n")
    with paste.open("rb") as stdin:  # miner lookup - < paste.txt
        redirected = subprocess.run([*command, "-"], stdin=stdin, capture_output=True, check=False)
    assert (redirected.returncode, redirected.stdout) == (0, piped.stdout)


def test_lookup_without_paste_on_a_terminal_exits_2(flag_output: Path, capsys, monkeypatch) -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr("sys.stdin", Terminal(""))
    capsys.readouterr()
    assert lookup(capsys, "--out", str(flag_output)) == (
        2,
        "",
        "miner: error: nothing to look up: pass the message (after -- when it starts with -), "
        "pipe it on standard input, or give - to type it\n",
    )
    monkeypatch.setattr("sys.stdin", io.StringIO(" \n"))
    assert lookup(capsys, "--out", str(flag_output), "-") == (
        2,
        "",
        "miner: error: nothing to look up: the paste is empty; pass the message or pipe it\n",
    )


def test_format_json_and_the_json_alias_print_the_same(flag_output: Path, capsys) -> None:
    capsys.readouterr()
    code, out, _ = lookup(capsys, "--out", str(flag_output), "--format", "json", "--", PASTE)
    assert code == 0
    assert json.loads(out)["results"][0]["line"] == 3
    assert lookup(capsys, "--out", str(flag_output), "--json", "--", PASTE) == (0, out, "")
    assert main(["check-cards", str(flag_output), "--format", "json"]) == 0
    cards = capsys.readouterr().out
    assert json.loads(cards)["cards"] == 1
    assert main(["check-cards", str(flag_output), "--json"]) == 0
    assert capsys.readouterr().out == cards
    assert main(["check-cards", str(flag_output)]) == 0
    assert not capsys.readouterr().out.startswith("{")


def test_diff_format_json_prints_counts_reports_and_changes(
    repo: Path, tmp_path: Path, capsys
) -> None:
    add_commit(
        repo, {"pkg/new.py": "def f(x):\n    if x:\n        raise KeyError('new key')\n"}, tag="v2"
    )
    out = tmp_path / "diffs"
    argv = ["diff", "v1", "v2", "--repo", str(repo), "--out", str(out), "--format", "json"]
    assert main([*argv, "--fail-on", "added"]) == 1
    summary = json.loads(capsys.readouterr().out)
    report = json.loads(Path(summary["json"]).read_text())
    assert summary["counts"] == report["counts"]
    assert summary["counts"]["added"] == 1 and summary["counts"]["unchanged"] == 2
    assert (summary["from"], summary["to"], summary["failing"]) == ("v1", "v2", ["added"])
    assert Path(summary["report"]).is_file() and Path(summary["report"]).parent == out
    added = report["changes"][0]["new"]["error_id"]
    assert summary["changes"] == [{"kind": "added", "old": None, "new": added, "title": "new key"}]
