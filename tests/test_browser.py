"""The site in a real browser (headless Chromium from file://): search from a
pasted message, traceback, fragment or path; land on the card; HTML in
messages stays text; the index table filters and sorts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from browser import Watched, artifacts, chromium
from sample_repo import HOST_POOL_TRACEBACK as TRACEBACK
from sample_repo import XSS_MESSAGE, create_sample, error_for, publish_site

from miner.model import MineResult
from miner.pipeline import mine_and_analyze

MLX = "MlxAuxiliaryStateComponent requires MlxAuxiliaryStatePool, got <class 'NoneType'>"


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
    expected = error_for(result, "auxiliary_state.py", 12)
    shown = page.search(MLX)
    assert shown[0]["href"] == f"errors/{expected}.html"
    assert shown[0]["exception"] == "TypeError" and shown[0]["score"] == "0.82"
    assert shown[0]["good"] == "good"
    assert page.page.text_content("#search-status") == "1 card matches."
    shots = artifacts(tmp_path)
    page.page.screenshot(path=str(shots / "search-results.png"), full_page=True)
    page.page.press("#q", "Enter")  # Enter opens the best match
    page.page.wait_for_url(f"**/errors/{expected}.html")
    assert page.page.text_content("h1") == (
        "MlxAuxiliaryStateComponent requires MlxAuxiliaryStatePool, got {type(pool)}"
    )
    assert page.page.eval_on_selector_all(".highlight .hll", "els => els.length") == 4
    page.page.screenshot(path=str(shots / "card.png"), full_page=True)


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
    assert shown[0]["href"] == f"errors/{error_for(built[0], tail, line)}.html"
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
    assert shown[0]["href"] == f"errors/{expected}.html"
    assert shown[0]["title"] == XSS_MESSAGE  # shown as the text it is
    assert page.page.eval_on_selector_all("script", "els => els.length") == scripts
    page.page.screenshot(path=str(artifacts(tmp_path) / "search-html-message.png"))
    page.page.click("#results li .title")
    page.page.wait_for_url(f"**/errors/{expected}.html")
    assert page.page.text_content("h1") == XSS_MESSAGE
    assert page.page.eval_on_selector_all("script", "els => els.length") == 0
    assert page.dialogs == []


def test_search_from_a_card_page(page, built) -> None:
    result, _ = built
    expected = error_for(result, "auxiliary_state.py", 12)
    page.page.goto((built[1] / "errors" / f"{expected}.html").as_uri())
    page.page.fill("header input[name=q]", "page_size must be a multiple of 16, got 7")
    page.page.press("header input[name=q]", "Enter")
    page.page.wait_for_selector("#results li")
    first = page.page.get_attribute("#results li .title", "href")
    assert first == f"errors/{error_for(result, 'server_args.py', 6)}.html"


def test_index_filters_and_sorting(page) -> None:
    p = page.page
    assert p.text_content("#shown") == "11 of 11 shown"
    p.select_option("#filter-exception", "ValueError")
    assert p.text_content("#shown") == "5 of 11 shown"
    p.fill("#filter-module", "mem_cache")
    assert p.text_content("#shown") == "2 of 11 shown"
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
        "text => window.raiseMinerSearch(text).slice(0, 3).map("
        "r => [window.RAISE_MINER_SEARCH.docs[r.index][0], Math.round(r.score * 100) / 100])",
        paste,
    )
    assert browser == [[m.card.error_id, round(m.score, 2)] for m in python if m.good]
