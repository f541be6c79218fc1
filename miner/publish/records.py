"""The records of a mined folder: one JSON projection and one reader of each.

A mined output folder holds, next to the cards (:mod:`miner.publish.cards`) and
the site (:mod:`miner.publish.html`), the records every writer renders from:

=====================  ======================================================
``manifest.json``      repository, commit, tool, counts, files not mined
``sites.jsonl``        one :class:`~miner.model.Site` per line, path and line order
``analyses.jsonl``     one line per error: its :class:`~miner.model.Analysis`
                       and, in a release site, its :class:`~miner.model.History`
``config.json``        the configuration model the analysis read (flags,
                       settings, environment variables), for readers
``api/errors/<id>.json``  one error, its sites, analysis and history
``schema/*-v<N>.json``     the JSON Schemas of the records above (N =
                       ``SCHEMA_VERSION``; :mod:`miner.publish.schemas`)
=====================  ======================================================

:func:`read_mined` reads the first three back into exactly what the pipeline
handed the writers, so ``miner site`` renders the same bytes as ``miner mine
--site`` without mining or analysing again. Every projection of a record to
JSON lives here (the site's ``api/`` reuses :func:`error_json`).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from json.encoder import encode_basestring
from pathlib import Path
from typing import Any, get_args

import orjson

from miner import __version__
from miner.errors import RecordsError
from miner.model import (
    SCHEMA_VERSION,
    Analysis,
    AudienceName,
    CommitInfo,
    DynamicReason,
    Error,
    History,
    MineResult,
    OriginKind,
    Site,
    group_errors,
)
from miner.publish.schemas import RECORD_SCHEMAS, schemas

MANIFEST = "manifest.json"
SITES = "sites.jsonl"
ANALYSES = "analyses.jsonl"
CONFIG = "config.json"


#: A lone surrogate: a byte that is not UTF-8 in a file name, decoded by
#: Python's ``surrogateescape`` as U+DC80..U+DCFF (PEP 383).
SURROGATE = re.compile("[\ud800-\udfff]")


def escape_surrogates(text: str) -> str:
    """JSON text with each lone surrogate written as its ``\\uXXXX`` escape.

    ``json.dumps(..., ensure_ascii=False)`` leaves them raw, and they cannot be
    written as UTF-8: a file name that is not UTF-8 (``caf\\xe9.py``, legal in
    git) would make the file invalid UTF-8. As an escape the file stays
    valid (ASCII there) and :func:`json.loads` gives back the very string, so
    the raw bytes survive (``"caf\\udce9.py"`` is ``caf`` + byte 0xE9 + ``.py``).
    Surrogates occur only inside JSON strings, where the escape means the
    same character.
    """
    if SURROGATE.search(text) is None:
        return text
    return SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _float(value: float) -> str:
    """A float as :mod:`json` writes it (``allow_nan``)."""
    if value != value:
        return "NaN"
    if value == float("inf"):
        return "Infinity"
    if value == float("-inf"):
        return "-Infinity"
    return float.__repr__(value)


def _key(key: Any) -> str:
    """A dict key as :mod:`json` writes it (a string, or a scalar as text).

    Raises:
        TypeError: a key :mod:`json` refuses too.
    """
    if isinstance(key, str):
        return key
    if isinstance(key, float):
        return _float(key)
    if key is True:
        return "true"
    if key is False:
        return "false"
    if key is None:
        return "null"
    if isinstance(key, int):
        return int.__repr__(key)
    raise TypeError(f"keys must be str, int, float, bool or None, not {type(key).__name__}")


def _container(value: Any, newline: str) -> str:
    """A list, tuple or dict as :func:`_indented` writes it."""
    inner = newline + "  "
    if isinstance(value, dict):
        if not value:
            return "{}"
        items = [
            encode_basestring(_key(key)) + ": " + _indented(item, inner)
            for key, item in sorted(value.items())
        ]
        return "{" + inner + ("," + inner).join(items) + newline + "}"
    if not value:
        return "[]"
    return "[" + inner + ("," + inner).join([_indented(v, inner) for v in value]) + newline + "]"


def _indented(value: Any, newline: str) -> str:
    """The JSON text of ``value``: what ``json.dumps(value, sort_keys=True,
    indent=2, ensure_ascii=False)`` writes, character for character (the
    same checks in the same order; the exact built-in types first), without
    the generators of the standard library's pure-Python encoder, which is
    what it uses whenever ``indent`` is set. ``newline`` is a line break and
    the current indentation.

    Raises:
        TypeError: a value (or key) :mod:`json` does not write by itself.
    """
    kind = type(value)
    if kind is str:
        return encode_basestring(value)
    if kind is dict or kind is list or kind is tuple:
        return _container(value, newline)
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str):
        return encode_basestring(value)
    if isinstance(value, int):
        return int.__repr__(value)
    if isinstance(value, float):
        return _float(value)
    if isinstance(value, (list, tuple, dict)):
        return _container(value, newline)
    raise TypeError(f"not JSON: {type(value).__name__}")


#: The scalar types whose JSON text orjson writes exactly as :mod:`json` does.
_PLAIN_SCALARS = frozenset({str, int, bool, type(None)})
_ORJSON_OPTIONS = orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS


def _plain(data: Any) -> bool:
    """Whether ``data`` holds only dicts, lists, tuples, strings, ints,
    booleans and None: the values orjson writes character for character as
    :mod:`json` does. Floats are not (orjson writes ``1e-7`` and ``null`` for
    NaN where :mod:`json` writes ``1e-07`` and ``NaN``), nor the types orjson
    writes and :mod:`json` refuses (dataclasses, enums, dates, UUIDs). What
    orjson refuses itself (non-string keys, integers beyond 64 bits, lone
    surrogates, nesting deeper than 254) it raises for."""
    stack = [data]
    while stack:
        value = stack.pop()
        kind = type(value)
        if kind in _PLAIN_SCALARS:
            continue
        if kind is dict:
            stack.extend(value.values())
        elif kind is list or kind is tuple:
            stack.extend(value)
        elif kind is not float and isinstance(value, str):
            continue
        else:
            return False
    return True


def dumps(data: Any) -> str:
    """Deterministic JSON text (sorted keys, two-space indent, UTF-8 kept,
    control characters such as NUL escaped, lone surrogates escaped:
    :func:`escape_surrogates`) with a final newline: the text of
    ``json.dumps(data, sort_keys=True, indent=2, ensure_ascii=False)``.

    Written by orjson when ``data`` is :func:`_plain` (about ten times as
    fast on the error records), else by :func:`_indented` (twice as fast as
    :mod:`json`, whose encoder is pure Python when ``indent`` is set); a value
    neither handles goes to :func:`json.dumps`, which writes it or raises
    ``TypeError``/``ValueError``."""
    if _plain(data):
        try:
            return orjson.dumps(data, option=_ORJSON_OPTIONS).decode() + "\n"
        except orjson.JSONEncodeError:
            pass  # non-string keys, huge integers, lone surrogates: below
    try:
        text = _indented(data, "\n")
    except (TypeError, ValueError, RecursionError):
        text = json.dumps(data, sort_keys=True, indent=2, ensure_ascii=False)
    return escape_surrogates(text) + "\n"


#: The Unicode line and paragraph separators, which JSON leaves raw in its
#: strings but ``str.splitlines()`` (and JavaScript before ES2019) reads as a
#: line break.
_SEPARATORS = re.compile("[\u2028\u2029]")


def json_line(data: Any, *, compact: bool = False) -> str:
    """One JSON Lines row (sorted keys, UTF-8 kept, lone surrogates and the
    separators U+2028/U+2029 escaped as ``\\uXXXX``, so that a reader
    splitting with ``str.splitlines()`` sees one row per line; the escapes
    occur only inside strings and read back as the same characters) with its
    newline; ``compact``: no space after ``,`` and ``:`` (the site's bundles
    and index, where the spaces are a tenth of the bytes)."""
    separators = (",", ":") if compact else None
    text = escape_surrogates(
        json.dumps(data, sort_keys=True, ensure_ascii=False, separators=separators)
    )
    if _SEPARATORS.search(text) is not None:
        text = _SEPARATORS.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
    return text + "\n"


def site_json(site: Site, commit: CommitInfo) -> dict[str, Any]:
    """A site as published in the error records: the record plus its source URL."""
    data = site.to_json()
    data["url"] = commit.source_url(site.path, site.line)
    return data


def error_json(
    error: Error,
    commit: CommitInfo,
    analysis: Analysis | None = None,
    history: History | None = None,
) -> dict[str, Any]:
    """The JSON API record of one error (``api/errors/<id>.json``): the error,
    every site raising it, and the card's analysis and history when given."""
    return {
        "analysis": None if analysis is None else analysis.to_json(),
        "history": None if history is None else history.to_json(),
        "schema_version": SCHEMA_VERSION,
        "error_id": error.error_id,
        "repo": commit.slug,
        "commit": commit.sha,
        "commit_date": commit.date,
        "exception": error.exception,
        "message": error.message,
        "message_parts": [p.to_json() for p in error.message_parts],
        "message_kind": error.message_kind,
        "title": error.title,
        "module": error.module,
        "audience": None if analysis is None else analysis.audience,
        "sites": [site_json(s, commit) for s in error.sites],
    }


