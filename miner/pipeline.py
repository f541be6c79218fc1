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
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import git

from miner.analysis import analyze, filefacts
from miner.analysis.facts import COLLECT_PARTS, FileFacts, RepoFacts, collect
from miner.analysis.origins import trace_origins
from miner.errors import OutputError, ReleaseError
from miner.extract.limits import MAX_FILE_BYTES
from miner.files import Staging, locked
from miner.lifecycle import fork_imap
from miner.mining import digest, source, store
from miner.mining.extraction import (
    Extraction,
    MineOptions,
    extract_blobs,
    keep_file_facts,
    link_helper_calls,
    stored_file_facts,
)
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
from miner.progress import Reporter, Stage, duration, silent
from miner.publish import cards, html, output, records
from miner.publish import releases as release_pages
from miner.publish.findings import worded
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
    stage: Stage | None = None,
) -> Extraction:
    """Mine each entry (one result per entry, in entry order) with the run's
    statistics: blobs come from the blob cache or the worker pool
    (``options``; see :mod:`miner.mining.extraction`); ``progress`` sees each
    result as it is known, and ``stage`` counts them (:mod:`miner.progress`)."""
    return extract_blobs(
        repo,
        list(entries),
        skip=skip_reason,
        partial=partial,
        options=options,
        progress=progress,
        stage=stage,
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
    repo: git.Repo,
    entries: Iterable[source.BlobRef],
    result: MineResult,
    jobs: int = 1,
    stage: Stage | None = None,
    sources: Mapping[str, bytes] | None = None,
    known: Mapping[str, FileFacts] | None = None,
) -> RepoFacts:
    """The facts the analysis needs beyond the sites (the configuration model,
    callers, exception classes), read from the blobs of ``entries`` that
    :func:`facts_files` keeps, or from ``sources`` when they were read
    already (:func:`facts_sources`); ``jobs`` > 1: in two processes.
    ``known``: the per-file facts of these files with these sites
    (:func:`file_records`). ``stage`` shows the reading of the files and
    each part of :func:`~miner.analysis.facts.collect` as a step."""
    if stage is None:
        files = sources if sources is not None else facts_sources(repo, entries, result)
        return collect(files, result.sites, jobs=jobs, known=known)
    keep, _ = facts_files(entries, result)
    stage.doing = f"reading {len(keep):,} files"
    stage.total = 1 + COLLECT_PARTS
    files = sources if sources is not None else facts_sources(repo, entries, result)

    def part(words: str) -> None:
        stage.doing = words
        stage.advance()

    facts = collect(files, result.sites, jobs=jobs, progress=part, known=known)
    stage.doing = ""
    stage.advance()
    stage.summary = f"{len(keep):,} files read"
    return facts


def facts_sources(
    repo: git.Repo, entries: Iterable[source.BlobRef], result: MineResult
) -> dict[str, bytes]:
    """Path -> bytes of the blobs the facts (and the origins) read: those
    :func:`facts_files` keeps."""
    keep, _ = facts_files(entries, result)
    return {e.path: source.read_blob(repo, e.blob) for e in keep}


def file_records(mining: Mining, files: Mapping[str, bytes]) -> dict[str, FileFacts]:
    """Path -> the per-file facts of each of ``files`` (path -> bytes) with
    the sites of ``mining``: those the extraction's workers kept in the blob
    cache (:class:`~miner.analysis.filefacts.WorkerFacts`) when made for
    the same path and sites, the others read here in ``mining.jobs``
    processes and kept there for the next run
    (:func:`miner.analysis.filefacts.complete`)."""
    options = mining.options
    blob_of = {e.path: e.blob for e in mining.entries if e.path in files}
    paths_of: dict[str, list[str]] = {}
    for path, blob in blob_of.items():
        paths_of.setdefault(blob, []).append(path)
    rows = {} if options is None else stored_file_facts(options, mining.partial, paths_of)
    known = filefacts.known_records(rows, paths_of)
    records, read = filefacts.complete(files, mining.result.sites, known, jobs=mining.jobs)
    if options is not None and read:
        made = [(blob_of[p], filefacts.encode(records[p])) for p in read if p in blob_of]
        keep_file_facts(options, mining.partial, made)
    return records


