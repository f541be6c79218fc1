"""The site in a real browser (headless Chromium from file://): search from a
pasted message, traceback, fragment or path; land on the card; HTML in
messages stays text; the index table filters and sorts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from browser import Watched, artifacts, chromium
from sample_repo import HOST_POOL_TRACEBACK as TRACEBACK
from sample_repo import (
    RETIRED_MESSAGE,
    XSS_MESSAGE,
    create_releases,
    create_sample,
    documented_at,
    error_for,
    publish_site,
)

from miner.model import MineResult
from miner.pipeline import document_releases, mine_and_analyze
from miner.publish.bundles import load_bundle

MLX = "MlxAuxiliaryStateComponent requires MlxAuxiliaryStatePool, got <class 'NoneType'>"
HOST_POOL = "Host-pool retraction does not support Mamba models."
#: The grouped pages of the fixture's internal checks.
MLX_PAGE = "internal/sglang.srt.hardware_backend.mlx.kv_cache.auxiliary_state.html"
TAGS_PAGE = "internal/sglang.srt.utils.html_tags.html"


def href(built: tuple[MineResult, Path], tail: str, line: int) -> str:
    """The site-relative page of the error raised at ``...tail:line``."""
    return documented_at(built[1], error_for(built[0], tail, line), ".html")


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> tuple[MineResult, Path]:
    root = tmp_path_factory.mktemp("browser")
    repo = create_sample(root / "sglang")
    mined = mine_and_analyze(str(repo), "v1", slug="sgl-project/sglang", link_ref="v1")
    publish_site(mined, root / "site")
    return mined.result, root / "site"


@pytest.fixture(scope="module")
def browser() -> Any:
    with chromium() as launched:
        yield launched


@pytest.fixture
def page(browser, built) -> Any:
    watched = Watched(browser)
    watched.page.goto((built[1] / "index.html").as_uri())
    yield watched
    assert watched.errors == []
    watched.page.close()


def test_pasted_message_lands_on_its_card(page, built, tmp_path: Path) -> None:
    result, site = built
    expected = error_for(result, "registry.py", 8)
    shown = page.search(HOST_POOL)
    assert shown[0]["href"] == f"errors/{expected}.html"
    assert shown[0]["exception"] == "ValueError" and shown[0]["good"] == "good"
    assert page.page.text_content("#search-status") == "1 card matches."
    shots = artifacts(tmp_path)
    page.page.screenshot(path=str(shots / "search-results.png"), full_page=True)
    page.page.press("#q", "Enter")  # Enter opens the best match
    page.page.wait_for_url(f"**/errors/{expected}.html")
    assert page.page.text_content("h1") == HOST_POOL
    assert page.page.eval_on_selector_all(".highlight .hll", "els => els.length") == 1
    page.page.screenshot(path=str(shots / "card.png"), full_page=True)


def test_internal_check_lands_on_its_entry(page, built, tmp_path: Path) -> None:
    """An internal check has no card: the search opens its entry on the page
    of its module, the entry's anchor targeted."""
    result, _ = built
    expected = error_for(result, "auxiliary_state.py", 12)
    shown = page.search(MLX)
    assert shown[0]["href"] == f"{MLX_PAGE}#{expected}"
    assert shown[0]["exception"] == "TypeError" and shown[0]["score"] == "0.82"
    assert shown[0]["good"] == "good"
    page.page.press("#q", "Enter")
    page.page.wait_for_url(f"**/{MLX_PAGE}#{expected}")
    target = page.page.eval_on_selector(":target", "el => el.id")
    assert target == expected
    assert page.page.text_content(f'[id="{expected}"] h2 .anchor') == (
        "MlxAuxiliaryStateComponent requires MlxAuxiliaryStatePool, got…"
    )
    page.page.screenshot(path=str(artifacts(tmp_path) / "grouped-entry.png"), full_page=True)


@pytest.mark.parametrize(
    ("paste", "tail", "line"),
    [
        (TRACEBACK, "registry.py", 8),
        ("does not support Mamba models", "registry.py", 8),
        ("ERROR: Invalid tp_size -3: must be a positive integer", "server_args.py", 3),
        ("sglang/srt/server_args.py:5", "server_args.py", 5),
        ('File "/venv/site-packages/sglang/srt/server_args.py", line 6', "server_args.py", 6),
    ],
)
def test_search_inputs(page, built, paste: str, tail: str, line: int) -> None:
    shown = page.search(paste)
    assert shown[0]["href"] == href(built, tail, line)
    assert shown[0]["good"] == "good"


