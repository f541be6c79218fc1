"""Scoring, step 1: message templates as matchers.

:func:`compile_template` turns a message template (``message_parts``) into a
:class:`Template`: literal parts exact (white space runs match any white
space), each placeholder any text, new lines included. No regular expression
is built from a template and nothing backtracks: a message is matched in at
most ``len(message) + blocks`` ``str.find`` calls, whatever the message
(:meth:`Template.match_solid`).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

from miner.lookup.rules import SPACE
from miner.model import MessagePart

#: What separates two chunks of a template (:func:`compile_template`).
_NONE, _BLANK, _ANY = 0, 1, 2


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
        return cls.of_words(message.split())  # split at runs of what ``\\s`` matches

    @classmethod
    def of_words(cls, words: Sequence[str]) -> Solid:
        """The message whose blank-free pieces are ``words`` (``str.split()``)."""
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
        for number, chunk in enumerate(SPACE.split(part.text or "")):
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
