"""The pipeline: the only module that knows the order of the stages.

One commit::

    pin (source) -> list blobs -> extract (store or worker pool + blob cache)
        -> calls of raising helpers (mining.calls)
        -> ids and errors (mining.ids, model.group_errors)
        -> facts (analysis.facts) -> analyses (analysis.analyze)
        -> publish (records, cards, site)

Several releases: the same per commit, then histories and diffs
(:mod:`miner.releases`) and the release site. Each stage is a function from
data to data; reading git and writing files happen only at the two ends.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import git

from miner.analysis import analyze
from miner.analysis.facts import RepoFacts, collect
from miner.analysis.origins import trace_origins
from miner.errors import OutputError, ReleaseError
from miner.extract.limits import MAX_FILE_BYTES
from miner.files import Staging, locked
from miner.lifecycle import fork_map
from miner.mining import digest, source, store
from miner.mining.extraction import Extraction, MineOptions, extract_blobs, link_helper_calls
from miner.mining.ids import assign_ids
from miner.mining.pool import default_jobs
from miner.model import (
    Analysis,
    CommitInfo,
    Error,
    FileResult,
    MineResult,
    group_errors,
    shorten,
)
from miner.publish import cards, html, output, records
from miner.publish import releases as release_pages
from miner.publish.release_index import ReleaseIndexBuilder
from miner.releases.diff import Diff, diff
from miner.releases.history import HistoryBook, HistoryBuilder

if TYPE_CHECKING:
    from miner.analysis.llm import LLMSettings

log = logging.getLogger("miner")


@dataclass(frozen=True)
class Mined:
    """One commit mined and analysed: everything the writers render."""

    result: MineResult
    facts: RepoFacts
    analyses: dict[str, Analysis] = field(repr=False)
    """Error id -> analysis, for every error of ``result``."""
    inputs: str = ""
    """The digest of everything the facts and analyses were made from
    (:func:`miner.mining.digest.run_inputs`); empty when not computed (a
    run with a language model)."""
    seconds: dict[str, float] = field(default_factory=dict)
    """Wall time of each stage: ``extraction``, ``facts``, ``analysis``."""
    reused: bool = False
    """The facts and analyses came from the analysis cache."""


@dataclass(frozen=True, slots=True)
class ReleaseRun:
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
    site: dict[str, int] = field(default_factory=dict)
    """The HTML site's counts (``site/``: files ``written``, ``unchanged``,
    ``removed``, ``bytes``; :func:`miner.publish.html.write_site_into`)."""


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
        SourceError: the repository or revision cannot be used.
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


def extract(
    repo: git.Repo,
    entries: Iterable[source.BlobRef],
    *,
    partial: bool = True,
    progress: Callable[[FileResult], None] | None = None,
    options: MineOptions | None = None,
) -> Extraction:
    """Mine each entry (one result per entry, in entry order) with the run's
    statistics: blobs come from the blob cache or the worker pool
    (``options``; see :mod:`miner.mining.extraction`); ``progress`` sees each
    result as it is known."""
    return extract_blobs(
        repo, list(entries), skip=skip_reason, partial=partial, options=options, progress=progress
    )


def assemble(info: CommitInfo, files: Sequence[FileResult], stats: Any = None) -> MineResult:
    """Name the sites of mined files and group them into errors."""
    ordered = sorted(files, key=lambda f: f.path)
    raw = sorted((site for f in ordered for site in f.sites), key=lambda s: (s.path, s.line))
    sites = assign_ids(raw)
    return MineResult(
        commit=info,
        files=tuple(ordered),
        sites=tuple(sites),
        errors=tuple(group_errors(sites)),
        stats=stats,
    )


#: The note on a file the extractor did not parse (no ``raise`` or ``assert``
#: in it) that is too large to be read for the analysis facts.
FACTS_SIZE_NOTE = "not read for the analysis facts: over the {limit} MiB limit"


def facts_files(
    entries: Iterable[source.BlobRef], result: MineResult
) -> tuple[list[source.BlobRef], MineResult]:
    """The entries whose blobs the analysis facts may read, and ``result``
    with a note on each file the facts leave out that has none yet.

    Only files the extractor mined are read, and none above
    :data:`~miner.extract.limits.MAX_FILE_BYTES`: a file it skipped (too
    large, a symbolic link) or failed on (a crash, the time or memory limit of
    its worker) would cost the parent what the worker's limits kept from it.
    Those already have their reason in the manifest; a large file the
    extractor did not parse (no ``raise`` in it) gets :data:`FACTS_SIZE_NOTE`.
    """
    status = {f.path: f for f in result.files}
    keep: list[source.BlobRef] = []
    noted: dict[str, FileResult] = {}
    for entry in entries:
        mined = status.get(entry.path)
        if skip_reason(entry) is not None or (mined is not None and mined.status != "mined"):
            continue
        if entry.size > MAX_FILE_BYTES:
            if mined is not None and not mined.reason:
                note = FACTS_SIZE_NOTE.format(limit=MAX_FILE_BYTES // 2**20)
                noted[entry.path] = dataclasses.replace(mined, reason=note)
            continue
        keep.append(entry)
    if noted:
        files = tuple(noted.get(f.path, f) for f in result.files)
        result = dataclasses.replace(result, files=files)
    return keep, result


def gather_facts(
    repo: git.Repo, entries: Iterable[source.BlobRef], result: MineResult, jobs: int = 1
) -> RepoFacts:
    """The facts the analysis needs beyond the sites (the configuration model,
    callers, exception classes), read from the blobs of ``entries`` that
    :func:`facts_files` keeps (``jobs`` > 1: in two processes)."""
    return collect(facts_sources(repo, entries, result), result.sites, jobs=jobs)


def facts_sources(
    repo: git.Repo, entries: Iterable[source.BlobRef], result: MineResult
) -> dict[str, bytes]:
    """Path -> bytes of the blobs the facts (and the origins) read: those
    :func:`facts_files` keeps."""
    keep, _ = facts_files(entries, result)
    return {e.path: source.read_blob(repo, e.blob) for e in keep}


def facts_and_origins(
    repo: git.Repo,
    entries: Iterable[source.BlobRef],
    result: MineResult,
    seconds: dict[str, float],
    jobs: int = 1,
) -> RepoFacts:
    """:func:`gather_facts`, then every error's origins and ``logged`` fact
    (:func:`miner.analysis.origins.trace_origins`) from the same files, kept
    in the facts; the wall time of each stage into ``seconds`` (``facts``,
    ``origins``)."""
    start = time.perf_counter()
    sources = facts_sources(repo, entries, result)
    facts = collect(sources, result.sites, jobs=jobs)
    seconds["facts"] = time.perf_counter() - start
    start = time.perf_counter()
    traced = trace_origins(sources, result.errors, facts, jobs=jobs)
    seconds["origins"] = time.perf_counter() - start
    return dataclasses.replace(facts, origins=traced.origins, logged=traced.logged)


@dataclass(frozen=True)
class _Extracted:
    """One commit's files extracted, before the helper calls are linked (the
    half of :func:`mine` that runs in the worker pool)."""

    repo: git.Repo
    entries: list[source.BlobRef]
    info: CommitInfo
    store_dir: Path
    partial: bool
    options: MineOptions
    reuse: bool
    extraction: Extraction | None
    """None when ``stored`` holds the commit's results."""
    stored: MineResult | None = None


