"""Reason rules: why SGLang refuses what the cause describes. Each returns
one finding or None; the driver keeps the first reason of :data:`RULES`
order, so the nearest, most specific sentence wins. No reason is made when
nothing specific exists.
"""

from __future__ import annotations

import re

from miner.analysis.audience import path_kind
from miner.analysis.evidence import first_sentence, help_requirement, quotes
from miner.analysis.findings.reading import Reading
from miner.model import Finding, Origin, OriginKind

#: Fewest words a quoted sentence needs to be a reason.
MIN_WORDS = 5

_NOT_IMPLEMENTED = re.compile(r"\bnot (?:yet )?(?:supported|implemented)\b|\bunsupported\b", re.I)


def _quoted(rule: str, text: str, at: str, source: str, origin: Origin | None = None) -> Finding:
    """A reason finding that quotes ``text`` written at ``at`` (``path:line``,
    also its evidence), about ``origin`` when the quote is about a setting."""
    return Finding(
        kind="reason",
        rule=rule,
        origin=origin.kind.value if origin is not None else "",
        name=origin.name if origin is not None else "",
        quote=text,
        quote_at=at,
        source=source,
        evidence=(at,),
    )


def reason_comment(reading: Reading) -> Finding | None:
    """**reason-comment**: the comment on the raise line or just above it, or
    above one of its guards, when it is a sentence of at least
    :data:`MIN_WORDS` words (not code, not a pragma). Quoted as written, with
    its ``path:line``."""
    site = reading.error.primary
    for quote in quotes(site, site.guards):
        if quote.kind == "comment" and len(quote.text.split()) >= MIN_WORDS:
            return _quoted("reason-comment", quote.text, f"{quote.path}:{quote.line}", "comment")
    return None


def reason_setting_comment(reading: Reading) -> Finding | None:
    """**reason-setting-comment**: a comment in a function that resolves a
    cause flag (it stores into the setting), above a statement that uses a
    name the raise condition also tests, or naming one: the code's own
    account of why the combination is refused (host-pool retraction: "a
    model with recurrent state stays on cpu_tensor",
    ``mem_cache/kv_cache_builder.py:153``). Tests and scripts are not read."""
    keys = set(reading.tested())
    if not keys:
        return None
    for origin in reading.narrowed(OriginKind.FLAG):
        opt = reading.option(origin)
        if opt is None:
            continue
        for note in reading.facts.notes.get(opt.name, ()):
            if not note.writes or path_kind(note.path) is not None:
                continue
            text = first_sentence(note.text)
            named = any(re.search(rf"\b{re.escape(k)}\b", note.text) for k in keys)
            if len(text.split()) >= MIN_WORDS and (note.uses & keys or named):
                at = f"{note.path}:{note.line}"
                return _quoted("reason-setting-comment", text, at, "setting-comment", origin)
    return None


def reason_help_requirement(reading: Reading) -> Finding | None:
    """**reason-help-requirement**: a sentence of a cause flag's help text
    that states what the option needs ("Requires --grpc-port.", "Only
    supported with ..."), with the option's ``path:line``."""
    for origin in reading.narrowed(OriginKind.FLAG):
        opt = reading.option(origin)
        said = help_requirement(opt) if opt is not None else None
        if opt is not None and said:
            at = f"{opt.path}:{opt.line}"
            return _quoted("reason-help-requirement", said, at, "help", origin)
    return None


def reason_not_implemented(reading: Reading) -> Finding | None:
    """**reason-not-implemented**: the error is a ``NotImplementedError`` (or
    its message says "not supported" / "not implemented") and the condition
    reads user-controlled origins: this release has no implementation of
    that combination. ``values`` names the origins (flags, variables,
    fields) the combination is made of."""
    error = reading.error
    site = error.primary
    unsupported = error.exception == "NotImplementedError" or bool(
        _NOT_IMPLEMENTED.search(error.message or "")
    )
    names = tuple(
        dict.fromkeys(o.name for o in reading.origins if o.role == "condition" and o.user)
    )
    if not unsupported or not names:
        return None
    return Finding(
        kind="reason",
        rule="reason-not-implemented",
        values=names,
        source="not-implemented",
        evidence=(f"{site.path}:{site.line}",),
    )
