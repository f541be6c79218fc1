"""Edges of the output's guarantees: text that lies about itself (bidi and
other invisible format characters, line separators in JSON Lines),
revisions git refuses, an output folder that is the current folder, and
names too long for the file system."""

from __future__ import annotations

import json
import subprocess
import unicodedata
from pathlib import Path

import pytest

from miner.cli import main

#: A title that a bidi override would show reversed, with a zero-width space,
#: an isolate, a byte order mark and a line separator inside.
MESSAGE = "invoice\u202etxt.exe\u202c zero\u200bwidth \u2066iso\u2069 bom\ufeff sep\u2028end"
SOURCE = f"""\
def check(x):
    if x is None:
        raise ValueError({MESSAGE!r})
    # comment \u202e gnirts
"""


def _format_chars(text: str) -> set[str]:
    return {f"U+{ord(c):04X}" for c in text if unicodedata.category(c) == "Cf"}


def test_cards_and_site_show_format_characters_escaped(make_repo, tmp_path: Path) -> None:
    repo = make_repo({"pkg/bidi.py": SOURCE})
    out = tmp_path / "out"
    argv = ["mine", "--repo", str(repo), "--commit", "v1", "--out", str(out), "--site"]
    assert main([*argv, "--no-origins"]) == 0  # a card by its words
    pages = [p for p in out.rglob("*") if p.suffix in (".md", ".html")]
    shown = {str(p.relative_to(out)): _format_chars(p.read_text()) for p in pages}
    assert {name: chars for name, chars in shown.items() if chars} == {}
    text = "\n".join(p.read_text() for p in pages)
    # the message, escaped, in the cards and on the site
    assert r"invoice\u202etxt.exe\u202c zero\u200bwidth \u2066iso\u2069 bom\ufeff" in text
    md = "\n".join(p.read_text() for p in pages if p.suffix == ".md")
    html = "\n".join(p.read_text() for p in pages if p.suffix == ".html")
    assert r"invoice\u202etxt.exe" in md and r"invoice\u202etxt.exe" in html
    # the site's code view too (the comment of the source line)
    assert r"comment \u202e gnirts" in html


def test_json_lines_escape_line_separators(make_repo, tmp_path: Path) -> None:
    repo = make_repo({"pkg/bidi.py": SOURCE})
    out = tmp_path / "out"
    assert main(["mine", "--repo", str(repo), "--commit", "v1", "--out", str(out)]) == 0
    for name in ("sites.jsonl", "analyses.jsonl"):
        text = (out / name).read_text(encoding="utf-8")
        assert "\u2028" not in text and "\u2029" not in text
        rows = [json.loads(line) for line in text.splitlines()]
        assert len(rows) == 1  # one error, one site: one row per line
    site = json.loads((out / "sites.jsonl").read_text().splitlines()[0])
    assert site["message"] == MESSAGE  # the escape reads back as the character
    assert "\\u2028end" in (out / "sites.jsonl").read_text()


REFLOG_REFUSED = "cannot resolve this reflog form in {repo}; give a commit SHA, tag or branch"


@pytest.mark.parametrize("rev", ["@{-1}", "HEAD@{yesterday}", "HEAD@{5}", "main@{1.week.ago}"])
@pytest.mark.parametrize("command", ["mine", "diff-old", "diff-new"])
def test_reflog_revisions_exit_2_with_one_line(
    make_repo, tmp_path: Path, capsys, rev: str, command: str
) -> None:
    repo = make_repo({"pkg/a.py": "raise ValueError('x')\n"})
    cache = ["--cache-dir", str(tmp_path / "cache")]
    if command == "mine":
        argv = ["mine", "--repo", str(repo), "--commit", rev, "--out", str(tmp_path / "o")]
    elif command == "diff-old":
        argv = ["diff", "--repo", str(repo), rev, "v1"]
    else:
        argv = ["diff", "--repo", str(repo), "v1", rev]
    assert main(argv + cache) == 2
    err = capsys.readouterr().err.splitlines()
    assert err == [
        f"miner: error: {rev}: {REFLOG_REFUSED.format(repo=repo)} instead "
        "(git rev-parse prints the SHA of a reflog form)"
    ]
    assert not (tmp_path / "o").exists()


def test_history_reflog_bound_exits_2_with_one_line(make_repo, tmp_path: Path, capsys) -> None:
    repo = make_repo({"pkg/a.py": "raise ValueError('x')\n"})
    out = tmp_path / "o"
    argv = ["history", "--repo", str(repo), "--to", "@{-1}", "--out", str(out)]
    assert main(argv + ["--cache-dir", str(tmp_path / "cache")]) == 2
    assert capsys.readouterr().err.splitlines() == [
        "miner: error: @{-1}: not a tag of the repository matching v*; check --from/--to"
    ]


def test_reflog_form_git_reads_still_resolves(make_repo, tmp_path: Path) -> None:
    repo = make_repo({"pkg/a.py": "raise ValueError('x')\n"})
    out = tmp_path / "o"
    assert main(["mine", "--repo", str(repo), "--commit", "HEAD@{0}", "--out", str(out)]) == 0
    sha = subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert json.loads((out / "manifest.json").read_text())["commit"]["sha"] == sha


