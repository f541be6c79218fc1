"""Writers for diffs and release sites: Markdown from ``templates/``, deterministic JSON.

Everything goes through :mod:`miner.publish.cards` (one Jinja2 environment, atomic
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
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from miner.errors import OutputError
from miner.files import write_text
from miner.model import SCHEMA_VERSION, Analysis, CommitInfo, Error, MineResult
from miner.publish.cards import environment, write_output
from miner.publish.records import dumps
from miner.releases.diff import KIND_ORDER, MIN_TEXT, THRESHOLD, ChangeKind, Diff
from miner.releases.history import HistoryBook


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
        environment()
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
        OutputError: the folder cannot be written.
    """
    md, js = folder / f"{stem}.md", folder / f"{stem}.json"
    try:
        text = render_diff(diff, old_cards=old_cards, new_cards=new_cards, unchanged=unchanged)
        write_text(md, text)
        write_text(js, dumps(diff.to_json(unchanged=unchanged)))
    except OSError as exc:
        raise OutputError(
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


def write_release_site(
    out: Path,
    book: HistoryBook,
    newest: MineResult,
    analyses: Mapping[str, Analysis],
    retired: Sequence[tuple[Error, CommitInfo, Analysis]],
    commits: Sequence[CommitInfo],
    diffs: Sequence[str],
    *,
    config: Mapping[str, Any] | None = None,
) -> dict[str, int]:
    """Write the release site (see the module doc) for the newest release.

    ``analyses`` are the newest release's; ``retired`` the errors it no longer
    raises, each with the last commit that raised it and its analysis;
    ``commits`` the releases' commits, oldest first (their ``rev`` is the
    tag); ``diffs`` the stems of the diffs written under ``out / "diffs"``.
    Returns :func:`miner.publish.cards.write_output`'s counts.

    Raises:
        OutputError: the folder cannot be written.
    """
    counts = write_output(
        newest, out, analyses, config=config, histories=book.histories, retired=retired
    )
    releases = [
        {"tag": c.rev, "sha": c.sha, "date": c.date, "diff": stem}
        for c, stem in zip(commits, [None, *diffs], strict=True)
    ]
    history = {
        "schema_version": SCHEMA_VERSION,
        "releases": list(book.releases),
        "errors": [h.to_json() for h in book.lineages()],
    }
    text = (
        environment()
        .get_template("releases.md.j2")
        .render(releases=releases, slug=newest.commit.slug, book=book)
    )
    try:
        write_text(out / "history.json", dumps(history))
        write_text(out / "releases.md", text)
        # written last: a run that stops early leaves the release undocumented
        write_text(
            out / "releases.json",
            dumps({"schema_version": SCHEMA_VERSION, "releases": releases}),
        )
    except OSError as exc:
        raise OutputError(
            f"{out}: cannot write ({exc.strerror or exc}); check permissions and free space"
        ) from None
    return counts


def remove_stale_diffs(folder: Path, stems: Sequence[str]) -> None:
    """Delete the diff reports under ``folder`` that are not of ``stems``."""
    keep = {f"{stem}{suffix}" for stem in stems for suffix in (".md", ".json")}
    if folder.is_dir():
        for path in folder.iterdir():
            if path.is_file() and path.suffix in (".md", ".json") and path.name not in keep:
                path.unlink()
