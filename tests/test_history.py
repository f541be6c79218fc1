"""Histories over a fixture repository with four tagged releases."""

from __future__ import annotations

import json

import git
import jsonschema
import pytest
from conftest import add_commit
from sample_repo import documented_at, md_card

from miner import pipeline
from miner.errors import ReleaseError
from miner.publish import records, schemas
from miner.releases import history, versions

KEEP = 'def keep(x):\n    if x is None:\n        raise ValueError("x is required here")\n'
WORDY = 'def wordy(n):\n    raise RuntimeError("worker pool has crashed badly")\n'
WORDY2 = WORDY.replace("has crashed badly", "has crashed very badly")
BRIEF = 'def brief():\n    raise KeyError("short lived error message")\n'
BACK = 'def back():\n    raise OSError("comes back after a break")\n'

# tag -> files of pkg/m.py
RELEASES = {
    "v1.0": KEEP + WORDY + BACK,
    "v1.1": KEEP + WORDY + BRIEF,
    "v1.2": "\n\n" + KEEP + WORDY2 + BRIEF + BACK,
    "v1.10": KEEP + WORDY2 + BACK,
}


@pytest.fixture
def releases(make_repo, tmp_path):
    tags = list(RELEASES)
    root = make_repo({"pkg/m.py": RELEASES[tags[0]]}, tag=tags[0])
    for tag in tags[1:]:
        add_commit(root, {"pkg/m.py": RELEASES[tag]}, tag=tag)
    cache = tmp_path / "cache"
    return root, [(tag, pipeline.mine(str(root), tag, cache_dir=cache, reuse=True)) for tag in tags]


def by_message(results):
    """message -> error id, over every release."""
    ids = {}
    for _, result in results:
        for error in result.errors:
            ids[error.message] = error.error_id
    return ids


def test_select_tags_in_version_order(releases):
    root, _ = releases
    repo = git.Repo(root)
    assert versions.select_tags(repo) == ["v1.0", "v1.1", "v1.2", "v1.10"]
    assert versions.select_tags(repo, "v1.1*") == ["v1.1", "v1.10"]
    assert versions.select_tags(repo, start="v1.1", end="v1.2") == ["v1.1", "v1.2"]
    with pytest.raises(ReleaseError, match="v9: not a tag"):
        versions.select_tags(repo, start="v9")


def test_version_key():
    tags = ["v0.5.10", "nightly-2", "v0.5.9", "v0.5.9rc1", "nightly-10", "v0.4"]
    assert sorted(tags, key=versions.version_key) == [
        "v0.4",
        "v0.5.9rc1",
        "v0.5.9",
        "v0.5.10",
        "nightly-2",
        "nightly-10",
    ]


def test_histories(releases):
    _, results = releases
    book, diffs = history.build_history(results)
    ids = by_message(results)
    assert book.releases == ("v1.0", "v1.1", "v1.2", "v1.10")
    assert [(d.old.rev, d.new.rev) for d in diffs] == [
        ("v1.0", "v1.1"),
        ("v1.1", "v1.2"),
        ("v1.2", "v1.10"),
    ]

    keep = book.histories[ids["x is required here"]]
    assert (keep.first_seen, keep.last_seen, keep.present) == ("v1.0", "v1.10", True)
    assert keep.seen == ("v1.0", "v1.1", "v1.2", "v1.10")
    assert [(e.release, e.kind) for e in keep.events] == [("v1.0", "added")]

    old_id, new_id = ids["worker pool has crashed badly"], ids["worker pool has crashed very badly"]
    wordy = book.histories[old_id]
    assert wordy is book.histories[new_id]
    assert wordy.error_id == new_id and wordy.ids == (old_id, new_id)
    assert [(e.release, e.kind, e.aspects) for e in wordy.events] == [
        ("v1.0", "added", ()),
        ("v1.2", "changed", ("message",)),
    ]
    assert wordy.present and wordy.first_seen == "v1.0"

    brief = book.histories[ids["short lived error message"]]
    assert (brief.first_seen, brief.last_seen, brief.present) == ("v1.1", "v1.2", False)
    assert [(e.release, e.kind) for e in brief.events] == [
        ("v1.1", "added"),
        ("v1.10", "removed"),
    ]

    back = book.histories[ids["comes back after a break"]]
    assert back.seen == ("v1.0", "v1.2", "v1.10")
    assert [(e.release, e.kind) for e in back.events] == [
        ("v1.0", "added"),
        ("v1.1", "removed"),
        ("v1.2", "added"),
    ]
    assert back.ids == (ids["comes back after a break"],)

    retired = {(r.error.error_id, r.release) for r in book.retired}
    assert retired == {(ids["short lived error message"], "v1.2"), (old_id, "v1.1")}
    assert len(book.lineages()) == 4


