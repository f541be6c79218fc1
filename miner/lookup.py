"""Find the card for a pasted error: a runtime message, a log line or a traceback.

The stage reads mined records (``sites.jsonl``) and answers "which card is
this?". Three parts, each a function of data:

* :func:`parse_paste` turns pasted text into the exceptions it shows
  (:class:`Raised`): log prefixes stripped, the ``Type: message`` line and the
  ``File "...", line N`` frames of each traceback of a chain.
* :func:`compile_template` turns a message template (``message_parts``) into a
  :class:`Template` matcher: literal parts exact (white space runs match any
  white space), each placeholder any text, new lines included. No regular
  expression is built from a template and nothing backtracks: a message is
  matched in at most ``len(message) + blocks`` ``str.find`` calls, whatever
  the message (:meth:`Template.match_solid`).
* :class:`LookupIndex` scores every error against the parsed paste and
  returns :class:`Match` records, best first.

Scores are in ``[0, 1]``; :data:`GOOD` (0.5) separates matches from "closest
candidates". A rendered message that matches a template scores
``0.55 + 0.35 * coverage`` (coverage: the share of the message's non-blank
characters that are the template's literal text), a traceback frame that pins
the site's ``path:line`` scores 0.9 and more, a fragment found inside a literal
part 0.5 to 0.8, and a mere word overlap stays below 0.45.

The prefix patterns are plain regular expressions that mean the same in Python
and JavaScript; the HTML site ships them to its search (:mod:`miner.publish.html`).
"""

from __future__ import annotations

import ast
import itertools
import json
import math
import re
import warnings
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from miner.model import Error, MessagePart, group_errors
from miner.publish.cards import card_ref
from miner.publish.patterns import PREFIX_PATTERNS
from miner.publish.records import MANIFEST, SITES, read_json, read_sites

#: Scores at or above this are matches; below it, only the closest candidates.
GOOD = 0.5
#: A template needs this many non-blank literal characters to match a message.
MIN_LITERAL = 6
#: ... and must explain at least this share of the message's non-blank characters.
MIN_COVERAGE = 0.25
#: A fragment must be this long (non-blank characters) to count as a match.
MIN_FRAGMENT = 12
#: Longest message tried against the templates (characters).
MAX_MESSAGE = 4000

_PREFIXES = tuple(re.compile(p) for p in PREFIX_PATTERNS)

TRACEBACK_HEAD = "Traceback (most recent call last):"
CAUSE_SEPARATOR = "The above exception was the direct cause of the following exception:"
CONTEXT_SEPARATOR = "During handling of the above exception, another exception occurred:"

_FRAME = re.compile(r'^\s*File "(?P<path>[^"\n]+)", line (?P<line>\d+)(?:, in (?P<func>.+))?\s*$')
_EXCEPTION_LINE = re.compile(r"^(?P<type>[A-Za-z_][\w.]*)(?::(?: (?P<message>.*))?)?$")
_CARETS = re.compile(r"^\s*[~^]+\s*$")
_WORD = re.compile(r"[a-z_][a-z0-9_]+|[0-9]+")
_SPACE = re.compile(r"\s+")
#: What separates two chunks of a template (:func:`compile_template`).
_NONE, _BLANK, _ANY = 0, 1, 2

Role = Literal["final", "cause", "context", "message"]
#: Message kinds whose parts are matched (dynamic messages have no template).
SHOWN = ("literal", "template")


@dataclass(frozen=True, slots=True)
class Frame:
    """One ``File "path", line N, in func`` line of a traceback."""

    path: str
    line: int
    function: str | None = None


@dataclass(frozen=True, slots=True)
class Raised:
    """One exception shown in a paste.

    ``exception`` is the type as printed (``ValueError``,
    ``sglang.srt.errors.ConfigError``) or None when the paste shows a bare
    message. ``messages`` are the readings of the message to try, longest
    first (a traceback's message may be followed by unrelated log lines).
    ``frames`` are outermost first, as printed. ``role`` says where the
    exception stands in a chain: ``final`` (the one that ended the program),
    ``cause`` (``raise ... from`` it), ``context`` (raised while handling it),
    or ``message`` for a paste without a traceback.
    """

    exception: str | None
    messages: tuple[str, ...]
    frames: tuple[Frame, ...] = ()
    role: Role = "final"


