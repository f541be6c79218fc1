"""The ``miner`` command: ``main(argv) -> exit code``, subcommands as plain functions.

Exit codes, decided here and nowhere else: 0 success; 1 the run finished but
some files were skipped or failed (``mine``), a diff found a change named by
``--fail-on``, a lookup found no good match, or ``check-cards`` counted a defect; 2 bad input (any
:class:`~miner.errors.MinerError`: unknown revision, not a repository, an
output folder that cannot be written or is not the tool's, another run
writing the same folder, missing records, a run that would replace a better
output: :class:`~miner.publish.output.WorseOutputError`, an id that names no
error or several: :class:`~miner.explain.ErrorIdError`), with one line on
stderr naming it; 3 ``history`` or ``release`` wrote a published site over
its size budget (:class:`~miner.publish.budget.BudgetError`: what a static
host refuses), one line on stderr; 130 interrupted (Ctrl-C, ``SIGINT``); 143 terminated
(``SIGTERM``); 141 the reader of the output went away (``miner lookup ... |
head``). Interrupted or terminated, a run publishes nothing: the output
folder is the previous one (:mod:`miner.publish.output`).
"""

from __future__ import annotations

import argparse
import gc
import json
import logging
import os
import sys
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from miner import __version__, lifecycle
from miner.errors import MinerError, UsageError
from miner.files import PUBLISHED

if TYPE_CHECKING:
    from miner.analysis.llm import LLMSettings
    from miner.model import MineResult, RunStats
    from miner.releases.diff import Diff

DEFAULT_REPO = "https://github.com/sgl-project/sglang.git"
log = logging.getLogger("miner")


def cmd_mine(args: argparse.Namespace) -> int:
    from miner.files import locked
    from miner.publish.output import check_output

    if args.jobs is not None and args.jobs < 0:
        raise UsageError(f"--jobs {args.jobs}: give 1 or more worker processes (0: no workers)")
    llm = _llm_settings(args)
    check_output(args.out)  # before the work (and the lock), not after it
    with locked(args.out):  # a second run into the same folder stops here, at once
        return _mine_locked(args, llm)


def _mine_locked(args: argparse.Namespace, llm: LLMSettings | None) -> int:
    from miner import pipeline
    from miner.mining.extraction import MineOptions
    from miner.mining.pool import Limits
    from miner.progress import Reporter
    from miner.publish.records import manifest_json

    options = MineOptions(
        jobs=args.jobs,
        cache=not args.no_cache,
        cache_dir=args.cache_dir,
        limits=Limits(file_timeout=args.file_timeout, memory_mb=args.memory_limit or None),
        origins=args.origins,
        finding_words=args.findings_words,
    )
    run = pipeline.mine_into(
        args.repo,
        args.commit,
        args.out,
        site=args.site,
        slug=args.slug,
        link_ref=args.link_ref or "",
        cache_dir=args.cache_dir,
        partial=not args.full_parse,
        options=options,
        llm=llm,
        reporter=Reporter(sys.stderr, quiet=args.quiet),
    )
    result, counts = run.result, run.counts
    output = counts["output"]
    manifest = manifest_json(result)["counts"]
    print(
        f"mined {result.commit.slug}@{result.commit.short_sha} ({args.commit}): "
        f"{manifest['files']} files, {manifest['raise_sites']} raise and "
        f"{manifest['assert_sites']} assert sites, {manifest['errors']} errors; "
        f"{output['written']} files written, {output['unchanged']} unchanged, "
        f"{output['removed']} removed"
    )
    if run.skipped:
        print("output unchanged: published from the same inputs (manifest.json); nothing redone")
    print(
        describe_stages(run.seconds, reused=run.reused, skipped=run.skipped, replayed=run.replayed)
    )
    print(f"cards: {args.out / 'errors'}  index: {args.out / 'index.md'}")
    if result.stats is not None:
        print(describe_stats(result.stats))
    else:
        print("records: read from the commit store (this commit was mined before); no blob read")
    if counts["site"] is not None:
        written = counts["site"]["written"]
        print(f"site: {args.out / 'site' / 'index.html'} ({written} files written)")
    if result.problems:
        print(
            f"{len(result.problems)} files not mined (reasons in {args.out / 'manifest.json'})",
            file=sys.stderr,
        )
        return 1
    return 0


def _llm_settings(args: argparse.Namespace) -> LLMSettings | None:
    """The LLM writer's settings, or None for the rule writer.

    Raises:
        UsageError: ``--analyst llm`` without an endpoint and a model.
    """
    if args.analyst != "llm":
        return None
    if not (args.llm_base_url and args.llm_model):
        raise UsageError("--analyst llm needs --llm-base-url URL and --llm-model NAME")
    from miner.analysis.llm import LLMSettings
    from miner.mining.source import default_cache_dir

    return LLMSettings(
        base_url=args.llm_base_url,
        model=args.llm_model,
        cache_dir=args.llm_cache or default_cache_dir() / "llm",
        api_key=os.environ.get(args.llm_api_key_env) or None,
        concurrency=args.llm_concurrency,
        timeout=args.llm_timeout,
    )


