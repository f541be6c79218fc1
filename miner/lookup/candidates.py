"""Candidates: which errors a reading of the paste may be, and how well its
text fits each.

A message matches a template only if the template's *anchor* (its longest
blank-free piece of literal text, end punctuation aside) is in it, and an
anchor never spans two lines. :class:`AnchorIndex` finds the anchors in a
line through one 4-character piece of each (the rarest among all anchors),
so a reading is tried only against the templates whose anchor one of its
lines holds (:class:`LineHits`): the same answers as trying every template,
at the cost of the few that could match.

:class:`Matcher` then scores a reading against those: full template matches
(:meth:`Matcher.message_scores`), fragments of a literal part
(:meth:`Matcher.fragment_scores`) and word overlap (:meth:`Matcher.word_scores`).
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Sequence

from miner.lookup.cards import Entry
from miner.lookup.rules import (
    END_PUNCTUATION,
    MAX_MESSAGE,
    MIN_COVERAGE,
    MIN_FRAGMENT,
    MIN_LITERAL,
    MIN_SPECIFIC,
    WORD,
    normalize,
    solid_size,
)
from miner.lookup.template import Solid, Template, compile_template
from miner.model import MessagePart

#: Length of the piece of an anchor an :class:`AnchorIndex` files it under.
GRAM = 4
#: Errors a paste's word overlap makes candidates, at most (the closest ones):
#: words only rank the "closest candidates" below every match.
MAX_WORD_CANDIDATES = 64


def _grams(text: str) -> set[str]:
    return {text[k : k + GRAM] for k in range(len(text) - GRAM + 1)}


class AnchorIndex:
    """The templates whose anchor a line holds, found through one piece of
    each anchor.

    ``anchors[i]`` is the anchor of entry ``i``, or None when the entry is
    never matched as a message (too little literal text). An anchor of at
    least :data:`GRAM` characters is filed under its rarest piece of that
    length; a shorter one is tried on every line.
    """

    def __init__(self, anchors: Sequence[str | None]) -> None:
        counts: Counter[str] = Counter()
        for distinct in {a for a in anchors if a is not None}:
            counts.update(_grams(distinct))
        self.by_gram: dict[str, dict[str, list[int]]] = defaultdict(dict)
        self.always: list[int] = []
        self.anchor_of: list[str] = [a or "" for a in anchors]
        for index, anchor in enumerate(anchors):
            if anchor is None:
                continue
            if len(anchor) < GRAM:
                self.always.append(index)
                continue
            gram = min(_grams(anchor), key=lambda g: (counts[g], g))
            self.by_gram[gram].setdefault(anchor, []).append(index)

    def hits(self, line: str) -> set[int]:
        """The entries whose anchor is in ``line`` (and those always tried).
        O(len(line)) set and dictionary look-ups, and one ``in`` per anchor
        filed under a piece the line holds."""
        out = set(self.always)
        for gram in _grams(line) & self.by_gram.keys():
            for anchor, ids in self.by_gram[gram].items():
                if anchor in line:
                    out.update(ids)
        return out


class LineHits:
    """:meth:`AnchorIndex.hits` of the lines of readings, each line read once
    per paste (readings share lines). A line inside the line read last (the
    readings of a line from each ``": "`` on) keeps those of its hits whose
    anchor it holds: the same set, without reading the line again."""

    def __init__(self, anchors: AnchorIndex) -> None:
        self._anchors = anchors
        self._cache: dict[str, set[int]] = {}
        self._last = ""
        self._always = set(anchors.always)

    def line(self, line: str) -> set[int]:
        """The entries whose anchor is in ``line`` (and those always tried)."""
        found = self._cache.get(line)
        if found is None:
            if self._last and line in self._last:
                anchors = self._anchors.anchor_of
                found = {
                    i for i in self._cache[self._last] if i in self._always or anchors[i] in line
                }
            else:
                found = self._anchors.hits(line)
                self._last = line
            self._cache[line] = found
        return found

    def of(self, text: str) -> set[int]:
        """The entries whose anchor is in some line of ``text``: a superset
        of those whose anchor is in ``text``."""
        out: set[int] = set()
        for line in text.split("\n"):
            out |= self.line(line)
        return out


class Matcher:
    """The templates of every entry, compiled when first needed, and the
    word weights: how well a text fits each error's message."""

    def __init__(self, entries: Sequence[Entry]) -> None:
        self.entries = entries
        self._patterns: dict[int, Template] = {}
        self._loose: dict[int, Template | None] = {}
        self.anchors = AnchorIndex(
            [e.anchor if e.literal_size >= MIN_LITERAL else None for e in entries]
        )
        self._by_word: dict[str, list[int]] = defaultdict(list)
        for index, entry in enumerate(entries):
            for word in entry.words:
                self._by_word[word].append(index)
        total = max(len(entries), 1)
        self._idf = {w: math.log(1 + total / len(ids)) for w, ids in self._by_word.items()}
        self._own = [sum(self._idf[w] for w in e.words) for e in entries]

    def pattern(self, index: int) -> Template:
        """The compiled template of entry ``index``."""
        pattern = self._patterns.get(index)
        if pattern is None:
            pattern = compile_template(self.entries[index].card.message_parts)
            self._patterns[index] = pattern
        return pattern

    def loose_pattern(self, index: int) -> Template | None:
        """The template without the end punctuation of its last literal part,
        or None when it ends with a placeholder or has no end punctuation."""
        if index not in self._loose:
            parts = list(self.entries[index].card.message_parts)
            loose = None
            if parts and parts[-1].expr is None:
                text = (parts[-1].text or "").rstrip()
                trimmed = text.rstrip(END_PUNCTUATION).rstrip()
                if trimmed != text:
                    parts[-1] = MessagePart(text=trimmed)
                    loose = compile_template(parts)
            self._loose[index] = loose
        return self._loose[index]

    def message_scores(self, text: str, hits: LineHits) -> dict[int, tuple[float, bool]]:
        """Coverage of ``text`` (cut at :data:`MAX_MESSAGE` characters) by
        every template that fully matches it, and whether only with the end
        punctuation aside (the paste lacks or adds a final ``.``). Only the
        templates whose anchor a line of the text holds, and whose literal
        text may cover enough of it, are tried; the text is read for the
        matcher (:class:`Solid`) only when one is."""
        text = text[:MAX_MESSAGE]
        words = text.split()
        size = sum(map(len, words))
        tried = [
            index
            for index in hits.of(text)
            if self.entries[index].literal_size <= size
            and (
                self.entries[index].literal_size >= MIN_SPECIFIC
                or self.entries[index].literal_size >= MIN_COVERAGE * size
            )
            and self.entries[index].anchor in text
        ]
        if not tried:
            return {}
        solid = Solid.of_words(words)
        trimmed = text.rstrip().rstrip(END_PUNCTUATION)
        loose: Solid | None = None
        scores: dict[int, tuple[float, bool]] = {}
        for index in tried:
            entry = self.entries[index]
            coverage = min(entry.literal_size / size, 1.0)
            if self.pattern(index).match_solid(solid):
                scores[index] = (coverage, False)
                continue
            pattern = self.loose_pattern(index)
            if pattern is None and trimmed == text.rstrip():
                continue
            loose = loose or Solid.of(trimmed)
            if pattern is not None and loose.text and pattern.match_solid(loose):
                scores[index] = (min(entry.literal_size / max(len(loose.text), 1), 1.0), True)
            elif pattern is None and loose.text and self.pattern(index).match_solid(loose):
                # the paste adds end punctuation the template does not have
                scores[index] = (coverage, True)
        return scores

    def message_matches(self, index: int, text: str) -> bool:
        """Whether ``text`` is a rendering of the template of error ``index``,
        end punctuation aside (as :meth:`message_scores` matches)."""
        if self.entries[index].literal_size < MIN_LITERAL:
            return False  # too little literal text to tell a wording by
        text = text[:MAX_MESSAGE]
        trimmed = Solid.of(text.rstrip().rstrip(END_PUNCTUATION))
        loose = self.loose_pattern(index)
        return (
            self.pattern(index).match_solid(Solid.of(text))
            or (loose is not None and loose.match_solid(trimmed))
            or (loose is None and self.pattern(index).match_solid(trimmed))
        )

    def fragment_scores(self, text: str) -> dict[int, float]:
        """Share of a template's literal text that ``text`` (a fragment of one
        literal part, at least :data:`MIN_FRAGMENT` non-blank characters)
        covers, for every template holding it; a fragment ending in ``...``
        that starts the message counts 0.3 more."""
        needle = normalize(text[:MAX_MESSAGE])
        truncated = needle.endswith(("...", "\u2026"))
        needle = needle.rstrip(END_PUNCTUATION).rstrip()
        if solid_size(needle) < MIN_FRAGMENT:
            return {}
        scores = {}
        for index, entry in enumerate(self.entries):
            if needle in entry.literal and any(
                needle in normalize(p.text or "") for p in entry.card.message_parts
            ):
                share = min(solid_size(needle) / max(entry.literal_size, 1), 1.0)
                if truncated and entry.literal.startswith(needle):
                    share = min(share + 0.3, 1.0)  # the start of the message, cut short
                scores[index] = share
        return scores

    def word_scores(self, text: str) -> dict[int, float]:
        """IDF-weighted word overlap (0..1, Jaccard over word weights) of the
        first :data:`MAX_MESSAGE` characters of ``text`` with the templates
        sharing a word: the :data:`MAX_WORD_CANDIDATES` highest (rounded to 9
        places, ties by index)."""
        words = set(WORD.findall(text[:MAX_MESSAGE].lower())) & self._idf.keys()
        if not words:
            return {}
        hits: dict[int, float] = defaultdict(float)
        for word in words:
            for index in self._by_word[word]:
                hits[index] += self._idf[word]
        query = sum(self._idf[w] for w in words)
        scores = {
            index: shared / (query + self._own[index] - shared) for index, shared in hits.items()
        }
        ranked = sorted(scores, key=lambda index: (-round(scores[index], 9), index))
        return {index: scores[index] for index in ranked[:MAX_WORD_CANDIDATES]}