def strip_prefixes(line: str) -> str:
    """``line`` without its log prefixes (timestamps, ``[... TP0]`` tags, levels)."""
    for _ in range(8):
        for pattern in _PREFIXES:
            stripped = pattern.sub("", line, count=1)
            if stripped != line:
                line = stripped
                break
        else:
            return line
    return line


def _message_readings(lines: Sequence[str]) -> tuple[str, ...]:
    """The message read from its first line, then with each following line
    added, longest first; a quoted ``repr`` (``KeyError: 'x'``) adds its value."""
    lines = list(lines)
    while lines and not lines[-1].strip():
        lines.pop()
    readings: list[str] = []
    for end in range(min(len(lines), 40), 0, -1):
        text = "\n".join(lines[:end]).strip()
        if text and text not in readings:
            readings.append(text)
    for text in list(readings):
        if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
            try:
                with warnings.catch_warnings():  # e.g. "invalid escape sequence" in the text
                    warnings.simplefilter("ignore")
                    value = ast.literal_eval(text)
            except (ValueError, SyntaxError, MemoryError, RecursionError):
                continue
            if isinstance(value, str) and value not in readings:
                readings.append(value)
    return tuple(readings)


def _parse_block(lines: Sequence[str], role: Role) -> Raised:
    """One traceback: the lines after ``Traceback (most recent call last):``."""
    frames: list[Frame] = []
    last_frame = -1
    for index, line in enumerate(lines):
        match = _FRAME.match(line)
        if match:
            frames.append(Frame(match["path"], int(match["line"]), match["func"]))
            last_frame = index
    start = last_frame + 1
    # Skip the frame's source lines (indented), caret lines and blank lines.
    while start < len(lines) and (
        not lines[start].strip() or lines[start][0] in " \t" or _CARETS.match(lines[start])
    ):
        start += 1
    # An unindented source line (indentation lost in the paste) before the exception line.
    if (
        last_frame >= 0
        and start + 1 < len(lines)
        and not _EXCEPTION_LINE.match(lines[start])
        and _EXCEPTION_LINE.match(lines[start + 1])
    ):
        start += 1
    if start >= len(lines):
        return Raised(exception=None, messages=(), frames=tuple(frames), role=role)
    head = _EXCEPTION_LINE.match(lines[start])
    if head is None:
        return Raised(None, _message_readings(lines[start:]), tuple(frames), role)
    first = head["message"] or ""
    return Raised(
        head["type"], _message_readings([first, *lines[start + 1 :]]), tuple(frames), role
    )


def _parse_plain(lines: Sequence[str]) -> list[Raised]:
    """A paste without ``Traceback`` header: the whole text and each line, each
    read as a bare message and, when it starts with ``Name:``, as ``Type: message``."""
    frames = tuple(
        Frame(m["path"], int(m["line"]), m["func"]) for m in map(_FRAME.match, lines) if m
    )
    body = [line for line in lines if not _FRAME.match(line)]
    out: list[Raised] = []
    seen: set[tuple[str | None, str]] = set()

    def add(exception: str | None, texts: Sequence[str]) -> None:
        readings = tuple(t for t in _message_readings(texts) if (exception, t) not in seen)
        seen.update((exception, t) for t in readings)
        if readings:
            out.append(Raised(exception, readings, frames, "message"))

    groups = [body] + ([[line] for line in body[:30]] if len(body) > 1 else [])
    for group in groups:
        if not group:
            continue
        add(None, ["\n".join(group)])
        head = _EXCEPTION_LINE.match(group[0])
        if head and head["message"] is not None:
            add(head["type"], [head["message"], *group[1:]])
    if not out and frames:
        out.append(Raised(None, (), frames, "message"))
    return out


def parse_paste(text: str) -> list[Raised]:
    """The exceptions a paste shows, the one to explain first.

    With tracebacks, the final exception comes first, then the ones before it
    in the chain (latest first). Without, the readings of the text as a bare
    message. Never raises; an empty paste gives ``[]``.
    """
    lines = [strip_prefixes(line) for line in re.split(r"\r\n|\r|\n", text)]
    if not any(TRACEBACK_HEAD in line for line in lines):
        return _parse_plain(lines)
    blocks: list[list[str]] = []
    links: list[Role] = []
    current: list[str] | None = None
    pending: Role = "context"
    for line in lines:
        stripped = line.strip()
        if TRACEBACK_HEAD in line:
            current = []
            blocks.append(current)
            links.append(pending)
            pending = "context"
        elif stripped == CAUSE_SEPARATOR:
            pending, current = "cause", None
        elif stripped == CONTEXT_SEPARATOR:
            pending, current = "context", None
        elif current is not None:
            current.append(line)
    # links[i + 1] is how block i relates to the next one.
    roles: list[Role] = [*links[1:], "final"]
    raised = [_parse_block(block, role) for block, role in zip(blocks, roles, strict=True)]
    return raised[::-1]