def _extract_commit(
    repo_arg: str,
    rev: str,
    *,
    slug: str | None,
    link_ref: str,
    cache_dir: Path | None,
    partial: bool,
    progress: Callable[[FileResult], None] | None,
    options: MineOptions | None,
    reuse: bool,
) -> _Extracted:
    """Pin ``rev``, list its blobs and extract them (the commit's results
    from the commit store instead with ``reuse``, when it has them)."""
    cache_dir = cache_dir or (options.cache_dir if options else None)
    repo, commit, info = pin(repo_arg, rev, slug=slug, link_ref=link_ref, cache_dir=cache_dir)
    entries = source.python_blobs(repo, commit)
    store_dir = cache_dir or source.default_cache_dir()
    options = options or MineOptions(cache_dir=cache_dir)
    stored = store.load_result(store_dir, commit.hexsha, info, partial=partial) if reuse else None
    if stored is not None:
        log.info("%s: reusing mined results of %s", rev, commit.hexsha[:10])
        return _Extracted(repo, entries, info, store_dir, partial, options, reuse, None, stored)
    source.prefetch_blobs(repo, commit, entries)
    extraction = extract(repo, entries, partial=partial, progress=progress, options=options)
    return _Extracted(repo, entries, info, store_dir, partial, options, reuse, extraction)


