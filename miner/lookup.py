"""Find the card for a pasted error: a runtime message, a log line or a traceback.

The stage reads mined records (``sites.jsonl``) and answers "which card is
this?". Three parts, each a function of data:

* :func:`parse_paste` turns pasted text into the exceptions it shows
  (:class:`Raised`): log prefixes stripped, the ``Type: message`` line and the
  ``File "...", line N`` frames of each traceback of a chain.
* :func:`compile_template` turns a message template (``message_parts``) into a
  regular expression: literal parts exact (white space runs match any white
  space), each placeholder any text, new lines included.
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


def compile_template(parts: Sequence[MessagePart]) -> re.Pattern[str]:
    """A full-match pattern for messages rendered from ``parts``.

    Literal text matches itself (a run of white space matches any white
    space, or none); a placeholder matches any text, new lines included.
    Leading and trailing white space is ignored.
    """
    pieces = [r"\s*"]
    previous_placeholder = False
    for part in parts:
        if part.expr is not None:
            if not previous_placeholder:
                pieces.append("(.*?)")
            previous_placeholder = True
            continue
        text = part.text or ""
        if not text:
            continue
        previous_placeholder = False
        pieces.append(r"\s*".join(re.escape(chunk) for chunk in _SPACE.split(text)))
    pieces.append(r"\s*")
    return re.compile("".join(pieces), re.DOTALL)


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
        self._patterns: dict[int, re.Pattern[str]] = {}
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

    def _pattern(self, index: int) -> re.Pattern[str]:
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
        size = _solid(text)
        if not size:
            return {}
        scores: dict[int, float] = {}
        for index, entry in enumerate(self.entries):
            if entry.literal_size < MIN_LITERAL or entry.anchor not in text:
                continue
            coverage = min(entry.literal_size / size, 1.0)
            if coverage < MIN_COVERAGE:
                continue
            if self._pattern(index).fullmatch(text):
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


def report_json(text: str, matches: Sequence[Match], data: Path, base_url: str | None) -> str:
    """``miner lookup --json``: whether a card matched, how the paste was
    read, and every result with its score, site, card location and reasons."""
    payload = {
        "matched": bool(matches) and matches[0].good,
        "pasted": [raised_json(r) for r in parse_paste(text)],
        "results": [match_json(m, card_location(data, m.card.error_id, base_url)) for m in matches],
    }
    return json.dumps(payload, indent=2, ensure_ascii=False)


def report_text(text: str, matches: Sequence[Match], data: Path, base_url: str | None) -> str:
    """``miner lookup``: the matching cards (score, exception and message,
    ``path:line``, card, why), or a notice and the closest candidates."""
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
    return "\n".join(lines)