def normalize(text: str) -> str:
    """``text`` with white space runs folded to one space, trimmed."""
    return _SPACE.sub(" ", text).strip()


def _solid(text: str) -> int:
    """Number of non-blank characters."""
    return len(text) - sum(1 for c in text if c.isspace())


@dataclass(frozen=True, slots=True)
class Solid:
    """A message as :class:`Template` matches it: its text with all white
    space removed, and where the white space was."""

    text: str
    """The non-blank characters, in order."""
    breaks: int
    """Bit ``k`` set: white space came before ``text[k]`` (``k > 0``)."""

    @classmethod
    def of(cls, message: str) -> Solid:
        """``message`` read once: O(len(message))."""
        words = message.split()  # splits at runs of the characters ``\\s`` matches
        text = "".join(words)
        if len(words) < 2:
            return cls(text, 0)
        bits = bytearray(b"0" * len(text))  # bit k is character len - 1 - k of the numeral
        for start in itertools.accumulate(map(len, words[:-1])):
            bits[len(text) - 1 - start] = 0x31
        return cls(text, int(bits, 2))


@dataclass(frozen=True, slots=True)
class Block:
    """Literal text between two placeholders, white space removed."""

    text: str
    """The chunks (blank-free pieces of the literal text), joined."""
    inner: int
    """Bit ``k`` set: ``text[k]`` continues a chunk, so the message may not
    have white space before it (it may before the first character of a
    chunk, or not: a white space run of the template matches any white space
    run, or none)."""

    def at(self, solid: Solid, start: int) -> bool:
        """Whether the block's text at ``solid.text[start:]`` is a match:
        white space only where the template has some. One C-level test of
        the break mask (the text is known to match)."""
        return not (solid.breaks >> start) & self.inner


@dataclass(frozen=True, slots=True)
class Template:
    """A message template as the matcher sees it: :class:`Block` of literal
    text separated by placeholders (consecutive placeholders are one).

    ``open_start`` (``open_end``): a placeholder comes before the first
    block (after the last one); otherwise the message starts (ends) with it.
    Leading and trailing white space of a message is ignored.
    """

    blocks: tuple[Block, ...]
    open_start: bool
    open_end: bool

    def fullmatch(self, message: str) -> bool:
        """Whether the whole of ``message`` is a rendering of the template."""
        return self.match_solid(Solid.of(message))

    def match_solid(self, solid: Solid) -> bool:
        """:meth:`fullmatch` of a message read by :meth:`Solid.of` (read it
        once, match it against many templates).

        No regular expression, no backtracking. White space is removed from
        the message and from the template's literal text, keeping where it
        was: a block then matches at a position of the message's solid text
        when its text is there and the message has no white space inside one
        of its chunks (:meth:`Block.at`). Between blocks, a placeholder
        matches any text, so:

        * the first block is pinned to the start of the message unless a
          placeholder comes first, the last block to its end unless a
          placeholder comes last;
        * every other block is taken at its leftmost match after the
          previous block's end: a later match ends later (blocks have a
          fixed length), so the leftmost one never loses a match of what
          follows (the greedy rule, exact for ``*``-only glob patterns).

        Bound, with ``n`` the message's length, ``k`` the number of blocks
        (at most the number of literal parts) and ``m`` the template's
        literal length (non-blank characters):

        * reading the message (:meth:`Solid.of`) is O(n), once for all
          templates;
        * each block's search starts where the previous block's match ended,
          so each position of the message is a candidate start of at most
          one block: at most ``n + k`` ``str.find`` calls and mask tests in
          all, O(n + k) interpreter steps whatever the message;
        * in C, the finds scan disjoint stretches of the message left to
          right (a rejected candidate, where the block's text is but the
          message has white space inside a chunk, resumes one position on),
          so O(n + m) alignments in all, each comparing at most the block's
          length: O(n * m) character comparisons and a shift of the n-bit
          break mask per candidate in the very worst case (about 25 ms for
          a 9,000-character message of ``a`` and a 1,000-character chunk of
          ``a``), O(n + m) in the usual one.

        The matcher of ``f"{a0},{a1},...,{a11},end"`` (which a backtracking
        regular expression took minutes on) rejects ``",end" + "," * 5000 +
        "x"`` at once: the last block is pinned to the message's end.
        """
        text = solid.text
        blocks = self.blocks
        if not blocks:
            return self.open_end or not text
        lo, hi = 0, len(text)
        first, last = 0, len(blocks)
        if not self.open_start:
            block = blocks[0]
            if not (text.startswith(block.text) and block.at(solid, 0)):
                return False
            if last == 1 and not self.open_end:
                return len(block.text) == hi
            lo, first = len(block.text), 1
        if not self.open_end:
            block = blocks[-1]
            start = hi - len(block.text)
            if start < lo or not (text.endswith(block.text) and block.at(solid, start)):
                return False
            hi, last = start, last - 1
        for block in blocks[first:last]:
            start = text.find(block.text, lo, hi)
            while start >= 0 and not block.at(solid, start):
                start = text.find(block.text, start + 1, hi)
            if start < 0:
                return False
            lo = start + len(block.text)
        return True