def with_origins(mining: Mining, facts: RepoFacts, sources: Mapping[str, bytes]) -> RepoFacts:
    """``facts`` with every error's origins, ``logged`` and ``unreachable`` facts
    (:func:`miner.analysis.origins.trace_origins`), from the files the facts
    were read from (``sources``: :func:`facts_sources`); the ``origins``
    stage of ``mining.reporter``."""
    result = mining.result
    with mining.reporter.stage(f"{mining.label}origins", total=1, unit="step") as stage:
        stage.measured = False
        traced = trace_origins(sources, result.errors, facts, jobs=mining.jobs)
        stage.advance()
        stage.summary = f"{len(traced.origins):,} errors traced"
    return dataclasses.replace(
        facts, origins=traced.origins, logged=traced.logged, unreachable=traced.unreachable
    )


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
    reporter: Reporter = field(default_factory=silent, repr=False)
    """Where the later stages of this commit report their progress."""
    label: str = ""
    """The prefix of this commit's stage names (``v0.5.19 ``; "" for one commit)."""


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
    reporter: Reporter | None = None,
    label: str = "",
) -> _Extracted:
    """Pin ``rev``, list its blobs and extract them (the commit's results
    from the commit store instead with ``reuse``, when it has them), as the
    stage ``{label}extraction`` of ``reporter``."""
    reporter = reporter or silent()
    with reporter.stage(f"{label}extraction") as stage:
        cache_dir = cache_dir or (options.cache_dir if options else None)
        repo, commit, info = pin(repo_arg, rev, slug=slug, link_ref=link_ref, cache_dir=cache_dir)
        entries = source.python_blobs(repo, commit)
        store_dir = cache_dir or source.default_cache_dir()
        options = options or MineOptions(cache_dir=cache_dir)
        stored = (
            store.load_result(store_dir, commit.hexsha, info, partial=partial) if reuse else None
        )
        extraction = None
        if stored is not None:
            log.info("%s: reusing mined results of %s", rev, commit.hexsha[:10])
            stage.summary = f"{len(stored.files):,} files from the commit store"
        else:
            source.prefetch_blobs(repo, commit, entries)
            extraction = extract(
                repo, entries, partial=partial, progress=progress, options=options, stage=stage
            )
    return _Extracted(
        repo, entries, info, store_dir, partial, options, reuse, extraction, stored, reporter, label
    )


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
    with x.reporter.stage(f"{x.label}calls") as stage:
        files = link_helper_calls(
            x.repo, x.info.sha, x.extraction.files, partial=x.partial, options=x.options
        )
        result = assemble(x.info, files, x.extraction.stats)
        stage.summary = f"{len(result.sites):,} sites in {len(result.errors):,} errors"
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
    reporter: Reporter | None = None,
) -> MineResult:
    """The sites and errors of every ``.py`` file of ``repo_arg`` at ``rev``
    (no facts, no analysis: what a diff compares).

    ``options`` sets the workers, the blob cache and the per-file limits
    (default :class:`~miner.mining.extraction.MineOptions`: all cores, the
    cache in ``cache_dir``). With ``reuse``, the per-file results of a commit
    mined before are taken from the commit store (:mod:`miner.mining.store`)
    and a new commit's are kept there. ``reporter`` shows the stages
    (:mod:`miner.progress`; default: nothing).

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
        reporter=reporter,
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
    reporter: Reporter | None = None,
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
            reporter=reporter,
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
    reporter: Reporter = field(default_factory=silent, repr=False)
    """Where the facts and analysis stages report their progress."""
    label: str = ""
    """The prefix of the stage names (``v0.5.19 ``)."""
    origins: bool = False
    """Whether the origins stage runs (:attr:`MineOptions.origins`)."""
    finding_words: bool = False
    """Whether the findings word the cards (:attr:`MineOptions.finding_words`)."""
    options: MineOptions | None = None
    """How the commit was extracted: the blob cache whose ``facts`` table
    holds the per-file facts (:func:`file_records`; None: none)."""
    partial: bool = True
    """Passed to the extraction (the blob cache's version depends on it)."""


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
    reporter: Reporter | None = None,
) -> Mining:
    """The first half of :func:`mine_and_analyze`: mine ``rev`` and compute
    the digest of the run's inputs (nothing analysed yet)."""
    start = time.perf_counter()
    options = options or MineOptions(cache_dir=cache_dir)
    if options.cache:  # the workers also read each file's facts (file_records)
        options = dataclasses.replace(options, file_facts=filefacts.WorkerFacts())
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
        reporter=reporter,
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
        else digest.run_inputs(
            result.commit, result.files, x.entries, partial=x.partial, **_origins_input(x.options)
        )
    )
    seconds = {"extraction": time.perf_counter() - started}
    kept = Path(x.store_dir) if x.options.cache and inputs else None
    jobs = x.options.jobs if x.options.jobs is not None else default_jobs()
    return Mining(
        x.repo,
        x.entries,
        result,
        inputs,
        kept,
        llm,
        seconds,
        max(1, jobs),
        x.reporter,
        x.label,
        origins=x.options.origins,
        finding_words=x.options.finding_words,
        options=x.options,
        partial=x.partial,
    )


