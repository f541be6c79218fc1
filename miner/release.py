"""Mine releases in order into a release site: ``miner history`` and ``miner release``.

Each release is mined through the commit store (:mod:`miner.store`), so a
release mined before (by ``mine``, ``diff``, ``history`` or ``release``) costs
a read, not a mining run. Histories (:mod:`miner.history`) and the site
(:mod:`miner.report`) are recomputed from the stored results each time: they
are cheap, and the same releases always give the same bytes.

``release`` is the incremental entry point for a scheduled job: it reads the
releases the site documents (``releases.json``), and does nothing when the
newest tag is one of them; otherwise it documents every tag from the first
documented one (or ``since``) to the newest.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import git

from miner import source, store
from miner.history import HistoryBuilder, select_tags
from miner.model import CommitInfo
from miner.pipeline import MineResult
from miner.report import diff_stem, read_releases, write_diff, write_site

log = logging.getLogger("miner")


@dataclass(frozen=True, slots=True)
class SiteRun:
    """What a history or release run did."""

    releases: tuple[str, ...]
    """The releases documented, oldest first."""
    diffs: tuple[str, ...]
    """Stems of the diffs under ``diffs/`` (``v0.5.18..v0.5.19``)."""
    counts: dict[str, int]
    """Files ``written``, ``unchanged`` and ``removed`` (cards and records)."""
    errors: int
    """Errors the newest release raises."""
    retired: int
    """Error ids of older releases that the newest does not raise."""


def run_history(
    repo_arg: str,
    tags: Sequence[str],
    out: Path,
    *,
    slug: str | None = None,
    cache_dir: Path | None = None,
    partial: bool = True,
    on_release: Callable[[str, MineResult], None] | None = None,
) -> SiteRun:
    """Mine ``tags`` in the order given and write the release site under ``out``.

    Raises:
        source.SourceError: the repository or a tag cannot be used.
        render.OutputError: ``out`` cannot be written.
        ValueError: ``tags`` is empty.
    """
    if not tags:
        raise ValueError("no releases to document")
    builder = HistoryBuilder()
    commits: list[CommitInfo] = []
    stems: list[str] = []
    newest: MineResult | None = None
    for tag in tags:
        result = store.mine_commit(
            repo_arg, tag, slug=slug, link_ref=tag, cache_dir=cache_dir, partial=partial
        )
        if on_release is not None:
            on_release(tag, result)
        changes = builder.add(tag, result)
        if changes is not None:
            stem = diff_stem(changes)
            write_diff(changes, out / "diffs", stem, old_cards="../errors/", new_cards="../errors/")
            stems.append(stem)
        commits.append(result.commit)
        newest = result
    assert newest is not None
    _remove_stale_diffs(out / "diffs", stems)
    book = builder.finish()
    counts = write_site(out, book, newest, commits, stems)
    return SiteRun(
        releases=book.releases,
        diffs=tuple(stems),
        counts=counts,
        errors=len(newest.errors),
        retired=len(book.retired),
    )


def _remove_stale_diffs(folder: Path, stems: Sequence[str]) -> None:
    keep = {f"{stem}{suffix}" for stem in stems for suffix in (".md", ".json")}
    if folder.is_dir():
        for path in folder.iterdir():
            if path.is_file() and path.suffix in (".md", ".json") and path.name not in keep:
                path.unlink()


def release_tags(
    repo: git.Repo, out: Path, pattern: str | None, since: str | None
) -> tuple[list[str], str]:
    """The tags a release run documents, and the newest matching tag.

    The list is empty when the newest tag is already documented in ``out``.
    Otherwise it runs from the first documented tag (or ``since``, or, for an
    empty site, the tag before the newest) to the newest.

    Raises:
        ValueError: no tag matches ``pattern``, or ``since`` is not one of them.
    """
    tags = select_tags(repo, pattern)
    if not tags:
        raise ValueError(f"no tag of the repository matches {pattern or '*'}")
    newest = tags[-1]
    documented = [r.get("tag") for r in read_releases(out)]
    if newest in documented:
        return [], newest
    starts = [t for t in documented if t in tags]
    if starts:
        start = min(starts, key=tags.index)
    elif since is not None:
        if since not in tags:
            raise ValueError(f"{since}: not a tag matching {pattern or '*'}")
        start = since
    else:
        start = tags[max(0, len(tags) - 2)]
    return tags[tags.index(start) :], newest


def open_for_release(repo_arg: str, cache_dir: Path | None) -> git.Repo:
    """The repository with its tags up to date (a URL's cached clone is fetched).

    Raises:
        source.SourceError: the repository cannot be opened or fetched.
    """
    repo = source.open_repo(repo_arg, "HEAD", cache_dir)
    if source.is_url(repo_arg):
        try:
            repo.git.fetch("origin", "+refs/tags/*:refs/tags/*", "--prune")
        except git.GitCommandError as exc:
            detail = " ".join(str(exc.stderr or exc).split())
            raise source.SourceError(
                f"{repo_arg}: cannot fetch tags ({detail}); check the URL and network access"
            ) from None
    return repo
