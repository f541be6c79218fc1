"""Headless Chromium for the site tests: Debian's ``chromium`` driven by
Playwright for Python (never Playwright's own browser download)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = os.environ.get("RAISE_MINER_CHROMIUM", "/usr/bin/chromium")
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def artifacts(fallback: Path) -> Path:
    """Where screenshots go: ``$RAISE_MINER_ARTIFACTS`` (``make test`` sets
    ``.test-artifacts``), else ``fallback``."""
    folder = Path(os.environ.get("RAISE_MINER_ARTIFACTS") or fallback)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@contextmanager
def chromium() -> Iterator[Any]:
    """A launched headless browser, or the test is skipped saying what is missing."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("Playwright for Python is not installed (`make venv` installs it)")
    if not os.access(CHROMIUM, os.X_OK):
        pytest.skip(
            f"no Chromium at {CHROMIUM}: `make browser` installs Debian's chromium "
            "(needs root), or set RAISE_MINER_CHROMIUM"
        )
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            yield browser
        finally:
            browser.close()


class Watched:
    """A page whose dialogs (``alert``) and script errors are recorded."""

    def __init__(self, browser: Any) -> None:
        self.page = browser.new_page(viewport={"width": 1200, "height": 900})
        self.dialogs: list[str] = []
        self.errors: list[str] = []
        self.page.on("dialog", self._dialog)
        self.page.on("pageerror", lambda exc: self.errors.append(str(exc)))

    def _dialog(self, dialog: Any) -> None:
        self.dialogs.append(dialog.message)
        dialog.dismiss()

    def search(self, text: str) -> list[dict[str, str]]:
        """Type ``text`` into the index page's search box; the results shown."""
        self.page.fill("#q", text)
        self.page.wait_for_function(
            "text => document.getElementById('results').dataset.query === text",
            arg=text,
            timeout=30_000,
        )
        return self.page.eval_on_selector_all(
            "#results li",
            """items => items.map(li => ({
                score: li.querySelector('.score').textContent,
                exception: li.querySelector('.exc').textContent,
                title: li.querySelector('.title').textContent,
                href: li.querySelector('.title').getAttribute('href'),
                where: li.querySelector('.where').textContent,
                good: li.className,
            }))""",
        )
