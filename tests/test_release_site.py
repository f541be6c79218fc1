"""The HTML site of a release history (``miner history`` / ``miner release``):
every error of every release has a page, each card a History section, diff
pages link the cards of both releases, the search data holds retired errors."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest
from conftest import add_commit
from sample_repo import RELEASE_FILES, RETIRED_MESSAGE, add_releases

from miner import pipeline
from miner.publish.bundles import bundle_record, load_bundle, read_record, site_ids
from miner.publish.cards import card_ref

LINK = re.compile(r'(?:href|src)="([^"]+)"')


@pytest.fixture
def documented(make_repo, tmp_path):
    root = make_repo({"pkg/server_args.py": RELEASE_FILES["v1"]}, tag="v1")
    tags = add_releases(root, add_commit)
    out = tmp_path / "site"
    run = pipeline.document_releases(
        str(root), tags, out, slug="sgl-project/sglang", cache_dir=tmp_path / "cache"
    )
    history = json.loads((out / "history.json").read_text())
    return run, out, history


def site_record(site: Path, error_id: str) -> dict:
    """The record of ``error_id`` in the site's bundle of its module
    (``api/ids.json`` names the module)."""
    return read_record(site, error_id, site_ids(site)[error_id])[0]


def lineage(history: dict, site: Path, text: str) -> dict:
    """The history record (of ``history.json``) of the error one of whose
    records in ``site`` has a message holding ``text``."""
    for record in history["errors"]:
        for error_id in record["ids"]:
            if text in (site_record(site, error_id)["message"] or ""):
                return record
    raise AssertionError(text)


def test_every_error_of_every_release_has_a_page(documented) -> None:
    run, out, history = documented
    site = out / "site"
    assert run.releases == ("v1", "v2", "v3") and run.site["written"] > 0
    every = sorted({i for record in history["errors"] for i in record["ids"]})
    assert len(every) == 4  # tp-size (two wordings), think-end-token, the assert
    for error_id in every:
        record = site_record(site, error_id)
        assert record["history"] is not None
        if record["audience"] in ("user-setting", "user-input", "dependency", "unsupported"):
            assert (site / "errors" / f"{error_id}.html").is_file(), error_id
        else:
            assert (
                f'id="{error_id}"'
                in (site / record["audience"] / "pkg.server_args.html").read_text()
            )
    # the root of the release folder leads to the HTML site
    assert "url=site/index.html" in (out / "index.html").read_text()


def test_history_sections_and_notices(documented) -> None:
    run, out, history = documented
    site = out / "site"
    tp = lineage(history, site, "--tp-size must be a positive integer")
    old_id, new_id = tp["ids"]
    retired = lineage(history, site, "--think-end-token")
    (retired_id,) = retired["ids"]

    current = (site / "errors" / f"{new_id}.html").read_text()
    section = current.split('<section id="history">')[1].split("</section>")[0]
    assert "<p>Raised by 3 of the releases mined, v1 to v3.</p>" in section
    assert (
        '<li data-kind="Added in"><span class="verb">Added in</span> <code>v1</code> (the oldest '
        f'release mined: it may be older): <a href="{old_id}.html">the card as v1 raised it</a>'
    ) in section
    assert (
        '<span class="verb">Reworded in</span> <code>v2</code>: message reworded: this card'
    ) in section
    assert (
        '<span class="verb">Moved in</span> <code>v3</code>: moved to another scope: this card'
        in section
    )

    old = (site / "errors" / f"{old_id}.html").read_text()
    assert (
        '<p class="notice superseded"><strong>Superseded in v2.</strong> This is the error as v1 '
        "raised it; it changed in v2 and has a newer id since."
    ) in old
    section = old.split('<section id="history">')[1].split("</section>")[0]
    assert "<p>Superseded in v2: the error changed and has a newer id since.</p>" in section
    assert (
        f'The card of the current error: <a href="{new_id}.html">'
        "--tp-size must be a positive integer</a>"
    ) in old
    assert '<h1 id="title">--tp-size must be positive</h1>' in old

    gone = (site / "errors" / f"{retired_id}.html").read_text()
    assert (
        '<p class="notice retired"><strong>Retired in v2.</strong> v3 does not raise this error; '
        "the last release that raised it is v1, and this card shows it as v1 raised it"
    ) in gone
    assert (
        "<p>Retired in v2: v3 does not raise it; the last release that raised it is v1.</p>"
    ) in gone
    assert '<span class="verb">Removed in</span> <code>v2</code>: this card' in gone
    assert "&lt;b&gt;here&lt;/b&gt;" in gone and "<b>here</b>" not in gone
    # rendered from the last release that raised it: its source, its commit
    assert "https://github.com/sgl-project/sglang/blob/v1/pkg/server_args.py#L5" in gone

    # the search data has the retired error, marked, after the current ones
    data = (site / "search-data.js").read_text().split(" = ", 1)[1].rstrip(";\n")
    docs = {d[0]: d for d in json.loads(data)["docs"]}
    assert docs[retired_id][9] == "retired in v2" and docs[retired_id][7] == -1
    assert docs[old_id][9] == "superseded in v2"
    assert docs[new_id][9] == ""
    assert RETIRED_MESSAGE.split(" <b>")[0] in docs[retired_id][2]


def test_diff_pages_link_the_cards_of_both_releases(documented) -> None:
    run, out, history = documented
    site = out / "site"
    old_id, new_id = lineage(history, site, "--tp-size must be a positive integer")["ids"]
    (retired_id,) = lineage(history, site, "--think-end-token")["ids"]
    page = (site / "diffs" / "v1..v2.html").read_text()
    assert "<h1>From v1 to v2</h1>" in page
    assert "1 removed, 1 changed, 1 unchanged: errors paired one to one" in page
    assert f'<a href="../errors/{retired_id}.html">--think-end-token must encode' in page
    assert f'<a href="../errors/{old_id}.html">--tp-size must be positive</a>' in page
    assert f'<a href="../errors/{new_id}.html">--tp-size must be a positive integer</a>' in page
    assert (
        '<pre class="before">--tp-size must be positive</pre>'
        '<pre class="after">--tp-size must be a positive integer</pre>'
    ) in page
    # each side's place links its source at its release
    assert (
        '<a class="permalink" href="https://github.com/sgl-project/sglang/blob/v1/pkg/'
        'server_args.py#L5">pkg/server_args.py:5</a> in <code>check</code> (v1)'
    ) in page
    moved = (site / "diffs" / "v2..v3.html").read_text()
    assert '<pre class="before">check</pre><pre class="after">validate</pre>' in moved
    index = (site / "index.html").read_text()
    assert '<a href="diffs/v1..v2.html">v1..v2</a>' in index
    assert "2 error ids of older releases are not raised by v3: 1 retired" in index


def test_every_link_of_the_release_site_resolves(documented) -> None:
    _, out, _ = documented
    site = out / "site"
    checked = 0
    for page in site.rglob("*.html"):
        text = page.read_text()
        for target in LINK.findall(text):
            target = html.unescape(target)
            if target.startswith("https://github.com/sgl-project/sglang/"):
                continue
            assert not target.startswith(("/", "http:", "https:", "file:")), (page, target)
            local, _, anchor = target.split("?")[0].partition("#")
            resolved = page.parent.joinpath(local).resolve() if local else page
            assert resolved.is_file(), (page, target)
            if anchor:
                assert f'id="{anchor}"' in resolved.read_text(), (page, target)
            checked += 1
    assert checked > 40


def test_the_release_site_is_rewritten_only_when_changed(documented, tmp_path) -> None:
    run, out, _ = documented
    before = {p: p.read_bytes() for p in (out / "site").rglob("*") if p.is_file()}
    root = next(tmp_path.glob("repo*"))
    again = pipeline.document_releases(
        str(root), list(run.releases), out, slug="sgl-project/sglang", cache_dir=tmp_path / "cache"
    )
    assert again.site["written"] == 0 and again.site["removed"] == 0
    assert {p: p.read_bytes() for p in (out / "site").rglob("*") if p.is_file()} == before


def test_miner_site_renders_a_release_folder_again_the_same(documented, tmp_path) -> None:
    """``miner site`` over a release folder reads its histories and the
    records of older releases back: the same bytes as ``miner history``."""
    from miner import cli

    _, out, _ = documented
    again = tmp_path / "again"
    assert cli.main(["site", "--out", str(out), "--dest", str(again)]) == 0

    def tree(root: Path) -> dict[str, bytes]:
        return {
            p.relative_to(root).as_posix(): p.read_bytes()
            for p in root.rglob("*")
            if p.is_file() and p.name != "manifest.json"
        }

    assert tree(again) == tree(out / "site")


#: Raised by v0.5.16 at python/sglang/srt/constrained/reasoner_grammar_backend.py:246
#: and by no later release (issue 13, paste kind 5; ``git -C $RAISE_MINER_CORPUS grep -n
#: "must encode to exactly one token" v0.5.16`` shows the message's second line, 248).
THINK_END = (
    "think_end_token '{reasoning_parser.detector.think_end_token}' must encode to exactly "
    "one token for constrained reasoning."
)


@pytest.mark.integration
def test_release_site_of_sglang_releases(history_site) -> None:
    """v0.5.16 to v0.5.19 of the release repository (the session's release
    site): every id of any release has its page, a retired error its card
    with its history and its search row."""
    out, run = history_site
    site = out / "site"
    history = json.loads((out / "history.json").read_text())
    ids = {i for record in history["errors"] for i in record["ids"]}
    assert len(ids) == run.errors + run.retired
    records = {
        error_id: bundle_record(bundle, error_id)
        for path in (site / "api" / "modules").glob("*.json.gz")
        for bundle in [load_bundle(path.read_bytes())]
        for error_id in bundle["errors"]
    }
    assert set(records) == ids
    pages: dict[str, str] = {}
    for error_id, record in records.items():
        ref = card_ref(error_id, record["module"], record["audience"], ".html")
        page, _, anchor = ref.partition("#")
        if page not in pages:
            pages[page] = (site / page).read_text()
        assert not anchor or f'id="{anchor}"' in pages[page], ref
    (think,) = [i for i, r in records.items() if r["message"] == THINK_END]
    record = records[think]
    assert record["sites"][0]["path"] == "python/sglang/srt/constrained/reasoner_grammar_backend.py"
    assert record["sites"][0]["line"] == 246
    assert (record["history"]["seen"], record["history"]["present"]) == (["v0.5.16"], False)
    card = (site / "errors" / f"{think}.html").read_text()
    assert (
        '<p class="notice retired"><strong>Retired in v0.5.17.</strong> v0.5.19 does not raise '
        "this error; the last release that raised it is v0.5.16, and this card shows it as "
        "v0.5.16 raised it"
    ) in card
    assert '<span class="verb">Removed in</span> <code>v0.5.17</code>: this card' in card
    assert (
        "https://github.com/sgl-project/sglang/blob/v0.5.16/python/sglang/srt/constrained/"
        "reasoner_grammar_backend.py#L246"
    ) in card
    diff_page = (site / "diffs" / "v0.5.16..v0.5.17.html").read_text()
    assert f'<a href="../errors/{think}.html">think_end_token' in diff_page
    data = (site / "search-data.js").read_text().split(" = ", 1)[1].rstrip(";\n")
    docs = {d[0]: d for d in json.loads(data)["docs"]}
    assert docs[think][9] == "retired in v0.5.17"
    assert len(docs) == len(ids)


def test_history_view_of_an_id_superseded_then_retired() -> None:
    """An error reworded in v2 and removed in v3: its v1 id is superseded in
    v2, and the sentence says the error was retired later."""
    from miner.model import History, HistoryEvent
    from miner.publish.html import history_view, retirement_label

    history = History(
        error_id="b" * 16,
        ids=("a" * 16, "b" * 16),
        first_seen="v1",
        last_seen="v2",
        newest="v3",
        oldest="v1",
        seen=("v1", "v2"),
        events=(
            HistoryEvent("v1", "added", (), "a" * 16),
            HistoryEvent("v2", "changed", ("message",), "b" * 16),
            HistoryEvent("v3", "removed", (), "b" * 16),
        ),
    )
    old = history_view("a" * 16, history)
    assert old["status"] == (
        "Superseded in v2: the error changed and has a newer id since; "
        "that error was retired in v3."
    )
    assert (old["kind"], old["since"], old["later"]) == ("superseded", "v2", "retired in v3")
    assert [(e["verb"], e["release"], e["detail"]) for e in old["events"]] == [
        ("Added in", "v1", " (the oldest release mined: it may be older)"),
        ("Reworded in", "v2", ": message reworded"),
        ("Removed in", "v3", ""),
    ]
    assert retirement_label("a" * 16, history) == "superseded in v2"
    assert retirement_label("b" * 16, history) == "retired in v3"
    assert history_view("b" * 16, history)["status"] == (
        "Retired in v3: v3 does not raise it; the last release that raised it is v2."
    )
