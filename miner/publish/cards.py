"""Write a mine result: JSON records, the manifest, and the cards (Jinja2).

One Jinja2 environment renders every card; files are written atomically
(a temporary file in the same folder, then ``os.replace``) and only when their
content changed, so re-rendering a release touches only what is new. Files a
previous run wrote for errors that are gone are removed. Nothing written
depends on the wall clock, so the same commit gives byte-identical output.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections import Counter
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any

import jinja2

from miner.errors import OutputError
from miner.files import remove_stale, write_text
from miner.model import Analysis, CommitInfo, Error, History, MineResult
from miner.publish.records import dumps, error_json, manifest_json, record_files


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
        loader=jinja2.PackageLoader("miner.publish", "templates"),
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


def render_card(
    error: Error,
    commit: CommitInfo,
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
            commit=commit,
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


def retired_files(
    retired: Sequence[tuple[Error, CommitInfo, Analysis]],
    histories: Mapping[str, History],
) -> dict[str, str]:
    """Cards and JSON of errors the release no longer raises, each rendered
    from the last commit that raised it (folder-relative path -> text)."""
    files: dict[str, str] = {}
    by_id = {error.error_id: error for error, _, _ in retired}
    for error, commit, analysis in retired:
        history = histories.get(error.error_id)
        files[f"api/errors/{error.error_id}.json"] = dumps(
            error_json(error, commit, analysis, history)
        )
        files[f"errors/{error.error_id}.md"] = render_card(error, commit, analysis, by_id, history)
    return files


def check_writable(out: Path) -> None:
    """Check, before any work and without writing anything, that ``out`` can
    be created or written: it is a folder (or does not exist yet) and its
    nearest existing ancestor accepts new files.

    Raises:
        OutputError: ``out`` cannot be created or written.
    """
    probe = out
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    problem = None
    if probe.exists() and not probe.is_dir():
        problem = "not a folder" if probe == out else f"{probe} is not a folder"
    elif not os.access(probe, os.W_OK | os.X_OK):
        problem = "permission denied" if probe == out else f"{probe} is not writable"
    if problem is not None:
        raise OutputError(
            f"{out}: cannot write the output folder ({problem}); "
            "pass --out with a writable folder"
        )


def _create(out: Path) -> None:
    """Create ``out`` and check that a file can be written in it.

    Raises:
        OutputError: it cannot.
    """
    try:
        out.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=out, prefix=".write-test."):
            pass
    except OSError as exc:
        raise OutputError(
            f"{out}: cannot write the output folder ({exc.strerror or exc}); "
            "pass --out with a writable folder"
        ) from None


def write_output(
    result: MineResult,
    out: Path,
    analyses: Mapping[str, Analysis],
    *,
    config: Mapping[str, Any] | None = None,
    histories: Mapping[str, History] | None = None,
    retired: Sequence[tuple[Error, CommitInfo, Analysis]] = (),
) -> dict[str, int]:
    """Write every record and card of ``result`` under ``out``.

    ``analyses`` maps every error id of ``result`` to its analysis; ``config``
    is the configuration model's JSON (``config.json``). ``histories`` (error
    id -> history) adds a history block to the cards and JSON; ``retired``
    errors (each with the last commit that raised it and its analysis) keep a
    card and JSON record with a notice that ``result`` no longer raises them.

    Returns counts of files ``written`` and ``unchanged`` and ``removed``.

    Raises:
        OutputError: ``out`` cannot be created or written.
    """
    _create(out)
    histories = histories or {}
    rel = record_files(result, analyses, config=config, histories=histories)
    errors_by_id = {e.error_id: e for e in result.errors}
    for error in result.errors:
        analysis = analyses[error.error_id]
        history = histories.get(error.error_id)
        rel[f"api/errors/{error.error_id}.json"] = dumps(
            error_json(error, result.commit, analysis, history)
        )
        rel[f"errors/{error.error_id}.md"] = render_card(
            error, result.commit, analysis, errors_by_id, history
        )
    rel.update(retired_files(retired, histories))
    # superseded ids (the error lives on under a newer id) are not listed as retired
    gone = [
        error
        for error, _, _ in retired
        if error.error_id not in histories or histories[error.error_id].error_id == error.error_id
    ]
    rel["index.md"] = render_index(result, gone)
    files = {out / path: text for path, text in rel.items()}
    counts = {"written": 0, "unchanged": 0, "removed": 0}
    try:
        for path, text in files.items():
            counts["written" if write_text(path, text) else "unchanged"] += 1
        counts["removed"] += remove_stale(
            ((out / "errors", "*.md"), (out / "api" / "errors", "*.json")), files
        )
    except OSError as exc:
        raise OutputError(
            f"{out}: cannot write ({exc.strerror or exc}); check permissions and free space"
        ) from None
    return counts