def manifest_json(
    result: MineResult,
    analyses: Mapping[str, Analysis] | None = None,
    written: Sequence[str] = (),
    inputs: str = "",
) -> dict[str, Any]:
    """Repository, commit, tool version, counts (errors per audience,
    origins per kind, errors whose exception is caught and logged, errors
    no in-tree call reaches, when the ``analyses`` are given), every file
    not mined (with why), every file
    the run wrote in the folder (``written``, folder-relative: what a later
    run may delete; :mod:`miner.publish.output`) and, when given, ``inputs``:
    the digest of everything the folder was made from
    (:func:`miner.pipeline.publish_inputs`), which lets a run from the same
    inputs skip its work."""
    statuses = Counter(f.status for f in result.files)
    audiences = Counter(a.audience for a in (analyses or {}).values())
    origins = Counter(o.kind for a in (analyses or {}).values() for o in a.origins)
    kinds = Counter(s.kind for s in result.sites)
    parsers = Counter(s.parser for s in result.sites)
    # Sites whose message is computed at run time, by why it could not be rendered.
    reasons = Counter(
        s.message_reason or "other" for s in result.sites if s.message_kind == "dynamic"
    )
    notes = [
        {"path": f.path, "blob": f.blob, "status": f.status, "reason": f.reason}
        for f in result.files
        if f.status != "mined" or f.reason
    ]
    manifest: dict[str, Any] = {
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
            "call_sites": kinds["call"],
            "reraise_sites": sum(1 for s in result.sites if s.reraise),
            "sites_by_parser": dict(sorted(parsers.items())),
            "dynamic_messages": sum(reasons.values()),
            "dynamic_messages_by_reason": {name: reasons[name] for name in get_args(DynamicReason)},
            "errors": len(result.errors),
            "errors_by_audience": {name: audiences[name] for name in get_args(AudienceName)},
            "origins_by_kind": {kind.value: origins[kind] for kind in OriginKind},
            "errors_logged": sum(1 for a in (analyses or {}).values() if a.logged is not None),
            "errors_unreachable": sum(
                1 for a in (analyses or {}).values() if a.unreachable is not None
            ),
            "user_facing_with_user_origin": sum(
                1
                for a in (analyses or {}).values()
                if a.audience in get_args(AudienceName)[:4] and any(o.user for o in a.origins)
            ),
        },
        "files": notes,
        "written": list(written),
    }
    if inputs:
        manifest["inputs"] = inputs
    return manifest


