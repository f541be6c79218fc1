"""The numbers and line patterns every stage of lookup reads, compiled once.

Defined in :mod:`miner.publish.patterns` (``RULES``, ``LINE_PATTERNS``,
``PREFIX_PATTERNS``), the one definition the site's search reads too
(``search-data.js``): the CLI and the page score with the same values.
"""

from __future__ import annotations

import re

from miner.publish.patterns import LINE_PATTERNS, PREFIX_PATTERNS, RULES

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
#: Longest message tried against the templates (characters); longer lines are
#: cut to this length when the paste is read.
MAX_MESSAGE = int(RULES["MAX_MESSAGE"])
#: How many ``": "`` of a line are tried as the start of the message
#: (``Scheduler hit an exception: ValueError: ...``).
MAX_HEADS = int(RULES["MAX_HEADS"])
#: Log prefixes are looked for in the first this many characters of a line
#: (a prefix is never longer): each prefix pattern reads a bounded text, so a
#: megabyte-long line costs no more than a short one.
MAX_PREFIX = int(RULES["MAX_PREFIX"])
#: Lines of a message read after its first line (a traceback's message, a
#: multi-line message in a log).
MAX_READING_LINES = int(RULES["MAX_READING_LINES"])
#: String values of JSON objects read from one paste, at most.
MAX_JSON_VALUES = int(RULES["MAX_JSON_VALUES"])
#: How deep JSON string values are read as pastes of their own (a value
#: holding JSON, holding a traceback).
MAX_JSON_DEPTH = int(RULES["MAX_JSON_DEPTH"])
#: Source lines this alike (:func:`miner.lookup.frames.code_similarity`) are
#: the same statement, perhaps reworded between releases.
SIMILAR_CODE = float(RULES["SIMILAR_CODE"])
#: Longest frame source line compared (characters).
MAX_CODE = int(RULES["MAX_CODE"])
#: End punctuation a paste may lack or add (``... config`` for ``... config.``).
END_PUNCTUATION = str(RULES["END_PUNCTUATION"])

PREFIXES = tuple(re.compile(p) for p in PREFIX_PATTERNS)

TRACEBACK_HEAD = "Traceback (most recent call last):"
CAUSE_SEPARATOR = "The above exception was the direct cause of the following exception:"
CONTEXT_SEPARATOR = "During handling of the above exception, another exception occurred:"

FRAME = re.compile(LINE_PATTERNS["FRAME"])  # path, line, function
EXCEPTION_LINE = re.compile(LINE_PATTERNS["EXCEPTION_LINE"])  # type, message
#: The last name of an exception class as Python's and libraries' classes are
#: named (``...Error``, ``...Exception``, ``...Warning``, ``KeyboardInterrupt``,
#: ``SystemExit``): an indented line so named is an exception line, not source.
EXCEPTION_NAME = re.compile(LINE_PATTERNS["EXCEPTION_NAME"])
#: A dotted name in lower case (``sglang.srt.managers.scheduler``): a logger or
#: module name before ``: ``, never an exception class.
LOGGER_NAME = re.compile(LINE_PATTERNS["LOGGER_NAME"])
#: ``path.py:123`` (or ``path.py", line 123``) pasted alone: the site's search box
#: reads it too. Linear: the path holds no ``:`` and the line only digits.
PATH_LINE = re.compile(LINE_PATTERNS["PATH_LINE"])  # path, line
#: A first word of a line that a log collector, not a message, put there.
COLLECTOR_MARK = re.compile(LINE_PATTERNS["COLLECTOR_MARK"])
CARETS = re.compile(LINE_PATTERNS["CARETS"])
WORD = re.compile(LINE_PATTERNS["WORD"])
CODE_HEAD = re.compile(LINE_PATTERNS["CODE_HEAD"])
#: A string of a JSON object or of a Python dict's repr (``"..."`` or
#: ``'...'``), or ``{`` / ``}``: linear, one pass; a string cut by the end of
#: its line matches to there.
JSON_TOKEN = re.compile(LINE_PATTERNS["JSON_TOKEN"])
#: An escape of a Python string literal (a dict's repr in a log line).
PY_ESCAPE = re.compile(LINE_PATTERNS["PY_ESCAPE"])
SPACE = re.compile(r"\s+")
LINE_BREAK = re.compile(r"\r\n|\r|\n")


def normalize(text: str) -> str:
    """``text`` with white space runs folded to one space, trimmed."""
    return SPACE.sub(" ", text).strip()


def solid_size(text: str) -> int:
    """Number of non-blank characters."""
    return len(text) - sum(1 for c in text if c.isspace())