def describe_stages(
    seconds: dict[str, float], *, reused: bool, skipped: bool, replayed: bool = False
) -> str:
    """One line on where the time went: each stage's wall time, and which
    stages were skipped (same output), served from the analysis cache, or
    replaced by the files kept from a run with the same inputs (rendering:
    reading them)."""

    def part(name: str) -> str:
        note = ""
        if skipped and name != "extraction":
            note = " (skipped)"
        elif replayed and name in ("facts", "origins", "analysis", "rendering"):
            note = " (kept files)"
        elif reused and name in ("facts", "origins", "analysis"):
            note = " (cached)"
        return f"{name} {seconds.get(name, 0.0):.1f} s{note}"

    names = ("extraction", "facts", "origins", "analysis", "rendering", "writing")
    shown = [n for n in names if n != "origins" or n in seconds]  # origins: --origins only
    return "stages: " + ", ".join(part(name) for name in shown)


def describe_stats(stats: RunStats) -> str:
    """One line on what the extraction did: cache hits and misses, workers."""
    workers = f"{stats.jobs} workers" if stats.jobs else "in one process"
    line = (
        f"blobs: {stats.blobs} distinct, {stats.cache_hits} from cache (cache {stats.cache}), "
        f"{stats.parsed} parsed ({workers})"
    )
    if stats.workers_lost:
        line += f"; {stats.workers_lost} workers replaced"
    return line + f"; extraction {stats.seconds:.1f} s"


def cmd_corpus(args: argparse.Namespace) -> int:
    from miner.files import locked

    versions = [v.strip() for v in args.versions.replace(",", " ").split() if v.strip()]
    with locked(args.dest, option="--dest"):
        return _build_corpus(args, versions)


def _build_corpus(args: argparse.Namespace, versions: list[str]) -> int:
    from miner.corpus import build as corpus

    built = corpus.build_corpus(
        args.dest,
        versions,
        index_url=args.index_url,
        cache_dir=args.cache_dir,
        log=None if args.quiet else (lambda line: print(line, file=sys.stderr)),
    )
    state = "reused" if built.reused else "built"
    print(f"{state} {built.path}: tags {', '.join(built.tags)}")
    return 0


def _kinds(text: str) -> list[str]:
    from miner.releases.diff import ChangeKind

    known = [k.key for k in ChangeKind]
    kinds = [k.strip() for k in text.split(",") if k.strip()]
    for kind in kinds:
        if kind not in known:
            raise argparse.ArgumentTypeError(
                f"unknown change kind {kind!r}; use a comma-separated list of {', '.join(known)}"
            )
    return kinds


def cmd_diff(args: argparse.Namespace) -> int:
    import contextlib

    from miner.files import locked
    from miner.publish.output import read_manifest

    # ``--out OUT/diffs`` writes into a mined output folder: hold OUT's lock
    # too, so that a ``miner mine`` replacing OUT cannot run meanwhile; OUT is
    # found above the real path (``--out LINK``, a link into OUT, too)
    held = [args.out]
    for parent in Path(os.path.realpath(args.out)).parents:
        if read_manifest(parent) is not None:
            held.append(parent)
            break
    with contextlib.ExitStack() as stack:
        for folder in held:
            stack.enter_context(locked(folder))
        return _diff_locked(args)


def _diff_locked(args: argparse.Namespace) -> int:
    from miner import pipeline
    from miner.publish import output
    from miner.publish import releases as pages

    stem = pages.revs_stem(args.old, args.new)  # checked before both are mined
    output.check_report_folder(args.out, [f"{stem}.md", f"{stem}.json"])
    changes = pipeline.diff_commits(
        args.repo,
        args.old,
        args.new,
        slug=args.slug,
        cache_dir=args.cache_dir,
        reuse=not args.fresh,
    )
    md, js = pages.write_diff(
        changes,
        args.out,
        pages.diff_stem(changes),
        old_cards=args.old_cards,
        new_cards=args.new_cards,
        unchanged=args.unchanged,
    )
    counts = changes.counts()
    failing = [kind for kind in args.fail_on if counts[kind]]
    if args.format == "json":
        # ASCII only: a title is mined text, and \uXXXX prints no control character
        print(json.dumps(_diff_json(args, changes, (md, js), failing), indent=2))
    else:
        text = ", ".join(f"{n} {kind}" for kind, n in counts.items())
        print(f"{args.old} -> {args.new}: {text}")
        print(f"report: {md}  json: {js}")
    if failing:
        print(f"failing on: {', '.join(failing)}", file=sys.stderr)
        return 1
    return 0


def _diff_json(
    args: argparse.Namespace, changes: Diff, reports: tuple[Path, Path], failing: list[str]
) -> dict[str, Any]:
    """``miner diff --format json``: the revisions, the counts of each change
    kind, the reports written, the kinds ``--fail-on`` found, and each change
    as its kind, old and new error id and title (unchanged ones only with
    ``--unchanged``; the full records are in the .json report)."""
    return {
        "from": args.old,
        "to": args.new,
        "counts": changes.counts(),
        "report": str(reports[0]),
        "json": str(reports[1]),
        "failing": failing,
        "changes": [
            {
                "kind": c.kind.key,
                "old": None if c.old is None else c.old.error_id,
                "new": None if c.new is None else c.new.error_id,
                "title": c.error.title,
            }
            for c in changes.changes
            if args.unchanged or c.kind.key != "unchanged"
        ],
    }