def _origins_input(options: MineOptions) -> dict[str, bool]:
    """The origins stage as an input of the run's digest, only when asked
    for (so the digest of a run without it is what it always was)."""
    out = {"origins": True} if options.origins else {}
    if options.finding_words:
        out["finding_words"] = True
    return out


def commit_facts(mining: Mining, stage: Stage | None = None) -> tuple[RepoFacts, dict[str, bytes]]:
    """The facts stage of ``mining`` (its facts, without origins) and the
    files read for it (path -> bytes, which the origins stage traces too):
    the per-file facts from the blob cache (:func:`file_records`), joined
    with what needs several files (:func:`gather_facts`, shown on ``stage``)."""
    sources = facts_sources(mining.repo, mining.entries, mining.result)
    facts = gather_facts(
        mining.repo,
        mining.entries,
        mining.result,
        jobs=mining.jobs,
        stage=stage,
        sources=sources,
        known=file_records(mining, sources),
    )
    return facts, sources


def analyze_mining(mining: Mining) -> Mined:
    """The second half of :func:`mine_and_analyze`: the facts and analyses of
    ``mining``, from the analysis cache when it has them (the stages
    ``facts`` and ``analysis`` of ``mining.reporter``)."""
    result, seconds = mining.result, dict(mining.seconds)
    reporter, label = mining.reporter, mining.label
    cache = None if mining.cache_dir is None else digest.analysis_cache(mining.cache_dir)
    if cache is not None:
        start = time.perf_counter()
        kept = cache.get(mining.inputs)
        if isinstance(kept, tuple) and len(kept) == 2:
            facts, analyses = kept
            analyses = worded(analyses) if mining.finding_words else analyses
            seconds["facts"] = 0.0
            seconds["analysis"] = time.perf_counter() - start
            what = f"{len(analyses):,} errors from the analysis cache"
            reporter.finished(f"{label}facts and analysis", what, seconds["analysis"])
            return Mined(result, facts, analyses, mining.inputs, seconds, reused=True)
    start = time.perf_counter()
    with reporter.stage(f"{label}facts") as stage:
        stage.unit, stage.measured = "step", False
        facts, sources = commit_facts(mining, stage)
    seconds["facts"] = time.perf_counter() - start
    if mining.origins:
        start = time.perf_counter()
        facts = with_origins(mining, facts, sources)
        seconds["origins"] = time.perf_counter() - start
    start = time.perf_counter()
    with reporter.stage(f"{label}analysis", total=len(result.errors), unit="error") as stage:
        analyses = analyze(result, facts, llm=mining.llm, jobs=mining.jobs, progress=stage.advance)
        if cache is not None:
            cache.put(mining.inputs, (facts, analyses))
        if mining.finding_words:  # the findings' sections, in the templates' words
            analyses = worded(analyses)
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
    reporter: Reporter | None = None,
) -> MineRun:
    """Mine, analyse and publish ``rev`` into ``out`` (``miner mine``);
    ``reporter`` shows each stage (:mod:`miner.progress`; default: nothing).

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
        reporter=reporter,
    )
    inputs = publish_inputs(mining.inputs, out, site=site)
    if unchanged_output(out, inputs, site=site):
        return _unchanged_run(mining, out, site)
    kept = None
    if mining.cache_dir is not None and inputs:
        kept = digest.rendered_cache(mining.cache_dir)
        start = time.perf_counter()
        files = kept.get(inputs)
        if isinstance(files, dict) and "" in files:
            return _replayed_run(mining, out, files, time.perf_counter() - start)
    mined = analyze_mining(mining)
    record: dict[str, list[tuple[str, str | bytes]]] | None = {} if kept is not None else None
    reporter = mining.reporter
    counts = publish(
        mined, out, site=site, jobs=jobs, inputs=inputs, record=record, reporter=reporter
    )
    if kept is not None and record is not None:
        start = time.perf_counter()
        with reporter.stage("keeping") as stage:
            kept.put(inputs, record)
            files = sum(len(folder) for folder in record.values())
            stage.summary = f"{files:,} files cached for a run from the same inputs"
        counts["seconds"]["writing"] += time.perf_counter() - start
    seconds = {**mined.seconds, **counts["seconds"]}
    return MineRun(mined.result, counts, seconds, skipped=False, reused=mined.reused)


def _unchanged_run(mining: Mining, out: Path, site: bool) -> MineRun:
    """What :func:`mine_into` did when ``out`` holds the output already: no
    time but the extraction's, every listed file unchanged."""
    mining.reporter.line(
        f"facts, analysis, rendering, writing: skipped ({out} was published from the same inputs)"
    )
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


