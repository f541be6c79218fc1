"""``miner lookup --history SITE``: a paste matched against every release of a
release site written by :func:`miner.pipeline.document_releases` over a
fixture repository of three tiny releases."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import add_commit

from miner import cli, pipeline
from miner.lookup import ReleaseBook, life_sentences, search_releases
from miner.publish.release_index import RELEASE_INDEX

TOKENS = (
    "def check_token(token, ids):\n"
    "    if len(ids) != 1:\n"
    "        raise ValueError(\n"
    "            f\"think_end_token '{token}' \"\n"
    '            "must encode to exactly one token for constrained reasoning."\n'
    "        )\n"
)
CACHE_OLD = (
    "class HiCache:\n"
    "    def __init__(self, kind):\n"
    "        if kind not in ('mha', 'mla'):\n"
    '            raise ValueError("HiCache only supports MHA and MLA models")\n'
)
CACHE_NEW = CACHE_OLD.replace("('mha', 'mla')", "('mha', 'mla', 'msa')").replace(
    "MHA and MLA models", "MHA, MLA, and MSA models"
)
STABLE = (
    "def set_pages(size):\n"
    "    if size <= 0:\n"
    '        raise ValueError(f"page size must be positive, got {size}")\n'
)
PAD = "import os\n\n\n"
#: tag -> pkg/m.py. v1 raises the token error, v2 no longer; the cache error
#: is reworded in v3; the page-size error moves down a line in each release.
RELEASES = {
    "v1": STABLE + TOKENS + CACHE_OLD,
    "v2": "import os\n" + STABLE + CACHE_OLD,
    "v3": PAD + STABLE + CACHE_NEW,
}
SP = "/usr/lib/python3.11/site-packages/pkg"


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The release site of the three releases."""
    import git
    from conftest import commit_all, write_files

    root = tmp_path_factory.mktemp("history") / "repo"
    root.mkdir()
    repo = git.Repo.init(root, initial_branch="main")
    with repo.config_writer() as cfg:
        cfg.set_value("commit", "gpgsign", "false")
    tags = list(RELEASES)
    write_files(root, {"pkg/m.py": RELEASES[tags[0]]})
    commit_all(repo, "v1", tags[0])
    for tag in tags[1:]:
        add_commit(root, {"pkg/m.py": RELEASES[tag]}, tag=tag)
    out = root.parent / "site"
    cache = root.parent / "cache"
    pipeline.document_releases(str(root), tags, out, cache_dir=cache)
    return out


@pytest.fixture(scope="module")
def book(site: Path) -> ReleaseBook:
    return ReleaseBook.load(site)


def ids_by_message(book: ReleaseBook) -> dict[str, str]:
    return {card.message or "": card.error_id for card in book.cards}


def test_release_index_holds_every_release(site: Path, book: ReleaseBook) -> None:
    data = json.loads((site / RELEASE_INDEX).read_text())
    assert data["releases"] == ["v1", "v2", "v3"]
    assert data["paths"] == ["pkg/m.py"]
    ids = ids_by_message(book)
    assert len(ids) == 4  # the token error, both cache wordings, the page-size error
    pages = ids["page size must be positive, got {size}"]
    # the line of the page-size error in each release: 3, then 4, then 6
    assert {tag: [s.line for s in sites] for tag, sites in book.raised[pages].items()} == {
        "v1": [3],
        "v2": [4],
        "v3": [6],
    }
    (card,) = [c for c in book.cards if c.error_id == pages]
    assert [s.line for s in card.sites] == [6, 4, 3]  # the newest release's first
    assert card.sites[0].code == 'raise ValueError(f"page size must be positive, got {size}")'
    assert card.sites[0].kind == "raise"


def test_error_of_an_older_release_only(book: ReleaseBook) -> None:
    """Kind 5: an error only an older release raises is found, in that release."""
    found = search_releases(
        book,
        "ValueError: think_end_token '</think>' must encode to exactly one token for "
        "constrained reasoning.",
    )
    top = found[0]
    token = ids_by_message(book)[
        "think_end_token '{token}' must encode to exactly one token for constrained reasoning."
    ]
    assert top.good and top.card.error_id == token
    assert top.fits == ("v1",) and top.fit_by == ("message",)
    assert [(tag, sites[0].line) for tag, _, sites in top.raised] == [("v1", 6)]
    assert top.newest is None
    assert life_sentences(book, top.history) == ["raised in v1 only", "removed in v2"]


