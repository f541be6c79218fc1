"""``miner explain ERROR_ID``: one error's card in the terminal, like ``rustc --explain``.

A reader of a mined output folder (``miner mine --out DIR``), next to
:mod:`miner.lookup` and :mod:`miner.checks`. Three steps, each a function:

* :func:`resolve_id` turns what the user typed (a full error id, or a unique
  prefix of one, like git) into the id of a record ``DIR/api/errors/<id>.json``
  (of a published site: an id of ``DIR/api/ids.json``, whose record is in its
  module's bundle, :mod:`miner.publish.bundles`);
  no match or several raise :class:`ErrorIdError` (exit 2, one line).
* :func:`card_markdown` finds the error's Markdown: its card
  ``DIR/errors/<id>.md``, else its entry on the page of its module
  (``DIR/<audience>/<module>.md#<id>``), else the entry composed from the JSON
  record alone (a site folder holds the records but no Markdown).
* :func:`terminal_text` renders that Markdown for a terminal (headings
  underlined, fences indented, links as ``text (target)``, Markdown escapes
  undone), and :func:`origins_view` picks out how the analysis linked the
  guards to settings (``analysis.evidence``, each site's guards and, when the
  records have them, the analysis' ``origins`` and ``logged`` fact).

Everything printed comes from the mined repository and is shown, never
obeyed: every control character and every Unicode format character (category
``Cf``: bidirectional controls, zero-width characters, tags) is written as a
visible escape (:func:`terminal_safe`, :func:`json_safe`, built on
:func:`miner.lookup.visible`).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from miner.errors import MinerError, RecordsError
from miner.lookup import visible, visible_json
from miner.publish.bundles import IDS, read_record, site_ids
from miner.publish.cards import card_ref, code_span, grouped
from miner.publish.records import read_json

#: Where the JSON records of the errors are, relative to the mined folder.
API_ERRORS = Path("api") / "errors"
#: Characters an error id is made of (16 lowercase hex digits today).
_ID_CHARS = re.compile(r"[0-9a-f]+")
#: How many candidates an ambiguous prefix names.
SHOWN_CANDIDATES = 5


class ErrorIdError(MinerError):
    """The id given to ``miner explain`` names no error of the folder, or several."""


@dataclass(frozen=True)
class Explained:
    """One error as ``miner explain`` prints it."""

    error_id: str
    record: dict[str, Any]
    """``api/errors/<id>.json``, parsed."""
    stored: str
    """The same record, the text as stored."""
    markdown: str
    """The card, the module page's entry, or the entry composed from the record."""
    source: Path | None
    """The Markdown file the text was read from; None when composed."""


# ---- Which error: a full id or a unique prefix. ----


def resolve_id(out: Path, wanted: str) -> str:
    """The id of the one error of the mined folder ``out`` that ``wanted``
    names: itself, or the only id starting with it (case ignored).

    Raises:
        RecordsError: ``out`` holds no error records (``api/errors`` missing).
        ErrorIdError: ``wanted`` is empty, not made of id characters, or
            matches no id or several (the message names some of them).
    """
    folder = out / API_ERRORS
    site = not folder.is_dir() and (out / IDS).is_file()
    if not folder.is_dir() and not site:
        raise RecordsError(
            f"{out}: no mined records here ({API_ERRORS} missing); "
            f"run `miner mine --out {out}` first, or pass --out DIR"
        )
    prefix = wanted.strip().lower()
    shown = terminal_safe(wanted)
    if not prefix or _ID_CHARS.fullmatch(prefix) is None:
        raise ErrorIdError(
            f"{shown or repr(wanted)}: not an error id (ids are 16 hexadecimal characters); "
            f"give an id or its first characters, as {out / 'index.md'} lists them"
        )
    if site:
        found = sorted(i for i in site_ids(out) if i.startswith(prefix))
        if prefix in found:
            return prefix
    elif (folder / f"{prefix}.json").is_file():
        return prefix
    else:
        found = sorted(
            entry.name[: -len(".json")]
            for entry in os.scandir(folder)
            if entry.name.startswith(prefix) and entry.name.endswith(".json")
        )
    if not found:
        raise ErrorIdError(
            f"{shown}: no error id starts with this in {folder}; find the id with "
            "`miner lookup MESSAGE` or in index.md, or pass the mined folder with --out DIR"
        )
    if len(found) > 1:
        more = ", ..." if len(found) > SHOWN_CANDIDATES else ""
        names = ", ".join(found[:SHOWN_CANDIDATES]) + more
        raise ErrorIdError(
            f"{shown}: ambiguous id prefix, {len(found)} errors start with it ({names}); "
            "give more characters"
        )
    return found[0]


