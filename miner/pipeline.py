"""The pipeline, in order: pin the commit, mine its blobs, name and group the sites.

This is the only module that knows the order of the stages; each stage is a
function from data to data (:mod:`miner.source`, :mod:`miner.extract`,
:mod:`miner.fingerprint`), and writing is left to :mod:`miner.render`.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path

import git

from miner import source
from miner.analysis.facts import RepoFacts, collect
from miner.extraction import Extraction, MineOptions, RunStats, extract_blobs
from miner.fingerprint import assign_ids
from miner.model import CommitInfo, Error, FileResult, Site

log = logging.getLogger("miner")


@dataclass(frozen=True, slots=True)
class MineResult:
    """Everything mined from one commit."""

    commit: CommitInfo
    files: tuple[FileResult, ...]
    """One result per ``.py`` entry of the tree, in path order."""
    sites: tuple[Site, ...]
    """Every site, in (path, line) order, with ids assigned."""
    errors: tuple[Error, ...]
    """Sites grouped into errors, in error-id order (re-raises excluded)."""
    stats: RunStats | None = field(default=None, compare=False)
    """What the extraction did (cache hits, blobs parsed, workers lost); not
    part of the output, which depends on the commit alone."""
    facts: RepoFacts | None = None
    """What the analysis knows of the commit beyond its sites (configuration
    model, callers, exception classes); None when not gathered."""

    @property
    def problems(self) -> tuple[FileResult, ...]:
        """Files that were skipped or failed."""
        return tuple(f for f in self.files if f.status != "mined")


def pin(
    repo_arg: str,
    rev: str,
    *,
    slug: str | None = None,
    link_ref: str = "",
    cache_dir: Path | None = None,
) -> tuple[git.Repo, git.Commit, CommitInfo]:
    """Open the repository and resolve ``rev``.

    Raises:
        source.SourceError: the repository or revision cannot be used.
    """
    repo = source.open_repo(repo_arg, rev, cache_dir)
    commit = source.resolve_commit(repo, rev)
    info = source.commit_info(repo_arg, repo, rev, commit, slug=slug, link_ref=link_ref)
    return repo, commit, info


def skip_reason(entry: source.BlobRef) -> str | None:
    """Why a tree entry is not read as a file, or None to read it."""
    if entry.mode == source.MODE_SYMLINK:
        return "symbolic link (not followed; its target is mined where it lives)"
    if entry.mode == source.MODE_GITLINK:
        return "submodule (gitlink): not part of this repository's tree"
    return None


def mine_blobs(
    repo: git.Repo,
    entries: Iterable[source.BlobRef],
    *,
    partial: bool = True,
    progress: Callable[[FileResult], None] | None = None,
    options: MineOptions | None = None,
) -> list[FileResult]:
    """Mine each entry; one result per entry, in entry order.

    Blobs come from the cache or the worker pool (``options``; see
    :mod:`miner.extraction`); ``progress`` sees each result as it is known.
    """
    return extract_entries(repo, entries, partial=partial, progress=progress, options=options).files


def extract_entries(
    repo: git.Repo,
    entries: Iterable[source.BlobRef],
    *,
    partial: bool = True,
    progress: Callable[[FileResult], None] | None = None,
    options: MineOptions | None = None,
) -> Extraction:
    """:func:`mine_blobs` with the run's statistics."""
    return extract_blobs(
        repo, list(entries), skip=skip_reason, partial=partial, options=options, progress=progress
    )


def group_errors(sites: Iterable[Site]) -> list[Error]:
    """Sites grouped by ``error_id`` (primary site first: path, then line).

    Re-raises (a bare ``raise``, or ``raise err`` of the caught exception)
    raise nothing new and are left out.
    """
    groups: dict[str, list[Site]] = defaultdict(list)
    for site in sites:
        if site.reraise or (site.kind == "raise" and site.exception is None):
            continue
        groups[site.error_id].append(site)
    errors = []
    for error_id in sorted(groups):
        members = sorted(groups[error_id], key=lambda s: (s.path, s.line))
        first = members[0]
        errors.append(
            Error(
                error_id=error_id,
                exception=first.exception,
                message=first.message,
                message_parts=first.message_parts,
                message_kind=first.message_kind,
                sites=tuple(members),
            )
        )
    return errors


def assemble(
    info: CommitInfo, files: list[FileResult], stats: RunStats | None = None
) -> MineResult:
    """Name the sites of mined files and group them into errors."""
    files = sorted(files, key=lambda f: f.path)
    raw = [site for f in files for site in f.sites]
    raw.sort(key=lambda s: (s.path, s.line))
    sites = assign_ids(info.slug, raw)
    return MineResult(
        commit=info,
        files=tuple(files),
        sites=tuple(sites),
        errors=tuple(group_errors(sites)),
        stats=stats,
    )


def mine(
    repo_arg: str,
    rev: str,
    *,
    slug: str | None = None,
    link_ref: str = "",
    cache_dir: Path | None = None,
    partial: bool = True,
    progress: Callable[[FileResult], None] | None = None,
    options: MineOptions | None = None,
) -> MineResult:
    """Mine every ``.py`` file of ``repo_arg`` at ``rev``.

    ``options`` sets the workers, the blob cache and the per-file limits
    (default :class:`~miner.extraction.MineOptions`: all cores, the cache in
    ``cache_dir``).

    Raises:
        source.SourceError: the repository or revision cannot be used.
        miner.workers.WorkerStartError: worker processes cannot start.
    """
    repo, commit, info = pin(repo_arg, rev, slug=slug, link_ref=link_ref, cache_dir=cache_dir)
    if options is None:
        options = MineOptions(cache_dir=cache_dir)
    entries = source.python_blobs(repo, commit)
    source.prefetch_blobs(repo, commit, entries)
    extraction = extract_entries(repo, entries, partial=partial, progress=progress, options=options)
    return with_facts(repo, entries, assemble(info, extraction.files, extraction.stats))


def with_facts(repo: git.Repo, entries: Iterable[source.BlobRef], result: MineResult) -> MineResult:
    """``result`` with the facts the analysis needs beyond the sites (the
    configuration model, callers, exception classes), read from the same blobs."""
    sources = {e.path: source.read_blob(repo, e.blob) for e in entries if skip_reason(e) is None}
    return replace(result, facts=collect(sources, result.sites))
