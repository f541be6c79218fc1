"""Scoring and the answer: every error of a mined commit against a paste.

:class:`LookupIndex` holds the cards (:mod:`miner.lookup.cards`), their
templates and words (:class:`miner.lookup.candidates.Matcher`) and their
sites (:class:`miner.lookup.cards.SiteTable`). :meth:`LookupIndex.search`
scans the paste (:func:`miner.lookup.scan.parse_paste`), scores each
exception it shows against the candidates (:meth:`LookupIndex.score`) and
answers with :class:`Match` records, best first.

Scores are in ``[0, 1]``; :data:`GOOD` (0.5) separates matches from "closest
candidates". A rendered message that matches a template scores
``0.55 + 0.35 * coverage`` (coverage: the share of the message's non-blank
characters that are the template's literal text), a traceback frame that pins
the site's ``path:line`` scores 0.9 and more, a fragment found inside a literal
part 0.5 to 0.8 (only when the paste is that one line), and a mere word
overlap stays below 0.45.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from miner.lookup.candidates import LineHits, Matcher
from miner.lookup.cards import Card, Entry, SiteRef, SiteTable, site_details
from miner.lookup.frames import Evidence, frame_evidence
from miner.lookup.rules import END_PUNCTUATION, GOOD, WEAK_COVERAGE, WORD, normalize, solid_size
from miner.lookup.scan import Raised, parse_paste
from miner.model import Error, group_errors
from miner.publish.bundles import INDEX, load_bundle
from miner.publish.records import MANIFEST, SITES, read_json, read_sites

#: What :meth:`LookupIndex.score` gives per error: (score, pinned site or None, reasons).
Scored = tuple[float, SiteRef | None, tuple[str, ...]]


@dataclass(frozen=True, slots=True)
class Match:
    """One error scored against a paste."""

    card: Card
    score: float
    site: SiteRef
    """The site the paste points at (pinned by a frame), else the primary site."""
    reasons: tuple[str, ...]
    raised: int
    """Index into :func:`parse_paste`'s list of the exception that matched."""

    @property
    def good(self) -> bool:
        return self.score >= GOOD


def _last_name(dotted: str | None) -> str | None:
    if not dotted:
        return None
    name = dotted.rsplit(".", 1)[-1]
    return name if name.isidentifier() else None


def _entry(card: Card) -> Entry:
    literal = normalize(" ".join(p.text or "" for p in card.message_parts))
    # The longest chunk without its end punctuation: still in every match.
    chunks = [c.rstrip(END_PUNCTUATION) for c in literal.split()]
    anchor = max(chunks, key=len) if chunks else ""
    words = frozenset(WORD.findall(literal.lower()))
    return Entry(card, literal, solid_size(literal), anchor, words)