def _block(chunks: Sequence[str]) -> Block:
    text = "".join(chunks)
    inner = (1 << len(text)) - 2 if text else 0  # every position but the first ...
    start = 0
    for chunk in chunks[:-1]:
        start += len(chunk)
        inner &= ~(1 << start)  # ... and the first of each chunk
    return Block(text, inner)


def compile_template(parts: Sequence[MessagePart]) -> Template:
    """The matcher of messages rendered from ``parts`` (see
    :meth:`Template.match_solid`).

    Literal text matches itself (a run of white space matches any white
    space, or none); a placeholder matches any text, new lines included.
    Leading and trailing white space is ignored.
    """
    blocks: list[Block] = []
    chunks: list[str] = []
    gap = _NONE  # what separates the next chunk from the previous one
    open_start = False
    for part in parts:
        if part.expr is not None:
            gap = _ANY
            continue
        for number, chunk in enumerate(_SPACE.split(part.text or "")):
            if number:
                gap = max(gap, _BLANK)
            if not chunk:
                continue
            if not chunks and not blocks:
                open_start = gap == _ANY
                chunks.append(chunk)
            elif gap == _ANY:
                blocks.append(_block(chunks))
                chunks = [chunk]
            elif gap == _BLANK:
                chunks.append(chunk)
            else:  # literal parts next to each other
                chunks[-1] += chunk
            gap = _NONE
    if chunks:
        blocks.append(_block(chunks))
    else:  # no literal text: any text when there is a placeholder, else only white space
        open_start = gap == _ANY
    return Template(tuple(blocks), open_start, gap == _ANY)


@dataclass(frozen=True, slots=True)
class SiteRef:
    """Where an error is raised: enough to pin it from a traceback frame."""

    path: str
    line: int
    end_line: int
    scope: str


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
            sites=tuple(SiteRef(s.path, s.line, s.end_line, s.scope) for s in error.sites),
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