def _replayed_run(
    mining: Mining, out: Path, files: dict[str, list[tuple[str, str | bytes]]], loaded: float
) -> MineRun:
    """:func:`mine_into` with the ``files`` of a run from the same inputs,
    read from the cache in ``loaded`` seconds: written again (:func:`replay`)."""
    mining.reporter.line(
        "facts, analysis, rendering: skipped (the files of a run from the same inputs are kept)"
    )
    again = replay(mining.result, out, files, reporter=mining.reporter)
    seconds = {**mining.seconds, "facts": 0.0, "analysis": 0.0, "rendering": loaded}
    seconds["writing"] = again["seconds"]["writing"]
    return MineRun(mining.result, again, seconds, False, False, replayed=True)


def _failed_example(result: MineResult) -> str:
    """`` (e.g. 'path': reason)`` of the first file that failed, or ""."""
    failed = [f for f in result.files if f.status == "failed"]
    reason = shorten(" ".join((failed[0].reason or "").split()), 120) if failed else ""
    return f" (e.g. {failed[0].path!r}: {reason})" if failed else ""


def replay(
    result: MineResult,
    out: Path,
    files: dict[str, list[tuple[str, str | bytes]]],
    *,
    reporter: Reporter | None = None,
) -> dict:
    """Publish into ``out`` the files a run from the same inputs wrote
    (``files``: folder ("" or "site") -> its recorded ``(path, text)``;
    :func:`miner.publish.output.replay`), with the checks of :func:`publish`,
    as the stage ``writing`` of ``reporter``.
    Returns :func:`publish`'s counts (all the time is ``writing``).

    Raises:
        OutputError, WorseOutputError: see :func:`publish`.
    """
    start = time.perf_counter()
    total = sum(len(kept) for kept in files.values())
    with (reporter or silent()).stage("writing", total=total) as stage:
        with output.publication(out) as pub:
            manifest = next(text for rel, text in files[""] if rel == records.MANIFEST)
            counts = json.loads(manifest)["counts"]
            output.check_not_worse(pub.previous, counts, out, _failed_example(result))
            pub.folder.on_write = _advance(stage)
            done = output.replay(pub.folder, files[""])
            written = {k: done[k] for k in ("written", "unchanged", "removed")}
            pages = None
            if "site" in files:
                folder = pub.subfolder("site")
                folder.on_write = _advance(stage)
                pages = output.replay(folder, files["site"])
        _count_files(stage, written, pages)
    seconds = {"rendering": 0.0, "writing": time.perf_counter() - start}
    return {"output": written, "site": pages, "seconds": seconds}