def _print_release(tag: str, result: MineResult) -> None:
    print(f"{tag}: {len(result.errors)} errors", file=sys.stderr)


def _document(args: argparse.Namespace, tags: list[str]) -> int:
    """Run :func:`miner.pipeline.document_releases` over ``tags`` and print what it did."""
    from miner import pipeline
    from miner.progress import Reporter

    run = pipeline.document_releases(
        args.repo,
        tags,
        args.out,
        slug=args.slug,
        cache_dir=args.cache_dir,
        on_release=_print_release,
        jobs=args.jobs,
        reporter=Reporter(sys.stderr, quiet=args.quiet),
    )
    out = args.out
    print(
        f"documented {len(run.releases)} releases ({run.releases[0]} .. {run.releases[-1]}): "
        f"{run.errors} errors in {run.releases[-1]}, {run.retired} retired or superseded ids, "
        f"{len(run.diffs)} diffs; {run.counts['written']} files written, "
        f"{run.counts['unchanged']} unchanged, {run.counts['removed']} removed"
    )
    site = run.site
    print(
        f"site: {out / 'site' / 'index.html'} ({site.get('written', 0)} files written, "
        f"{site.get('unchanged', 0)} unchanged, {site.get('removed', 0)} removed)  "
        f"Markdown: {out / 'index.md'}  releases: {out / 'releases.md'}"
    )
    _check_budget(args)
    return 0


def _check_budget(args: argparse.Namespace) -> None:
    """Print the published site's size (``OUT/site``, what the release
    workflow deploys) and raise when it is over ``--max-bytes`` or
    ``--max-files`` (:func:`miner.publish.budget.check`)."""
    from miner.publish import budget

    site = args.out / "site"
    if not site.is_dir():
        return
    size = budget.check(site, budget.Budget(args.max_bytes, args.max_files))
    print(
        f"published: {site}: {size.text()} "
        f"(budget {args.max_bytes:,} bytes, {args.max_files:,} files)"
    )


def cmd_history(args: argparse.Namespace) -> int:
    from miner.errors import ReleaseError
    from miner.mining import source
    from miner.releases.versions import select_tags

    repo = source.open_repo(args.repo, args.to or "HEAD", args.cache_dir)
    tags = select_tags(repo, args.tags, start=args.from_tag, end=args.to)
    if not tags:
        raise ReleaseError(f"no tag of {args.repo} matches {args.tags!r}; check --tags")
    return _document(args, tags)


def cmd_release(args: argparse.Namespace) -> int:
    from miner import pipeline
    from miner.mining import source
    from miner.releases.versions import release_tags, select_tags

    repo = source.open_with_tags(args.repo, args.cache_dir)
    tags, newest = release_tags(
        select_tags(repo, args.tags), pipeline.documented_releases(args.out), args.since, args.tags
    )
    if not tags:
        print(
            f"nothing new: {newest}, the newest tag matching {args.tags!r}, "
            f"is already documented in {args.out}"
        )
        _check_budget(args)
        return 0
    return _document(args, tags)


REPO_HELP = "git URL or local path (default: %(default)s)"
CACHE_HELP = "cache folder (default: $RAISE_MINER_CACHE or $XDG_CACHE_HOME/raise-miner)"
QUIET_HELP = "no progress on stderr (the per-release lines stay)"
OVER_BUDGET = (
    "the published site OUT/site is over --max-bytes or --max-files (written, not deployable)"
)


def _add_diff_command(sub: argparse._SubParsersAction) -> None:
    """``diff``."""
    d = _command(
        sub,
        "diff",
        "added, removed, changed and moved errors between two commits",
        "Compare the errors of two commits of REPO: which were added, removed, changed "
        "(reworded, another exception type, other guards or sites) and moved (to "
        "another file or scope) and, with --unchanged, which stayed the same, by "
        "mining both (or reusing the results stored by an earlier run, unless --fresh). "
        "Writes the report <FROM>..<TO>.md and its .json into OUT and prints the counts; "
        "--format json prints them, the report paths and the failing kinds as JSON.",
        "miner diff v0.5.18 v0.5.19 --repo .corpus/sglang --fail-on removed,changed",
        (
            ("0", "compared (whatever changed, unless --fail-on names it)"),
            ("1", "a change of a kind named by --fail-on was found"),
            ("2", BAD_INPUT + " (an unknown revision, not a repository)"),
        ),
    )
    d.add_argument("old", metavar="FROM", help="the old commit, tag or branch")
    d.add_argument("new", metavar="TO", help="the new commit, tag or branch")
    d.add_argument("--repo", default=DEFAULT_REPO, help=REPO_HELP)
    d.add_argument(
        "--out",
        type=Path,
        default=Path("output/diffs"),
        help="folder for <FROM>..<TO>.md and .json (default: %(default)s)",
    )
    d.add_argument("--slug", help="owner/name for headers and links")
    d.add_argument("--cache-dir", type=Path, help=CACHE_HELP)
    d.add_argument(
        "--fail-on",
        type=_kinds,
        default=[],
        metavar="KINDS",
        help="exit 1 when any change of these kinds is found (e.g. added,removed)",
    )
    d.add_argument("--unchanged", action="store_true", help="list unchanged errors too")
    d.add_argument("--old-cards", help="link prefix of FROM's cards (e.g. ../v1/errors/)")
    d.add_argument("--new-cards", help="link prefix of TO's cards")
    d.add_argument("--fresh", action="store_true", help="mine again instead of reusing results")
    _add_format(d)
    d.set_defaults(func=cmd_diff)