class LookupIndex:
    """Every error of a mined commit, ready to be matched against pastes.

    Build it from errors (:meth:`from_errors`) or a mined output folder
    (:meth:`load`); :meth:`search` does the matching.
    """

    def __init__(self, cards: Iterable[Card]) -> None:
        self.entries: list[Entry] = []
        self._patterns: dict[int, Template] = {}
        self._by_word: dict[str, list[int]] = defaultdict(list)
        self._by_suffix: dict[tuple[str, ...], set[str]] = defaultdict(set)
        self._sites_by_path: dict[str, list[tuple[int, SiteRef]]] = defaultdict(list)
        for card in cards:
            literal = normalize(" ".join(p.text or "" for p in card.message_parts))
            chunks = literal.split()
            anchor = max(chunks, key=len) if chunks else ""
            words = frozenset(_WORD.findall(literal.lower()))
            index = len(self.entries)
            self.entries.append(Entry(card, literal, _solid(literal), anchor, words))
            for word in words:
                self._by_word[word].append(index)
            for site in card.sites:
                self._sites_by_path[site.path].append((index, site))
        for path in self._sites_by_path:
            components = tuple(path.split("/"))
            for size in range(min(2, len(components)), len(components) + 1):
                self._by_suffix[components[-size:]].add(path)
        total = max(len(self.entries), 1)
        self._idf = {w: math.log(1 + total / len(ids)) for w, ids in self._by_word.items()}

    @classmethod
    def from_errors(cls, errors: Iterable[Error]) -> LookupIndex:
        """The index of mined errors."""
        return cls(Card.from_error(e) for e in errors)

    @classmethod
    def load(cls, out: Path) -> LookupIndex:
        """The index of a mined output folder: the site's ``api/index.json``
        when it was written for the commit of ``manifest.json`` (a fraction
        of a second), else the records in ``sites.jsonl`` (a few seconds for
        a release).

        Raises:
            RecordsError: ``out`` holds no readable records.
        """
        manifest = read_json(out / MANIFEST)
        published = out / "site" / "api" / "index.json"
        try:
            data = json.loads(published.read_text("utf-8"))
            if data["commit"]["sha"] == manifest["commit"]["sha"]:
                return cls(Card.from_index(entry) for entry in data["errors"])
        except (OSError, ValueError, KeyError, TypeError):
            pass
        return cls.from_errors(group_errors(read_sites(out / SITES)))

    def _pattern(self, index: int) -> Template:
        pattern = self._patterns.get(index)
        if pattern is None:
            pattern = compile_template(self.entries[index].card.message_parts)
            self._patterns[index] = pattern
        return pattern

    def repo_path(self, path: str) -> str | None:
        """The repository path a traceback path ends in (the longest shared
        tail of at least two components: ``.../site-packages/sglang/srt/x.py``
        -> ``python/sglang/srt/x.py``), or None."""
        components = tuple(p for p in path.replace("\\", "/").split("/") if p)
        for size in range(len(components), 0, -1):
            found = self._by_suffix.get(components[-size:])
            if found:
                return min(found) if len(found) > 1 else next(iter(found))
        return None

    def _message_scores(self, text: str) -> dict[int, float]:
        """Coverage of ``text`` by every template that fully matches it."""
        text = text[:MAX_MESSAGE]
        solid = Solid.of(text)
        size = len(solid.text)
        if not size:
            return {}
        scores: dict[int, float] = {}
        for index, entry in enumerate(self.entries):
            if entry.literal_size < MIN_LITERAL or entry.literal_size > size:
                continue  # too little to go by, or more literal text than the message has
            if entry.anchor not in text:
                continue
            coverage = min(entry.literal_size / size, 1.0)
            if coverage < MIN_COVERAGE:
                continue
            if self._pattern(index).match_solid(solid):
                scores[index] = coverage
        return scores

    def _fragment_scores(self, text: str) -> dict[int, float]:
        """Share of a template's literal text that ``text`` (a fragment of one
        literal part) covers, for every template holding it."""
        needle = normalize(text)
        if _solid(needle) < MIN_FRAGMENT:
            return {}
        scores = {}
        for index, entry in enumerate(self.entries):
            if needle in entry.literal and any(
                needle in normalize(p.text or "") for p in entry.card.message_parts
            ):
                scores[index] = min(_solid(needle) / max(entry.literal_size, 1), 1.0)
        return scores

    def _word_scores(self, text: str) -> dict[int, float]:
        """IDF-weighted word overlap (0..1) with every template sharing a word."""
        words = set(_WORD.findall(text.lower())) & self._idf.keys()
        if not words:
            return {}
        hits: dict[int, float] = defaultdict(float)
        for word in words:
            for index in self._by_word[word]:
                hits[index] += self._idf[word]
        query = sum(self._idf[w] for w in words)
        out = {}
        for index, shared in hits.items():
            own = sum(self._idf[w] for w in self.entries[index].words)
            out[index] = shared / (query + own - shared)
        return out

    def _pins(self, frames: Sequence[Frame]) -> tuple[dict[int, SiteRef], set[int]]:
        """Sites a frame points at exactly (innermost frame first), and the
        errors raised in a file some frame runs in."""
        pinned: dict[int, SiteRef] = {}
        same_file: set[int] = set()
        for frame in reversed(frames):
            path = self.repo_path(frame.path)
            if path is None:
                continue
            for index, site in self._sites_by_path[path]:
                same_file.add(index)
                if site.line <= frame.line <= site.end_line and index not in pinned:
                    pinned[index] = site
        return pinned, same_file

    def score(self, raised: Raised) -> dict[int, tuple[float, SiteRef | None, tuple[str, ...]]]:
        """Scores of the errors matching one parsed exception: index -> (score,
        pinned site or None, reasons)."""
        pinned, same_file = self._pins(raised.frames)
        message: dict[int, float] = {}
        for text in raised.messages:
            for index, coverage in self._message_scores(text).items():
                message[index] = max(message.get(index, 0.0), coverage)
        fragment: dict[int, float] = {}
        words: dict[int, float] = {}
        if not message and raised.messages:
            fragment = self._fragment_scores(raised.messages[0])
            words = self._word_scores(raised.messages[0])
        shown = _last_name(raised.exception)
        out: dict[int, tuple[float, SiteRef | None, tuple[str, ...]]] = {}
        for index in pinned.keys() | message.keys() | fragment.keys() | words.keys():
            entry = self.entries[index]
            reasons: list[str] = []
            site = pinned.get(index)
            if index in message:
                reasons.append(f"message matches the template ({message[index]:.0%} literal)")
            if site is not None:
                reasons.append(f"a traceback frame points at {site.path}:{site.line}")
                value = 0.95 + 0.05 * message[index] if index in message else 0.9
            elif index in message:
                value = 0.55 + 0.35 * message[index]
                if index in same_file:
                    value += 0.05
                    reasons.append("a traceback frame runs in its file")
            elif index in fragment:
                value = 0.5 + 0.3 * fragment[index]
                reasons.append("the text is part of the message")
            else:
                value = 0.45 * words[index]
                reasons.append(f"shares words with the message ({words[index]:.0%})")
            own = _last_name(entry.card.exception)
            if shown and own and site is None:
                if shown == own:
                    value += 0.02
                    reasons.append(f"same exception type {shown}")
                else:
                    value *= 0.85
                    reasons.append(f"exception type differs ({shown} shown, {own} raised here)")
            out[index] = (min(value, 1.0), site, tuple(reasons))
        return out

    def search(self, text: str, limit: int = 5) -> list[Match]:
        """Errors matching a paste, best first (at most ``limit``; one per
        error, the best-scoring exception of the paste for each).

        When nothing scores :data:`GOOD` or more, the list holds the closest
        candidates, all below it.
        """
        best: dict[int, Match] = {}
        for position, raised in enumerate(parse_paste(text)):
            # Later exceptions of a chain count a little less than the final one.
            weight = 1.0 if raised.role in ("final", "message") else 0.97
            for index, (value, site, reasons) in self.score(raised).items():
                value = round(value * weight, 4)
                current = best.get(index)
                if current is None or value > current.score:
                    card = self.entries[index].card
                    best[index] = Match(card, value, site or card.sites[0], reasons, position)
        ranked = sorted(best.values(), key=lambda m: (-m.score, m.card.error_id))
        return ranked[:limit]


