"""Paste scanning, step 2: the string values of the JSON objects in a paste.

An HTTP error body (``{"object": "error", "message": "..."}``), an abort's
``finish_reason`` with its ``message``, a log line holding a JSON record, a
client's exception showing the body as a Python dict (``Error code: 400 -
{'object': 'error', 'message': '...'}``): the message is a string value,
escaped (``\\n``, ``\\"``, ``\\u00e9``). Each value is read back as text
(:func:`json_strings`), and the scanner reads it as a paste of its own
(:func:`miner.lookup.scan.parse_paste`).

One pass, no JSON parser: an object cut short by the end of the paste, or
by a log collector, gives the values before the cut. A double-quoted string
is read by Python's ``json`` (JavaScript's ``JSON.parse`` in the site's
search: they read a string literal alike), else, like a single-quoted one,
by :func:`python_string`, the escapes ``repr`` writes.
"""

from __future__ import annotations

import json
import re

from miner.lookup.rules import JSON_TOKEN, PY_ESCAPE

_NAMED = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", "'": "'", '"': '"'}


def _unescape(match: re.Match[str]) -> str:
    code = match[1]
    if len(code) > 1:
        value = int(code[1:], 16)
        return chr(value) if value <= 0x10FFFF else match.group()
    return _NAMED.get(code, match.group())


def python_string(token: str) -> str:
    """The text of a Python string literal as ``repr`` writes it (quoted with
    ``'`` or ``"``): the escapes ``\\\\``, ``\\'``, ``\\"``, ``\\n``, ``\\t``,
    ``\\r``, ``\\xHH``, ``\\uHHHH`` and ``\\UHHHHHHHH`` read, any other kept as
    written (as Python keeps an unknown escape)."""
    return PY_ESCAPE.sub(_unescape, token[1:-1])


def string_value(token: str) -> str | None:
    """The text of a complete string token, or None (cut short: no closing
    quote, or the last one escaped)."""
    body = token[1:-1]
    if len(token) < 2 or token[-1] != token[0] or (len(body) - len(body.rstrip("\\"))) % 2:
        return None
    if token[0] == '"':
        try:
            value = json.loads(token)
        except ValueError:
            return python_string(token)
        return value if isinstance(value, str) else None
    return python_string(token)


def _is_key(text: str, end: int) -> bool:
    """Whether the string ending at ``end`` is followed by ``:`` (white space
    aside): a key, not a value."""
    rest = text[end : end + 64].lstrip()
    return rest.startswith(":")


def json_strings(text: str, limit: int) -> list[str]:
    """The decoded string values (not keys) of the JSON objects of ``text``,
    in order, at most ``limit``.

    A value counts when it stands inside braces (``{`` opened, not yet
    closed; nesting counted, a stray ``}`` ignored) and is a complete string
    (:func:`string_value`): a value cut by the end of its line is skipped. Outside
    braces nothing is read, so quotes in plain text are never taken. Linear:
    :data:`~miner.lookup.rules.JSON_TOKEN` reads each character once; between
    objects, ``str.find`` jumps to the next ``{``.
    """
    out: list[str] = []
    depth = 0
    position = 0
    while len(out) < limit:
        if depth == 0:
            position = text.find("{", position)
            if position < 0:
                break
        token = JSON_TOKEN.search(text, position)
        if token is None:
            break
        position = token.end()
        found = token.group()
        if found == "{":
            depth += 1
        elif found == "}":
            depth = max(depth - 1, 0)
        elif not _is_key(text, position):
            value = string_value(found)
            if value is not None:
                out.append(value)
    return out
