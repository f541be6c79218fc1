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

Across releases, :class:`ReleaseBook` reads a release site's
``release-index.json`` and ``history.json`` and :func:`search_releases`
matches a paste against every error id any release raised, one answer per
error lineage: the releases raising it with the line in each, the releases
the paste fits (frames, then wording), and how it changed
(:func:`life_sentences`).

The prefix patterns, line patterns and numbers are defined once in
:mod:`miner.publish.patterns`, in regular expressions that mean the same in
Python and JavaScript; the HTML site ships them to its search
(:mod:`miner.publish.html`), a port of this module's matcher.
"""

from __future__ import annotations

import ast
import difflib
import itertools
import json
import math
import os
import re
import warnings
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from miner.errors import RecordsError
from miner.model import Error, History, MessagePart, Site, group_errors
from miner.publish.cards import card_ref
from miner.publish.patterns import LINE_PATTERNS, PREFIX_PATTERNS, RULES
from miner.publish.records import MANIFEST, SITES, read_json, read_sites
from miner.publish.release_index import RELEASE_INDEX, first_source_line

#: Scores at or above this are matches; below it, only the closest candidates.
GOOD = float(RULES["GOOD"])
#: A template needs this many non-blank literal characters to match a message.
MIN_LITERAL = int(RULES["MIN_LITERAL"])
#: ... and must explain at least this share of the message's non-blank characters.
MIN_COVERAGE = float(RULES["MIN_COVERAGE"])
#: ... unless its literal text is this long (non-blank characters): a long
#: placeholder value (``pool memory leak detected! {messages}``).
MIN_SPECIFIC = int(RULES["MIN_SPECIFIC"])
#: A template explaining less of a message than this is a weak match: an
#: exception type other than the one shown makes it weaker still.
WEAK_COVERAGE = float(RULES["WEAK_COVERAGE"])
#: A fragment must be this long (non-blank characters) to count as a match.
MIN_FRAGMENT = int(RULES["MIN_FRAGMENT"])
#: Longest message tried against the templates (characters).
MAX_MESSAGE = int(RULES["MAX_MESSAGE"])

_PREFIXES = tuple(re.compile(p) for p in PREFIX_PATTERNS)

TRACEBACK_HEAD = "Traceback (most recent call last):"
CAUSE_SEPARATOR = "The above exception was the direct cause of the following exception:"
CONTEXT_SEPARATOR = "During handling of the above exception, another exception occurred:"

_FRAME = re.compile(LINE_PATTERNS["FRAME"])  # path, line, function
_EXCEPTION_LINE = re.compile(LINE_PATTERNS["EXCEPTION_LINE"])  # type, message
#: A dotted name in lower case (``sglang.srt.managers.scheduler``): a logger or
#: module name before ``: ``, never an exception class.
_LOGGER_NAME = re.compile(LINE_PATTERNS["LOGGER_NAME"])
#: ``path.py:123`` (or ``path.py", line 123``) pasted alone: the site's search box
#: reads it too. Linear: the path holds no ``:`` and the line only digits.
_PATH_LINE = re.compile(LINE_PATTERNS["PATH_LINE"])  # path, line
#: How many ``": "`` of a line are tried as the start of the message
#: (``Scheduler hit an exception: ValueError: ...``).
MAX_HEADS = int(RULES["MAX_HEADS"])
#: A first word of a line that a log collector, not a message, put there.
_COLLECTOR_MARK = re.compile(LINE_PATTERNS["COLLECTOR_MARK"])
#: End punctuation a paste may lack or add (``... config`` for ``... config.``).
END_PUNCTUATION = str(RULES["END_PUNCTUATION"])
_CARETS = re.compile(LINE_PATTERNS["CARETS"])
_WORD = re.compile(LINE_PATTERNS["WORD"])
_SPACE = re.compile(r"\s+")
#: What separates two chunks of a template (:func:`compile_template`).
_NONE, _BLANK, _ANY = 0, 1, 2

Role = Literal["final", "cause", "context", "message", "path"]
#: Message kinds whose parts are matched (dynamic messages have no template).
SHOWN = ("literal", "template")


@dataclass(frozen=True, slots=True)
class Frame:
    """One ``File "path", line N, in func`` line of a traceback."""

    path: str
    line: int
    function: str | None = None
    code: str | None = field(default=None, compare=False)
    """The source line shown under the frame (stripped), when there is one."""


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
    ``message`` for a paste without a traceback, ``path`` for a pasted
    ``path.py:line`` (one frame, no message).
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


def strip_common_prefix(lines: Sequence[str]) -> list[str]:
    """``lines`` without the prefix every one of them carries: a log
    collector's (``pod-name container ``, ``service-1  | ``).

    Taken only when at least two lines are not blank, the shared text ends
    at white space, and its first word holds a character that words of a
    message rarely start with (a digit, ``-``, ``_``, ``|``, ``[``, ``:``,
    ``/``): a message's own words are never taken. O(total length).
    """
    shown = [line for line in lines if line.strip()]
    if len(shown) < 2:
        return list(lines)
    prefix = os.path.commonprefix(shown)
    cut = max(prefix.rfind(" "), prefix.rfind("\t"))
    if cut < 0:
        return list(lines)
    prefix = prefix[: cut + 1]
    words = prefix.split()
    if (
        not words
        or len(prefix.strip()) < 3
        or not _COLLECTOR_MARK.search(words[0])
        or TRACEBACK_HEAD in prefix
        or _FRAME.match(prefix)
    ):
        return list(lines)
    return [line[len(prefix) :] if line.startswith(prefix) else line for line in lines]


def _frames(lines: Sequence[str]) -> tuple[list[Frame], set[int]]:
    """The frames of ``lines`` with the source line shown under each, and the
    indexes of the lines they take (frame lines and source lines)."""
    frames: list[Frame] = []
    taken: set[int] = set()
    for index, line in enumerate(lines):
        match = _FRAME.match(line)
        if match is None:
            continue
        taken.add(index)
        code = None
        following = index + 1
        if following < len(lines) and _is_code(lines, following):
            code = lines[following].strip()
            taken.add(following)
        frames.append(Frame(match[1], int(match[2]), match[3], code))
    return frames, taken


def _is_code(lines: Sequence[str], index: int) -> bool:
    """Whether the line after a frame is the frame's source line: indented,
    or (indentation lost in the paste) followed by the exception or a frame."""
    line = lines[index]
    if not line.strip() or _FRAME.match(line) or _CARETS.match(line) or TRACEBACK_HEAD in line:
        return False
    if line[0] in " \t":
        return True
    after = lines[index + 1] if index + 1 < len(lines) else ""
    return not _EXCEPTION_LINE.match(line) and bool(
        _EXCEPTION_LINE.match(after) or _FRAME.match(after)
    )


def _is_exception(name: str) -> bool:
    """Whether a ``Name:`` before a message names an exception class rather
    than a logger or module (``sglang.srt.managers.scheduler``, ``note``)."""
    last = name.rsplit(".", 1)[-1]
    return bool(last[:1].isupper()) and not _LOGGER_NAME.match(name)


def _heads(line: str) -> list[tuple[str | None, str]]:
    """Where the message of a line may start, as ``(exception, message)``:
    ``Type: message`` at the start, then after each of the first
    :data:`MAX_HEADS` ``": "`` (``Scheduler hit an exception: ValueError:
    ...`` and ``... hit an exception: <message>``). A name that is no
    exception class (a logger's) gives the message alone."""
    out: list[tuple[str | None, str]] = []
    seen: set[str] = set()
    start = 0
    for _ in range(MAX_HEADS + 1):
        rest = line[start:]
        head = _EXCEPTION_LINE.match(rest)
        if head and head[2] is not None and head[2] not in seen:
            exception = head[1] if _is_exception(head[1]) else None
            out.append((exception, head[2]))
            seen.add(head[2])
        elif start and rest.strip() and rest not in seen:
            out.append((None, rest))
            seen.add(rest)
        found = line.find(": ", start)
        if found < 0:
            break
        start = found + 2
    return out


def _parse_block(lines: Sequence[str], role: Role) -> Raised:
    """One traceback: the lines after ``Traceback (most recent call last):``."""
    frames, taken = _frames(lines)
    start = max(taken) + 1 if taken else 0
    # Skip source lines (indented), caret lines and blank lines.
    while start < len(lines) and (
        not lines[start].strip() or lines[start][0] in " \t" or _CARETS.match(lines[start])
    ):
        start += 1
    if start >= len(lines):
        return Raised(exception=None, messages=(), frames=tuple(frames), role=role)
    head = _EXCEPTION_LINE.match(lines[start])
    if head is None:
        return Raised(None, _message_readings(lines[start:]), tuple(frames), role)
    first = head[2] or ""
    exception: str | None = head[1]
    if head[2] is not None and not _is_exception(head[1]):
        exception, first = None, head[2]
    return Raised(exception, _message_readings([first, *lines[start + 1 :]]), tuple(frames), role)


def _parse_plain(lines: Sequence[str]) -> list[Raised]:
    """A paste without ``Traceback`` header: the whole text and each line, each
    read as a bare message and from each place a message may start
    (:func:`_heads`); frames count for all of them."""
    found, taken = _frames(lines)
    frames = tuple(found)
    body = [line for index, line in enumerate(lines) if index not in taken]
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
        for exception, first in _heads(group[0]):
            add(exception, [first, *group[1:]])
    if not out and frames:
        out.append(Raised(None, (), frames, "message"))
    return out


def _path_query(text: str) -> Raised | None:
    """``path.py:123`` pasted alone: one frame, as the site's search box reads it."""
    text = text.strip()
    if len(text) > 1000:
        return None
    match = _PATH_LINE.match(text)
    if match is None:
        return None
    return Raised(None, (), (Frame(match[1], int(match[2])),), "path")


def parse_paste(text: str) -> list[Raised]:
    """The exceptions a paste shows, the one to explain first.

    Log collectors' prefixes shared by every line, then each line's log
    prefixes, are stripped first. With tracebacks, the final exception comes
    first, then the ones before it in the chain (latest first); a
    traceback cut short counts with its frames. Without, the readings of
    the text as a bare message; ``path.py:123`` alone is a frame. Never
    raises; an empty paste gives ``[]``.
    """
    query = _path_query(text)
    if query is not None:
        return [query]
    lines = strip_common_prefix(re.split(r"\r\n|\r|\n", text))
    lines = strip_common_prefix([strip_prefixes(line) for line in lines])
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
    space, or none); a placeholder matches any text, new lines included,
    and so does an optional part (:attr:`~miner.model.MessagePart.optional`:
    there or not). Leading and trailing white space is ignored.
    """
    blocks: list[Block] = []
    chunks: list[str] = []
    gap = _NONE  # what separates the next chunk from the previous one
    open_start = False
    for part in parts:
        if part.expr is not None or part.optional is not None:
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

    ``details`` gives ``(path, line) -> (kind, first source line)`` of every
    site, for cards whose :class:`SiteRef` lacks them (read from the site's
    index); it is called once, the first time a traceback frame needs it.
    """

    def __init__(
        self,
        cards: Iterable[Card],
        details: Callable[[], Mapping[tuple[str, int], tuple[str, str]]] | None = None,
    ) -> None:
        self.entries: list[Entry] = []
        self._patterns: dict[int, Template] = {}
        self._loose: dict[int, Template | None] = {}
        self._by_word: dict[str, list[int]] = defaultdict(list)
        self._by_suffix: dict[tuple[str, ...], set[str]] = defaultdict(set)
        self._sites_by_path: dict[str, list[tuple[int, SiteRef]]] = defaultdict(list)
        self._by_name: dict[str, set[str]] = defaultdict(set)
        self._details_source = details
        self._details: Mapping[tuple[str, int], tuple[str, str]] | None = None
        for card in cards:
            literal = normalize(" ".join(p.text or "" for p in card.message_parts))
            # The longest chunk without its end punctuation: still in every match.
            chunks = [c.rstrip(END_PUNCTUATION) for c in literal.split()]
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
            self._by_name[components[-1]].add(path)
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
        of a second; the sites' kinds and source lines are read from
        ``sites.jsonl`` only when a traceback frame needs them), else the
        records in ``sites.jsonl`` (a few seconds for a release).

        Raises:
            RecordsError: ``out`` holds no readable records.
        """
        manifest = read_json(out / MANIFEST)
        published = out / "site" / "api" / "index.json"
        try:
            data = json.loads(published.read_text("utf-8"))
            if data["commit"]["sha"] == manifest["commit"]["sha"]:
                cards = [Card.from_index(entry) for entry in data["errors"]]
                return cls(cards, details=lambda: site_details(out / SITES))
        except (OSError, ValueError, KeyError, TypeError):
            pass
        return cls.from_errors(group_errors(read_sites(out / SITES)))

    def _pattern(self, index: int) -> Template:
        pattern = self._patterns.get(index)
        if pattern is None:
            pattern = compile_template(self.entries[index].card.message_parts)
            self._patterns[index] = pattern
        return pattern

    def _loose_pattern(self, index: int) -> Template | None:
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

    def _message_scores(self, text: str) -> dict[int, tuple[float, bool]]:
        """Coverage of ``text`` by every template that fully matches it, and
        whether only with the end punctuation aside (the paste lacks or adds
        a final ``.``)."""
        text = text[:MAX_MESSAGE]
        solid = Solid.of(text)
        trimmed = text.rstrip().rstrip(END_PUNCTUATION)
        loose = Solid.of(trimmed)
        size = len(solid.text)
        if not size:
            return {}
        scores: dict[int, tuple[float, bool]] = {}
        for index, entry in enumerate(self.entries):
            if entry.literal_size < MIN_LITERAL or entry.literal_size > size:
                continue  # too little to go by, or more literal text than the message has
            if entry.anchor not in text:
                continue
            coverage = min(entry.literal_size / size, 1.0)
            if coverage < MIN_COVERAGE and entry.literal_size < MIN_SPECIFIC:
                continue
            if self._pattern(index).match_solid(solid):
                scores[index] = (coverage, False)
                continue
            pattern = self._loose_pattern(index)
            if pattern is not None and loose.text and pattern.match_solid(loose):
                scores[index] = (min(entry.literal_size / max(len(loose.text), 1), 1.0), True)
            elif (  # the paste adds end punctuation the template does not have
                pattern is None
                and trimmed != text.rstrip()
                and loose.text
                and self._pattern(index).match_solid(loose)
            ):
                scores[index] = (coverage, True)
        return scores

    def message_matches(self, index: int, text: str) -> bool:
        """Whether ``text`` is a rendering of the template of error ``index``,
        end punctuation aside (as :meth:`_message_scores` matches)."""
        if self.entries[index].literal_size < MIN_LITERAL:
            return False  # too little literal text to tell a wording by
        text = text[:MAX_MESSAGE]
        trimmed = Solid.of(text.rstrip().rstrip(END_PUNCTUATION))
        loose = self._loose_pattern(index)
        return (
            self._pattern(index).match_solid(Solid.of(text))
            or (loose is not None and loose.match_solid(trimmed))
            or (loose is None and self._pattern(index).match_solid(trimmed))
        )

    def _fragment_scores(self, text: str) -> dict[int, float]:
        """Share of a template's literal text that ``text`` (a fragment of one
        literal part) covers, for every template holding it."""
        needle = normalize(text)
        truncated = needle.endswith(("...", "\u2026"))
        needle = needle.rstrip(END_PUNCTUATION).rstrip()
        if _solid(needle) < MIN_FRAGMENT:
            return {}
        scores = {}
        for index, entry in enumerate(self.entries):
            if needle in entry.literal and any(
                needle in normalize(p.text or "") for p in entry.card.message_parts
            ):
                share = min(_solid(needle) / max(entry.literal_size, 1), 1.0)
                if truncated and entry.literal.startswith(needle):
                    share = min(share + 0.3, 1.0)  # the start of the message, cut short
                scores[index] = share
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

    def _detail(self, site: SiteRef) -> tuple[str | None, str | None]:
        """A site's kind and first source line (from the records when the card lacks them)."""
        if site.code is not None:
            return site.kind, site.code
        if self._details is None:
            self._details = self._details_source() if self._details_source else {}
        found = self._details.get((site.path, site.line))
        return (found[0], found[1]) if found else (None, None)

    def _frame_evidence(self, frames: Sequence[Frame]) -> Evidence:
        """What the frames of one exception say about each error.

        A frame *pins* a site when it names the site's file and function and
        either its line falls in the site's statement (and the source line
        it shows, if any, is the statement's) or the source line it shows is
        the statement's first line (another release: the lines moved, the
        code did not). A site that raises (``raise``, ``assert``) is pinned
        only by the innermost frame, where the exception was raised; a
        ``call`` site by any frame. A line alone in an unrelated frame pins
        nothing.
        """
        evidence = Evidence()
        last = len(frames) - 1
        for position in range(last, -1, -1):
            frame = frames[position]
            path = self.repo_path(frame.path)
            if path is None:
                continue
            evidence.raised_here = evidence.raised_here or position == last
            code = normalize(frame.code)[:MAX_CODE] if frame.code else None
            alike: list[tuple[float, int, SiteRef]] = []
            for index, site in self._sites_by_path[path]:
                evidence.same_file.add(index)
                scoped = frame.function is None or _scope_name(site.scope) == frame.function
                if scoped and frame.function is not None:
                    evidence.same_scope.add(index)
                kind, own = self._detail(site)
                if position != last and kind != "call":
                    continue
                similar = code_similarity(code, own) if code is not None and own else 0.0
                inside = site.line <= frame.line <= site.end_line
                if inside and (similar >= SIMILAR_CODE or (code is None and scoped)):
                    evidence.pin(
                        index, site, 0.9, f"a traceback frame points at {site.path}:{site.line}"
                    )
                elif similar >= SIMILAR_CODE and scoped and frame.function is not None:
                    alike.append((similar, index, site))
            if not alike:
                continue
            top = max(similar for similar, _, _ in alike)
            leaders = {index for similar, index, _ in alike if similar == top}
            for similar, index, site in alike:
                where = f"{site.path} in {site.scope}"
                if similar == top and len(leaders) == 1:
                    # 0.85 for the same line, 0.8 to 0.84 for a reworded one.
                    strength = 0.85 if similar == 1.0 else 0.8 + 0.16 * (similar - SIMILAR_CODE)
                    shows = "its line" if similar == 1.0 else "a line like its own"
                    evidence.pin(
                        index, site, strength, f"a traceback frame shows {shows} ({where})"
                    )
                else:
                    evidence.pin(
                        index, site, 0.6, f"a traceback frame shows a line like its own ({where})"
                    )
        return evidence

    def score(self, raised: Raised) -> dict[int, tuple[float, SiteRef | None, tuple[str, ...]]]:
        """Scores of the errors matching one parsed exception: index -> (score,
        pinned site or None, reasons)."""
        evidence = self._frame_evidence(raised.frames)
        message: dict[int, tuple[float, bool]] = {}
        for text in raised.messages:
            for index, found in self._message_scores(text).items():
                if index not in message or found > message[index]:
                    message[index] = found
        fragment: dict[int, float] = {}
        words: dict[int, float] = {}
        if not message and raised.messages:
            fragment = self._fragment_scores(raised.messages[0])
            words = self._word_scores(raised.messages[0])
        shown = _last_name(raised.exception)
        out: dict[int, tuple[float, SiteRef | None, tuple[str, ...]]] = {}
        candidates = evidence.pinned.keys() | message.keys() | fragment.keys() | words.keys()
        for index in candidates:
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
            # As the site's search box: every error raised in the file is a
            # candidate; a file name alone (``registry.py:154``) names every
            # file so called, and its line pins a site in each.
            for frame in raised.frames:
                named = self.repo_path(frame.path)
                files = [named] if named is not None else sorted(self._by_name.get(frame.path, ()))
                for path in files:
                    for index, site in self._sites_by_path[path]:
                        if site.line <= frame.line <= site.end_line:
                            pin = (
                                0.9,
                                site,
                                (f"the path and line point at {site.path}:{site.line}",),
                            )
                            if index not in out or out[index][0] < 0.9:
                                out[index] = pin
                        elif index not in out:
                            share = 0.6 if len(files) == 1 else 0.5
                            out[index] = (share, site, (f"raised in {site.path}",))
        return out

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
            share = max(fragment or 0.0, words or 0.0)
            value = 0.5 + 0.1 * share
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
        best: dict[int, Match] = {}
        for position, raised in enumerate(parse_paste(text)):
            # Later exceptions of a chain count a little less than the final one.
            weight = 1.0 if raised.role in ("final", "message", "path") else 0.97
            for index, (value, site, reasons) in self.score(raised).items():
                value = round(value * weight, 4)
                current = best.get(index)
                if current is None or value > current.score:
                    card = self.entries[index].card
                    best[index] = Match(card, value, site or card.sites[0], reasons, position)
        ranked = sorted(best.values(), key=lambda m: (-m.score, m.card.error_id))
        return ranked[:limit]