def _add_history_commands(sub: argparse._SubParsersAction) -> None:
    """``history`` and ``release``."""
    h = _command(
        sub,
        "history",
        "mine releases in order into a site with error histories",
        "Mine the tags of REPO matching --tags (from --from to --to, in version order) "
        "and write a release site into OUT: the newest release's records and cards, a "
        "card for every error an older release raised, each error's history (when it "
        "appeared, changed, moved or was retired), the diff of each consecutive pair "
        "of releases, releases.md, and the HTML site in OUT/site.",
        "miner history --repo .corpus/sglang --from v0.5.16 --to v0.5.19 --out site",
        (
            ("0", "documented"),
            ("2", BAD_INPUT + " (no tag matches --tags, an unknown tag, an output in use)"),
            ("3", OVER_BUDGET),
        ),
    )
    _add_site_arguments(h)
    h.add_argument("--from", dest="from_tag", help="first tag (inclusive)")
    h.add_argument("--to", help="last tag (inclusive)")
    h.set_defaults(func=cmd_history)

    r = _command(
        sub,
        "release",
        "document the newest tag if it is not yet (a no-op otherwise)",
        "Keep a release site up to date: when the newest tag of REPO matching --tags "
        "is not documented in OUT yet, document the releases from the first one the "
        "site holds (for an empty site: --since, or the tag before the newest) to the "
        "newest, as `miner history` does; when it is, print so and change nothing.",
        "miner release --repo .corpus/sglang --out site",
        (
            ("0", "documented, or nothing new"),
            ("2", BAD_INPUT + " (no tag matches --tags, --since is not one of them)"),
            ("3", OVER_BUDGET),
        ),
    )
    _add_site_arguments(r)
    r.add_argument(
        "--since", help="first release of an empty site (default: the tag before the newest)"
    )
    r.set_defaults(func=cmd_release)


def _add_site_arguments(parser: argparse.ArgumentParser) -> None:
    """The arguments ``history`` and ``release`` share: where the releases
    come from, which tags, the site folder, links, cache, workers, quiet."""
    parser.add_argument("--repo", default=DEFAULT_REPO, help=REPO_HELP)
    parser.add_argument("--tags", default="v*", help="tag glob (default: %(default)s)")
    parser.add_argument(
        "--out", type=Path, default=Path("site"), help="site folder (default: %(default)s)"
    )
    parser.add_argument("--slug", help="owner/name for headers and links")
    parser.add_argument("--cache-dir", type=Path, help=CACHE_HELP)
    parser.add_argument(
        "-j", "--jobs", type=int, help="processes rendering HTML cards (default: CPUs)"
    )
    parser.add_argument("-q", "--quiet", action="store_true", help=QUIET_HELP)
    parser.add_argument(
        "--max-bytes",
        type=int,
        default=1_000_000_000,
        help="size budget of the published site OUT/site in bytes; over it, exit 3 "
        "(default: %(default)s, GitHub and GitLab Pages' 1 GB)",
    )
    parser.add_argument(
        "--max-files",
        type=int,
        default=200_000,
        help="file budget of the published site; over it, exit 3 "
        "(default: %(default)s, GitLab Pages' limit)",
    )


def cmd_site(args: argparse.Namespace) -> int:
    from miner import pipeline

    dest = args.dest or args.out / "site"
    errors, stats = pipeline.republish_site(args.out, dest, jobs=args.jobs)
    print(
        f"site: {dest / 'index.html'}: {errors} error pages; {stats['written']} "
        f"files written, {stats['unchanged']} unchanged, {stats['removed']} removed; "
        f"{stats['bytes'] / 2**20:.1f} MiB"
    )
    return 0


def cmd_lookup(args: argparse.Namespace) -> int:
    from miner import lookup

    text = _paste(args.text)
    if args.history is not None:
        book = lookup.ReleaseBook.load(args.history)
        found = lookup.search_releases(book, text, limit=args.limit)
        if args.format == "json":
            print(lookup.report_releases_json(book, text, found, args.history, args.base_url))
        else:
            print(lookup.report_releases_text(book, found, args.history, args.base_url))
        return 0 if found and found[0].good else 1
    index = lookup.LookupIndex.load(args.out)
    matches = index.search(text, limit=args.limit)
    report = lookup.report_json if args.format == "json" else lookup.report_text
    print(report(text, matches, args.out, args.base_url))
    return 0 if matches and matches[0].good else 1


