"""Extract every blob of a commit: the cache first, the worker pool for the rest.

:func:`extract_blobs` is the extraction stage behind
:func:`miner.pipeline.mine_blobs`. For the ``.py`` entries of a tree it

1. reports symbolic links and submodules as skipped (the caller's rule);
2. folds entries that share a blob (the same content at several paths) into
   one piece of work;
3. serves blobs found in the :class:`~miner.mining.cache.BlobCache` (only blobs never
   mined before by this extractor version are parsed);
4. mines the rest in the worker pool (:mod:`miner.mining.pool`), or in this
   process with ``jobs=0``, and stores what the extractor produced;
5. gives each entry its result, re-pathed to the entry's path, in entry order.

Failures that the pool records (a crash, a time or memory limit, a blob that
cannot be read) are not cached: they depend on the limits and the machine, so
the next run tries again.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import git

from miner.extract.runner import extract_file
from miner.mining import source
from miner.mining.cache import BlobCache, extractor_version, repath
from miner.mining.calls import link_calls
from miner.mining.pool import (
    FileHook,
    Limits,
    Task,
    default_jobs,
    extract_parallel,
    hooked,
)
from miner.model import FileResult, RunStats
from miner.progress import Stage

log = logging.getLogger("miner")

#: Results written to the cache per transaction.
_FLUSH_EVERY = 256


@dataclass(frozen=True, slots=True)
class MineOptions:
    """How to run extraction (none of it changes the records) and whether the
    optional origins stage runs."""

    jobs: int | None = None
    """Worker processes; None: the CPUs available (:func:`~miner.mining.pool.default_jobs`);
    0: mine in this process, without crash isolation (for debugging and profiling)."""
    cache: bool = True
    """Read and write the blob cache."""
    cache_dir: Path | None = None
    """Folder of the cache; None: :func:`miner.mining.source.default_cache_dir`."""
    cache_lock_timeout: float = 30.0
    """Seconds to wait for the cache's write lock before mining without it."""
    limits: Limits = field(default_factory=Limits)
    send_bytes: bool = False
    """The parent reads every blob and sends its bytes to the workers, instead
    of each worker reading blobs from the repository itself."""
    origins: bool = False
    """Trace every error's origins and ``logged`` fact after the facts
    (:func:`miner.analysis.origins.trace_origins`; a minute or two on SGLang).
    ``miner mine`` turns it on unless ``--no-origins`` is given; off here, so
    a library caller asks for it. Part of the run's inputs."""
    finding_words: bool = False
    """Word the cards' What it means, Solutions and Example fix from the
    verified findings (:func:`miner.publish.findings.worded`) instead of the
    rule writer's sections; the findings are in the records either way.
    ``miner mine --findings-words``; off until the findings state every fact
    the golden cards verify (issue 34). Part of the run's inputs."""
    file_facts: FileHook | None = None
    """What the workers also compute from each file they mine, kept in the
    blob cache's ``facts`` table by blob (the analysis's per-file facts:
    :class:`miner.analysis.filefacts.WorkerFacts`); only with the cache on.
    Changes no record."""


@dataclass(frozen=True, slots=True)
class Extraction:
    """One result per entry, in entry order, and the run's statistics."""

    files: list[FileResult]
    stats: RunStats