def publish(
    mined: Mined,
    out: Path,
    *,
    site: bool = False,
    jobs: int | None = None,
    inputs: str = "",
    record: dict[str, list[tuple[str, str | bytes]]] | None = None,
    reporter: Reporter | None = None,
) -> dict:
    """Write the records and cards of ``mined`` under ``out`` and, with
    ``site``, the HTML site under ``out / "site"``: published as a whole (the
    old output or the new one, never a mix: :mod:`miner.publish.output`).
    ``inputs`` (:func:`publish_inputs`) goes into the manifest; a ``record``
    dict receives, per folder ("" and "site"), every ``(path, text)`` written
    (what :func:`replay` writes again). The files are rendered as they are
    written: ``reporter`` shows both as its stage ``writing``.

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
    with (reporter or silent()).stage("writing") as stage, output.publication(out) as pub:
        opened = time.perf_counter()
        result = mined.result
        counts = records.manifest_json(result, mined.analyses)["counts"]
        output.check_not_worse(pub.previous, counts, out, _failed_example(result))
        if record is not None:
            pub.folder.record = record.setdefault("", [])
        pub.folder.on_write = _advance(stage)
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
            folder.on_write = _advance(stage)
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
        _count_files(stage, written, pages)
        stage.notes.append(f"rendering {duration(stage.meter.elapsed() - writing)} of it")
    writing += time.perf_counter() - closing
    total = time.perf_counter() - start
    seconds = {"rendering": max(0.0, total - writing), "writing": writing}
    return {"output": written, "site": pages, "seconds": seconds}


def _advance(stage: Stage) -> Callable[[str], None]:
    """A :attr:`miner.publish.output.Folder.on_write` that counts each file
    written as a worked item of ``stage``."""
    return lambda _rel: stage.advance()


def _count_files(stage: Stage, written: dict[str, int], site: dict[str, int] | None) -> None:
    """``stage``'s end line: the files written, unchanged and removed (the
    records and cards and, when given, the site)."""
    for key in ("written", "unchanged", "removed"):
        stage.count(key, written.get(key, 0) + (site or {}).get(key, 0))


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
    if dest_real.is_relative_to(out_real):
        output.check_site_inside(out, dest)  # before the records are read
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
    reporter: Reporter | None = None,
) -> ReleaseRun:
    """Mine ``tags`` in the order given and write the release site under ``out``:
    the newest release's records and cards, a card for every error an older
    release raised, each error's history, and the diff of each consecutive
    pair, in Markdown and JSON, and the same as an HTML site in ``out/site``
    (every error of every release with a page, :class:`miner.publish.html.ReleaseView`;
    ``jobs`` processes render its cards, default one per CPU). ``reporter``
    shows the stages of each release (``v0.5.19 extraction``, ``v0.5.19
    calls``), then the newest's facts and analysis, the retired errors'
    analysis and the writing (:mod:`miner.progress`; default: nothing).

    Raises:
        SourceError: the repository or a tag cannot be used.
        OutputError: ``out`` cannot be written.
        ReleaseError: ``tags`` is empty.
    """
    if not tags:
        raise ReleaseError("no releases to document; check --tags")
    with locked(out):
        output.check_output(out)
        return _document(
            repo_arg, tags, out, slug, cache_dir, partial, on_release, jobs, reporter or silent()
        )


def _document(
    repo_arg: str,
    tags: Sequence[str],
    out: Path,
    slug: str | None,
    cache_dir: Path | None,
    partial: bool,
    on_release: Callable[[str, MineResult], None] | None,
    jobs: int | None,
    reporter: Reporter,
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
            with reporter.paused():
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
                reporter=reporter,
                label=f"{tag} ",
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
    return _publish_releases(out, book, newest, index, commits, diffs, jobs, reporter)


def _publish_releases(
    out: Path,
    book: HistoryBook,
    newest: Mining,
    index: ReleaseIndexBuilder,
    commits: list[CommitInfo],
    diffs: dict[str, release_pages.ReleaseDiff],
    jobs: int | None,
    reporter: Reporter,
) -> ReleaseRun:
    """The end of :func:`_document` once every release is mined: the newest
    release analysed, the retired errors analysed, and the release site
    written into ``out`` (its Markdown and JSON, and the HTML site)."""
    # analysed after the history is built: the older releases' records that
    # no card needs are freed by then, and the workers fork from less memory
    analysed = analyze_mining(newest)
    workers = max(1, default_jobs() if jobs is None else jobs)
    with reporter.stage("retired analysis", total=len(book.retired), unit="error") as stage:
        retired = retired_analyses(book, jobs=workers, progress=stage.advance)
    with reporter.stage("writing") as stage, output.publication(out) as pub:
        pub.folder.on_write = _advance(stage)
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
        site_folder = pub.subfolder("site")
        site_folder.on_write = _advance(stage)
        site_counts = html.write_site_into(
            site_folder,
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
        _count_files(stage, counts, site_counts)
    return ReleaseRun(
        releases=book.releases,
        diffs=tuple(diffs),
        counts=counts,
        errors=len(analysed.result.errors),
        retired=len(book.retired),
        site=site_counts,
    )


def retired_analyses(
    book: HistoryBook, jobs: int = 1, progress: Callable[[int], None] | None = None
) -> list[tuple[Error, CommitInfo, Analysis]]:
    """Every retired error with the last commit that raised it and its analysis,
    written from its sites alone (the old commit's configuration model is not
    kept, so the card names no setting it cannot prove existed there); ``jobs``
    forked processes analyse the commits, one commit's errors at a time (the
    same analyses as one process). ``progress`` is told the number of errors
    of each commit analysed."""
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
    for (sha, errors), analyses in zip(groups, fork_imap(jobs, analysed, groups), strict=True):
        out.extend((e, commits[sha], a) for e, a in zip(errors, analyses, strict=True))
        if progress is not None:
            progress(len(errors))
    return out


def documented_releases(out: Path) -> list[str]:
    """The tags the release site at ``out`` documents already (oldest first)."""
    return [str(r.get("tag")) for r in release_pages.read_releases(out)]
