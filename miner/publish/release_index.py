"""The lookup index of a release site: every error every documented release raises.

``miner history`` / ``miner release`` write it as ``release-index.json`` next
to ``history.json`` so that ``miner lookup --history SITE`` (and the site's
search) can match a paste against all releases at once: the errors of older
releases (retired, reworded) and the line of each site in each release,
without mining anything again. Shape (``schema_version`` 1)::

    releases   ["v0.5.16", ...]                 oldest first
    paths      ["python/sglang/srt/x.py", ...]  every file that raises
    errors     [[error_id, exception, message, title, parts], ...]
               parts: literal strings and 0 for each placeholder, or null
               when the message is not a template (as the site's
               ``search-data.js``); each error id once, as the newest release
               that raised it has it
    sites      [[path index, scope, kind, first source line], ...]
               each distinct raise statement once
    raised     {tag: [[error index, site index, line, end_line], ...]}
               every site of every error of the release (1-based lines)

The rows are built by :class:`ReleaseIndexBuilder`, fed one release at a time
(memory holds the compact rows, never the releases' records).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from miner.model import Error, MineResult, Site
from miner.publish.records import escape_surrogates

#: File name of the index in a release site.
RELEASE_INDEX = "release-index.json"
#: Version of the index's shape.
RELEASE_INDEX_VERSION = 1
#: Message kinds whose parts are matched (dynamic messages have no template).
TEMPLATED = ("literal", "template")


def error_parts(error: Error) -> list[str | int] | None:
    """The parts of an error's message as the index stores them: literal text,
    ``0`` for each placeholder; None when the message is not a template."""
    if error.message_kind not in TEMPLATED:
        return None
    return [0 if p.expr is not None else (p.text or "") for p in error.message_parts]


def first_source_line(site: Site) -> str:
    """The first source line of a site's statement, stripped ("" when the
    excerpt does not hold it)."""
    lines = site.excerpt.text.split("\n")
    index = site.line - site.excerpt.start_line
    return lines[index].strip() if 0 <= index < len(lines) else ""


@dataclass
class ReleaseIndexBuilder:
    """Feed releases oldest first with :meth:`add`; :meth:`to_json` gives the index."""

    releases: list[str] = field(default_factory=list)
    _paths: dict[str, int] = field(default_factory=dict)
    _errors: dict[str, int] = field(default_factory=dict)
    _error_rows: list[list[Any]] = field(default_factory=list)
    _sites: dict[tuple[int, str, str, str], int] = field(default_factory=dict)
    _raised: dict[str, list[list[int]]] = field(default_factory=dict)

    def add(self, tag: str, result: MineResult) -> None:
        """Add the next release's errors and sites (a tag given twice replaces
        nothing: its second rows are ignored)."""
        if tag in self._raised:
            return
        self.releases.append(tag)
        rows: list[list[int]] = []
        for error in sorted(result.errors, key=lambda e: e.error_id):
            row = [error.error_id, error.exception, error.message, error.title, error_parts(error)]
            index = self._errors.get(error.error_id)
            if index is None:
                index = self._errors[error.error_id] = len(self._error_rows)
                self._error_rows.append(row)
            else:
                self._error_rows[index] = row  # the newest release's wording of the title
            for site in error.sites:
                path = self._paths.setdefault(site.path, len(self._paths))
                key = (path, site.scope, site.kind, first_source_line(site))
                site_index = self._sites.setdefault(key, len(self._sites))
                rows.append([index, site_index, site.line, site.end_line])
        self._raised[tag] = rows

    def to_json(self) -> dict[str, Any]:
        """The index (see the module doc)."""
        return {
            "schema_version": RELEASE_INDEX_VERSION,
            "releases": list(self.releases),
            "paths": list(self._paths),
            "errors": self._error_rows,
            "sites": [list(key) for key in self._sites],
            "raised": {tag: self._raised[tag] for tag in self.releases},
        }


def index_text(index: Mapping[str, Any]) -> str:
    """The index as compact JSON text, one line per release's rows (a few MB
    for eight SGLang releases; the indented form of ``dumps`` would be
    several times larger), deterministic, lone surrogates escaped."""
    head = {k: v for k, v in index.items() if k != "raised"}
    text = json.dumps(head, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    rows = [
        json.dumps(tag, ensure_ascii=False)
        + ":"
        + json.dumps(index["raised"][tag], separators=(",", ":"))
        for tag in index["releases"]
    ]
    raised = '"raised":{' + ",\n".join(rows) + "}"
    return escape_surrogates(text[:-1] + ",\n" + raised + "}\n")


def release_index(releases: Sequence[tuple[str, MineResult]]) -> dict[str, Any]:
    """The index of ``(tag, result)`` pairs given oldest first (holds every
    release in memory: for small inputs and tests)."""
    builder = ReleaseIndexBuilder()
    for tag, result in releases:
        builder.add(tag, result)
    return builder.to_json()