def test_nothing_matches_shows_candidates(page) -> None:
    shown = page.search("retraction is not supported for this model")
    assert page.page.text_content("#search-status") == (
        "No card matches this well; the closest candidates:"
    )
    assert shown and all(item["good"] == "candidate" for item in shown)
    assert "Host-pool retraction" in shown[0]["title"]


def test_html_in_a_message_stays_text(page, built, tmp_path: Path) -> None:
    result, _ = built
    expected = error_for(result, "html_tags.py", 3)
    scripts = page.page.eval_on_selector_all("script", "els => els.length")
    other = page.search("Cannot render <b>x</b> inside </script><script>alert(2)</script>")
    assert other[0]["title"] == (
        "Cannot render <b>{tag}</b> inside </script><script>alert(2)</script>"
    )
    assert page.page.eval_on_selector_all("#results b", "els => els.length") == 0
    shown = page.search(XSS_MESSAGE)
    assert shown[0]["href"] == f"{TAGS_PAGE}#{expected}"
    assert shown[0]["title"] == XSS_MESSAGE  # shown as the text it is
    assert page.page.eval_on_selector_all("script", "els => els.length") == scripts
    page.page.screenshot(path=str(artifacts(tmp_path) / "search-html-message.png"))
    page.page.click("#results li .title")
    page.page.wait_for_url(f"**/{TAGS_PAGE}#{expected}")
    assert page.page.text_content(f'[id="{expected}"] h2 .anchor') == XSS_MESSAGE
    assert page.page.eval_on_selector_all("script", "els => els.length") == 0
    assert page.dialogs == []


def test_search_from_a_card_page(page, built) -> None:
    result, _ = built
    expected = error_for(result, "registry.py", 8)
    page.page.goto((built[1] / "errors" / f"{expected}.html").as_uri())
    page.page.fill("header input[name=q]", "page_size must be a multiple of 16, got 7")
    page.page.press("header input[name=q]", "Enter")
    page.page.wait_for_selector("#results li")
    first = page.page.get_attribute("#results li .title", "href")
    assert first == f"errors/{error_for(result, 'server_args.py', 6)}.html"


def test_index_filters_and_sorting(page) -> None:
    p = page.page
    p.click("text=All 8 in one table")
    p.wait_for_url("**/all.html")
    assert p.text_content("#shown") == "8 of 8 shown"  # the user-facing errors
    p.select_option("#filter-exception", "ValueError")
    assert p.text_content("#shown") == "4 of 8 shown"
    p.fill("#filter-module", "mem_cache")
    assert p.text_content("#shown") == "2 of 8 shown"
    p.select_option("#filter-exception", "")
    p.fill("#filter-module", "")
    p.click("button[data-sort=exception]")
    first = p.eval_on_selector_all(
        "#errors tbody tr", "rows => rows.slice(0, 2).map(r => r.dataset.exception)"
    )
    assert first == ["AssertionError", "KeyError"]
    p.click("button[data-sort=exception]")
    assert p.get_attribute("button[data-sort=exception]", "aria-sort") == "descending"
    assert p.eval_on_selector("#errors tbody tr", "r => r.dataset.exception") == "ValueError"


def test_index_filter_by_audience(page) -> None:
    p = page.page
    p.goto(p.url.replace("index.html", "all.html"))
    p.select_option("#filter-audience", "unsupported")
    assert p.text_content("#shown") == "3 of 8 shown"
    p.fill("#filter-module", "mem_cache")
    assert p.text_content("#shown") == "2 of 8 shown"
    p.select_option("#filter-audience", "")
    p.fill("#filter-module", "")
    assert p.text_content("#shown") == "8 of 8 shown"
    assert p.is_hidden("#more")  # fewer rows than a page
    # module names wrap only after a dot, never inside an identifier
    assert (
        p.eval_on_selector("#errors td code.module", "el => getComputedStyle(el).overflowWrap")
        == "normal"
    )


def test_index_lists_modules_with_counts(page) -> None:
    p = page.page
    rows = p.eval_on_selector_all(
        "#modules tbody tr", "rows => rows.map(r => [r.dataset.module, r.cells[1].textContent])"
    )
    assert rows == [
        ["sglang.srt.hardware_backend.mlx.kv_cache.auxiliary_state", "1"],
        ["sglang.srt.mem_cache.registry", "2"],
        ["sglang.srt.server_args", "5"],
    ]
    assert (
        p.eval_on_selector("#modules td code.module", "el => getComputedStyle(el).overflowWrap")
        == "normal"
    )
    p.click("#modules a >> text=registry")
    p.wait_for_url("**/modules/sglang.srt.mem_cache.registry.html")
    assert p.eval_on_selector_all("table.module-errors tbody tr", "rows => rows.length") == 2