def explain(out: Path, wanted: str) -> Explained:
    """The error of ``out`` that ``wanted`` names (:func:`resolve_id`), its
    record and its Markdown (:func:`card_markdown`).

    Raises:
        RecordsError: no records, or the record cannot be read.
        ErrorIdError: see :func:`resolve_id`.
    """
    error_id = resolve_id(out, wanted)
    path = out / API_ERRORS / f"{error_id}.json"
    if not path.is_file() and (out / IDS).is_file():
        # a published site: the record is in its module's bundle
        record, stored = read_record(out, error_id, site_ids(out)[error_id])
        markdown, source = card_markdown(out, error_id, record)
        return Explained(error_id, record, stored, markdown, source)
    record = read_json(path)
    if not isinstance(record, dict):
        raise RecordsError(f"{path}: not an error record (a JSON object); mine again")
    stored = path.read_text(encoding="utf-8", errors="surrogateescape")
    markdown, source = card_markdown(out, error_id, record)
    return Explained(error_id, record, stored, markdown, source)


# ---- Which Markdown: the card, the module page's entry, or the record. ----


def card_markdown(out: Path, error_id: str, record: Mapping[str, Any]) -> tuple[str, Path | None]:
    """``(Markdown, file it was read from)`` of one error of ``out``: the card
    ``errors/<id>.md``; for a grouped error (internal, abstract, test, script)
    its entry on its module's page, from its anchor to the next entry; else
    ``(composed from the record, None)`` (:func:`record_markdown`)."""
    audience, module = record.get("audience"), record.get("module")
    candidates = [out / "errors" / f"{error_id}.md"]
    if isinstance(audience, str) and isinstance(module, str) and grouped(audience):
        page, _, _ = card_ref(error_id, module, audience).partition("#")
        candidates.insert(0, out / page)
    for path in candidates:
        try:
            text = path.read_text(encoding="utf-8", errors="surrogateescape")
        except OSError:
            continue
        if path.parent.name == "errors":
            return text, path
        entry = page_entry(text, error_id)
        if entry is not None:
            head = f"{record.get('repo', '')} · {audience} · {module}\n\n"
            tail = f"\nWhat {audience} errors mean and what to do: [README](README.md)\n"
            return head + entry + tail, path
    return record_markdown(record), None


def page_entry(page: str, error_id: str) -> str | None:
    """The entry of ``error_id`` on a grouped page (``<a id="<id>"></a>`` up
    to the next anchor), or None when the page has no such anchor."""
    anchor = f'<a id="{error_id}"></a>'
    start = page.find(anchor)
    if start < 0:
        return None
    end = page.find('<a id="', start + len(anchor))
    return page[start + len(anchor) : end if end >= 0 else len(page)].strip("\n") + "\n"


def record_markdown(record: Mapping[str, Any]) -> str:
    """An error's entry composed from its JSON record alone: the exception
    and title, the message, every site, the analysis' meaning, solutions and
    trigger, in the cards' order (the fields the record has)."""
    exception = record.get("exception") or "re-raise"
    lines = [f"### {code_span(exception)}: {code_span(record.get('title') or '')}", ""]
    if record.get("message") is not None:
        lines.append(f"- Message: {code_span(record['message'])}")
    for site in _sites(record):
        lines.append(f"- At {code_span(_where(site))} in {code_span(site.get('scope', ''))}")
    analysis = record.get("analysis")
    if isinstance(analysis, dict):
        # the cards' order: what it means, solutions, then when it happens
        if analysis.get("what_it_means"):
            lines += ["", "## What it means", "", str(analysis["what_it_means"])]
        solutions = [s for s in analysis.get("solutions") or () if isinstance(s, str)]
        if solutions:
            lines += ["", "## Solutions", ""]
            lines += [f"{n}. {s}" for n, s in enumerate(solutions, 1)]
        if analysis.get("trigger"):
            lines += ["", "## When it happens", "", str(analysis["trigger"])]
    return "\n".join(lines) + "\n"


def _sites(record: Mapping[str, Any]) -> list[dict[str, Any]]:
    sites = record.get("sites")
    return [s for s in sites if isinstance(s, dict)] if isinstance(sites, list) else []


def _where(site: Mapping[str, Any]) -> str:
    return f"{site.get('path', '?')}:{site.get('line', '?')}"


# ---- Text for a terminal: mined content shown, never obeyed. ----