@pytest.mark.parametrize("spelling", [".", "./", "{cwd}", "sub/..", "link"])
def test_out_current_folder_is_refused_before_work(
    make_repo, tmp_path: Path, monkeypatch, capsys, spelling: str
) -> None:
    repo = make_repo({"pkg/a.py": "raise ValueError('x')\n"})
    here = tmp_path / "here"
    (here / "sub").mkdir(parents=True)
    (here / "mine.txt").write_text("keep\n")
    (tmp_path / "link").symlink_to(here)
    monkeypatch.chdir(here)
    out = spelling.format(cwd=here)
    if spelling == "link":
        out = str(tmp_path / "link")
    argv = ["mine", "--repo", str(repo), "--commit", "v1", "--out", out]
    assert main(argv + ["--cache-dir", str(tmp_path / "cache")]) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"miner: error: {Path(out).absolute()}: is the current folder, which the run would "
        "replace; pass --out with a new folder (e.g. --out ./out), or run from outside it"
    ]
    assert sorted(p.name for p in here.iterdir()) == ["mine.txt", "sub"]


def test_out_holding_the_current_folder_is_refused(
    make_repo, tmp_path: Path, monkeypatch, capsys
) -> None:
    repo = make_repo({"pkg/a.py": "raise ValueError('x')\n"})
    inner = tmp_path / "top" / "inner"
    inner.mkdir(parents=True)
    monkeypatch.chdir(inner)
    argv = ["mine", "--repo", str(repo), "--commit", "v1", "--out", ".."]
    assert main(argv + ["--cache-dir", str(tmp_path / "cache")]) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"miner: error: {inner}/..: is a folder holding the current folder {inner}, which the "
        "run would replace; pass --out with a new folder (e.g. --out ./out), or run from "
        "outside it"
    ]


@pytest.mark.parametrize("length", [238, 249, 255, 300])
def test_out_name_too_long_for_its_staging_is_refused_before_mining(
    make_repo, tmp_path: Path, capsys, length: int
) -> None:
    import os

    repo = make_repo({"pkg/a.py": "raise ValueError('x')\n"})
    limit = os.pathconf(tmp_path, "PC_NAME_MAX")
    out = tmp_path / ("o" * length)
    cache = tmp_path / "cache"
    argv = ["mine", "--repo", str(repo), "--commit", "v1", "--out", str(out)]
    assert main(argv + ["--cache-dir", str(cache)]) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"miner: error: {out}: the folder's name is {length} bytes long; its file system "
        f"allows {limit} bytes for a name and the staging folder beside it "
        f"(.NAME.staging-XXXXXXXX) adds 18, so at most {limit - 18}; "
        "pass --out with a shorter name"
    ]
    assert not (cache / "blobs").exists()  # refused before mining


def test_out_name_that_fits_with_its_staging_is_mined(make_repo, tmp_path: Path) -> None:
    import os

    repo = make_repo({"pkg/a.py": "raise ValueError('x')\n"})
    out = tmp_path / ("o" * (os.pathconf(tmp_path, "PC_NAME_MAX") - 18))
    assert main(["mine", "--repo", str(repo), "--commit", "v1", "--out", str(out)]) == 0
    assert (out / "manifest.json").is_file()


def test_out_path_with_a_folder_name_too_long_is_refused(make_repo, tmp_path: Path, capsys) -> None:
    import os

    repo = make_repo({"pkg/a.py": "raise ValueError('x')\n"})
    limit = os.pathconf(tmp_path, "PC_NAME_MAX")
    out = tmp_path / ("d" * (limit + 1)) / "out"
    argv = ["mine", "--repo", str(repo), "--commit", "v1", "--out", str(out)]
    assert main(argv) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"miner: error: {out}: a folder name on this path is {limit + 1} bytes long; its file "
        f"system allows {limit}; pass --out with shorter names"
    ]


def _never_mined(monkeypatch) -> None:
    from miner import pipeline

    def mined(*args: object, **kwargs: object) -> None:
        raise AssertionError("the revisions were mined before the check")

    monkeypatch.setattr(pipeline, "diff_commits", mined)


def test_diff_into_a_file_is_refused_before_mining(
    make_repo, tmp_path: Path, capsys, monkeypatch
) -> None:
    repo = make_repo({"pkg/a.py": "raise ValueError('x')\n"})
    (tmp_path / "notes").write_text("mine\n")
    _never_mined(monkeypatch)
    out = tmp_path / "notes" / "diffs"
    assert main(["diff", "--repo", str(repo), "v1", "v1", "--out", str(out)]) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"miner: error: {out}: cannot write into it ({tmp_path / 'notes'} is not a folder); "
        "pass a writable --out"
    ]
    assert (tmp_path / "notes").read_text() == "mine\n"


def test_diff_report_name_too_long_is_refused_before_mining(
    make_repo, tmp_path: Path, capsys, monkeypatch
) -> None:
    import os

    import git

    repo = make_repo({"pkg/a.py": "raise ValueError('x')\n"})
    old, new = "o" * 120, "n" * 120  # each a valid tag; the report's name is not
    for tag in (old, new):
        git.Repo(repo).create_tag(tag)
    limit = os.pathconf(tmp_path, "PC_NAME_MAX")
    _never_mined(monkeypatch)
    out = tmp_path / "diffs"
    assert main(["diff", "--repo", str(repo), old, new, "--out", str(out)]) == 2
    name = f"{old}..{new}.json"
    assert capsys.readouterr().err.splitlines() == [
        f"miner: error: {out}: the file name {name!r} is too long for its file system "
        f"({len(name) + 10} bytes with its temporary file's; it allows {limit}); name the "
        "revisions with shorter names (a commit id, a tag)"
    ]
    assert not out.exists()