class LookupIndex:
    """Every error of a mined commit, ready to be matched against pastes.

    Build it from errors (:meth:`from_errors`) or a mined output folder
    (:meth:`load`); :meth:`search` does the matching.

    ``details`` gives ``(path, line) -> (kind, first source line)`` of every
    site, for cards whose :class:`SiteRef` lacks them (read from the site's
    index); it is called once, the first time a traceback frame needs it.
    """

    def __init__(
        self,
        cards: Iterable[Card],
        details: Callable[[], Mapping[tuple[str, int], tuple[str, str]]] | None = None,
    ) -> None:
        self.entries: list[Entry] = [_entry(card) for card in cards]
        self.matcher = Matcher(self.entries)
        self.sites = SiteTable([e.card for e in self.entries], details)

    @classmethod
    def from_errors(cls, errors: Iterable[Error]) -> LookupIndex:
        """The index of mined errors."""
        return cls(Card.from_error(e) for e in errors)

    @classmethod
    def load(cls, out: Path) -> LookupIndex:
        """The index of a mined output folder: the site's ``api/index.json.gz``
        when it was written for the commit of ``manifest.json`` (a fraction
        of a second; the sites' kinds and source lines are read from
        ``sites.jsonl`` only when a traceback frame needs them), else the
        records in ``sites.jsonl`` (a few seconds for a release).

        Raises:
            RecordsError: ``out`` holds no readable records.
        """
        manifest = read_json(out / MANIFEST)
        published = out / "site" / INDEX
        try:
            data = load_bundle(published.read_bytes())
            if data["commit"]["sha"] == manifest["commit"]["sha"]:
                cards = [Card.from_index(entry) for entry in data["errors"]]
                return cls(cards, details=lambda: site_details(out / SITES))
        except (OSError, ValueError, KeyError, TypeError):
            pass
        return cls.from_errors(group_errors(read_sites(out / SITES)))

    def repo_path(self, path: str) -> str | None:
        """The repository path a traceback path ends in (:meth:`SiteTable.repo_path`)."""
        return self.sites.repo_path(path)

    def message_matches(self, index: int, text: str) -> bool:
        """Whether ``text`` is a rendering of the template of error ``index``,
        end punctuation aside (:meth:`Matcher.message_matches`)."""
        return self.matcher.message_matches(index, text)

    def _messages(self, raised: Raised, hits: LineHits) -> dict[int, tuple[float, bool]]:
        """The best (coverage, loose) of each template over the readings."""
        message: dict[int, tuple[float, bool]] = {}
        for text in raised.messages:
            for index, found in self.matcher.message_scores(text, hits).items():
                if index not in message or found > message[index]:
                    message[index] = found
        return message

    def score(
        self,
        raised: Raised,
        hits: LineHits | None = None,
        words: Mapping[int, float] | None = None,
    ) -> dict[int, Scored]:
        """Scores of the errors matching one parsed exception: index -> (score,
        pinned site or None, reasons). When no template matches a reading,
        word overlap counts: ``words`` (the paste's, given by :meth:`search`
        for one exception only), else :meth:`Matcher.word_scores` of the
        first message; for the other exceptions of a paste :meth:`search`
        gives ``{}``, and words count only for errors a frame pins."""
        evidence = frame_evidence(self.sites, raised.frames)
        message = self._messages(raised, hits or LineHits(self.matcher.anchors))
        fragment: Mapping[int, float] = {}
        if message or not raised.messages:
            words = {}
        elif words is None:
            words = self.matcher.word_scores(raised.messages[0])
        if raised.alone and not message and raised.messages:
            fragment = self.matcher.fragment_scores(raised.messages[0])
        shown = _last_name(raised.exception)
        out: dict[int, Scored] = {}
        for index in evidence.pinned.keys() | message.keys() | fragment.keys() | words.keys():
            value, site, reasons = self._combine(
                index, evidence, message.get(index), fragment.get(index), words.get(index)
            )
            own = _last_name(self.entries[index].card.exception)
            if shown and own and site is None:
                if shown == own:
                    value += 0.02
                    reasons.append(f"same exception type {shown}")
                else:
                    # Python prints the class raised: another name is evidence
                    # against, the more so when the template explains little.
                    weak = index not in message or message[index][0] < WEAK_COVERAGE
                    value *= 0.75 if weak else 0.85
                    reasons.append(f"exception type differs ({shown} shown, {own} raised here)")
            out[index] = (min(value, 1.0), site, tuple(reasons))
        if raised.role == "path":
            self._path_scores(raised, out)
        return out

    def _path_scores(self, raised: Raised, out: dict[int, Scored]) -> None:
        """As the site's search box: every error raised in the file of a
        pasted ``path.py:123`` is a candidate; a file name alone
        (``registry.py:154``) names every file so called, and its line pins
        a site in each."""
        for frame in raised.frames:
            named = self.sites.repo_path(frame.path)
            files = [named] if named is not None else self.sites.named(frame.path)
            for path in files:
                for index, site in self.sites.by_path[path]:
                    if site.line <= frame.line <= site.end_line:
                        pin = (0.9, site, (f"the path and line point at {site.path}:{site.line}",))
                        if index not in out or out[index][0] < 0.9:
                            out[index] = pin
                    elif index not in out:
                        share = 0.6 if len(files) == 1 else 0.5
                        out[index] = (share, site, (f"raised in {site.path}",))

    @staticmethod
    def _combine(
        index: int,
        evidence: Evidence,
        message: tuple[float, bool] | None,
        fragment: float | None,
        words: float | None,
    ) -> tuple[float, SiteRef | None, list[str]]:
        """One error's score from the evidence: ``(score, site a frame pins
        strongly or None, reasons)``."""
        reasons: list[str] = []
        pinned = evidence.pinned.get(index)
        strength = pinned[1] if pinned else 0.0
        coverage = 0.0
        if message is not None:
            coverage, loose = message
            aside = ", end punctuation aside" if loose else ""
            reasons.append(f"message matches the template ({coverage:.0%} literal{aside})")
            if loose:
                coverage *= 0.98
        if pinned is not None:
            reasons.append(pinned[2])
        if pinned is not None and strength >= 0.8:
            value = 0.95 + 0.05 * message[0] if message is not None else strength
            return value, pinned[0], reasons
        if message is not None:
            value = 0.55 + 0.35 * coverage
            if pinned is not None or index in evidence.same_scope:
                value += 0.07
                if pinned is None:
                    reasons.append("a traceback frame runs in its function")
            elif index in evidence.same_file:
                value += 0.05
                reasons.append("a traceback frame runs in its file")
            elif evidence.raised_here:
                value *= 0.8
                reasons.append("the traceback runs in none of its files")
        elif pinned is not None:
            value = 0.5 + 0.1 * max(fragment or 0.0, words or 0.0)
        elif fragment is not None:
            value = 0.5 + 0.3 * fragment
            reasons.append("the text is part of the message")
        else:
            value = 0.45 * (words or 0.0)
            reasons.append(f"shares words with the message ({words or 0.0:.0%})")
        return value, pinned[0] if pinned is not None else None, reasons

    def search(self, text: str, limit: int = 5) -> list[Match]:
        """Errors matching a paste, best first (at most ``limit``; one per
        error, the best-scoring exception of the paste for each).

        When nothing scores :data:`GOOD` or more, the list holds the closest
        candidates, all below it.
        """
        parsed = parse_paste(text)
        hits = LineHits(self.matcher.anchors)
        # Word overlap is read once, from the first message: the closest
        # candidates when nothing matches.
        first = next((n for n, r in enumerate(parsed) if r.messages), -1)
        words = self.matcher.word_scores(parsed[first].messages[0]) if first >= 0 else {}
        best: dict[int, Match] = {}
        for position, raised in enumerate(parsed):
            # Later exceptions of a chain count a little less than the final one.
            weight = 1.0 if raised.role in ("final", "message", "path") else 0.97
            shared = words if position == first else {}
            for index, (value, site, reasons) in self.score(raised, hits, shared).items():
                value = round(value * weight, 4)
                current = best.get(index)
                if current is None or value > current.score:
                    card = self.entries[index].card
                    best[index] = Match(card, value, site or card.sites[0], reasons, position)
        ranked = sorted(best.values(), key=lambda m: (-m.score, m.card.error_id))
        return ranked[:limit]
