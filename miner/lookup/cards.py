"""Candidates, step 0: the errors of a mined commit as lookup reads them.

A :class:`Card` per error (its template, exception and sites), read from the
mined records (``sites.jsonl``, through :class:`miner.model.Error`) or from
the site's ``api/index.json``; a :class:`SiteRef` per site, with what a
traceback frame is compared with (file, lines, scope, kind, first source
line).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from miner.errors import RecordsError
from miner.model import Error, MessagePart, Site
from miner.publish.records import read_sites
from miner.publish.release_index import first_source_line

#: Message kinds whose parts are matched (dynamic messages have no template).
SHOWN = ("literal", "template")


@dataclass(frozen=True, slots=True)
class SiteRef:
    """Where an error is raised: enough to pin it from a traceback frame."""

    path: str
    line: int
    end_line: int
    scope: str
    kind: str | None = None
    """``raise``, ``assert`` or ``call``; None when not known (the site's
    index leaves it out: :class:`LookupIndex` reads it from the records
    when a frame needs it)."""
    code: str | None = None
    """The statement's first source line, stripped (None: not known, as ``kind``)."""


def site_code(site: Site) -> str:
    """The first source line of a site's statement, stripped."""
    return first_source_line(site)


def site_ref(site: Site) -> SiteRef:
    return SiteRef(site.path, site.line, site.end_line, site.scope, site.kind, site_code(site))


@dataclass(frozen=True, slots=True)
class Card:
    """One error as lookup sees it: what a runtime message is matched
    against, and where it is raised (primary site first)."""

    error_id: str
    exception: str | None
    message: str | None
    message_parts: tuple[MessagePart, ...]
    title: str
    sites: tuple[SiteRef, ...]

    @classmethod
    def from_error(cls, error: Error) -> Card:
        """From a mined error."""
        return cls(
            error_id=error.error_id,
            exception=error.exception,
            message=error.message,
            message_parts=error.message_parts if error.message_kind in SHOWN else (),
            title=error.title,
            sites=tuple(site_ref(s) for s in error.sites),
        )

    @classmethod
    def from_index(cls, entry: dict[str, Any]) -> Card:
        """From an entry of the site's ``api/index.json``."""
        return cls(
            error_id=entry["error_id"],
            exception=entry["exception"],
            message=entry["message"],
            message_parts=tuple(MessagePart.from_json(p) for p in entry["message_parts"])
            if entry["message_kind"] in SHOWN
            else (),
            title=entry["title"],
            sites=tuple(
                SiteRef(s["path"], s["line"], s["end_line"], s["scope"]) for s in entry["sites"]
            ),
        )


@dataclass(frozen=True, slots=True)
class Entry:
    """One card as the matcher sees it."""

    card: Card
    literal: str
    """The literal parts joined with a space, white space folded."""
    literal_size: int
    """Non-blank characters of the literal parts."""
    anchor: str
    """The longest blank-free piece of literal text: a fast pre-filter."""
    words: frozenset[str]


def site_details(path: Path) -> dict[tuple[str, int], tuple[str, str]]:
    """``(path, line) -> (kind, first source line)`` of every site in a
    ``sites.jsonl``; empty when it cannot be read."""
    try:
        return {(s.path, s.line): (s.kind, site_code(s)) for s in read_sites(path)}
    except (OSError, ValueError, KeyError, TypeError, RecordsError):
        return {}


class SiteTable:
    """Every site of the cards by file, for traceback frames: the sites of a
    repository path, the path a traceback's path ends in, the files of a
    name, and each site's kind and first source line.

    ``details`` gives ``(path, line) -> (kind, first source line)`` of every
    site, for cards whose :class:`SiteRef` lacks them (read from the site's
    index); it is called once, the first time a frame needs it.
    """

    def __init__(
        self,
        cards: Sequence[Card],
        details: Callable[[], Mapping[tuple[str, int], tuple[str, str]]] | None = None,
    ) -> None:
        self.by_path: dict[str, list[tuple[int, SiteRef]]] = defaultdict(list)
        self.by_suffix: dict[tuple[str, ...], set[str]] = defaultdict(set)
        self.by_name: dict[str, set[str]] = defaultdict(set)
        self._details_source = details
        self._details: Mapping[tuple[str, int], tuple[str, str]] | None = None
        for index, card in enumerate(cards):
            for site in card.sites:
                self.by_path[site.path].append((index, site))
        for path in self.by_path:
            components = tuple(path.split("/"))
            for size in range(min(2, len(components)), len(components) + 1):
                self.by_suffix[components[-size:]].add(path)
            self.by_name[components[-1]].add(path)

    def repo_path(self, path: str) -> str | None:
        """The repository path a traceback path ends in (the longest shared
        tail of at least two components: ``.../site-packages/sglang/srt/x.py``
        -> ``python/sglang/srt/x.py``), or None."""
        components = tuple(p for p in path.replace("\\", "/").split("/") if p)
        for size in range(len(components), 0, -1):
            found = self.by_suffix.get(components[-size:])
            if found:
                return min(found) if len(found) > 1 else next(iter(found))
        return None

    def named(self, path: str) -> list[str]:
        """The repository files named as the file of ``path`` (its last
        component), sorted: where a file moved to another folder may be."""
        name = path.replace("\\", "/").rsplit("/", 1)[-1]
        return sorted(self.by_name.get(name, ()))

    def detail(self, site: SiteRef) -> tuple[str | None, str | None]:
        """A site's kind and first source line (from the records when the card lacks them)."""
        if site.code is not None:
            return site.kind, site.code
        if self._details is None:
            self._details = self._details_source() if self._details_source else {}
        found = self._details.get((site.path, site.line))
        return (found[0], found[1]) if found else (None, None)