def _paste(words: Sequence[str]) -> str:
    """The text ``miner lookup`` searches: its words joined by spaces, or
    standard input when none is given or the only one is ``-`` (read as
    UTF-8, an invalid byte as U+FFFD).

    Raises:
        UsageError: the text is blank, or no words and standard input is a
            terminal (nothing piped: the command would wait for a paste).
    """
    if list(words) in ([], ["-"]):
        if not words and sys.stdin.isatty():
            raise UsageError(
                "nothing to look up: pass the message (after -- when it starts with -), "
                "pipe it on standard input, or give - to type it"
            )
        raw = getattr(sys.stdin, "buffer", None)
        text = sys.stdin.read() if raw is None else raw.read().decode("utf-8", "replace")
    else:
        text = " ".join(words)
    if not text.strip():
        raise UsageError("nothing to look up: the paste is empty; pass the message or pipe it")
    return text


def cmd_check_cards(args: argparse.Namespace) -> int:
    import json

    from miner.checks import check_cards, format_report
    from miner.errors import RecordsError

    if not (args.dir / "manifest.json").is_file():
        raise RecordsError(
            f"{args.dir}: no mined records here (manifest.json missing); "
            "run `miner mine --out` first"
        )
    report = check_cards(args.dir)
    if args.format == "json":
        print(json.dumps(report.to_json(), indent=2, ensure_ascii=False))
    else:
        print(format_report(report))
    return 1 if report.has_defects else 0


def cmd_explain(args: argparse.Namespace) -> int:
    from miner import explain

    explained = explain.explain(args.out, args.error_id)
    show = explain.explain_json if args.format == "json" else explain.explain_text
    print(show(explained, origins=args.origins), end="")
    return 0


#: What every ``--help`` ends with: the exit codes no command decides itself.
STOP_CODES = (
    ("130", "interrupted (Ctrl-C)"),
    ("141", "the reader of the output went away (`miner ... | head`)"),
    ("143", "terminated (SIGTERM)"),
)
#: Exit 2, as every command gives it.
BAD_INPUT = "bad input: one line on stderr names it and what to do"


def _help_text(example: str | None, codes: Sequence[tuple[str, str]]) -> str:
    """``--help``'s epilog: ``Example:`` (indented lines) and ``Exit codes:``
    (one ``code  meaning`` line each, wrapped to 79 columns)."""
    lines = []
    if example is not None:
        lines += ["Example:", *(f"  {line}" for line in example.splitlines()), ""]
    lines.append("Exit codes:")
    for code, meaning in (*codes, *STOP_CODES):
        lines += textwrap.wrap(
            meaning, 79, initial_indent=f"  {code:<5}", subsequent_indent=" " * 7
        )
    return "\n".join(lines)


def _command(
    sub: argparse._SubParsersAction,
    name: str,
    summary: str,
    about: str,
    example: str,
    codes: Sequence[tuple[str, str]],
) -> argparse.ArgumentParser:
    """A subcommand whose ``--help`` has ``about`` (one paragraph, wrapped),
    an example and its exit codes; ``summary`` is its line in ``miner --help``."""
    return sub.add_parser(
        name,
        help=summary,
        description=textwrap.fill(about, 79),
        epilog=_help_text(example, codes),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )


def _add_format(parser: argparse.ArgumentParser, json_alias: bool = False) -> None:
    """``--format text|json`` (and, with ``json_alias``, the older ``--json``,
    hidden: the same as ``--format json``)."""
    parser.add_argument(
        "--format",
        choices=["text", "json"],
        default="text",
        help="text for people (default) or json for tools",
    )
    if json_alias:
        parser.add_argument(
            "--json", dest="format", action="store_const", const="json", help=argparse.SUPPRESS
        )


