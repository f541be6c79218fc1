"""Source text the way CPython sees it: decoding, line breaks, one-line code.

Facts used here come from CPython: PEP 263 (coding cookies, via
``tokenize.detect_encoding``), PEP 3120 (UTF-8 by default) and the tokenizer's
newline handling (``\\r\\n`` and a lone ``\\r`` become ``\\n`` before tokenizing;
form feed and the Unicode line separators are not line breaks).
"""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass

from miner.model import Excerpt

#: Lines of context on each side of a site in its excerpt.
EXCERPT_CONTEXT = 18

_NEWLINES = re.compile(r"\r\n?")


@dataclass(frozen=True, slots=True)
class SourceText:
    """A decoded file: ``text`` has ``\\n`` line breaks only and no BOM."""

    text: str
    encoding: str
    """The codec used: ``utf-8``, ``utf-8-sig`` or the cookie's encoding."""
    lossy: bool
    """True when the bytes did not decode and U+FFFD replaced the bad ones."""

    @property
    def lines(self) -> list[str]:
        """The file's lines without their line breaks (a final newline ends the
        last line; it does not start a new, empty one)."""
        lines = self.text.split("\n")
        if lines and lines[-1] == "" and self.text:
            lines.pop()
        return lines


class DecodeError(ValueError):
    """The bytes are not text Python would read; the message says why."""


def decode_source(data: bytes) -> SourceText:
    """Decode a Python source file as CPython does.

    A UTF-8 BOM, a PEP 263 coding cookie on line 1 or 2, else UTF-8. Newlines
    are normalised to ``\\n``. When the declared or default encoding fails,
    the file is decoded with replacement characters and flagged ``lossy``
    (CPython itself does not validate bytes inside comments, so such files can
    still be valid Python).

    Raises:
        DecodeError: the cookie names an unknown codec, or there is a BOM
            together with a cookie that is not UTF-8.
    """
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:
        # An unknown or conflicting cookie; a bad byte on line 1-2 lands here too.
        if b"coding" in data[:400] and "unknown encoding" in str(exc):
            raise DecodeError(f"{exc}") from None
        encoding = "utf-8"
    try:
        text = data.decode(encoding)
        lossy = False
    except (UnicodeDecodeError, LookupError):
        text = data.decode("utf-8", errors="replace")
        lossy = True
    if text.startswith("\ufeff"):
        text = text[1:]
    return SourceText(text=_NEWLINES.sub("\n", text), encoding=encoding, lossy=lossy)


def excerpt_for(lines: list[str], line: int, context: int = EXCERPT_CONTEXT) -> Excerpt:
    """Lines ``line - context`` .. ``line + context`` clipped to the file, with
    blank lines at either edge trimmed (never the site's own line)."""
    start = max(1, line - context)
    end = min(len(lines), line + context)
    while start < line and not lines[start - 1].strip():
        start += 1
    while end > line and not lines[end - 1].strip():
        end -= 1
    return Excerpt(start_line=start, end_line=end, text="\n".join(lines[start - 1 : end]))


_OPENERS = {"(", "[", "{"}
_CLOSERS = {")", "]", "}"}
_SPACE_RUN = re.compile(r"\s+")


def one_line(code: str) -> str:
    """Source code of an expression or header as one line.

    Comments are dropped and white space between tokens is folded to one space
    (none just inside brackets when the gap was a line break), so a condition
    written over several lines reads as it would on one. Text inside string
    literals is untouched. Falls back to folding white space when the text
    does not tokenize.
    """
    if "\n" not in code and "#" not in code and "\\" not in code:
        return code.strip()
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(code).readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return _SPACE_RUN.sub(" ", code).strip()
    rows = code.split("\n")
    out: list[str] = []
    prev_end: tuple[int, int] | None = None
    prev_text = ""
    skip = {
        tokenize.COMMENT,
        tokenize.NL,
        tokenize.NEWLINE,
        tokenize.INDENT,
        tokenize.DEDENT,
        tokenize.ENDMARKER,
    }
    for tok in tokens:
        if tok.type in skip:
            continue
        if prev_end is not None and tok.start != prev_end:
            gap_has_break = tok.start[0] != prev_end[0]
            if not (gap_has_break and (prev_text in _OPENERS or tok.string in _CLOSERS)):
                out.append(" ")
        out.append(_source_of(rows, tok.start, tok.end))
        prev_end = tok.end
        prev_text = tok.string
    return "".join(out).strip()


def _source_of(rows: list[str], start: tuple[int, int], end: tuple[int, int]) -> str:
    """The exact source between two tokenizer positions (rows 1-based).

    Taken from the text rather than ``TokenInfo.string``: from Python 3.12 on,
    f-string middle tokens carry ``{`` where the source has ``{{``.
    """
    (r1, c1), (r2, c2) = start, end
    if r1 == r2:
        return rows[r1 - 1][c1:c2]
    parts = [rows[r1 - 1][c1:]] + rows[r1 : r2 - 1] + [rows[r2 - 1][:c2]]
    return "\n".join(parts)