def analysis_row(error_id: str, analysis: Analysis, history: History | None) -> dict[str, Any]:
    """One row of ``analyses.jsonl``."""
    row: dict[str, Any] = {"error_id": error_id, "analysis": analysis.to_json()}
    if history is not None:
        row["history"] = history.to_json()
    return row


def record_files(
    result: MineResult,
    analyses: Mapping[str, Analysis],
    *,
    config: Mapping[str, Any] | None = None,
    histories: Mapping[str, History] | None = None,
) -> dict[str, str | Iterable[str]]:
    """The record files of a mined folder, folder-relative path -> text (the
    two JSON Lines files as their lines, made as they are written):
    sites, analyses (every error of ``result``, in id order), their JSON
    Schemas and, when given, the configuration model's JSON. The manifest is
    written last, with the list of every file (:mod:`miner.publish.output`)."""
    histories = histories or {}
    files: dict[str, str | Iterable[str]] = {
        SITES: (json_line(s.to_json()) for s in result.sites),
        ANALYSES: (
            json_line(analysis_row(e.error_id, analyses[e.error_id], histories.get(e.error_id)))
            for e in result.errors
        ),
    }
    if config is not None:
        files[CONFIG] = dumps(config)
    for name, schema in schemas(RECORD_SCHEMAS):
        files[f"schema/{name}"] = dumps(schema)
    return files