def _link_commit(extracted: _Extracted) -> MineResult:
    """The second half of :func:`mine`: the helper calls linked
    (:func:`~miner.mining.extraction.link_helper_calls`), the sites named and
    grouped, and the results kept in the commit store with ``reuse``. It
    touches nothing the extraction of another commit uses, so it may run on a
    thread while that extraction runs (:func:`_document`)."""
    x = extracted
    if x.stored is not None:
        return x.stored
    assert x.extraction is not None
    files = link_helper_calls(
        x.repo, x.info.sha, x.extraction.files, partial=x.partial, options=x.options
    )
    result = assemble(x.info, files, x.extraction.stats)
    if x.reuse:
        try:
            store.save_result(x.store_dir, result, partial=x.partial)
        except OSError as exc:
            log.warning("%s: cannot store mined results (%s)", x.store_dir, exc)
    return result


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
    reuse: bool = False,
) -> MineResult:
    """The sites and errors of every ``.py`` file of ``repo_arg`` at ``rev``
    (no facts, no analysis: what a diff compares).

    ``options`` sets the workers, the blob cache and the per-file limits
    (default :class:`~miner.mining.extraction.MineOptions`: all cores, the
    cache in ``cache_dir``). With ``reuse``, the per-file results of a commit
    mined before are taken from the commit store (:mod:`miner.mining.store`)
    and a new commit's are kept there.

    Raises:
        SourceError: the repository or revision cannot be used.
        WorkerStartError: worker processes cannot start.
    """
    extracted = _extract_commit(
        repo_arg,
        rev,
        slug=slug,
        link_ref=link_ref,
        cache_dir=cache_dir,
        partial=partial,
        progress=progress,
        options=options,
        reuse=reuse,
    )
    return _link_commit(extracted)


def mine_and_analyze(
    repo_arg: str,
    rev: str,
    *,
    slug: str | None = None,
    link_ref: str = "",
    cache_dir: Path | None = None,
    partial: bool = True,
    progress: Callable[[FileResult], None] | None = None,
    options: MineOptions | None = None,
    reuse: bool = False,
    llm: LLMSettings | None = None,
) -> Mined:
    """:func:`mine`, then the commit's facts and every error's analysis
    (``llm`` rewrites the prose sections: :mod:`miner.analysis.llm`).

    With the blob cache on (``options.cache``, the default) and no ``llm``,
    the facts and analyses of a commit already analysed by the same code are
    taken from the analysis cache (:func:`~miner.mining.digest.analysis_cache`)
    and new ones kept there: the same values as computing them.

    Raises:
        SourceError: the repository or revision cannot be used.
        WorkerStartError: worker processes cannot start.
    """
    return analyze_mining(
        start_mining(
            repo_arg,
            rev,
            slug=slug,
            link_ref=link_ref,
            cache_dir=cache_dir,
            partial=partial,
            progress=progress,
            options=options,
            reuse=reuse,
            llm=llm,
        )
    )


@dataclass(frozen=True)
class Mining:
    """One commit mined, before its facts and analyses: what decides them."""

    repo: git.Repo
    entries: list[source.BlobRef]
    result: MineResult
    """The records, with the notes of :func:`facts_files`."""
    inputs: str
    """:func:`miner.mining.digest.run_inputs` of the run ("" with ``llm``)."""
    cache_dir: Path | None
    """The cache folder of the facts, analyses and published files (None:
    no cache, or no digest)."""
    llm: LLMSettings | None
    seconds: dict[str, float]
    jobs: int = 1
    """Processes for the analysis (:func:`miner.analysis.analyze`)."""