def terminal_safe(text: str) -> str:
    """``text`` with every control character and every format character
    written as an escape (:func:`miner.lookup.visible`: C0 and C1 controls,
    tab and new line included, DEL, line and paragraph separators, lone
    surrogates, and Unicode category ``Cf``: bidirectional controls,
    zero-width space and joiners, soft hyphen, byte order mark, tag
    characters; ``\\x1b``, ``\\u202e``, ``\\u200b``, ``\\U000e0041``)."""
    return visible(text)


def json_safe(text: str) -> str:
    """JSON text made safe to print, the same JSON value
    (:func:`miner.lookup.visible_json`: controls, separators and every
    format character ``Cf`` as ``\\uXXXX``, a surrogate pair beyond U+FFFF).
    Such characters occur only inside JSON strings, where the escape means
    the character."""
    return visible_json(text)


_FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_ANCHOR = re.compile(r'^\s*<a id="[^"]*"></a>\s*$')
_RULE = re.compile(r"^\s*(?:-{3,}|\*{3,}|_{3,})\s*$")
#: A link: its text (code spans and backslash escapes allowed) and target.
_LINK = re.compile(r"(?<!\\)\[((?:[^\[\]\\`]|\\.|`[^`]*`)*)\]\(([^()\s]*)\)")
#: A backtick run, or a backslash escape of one (not a code span's delimiter).
_TICKS = re.compile(r"\\`|`+")
_BACKSLASH = re.compile(r"\\([!-/:-@\[-`{-~])")
_BOLD = re.compile(r"(?<!\\)\*\*")
_ENTITIES = {"&lt;": "<", "&gt;": ">", "&amp;": "&", "&quot;": '"', "&#39;": "'"}
_ENTITY = re.compile("|".join(_ENTITIES))
_ERROR_ID = re.compile(r"(?:^|/|#)([0-9a-f]{16})(?:\.md|\.html)?$")


def terminal_text(markdown: str, base: Path | None = None) -> str:
    """Markdown (a card, a page entry) as plain text for a terminal: headings
    underlined (``=`` for ``#``, ``-`` for ``##`` and ``###``), code fences dropped and
    their lines indented by four spaces (tabs expanded), anchors and blank
    runs dropped, links written ``text (target)`` (another error's card as
    ``miner explain <id>``, a relative target as a path from ``base``, the
    Markdown file's folder), ``**`` dropped, backslash escapes and HTML
    entities undone outside code spans. Every line is then made safe with
    :func:`terminal_safe`: the only raw control characters of the result are
    its new lines."""
    lines: list[str] = []
    fence: str | None = None
    for raw in markdown.split("\n"):
        if fence is not None:
            if raw.strip().startswith(fence) and raw.strip().strip(fence[0]) == "":
                fence = None
            else:
                lines.append("    " + terminal_safe(raw.expandtabs(4)))
            continue
        opening = _FENCE.match(raw)
        if opening is not None:
            fence = opening.group(2)
            continue
        if _ANCHOR.match(raw):
            continue
        lines.extend(_block_line(raw, base))
    return _squeeze(lines)


def _block_line(raw: str, base: Path | None) -> list[str]:
    """One Markdown line outside fences, as terminal lines."""
    heading = _HEADING.match(raw)
    if heading is not None:
        text = terminal_safe(inline_text(heading.group(2), base))
        level = len(heading.group(1))
        return ["", text, ("=" if level == 1 else "-") * len(text)] if level <= 3 else [text]
    if _RULE.match(raw):
        return ["-" * 40]
    return [terminal_safe(inline_text(raw, base))]


def _squeeze(lines: Sequence[str]) -> str:
    """The lines joined, runs of blank lines kept to one, none at either end."""
    out: list[str] = []
    for line in lines:
        if line.strip() or (out and out[-1].strip()):
            out.append(line.rstrip() if not line.strip() else line)
    while out and not out[-1].strip():
        out.pop()
    return "\n".join(out) + "\n"


def inline_text(line: str, base: Path | None = None) -> str:
    """One line of Markdown inline content as plain text: links as ``text
    (target)`` (:func:`link_target`), code spans kept with their backticks
    and their content as written, ``**`` dropped and backslash escapes and
    the HTML entities the cards write (``&lt;``, ``&gt;``, ``&amp;``)
    undone elsewhere. Not yet safe to print (:func:`terminal_safe`)."""
    line = _LINK.sub(lambda m: f"{m.group(1)} ({link_target(m.group(2), base)})", line)
    out: list[str] = []
    pos = plain = 0
    while (match := _TICKS.search(line, pos)) is not None:
        if match.group() == "\\`":
            pos = match.end()
            continue
        ticks = match.group()
        closing = re.compile(rf"(?<!`){ticks}(?!`)").search(line, match.end())
        if closing is None:
            pos = match.end()
            continue
        out.append(_plain(line[plain : match.start()]))
        out.append(line[match.start() : closing.end()])
        plain = pos = closing.end()
    out.append(_plain(line[plain:]))
    return "".join(out)


