"""The site's JSON records of the errors, bundled per module.

A site (``miner mine --site``, and the release site of ``miner history`` /
``miner release``, which documents every id of every release) used to hold one
file per error, ``api/errors/<id>.json``: 16,000 to 34,000 files of
pretty-printed JSON, each repeating its repository, commit date and the source
lines of its excerpt. The published site holds instead::

    api/modules/<page>.json.gz  the records of one module's errors (every
                                release's ids of that module): one JSON
                                line, gzip'd
    api/ids.json                every id of the site -> its module

``<page>`` is the module's page name (:func:`miner.publish.cards.page_name`,
as ``modules/<page>.html``). The bundles are gzip'd: their JSON is 5-6 kB
per error whatever the layout (analysis prose, guards, exits, the excerpt),
so 31,000 ids of eight releases would be 180 MB as text and are 8 times
less compressed; a static host serves them as files (``curl -s URL |
gunzip``; Python: ``json.loads(gzip.decompress(data))``). A bundle is ``{"schema_version", "module",
"commits", "sources", "errors"}``:

* ``errors``: error id -> its record (``error-v2``, :func:`miner.publish.records.error_json`)
  without what the bundle holds once: ``schema_version``, ``repo`` and
  ``commit_date`` (in ``commits[<record's commit>]`` as ``repo`` and
  ``date``), and the text of each site's excerpt, whose ``excerpt`` is
  ``{"start_line", "end_line", "source"}`` instead;
* ``sources``: ``"<path>@<commit sha>"`` -> the source lines the excerpts of
  that file at that commit show, once each, as runs ``[[first line number,
  [line, ...]], ...]`` (so excerpts that overlap, and the records of errors
  of one file, share their lines);
* ``commits``: sha -> ``{"repo", "date"}``.

The lookup, the same for the site's script and the command line: an id's
module is in ``api/ids.json`` (``{"modules": [module, ...], "ids": {id:
index}}``), in its row of the search data (``search-data.js``) and in its
entry of ``api/index.json.gz``; its bundle is ``api/modules/<page_name(module)>.json.gz``;
:func:`bundle_record` turns ``bundle["errors"][id]`` back into the very record
``api/errors/<id>.json`` held (what ``miner explain --out SITE`` prints).
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from miner.errors import RecordsError
from miner.model import SCHEMA_VERSION
from miner.publish.cards import page_name
from miner.publish.records import dumps, json_line

#: Where the bundles are, relative to the site root.
BUNDLES = "api/modules"
#: A bundle's file name ends so: gzip'd JSON.
SUFFIX = ".json.gz"
#: The newest release's index of the site (every error, its message parts,
#: sites, card and bundle: :func:`miner.publish.html.index_json`), gzip'd.
INDEX = "api/index.json.gz"
#: The id -> module table, relative to the site root.
IDS = "api/ids.json"
#: The fields of a record a bundle holds once (in ``commits``), not per record.
_SHARED = ("schema_version", "repo", "commit_date")


def bundle_path(module: str) -> str:
    """Site-relative path of the bundle holding the records of ``module``'s
    errors: ``api/modules/<page_name(module)>.json.gz``."""
    return f"{BUNDLES}/{page_name(module)}{SUFFIX}"


def _runs(lines: Mapping[int, str]) -> list[list[Any]]:
    """``{line number: text}`` as runs of consecutive lines,
    ``[[first number, [text, ...]], ...]`` in line order."""
    runs: list[list[Any]] = []
    for number in sorted(lines):
        if runs and runs[-1][0] + len(runs[-1][1]) == number:
            runs[-1][1].append(lines[number])
        else:
            runs.append([number, [lines[number]]])
    return runs


def _shared_site(site: Mapping[str, Any], key: str, table: dict[int, str]) -> Mapping[str, Any]:
    """``site`` (a record's site) with its excerpt text moved into ``table``
    (the lines of ``key``: path at commit), or unchanged when its text is not
    one line per number of its span or disagrees with lines already there."""
    excerpt = site.get("excerpt")
    if not isinstance(excerpt, dict) or not isinstance(excerpt.get("text"), str):
        return site
    start, end = excerpt.get("start_line"), excerpt.get("end_line")
    lines = excerpt["text"].split("\n")
    if not isinstance(start, int) or not isinstance(end, int) or end - start + 1 != len(lines):
        return site
    numbered = dict(enumerate(lines, start))
    if any(table.get(n, text) != text for n, text in numbered.items()):
        return site
    table.update(numbered)
    return {**site, "excerpt": {"start_line": start, "end_line": end, "source": key}}


def bundle_json(module: str, records: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """The bundle of ``module`` (see the module's docstring) holding
    ``records``: :func:`miner.publish.records.error_json` records, each of the
    commit that last raised it; keyed by error id."""
    commits: dict[str, dict[str, Any]] = {}
    sources: dict[str, dict[int, str]] = {}
    errors: dict[str, dict[str, Any]] = {}
    for record in records:
        sha = str(record["commit"])
        commits[sha] = {"repo": record["repo"], "date": record["commit_date"]}
        slim = {k: v for k, v in record.items() if k not in _SHARED}
        sites = []
        for site in record["sites"]:
            key = f"{site['path']}@{sha}"
            sites.append(_shared_site(site, key, sources.setdefault(key, {})))
        slim["sites"] = sites
        errors[str(record["error_id"])] = slim
    return {
        "schema_version": SCHEMA_VERSION,
        "module": module,
        "commits": commits,
        "sources": {key: _runs(lines) for key, lines in sources.items() if lines},
        "errors": errors,
    }


def _excerpt_text(sources: Mapping[str, Any], excerpt: Mapping[str, Any]) -> str:
    """The text of a bundled excerpt, from its source's runs."""
    start, end = excerpt["start_line"], excerpt["end_line"]
    lines: dict[int, str] = {}
    for first, run in sources[excerpt["source"]]:
        if first <= end and first + len(run) > start:
            lines.update(enumerate(run, first))
    return "\n".join(lines[n] for n in range(start, end + 1))


def bundle_record(bundle: Mapping[str, Any], error_id: str) -> dict[str, Any]:
    """The record of ``error_id`` in ``bundle``, whole again: the same dict
    as :func:`miner.publish.records.error_json` made for it.

    Raises:
        KeyError: the bundle holds no such id.
        RecordsError: the bundle is not one :func:`bundle_json` wrote.
    """
    slim = bundle["errors"][error_id]
    try:
        commit = bundle["commits"][slim["commit"]]
        record = {**slim, "schema_version": bundle["schema_version"]}
        record.update(repo=commit["repo"], commit_date=commit["date"])
        sites = []
        for site in slim["sites"]:
            excerpt = site.get("excerpt")
            if isinstance(excerpt, dict) and "source" in excerpt:
                text = _excerpt_text(bundle["sources"], excerpt)
                excerpt = {"start_line": excerpt["start_line"], "end_line": excerpt["end_line"]}
                site = {**site, "excerpt": {**excerpt, "text": text}}
            sites.append(site)
    except (KeyError, TypeError, ValueError) as exc:
        raise RecordsError(f"bundle of {bundle.get('module')!r}: unreadable ({exc!r})") from None
    record["sites"] = sites
    return record


def ids_json(modules: Mapping[str, str]) -> dict[str, Any]:
    """``api/ids.json``: ``{"schema_version", "modules": [module, ...] (sorted),
    "ids": {id: index into modules}}`` from ``modules`` (id -> module)."""
    names = sorted(set(modules.values()))
    index = {name: i for i, name in enumerate(names)}
    return {
        "schema_version": SCHEMA_VERSION,
        "modules": names,
        "ids": {i: index[modules[i]] for i in sorted(modules)},
    }


def gzip_json(data: Any) -> bytes:
    """``data`` as stored in the site's bulk JSON (the bundles, the release
    diffs): its compact JSON line, gzip'd (level 9, no time stamp, so the
    same data gives the same bytes)."""
    text = json_line(data, compact=True)
    return gzip.compress(text.encode("utf-8", "surrogateescape"), compresslevel=9, mtime=0)


def bundle_bytes(bundle: Mapping[str, Any]) -> bytes:
    """A bundle as stored (:func:`gzip_json`)."""
    return gzip_json(bundle)


def load_bundle(data: bytes) -> dict[str, Any]:
    """A bundle read back from its bytes (:func:`bundle_bytes`).

    Raises:
        OSError, EOFError: not gzip data.
        ValueError: not JSON.
    """
    return json.loads(gzip.decompress(data).decode("utf-8", "surrogateescape"))


def bundle_files(
    records: Sequence[tuple[str, Mapping[str, Any]]],
) -> Iterable[tuple[str, str | bytes]]:
    """(path, text) of each module's bundle and of ``api/ids.json``, from
    ``records``: (module, record) pairs, in the order the bundles list them."""
    by_module: dict[str, list[Mapping[str, Any]]] = {}
    for module, record in records:
        by_module.setdefault(module, []).append(record)
    for module in sorted(by_module):
        yield bundle_path(module), bundle_bytes(bundle_json(module, by_module[module]))
    ids = {str(r["error_id"]): module for module, r in records}
    yield IDS, json_line(ids_json(ids), compact=True)


def site_ids(site: Path) -> dict[str, str]:
    """Every error id of the site at ``site`` -> its module (``api/ids.json``).

    Raises:
        RecordsError: the table is missing or unreadable.
    """
    path = site / IDS
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        names = data["modules"]
        return {i: names[n] for i, n in data["ids"].items()}
    except (OSError, ValueError, KeyError, TypeError, IndexError) as exc:
        raise RecordsError(f"{path}: no readable id table ({exc}); write the site again") from None


def read_record(site: Path, error_id: str, module: str) -> tuple[dict[str, Any], str]:
    """The record of ``error_id`` (of ``module``) in the site at ``site`` and
    its text (the record alone, as the site's ``api/errors/<id>.json`` was).

    Raises:
        RecordsError: the bundle is missing, unreadable or lacks the id.
    """
    path = site / bundle_path(module)
    try:
        record = bundle_record(load_bundle(path.read_bytes()), error_id)
    except (OSError, EOFError, ValueError, KeyError, TypeError) as exc:
        raise RecordsError(
            f"{path}: no record of {error_id} ({exc!r}); write the site again"
        ) from None
    return record, dumps(record)
