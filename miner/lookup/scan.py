"""Paste scanning: pasted text in, the exceptions and messages it shows out.

:func:`parse_paste` is the scanner's pipeline, each step a function of the
step before:

1. lines (:func:`miner.lookup.prefixes.read_lines`): log prefixes of any
   shape, collectors' shared prefixes and shared indentation stripped;
2. traceback blocks (:func:`miner.lookup.traceback.read_blocks`): every
   block, complete or cut at either end, with its frames and exception line;
3. plain lines: every line outside a block is a candidate message, with the
   indented lines under it (a message wrapped by hand) joined to it, read
   from its start and after each ``": "`` (:func:`heads`); the lines of a
   run are read together too (a message of several lines);
4. JSON: every string value of any JSON object in the paste
   (:func:`miner.lookup.jsonvalues.json_strings`) is scanned as a paste of
   its own.

The result is a list of :class:`Raised`, the final exception first: what
:class:`miner.lookup.index.LookupIndex` scores.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from miner.lookup.jsonvalues import json_strings, string_value
from miner.lookup.prefixes import read_lines
from miner.lookup.rules import (
    CAUSE_SEPARATOR,
    CONTEXT_SEPARATOR,
    EXCEPTION_LINE,
    FRAME,
    JSON_TOKEN,
    MAX_HEADS,
    MAX_JSON_DEPTH,
    MAX_JSON_VALUES,
    MAX_READING_LINES,
    MIN_LITERAL,
    PATH_LINE,
    solid_size,
)
from miner.lookup.traceback import Block, Frame, Role, is_exception, is_head, read_blocks

SEPARATORS = (CAUSE_SEPARATOR, CONTEXT_SEPARATOR)


@dataclass(frozen=True, slots=True)
class Raised:
    """One exception (or candidate message) shown in a paste.

    ``exception`` is the type as printed (``ValueError``,
    ``sglang.srt.errors.ConfigError``) or None when the paste shows a bare
    message. ``messages`` are the readings of the message to try, longest
    first (a traceback's message may be followed by unrelated log lines).
    ``frames`` are outermost first, as printed. ``role`` says where the
    exception stands in a chain: ``final`` (the one that ended the program),
    ``cause`` (``raise ... from`` it), ``context`` (raised while handling it),
    ``message`` for a message read outside a traceback, ``path`` for a pasted
    ``path.py:line`` (one frame, no message). ``alone``: the paste is this
    one line, so its message may be a fragment of a template (typed into the
    search box); a line among others never is.
    """

    exception: str | None
    messages: tuple[str, ...]
    frames: tuple[Frame, ...] = ()
    role: Role = "final"
    alone: bool = False


def message_readings(lines: Sequence[str]) -> tuple[str, ...]:
    """The message read from its first line, then with each following line
    added (at most :data:`MAX_READING_LINES`), longest first; a quoted
    ``repr`` (``KeyError: 'x'``) adds its value (:func:`unquote`)."""
    lines = list(lines[: MAX_READING_LINES + 1])
    while lines and not lines[-1].strip():
        lines.pop()
    readings: list[str] = []
    for end in range(len(lines), 0, -1):
        text = "\n".join(lines[:end]).strip()
        if text and text not in readings:
            readings.append(text)
    for text in list(readings):
        value = unquote(text)
        if value is not None and value not in readings:
            readings.append(value)
    return tuple(readings)


def unquote(text: str) -> str | None:
    """The value of ``text`` when the whole of it is one quoted string, as
    ``repr`` writes one (``'no model named \\'x\\''``), else None."""
    token = JSON_TOKEN.match(text)
    if token is None or token.end() != len(text) or text[0] not in "'\"":
        return None
    return string_value(text)


def heads(line: str) -> list[tuple[str | None, str]]:
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
        head = EXCEPTION_LINE.match(rest)
        if head and head[2] is not None and head[2] not in seen:
            exception = head[1] if is_exception(head[1]) else None
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


def exception_of(lines: Sequence[str], block: Block) -> Raised:
    """A block's exception: the type and message of its exception line
    (indentation aside), the message read on over the lines after it up to
    the next block; frames only, when the block was cut before it."""
    if block.exception_line is None:
        return Raised(None, (), block.frames, block.role)
    after = block.exception_line + 1
    tail: list[str] = []
    while after < len(lines) and len(tail) < MAX_READING_LINES and not _opens(lines[after]):
        tail.append(lines[after])
        after += 1
    text = lines[block.exception_line].strip()
    head = EXCEPTION_LINE.match(text)
    if head is None:
        return Raised(None, message_readings([text, *tail]), block.frames, block.role)
    first = head[2] or ""
    exception: str | None = head[1]
    if head[2] is not None and not is_exception(head[1]):
        exception, first = None, head[2]
    return Raised(exception, message_readings([first, *tail]), block.frames, block.role)


def _opens(line: str) -> bool:
    """Whether a line starts the next block (a message's reading stops there)."""
    return bool(is_head(line) or FRAME.match(line)) or line.strip() in SEPARATORS


def records(lines: Sequence[str], taken: Sequence[bool]) -> list[list[int]]:
    """The plain lines of a paste (not taken by a block, not blank) grouped
    into records: a line, and the indented lines right under it (a message
    wrapped by hand, its continuation lines indented), as line indexes."""
    out: list[list[int]] = []
    open_record = False
    for number, line in enumerate(lines):
        if taken[number] or not line.strip():
            open_record = False
            continue
        if open_record and line[0] in " \t":
            out[-1].append(number)
        else:
            out.append([number])
        open_record = True
    return out


def runs(lines: Sequence[str], taken: Sequence[bool]) -> list[list[str]]:
    """The runs of plain lines between blocks, blank lines at either end
    left out: a message of several lines is read over its run."""
    out: list[list[str]] = [[]]
    for line, took in zip(lines, taken, strict=True):
        if took:
            out.append([])
        else:
            out[-1].append(line)
    trimmed = []
    for run in out:
        shown = [number for number, line in enumerate(run) if line.strip()]
        if shown:
            trimmed.append(run[shown[0] : shown[-1] + 1])
    return trimmed


def plain_messages(lines: Sequence[str], taken: Sequence[bool], alone: bool) -> list[Raised]:
    """Every plain line of a paste as a candidate message: each run of
    plain lines read whole and from its first line on, then each record
    (a line with its indented continuation lines joined) from its start and
    from each place a message may start (:func:`heads`); a reading already
    made is not repeated."""
    out: list[Raised] = []
    seen: set[tuple[str | None, str]] = set()

    def add(exception: str | None, texts: Sequence[str]) -> None:
        readings = tuple(t for t in message_readings(texts) if (exception, t) not in seen)
        seen.update((exception, t) for t in readings)
        if readings:
            out.append(Raised(exception, readings, (), "message", alone))

    def read(group: Sequence[str]) -> None:
        first = group[0].strip()
        add(None, [first, *group[1:]])
        for exception, text in heads(first):
            add(exception, [text, *group[1:]])

    groups = records(lines, taken)
    for run in runs(lines, taken):
        if sum(1 for line in run if line.strip() and line[0] not in " \t") > 1:
            add(None, ["\n".join(run)])
            read(run)
    for group in groups:
        read([lines[number] for number in group])
    return out


def path_query(text: str) -> Raised | None:
    """``path.py:123`` pasted alone: one frame, as the site's search box reads it."""
    text = text.strip()
    if len(text) > 1000:
        return None
    match = PATH_LINE.match(text)
    if match is None:
        return None
    return Raised(None, (), (Frame(match[1], int(match[2])),), "path")


def parse_paste(text: str) -> list[Raised]:
    """The exceptions and candidate messages a paste shows, the one to
    explain first: the blocks' exceptions (the final one first, then the
    ones before it in the chain, latest first; a block cut before its
    exception line counts with its frames), then every plain line and run
    of lines, then what the string values of its JSON objects show (each
    read as a paste). ``path.py:123`` alone is a frame. Never raises; an
    empty paste gives ``[]``. Linear in the paste's length, with at most
    :data:`MAX_JSON_VALUES` values read, :data:`MAX_JSON_DEPTH` deep.
    """
    return _scan(text, 0, [MAX_JSON_VALUES])


def _scan(text: str, depth: int, budget: list[int]) -> list[Raised]:
    """:func:`parse_paste` of ``text`` found ``depth`` JSON strings deep;
    ``budget[0]``: how many JSON values may still be read."""
    query = path_query(text)
    if query is not None:
        return [query]
    lines = read_lines(text)
    blocks, taken = read_blocks(lines)
    raised = [exception_of(lines, block) for block in reversed(blocks)]
    alone = not blocks and sum(1 for line in lines if line.strip()) == 1
    raised += plain_messages(lines, taken, alone)
    if depth < MAX_JSON_DEPTH and budget[0] > 0 and "{" in text:
        values = json_strings(text, budget[0])
        budget[0] -= len(values)
        for value in values:
            if solid_size(value) >= MIN_LITERAL:
                raised += [replace(r, alone=False) for r in _scan(value, depth + 1, budget)]
    return raised