def test_reworded_error_names_both_cards(book: ReleaseBook) -> None:
    ids = ids_by_message(book)
    old, new = (
        ids["HiCache only supports MHA and MLA models"],
        ids["HiCache only supports MHA, MLA, and MSA models"],
    )
    (top, *_) = search_releases(book, "ValueError: HiCache only supports MHA and MLA models")
    assert top.card.error_id == old and top.newest == new
    assert top.fits == ("v1", "v2") and top.fit_by == ("message",)
    assert life_sentences(book, top.history) == [
        "raised in every release documented (v1 to v3)",
        "reworded in v3 (also guards): the current text is HiCache only supports MHA, MLA, "
        "and MSA models",
    ]
    (current, *_) = search_releases(book, "HiCache only supports MHA, MLA, and MSA models")
    assert current.card.error_id == new and current.fits == ("v3",)
    # one answer per error: both wordings are one lineage
    assert len({f.history.error_id for f in search_releases(book, "HiCache only supports")}) == 1


@pytest.mark.parametrize(("line", "release"), [(3, "v1"), (4, "v2"), (6, "v3")])
def test_frames_tell_the_release(book: ReleaseBook, line: int, release: str) -> None:
    """The same error in every release: the traceback's line says which one."""
    paste = (
        "Traceback (most recent call last):\n"
        f'  File "{SP}/m.py", line {line}, in set_pages\n'
        '    raise ValueError(f"page size must be positive, got {size}")\n'
        "ValueError: page size must be positive, got 0\n"
    )
    (top, *_) = search_releases(book, paste)
    assert top.fits == (release,) and top.fit_by == ("frames", "message")
    assert top.score >= 0.95
    assert top.newest == top.card.error_id  # still raised: the same card


def test_cli_history_text_and_json(site: Path, book: ReleaseBook, capsys) -> None:
    paste = (
        "[2026-11-30 10:12:44 TP0] Scheduler hit an exception: ValueError: think_end_token "
        "'</think>' must encode to exactly one token for constrained reasoning."
    )
    assert cli.main(["lookup", "--history", str(site), paste]) == 0
    text = capsys.readouterr().out.splitlines()
    token = ids_by_message(book)[
        "think_end_token '{token}' must encode to exactly one token for constrained reasoning."
    ]
    assert text[0].endswith(
        "ValueError: think_end_token '{token}' must encode to exactly one token for "
        "constrained reasoning."
    )
    assert text[1:4] == [
        "   raised in v1 only; removed in v2",
        "   v1: pkg/m.py:6 in check_token",
        "   the paste fits v1 (its wording)",
    ]
    assert text[4].startswith("   card (v1): ") and token in text[4]
    assert cli.main(["lookup", "--history", str(site), "--json", paste]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["matched"] and payload["releases"] == ["v1", "v2", "v3"]
    top = payload["results"][0]
    assert (top["error_id"], top["fits"], top["present"], top["newest"]) == (
        token,
        ["v1"],
        False,
        None,
    )
    assert top["raised"] == [
        {"release": "v1", "error_id": token, "path": "pkg/m.py", "line": 6, "scope": "check_token"}
    ]
    assert top["life"] == ["raised in v1 only", "removed in v2"]


def test_cli_history_reworded_names_the_newest_card(site: Path, book: ReleaseBook, capsys) -> None:
    ids = ids_by_message(book)
    new = ids["HiCache only supports MHA, MLA, and MSA models"]
    assert (
        cli.main(["lookup", "--history", str(site), "HiCache only supports MHA and MLA models"])
        == 0
    )
    text = capsys.readouterr().out.splitlines()
    assert text[2:5] == [
        "   v1: pkg/m.py:13 in HiCache.__init__",
        "   v2: pkg/m.py:8 in HiCache.__init__",
        "   v3: pkg/m.py:10 in HiCache.__init__",
    ]
    assert any(line.startswith("   newest release's card (v3): ") and new in line for line in text)


def test_cli_history_nothing_and_no_index(site: Path, tmp_path: Path, capsys) -> None:
    assert cli.main(["lookup", "--history", str(site), "ZeroDivisionError: division by zero"]) == 1
    assert "v1 to v3" in capsys.readouterr().out
    assert cli.main(["lookup", "--history", str(tmp_path), "x"]) == 2
    assert "no release index here (release-index.json missing)" in capsys.readouterr().err