def _plain(text: str) -> str:
    text = _BOLD.sub("", text)
    text = _BACKSLASH.sub(r"\1", text)
    return _ENTITY.sub(lambda m: _ENTITIES[m.group()], text)


def link_target(target: str, base: Path | None) -> str:
    """Where a link of a card points, for a terminal: ``miner explain <id>``
    for another error's card or entry, a URL as it is, a relative path joined
    to ``base`` (the folder of the Markdown file) and normalised."""
    if re.match(r"^[a-z][a-z0-9+.-]*:", target):
        return target
    error = _ERROR_ID.search(target)
    if error is not None:
        return f"miner explain {error.group(1)}"
    if base is None or not target or target.startswith("#"):
        return target
    path, _, anchor = target.partition("#")
    joined = os.path.normpath(base / path)
    return f"{joined}#{anchor}" if anchor else joined


# ---- How the guards were linked to settings: ``--origins``. ----


def origins_view(record: Mapping[str, Any]) -> dict[str, Any]:
    """What ``miner explain --origins`` shows of a record, as JSON data::

        {"error_id": str, "condition": str, "links": [str, ...],
         "origins": [origin, ...] or None, "logged": caught or None,
         "unreachable": unreachable or None,
         "sites": [{"path": str, "line": int, "scope": str,
                    "guards": [guard, ...], "exits": [guard, ...]}, ...]}

    ``condition`` is the analysis' reach condition as text, ``links`` its
    evidence (Markdown, one line per guard linked to a flag, setting or
    variable), ``origins``, ``logged`` and ``unreachable`` the analysis'
    origins and facts as stored (``Origin.to_json``, ``Caught.to_json``,
    ``Unreachable.to_json``; ``origins`` is
    None when the records were mined without ``--origins``), ``guards`` and
    ``exits`` each site's records as stored."""
    analysis = record.get("analysis")
    analysis = analysis if isinstance(analysis, dict) else {}
    links = analysis.get("evidence")
    found = _list(analysis.get("origins"))
    return {
        "error_id": record.get("error_id", ""),
        "condition": analysis.get("condition_text") or "",
        "links": [str(link) for link in links] if isinstance(links, list) else [],
        "origins": found or None,
        "logged": analysis.get("logged"),
        "unreachable": analysis.get("unreachable"),
        "sites": [
            {
                "path": site.get("path", ""),
                "line": site.get("line"),
                "scope": site.get("scope", ""),
                "guards": _list(site.get("guards")),
                "exits": _list(site.get("exits")),
            }
            for site in _sites(record)
        ],
    }


def _list(value: object) -> list[Any]:
    if value is None:
        return []
    return list(value) if isinstance(value, list) else [value]


def origins_text(view: Mapping[str, Any]) -> str:
    """:func:`origins_view` as lines for a terminal, every mined text made
    safe (:func:`terminal_safe`)::

        Error 0123456789abcdef: reached when args.x == "a"
        Guards linked to settings:
          - `args.x` reads the setting `main.x` (exact; guard at line 6)
        Origins:
          flag --x (main) == a  [condition; default 'b'; defined pkg/cfg.py:3]
            pkg/cfg.py:6  args.x == "a"
        pkg/cfg.py:7 in main
          guard line 6 (if): args.x == "a"
    """
    condition = view["condition"] or "no condition recorded"
    lines = [f"Error {view['error_id']}: reached when {condition}", "Guards linked to settings:"]
    lines += [f"  - {inline_text(link)}" for link in view["links"]] or ["  none found"]
    if view["origins"] is None:
        lines.append("Origins: not traced (mine with --origins)")
    else:
        lines.append("Origins:")
        for origin in view["origins"]:
            lines += _origin_lines(origin)
    logged = view["logged"]
    if isinstance(logged, dict):
        lines.append(
            f"Logged: caught by the handler at {logged.get('path')}:{logged.get('line')} "
            f"(except {logged.get('types')}; {logged.get('frame')} frame), not re-raised"
        )
    lines += _unreachable_lines(view.get("unreachable"))
    for site in view["sites"]:
        lines.append(f"{_where(site)} in {site['scope']}")
        for key, label in (("guards", "guard"), ("exits", "exit")):
            lines += [f"  {label} {_guard_text(g, key == 'exits')}" for g in site[key]]
    return "\n".join(terminal_safe(line) for line in lines) + "\n"


