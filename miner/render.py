"""Write a mine result: JSON records, the manifest, and the cards (Jinja2).

One Jinja2 environment renders every card; files are written atomically
(a temporary file in the same folder, then ``os.replace``) and only when their
content changed, so re-rendering a release touches only what is new. Files a
previous run wrote for errors that are gone are removed. Nothing written
depends on the wall clock, so the same commit gives byte-identical output.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from collections import Counter, defaultdict
from collections.abc import Container, Iterable, Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any

import jinja2

from miner import __version__
from miner.analysis import analyze
from miner.model import SCHEMA_VERSION, Analysis, CommitInfo, Error, History, Site
from miner.pipeline import MineResult

TEMPLATES_DIR = Path(__file__).resolve().parent.parent / "templates"


class OutputError(Exception):
    """The output folder cannot be written; the message names it."""


def dumps(data: Any) -> str:
    """Deterministic JSON text (sorted keys, two-space indent, UTF-8 kept,
    control characters such as NUL escaped) with a final newline."""
    return json.dumps(data, sort_keys=True, indent=2, ensure_ascii=False) + "\n"


def write_text(path: Path, text: str) -> bool:
    """Write ``text`` to ``path`` atomically unless it already holds it.

    Returns True when the file was (re)written.
    """
    return write_bytes(path, text.encode("utf-8", "surrogateescape"))


def write_bytes(path: Path, data: bytes) -> bool:
    """Write ``data`` to ``path`` atomically unless it already holds it.

    Returns True when the file was (re)written.
    """
    try:
        if path.read_bytes() == data:
            return False
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return True


def fence(text: str, lang: str = "") -> str:
    """A Markdown code fence long enough for any backtick run inside ``text``."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{lang}\n{text}\n{ticks}"


def code_span(text: str) -> str:
    """Inline Markdown code that survives backticks in ``text``."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def visible(value: Any) -> Any:
    """What a card prints for a value: control characters other than tab and
    newline (NUL, ESC, a ``\\r`` escape in a message) as ``\\xNN`` escapes."""
    if isinstance(value, str) and _CONTROL.search(value):
        # type(value): a Markup value stays marked safe.
        return type(value)(_CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", value))
    return value


def table_cell(text: str) -> str:
    """Text safe inside a Markdown table cell (code spans too): ``|`` escaped as
    GitHub's tables want, each line break shown as the two characters ``\\n``."""
    return text.replace("|", "\\|").replace("\r", "").replace("\n", "\\n")


@cache
def environment() -> jinja2.Environment:
    """The one Jinja2 environment (Markdown is not autoescaped; HTML is)."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES_DIR)),
        autoescape=jinja2.select_autoescape(["html", "htm", "xml", "html.j2"]),
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        undefined=jinja2.StrictUndefined,
        finalize=visible,
    )
    env.filters["fence"] = fence
    env.filters["code"] = code_span
    env.filters["cell"] = table_cell
    return env


def error_json(
    error: Error,
    result: MineResult,
    analysis: Analysis | None = None,
    history: History | None = None,
) -> dict[str, Any]:
    """The JSON API record of one error: the error, every site raising it, and
    the card's analysis and history when given."""
    return {
        "analysis": None if analysis is None else analysis.to_json(),
        "history": None if history is None else history.to_json(),
        "schema_version": SCHEMA_VERSION,
        "error_id": error.error_id,
        "repo": result.commit.slug,
        "commit": result.commit.sha,
        "commit_date": result.commit.date,
        "exception": error.exception,
        "message": error.message,
        "message_parts": [p.to_json() for p in error.message_parts],
        "message_kind": error.message_kind,
        "title": error.title,
        "module": error.module,
        "sites": [site_json(s, result) for s in error.sites],
    }


def site_json(site: Site, result: MineResult) -> dict[str, Any]:
    data = site.to_json()
    data["url"] = result.commit.source_url(site.path, site.line)
    return data


def manifest_json(result: MineResult) -> dict[str, Any]:
    """Repository, commit, tool version, counts, and every file not mined (with why)."""
    statuses = Counter(f.status for f in result.files)
    kinds = Counter(s.kind for s in result.sites)
    parsers = Counter(s.parser for s in result.sites)
    notes = [
        {"path": f.path, "blob": f.blob, "status": f.status, "reason": f.reason}
        for f in result.files
        if f.status != "mined" or f.reason
    ]
    return {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "raise-miner", "version": __version__},
        "commit": result.commit.to_json(),
        "counts": {
            "files": len(result.files),
            "files_mined": statuses["mined"],
            "files_with_sites": sum(1 for f in result.files if f.sites),
            "files_skipped": statuses["skipped"],
            "files_failed": statuses["failed"],
            "sites": len(result.sites),
            "raise_sites": kinds["raise"],
            "assert_sites": kinds["assert"],
            "reraise_sites": sum(1 for s in result.sites if s.reraise),
            "sites_by_parser": dict(sorted(parsers.items())),
            "errors": len(result.errors),
        },
        "files": notes,
    }