def start_mining(
    repo_arg: str,
    rev: str,
    *,
    slug: str | None = None,
    link_ref: str = "",
    cache_dir: Path | None = None,
    partial: bool = True,
    progress: Callable[[FileResult], None] | None = None,
    options: MineOptions | None = None,
    reuse: bool = False,
    llm: LLMSettings | None = None,
) -> Mining:
    """The first half of :func:`mine_and_analyze`: mine ``rev`` and compute
    the digest of the run's inputs (nothing analysed yet)."""
    start = time.perf_counter()
    extracted = _extract_commit(
        repo_arg,
        rev,
        slug=slug,
        link_ref=link_ref,
        cache_dir=cache_dir,
        partial=partial,
        progress=progress,
        options=options,
        reuse=reuse,
    )
    return _mining_of(extracted, llm, start)


def _mining_of(extracted: _Extracted, llm: LLMSettings | None, started: float) -> Mining:
    """The rest of :func:`start_mining` once ``extracted``: the helper calls
    linked (:func:`_link_commit`), the notes of :func:`facts_files` and the
    digest of the run's inputs; ``started`` is when the extraction began
    (``time.perf_counter``)."""
    x = extracted
    result = _link_commit(x)
    _, result = facts_files(x.entries, result)  # notes the files the facts leave out
    inputs = (
        ""
        if llm is not None
        else digest.run_inputs(result.commit, result.files, x.entries, partial=x.partial)
    )
    seconds = {"extraction": time.perf_counter() - started}
    kept = Path(x.store_dir) if x.options.cache and inputs else None
    jobs = x.options.jobs if x.options.jobs is not None else default_jobs()
    return Mining(x.repo, x.entries, result, inputs, kept, llm, seconds, max(1, jobs))


def analyze_mining(mining: Mining) -> Mined:
    """The second half of :func:`mine_and_analyze`: the facts and analyses of
    ``mining``, from the analysis cache when it has them."""
    result, seconds = mining.result, dict(mining.seconds)
    cache = None if mining.cache_dir is None else digest.analysis_cache(mining.cache_dir)
    if cache is not None:
        start = time.perf_counter()
        kept = cache.get(mining.inputs)
        if isinstance(kept, tuple) and len(kept) == 2:
            facts, analyses = kept
            seconds["facts"] = seconds["origins"] = 0.0
            seconds["analysis"] = time.perf_counter() - start
            return Mined(result, facts, analyses, mining.inputs, seconds, reused=True)
    facts = facts_and_origins(mining.repo, mining.entries, result, seconds, jobs=mining.jobs)
    start = time.perf_counter()
    analyses = analyze(result, facts, llm=mining.llm, jobs=mining.jobs)
    if cache is not None:
        cache.put(mining.inputs, (facts, analyses))
    seconds["analysis"] = time.perf_counter() - start
    return Mined(result, facts, analyses, mining.inputs, seconds)


def publish_inputs(mining_inputs: str, out: Path, *, site: bool) -> str:
    """The digest of everything the published folder ``out`` is made from:
    the run's inputs, whether the site is written, and (with the site) the
    diffs under ``out/diffs`` it shows. "" when ``mining_inputs`` is."""
    if not mining_inputs:
        return ""
    diffs = html.load_diffs(out) if site else []
    return digest.combine(run=mining_inputs, site=site, diffs=diffs)


def unchanged_output(out: Path, inputs: str, *, site: bool) -> bool:
    """Whether the folder ``out`` was published from ``inputs``, still holds
    every file its manifests list (its site's too, with ``site``), and holds
    nothing an interrupted run left (temporary files, staging folders beside
    or inside it), which a full run would clean up."""
    if not inputs:
        return False
    manifest = output.read_manifest(out)
    if manifest is None or manifest.get("inputs") != inputs:
        return False
    listed = manifest.get("written")
    if site:
        site_manifest = output.read_manifest(out / "site")
        if site_manifest is None or output.kind_of(site_manifest) != output.SITE:
            return False
        pages = site_manifest.get("written")
        if not isinstance(listed, list) or not isinstance(pages, list):
            return False
        listed = listed + [f"site/{rel}" for rel in pages if isinstance(rel, str)]
    if not isinstance(listed, list) or Staging(out).leftovers():
        return False
    present = output.present_files(out)
    return present is not None and all(rel in present for rel in listed)