@pytest.mark.parametrize(
    "paste",
    [
        MLX,
        TRACEBACK,
        "does not support Mamba models",
        "ValueError: Invalid tp_size -1: must be a positive integer",
        "TypeError: Invalid tp_size -1: must be a positive integer",
        "AssertionError: page_size must be a multiple of 16, got 12",
        "Model 'a\nb' not found in /models/dir one",
        XSS_MESSAGE,
    ],
)
def test_browser_and_lookup_agree(page, built, paste: str) -> None:
    """The page's matcher is a port of miner.lookup: same card, same score."""
    from miner.lookup import LookupIndex

    python = LookupIndex.from_errors(built[0].errors).search(paste, limit=3)
    browser = page.page.evaluate(
        "text => window.raiseMinerSearch(text).filter(r => r.score >= 0.5).slice(0, 3).map("
        "r => [window.RAISE_MINER_SEARCH.docs[r.index][0], Math.round(r.score * 100) / 100])",
        paste,
    )
    assert browser == [[m.card.error_id, round(m.score, 2)] for m in python if m.good]


def test_every_search_result_opens_the_page_of_the_index(page, built) -> None:
    """The page search.js opens for each error is its ``card`` in api/index.json.gz."""

    published = load_bundle((built[1] / "api" / "index.json.gz").read_bytes())
    cards = {e["error_id"]: e["card"] for e in published["errors"]}
    shown = page.page.evaluate(
        "() => window.RAISE_MINER_SEARCH.docs.map((d, i) => [d[0], window.raiseMinerCard(i)])"
    )
    assert dict(shown) == cards and len(cards) == 11


@pytest.fixture(scope="module")
def releases_site(tmp_path_factory) -> Path:
    """The HTML site of three tiny releases (sample_repo.RELEASE_FILES)."""
    root = tmp_path_factory.mktemp("releases")
    repo = create_releases(root / "repo")
    out = root / "out"
    document_releases(
        str(repo), ["v1", "v2", "v3"], out, slug="sgl-project/sglang", cache_dir=root / "cache"
    )
    return out / "site"


@pytest.fixture
def release_page(browser, releases_site) -> Any:
    watched = Watched(browser)
    watched.page.goto((releases_site / "index.html").as_uri())
    yield watched
    assert watched.errors == [] and watched.dialogs == []
    watched.page.close()


def test_search_finds_a_retired_error_and_its_card(release_page, tmp_path: Path) -> None:
    p = release_page.page
    shown = release_page.search(f"ValueError: {RETIRED_MESSAGE}")
    assert shown[0]["good"] == "good" and shown[0]["title"] == RETIRED_MESSAGE
    assert p.text_content("#results li .release") == "retired in v2"
    p.press("#q", "Enter")
    p.wait_for_url(f"**/{shown[0]['href']}")
    assert p.text_content("h1") == RETIRED_MESSAGE  # the <b> stays text
    assert p.text_content("p.notice.retired") == (
        "Retired in v2. v3 does not raise this error; the last release that raised it is v1, "
        "and this card shows it as v1 raised it, for readers of older releases."
    )
    events = p.eval_on_selector_all("#history ol.history li", "els => els.map(e => e.textContent)")
    assert [e.split(":")[0] for e in events] == [
        "Added in v1 (the oldest release mined",
        "Removed in v2",
    ]
    p.screenshot(path=str(artifacts(tmp_path) / "retired-card.png"), full_page=True)


def test_history_links_the_cards_of_other_releases(release_page) -> None:
    p = release_page.page
    release_page.search("ValueError: --tp-size must be a positive integer")
    p.press("#q", "Enter")
    p.wait_for_load_state()
    assert p.text_content("h1") == "--tp-size must be a positive integer"
    verbs = p.eval_on_selector_all("#history .verb", "els => els.map(e => e.textContent)")
    assert verbs == ["Added in", "Reworded in", "Moved in"]
    p.click("#history a >> text=the card as v1 raised it")
    p.wait_for_load_state()
    assert p.text_content("h1") == "--tp-size must be positive"
    assert p.text_content("p.notice.superseded").startswith(
        "Superseded in v2. This is the error as v1 raised it; it changed in v2 and has a newer "
        "id since. The card of the current error:"
    )
    p.click("p.notice.superseded a")
    p.wait_for_load_state()
    assert p.text_content("h1") == "--tp-size must be a positive integer"