def card_location(data: Path, error_id: str, base_url: str | None = None) -> str:
    """Where a reader finds an error's card: under ``<base_url>/`` when given,
    else the site page under ``data/site`` when the site was written, else
    the Markdown under ``data``. A user-facing error has its own card
    (``errors/<id>.html`` / ``.md``); an internal, abstract, test or script
    error an entry on the page of its module, ``<audience>/<module>.html#<id>``
    (the audience and module are read from the error's JSON record,
    ``api/errors/<id>.json``)."""
    audience, module = _placement(data, error_id)
    site = bool(base_url) or (data / "site" / "index.html").is_file()
    ref = card_ref(error_id, module, audience, ".html" if site else ".md")
    if base_url:
        return f"{base_url.rstrip('/')}/{ref}"
    path, _, anchor = ref.partition("#")
    where = str((data / "site" if site else data) / path)
    return f"{where}#{anchor}" if anchor else where


def _placement(data: Path, error_id: str) -> tuple[str | None, str]:
    """The audience and module of an error, from its JSON record in the mined
    folder (or its site); ``(None, "")`` when there is none (a full card)."""
    for folder in (data, data / "site"):
        try:
            record = json.loads((folder / "api" / "errors" / f"{error_id}.json").read_text("utf-8"))
            audience, module = record["audience"], record["module"]
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if isinstance(audience, str) and isinstance(module, str):
            return audience, module
    return None, ""


