"""Lookup across releases: ``miner lookup --history SITE``.

:class:`ReleaseBook` reads a release site's ``release-index.json`` and
``history.json``; :func:`search_releases` matches a paste against every error
id any release raised, one answer per error lineage: the releases raising it
with the line in each, the releases the paste fits (frames, then wording),
and how it changed (:func:`life_sentences`).
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from miner.errors import RecordsError
from miner.lookup.cards import Card, SiteRef
from miner.lookup.frames import code_similarity
from miner.lookup.index import LookupIndex, Match
from miner.lookup.report import card_location, raised_json, visible, visible_json
from miner.lookup.rules import SIMILAR_CODE, normalize
from miner.lookup.scan import Raised, parse_paste
from miner.model import History, MessagePart
from miner.publish.records import read_json
from miner.publish.release_index import RELEASE_INDEX


@dataclass(frozen=True, slots=True)
class ReleaseBook:
    """Every error of every release a release site documents, as lookup needs
    them: read from its ``release-index.json`` (:mod:`miner.publish.release_index`)
    and ``history.json``.

    ``cards`` holds each error id once; its sites are the distinct sites of
    every release that raised it, the newest release's first (a line that
    moved between releases is one more site). ``raised`` maps an error id to
    the releases raising it and its sites (with their lines) in each;
    ``histories`` every id to the history of its lineage.
    """

    releases: tuple[str, ...]
    cards: tuple[Card, ...]
    raised: Mapping[str, Mapping[str, tuple[SiteRef, ...]]]
    histories: Mapping[str, History]

    @classmethod
    def from_json(cls, index: Mapping[str, Any], history: Mapping[str, Any]) -> ReleaseBook:
        """From the parsed ``release-index.json`` and ``history.json``.

        Raises:
            KeyError, TypeError, ValueError, IndexError: not that shape.
        """
        releases = tuple(str(r) for r in index["releases"])
        paths = list(index["paths"])
        sites = [(paths[p], scope, kind, code) for p, scope, kind, code in index["sites"]]
        raised: dict[str, dict[str, tuple[SiteRef, ...]]] = defaultdict(dict)
        ordered: dict[str, dict[SiteRef, None]] = defaultdict(dict)
        rows = index["errors"]
        for tag in reversed(releases):  # the newest release's sites first
            by_error: dict[int, list[SiteRef]] = defaultdict(list)
            for error, site, line, end_line in index["raised"][tag]:
                path, scope, kind, code = sites[site]
                by_error[error].append(SiteRef(path, int(line), int(end_line), scope, kind, code))
            for error, refs in by_error.items():
                error_id = rows[error][0]
                raised[error_id][tag] = tuple(refs)
                ordered[error_id].update(dict.fromkeys(refs))
        cards = []
        for error_id, exception, message, title, parts in rows:
            if error_id not in ordered:
                continue
            shown = tuple(
                MessagePart(expr="") if p == 0 else MessagePart(text=str(p)) for p in parts or ()
            )
            cards.append(Card(error_id, exception, message, shown, title, tuple(ordered[error_id])))
        histories: dict[str, History] = {}
        for record in history.get("errors", ()):
            lineage = History.from_json(record)
            for error_id in lineage.ids:
                histories[error_id] = lineage
        return cls(releases, tuple(cards), dict(raised), histories)

    @classmethod
    def load(cls, site: Path) -> ReleaseBook:
        """The book of the release site at ``site`` (``miner history`` /
        ``miner release`` output).

        Raises:
            RecordsError: ``site`` is no release site, or one written before
                the release index existed (run ``miner history`` again).
        """
        if not (site / RELEASE_INDEX).is_file():
            raise RecordsError(
                f"{site}: no release index here ({RELEASE_INDEX} missing); "
                "point --history at a folder `miner history` or `miner release` wrote "
                "(a site written by an older version: run it again)"
            )
        index = read_json(site / RELEASE_INDEX)
        history = read_json(site / "history.json")
        try:
            return cls.from_json(index, history)
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            raise RecordsError(f"{site}: unreadable release index ({exc!r})") from None

    def lineage(self, error_id: str) -> History:
        """The history of an error id (one made from ``raised`` when
        ``history.json`` has none: the releases raising that id)."""
        found = self.histories.get(error_id)
        if found is not None:
            return found
        seen = tuple(r for r in self.releases if r in self.raised.get(error_id, {}))
        last = seen[-1] if seen else self.releases[-1]
        return History(
            error_id,
            (error_id,),
            seen[0] if seen else last,
            last,
            self.releases[-1],
            self.releases[0],
            seen,
        )


@dataclass(frozen=True, slots=True)
class ReleaseMatch:
    """One error (a lineage, across rewordings) matched against a paste, over
    every release documented.

    ``match`` is the best-scoring id of the lineage; ``card`` the id of the
    release the paste fits (its card is the one to read), ``fits`` those
    releases and ``fit_by`` why (``frames``: traceback lines and source lines
    pin the sites there; ``message``: the wording is theirs; empty: nothing
    tells releases apart). ``raised`` lists every release raising the error
    with its id and sites there, oldest first.
    """

    match: Match
    history: History
    card: Card
    fits: tuple[str, ...]
    fit_by: tuple[str, ...]
    raised: tuple[tuple[str, str, tuple[SiteRef, ...]], ...]

    @property
    def score(self) -> float:
        return self.match.score

    @property
    def good(self) -> bool:
        return self.match.good

    @property
    def newest(self) -> str | None:
        """The id of the error in the newest release, or None when it no longer raises it."""
        return self.history.error_id if self.history.present else None


def _runs(seen: Sequence[str], releases: Sequence[str]) -> list[tuple[str, str]]:
    """``seen`` as runs of consecutive documented releases: ``(first, last)``."""
    order = {tag: i for i, tag in enumerate(releases)}
    runs: list[tuple[str, str]] = []
    previous = -2
    for tag in sorted(seen, key=lambda t: order.get(t, -1)):
        position = order.get(tag, -1)
        if runs and position == previous + 1:
            runs[-1] = (runs[-1][0], tag)
        else:
            runs.append((tag, tag))
        previous = position
    return runs


def _span(first: str, last: str) -> str:
    return first if first == last else f"{first} to {last}"


def _one_line(text: str | None) -> str:
    return " ".join((text or "").split())


def life_sentences(book: ReleaseBook, history: History) -> list[str]:
    """How an error lived over the releases documented: where it is raised
    (``raised in v0.5.16 only``, ``raised in every release documented (v0.5.16
    to v0.5.19)``), then each change in release order (``added in``,
    ``reworded in v0.5.19: the current text is ...``, ``changed in``,
    ``moved in``, ``removed in``). Facts from ``history.json``; texts from the
    release index."""
    texts = {card.error_id: card.message or card.title for card in book.cards}
    runs = _runs(history.seen, book.releases)
    if len(history.seen) == 1:
        where = f"raised in {history.seen[0]} only"
    elif list(history.seen) == list(book.releases):
        where = f"raised in every release documented ({_span(book.releases[0], book.releases[-1])})"
    else:
        where = "raised in " + ", ".join(_span(a, b) for a, b in runs)
    out = [where]
    for event in history.events:
        if event.kind == "added":
            if event.release != book.releases[0]:
                out.append(f"added in {event.release}")
        elif event.kind == "removed":
            out.append(f"removed in {event.release}")
        elif event.kind == "moved":
            moved = ", ".join(event.aspects) or "place"
            out.append(f"moved in {event.release} ({moved})")
        elif "message" in event.aspects:
            current = history.present and event.error_id == history.error_id
            lead = "the current text is" if current else "the text became"
            others = [a for a in event.aspects if a != "message"]
            also = f" (also {', '.join(others)})" if others else ""
            out.append(
                f"reworded in {event.release}{also}: {lead} {_one_line(texts.get(event.error_id))}"
            )
        else:
            out.append(f"changed in {event.release} ({', '.join(event.aspects)})")
    return out


def _release_fit(
    index: LookupIndex,
    raised: Raised | None,
    worded: set[str],
    sites: Sequence[SiteRef],
    error_id: str,
) -> tuple[int, list[str]]:
    """How well a paste fits one release's version of an error: points and
    what gave them (a frame's line inside one of its sites, showing a source
    line like the site's or none: 2 each; a frame's source line equal to the
    site's: 1 each; the wording, when the paste's
    message matches the template of ``error_id`` (in ``worded``): 1)."""
    points, why = 0, []
    if error_id in worded:
        points, why = 1, ["message"]
    frames = raised.frames if raised is not None else ()
    lines = code = 0
    for frame in frames:
        path = index.repo_path(frame.path)
        shown = normalize(frame.code) if frame.code else None
        for site in sites:
            if site.path != path:
                continue
            same = bool(shown and site.code and shown == normalize(site.code))
            alike = same or not shown or not site.code
            if not alike:
                alike = code_similarity(shown or "", site.code or "") >= SIMILAR_CODE
            # a line counts when the source line shown there is the site's (as
            # a frame pins a site: :meth:`LookupIndex._frame_evidence`)
            if site.line <= frame.line <= site.end_line and alike:
                lines += 1
            code += same
    if lines or code:
        points += 2 * lines + code
        why.insert(0, "frames")
    return points, why


def search_releases(book: ReleaseBook, text: str, limit: int = 5) -> list[ReleaseMatch]:
    """Errors of every release of ``book`` matching a paste, best first, one
    per lineage (an error reworded between releases is one answer).

    The paste is matched against every error id any release raised (every
    wording, every line); the lineage's best-scoring id decides the score.
    Among the releases raising the error, the paste *fits* those whose version
    its frames pin (a frame's line inside a site of that release, its source
    line equal to the site's), else those whose wording it shows; the card
    to read is the id of the newest release it fits.
    """
    index = LookupIndex(book.cards)
    by_id = {card.error_id: card for card in book.cards}
    positions = {entry.card.error_id: i for i, entry in enumerate(index.entries)}
    parsed = parse_paste(text)
    ranked: dict[str, Match] = {}
    for match in index.search(text, limit=max(limit * 8, 40)):
        lineage = book.lineage(match.card.error_id)
        current = ranked.get(lineage.error_id)
        if current is None or match.score > current.score:
            ranked[lineage.error_id] = match
    out: list[ReleaseMatch] = []
    for _, match in sorted(ranked.items(), key=lambda kv: (-kv[1].score, kv[0]))[:limit]:
        history = book.lineage(match.card.error_id)
        raised_in: list[tuple[str, str, tuple[SiteRef, ...]]] = []
        for tag in book.releases:
            for error_id in reversed(history.ids):
                sites = book.raised.get(error_id, {}).get(tag)
                if sites:
                    raised_in.append((tag, error_id, sites))
                    break
        source = parsed[match.raised] if match.raised < len(parsed) else None
        worded = {
            error_id
            for error_id in history.ids
            if source is not None
            and error_id in positions
            and any(index.message_matches(positions[error_id], m) for m in source.messages)
        }
        scored = [
            (*_release_fit(index, source, worded, sites, error_id), tag, error_id)
            for tag, error_id, sites in raised_in
        ]
        best = max((points for points, _, _, _ in scored), default=0)
        fits = tuple(tag for points, _, tag, _ in scored if points == best and best > 0)
        fit_by = next((tuple(why) for points, why, _, _ in scored if points == best), ())
        if not fits:
            fits = tuple(tag for tag, _, _ in raised_in)
            fit_by = ()
        card_id = next(
            (error_id for points, _, tag, error_id in reversed(scored) if tag in fits),
            match.card.error_id,
        )
        out.append(
            ReleaseMatch(
                match, history, by_id.get(card_id, match.card), fits, fit_by, tuple(raised_in)
            )
        )
    return out


def _site_runs(
    raised: Sequence[tuple[str, str, tuple[SiteRef, ...]]], releases: Sequence[str]
) -> list[tuple[str, str, SiteRef]]:
    """The primary site of each release raising an error, consecutive
    releases with the same place merged: ``(first, last, site)``."""
    out: list[tuple[str, str, SiteRef]] = []
    order = {tag: i for i, tag in enumerate(releases)}
    last_position = -2
    for tag, _, sites in raised:
        site = sites[0]
        place = (site.path, site.line, site.scope)
        if (
            out
            and order[tag] == last_position + 1
            and (out[-1][2].path, out[-1][2].line, out[-1][2].scope) == place
        ):
            out[-1] = (out[-1][0], tag, out[-1][2])
        else:
            out.append((tag, tag, site))
        last_position = order[tag]
    return out


def _fit_sentence(found: ReleaseMatch) -> str:
    releases = ", ".join(found.fits)
    if not found.fit_by:
        return f"nothing in the paste tells these releases apart: {releases}"
    why = {"frames": "its frames' lines and source lines", "message": "its wording"}
    return f"the paste fits {releases} ({' and '.join(why[w] for w in found.fit_by)})"


def release_match_json(
    book: ReleaseBook, found: ReleaseMatch, site: Path, base_url: str | None
) -> dict[str, object]:
    """One answer of ``miner lookup --history --json``."""
    card = found.card
    newest = found.newest
    newest_site = None
    if newest is not None:
        sites = book.raised.get(newest, {}).get(book.releases[-1], ())
        newest_site = sites[0] if sites else None
    return {
        "error_id": card.error_id,
        "lineage": found.history.error_id,
        "ids": list(found.history.ids),
        "score": found.match.score,
        "good": found.good,
        "exception": card.exception,
        "message": card.message,
        "card": card_location(site, card.error_id, base_url),
        "fits": list(found.fits),
        "fit_by": list(found.fit_by),
        "raised": [
            {"release": tag, "error_id": error_id, "path": s.path, "line": s.line, "scope": s.scope}
            for tag, error_id, sites in found.raised
            for s in sites[:1]
        ],
        "present": found.history.present,
        "life": life_sentences(book, found.history),
        "events": [e.to_json() for e in found.history.events],
        "newest": None
        if newest is None
        else {
            "release": book.releases[-1],
            "error_id": newest,
            "card": card_location(site, newest, base_url),
            "path": newest_site.path if newest_site else None,
            "line": newest_site.line if newest_site else None,
        },
        "reasons": list(found.match.reasons),
    }


def report_releases_json(
    book: ReleaseBook, text: str, found: Sequence[ReleaseMatch], site: Path, base_url: str | None
) -> str:
    """``miner lookup --history --json``: the releases searched, how the paste
    was read, and every answer (:func:`release_match_json`)."""
    payload = {
        "matched": bool(found) and found[0].good,
        "releases": list(book.releases),
        "pasted": [raised_json(r) for r in parse_paste(text)],
        "results": [release_match_json(book, f, site, base_url) for f in found],
    }
    return visible_json(json.dumps(payload, indent=2, ensure_ascii=False))


def report_releases_text(
    book: ReleaseBook, found: Sequence[ReleaseMatch], site: Path, base_url: str | None
) -> str:
    """``miner lookup --history``: each matching error with its life over the
    releases, the line in each, the releases the paste fits, the card of the
    release it came from and the newest release's card. Mined text is shown
    as :func:`report_text` shows it (control characters as escapes)."""
    span = _span(book.releases[0], book.releases[-1])
    if not found:
        return f"no card of any release ({span}) matches this text, and none is close to it"
    good = found[0].good
    lines = [] if good else [f"no card of any release ({span}) matches this well; the closest:"]
    for rank, item in enumerate(found, 1):
        if good and not item.good:
            break
        card = item.card
        message = _one_line(card.message if card.message is not None else card.title)
        lines.append(f"{rank}. {item.match.score:.2f}  {card.exception or 're-raise'}: {message}")
        lines.append(f"   {'; '.join(life_sentences(book, item.history))}")
        for first, last, s in _site_runs(item.raised, book.releases):
            lines.append(f"   {_span(first, last)}: {s.path}:{s.line} in {s.scope}")
        lines.append(f"   {_fit_sentence(item)}")
        release = next(
            (
                tag
                for tag, error_id, _ in reversed(item.raised)
                if error_id == card.error_id and tag in item.fits
            ),
            item.fits[-1] if item.fits else "",
        )
        lines.append(f"   card ({release}): {card_location(site, card.error_id, base_url)}")
        newest = item.newest
        if newest is not None and newest != card.error_id:
            where = card_location(site, newest, base_url)
            lines.append(f"   newest release's card ({book.releases[-1]}): {where}")
        lines.append(f"   why: {'; '.join(item.match.reasons)}")
    return "\n".join(visible(line) for line in lines)
