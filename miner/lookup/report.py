"""The answer: matches written for a terminal or for tools.

``miner lookup`` prints each match (score, exception and message,
``path:line``, card, why) or a notice and the closest candidates
(:func:`report_text`), or JSON (:func:`report_json`). Mined text is shown,
never obeyed: every control character in it is written as an escape
(:func:`visible`).
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Sequence
from pathlib import Path

from miner.errors import RecordsError
from miner.lookup.index import Match
from miner.lookup.scan import Raised, parse_paste
from miner.publish.bundles import read_record, site_ids
from miner.publish.cards import card_ref


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
    folder (or in its site's bundle of the error's module,
    :mod:`miner.publish.bundles`); ``(None, "")`` when there is none (a full card)."""
    try:
        record = json.loads((data / "api" / "errors" / f"{error_id}.json").read_text("utf-8"))
    except (OSError, ValueError):
        record = _site_record(data / "site", error_id)
    try:
        audience, module = record["audience"], record["module"]
    except (KeyError, TypeError):
        return None, ""
    if isinstance(audience, str) and isinstance(module, str):
        return audience, module
    return None, ""


def _site_record(site: Path, error_id: str) -> dict[str, object] | None:
    """The record of ``error_id`` in the site ``site``'s bundles, or None."""
    try:
        return read_record(site, error_id, site_ids(site)[error_id])[0]
    except (RecordsError, KeyError):
        return None


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
    (``\\x1b``, ``\\x07``, ``\\x00``, ``\\t``, ``\\n``, ``\\u009b``, ``\\u202e``),
    and every other invisible format character (Unicode category ``Cf``:
    the marks ``\\u200e``/``\\u200f``, zero-width space and joiners, soft
    hyphen, byte order mark, tag characters ``\\U000e0041``) too; everything
    else, backslashes included, as it is."""
    text = UNSAFE.sub(_escape, text)
    if text.isascii():
        return text
    return "".join(_format_escape(c) if unicodedata.category(c) == "Cf" else c for c in text)


def _format_escape(char: str) -> str:
    code = ord(char)
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


#: The characters of :data:`UNSAFE` that JSON leaves raw in its strings.
_JSON_RAW = re.compile("[\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def visible_json(text: str) -> str:
    """JSON text (``json.dumps(..., ensure_ascii=False)``, which escapes C0
    controls but not DEL, C1 controls or the separators and bidirectional
    controls of :data:`UNSAFE`), and every other format character
    (``Cf``), with those written as ``\\uXXXX`` (a surrogate pair beyond
    U+FFFF): the same JSON value, safe to print. They occur only inside
    strings, where such an escape means the character itself."""
    text = _JSON_RAW.sub(lambda match: f"\\u{ord(match.group()):04x}", text)
    if text.isascii():
        return text
    return "".join(_json_escape(c) if unicodedata.category(c) == "Cf" else c for c in text)


def _json_escape(char: str) -> str:
    """``char`` as a JSON escape (a surrogate pair beyond U+FFFF)."""
    code = ord(char)
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


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
