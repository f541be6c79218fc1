"""Identity of errors and sites: fingerprints that leave out lines and commits.

``error_id`` names an error as users see it: the exception as written and the
message template. It does not depend on how the repository is named (``--slug``,
a URL or a local path): the same commit mined under two names gives the same
ids. The same error raised from several places is one error; code that moves
keeps its id. Errors without a renderable message
(no message, or one computed at run time) cannot be told apart by what users
see, so each such site is its own error, named by its file, scope and
expression (and an ordinal among identical ones), still without line numbers.

``site_id`` names one site: its error, its scope and its ordinal among the
sites of that error in that scope (in file and line order).
"""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import replace

from miner.model import Site


def _digest(*fields: str | None) -> str:
    text = "\x1f".join("" if f is None else f for f in fields)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def is_shared_message(site: Site) -> bool:
    """True when the site's message is a literal or template users can read,
    so that every site raising it is one error."""
    return site.message_kind in ("literal", "template")


def error_key(site: Site) -> tuple[str, ...]:
    """The fields an error id hashes (before the ordinal for per-site errors)."""
    if is_shared_message(site):
        return ("message", site.exception or "", site.message or "")
    guard_tail = site.guards[-1].test if site.kind == "assert" and site.guards else ""
    return (
        "site",
        site.exception or "",
        site.message_kind,
        site.message_source or guard_tail,
        site.path,
        site.scope,
    )


def assign_ids(sites: list[Site]) -> list[Site]:
    """Sites with ``error_id`` and ``site_id`` set (same order as given).

    ``sites`` must be in (path, line) order so that ordinals are stable.
    """
    error_ordinals: Counter[tuple[str, ...]] = Counter()
    site_ordinals: Counter[tuple[str, str]] = Counter()
    out = []
    for site in sites:
        key = error_key(site)
        if is_shared_message(site):
            error_id = _digest(*key)
        else:
            ordinal = error_ordinals[key]
            error_ordinals[key] += 1
            error_id = _digest(*key, str(ordinal))
        site_ordinal = site_ordinals[(error_id, site.scope)]
        site_ordinals[(error_id, site.scope)] += 1
        site_id = _digest(error_id, site.scope, str(site_ordinal))
        out.append(replace(site, error_id=error_id, site_id=site_id))
    return out
