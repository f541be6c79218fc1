"""``miner diff``, ``miner history`` and ``miner release`` from the command line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import add_commit

from miner.cli import main
from miner.model import SCHEMA_VERSION

OLD = """\
def check(x):
    if x < 0:
        raise ValueError("x must be a positive number")
    raise KeyError("cache entry vanished")
"""
NEW = """\
import os


def check(x):
    if x < 0:
        raise ValueError("x must be a positive number")
    raise TypeError("unsupported dtype given")
"""


@pytest.fixture
def repo(make_repo):
    root = make_repo({"pkg/a.py": OLD}, tag="v1")
    add_commit(root, {"pkg/a.py": NEW}, tag="v2")
    return root


def test_diff_writes_report_and_json(repo, tmp_path, capsys):
    out = tmp_path / "out"
    cache = ["--cache-dir", str(tmp_path / "cache")]
    code = main(["diff", "--repo", str(repo), "v1", "v2", "--out", str(out), *cache])
    assert code == 0
    printed = capsys.readouterr().out
    assert "v1 -> v2: 1 removed, 1 added, 0 changed, 0 moved, 1 unchanged" in printed
    data = json.loads((out / "v1..v2.json").read_text())
    assert data["schema_version"] == SCHEMA_VERSION
    assert data["counts"] == {"removed": 1, "added": 1, "changed": 0, "moved": 0, "unchanged": 1}
    assert [c["kind"] for c in data["changes"]] == ["removed", "added"]
    assert data["changes"][0]["old"]["message"] == "cache entry vanished"
    assert data["changes"][1]["new"]["exception"] == "TypeError"
    report = (out / "v1..v2.md").read_text()
    assert report.index("## Error was removed (1)") < report.index("## Error was added (1)")
    assert "### `pkg.a`" in report
    assert "| Error is unchanged (counted, not listed) | 1 |" in report

    code = main(["diff", "--repo", str(repo), "v1", "v2", "--out", str(out), "--unchanged", *cache])
    data = json.loads((out / "v1..v2.json").read_text())
    (kept,) = [c for c in data["changes"] if c["kind"] == "unchanged"]
    assert (kept["sites"][0]["old"]["line"], kept["sites"][0]["new"]["line"]) == (3, 6)


@pytest.mark.parametrize(
    ("fail_on", "code"),
    [("added,removed", 1), ("added", 1), ("changed,moved", 0), ("", 0)],
)
def test_fail_on(repo, tmp_path, fail_on, code):
    argv = ["diff", "--repo", str(repo), "v1", "v2", "--out", str(tmp_path / "o")]
    argv += ["--cache-dir", str(tmp_path / "cache"), "--fail-on", fail_on]
    assert main(argv) == code


def test_fail_on_unknown_kind(repo, tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["diff", "--repo", str(repo), "v1", "v2", "--fail-on", "added,renamed"])
    assert exc.value.code == 2
    assert "unknown change kind 'renamed'" in capsys.readouterr().err


def test_diff_unknown_revision(repo, tmp_path, capsys):
    argv = ["diff", "--repo", str(repo), "v1", "v9", "--cache-dir", str(tmp_path / "c")]
    assert main(argv) == 2
    assert "v9: unknown revision" in capsys.readouterr().err


def test_release_twice_then_a_new_tag(repo, tmp_path, capsys):
    out = tmp_path / "site"
    argv = ["release", "--repo", str(repo), "--out", str(out), "--cache-dir", str(tmp_path / "c")]
    assert main(argv) == 0
    first = capsys.readouterr().out
    assert "documented 2 releases (v1 .. v2)" in first
    assert json.loads((out / "releases.json").read_text())["releases"][1]["tag"] == "v2"
    before = {p: p.stat().st_mtime_ns for p in out.rglob("*")}

    assert main(argv) == 0
    second = capsys.readouterr().out
    nothing, published = second.splitlines()
    assert (
        nothing == f"nothing new: v2, the newest tag matching 'v*', is already documented in {out}"
    )
    # the published site's size is checked on every run, as the workflow deploys it
    assert published.startswith(f"published: {out / 'site'}: ")
    assert published.endswith(" files (budget 1,000,000,000 bytes, 200,000 files)")
    assert {p: p.stat().st_mtime_ns for p in out.rglob("*")} == before

    add_commit(repo, {"pkg/a.py": NEW.replace("dtype", "device")}, tag="v3")
    assert main(argv) == 0
    third = capsys.readouterr().out
    assert "documented 3 releases (v1 .. v3)" in third
    assert (out / "diffs" / "v2..v3.md").is_file()
    tags = [r["tag"] for r in json.loads((out / "releases.json").read_text())["releases"]]
    assert tags == ["v1", "v2", "v3"]


def test_release_of_an_empty_site_starts_before_the_newest(repo, tmp_path, capsys):
    add_commit(repo, {"pkg/a.py": NEW + "\n"}, tag="v3")
    out = tmp_path / "site"
    argv = ["release", "--repo", str(repo), "--out", str(out), "--cache-dir", str(tmp_path / "c")]
    assert main(argv) == 0
    assert "documented 2 releases (v2 .. v3)" in capsys.readouterr().out
    assert main([*argv[:-4], "--out", str(tmp_path / "s2"), "--since", "v1", *argv[-2:]]) == 0
    assert "documented 3 releases (v1 .. v3)" in capsys.readouterr().out


def test_release_bad_input(repo, tmp_path, capsys):
    argv = ["release", "--repo", str(repo), "--out", str(tmp_path / "s"), "--tags", "x*"]
    assert main(argv) == 2
    assert "no tag of the repository matches x*" in capsys.readouterr().err
    assert main(["release", "--repo", str(tmp_path / "nope"), "--out", str(tmp_path / "s")]) == 2
    assert "no such folder" in capsys.readouterr().err


def test_history_range(repo, tmp_path, capsys):
    add_commit(repo, {"pkg/a.py": OLD}, tag="v3")
    out = tmp_path / "site"
    argv = ["history", "--repo", str(repo), "--from", "v2", "--to", "v3", "--out", str(out)]
    assert main([*argv, "--cache-dir", str(tmp_path / "c")]) == 0
    assert "documented 2 releases (v2 .. v3)" in capsys.readouterr().out
    assert sorted(p.name for p in (out / "diffs").iterdir()) == ["v2..v3.json", "v2..v3.md"]


def test_release_over_the_size_budget_fails_with_one_line(repo, tmp_path, capsys):
    out = tmp_path / "site"
    argv = ["release", "--repo", str(repo), "--out", str(out), "--cache-dir", str(tmp_path / "c")]
    assert main(argv) == 0
    published = capsys.readouterr().out.splitlines()[-1]
    files = sum(1 for p in (out / "site").rglob("*") if p.is_file())
    size = sum(p.stat().st_size for p in (out / "site").rglob("*") if p.is_file())
    assert published == (
        f"published: {out / 'site'}: {size:,} bytes ({size / 2**20:.1f} MiB), {files:,} files "
        "(budget 1,000,000,000 bytes, 200,000 files)"
    )
    # nothing new, but the site deployed is checked again: one file too many fails
    assert main([*argv, "--max-files", str(files - 1)]) == 3
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith(f"miner: error: {out / 'site'}: the published site is {size:,} bytes")
    assert f"over the budget of 1,000,000,000 bytes and {files - 1:,} files" in err
    assert main([*argv, "--max-bytes", str(size)]) == 0
    assert main([*argv, "--max-bytes", str(size - 1)]) == 3


def test_the_workflow_checks_the_budget_before_the_pages_artifact():
    """The release workflow deploys site/site as a Pages artifact only after
    ``make release``, which passes the workflow's budget to ``miner release``
    (exit 3 over it stops the job)."""
    root = Path(__file__).resolve().parent.parent
    workflow = (root / ".github" / "workflows" / "release-docs.yml").read_text()
    makefile = (root / "Makefile").read_text()
    assert 'MAX_BYTES: "1000000000"' in workflow and 'MAX_FILES: "200000"' in workflow
    release = workflow.index("make release")
    assert workflow.index('MAX_BYTES="$MAX_BYTES"', release) < workflow.index(
        "upload-pages-artifact"
    )
    assert workflow.index("upload-pages-artifact") < workflow.index("actions/deploy-pages")
    assert "path: site/site" in workflow[workflow.index("upload-pages-artifact") :]
    recipe = makefile[makefile.index("\nrelease:") :]
    assert "--max-bytes '$(MAX_BYTES)' --max-files '$(MAX_FILES)'" in recipe.split("\n\n")[0]