@dataclass
class Evidence:
    """What the frames of one exception say (:meth:`LookupIndex._frame_evidence`)."""

    pinned: dict[int, tuple[SiteRef, float, str]] = field(default_factory=dict)
    """Error index -> (site, strength, reason), the strongest pin of each."""
    same_scope: set[int] = field(default_factory=set)
    same_file: set[int] = field(default_factory=set)
    raised_here: bool = False
    """The innermost frame runs in a file of the repository."""

    def pin(self, index: int, site: SiteRef, strength: float, reason: str) -> None:
        current = self.pinned.get(index)
        if current is None or strength > current[1]:
            self.pinned[index] = (site, strength, reason)


#: Source lines this alike (:func:`code_similarity`) are the same statement,
#: perhaps reworded between releases.
SIMILAR_CODE = float(RULES["SIMILAR_CODE"])
#: Longest frame source line compared (characters).
MAX_CODE = int(RULES["MAX_CODE"])
_CODE_HEAD = re.compile(LINE_PATTERNS["CODE_HEAD"])


def code_similarity(shown: str, own: str) -> float:
    """How alike a frame's source line and a site's first line are: 1.0 when
    equal (white space aside), else, when both start the same way (``raise
    ValueError``, ``assert``, ``name(``), the share of matching characters
    (``difflib``), else 0. Each line is cut at :data:`MAX_CODE` characters."""
    a, b = normalize(shown)[:MAX_CODE], normalize(own)[:MAX_CODE]
    if a == b:
        return 1.0
    head = _CODE_HEAD.match(a)
    if head is None or not b.startswith(head.group()):
        return 0.0
    return difflib.SequenceMatcher(None, a, b, autojunk=False).ratio()


def _scope_name(scope: str) -> str:
    """The name a traceback frame shows for a scope (``A.f`` -> ``f``)."""
    return scope.rsplit(".", 1)[-1]


def site_details(path: Path) -> dict[tuple[str, int], tuple[str, str]]:
    """``(path, line) -> (kind, first source line)`` of every site in a
    ``sites.jsonl``; empty when it cannot be read."""
    try:
        return {(s.path, s.line): (s.kind, site_code(s)) for s in read_sites(path)}
    except (OSError, ValueError, KeyError, TypeError, RecordsError):
        return {}


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


# ---- Lookup across releases: ``miner lookup --history SITE``. ----


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