def extract_blobs(
    repo: git.Repo,
    entries: Sequence[source.BlobRef],
    *,
    skip: Callable[[source.BlobRef], str | None],
    partial: bool = True,
    options: MineOptions | None = None,
    progress: Callable[[FileResult], None] | None = None,
    stage: Stage | None = None,
) -> Extraction:
    """Mine ``entries`` (see the module doc).

    Args:
        repo: the repository holding the blobs.
        entries: tree entries, usually in path order.
        skip: the reason not to read an entry (a symlink, a submodule), or None.
        partial: passed to :func:`~miner.extract.runner.extract_file`.
        options: jobs, cache and limits (default :class:`MineOptions`).
        progress: called with each entry's result as it is known (any order).
        stage: the progress stage told of each entry (:mod:`miner.progress`):
            a parsed blob is worked, a cache hit, a skipped entry and a second
            path of a blob are free; it counts the sites and failures.

    Raises:
        miner.mining.pool.WorkerStartError: worker processes cannot start at all.
    """
    options = options or MineOptions()
    started = time.perf_counter()
    if stage is not None:
        stage.total = len(entries)
        stage.worked_label = "parsed"
    sink = _Results(entries, stage, progress)
    for index, entry in enumerate(entries):
        reason = skip(entry)
        if reason is not None:
            sink.skipped += 1
            sink.deliver(index, FileResult(entry.path, entry.blob, "skipped", reason=reason))
            sink.free(1, "skipped")
        else:
            sink.by_blob.setdefault(entry.blob, []).append(index)
    with _open_cache(options, partial) as cache:
        hits = cache.get_many(sink.by_blob)
        for blob, result in hits.items():
            sink.settle(blob, result, worked=False)
        misses = [blob for blob in sink.by_blob if blob not in hits]
        fresh: list[FileResult] = []
        units: list[tuple[str, bytes]] = []
        facts: list[tuple[str, bytes]] = []
        failed = 0

        def mined(blob: str, result: FileResult, cacheable: bool) -> None:
            nonlocal failed
            sink.settle(blob, result, worked=True)
            if cacheable:
                fresh.append(result)
                if len(fresh) >= _FLUSH_EVERY:
                    _flush(cache, fresh, units, facts)
            else:
                failed += 1

        jobs, lost = _mine_misses(
            repo,
            entries,
            sink.by_blob,
            misses,
            options,
            partial,
            mined,
            cache,
            (units.extend, facts.append),
        )
        _flush(cache, fresh, units, facts)
        state = cache.state
    done = [r for r in sink.results if r is not None]
    assert len(done) == len(entries), "every entry gets exactly one result"
    stats = RunStats(
        files=len(entries),
        skipped=sink.skipped,
        blobs=len(sink.by_blob),
        cache_hits=len(hits),
        parsed=len(misses),
        failed=failed,
        workers_lost=lost,
        jobs=jobs,
        cache=state,
        seconds=time.perf_counter() - started,
    )
    return Extraction(files=done, stats=stats)


def _flush(
    cache: BlobCache,
    results: list[FileResult],
    units: list[tuple[str, bytes]],
    facts: list[tuple[str, bytes]],
) -> None:
    """Store and empty the results, units and per-file facts gathered so far."""
    cache.put_many(results)
    cache.put_units(units)
    cache.put_facts(facts)
    for done in (results, units, facts):
        done.clear()


class _Results:
    """One result slot per entry; entries sharing a blob share its result."""

    def __init__(
        self,
        entries: Sequence[source.BlobRef],
        stage: Stage | None,
        progress: Callable[[FileResult], None] | None,
    ) -> None:
        self.entries = entries
        self.stage = stage
        self.progress = progress
        self.results: list[FileResult | None] = [None] * len(entries)
        self.by_blob: dict[str, list[int]] = {}
        """Blob id -> indexes of the entries holding it (entries read only)."""
        self.skipped = 0

    def deliver(self, index: int, result: FileResult) -> None:
        self.results[index] = result
        if result.status != "mined":
            log.warning("%s: %s", result.path, result.reason)
        if self.stage is not None:
            self.stage.count("sites", len(result.sites))
            if result.status == "failed":
                self.stage.count("failed")
        if self.progress is not None:
            self.progress(result)

    def free(self, count: int, why: str) -> None:
        if self.stage is not None:
            self.stage.free(count, why)

    def settle(self, blob: str, result: FileResult, *, worked: bool) -> None:
        """The result of ``blob``, re-pathed for every entry that holds it;
        ``worked``: parsed now (else from the cache)."""
        indexes = self.by_blob[blob]
        for index in indexes:
            self.deliver(index, repath(result, self.entries[index].path))
        if self.stage is None:
            return
        if worked:
            self.stage.advance(1)
            self.free(len(indexes) - 1, "same content as another file")
        else:
            self.free(len(indexes), "from cache")


