"""Ids do not depend on where a repository is said to live: the same commit
mined under two ``--slug`` values (and with none, or another ``--link-ref``)
gives the same error ids, the same site ids and the same page names, so links
to a card survive a fork, a rename or a mirror."""

from __future__ import annotations

import json
from pathlib import Path

from sample_repo import FILES

from miner.cli import main


def ids(out: Path) -> list[tuple[str, int, str, str]]:
    """(path, line, site id, error id) of every site in ``out/sites.jsonl``."""
    rows = [json.loads(line) for line in (out / "sites.jsonl").read_text("utf-8").splitlines()]
    return [(r["path"], r["line"], r["site_id"], r["error_id"]) for r in rows]


def names(folder: Path, pattern: str) -> list[str]:
    return sorted(p.name for p in folder.glob(pattern))


def test_ids_and_page_names_do_not_depend_on_the_slug(make_repo, tmp_path: Path, capsys) -> None:
    repo = make_repo(FILES, tag="v1", name="sglang")
    runs = {
        "upstream": ["--slug", "sgl-project/sglang"],
        "fork": ["--slug", "someone/fork-of-sglang", "--link-ref", "v1"],
        "local": [],
    }
    outs = {}
    for label, extra in runs.items():
        out = tmp_path / label
        args = ["mine", "--repo", str(repo), "--commit", "v1", "--out", str(out), "--site"]
        assert main([*args, "-j", "0", "--no-origins", *extra]) == 0, label
        outs[label] = out
    capsys.readouterr()

    slugs = {
        label: json.loads((out / "manifest.json").read_text("utf-8"))["commit"]["slug"]
        for label, out in outs.items()
    }
    assert len(set(slugs.values())) == 3, slugs  # the runs did differ

    first = outs["upstream"]
    expected_ids = ids(first)
    assert len(expected_ids) >= 5
    assert len({error for *_, error in expected_ids}) >= 5
    expected_pages = names(first / "site" / "errors", "*.html")
    records = [json.loads(p.read_text()) for p in (first / "api" / "errors").glob("*.json")]
    internal = {r["error_id"] for r in records if r["audience"] == "internal"}
    assert internal and len(records) == len({e for *_, e in expected_ids})
    assert expected_pages == sorted(
        f"{r['error_id']}.html" for r in records if r["error_id"] not in internal
    )
    grouped_pages = names(first / "site" / "internal", "*.html")
    assert len(grouped_pages) == 3  # index.html and two module pages
    for label, out in outs.items():
        assert ids(out) == expected_ids, label
        assert names(out / "site" / "errors", "*.html") == expected_pages, label
        assert names(out / "site" / "internal", "*.html") == grouped_pages, label
        assert names(out / "errors", "*.md") == names(first / "errors", "*.md"), label
        assert names(out / "internal", "*.md") == names(first / "internal", "*.md"), label
        assert names(out / "api" / "errors", "*.json") == names(first / "api" / "errors", "*.json")
        assert names(out / "site" / "api" / "errors", "*.json") == names(
            first / "site" / "api" / "errors", "*.json"
        ), label
    # The slug is in the cards (headers, links), just not in any id.
    card = names(first / "errors", "*.md")[0]
    assert "sgl-project/sglang" in (outs["upstream"] / "errors" / card).read_text("utf-8")
    assert "someone/fork-of-sglang" in (outs["fork"] / "errors" / card).read_text("utf-8")