def test_diff_page_links_resolve(release_page, releases_site: Path, tmp_path: Path) -> None:
    p = release_page.page
    p.click("#releases a >> text=v1..v2")
    p.wait_for_url("**/diffs/v1..v2.html")
    assert p.text_content("h1") == "From v1 to v2"
    sections = p.eval_on_selector_all("section.diff-kind h2", "els => els.map(e => e.textContent)")
    assert sections == ["Removed errors (1)", "Changed errors (1)"]
    assert p.eval_on_selector_all(
        "#changed pre.before, #changed pre.after", "els => els.map(e => e.textContent)"
    ) == ["--tp-size must be positive", "--tp-size must be a positive integer"]
    p.screenshot(path=str(artifacts(tmp_path) / "diff-page.png"), full_page=True)
    hrefs = p.eval_on_selector_all(
        "main table.changes a:not(.permalink)", "els => els.map(a => a.href)"
    )
    assert len(hrefs) == 3  # removed; changed: old and new
    for href in hrefs:
        p.goto(href)
        assert p.text_content("h1").startswith("--"), href
    p.goto((releases_site / "diffs" / "v1..v2.html").as_uri())
    p.click("#removed a")
    p.wait_for_load_state()
    assert p.text_content("h1") == RETIRED_MESSAGE


def test_release_site_reader_path(release_page, releases_site: Path, tmp_path: Path) -> None:
    """What a reader of the published release site does, from file:// (issue
    37): a card of the newest release with its excerpt numbered and its JSON
    bundle there, a card only an older release raised, a History section, a
    diff page, and a search that finds a retired error."""
    p = release_page.page
    # a card of the newest release (v3): the excerpt's line numbers are drawn
    # from the real line numbers, the raise line marked
    release_page.search("ValueError: --tp-size must be a positive integer")
    p.press("#q", "Enter")
    p.wait_for_load_state()
    assert p.text_content("h1") == "--tp-size must be a positive integer"
    assert "Raised by 3 of the releases mined" in p.text_content("#history")
    # (each line's number is its span's position after the block's counter-reset:
    # a style sheet counter, drawn by ::before)
    ids = p.eval_on_selector_all(".excerpt code > span[id]", "els => els.map(e => e.id)")
    reset = p.eval_on_selector(".excerpt .numbered", "e => getComputedStyle(e).counterReset")
    first = int(reset.split()[1]) + 1
    assert ids == [f"L-{n}" for n in range(first, first + len(ids))] and len(ids) > 3
    before = p.eval_on_selector(
        ".excerpt code > span[id]", "e => getComputedStyle(e, '::before').content"
    )
    assert before == "counter(line)"
    assert p.eval_on_selector_all(".excerpt .hll", "els => els.length") == 1
    p.locator(".excerpt").screenshot(path=str(artifacts(tmp_path) / "excerpt.png"))
    # its JSON record: the bundle of its module, a file of the site
    bundle = p.get_attribute("a[href$='.json.gz']", "href")
    assert bundle is not None and (releases_site / "errors" / bundle).resolve().is_file()
    # the History section links the card of the id v1 had: a card of v1 only
    p.click("#history a >> text=the card as v1 raised it")
    p.wait_for_load_state()
    assert p.text_content("h1") == "--tp-size must be positive"
    assert p.text_content("p.notice.superseded").startswith("Superseded in v2.")
    # a diff page, and from it the card of the error v2 removed
    p.goto((releases_site / "index.html").as_uri())
    p.click("#releases a >> text=v1..v2")
    p.wait_for_url("**/diffs/v1..v2.html")
    assert p.text_content("h1") == "From v1 to v2"
    p.click("#removed a")
    p.wait_for_load_state()
    assert p.text_content("h1") == RETIRED_MESSAGE
    # the search finds the retired error
    p.goto((releases_site / "index.html").as_uri())
    shown = release_page.search(RETIRED_MESSAGE.replace("<b>here</b>", ""))
    assert shown[0]["title"] == RETIRED_MESSAGE
    assert p.text_content("#results li .release") == "retired in v2"
    p.screenshot(path=str(artifacts(tmp_path) / "release-reader.png"), full_page=True)
