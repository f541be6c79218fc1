"""Writers for diffs and release sites: Markdown from ``templates/``, deterministic JSON.

Everything goes through :mod:`miner.render` (one Jinja2 environment, atomic
writes that leave unchanged files alone).

A release site (``miner history`` / ``miner release``) is one folder::

    index.md, errors/, api/errors/, manifest.json, sites.jsonl
                          the newest release, as ``miner mine`` writes it, plus a
                          card for every error id an older release raised
                          (retired or superseded), all with their history
    history.json          every error's history (one record per lineage)
    releases.json         the releases documented, oldest first (the state
                          ``miner release`` reads)
    releases.md           the same, with links to the diffs
    diffs/<old>..<new>.md / .json   the diff of each consecutive pair
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from miner import render
from miner.diff import KIND_ORDER, MIN_TEXT, THRESHOLD, ChangeKind, Diff
from miner.history import HistoryBook
from miner.model import SCHEMA_VERSION, CommitInfo
from miner.pipeline import MineResult

#: Version of ``releases.json`` and ``history.json``.
SITE_SCHEMA_VERSION = 1


def render_diff(
    diff: Diff,
    *,
    old_cards: str | None = None,
    new_cards: str | None = None,
    unchanged: bool = False,
) -> str:
    """The Markdown report of ``diff``, grouped by kind then module.

    ``old_cards`` / ``new_cards`` are link prefixes to the folders holding the
    cards of each version (``../errors/``); without them ids are shown unlinked.
    Unchanged errors are counted, and listed only with ``unchanged``.
    """
    groups: dict[str, list[tuple[str, list[Any]]]] = {}
    for kind in KIND_ORDER:
        listed = diff.of_kind(kind) if unchanged or kind != ChangeKind.UNCHANGED else []
        groups[kind.key] = [
            (module, list(changes))
            for module, changes in itertools.groupby(listed, key=lambda c: c.module)
        ]
    return (
        render.environment()
        .get_template("diff.md.j2")
        .render(
            old=diff.old,
            new=diff.new,
            kinds=KIND_ORDER,
            counts=diff.counts(),
            groups=groups,
            old_cards=old_cards,
            new_cards=new_cards,
            show_unchanged=unchanged,
            threshold=THRESHOLD,
            min_text=MIN_TEXT,
        )
    )


def diff_stem(diff: Diff) -> str:
    """File name stem of a diff between two releases: ``v0.5.18..v0.5.19``."""
    return f"{_safe(diff.old.rev)}..{_safe(diff.new.rev)}"


def _safe(rev: str) -> str:
    return rev.replace("/", "_")


def write_diff(
    diff: Diff,
    folder: Path,
    stem: str,
    *,
    old_cards: str | None = None,
    new_cards: str | None = None,
    unchanged: bool = False,
) -> tuple[Path, Path]:
    """Write ``<stem>.md`` and ``<stem>.json`` under ``folder``; returns both paths.

    Raises:
        render.OutputError: the folder cannot be written.
    """
    md, js = folder / f"{stem}.md", folder / f"{stem}.json"
    try:
        text = render_diff(diff, old_cards=old_cards, new_cards=new_cards, unchanged=unchanged)
        render.write_text(md, text)
        render.write_text(js, render.dumps(diff.to_json(unchanged=unchanged)))
    except OSError as exc:
        raise render.OutputError(
            f"{folder}: cannot write the diff ({exc.strerror or exc}); pass a writable --out"
        ) from None
    return md, js


def read_releases(out: Path) -> list[dict[str, Any]]:
    """The releases documented in the site at ``out`` (``releases.json``), oldest
    first; empty when there is none yet or it is unreadable."""
    try:
        data = json.loads((out / "releases.json").read_text(encoding="utf-8"))
        return list(data["releases"])
    except (OSError, ValueError, KeyError, TypeError):
        return []


def write_site(
    out: Path,
    book: HistoryBook,
    newest: MineResult,
    commits: Sequence[CommitInfo],
    diffs: Sequence[str],
) -> dict[str, int]:
    """Write the release site (see the module doc) for the newest release.

    ``commits`` are the releases' commits, oldest first (their ``rev`` is the
    tag); ``diffs`` the stems of the diffs written under ``out / "diffs"``.
    Returns :func:`miner.render.write_output`'s counts.

    Raises:
        render.OutputError: the folder cannot be written.
    """
    retired = [(r.error, r.commit) for r in book.retired]
    counts = render.write_output(newest, out, histories=book.histories, retired=retired)
    releases = [
        {"tag": c.rev, "sha": c.sha, "date": c.date, "diff": stem}
        for c, stem in zip(commits, [None, *diffs], strict=True)
    ]
    history = {
        "schema_version": SITE_SCHEMA_VERSION,
        "record_schema_version": SCHEMA_VERSION,
        "releases": list(book.releases),
        "errors": [h.to_json() for h in book.lineages()],
    }
    text = (
        render.environment()
        .get_template("releases.md.j2")
        .render(releases=releases, slug=newest.commit.slug, book=book)
    )
    try:
        render.write_text(out / "history.json", render.dumps(history))
        render.write_text(out / "releases.md", text)
        # written last: a run that stops early leaves the release undocumented
        render.write_text(
            out / "releases.json",
            render.dumps({"schema_version": SITE_SCHEMA_VERSION, "releases": releases}),
        )
    except OSError as exc:
        raise render.OutputError(
            f"{out}: cannot write ({exc}); check permissions and free space"
        ) from None
    return counts
