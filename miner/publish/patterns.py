"""Forms of pasted text that both readers of a paste know: ``miner lookup``
(:mod:`miner.lookup`) and the site's search box, which ships a port of the
matcher and reads these patterns from ``search-data.js``.
"""

from __future__ import annotations

#: Log-line prefixes, stripped from the start of each line again and again
#: (JavaScript-compatible syntax: the site's search uses the same list).
PREFIX_PATTERNS: tuple[str, ...] = (
    # [2026-09-10 12:00:00 TP0], [2026-09-10 12:00:00 DP1 TP3], [TP0], [12:00:00]
    # (linear: the look-ahead finds the closing bracket first, so a line of
    # "[" and "TP0 " repeated, with no "]", is given up after one scan; the
    # text before the tag is taken lazily, each position tried once)
    r"^\[(?=[^\]\n]*\])[^\]\n]*?(?:\d{4}-\d\d-\d\d|\d\d:\d\d:\d\d|\b(?:TP|DP|PP|EP|CP|RANK)\d+\b)"
    r"[^\]\n]*\] ?",
    # 2026-09-10 12:00:00,123 - / 2026-09-10T12:00:00.123Z |
    r"^\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?(?: ?[-|:])? ?",
    # 09-10 12:00:00 and a bare 12:00:00.123
    r"^(?:\d\d-\d\d )?\d\d:\d\d:\d\d(?:[.,]\d+)? ?",
    # ERROR:sglang.srt.managers.scheduler: (logging's default format)
    r"^(?:CRITICAL|FATAL|ERROR|WARNING|WARN|INFO|DEBUG):[\w.]*: ?",
    # [ERROR] / ERROR: / ERROR / error:
    r"^(?:\[(?:CRITICAL|FATAL|ERROR|WARNING|WARN|INFO|DEBUG)\]"
    r"|(?:CRITICAL|FATAL|ERROR|WARNING|WARN|INFO|DEBUG)(?::|\b)|(?:critical|error|warning):) ?",
    # [scheduler.py:123] (a source location tag)
    r"^\[[\w./-]+\.py:\d+\] ?",
    # (Scheduler pid=123) / (TP0 pid=7, ip=10.0.0.1)
    # (linear: the text before "pid=" cannot itself hold "pid=<digit>")
    r"^\((?:[^()\np]|p(?!id=\d))*pid=\d+(?!\d)[^()\n]*\) ?",
    # glog: E0910 12:00:00.123456 1234 file.cc:12]
    r"^[EWIF]\d{4} \d\d:\d\d:\d\d\.\d+ +\d+ [^\]\n]+\] ?",
    # docker compose: "sglang_service-1  | " (v2), "sglang_1  | " (v1)
    r"^[A-Za-z0-9][\w.-]*[-_]\d+ +\| ?",
    # journald / syslog: "Nov 30 10:12:44 host python[1234]: "
    r"^[A-Z][a-z]{2} +\d{1,2} \d\d:\d\d:\d\d [\w.-]+ [\w.@/-]+(?:\[\d+\])?: ?",
    # a logger's name after the level: "ERROR sglang.srt.managers.scheduler: "
    # (dotted and lower case: never an exception class)
    r"^[a-z_][a-z0-9_]*(?:\.[a-z_][a-z0-9_]*)+: ",
)

#: The numbers both readers score with (:mod:`miner.lookup` documents each);
#: shipped to the site's search in ``search-data.js`` as ``rules``.
RULES: dict[str, float | int | str] = {
    "GOOD": 0.5,
    "MIN_LITERAL": 6,
    "MIN_COVERAGE": 0.25,
    "MIN_SPECIFIC": 20,
    "WEAK_COVERAGE": 0.4,
    "MIN_FRAGMENT": 12,
    "MAX_MESSAGE": 4000,
    "MAX_HEADS": 3,
    "MAX_PREFIX": 256,
    "MAX_READING_LINES": 40,
    "MAX_JSON_VALUES": 64,
    "MAX_JSON_DEPTH": 2,
    "SIMILAR_CODE": 0.75,
    "MAX_CODE": 300,
    "END_PUNCTUATION": ".!?,;:\u2026",
}

#: The lines of a paste both readers recognise (JavaScript-compatible syntax,
#: no named groups: group 1, 2, 3 are the ones :mod:`miner.lookup` names).
LINE_PATTERNS: dict[str, str] = {
    # File "path", line N, in func: path, line, function
    "FRAME": r'^\s*File "([^"\n]+)", line (\d+)(?:, in (.+))?\s*$',
    # Type: message (type, message)
    "EXCEPTION_LINE": r"^([A-Za-z_][\w.]*)(?::(?: (.*))?)?$",
    # the last name of an exception class, as classes are named
    "EXCEPTION_NAME": r"(?:Error|Exception|Warning|Interrupt|Exit)$",
    # a dotted name in lower case: a logger or module, never an exception class
    "LOGGER_NAME": r"^[a-z_][a-z0-9_]*(?:\.[a-z_][a-z0-9_]*)+$",
    # path.py:123 or path.py", line 123 pasted alone: path, line
    "PATH_LINE": r'^"?([^\s":,]+\.py)"?(?::|,? line )(\d+)$',
    # a first word of a line that a log collector put there
    "COLLECTOR_MARK": r"[-_|\[\]:/0-9]",
    # a caret line under a source line
    "CARETS": r"^\s*[~^]+\s*$",
    # the start of a statement a frame's source line is compared by
    "CODE_HEAD": r"^(?:raise\s+[\w.]+|assert\b|[\w.]+\()",
    # a string of a JSON object or of a Python dict's repr ("..." or '...'),
    # cut by the end of its line or not, or a brace (linear: each character
    # is read by one branch)
    "JSON_TOKEN": r'[{}]|"(?:[^"\\\r\n]|\\[^\r\n])*"?|\'(?:[^\'\\\r\n]|\\[^\r\n])*\'?',
    # an escape of a Python string literal, as repr() writes them: a backslash
    # and x41, u00e9, U0001f600 or one character (n, t, a quote...)
    "PY_ESCAPE": r"\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|[\s\S])",
    # a word for the word-overlap score (the text lower-cased first)
    "WORD": r"[a-z_][a-z0-9_]+|[0-9]+",
}