@dataclass(frozen=True)
class MineRun:
    """What :func:`mine_into` did."""

    result: MineResult
    counts: dict[str, Any]
    """:func:`publish`'s counts (``output``, ``site``, ``seconds``)."""
    seconds: dict[str, float]
    """Wall time per stage: ``extraction``, ``facts``, ``analysis``,
    ``rendering``, ``writing``."""
    skipped: bool
    """The folder was published from the same inputs: nothing analysed,
    rendered or written."""
    reused: bool
    """The facts and analyses came from the analysis cache."""
    replayed: bool = False
    """The files came from the cache of published files (same inputs, another
    folder): nothing analysed or rendered."""


def mine_into(
    repo_arg: str,
    rev: str,
    out: Path,
    *,
    site: bool = False,
    slug: str | None = None,
    link_ref: str = "",
    cache_dir: Path | None = None,
    partial: bool = True,
    progress: Callable[[FileResult], None] | None = None,
    options: MineOptions | None = None,
    llm: LLMSettings | None = None,
    jobs: int | None = None,
) -> MineRun:
    """Mine, analyse and publish ``rev`` into ``out`` (``miner mine``).

    With the cache on (``options.cache``), the per-file records of a commit
    mined before come from the commit store (:mod:`miner.mining.store`: no
    git reads, no call linking) and a new commit's are kept there.

    When ``out``'s manifest was written from the same inputs
    (:func:`publish_inputs`, in the manifest as ``inputs``) and every file it
    lists is there, the facts, the analysis and the rendering are skipped and
    nothing is written: the folder already holds these very bytes.

    Raises:
        SourceError, WorkerStartError: see :func:`mine_and_analyze`.
        OutputError, WorseOutputError: see :func:`publish`.
    """
    mining = start_mining(
        repo_arg,
        rev,
        slug=slug,
        link_ref=link_ref,
        cache_dir=cache_dir,
        partial=partial,
        progress=progress,
        options=options,
        reuse=options.cache if options is not None else True,
        llm=llm,
    )
    inputs = publish_inputs(mining.inputs, out, site=site)
    if unchanged_output(out, inputs, site=site):
        seconds = {**mining.seconds, "facts": 0.0, "analysis": 0.0}
        seconds.update(rendering=0.0, writing=0.0)
        listed = len((output.read_manifest(out) or {}).get("written", []))
        site_counts = None
        if site:
            pages = len((output.read_manifest(out / "site") or {}).get("written", []))
            site_counts = {"written": 0, "unchanged": pages, "removed": 0}
        same: dict[str, Any] = {
            "output": {"written": 0, "unchanged": listed, "removed": 0},
            "site": site_counts,
            "seconds": {"rendering": 0.0, "writing": 0.0},
        }
        return MineRun(mining.result, same, seconds, skipped=True, reused=False)
    kept = None
    if mining.cache_dir is not None and inputs:
        kept = digest.rendered_cache(mining.cache_dir)
        start = time.perf_counter()
        files = kept.get(inputs)
        if isinstance(files, dict) and "" in files:
            loaded = time.perf_counter() - start
            again = replay(mining.result, out, files)
            seconds = {**mining.seconds, "facts": 0.0, "analysis": 0.0, "rendering": loaded}
            seconds["writing"] = again["seconds"]["writing"]
            return MineRun(mining.result, again, seconds, False, False, replayed=True)
    mined = analyze_mining(mining)
    record: dict[str, list[tuple[str, str]]] | None = {} if kept is not None else None
    counts = publish(mined, out, site=site, jobs=jobs, inputs=inputs, record=record)
    if kept is not None and record is not None:
        start = time.perf_counter()
        kept.put(inputs, record)
        counts["seconds"]["writing"] += time.perf_counter() - start
    seconds = {**mined.seconds, **counts["seconds"]}
    return MineRun(mined.result, counts, seconds, skipped=False, reused=mined.reused)