def _unreachable_lines(fact: object) -> list[str]:
    """``Unreachable: <atom> (line N) is never true: <value> at <path:line>, ...``."""
    if not isinstance(fact, dict):
        return []
    given = []
    for value in _list(fact.get("values")):
        if not isinstance(value, dict):
            continue
        chain = _list(value.get("chain"))
        last = chain[-1] if chain and isinstance(chain[-1], dict) else {}
        given.append(
            f"{last.get('text', value.get('name'))} at {last.get('path')}:{last.get('line')}"
        )
    if fact.get("guard"):
        return [
            f"Unreachable: every call is made only when {fact.get('condition')} "
            f"({fact.get('path')}:{fact.get('line')}), which rules out {fact.get('guard')}"
        ]
    if fact.get("uncalled"):
        return [
            f"Unreachable: no file calls or names {fact.get('condition')} "
            f"(def at {fact.get('path')}:{fact.get('line')})"
        ]
    if fact.get("subject"):
        return [
            f"Unreachable: every value of {fact.get('subject')} "
            f"({', '.join(str(c) for c in _list(fact.get('choices')))}) is handled "
            f"before the else at {fact.get('path')}:{fact.get('line')}"
        ]
    return [
        f"Unreachable: {fact.get('condition')} (line {fact.get('line')}) is never true: "
        + "; ".join(given)
    ]


def _origin_lines(origin: object) -> list[str]:
    """One origin: ``kind name (owner) op values  [role; default; defined]``,
    then a line per hop of its chain (``path:line  code``); anything that is
    not an origin object as compact JSON."""
    if not isinstance(origin, dict):
        return [f"  {_compact(origin)}"]
    head = " ".join(str(origin[k]) for k in ("kind", "name") if origin.get(k) not in (None, ""))
    if origin.get("owner"):
        head += f" ({origin['owner']})"
    constraint = origin.get("constraint")
    if isinstance(constraint, dict) and constraint.get("op"):
        values = ", ".join(str(v) for v in _list(constraint.get("values")))
        head += f" {constraint['op']} {values}".rstrip()
    notes = [str(origin[k]) for k in ("role", "reason") if origin.get(k)]
    notes += [f"{k} {origin[k]}" for k in ("default", "defined") if origin.get(k)]
    lines = [f"  {head or '?'}" + (f"  [{'; '.join(notes)}]" if notes else "")]
    for hop in _list(origin.get("chain")):
        if isinstance(hop, dict):
            lines.append(f"    {hop.get('path')}:{hop.get('line')}  {hop.get('text', '')}".rstrip())
        else:
            lines.append(f"    {_compact(hop)}")
    return lines


def _guard_text(guard: object, exit: bool = False) -> str:
    """``line N (kind): what must hold`` of one guard (``not (test)`` when
    the path runs where its test is false); of an exit taken where its test
    holds, ``line N (kind): leaves before the site when test``."""
    if not isinstance(guard, dict):
        return _compact(guard)
    test = str(guard.get("test") or "")
    if exit and guard.get("negated") and test:
        test = f"leaves before the site when {test}"
    elif guard.get("negated") and test:
        test = f"not ({test})" if " " in test.strip() else f"not {test}"
    return f"line {guard.get('line', '?')} ({guard.get('kind', '?')}): {test}".rstrip(": ")


def _compact(value: object) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def explain_json(explained: Explained, *, origins: bool = False) -> str:
    """``miner explain --format json``: the record as stored (the same JSON
    text and a new line, made safe to print: :func:`json_safe`), or with ``origins`` the
    :func:`origins_view` of it."""
    if origins:
        text = json.dumps(origins_view(explained.record), indent=2, ensure_ascii=False)
    else:
        text = explained.stored.rstrip("\n")
    return json_safe(text) + "\n"


def explain_text(explained: Explained, *, origins: bool = False) -> str:
    """``miner explain``: the Markdown rendered for a terminal
    (:func:`terminal_text`), or with ``origins`` :func:`origins_text`."""
    if origins:
        return origins_text(origins_view(explained.record))
    base = None if explained.source is None else explained.source.parent
    return terminal_text(explained.markdown, base)