def test_adding_a_release_twice_is_refused(releases):
    _, results = releases
    builder = history.HistoryBuilder()
    builder.add(*results[0])
    with pytest.raises(ReleaseError, match="v1.0: release added twice"):
        builder.add(*results[0])


def test_site_cards_carry_history(releases, tmp_path):
    root, results = releases
    ids = by_message(results)
    out = tmp_path / "site"
    run = pipeline.document_releases(str(root), list(RELEASES), out, cache_dir=tmp_path / "cache")
    assert run.releases == ("v1.0", "v1.1", "v1.2", "v1.10")
    assert run.diffs == ("v1.0..v1.1", "v1.1..v1.2", "v1.2..v1.10")
    assert (run.errors, run.retired) == (3, 2)

    # the fixture's errors are internal checks: entries on the module's page,
    # with the history a card would have
    assert not (out / "errors").exists()
    new_id = ids["worker pool has crashed very badly"]
    assert documented_at(out, new_id) == f"internal/pkg.m.md#{new_id}"
    card = md_card(out, new_id)
    assert (
        "Present since v1.0 (the oldest release mined); message changed in v1.2; "
        "still raised in v1.10.\n"
    ) in card
    old_id = ids["worker pool has crashed badly"]
    old_card = md_card(out, old_id)
    assert "> **Superseded:** this is the error as v1.1 raised it." in old_card
    assert f"[{new_id}](../internal/pkg.m.md#{new_id})" in old_card

    brief_id = ids["short lived error message"]
    brief = md_card(out, brief_id)
    assert (
        "> **Retired:** v1.10 no longer raises this error; the last release that raised it is v1.2."
        in brief
    )
    assert "Present since v1.1; removed in v1.10.\n" in brief
    back = md_card(out, ids["comes back after a break"])
    expected = "(the oldest release mined); removed in v1.1; raised again in v1.2; still raised"
    assert expected in back

    record = json.loads((out / "api" / "errors" / f"{brief_id}.json").read_text())
    jsonschema.Draft202012Validator(schemas.schema("error")).validate(record)
    assert record["history"]["present"] is False
    assert record["history"]["last_seen"] == "v1.2"
    assert record["commit"] == results[2][1].commit.sha

    index = (out / "index.md").read_text()
    retired_part = index.split("## Retired errors")[1]
    assert f"[{brief_id}](internal/pkg.m.md#{brief_id})" in retired_part
    assert old_id not in retired_part  # superseded, not retired

    saved = json.loads((out / "history.json").read_text())
    assert saved["releases"] == ["v1.0", "v1.1", "v1.2", "v1.10"]
    assert len(saved["errors"]) == 4
    releases_md = (out / "releases.md").read_text()
    assert "| `v1.2` |" in releases_md and "[v1.1..v1.2](diffs/v1.1..v1.2.md)" in releases_md
    diff_md = (out / "diffs" / "v1.1..v1.2.md").read_text()
    assert f"[{old_id}](../errors/{old_id}.md) | [{new_id}](../errors/{new_id}.md)" in diff_md

    # the same releases give the same bytes, and nothing is rewritten
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    again = pipeline.document_releases(str(root), list(RELEASES), out, cache_dir=tmp_path / "cache")
    assert again.counts["written"] == 0
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before


def test_history_round_trips_json(releases):
    _, results = releases
    book, _ = history.build_history(results)
    for h in book.lineages():
        assert type(h).from_json(json.loads(records.dumps(h.to_json()))) == h