def link_helper_calls(
    repo: git.Repo,
    sha: str,
    files: Sequence[FileResult],
    *,
    partial: bool = True,
    options: MineOptions | None = None,
) -> list[FileResult]:
    """:func:`~miner.mining.calls.link_calls` of one commit's extracted
    ``files``, with the helpers of the blobs' own sites kept in the blob
    cache that ``options`` ask for (its ``helpers`` table)."""
    with _open_cache(options or MineOptions(), partial) as cache:
        return link_calls(repo, sha, files, partial=partial, store=cache)


def stored_file_facts(
    options: MineOptions, partial: bool, blobs: Iterable[str]
) -> dict[str, bytes]:
    """Blob -> the bytes the blob cache that ``options`` ask for keeps in
    its ``facts`` table (:attr:`MineOptions.file_facts`), for those of
    ``blobs`` that have them; {} with the cache off."""
    if not options.cache:
        return {}
    with _open_cache(options, partial) as cache:
        return cache.get_facts(blobs)


def keep_file_facts(options: MineOptions, partial: bool, rows: Iterable[tuple[str, bytes]]) -> None:
    """Store (blob, bytes) ``rows`` in the ``facts`` table of the blob cache
    that ``options`` ask for (nothing with the cache off)."""
    if options.cache:
        with _open_cache(options, partial) as cache:
            cache.put_facts(rows)


def _open_cache(options: MineOptions, partial: bool) -> BlobCache:
    """The blob cache the options ask for (a disabled one with ``cache`` off)."""
    if not options.cache:
        return BlobCache.disabled()
    cache_dir = options.cache_dir or source.default_cache_dir()
    # Whole-module parses are kept apart: a file libcst rejects whole
    # may still have its units parsed, so the ``parser`` field differs.
    version = extractor_version() + ("" if partial else "+full")
    return BlobCache.open(cache_dir, version, lock_timeout=options.cache_lock_timeout)


def _mine_misses(
    repo: git.Repo,
    entries: Sequence[source.BlobRef],
    by_blob: dict[str, list[int]],
    misses: list[str],
    options: MineOptions,
    partial: bool,
    mined: Callable[[str, FileResult, bool], None],
    cache: BlobCache,
    kept: tuple[Callable[[list[tuple[str, bytes]]], None], Callable[[tuple[str, bytes]], None]],
) -> tuple[int, int]:
    """Mine the blobs the cache did not hold, in this process (``jobs`` 0) or
    in the worker pool; ``mined`` sees each result, ``kept[0]`` the units
    parsed for it (:class:`~miner.mining.cache.UnitReader`), read from and
    kept for ``cache``, and ``kept[1]`` its (blob, :attr:`MineOptions.file_facts`)
    when the cache is on. Returns the worker processes used and the workers lost.

    Raises:
        WorkerStartError: worker processes cannot start at all.
    """
    jobs = default_jobs() if options.jobs is None else max(0, options.jobs)
    jobs = min(jobs, len(misses))
    reader = cache.unit_reader() if partial else None
    parsed, keep_facts = kept
    hook = options.file_facts if cache.writable else None
    if jobs == 0:
        try:
            for blob in misses:
                entry = entries[by_blob[blob][0]]
                data = source.read_blob(repo, blob)
                result = extract_file(entry.path, blob, data, partial=partial, memo=reader)
                mined(blob, result, True)
                if reader is not None:
                    parsed(reader.take())
                made = hooked(hook, data, result)
                if made is not None:
                    keep_facts((blob, made))
        finally:
            if reader is not None:
                reader.close()
        return 0, 0
    tasks: list[Task] = []
    for blob in misses:
        entry = entries[by_blob[blob][0]]
        payload = source.read_blob(repo, blob) if options.send_bytes else None
        tasks.append(Task(len(tasks), entry.path, blob, entry.size, payload))
    lost = extract_parallel(
        str(repo.git_dir),
        tasks,
        jobs=jobs,
        partial=partial,
        limits=options.limits,
        on_result=lambda i, result, ok: mined(tasks[i].blob, result, ok),
        units=None if reader is None else (reader.path, reader.version),
        on_units=parsed,
        hook=None if hook is None else (hook, lambda i, made: keep_facts((tasks[i].blob, made))),
    )
    return jobs, lost
