"""The site in a real browser (headless Chromium from file://): search from a
pasted message, traceback, fragment or path; land on the card; HTML in
messages stays text; the index table filters and sorts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from browser import Watched, artifacts, chromium
from sample_repo import HOST_POOL_TRACEBACK as TRACEBACK
from sample_repo import XSS_MESSAGE, create_sample, documented_at, error_for, publish_site

from miner.model import MineResult
from miner.pipeline import mine_and_analyze

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
    internal = 'section.grouped[data-audience="internal"]'
    assert p.is_visible(internal)
    p.select_option("#filter-audience", "unsupported")
    assert p.text_content("#shown") == "3 of 8 shown"
    assert p.is_hidden(internal)
    p.select_option("#filter-audience", "internal")  # no cards: its module pages
    assert p.text_content("#shown") == "0 of 8 shown"
    assert p.is_visible(internal)
    p.fill("#filter-module", "html_tags")
    shown = p.eval_on_selector_all(
        f"{internal} li", "items => items.filter(li => !li.hidden).map(li => li.dataset.module)"
    )
    assert shown == ["sglang.srt.utils.html_tags"]
    p.select_option("#filter-audience", "")
    p.fill("#filter-module", "")
    assert p.text_content("#shown") == "8 of 8 shown"
    # module names wrap only after a dot, never inside an identifier
    assert (
        p.eval_on_selector("#errors td code.module", "el => getComputedStyle(el).overflowWrap")
        == "normal"
    )


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
    """The page search.js opens for each error is its ``card`` in api/index.json."""
    import json

    published = json.loads((built[1] / "api" / "index.json").read_text())
    cards = {e["error_id"]: e["card"] for e in published["errors"]}
    shown = page.page.evaluate(
        "() => window.RAISE_MINER_SEARCH.docs.map((d, i) => [d[0], window.raiseMinerCard(i)])"
    )
    assert dict(shown) == cards and len(cards) == 11