def test_card_of_an_error_new_in_the_newest_release(releases, tmp_path):
    root, results = releases
    brief_id = by_message(results)["short lived error message"]
    out = tmp_path / "site"
    pipeline.document_releases(str(root), ["v1.0", "v1.1"], out, cache_dir=tmp_path / "cache")
    card = md_card(out, brief_id)
    assert "- History: New in v1.1.\n" in card
    keep_id = by_message(results)["x is required here"]
    keep = md_card(out, keep_id)
    assert "Present since v1.0 (the oldest release mined); still raised in v1.1.\n" in keep


def test_user_facing_cards_carry_history(make_repo, tmp_path):
    """A card of its own (a setting's error) carries the history, and the
    superseded card links to the current one, next to it."""
    old = 'def check(args):\n    raise ValueError("--tp-size must be positive")\n'
    root = make_repo({"pkg/server_args.py": old}, tag="v1")
    add_commit(
        root, {"pkg/server_args.py": old.replace("positive", "a positive integer")}, tag="v2"
    )
    out = tmp_path / "site"
    pipeline.document_releases(str(root), ["v1", "v2"], out, cache_dir=tmp_path / "cache")
    cards = {p.stem: p.read_text() for p in (out / "errors").glob("*.md")}
    assert len(cards) == 2  # the current card and the superseded one
    (new_id,) = [i for i, c in cards.items() if "a positive integer" in c.split("\n")[2]]
    (old_id,) = set(cards) - {new_id}
    assert "message changed in v2; still raised in v2.\n" in cards[new_id]
    assert f"Earlier ids of this error: [{old_id}]({old_id}.md)." in cards[new_id]
    assert f"the card of the current error is [{new_id}]({new_id}.md)." in cards[old_id]


def test_history_gathers_facts_for_the_newest_release_alone(releases, tmp_path, monkeypatch):
    """Older releases give their errors to the histories, diffs and retired
    cards; only the newest release's facts are published, so only its facts
    are gathered (and the same run again takes them from the analysis cache)."""
    root, _ = releases
    gathered: list[int] = []
    real = pipeline.collect

    def counting(sources, sites, jobs=1, progress=None, **known):  # type: ignore[no-untyped-def]
        gathered.append(len(sites := list(sites)))
        return real(sources, sites, jobs=jobs, progress=progress, **known)

    monkeypatch.setattr(pipeline, "collect", counting)
    cache = tmp_path / "cache"
    out = tmp_path / "site"
    run = pipeline.document_releases(str(root), list(RELEASES), out, cache_dir=cache)
    assert run.releases == ("v1.0", "v1.1", "v1.2", "v1.10")
    assert len(gathered) == 1
    pipeline.document_releases(str(root), list(RELEASES), tmp_path / "again", cache_dir=cache)
    assert len(gathered) == 1


def test_releases_are_linked_in_order_while_the_next_is_extracted(releases, tmp_path):
    """The links, names and history of a release are made on a thread while
    the next release is extracted: ``on_release`` still sees every release
    once, oldest first, with the same records as mining it alone."""
    root, mined = releases
    seen: list[tuple[str, tuple[str, ...]]] = []
    pipeline.document_releases(
        str(root),
        list(RELEASES),
        tmp_path / "site",
        cache_dir=tmp_path / "other-cache",
        on_release=lambda tag, result: seen.append((tag, tuple(e.error_id for e in result.errors))),
    )
    assert seen == [(tag, tuple(e.error_id for e in result.errors)) for tag, result in mined]


def test_a_failure_while_linking_a_release_stops_the_run(releases, tmp_path, monkeypatch):
    """An error raised on the linking thread reaches the caller as raised,
    and the output folder is not written."""
    root, _ = releases
    real = pipeline.link_helper_calls

    def failing(repo, sha, files, **kwargs):  # type: ignore[no-untyped-def]
        if sha == git.Repo(root).commit("v1.1").hexsha:
            raise OSError("disk gone while linking v1.1")
        return real(repo, sha, files, **kwargs)

    monkeypatch.setattr(pipeline, "link_helper_calls", failing)
    out = tmp_path / "site"
    with pytest.raises(OSError, match="disk gone while linking v1.1"):
        pipeline.document_releases(str(root), list(RELEASES), out, cache_dir=tmp_path / "c2")
    assert not (out / "manifest.json").exists()