def render_card(
    error: Error,
    result: MineResult,
    analysis: Analysis,
    errors_by_id: Mapping[str, Error] | None = None,
    history: History | None = None,
) -> str:
    """The Markdown card of one error; ``errors_by_id`` gives related errors'
    titles, ``history`` adds the history block."""
    return (
        environment()
        .get_template("card.md.j2")
        .render(
            error=error,
            commit=result.commit,
            analysis=analysis,
            errors_by_id=errors_by_id if errors_by_id is not None else {},
            history=history,
        )
    )


def render_index(result: MineResult, retired: Sequence[Error] = ()) -> str:
    errors = sorted(result.errors, key=lambda e: (e.module, e.primary.line, e.error_id))
    modules = Counter(e.module for e in result.errors)
    return (
        environment()
        .get_template("index.md.j2")
        .render(
            errors=errors,
            commit=result.commit,
            modules=modules,
            manifest=manifest_json(result),
            retired=sorted(retired, key=lambda e: (e.module, e.primary.line, e.error_id)),
        )
    )


def _retired_files(
    out: Path,
    retired: Sequence[tuple[Error, CommitInfo]],
    histories: Mapping[str, History],
) -> dict[Path, str]:
    """Cards and JSON of errors the release no longer raises, each rendered
    from the last commit that raised it."""
    by_commit: dict[str, list[Error]] = defaultdict(list)
    commits: dict[str, CommitInfo] = {}
    for error, commit in retired:
        by_commit[commit.sha].append(error)
        commits[commit.sha] = commit
    files: dict[Path, str] = {}
    for sha, errors in sorted(by_commit.items()):
        sites = tuple(s for e in errors for s in e.sites)
        old = MineResult(commit=commits[sha], files=(), sites=sites, errors=tuple(errors))
        analyses = analyze(old)
        by_id = {e.error_id: e for e in errors}
        for error in errors:
            history = histories.get(error.error_id)
            analysis = analyses[error.error_id]
            api_path = out / "api" / "errors" / f"{error.error_id}.json"
            files[api_path] = dumps(error_json(error, old, analysis, history))
            card = render_card(error, old, analysis, by_id, history)
            files[out / "errors" / f"{error.error_id}.md"] = card
    return files


def remove_stale(folders: Iterable[tuple[Path, str]], wanted: Container[Path]) -> int:
    """Delete files matching each ``(folder, glob)`` that are not in ``wanted``
    (what a previous run wrote for errors that are gone); returns how many."""
    removed = 0
    for folder, pattern in folders:
        for stale in sorted(folder.glob(pattern)):
            if stale not in wanted:
                stale.unlink()
                removed += 1
    return removed


def write_output(
    result: MineResult,
    out: Path,
    analyses: Mapping[str, Analysis] | None = None,
    *,
    histories: Mapping[str, History] | None = None,
    retired: Sequence[tuple[Error, CommitInfo]] = (),
) -> dict[str, int]:
    """Write every record and card of ``result`` under ``out``.

    ``analyses`` (error id -> Analysis) defaults to :func:`miner.analysis.analyze`.
    ``histories`` (error id -> history) adds a history block to the cards and
    JSON; ``retired`` errors (each with the last commit that raised it) keep a
    card and JSON record with a notice that ``result`` no longer raises them.

    Returns counts of files ``written`` and ``unchanged`` and ``removed``.

    Raises:
        OutputError: ``out`` cannot be created or written.
    """
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = tempfile.NamedTemporaryFile(dir=out, prefix=".write-test.", delete=True)
        probe.close()
    except OSError as exc:
        raise OutputError(
            f"{out}: cannot write the output folder ({exc.strerror or exc}); "
            "pass --out with a writable folder"
        ) from None
    files: dict[Path, str] = {}
    files[out / "sites.jsonl"] = "".join(
        json.dumps(s.to_json(), sort_keys=True, ensure_ascii=False) + "\n" for s in result.sites
    )
    files[out / "manifest.json"] = dumps(manifest_json(result))
    if result.facts is not None:
        files[out / "config.json"] = dumps(result.facts.to_json())
    if analyses is None:
        analyses = analyze(result)
    errors_by_id = {e.error_id: e for e in result.errors}
    histories = histories or {}
    for error in result.errors:
        analysis = analyses[error.error_id]
        history = histories.get(error.error_id)
        api_path = out / "api" / "errors" / f"{error.error_id}.json"
        files[api_path] = dumps(error_json(error, result, analysis, history))
        card = render_card(error, result, analysis, errors_by_id, history)
        files[out / "errors" / f"{error.error_id}.md"] = card
    files.update(_retired_files(out, retired, histories))
    # superseded ids (the error lives on under a newer id) are not listed as retired
    gone = [
        error
        for error, _ in retired
        if error.error_id not in histories or histories[error.error_id].error_id == error.error_id
    ]
    files[out / "index.md"] = render_index(result, gone)
    counts = {"written": 0, "unchanged": 0, "removed": 0}
    try:
        for path, text in files.items():
            counts["written" if write_text(path, text) else "unchanged"] += 1
        counts["removed"] += remove_stale(
            ((out / "errors", "*.md"), (out / "api" / "errors", "*.json")), files
        )
    except OSError as exc:
        raise OutputError(
            f"{out}: cannot write ({exc}); check permissions and free space"
        ) from None
    return counts