def _failed_example(result: MineResult) -> str:
    """`` (e.g. 'path': reason)`` of the first file that failed, or ""."""
    failed = [f for f in result.files if f.status == "failed"]
    reason = shorten(" ".join((failed[0].reason or "").split()), 120) if failed else ""
    return f" (e.g. {failed[0].path!r}: {reason})" if failed else ""


def replay(result: MineResult, out: Path, files: dict[str, list[tuple[str, str]]]) -> dict:
    """Publish into ``out`` the files a run from the same inputs wrote
    (``files``: folder ("" or "site") -> its recorded ``(path, text)``;
    :func:`miner.publish.output.replay`), with the checks of :func:`publish`.
    Returns :func:`publish`'s counts (all the time is ``writing``).

    Raises:
        OutputError, WorseOutputError: see :func:`publish`.
    """
    start = time.perf_counter()
    with output.publication(out) as pub:
        manifest = next(text for rel, text in files[""] if rel == records.MANIFEST)
        counts = json.loads(manifest)["counts"]
        output.check_not_worse(pub.previous, counts, out, _failed_example(result))
        done = output.replay(pub.folder, files[""])
        written = {k: done[k] for k in ("written", "unchanged", "removed")}
        pages = output.replay(pub.subfolder("site"), files["site"]) if "site" in files else None
    seconds = {"rendering": 0.0, "writing": time.perf_counter() - start}
    return {"output": written, "site": pages, "seconds": seconds}


def publish(
    mined: Mined,
    out: Path,
    *,
    site: bool = False,
    jobs: int | None = None,
    inputs: str = "",
    record: dict[str, list[tuple[str, str]]] | None = None,
) -> dict:
    """Write the records and cards of ``mined`` under ``out`` and, with
    ``site``, the HTML site under ``out / "site"``: published as a whole (the
    old output or the new one, never a mix: :mod:`miner.publish.output`).
    ``inputs`` (:func:`publish_inputs`) goes into the manifest; a ``record``
    dict receives, per folder ("" and "site"), every ``(path, text)`` written
    (what :func:`replay` writes again).

    Returns the writers' counts: ``{"output": {...}, "site": {...} | None,
    "seconds": {"rendering": s, "writing": s}}`` (writing: the staging, the
    file writes and the swap; rendering: the rest).

    Raises:
        OutputError: a folder cannot be written, or holds files raise-miner
            did not write.
        WorseOutputError: most files failed, or nothing was found where the
            previous output had errors; the previous output is kept.
    """
    start = time.perf_counter()
    writing = 0.0
    with output.publication(out) as pub:
        opened = time.perf_counter()
        result = mined.result
        counts = records.manifest_json(result, mined.analyses)["counts"]
        output.check_not_worse(pub.previous, counts, out, _failed_example(result))
        if record is not None:
            pub.folder.record = record.setdefault("", [])
        written = cards.write_records(
            pub.folder,
            result,
            mined.analyses,
            config=mined.facts.to_json(),
            inputs=inputs,
            jobs=max(1, default_jobs() if jobs is None else jobs),
        )
        pages = None
        if site:
            folder = pub.subfolder("site")
            if record is not None:
                folder.record = record.setdefault("site", [])
            pages = html.write_site_into(
                folder,
                result,
                mined.analyses,
                counts,
                diffs=html.load_diffs(pub.root),
                jobs=jobs,
            )
            writing += folder.seconds
        writing += pub.folder.seconds + (opened - start)
        closing = time.perf_counter()
    writing += time.perf_counter() - closing
    total = time.perf_counter() - start
    seconds = {"rendering": max(0.0, total - writing), "writing": writing}
    return {"output": written, "site": pages, "seconds": seconds}