def build_parser() -> argparse.ArgumentParser:
    """The ``miner`` command line: the subcommands and their options."""
    parser = argparse.ArgumentParser(
        prog="miner",
        description=textwrap.fill(
            "Mine raise and assert sites of a Python repository at a pinned commit into "
            "error records and cards, and read them back: look up a pasted error, explain "
            "one by its id, compare commits, document releases.",
            79,
        ),
        epilog=_help_text(
            "miner mine --repo . --commit v1.0 --out output\n"
            'miner lookup -- "ValueError: --tp-size must be positive"\n'
            "miner explain 3f2a",
            (
                ("0", "success"),
                (
                    "1",
                    "the command ran and found something to report: files not mined "
                    "(mine), a change named by --fail-on (diff), no good match (lookup), "
                    "a defect (check-cards)",
                ),
                ("2", BAD_INPUT),
            ),
        )
        + "\n\nInterrupted or terminated, a run publishes nothing: the output folder is\n"
        "the previous one. Run `miner COMMAND --help` for a command's options, its\n"
        "example and its exit codes.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("-V", "--version", action="version", version=f"%(prog)s {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log every skipped file")
    sub = parser.add_subparsers(dest="command", required=True, title="commands", metavar="COMMAND")
    _add_mine_command(sub)
    _add_output_commands(sub)
    _add_lookup_commands(sub)
    _add_explain_command(sub)
    _add_diff_command(sub)
    _add_history_commands(sub)
    return parser


def _add_mine_command(sub: argparse._SubParsersAction) -> None:
    """``mine``."""
    mine = _command(
        sub,
        "mine",
        "mine one commit into records and cards",
        "Mine every raise and assert of the Python files of REPO at one commit (resolved "
        "once: the run is pinned) into records (sites.jsonl, analyses.jsonl, "
        "api/errors/<id>.json, manifest.json) and Markdown cards: errors/<id>.md for "
        "an error a user can cause and fix, a page per module for internal, abstract, "
        "test and script errors, and index.md. OUT is published as a whole: a stopped "
        "or failed run leaves the previous output; the same inputs again rewrite "
        "nothing. With --site, the HTML site is written into OUT/site too.",
        "miner mine --repo https://github.com/sgl-project/sglang.git --commit v0.5.19 \\\n"
        "    --out output --link-ref v0.5.19",
        (
            ("0", "mined and published"),
            ("1", "published, but some files were not mined (reasons in OUT/manifest.json)"),
            (
                "2",
                "bad input: an unknown revision, not a repository, an output folder that "
                "cannot be written or is not the tool's, another run writing OUT, a run "
                "that would replace a better output",
            ),
        ),
    )
    mine.add_argument(
        "--repo", default=DEFAULT_REPO, help="git URL or local path (default: %(default)s)"
    )
    mine.add_argument("--commit", required=True, help="full or abbreviated SHA, tag or branch")
    mine.add_argument(
        "--out", type=Path, default=Path("output"), help="output folder (default: %(default)s)"
    )
    mine.add_argument(
        "--slug", help="owner/name for headers and links (default: from the URL or origin)"
    )
    mine.add_argument("--link-ref", help="ref used in source links (default: the full commit SHA)")
    mine.add_argument(
        "--cache-dir",
        type=Path,
        help="folder for clones and the blob cache (default: $XDG_CACHE_HOME/raise-miner)",
    )
    mine.add_argument(
        "--site", action="store_true", help="also write the HTML site into OUT/site (miner site)"
    )
    mine.set_defaults(func=cmd_mine)
    _add_mine_limits(mine)
    _add_llm_options(mine)


def _add_mine_limits(mine: argparse.ArgumentParser) -> None:
    """``mine``'s workers, cache and per-file limits."""
    mine.add_argument(
        "-j",
        "--jobs",
        type=int,
        metavar="N",
        help="worker processes (default: the CPUs available; 0: mine in this process, "
        "without crash isolation)",
    )
    mine.add_argument(
        "--no-cache", action="store_true", help="neither read nor write the blob cache"
    )
    mine.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help="no progress on stderr (default: a live line per stage on a terminal, "
        "else one line per stage as it ends)",
    )
    mine.add_argument(
        "--file-timeout",
        type=float,
        default=60.0,
        metavar="SECONDS",
        help="give up a file after this long (default: %(default)g; 0: no limit)",
    )
    mine.add_argument(
        "--memory-limit",
        type=int,
        default=4096,
        metavar="MB",
        help="address-space limit per worker in MiB (default: %(default)s; 0: no limit)",
    )
    mine.add_argument(
        "--full-parse",
        action="store_true",
        help="parse whole modules with libcst instead of only the units holding sites",
    )
    mine.add_argument(
        "--origins",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="trace every value each raise depends on to a flag, variable, model config, "
        "request, hardware or package, and find errors a handler logs or no call can reach; "
        "the audiences are decided from them (into the records; miner explain --origins "
        "shows them; default: on; --no-origins skips the stage and decides audiences from "
        "the guards' words, faster but coarser)",
    )
    mine.add_argument(
        "--findings-words",
        action="store_true",
        help="word the cards' What it means, Solutions and Example fix from the verified "
        "findings (cause, reason, fixes; templates/findings.md.j2) instead of the rule "
        "writer's sections; the findings are in the JSON records either way (default: off "
        "while the findings do not yet state every fact the golden cards verify)",
    )


def _add_llm_options(mine: argparse.ArgumentParser) -> None:
    """``mine``'s optional LLM writer."""
    mine.add_argument(
        "--analyst",
        choices=["rules", "llm"],
        default="rules",
        help="who writes the card prose: rules over the mined facts (default), or an LLM "
        "endpoint checked against them (falls back to rules per card)",
    )
    mine.add_argument(
        "--llm-base-url", help="OpenAI-compatible base URL, e.g. http://host:30000/v1"
    )
    mine.add_argument("--llm-model", help="model name sent to the endpoint")
    mine.add_argument(
        "--llm-api-key-env",
        default="OPENAI_API_KEY",
        help="environment variable holding the API key, if any (default: %(default)s)",
    )
    mine.add_argument(
        "--llm-cache", type=Path, help="answer cache folder (default: <cache-dir>/llm)"
    )
    mine.add_argument("--llm-concurrency", type=int, default=4, help="parallel requests")
    mine.add_argument("--llm-timeout", type=float, default=60.0, help="seconds per request")


def _add_output_commands(sub: argparse._SubParsersAction) -> None:
    """``corpus`` and ``site``."""
    corpus = _command(
        sub,
        "corpus",
        "build the SGLang release repository from PyPI wheels",
        "Build a git repository of SGLang's releases from the wheels on the package "
        "index: one commit per version (the package's files where they live upstream, "
        "python/sglang/...), each tagged v<version>, oldest first on main. The same "
        "versions and wheels give the same commit SHAs on any machine; a repository "
        "that already holds the versions is reused, one that holds fewer is extended.",
        "miner corpus --dest .corpus/sglang --versions 0.5.18,0.5.19",
        (("0", "built, extended or reused"), ("2", BAD_INPUT + " (the index cannot be read)")),
    )
    corpus.add_argument("--dest", type=Path, default=Path(".corpus/sglang"))
    corpus.add_argument(
        "--versions",
        default="0.5.16 0.5.17 0.5.18 0.5.19 0.5.20 0.5.21 0.5.22 0.5.23",
        help="releases to include, space or comma separated",
    )
    corpus.add_argument("--index-url", default="https://pypi.org/simple")
    corpus.add_argument("--cache-dir", type=Path, help="where downloaded wheels are kept")
    corpus.add_argument("-q", "--quiet", action="store_true")
    corpus.set_defaults(func=cmd_corpus)

    site = _command(
        sub,
        "site",
        "write the HTML site of a mined output folder",
        "Write the HTML site of a mined output folder from its records alone, without "
        "mining or analysing again: the same files as `miner mine --site`. A file is "
        "rewritten only when its content changed, and files an earlier run wrote that "
        "are no longer part of the site are removed.",
        "miner site --out output --dest output/site",
        (("0", "written"), ("2", BAD_INPUT + " (no records in OUT: run `miner mine` first)")),
    )
    site.add_argument("--out", type=Path, default=Path("output"), help="mined output folder")
    site.add_argument("--dest", type=Path, help="site folder (default: OUT/site)")
    site.add_argument("-j", "--jobs", type=int, help="processes rendering cards (default: CPUs)")
    site.set_defaults(func=cmd_site)


def _add_lookup_commands(sub: argparse._SubParsersAction) -> None:
    """``lookup`` and ``check-cards``."""
    lookup = _command(
        sub,
        "lookup",
        "find the card for a pasted error or traceback",
        "Find the card of a pasted error message, log line or traceback: the paste is "
        "parsed (log prefixes stripped, every exception of a chained traceback and its "
        "frames) and matched against the message templates and raise sites of a mined "
        "folder; results are shown best first, with their score, site, card and why. "
        "The paste is the words given (put -- before one that starts with -), or "
        "standard input when none is given or the only one is -. With --history SITE, "
        "every release of a release site is searched and the answer says which "
        "releases raise the error.",
        'miner lookup -- "--mem-fraction-static 1.2 must be at most 1"\n'
        "python serve.py 2>&1 | tail -20 | miner lookup --out output",
        (
            ("0", "a card matches well"),
            ("1", "no card matches well (the closest candidates are shown)"),
            ("2", BAD_INPUT + " (an empty paste, no records)"),
        ),
    )
    lookup.add_argument(
        "text",
        nargs="*",
        metavar="TEXT",
        help="the paste, its words joined by spaces (none or -: standard input)",
    )
    lookup.add_argument(
        "--out", "--data", dest="out", type=Path, default=Path("output"), help="mined folder"
    )
    lookup.add_argument(
        "--history",
        type=Path,
        metavar="SITE",
        help="search every release of a release site (`miner history` / `miner release` "
        "output) instead of one mined folder",
    )
    lookup.add_argument("--limit", type=int, default=5, help="results shown (default: 5)")
    lookup.add_argument("--base-url", help="print card URLs under this site URL")
    _add_format(lookup, json_alias=True)
    lookup.set_defaults(func=cmd_lookup)

    check = _command(
        sub,
        "check-cards",
        "lint a mined folder's cards: duplicate prose and defects",
        "Lint the cards of a mined folder: per audience, the share of cards whose "
        '"What it means" or "Solutions" reads like another card\'s once names are '
        'replaced, the share whose "What it means" cites evidence, and the defects '
        "counted per card (double negations, an OR told as an AND, a claim that "
        "nothing guards a guarded raise, a title cut mid-word...) with example ids; and "
        "what a reader sees per audience, from the records' kinds: the sections left out, "
        "the median and 90th percentile of words without the source excerpt, example "
        "fixes that only restate the condition (limit 0), Solutions that are only a "
        "negated condition (limit 5%) and switches given a value (limit 0).",
        "miner check-cards output --format json",
        (
            ("0", "no defect found"),
            ("1", "some card has a defect"),
            ("2", BAD_INPUT + " (DIR holds no mined records)"),
        ),
    )
    check.add_argument("dir", type=Path, nargs="?", default=Path("output"), help="mined folder")
    _add_format(check, json_alias=True)
    check.set_defaults(func=cmd_check_cards)


def _add_explain_command(sub: argparse._SubParsersAction) -> None:
    """``explain``."""
    explain = _command(
        sub,
        "explain",
        "print one error's card in the terminal, by id or id prefix",
        "Print the card of one error of a mined folder, like `rustc --explain`: "
        "ERROR_ID is the error's id or a prefix of it that no other id shares. The card "
        "(errors/<id>.md, or the error's entry on its module's page for an internal, "
        "abstract, test or script error) is rendered for a terminal, with every control "
        "and format character of the mined text shown as an escape. --format json "
        "prints the error's JSON record (api/errors/<id>.json) as stored; --origins "
        "prints how the analysis linked the guards to settings instead of the card.",
        "miner explain 3f2a9c\nminer explain 3f2a9c --origins --format json",
        (
            ("0", "printed"),
            ("2", BAD_INPUT + " (no error with this id or prefix, several, no records)"),
        ),
    )
    explain.add_argument("error_id", metavar="ERROR_ID", help="an error id or a unique prefix")
    explain.add_argument(
        "--out", type=Path, default=Path("output"), help="mined folder (default: %(default)s)"
    )
    _add_format(explain)
    explain.add_argument(
        "--origins",
        action="store_true",
        help="print the reach condition, the guards linked to settings and each site's "
        "guards (and origins, when the records have them) instead of the card",
    )
    explain.set_defaults(func=cmd_explain)


def _stopped(stop: BaseException, *, quiet: bool = True) -> int:
    """Print the one line of a run a stop signal ended; its exit code (130
    Ctrl-C, 143 ``SIGTERM``). ``quiet``: ignore the stop signals first."""
    if quiet:
        lifecycle.quiet()  # a second signal now would cut the line below
    interrupted = isinstance(stop, KeyboardInterrupt)
    print(
        f"miner: {'interrupted' if interrupted else 'terminated'}; {_after_stop()}",
        file=sys.stderr,
    )
    return 130 if interrupted else lifecycle.TerminatedError.exit_code


def _after_stop() -> str:
    """What a stopped run left: nothing new, or the folder it had published."""
    if PUBLISHED:
        return f"{PUBLISHED[-1]} was published before the stop"
    return "the previous output is kept"


#: The cyclic collector's thresholds in the ``miner`` command (Python's
#: default: 700, 10, 10). A run holds millions of young objects (records,
#: syntax trees, facts) and frees almost nothing by collecting: on v0.5.19 the
#: defaults spent 13.6 s of the facts and analysis stages in 8,300
#: collections, these 3.8 s in 48, for the same peak memory (740 MiB).
GC_THRESHOLDS = (100_000, 20, 10)


def run() -> None:
    """The ``miner`` command: :func:`main`, then exit with its code. The stop
    signals stay ignored once the work is done: one arriving in the
    interpreter's teardown would end it with -2 instead of the code. The
    collector runs at :data:`GC_THRESHOLDS` (forked workers inherit them)."""
    gc.set_threshold(*GC_THRESHOLDS)
    code = main(exiting=True)
    _forget_escaped_interrupt()
    sys.exit(code)


def _forget_escaped_interrupt() -> None:
    """Clear the interpreter's note of a ``KeyboardInterrupt`` that left
    code run by ``exec()`` of a string (a dataclass's methods, made while a
    module is imported). Python keeps that note even when the interrupt was
    caught (here, turned into exit 130), and a process started as ``python
    -m miner`` then ends by ``SIGINT`` at exit instead of with its code
    (status -2); a string run by ``exec()`` without an interrupt clears it."""
    exec("None")  # noqa: S102 - a constant string: only its side effect on the note


def main(argv: Sequence[str] | None = None, *, exiting: bool = False) -> int:
    """Run one subcommand; returns its exit code (see the module docstring).

    The signal handlers it installs are put back on return, unless
    ``exiting`` (the process ends right after: :func:`run`).
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.ERROR,
        format="%(message)s",
        stream=sys.stderr,
    )
    try:
        with lifecycle.handled(keep=exiting):
            return _run_command(args, exiting=exiting)
    except (KeyboardInterrupt, lifecycle.TerminatedError) as stop:
        # one arriving as the handlers are put in place (the previous ones
        # are back already unless ``exiting``)
        return _stopped(stop, quiet=exiting)


def _run_command(args: argparse.Namespace, *, exiting: bool) -> int:
    """``args.func(args)`` with the one error family turned into exit codes;
    a stop signal wins over an error it caused (a git process it ended, a
    ``KeyboardInterrupt`` Python wrapped in another error)."""
    PUBLISHED.clear()  # what this command publishes (a test runs several)
    try:
        try:
            code = int(args.func(args))
            lifecycle.check_stop()  # a stop signal whose exception was swallowed
            if exiting:
                lifecycle.quiet()
            return code
        except MinerError as exc:
            lifecycle.check_stop()
            print(f"miner: error: {exc}", file=sys.stderr)
            return exc.exit_code
        except Exception:
            lifecycle.check_stop()  # e.g. RuntimeError from __set_name__ around a Ctrl-C
            raise
    except (KeyboardInterrupt, lifecycle.TerminatedError) as stop:
        return _stopped(stop)
    except BrokenPipeError:
        # The reader went away (``| head``): no traceback, and no second error
        # when Python flushes stdout at exit.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141


if __name__ == "__main__":  # pragma: no cover
    run()
