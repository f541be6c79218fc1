"""Writers for diffs and release sites: Markdown from ``templates/``, deterministic JSON.

Everything goes through :mod:`miner.publish.cards` (one Jinja2 environment, atomic
writes that leave unchanged files alone).

A release site (``miner history`` / ``miner release``) is one folder::

    index.md, errors/, api/errors/, manifest.json, sites.jsonl
                          the newest release, as ``miner mine`` writes it, plus a
                          card for every error id an older release raised
                          (retired or superseded), all with their history
    history.json          every error's history (one record per lineage)
    release-index.json    every release's errors and the line of each site
                          (:mod:`miner.publish.release_index`: lookup --history)
    releases.json         the releases documented, oldest first (the state
                          ``miner release`` reads)
    releases.md           the same, with links to the diffs
    diffs/<old>..<new>.md / .json   the diff of each consecutive pair
    index.html            a link (and redirect) to the HTML site
    site/                 the HTML site of every release
                          (:mod:`miner.publish.html`, :class:`~miner.publish.html.ReleaseView`)

The folder is published as a whole (:mod:`miner.publish.output`): a run that
stops early leaves the previous release site as it was.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from miner.errors import OutputError
from miner.files import write_text
from miner.model import SCHEMA_VERSION, Analysis, CommitInfo, Error, MineResult
from miner.publish.cards import environment, write_records
from miner.publish.output import Folder
from miner.publish.records import dumps
from miner.publish.release_index import RELEASE_INDEX, index_text
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
    return revs_stem(diff.old.rev, diff.new.rev)


def revs_stem(old: str, new: str) -> str:
    """:func:`diff_stem` of the revisions ``old`` and ``new`` as the user
    wrote them (known before they are mined)."""
    return f"{_safe(old)}..{_safe(new)}"


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
        for rel, text in diff_files(
            diff, stem, old_cards=old_cards, new_cards=new_cards, unchanged=unchanged, folder=""
        ).items():
            write_text(folder / rel, text)
    except OSError as exc:
        raise OutputError(
            f"{folder}: cannot write the diff ({exc.strerror or exc}); pass a writable --out"
        ) from None
    return md, js


def diff_files(
    diff: Diff,
    stem: str,
    *,
    old_cards: str | None = None,
    new_cards: str | None = None,
    unchanged: bool = False,
    folder: str = "diffs/",
) -> dict[str, str]:
    """The report and JSON of ``diff``: ``{folder}<stem>.md`` and ``.json`` -> text."""
    text = render_diff(diff, old_cards=old_cards, new_cards=new_cards, unchanged=unchanged)
    return {
        f"{folder}{stem}.md": text,
        f"{folder}{stem}.json": dumps(diff.to_json(unchanged=unchanged)),
    }


def read_releases(out: Path) -> list[dict[str, Any]]:
    """The releases documented in the site at ``out`` (``releases.json``), oldest
    first; empty when there is none yet or it is unreadable."""
    try:
        data = json.loads((out / "releases.json").read_text(encoding="utf-8"))
        return list(data["releases"])
    except (OSError, ValueError, KeyError, TypeError):
        return []


def release_rows(commits: Sequence[CommitInfo], stems: Sequence[str]) -> list[dict[str, Any]]:
    """``releases.json``'s rows: each release's ``tag``, ``sha``, ``date`` and
    ``diff`` (the stem of the diff from the previous release; None for the
    first), from the releases' commits and the diff stems, oldest first."""
    return [
        {"tag": c.rev, "sha": c.sha, "date": c.date, "diff": stem}
        for c, stem in zip(commits, [None, *stems], strict=True)
    ]


#: ``index.html`` at the root of a release site: GitHub Pages (and a reader
#: opening the folder) lands on the HTML site in ``site/``.
ROOT_INDEX = """\
<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="refresh" content="0; url=site/index.html">
<title>Error cards</title>
</head>
<body>
<p>The error cards are at <a href="site/index.html">site/index.html</a>;
the Markdown and JSON at <a href="index.md">index.md</a>, <a href="releases.md">releases.md</a>.</p>
</body>
</html>
"""


@dataclass(frozen=True, slots=True)
class ReleaseDiff:
    """One consecutive pair's diff as the release site publishes it, rendered
    when it is found so that the two releases' records need not be kept."""

    files: Mapping[str, str]
    """``diffs/<stem>.md`` and ``.json`` -> text (cards linked in ``../errors/``)."""
    data: Mapping[str, Any]
    """:meth:`Diff.to_json` (unchanged pairs counted, not listed), for the HTML site."""


def release_diff(change: Diff, stem: str) -> ReleaseDiff:
    """``change`` rendered for the release site (:class:`ReleaseDiff`)."""
    return ReleaseDiff(
        diff_files(change, stem, old_cards="../errors/", new_cards="../errors/"),
        change.to_json(),
    )


def write_release_site(
    folder: Folder,
    book: HistoryBook,
    newest: MineResult,
    analyses: Mapping[str, Analysis],
    retired: Sequence[tuple[Error, CommitInfo, Analysis]],
    commits: Sequence[CommitInfo],
    diffs: Mapping[str, ReleaseDiff],
    *,
    config: Mapping[str, Any] | None = None,
    release_index: Mapping[str, Any] | None = None,
    jobs: int = 1,
) -> dict[str, int]:
    """Write the release site (see the module doc) for the newest release into
    ``folder`` (a publication's staging: :mod:`miner.publish.output`); ``jobs``
    processes render the cards (:func:`miner.publish.cards.output_files`).

    ``analyses`` are the newest release's; ``retired`` the errors it no longer
    raises, each with the last commit that raised it and its analysis;
    ``commits`` the releases' commits, oldest first (their ``rev`` is the
    tag); ``diffs`` each consecutive pair's diff (:func:`release_diff`) by
    stem, oldest first;
    ``release_index`` the lookup index of every release
    (:mod:`miner.publish.release_index`), written as ``release-index.json``.
    Diffs of an earlier run that are not among them are removed with every
    other file it wrote. Returns the counts of
    :func:`miner.publish.cards.write_records`.

    Raises:
        OutputError: the folder cannot be written.
    """
    releases = release_rows(commits, list(diffs))
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
    extra = {
        "history.json": dumps(history),
        "releases.md": text,
        "releases.json": dumps({"schema_version": SCHEMA_VERSION, "releases": releases}),
        "index.html": ROOT_INDEX,
    }
    if release_index is not None:
        extra[RELEASE_INDEX] = index_text(release_index)
    for change in diffs.values():
        extra.update(change.files)
    return write_records(
        folder,
        newest,
        analyses,
        config=config,
        histories=book.histories,
        retired=retired,
        extra=extra,
        jobs=jobs,
    )