def republish_site(out: Path, dest: Path, *, jobs: int | None = None) -> tuple[int, dict]:
    """Render the site of the mined folder ``out`` into ``dest`` from its
    records alone (no mining, no analysis): the same bytes as ``publish``
    with ``site`` (of a release site, ``miner history``: the same bytes as
    its ``site/``, every release's errors with their histories,
    :func:`miner.publish.records.read_release`). Returns the number of
    errors documented (of a release site: with those of older releases)
    and the site's counts.

    A ``dest`` inside ``out`` (``out/site`` by default) is published with
    ``out`` as a whole; any other ``dest`` on its own, with its own lock.

    Raises:
        RecordsError: ``out`` lacks its records.
        OutputError: ``dest`` cannot be written, or holds files raise-miner
            did not write.
    """
    out_real, dest_real = Path(out).resolve(), Path(dest).resolve()
    if dest_real == out_real or out_real.is_relative_to(dest_real):
        raise OutputError(
            f"{dest}: the site cannot replace or hold the mined folder {out}; "
            "pass --dest with another folder"
        )
    with locked(out):
        published = records.read_mined(out)
        diffs = html.load_diffs(out)
        result, analyses = published.result, published.analyses
        counts = published.manifest["counts"]
        found = records.read_release(out, result)
        release = None
        if found is not None:
            release = html.ReleaseView(found.histories, found.retired, found.releases)
        if dest_real.is_relative_to(out_real):
            with output.publication(out) as pub:
                folder = pub.subfolder(dest_real.relative_to(out_real).as_posix())
                stats = html.write_site_into(
                    folder, result, analyses, counts, diffs=diffs, jobs=jobs, release=release
                )
        else:
            stats = html.write_site(
                result, dest, analyses, counts, diffs=diffs, jobs=jobs, release=release
            )
    older = len(release.retired) if release is not None else 0
    return len(published.result.errors) + older, stats


def diff_commits(
    repo_arg: str,
    old: str,
    new: str,
    *,
    slug: str | None = None,
    cache_dir: Path | None = None,
    reuse: bool = True,
) -> Diff:
    """The errors added, removed, changed and moved from ``old`` to ``new``
    (each mined once and kept in the commit store).

    Raises:
        SourceError: the repository or a revision cannot be used.
    """
    sides = [
        mine(repo_arg, rev, slug=slug, link_ref=rev, cache_dir=cache_dir, reuse=reuse)
        for rev in (old, new)
    ]
    return diff(sides[0].commit, sides[0].errors, sides[1].commit, sides[1].errors)


def document_releases(
    repo_arg: str,
    tags: Sequence[str],
    out: Path,
    *,
    slug: str | None = None,
    cache_dir: Path | None = None,
    partial: bool = True,
    on_release: Callable[[str, MineResult], None] | None = None,
    jobs: int | None = None,
) -> ReleaseRun:
    """Mine ``tags`` in the order given and write the release site under ``out``:
    the newest release's records and cards, a card for every error an older
    release raised, each error's history, and the diff of each consecutive
    pair, in Markdown and JSON, and the same as an HTML site in ``out/site``
    (every error of every release with a page, :class:`miner.publish.html.ReleaseView`;
    ``jobs`` processes render its cards, default one per CPU).

    Raises:
        SourceError: the repository or a tag cannot be used.
        OutputError: ``out`` cannot be written.
        ReleaseError: ``tags`` is empty.
    """
    if not tags:
        raise ReleaseError("no releases to document; check --tags")
    with locked(out):
        output.check_output(out)
        return _document(repo_arg, tags, out, slug, cache_dir, partial, on_release, jobs)