def match_json(match: Match, card: str) -> dict[str, object]:
    """One match as the ``--json`` output shows it."""
    return {
        "error_id": match.card.error_id,
        "score": match.score,
        "good": match.good,
        "exception": match.card.exception,
        "message": match.card.message,
        "path": match.site.path,
        "line": match.site.line,
        "scope": match.site.scope,
        "card": card,
        "reasons": list(match.reasons),
        "raised": match.raised,
    }


def raised_json(raised: Raised) -> dict[str, object]:
    """One parsed exception of the paste, for ``--json``."""
    return {
        "exception": raised.exception,
        "message": raised.messages[0] if raised.messages else None,
        "role": raised.role,
        "frames": [{"path": f.path, "line": f.line, "function": f.function} for f in raised.frames],
    }


# ---- Text for a terminal: mined content shown, never obeyed. ----
#
# Messages, titles, paths and scopes come from the mined repository and may
# hold any character. Printed raw, a control character is an instruction to
# the terminal: ESC [2J clears the screen, ESC ]0;...BEL sets the window
# title, ESC ]8;;url makes a hyperlink, CSI (U+009B) starts a control
# sequence on its own. :func:`visible` writes each as a readable escape.

#: Characters shown as escapes: C0 controls (tab and new line included: a
#: field is one line), DEL, C1 controls, the Unicode line and paragraph
#: separators, and the bidirectional embeddings, overrides and isolates that
#: reorder what is shown ("Trojan Source").
UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")

_NAMED = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    named = _NAMED.get(char)
    if named is not None:
        return named
    code = ord(char)
    if 0xDC80 <= code <= 0xDCFF:  # a byte that is not UTF-8, from a file name
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code < 0x80 else f"\\u{code:04x}"


def visible(text: str) -> str:
    """``text`` with every character of :data:`UNSAFE` written as an escape
    (``\\x1b``, ``\\x07``, ``\\x00``, ``\\t``, ``\\n``, ``\\u009b``, ``\\u202e``);
    everything else, backslashes included, as it is."""
    return UNSAFE.sub(_escape, text)


#: The characters of :data:`UNSAFE` that JSON leaves raw in its strings.
_JSON_RAW = re.compile("[\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def visible_json(text: str) -> str:
    """JSON text (``json.dumps(..., ensure_ascii=False)``, which escapes C0
    controls but not DEL, C1 controls or the separators and bidirectional
    controls of :data:`UNSAFE`) with those written as ``\\uXXXX``: the same
    JSON value, safe to print. They occur only inside strings, where such an
    escape means the character itself."""
    return _JSON_RAW.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


def report_json(text: str, matches: Sequence[Match], data: Path, base_url: str | None) -> str:
    """``miner lookup --json``: whether a card matched, how the paste was
    read, and every result with its score, site, card location and reasons."""
    payload = {
        "matched": bool(matches) and matches[0].good,
        "pasted": [raised_json(r) for r in parse_paste(text)],
        "results": [match_json(m, card_location(data, m.card.error_id, base_url)) for m in matches],
    }
    return visible_json(json.dumps(payload, indent=2, ensure_ascii=False))


def report_text(text: str, matches: Sequence[Match], data: Path, base_url: str | None) -> str:
    """``miner lookup``: the matching cards (score, exception and message,
    ``path:line``, card, why), or a notice and the closest candidates.

    Mined text is shown, never obeyed: every control character in it
    (``ESC``, ``BEL``, ``NUL``, C1 ``CSI``, a new line in a path...) is
    written as an escape (:func:`visible`); the only raw
    control characters are the new lines between the lines written here.
    """
    if not matches:
        return "no card matches this text, and no card is close to it"
    good = matches[0].good
    lines = [] if good else ["no card matches this well; the closest candidates:"]
    for rank, match in enumerate(matches, 1):
        if good and not match.good:
            break
        card = match.card
        message = " ".join((card.message if card.message is not None else card.title).split())
        lines += [
            f"{rank}. {match.score:.2f}  {card.exception or 're-raise'}: {message}",
            f"   {match.site.path}:{match.site.line} in {match.site.scope}",
            f"   card: {card_location(data, card.error_id, base_url)}",
            f"   why: {'; '.join(match.reasons)}",
        ]
    return "\n".join(visible(line) for line in lines)
