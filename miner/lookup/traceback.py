"""Paste scanning, step 3: the traceback blocks of a paste and their frames.

A block is what Python prints for one exception: ``Traceback (most recent
call last):``, ``File "path", line N, in f`` frames each with the source
line shown under it (one or several lines, carets), and the exception line
``Type: message``. A paste may hold any number of blocks, chained by
Python's separators or one after another among log lines, each complete or
cut: at its start (frames with no header: the paste begins mid-way), at its
end (no exception line: the excerpt stops before it).

:func:`read_blocks` finds them in one pass over the lines; what is not part
of a block is left to the scanner's plain lines (:mod:`miner.lookup.scan`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from miner.lookup.prefixes import indent
from miner.lookup.rules import (
    CARETS,
    CAUSE_SEPARATOR,
    CONTEXT_SEPARATOR,
    EXCEPTION_LINE,
    EXCEPTION_NAME,
    FRAME,
    LOGGER_NAME,
    TRACEBACK_HEAD,
)

Role = Literal["final", "cause", "context", "message", "path"]


@dataclass(frozen=True, slots=True)
class Frame:
    """One ``File "path", line N, in func`` line of a traceback."""

    path: str
    line: int
    function: str | None = None
    code: str | None = field(default=None, compare=False)
    """The source line shown under the frame (stripped), when there is one."""


@dataclass(frozen=True, slots=True)
class Block:
    """One traceback of a paste: its frames (outermost first), the index of
    its exception line in the paste's lines (None: cut before it), and how
    it relates to the block after it (``role``: ``cause`` or ``context``
    when a separator or a new header follows it, ``final`` for the last)."""

    frames: tuple[Frame, ...]
    exception_line: int | None
    end: int
    """Index of the first line after the block (its exception line included)."""
    role: Role = "final"


def is_head(line: str) -> bool:
    """Whether ``line`` opens a traceback: it ends with the header (after a
    log prefix or words such as ``Scheduler hit an exception:``). A header
    inside other text (a JSON string holding a traceback) is no block."""
    return line.rstrip().endswith(TRACEBACK_HEAD)


def is_exception(name: str) -> bool:
    """Whether a ``Name:`` before a message names an exception class rather
    than a logger or module (``sglang.srt.managers.scheduler``, ``note``)."""
    last = name.rsplit(".", 1)[-1]
    return bool(last[:1].isupper()) and not LOGGER_NAME.match(name)


def looks_raised(line: str) -> bool:
    """Whether ``line`` (indentation aside) is an exception line by its form:
    ``Name: message`` or ``Name`` alone, ``Name`` an exception class named as
    classes are (``...Error``, ``...Exception``, ``...Warning``): an indented
    one is read as the exception, not as source."""
    head = EXCEPTION_LINE.match(line.strip())
    return bool(
        head and is_exception(head[1]) and EXCEPTION_NAME.search(head[1].rsplit(".", 1)[-1])
    )


def is_code(lines: Sequence[str], index: int) -> bool:
    """Whether the line after a frame is the frame's source line: indented
    (and not an exception line by its form), or (indentation lost in the
    paste) followed by the exception or a frame."""
    line = lines[index]
    if not line.strip() or FRAME.match(line) or CARETS.match(line) or is_head(line):
        return False
    if line[0] in " \t":
        return not looks_raised(line)
    after = lines[index + 1] if index + 1 < len(lines) else ""
    return not EXCEPTION_LINE.match(line) and bool(
        EXCEPTION_LINE.match(after) or FRAME.match(after)
    )


def _frame_at(lines: Sequence[str], index: int) -> tuple[Frame, int]:
    """The frame at ``lines[index]`` with its source line, and the index
    after it: the source line (:func:`is_code`) and the lines indented more
    than the frame (more source lines, carets) are the frame's."""
    match = FRAME.match(lines[index])
    assert match is not None
    code = None
    after = index + 1
    if after < len(lines) and is_code(lines, after):
        code = lines[after].strip()
        after += 1
        own = indent(lines[index])
        while (
            after < len(lines)
            and lines[after].strip()
            and indent(lines[after]) > own
            and not FRAME.match(lines[after])
            and not looks_raised(lines[after])
        ):
            after += 1
    while after < len(lines) and CARETS.match(lines[after]):
        after += 1
    return Frame(match[1], int(match[2]), match[3], code), after


def _read_block(lines: Sequence[str], start: int) -> Block:
    """The block starting at ``lines[start]``: a header line or a first frame."""
    frames: list[Frame] = []
    index = start + 1 if is_head(lines[start]) else start
    while index < len(lines):
        line = lines[index]
        if FRAME.match(line):
            frame, index = _frame_at(lines, index)
            frames.append(frame)
        elif not line.strip():
            if frames:  # a traceback has no blank line before its exception
                break
            index += 1
        elif CARETS.match(line):
            index += 1
        elif is_head(line) or line.strip() in (CAUSE_SEPARATOR, CONTEXT_SEPARATOR):
            break
        else:
            return Block(tuple(frames), index, index + 1)
    return Block(tuple(frames), None, index)


def read_blocks(lines: Sequence[str]) -> tuple[list[Block], list[bool]]:
    """Every traceback block of ``lines``, in paste order, each with its role
    in the chain, and for each line whether a block took it.

    A block starts at a header or at a frame outside any block; two blocks
    are linked by Python's separators (``cause``: "The above exception was
    the direct cause...", ``context``: "During handling..."), or, when a
    header follows with none, as context. One pass: each line is read once.
    """
    blocks: list[Block] = []
    links: list[Role] = []
    taken = [False] * len(lines)
    pending: Role = "context"
    index = 0
    while index < len(lines):
        line = lines[index]
        stripped = line.strip()
        if stripped in (CAUSE_SEPARATOR, CONTEXT_SEPARATOR):
            pending = "cause" if stripped == CAUSE_SEPARATOR else "context"
            taken[index] = True
            index += 1
        elif is_head(line) or FRAME.match(line):
            block = _read_block(lines, index)
            for number in range(index, block.end):
                taken[number] = True
            blocks.append(block)
            links.append(pending)
            pending = "context"
            index = max(block.end, index + 1)
        else:
            index += 1
    roles: list[Role] = [*links[1:], "final"] if blocks else []
    return [
        Block(b.frames, b.exception_line, b.end, role)
        for b, role in zip(blocks, roles, strict=True)
    ], taken