def _document(
    repo_arg: str,
    tags: Sequence[str],
    out: Path,
    slug: str | None,
    cache_dir: Path | None,
    partial: bool,
    on_release: Callable[[str, MineResult], None] | None,
    jobs: int | None = None,
) -> ReleaseRun:
    """:func:`document_releases` with the lock of ``out`` held."""
    builder = HistoryBuilder()
    index = ReleaseIndexBuilder()
    commits: list[CommitInfo] = []
    diffs: dict[str, release_pages.ReleaseDiff] = {}
    newest: Mining | None = None

    def record(tag: str, extracted: _Extracted, started: float, last: bool) -> None:
        # Only the newest release's facts and analyses are published; an older
        # release gives its errors (histories, diffs, retired cards) alone.
        nonlocal newest
        if last:
            newest = _mining_of(extracted, None, started)
            mined_result = newest.result
        else:
            mined_result = _link_commit(extracted)
        if on_release is not None:
            on_release(tag, mined_result)
        changes = builder.add(tag, mined_result)
        index.add(tag, mined_result)
        if changes is not None:
            stem = release_pages.diff_stem(changes)
            diffs[stem] = release_pages.release_diff(changes, stem)
        del changes  # it holds both releases' records
        commits.append(mined_result.commit)

    # A release's links, names and history are made on a thread while the
    # workers extract the next release: the parent's serial part of one
    # release overlaps the pool's part of the next. One thread keeps the
    # releases in order.
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="release") as behind:
        pending: Future[None] | None = None
        for position, tag in enumerate(tags):
            started = time.perf_counter()
            extracted = _extract_commit(
                repo_arg,
                tag,
                slug=slug,
                link_ref=tag,
                cache_dir=cache_dir,
                partial=partial,
                progress=None,
                options=None,
                reuse=True,
            )
            if pending is not None:
                pending.result()  # the previous release's failure, raised here
            last = position == len(tags) - 1
            pending = behind.submit(record, tag, extracted, started, last)
            del extracted
        assert pending is not None
        pending.result()
    assert newest is not None
    book = builder.finish()
    # analysed after the history is built: the older releases' records that
    # no card needs are freed by then, and the workers fork from less memory
    analysed = analyze_mining(newest)
    workers = max(1, default_jobs() if jobs is None else jobs)
    retired = retired_analyses(book, jobs=workers)
    with output.publication(out) as pub:
        counts = release_pages.write_release_site(
            pub.folder,
            book,
            analysed.result,
            analysed.analyses,
            retired,
            commits,
            diffs,
            config=analysed.facts.to_json(),
            release_index=index.to_json(),
            jobs=workers,
        )
        site_counts = html.write_site_into(
            pub.subfolder("site"),
            analysed.result,
            analysed.analyses,
            records.manifest_json(analysed.result, analysed.analyses)["counts"],
            diffs=[(stem, dict(change.data)) for stem, change in diffs.items()],
            jobs=jobs,
            release=html.ReleaseView(
                histories=book.histories,
                retired=retired,
                releases=release_pages.release_rows(commits, list(diffs)),
            ),
        )
    return ReleaseRun(
        releases=book.releases,
        diffs=tuple(diffs),
        counts=counts,
        errors=len(analysed.result.errors),
        retired=len(book.retired),
        site=site_counts,
    )


def retired_analyses(book: HistoryBook, jobs: int = 1) -> list[tuple[Error, CommitInfo, Analysis]]:
    """Every retired error with the last commit that raised it and its analysis,
    written from its sites alone (the old commit's configuration model is not
    kept, so the card names no setting it cannot prove existed there); ``jobs``
    forked processes analyse the commits, one commit's errors at a time (the
    same analyses as one process)."""
    by_commit: dict[str, list[Error]] = {}
    commits: dict[str, CommitInfo] = {}
    for entry in book.retired:
        by_commit.setdefault(entry.commit.sha, []).append(entry.error)
        commits[entry.commit.sha] = entry.commit
    groups = sorted(by_commit.items())

    def analysed(group: tuple[str, list[Error]]) -> list[Analysis]:
        sha, errors = group
        sites = tuple(s for e in errors for s in e.sites)
        old = MineResult(commit=commits[sha], files=(), sites=sites, errors=tuple(errors))
        analyses = analyze(old, RepoFacts())
        return [analyses[e.error_id] for e in errors]

    out: list[tuple[Error, CommitInfo, Analysis]] = []
    for (sha, errors), analyses in zip(groups, fork_map(jobs, analysed, groups), strict=True):
        out.extend((e, commits[sha], a) for e, a in zip(errors, analyses, strict=True))
    return out


def documented_releases(out: Path) -> list[str]:
    """The tags the release site at ``out`` documents already (oldest first)."""
    return [str(r.get("tag")) for r in release_pages.read_releases(out)]