def iter_jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` for each row of a JSON Lines file.

    Raises:
        RecordsError: the file is missing, unreadable or a row is not an object.
    """
    try:
        with path.open(encoding="utf-8", errors="surrogateescape") as handle:
            for number, line in enumerate(handle, 1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except ValueError as exc:
                    raise RecordsError(f"{path}:{number}: not JSON ({exc}); mine again") from None
                if not isinstance(row, dict):
                    raise RecordsError(f"{path}:{number}: not a JSON object; mine again")
                yield number, row
    except FileNotFoundError:
        raise RecordsError(
            f"{path.parent}: no mined records here ({path.name} missing); "
            "run `miner mine --out` first"
        ) from None
    except OSError as exc:
        raise RecordsError(f"{path}: cannot read ({exc.strerror or exc})") from None


def read_sites(path: Path) -> list[Site]:
    """Every site record of a ``sites.jsonl``, in file order.

    Raises:
        RecordsError: the file is missing or a row is not a site record.
    """
    sites = []
    for number, row in iter_jsonl(path):
        try:
            sites.append(Site.from_json(row))
        except (KeyError, TypeError, ValueError) as exc:
            raise RecordsError(f"{path}:{number}: not a site record ({exc}); mine again") from None
    return sites


@dataclass(frozen=True)
class Published:
    """A mined folder read back: what the writers need to render it again."""

    result: MineResult
    """The commit, sites and errors (``files`` is empty: the manifest stands for it)."""
    manifest: dict[str, Any]
    analyses: dict[str, Analysis] = field(default_factory=dict)
    histories: dict[str, History] = field(default_factory=dict)


def read_json(path: Path) -> Any:
    """One JSON file.

    Raises:
        RecordsError: the file is missing, unreadable or not JSON.
    """
    try:
        return json.loads(path.read_text(encoding="utf-8", errors="surrogateescape"))
    except FileNotFoundError:
        raise RecordsError(
            f"{path.parent}: no mined records here ({path.name} missing); "
            "run `miner mine --out` first"
        ) from None
    except (OSError, ValueError) as exc:
        raise RecordsError(f"{path}: cannot read ({exc}); mine again") from None


def read_mined(out: Path) -> Published:
    """The records of the mined folder ``out`` (see the module docstring).

    Raises:
        RecordsError: ``out`` lacks its records, or they cannot be read.
    """
    manifest = read_json(out / MANIFEST)
    try:
        commit = CommitInfo(**manifest["commit"])
    except (KeyError, TypeError) as exc:
        raise RecordsError(f"{out / MANIFEST}: not a manifest ({exc}); mine again") from None
    sites = tuple(read_sites(out / SITES))
    errors = tuple(group_errors(sites))
    analyses: dict[str, Analysis] = {}
    histories: dict[str, History] = {}
    for number, row in iter_jsonl(out / ANALYSES):
        try:
            error_id = row["error_id"]
            analyses[error_id] = Analysis.from_json(error_id, row["analysis"])
            if row.get("history") is not None:
                histories[error_id] = History.from_json(row["history"])
        except (KeyError, TypeError, ValueError) as exc:
            raise RecordsError(
                f"{out / ANALYSES}:{number}: not an analysis record ({exc}); mine again"
            ) from None
    missing = [e.error_id for e in errors if e.error_id not in analyses]
    if missing:
        raise RecordsError(
            f"{out / ANALYSES}: no analysis for {len(missing)} errors (e.g. {missing[0]}); "
            "mine again"
        )
    result = MineResult(commit=commit, files=(), sites=sites, errors=errors)
    return Published(result=result, manifest=manifest, analyses=analyses, histories=histories)


@dataclass(frozen=True)
class ReleaseRecords:
    """A release site's own records read back (``miner history``): what the
    HTML writer needs beyond the newest release's records."""

    histories: dict[str, History]
    """Every error id ever seen -> its lineage's history (``history.json``)."""
    retired: list[tuple[Error, CommitInfo, Analysis]]
    """Each id of an older release the newest does not raise, read from its
    ``api/errors/<id>.json``, with the commit of the release that last raised
    it (its tag from ``releases.json``) and its analysis."""
    releases: list[dict[str, Any]]
    """``releases.json``'s rows, oldest first."""


def read_release(out: Path, newest: MineResult) -> ReleaseRecords | None:
    """The release records of the folder ``out`` (``history.json``,
    ``releases.json`` and the JSON records of the ids ``newest`` does not
    raise), or None when ``out`` is not a release site.

    Raises:
        RecordsError: a record is missing or cannot be read.
    """
    if not (out / "history.json").is_file() or not (out / "releases.json").is_file():
        return None
    releases = list(read_json(out / "releases.json").get("releases", []))
    tags = {row["sha"]: row["tag"] for row in releases}
    histories: dict[str, History] = {}
    try:
        for row in read_json(out / "history.json")["errors"]:
            history = History.from_json(row)
            for error_id in history.ids:
                histories[error_id] = history
    except (KeyError, TypeError, ValueError) as exc:
        raise RecordsError(f"{out / 'history.json'}: not a history ({exc}); run again") from None
    current = {e.error_id for e in newest.errors}
    retired: list[tuple[Error, CommitInfo, Analysis]] = []
    for error_id in sorted(set(histories) - current):
        path = out / "api" / "errors" / f"{error_id}.json"
        record = read_json(path)
        try:
            tag = tags[record["commit"]]
            commit = CommitInfo(
                repo=newest.commit.repo,
                slug=record["repo"],
                rev=tag,
                sha=record["commit"],
                date=record["commit_date"],
                link_ref=tag,
            )
            errors = group_errors([Site.from_json(site) for site in record["sites"]])
            analysis = Analysis.from_json(error_id, record["analysis"])
        except (KeyError, TypeError, ValueError) as exc:
            raise RecordsError(f"{path}: not an error record ({exc}); run again") from None
        retired.extend((e, commit, analysis) for e in errors if e.error_id == error_id)
    return ReleaseRecords(histories=histories, retired=retired, releases=releases)
