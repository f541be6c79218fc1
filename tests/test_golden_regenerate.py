"""`make golden`'s writer (tests/golden/regenerate.py): what it keeps of a
mined record, and that it writes every golden error and removes stale files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from golden.cards_v0519 import CARDS
from golden.regenerate import golden_record, main, regenerate


def _record(error_id: str) -> dict:
    return {
        "error_id": error_id,
        "exception": "ValueError",
        "message": "bad {x}",
        "sites": [{"path": "python/a.py", "line": 7}],
        "analysis": {
            "audience": "user-setting",
            "audience_rule": "origin-setting",
            "condition_text": "x > 1",
            "origins": [{"kind": "flag", "name": "--x"}],
            "logged": None,
            "unreachable": None,
            "solution_kinds": ["fix"],
            "example_fix": {"kind": "flag", "before": "a", "after": "b"},
            "what_it_means": "prose is in the card, not here",
        },
    }


def test_golden_record_keeps_the_decisions_not_the_prose() -> None:
    kept = golden_record(_record("00000000000000aa"))
    assert kept == {
        "error_id": "00000000000000aa",
        "exception": "ValueError",
        "message": "bad {x}",
        "site": "python/a.py:7",
        "audience": "user-setting",
        "audience_rule": "origin-setting",
        "condition_text": "x > 1",
        "origins": [{"kind": "flag", "name": "--x"}],
        "logged": None,
        "unreachable": None,
        "solution_kinds": ["fix"],
        "example_fix_kind": "flag",
    }


def test_regenerate_writes_every_golden_error_and_removes_stale_files(tmp_path: Path) -> None:
    mine, out = tmp_path / "mine", tmp_path / "golden"
    (mine / "api" / "errors").mkdir(parents=True)
    (mine / "errors").mkdir()
    ids = [row["id"] for row in CARDS]
    for error_id in ids:
        (mine / "api" / "errors" / f"{error_id}.json").write_text(json.dumps(_record(error_id)))
    (mine / "errors" / f"{ids[0]}.md").write_text("# card\n")
    (out / "cards").mkdir(parents=True)
    (out / "cards" / "ffffffffffffffff.md").write_text("stale")
    assert regenerate(mine, out) == len(ids) >= 40
    assert sorted(p.stem for p in (out / "records").glob("*.json")) == sorted(ids)
    assert [p.name for p in (out / "cards").glob("*.md")] == [f"{ids[0]}.md"]
    assert json.loads((out / "records" / f"{ids[1]}.json").read_text())["site"] == "python/a.py:7"


def test_regenerate_names_a_folder_that_is_not_a_mine(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--mine", str(tmp_path), "--out", str(tmp_path / "g")]) == 2
    assert "not a mined output folder" in capsys.readouterr().err
