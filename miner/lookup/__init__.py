"""Find the card for a pasted error: a runtime message, a log line, a JSON
error body or a traceback.

The stage reads mined records (``sites.jsonl``, or the site's index) and
answers "which card is this?". A pipeline, each step a module of data in,
data out:

1. **paste scanning** (:mod:`~miner.lookup.scan`): log prefixes of any shape
   stripped (:mod:`~miner.lookup.prefixes`), traceback blocks and their
   frames read, complete or cut at either end
   (:mod:`~miner.lookup.traceback`), wrapped lines joined, every string
   value of any JSON object read as a paste of its own
   (:mod:`~miner.lookup.jsonvalues`): :class:`Raised` records;
2. **candidates** (:mod:`~miner.lookup.candidates`): the templates whose
   anchor a line of a reading holds, found through an index of anchor
   pieces, matched by the linear template matcher
   (:mod:`~miner.lookup.template`);
3. **scoring** (:mod:`~miner.lookup.index`, :mod:`~miner.lookup.frames`):
   message coverage, frames pinning sites (by line, by source line, in a
   file that moved), fragments, words: :class:`Match` records, best first;
4. **answer** (:mod:`~miner.lookup.report`, and across releases
   :mod:`~miner.lookup.releases`): text for a terminal, JSON for tools.

The prefix patterns, line patterns and numbers are defined once in
:mod:`miner.publish.patterns`, in regular expressions that mean the same in
Python and JavaScript; the HTML site ships them to its search
(:mod:`miner.publish.html`), a port of this package's matcher.
"""

from __future__ import annotations

from miner.lookup.cards import SHOWN, Card, Entry, SiteRef, SiteTable, site_code, site_ref
from miner.lookup.frames import Evidence, code_similarity
from miner.lookup.index import LookupIndex, Match
from miner.lookup.jsonvalues import json_strings
from miner.lookup.prefixes import strip_common_prefix, strip_prefixes
from miner.lookup.releases import (
    ReleaseBook,
    ReleaseMatch,
    life_sentences,
    release_match_json,
    report_releases_json,
    report_releases_text,
    search_releases,
)
from miner.lookup.report import (
    UNSAFE,
    card_location,
    match_json,
    raised_json,
    report_json,
    report_text,
    visible,
    visible_json,
)
from miner.lookup.rules import (
    GOOD,
    MAX_MESSAGE,
    MAX_PREFIX,
    MIN_COVERAGE,
    MIN_FRAGMENT,
    MIN_LITERAL,
    MIN_SPECIFIC,
    TRACEBACK_HEAD,
    normalize,
)
from miner.lookup.scan import Raised, parse_paste
from miner.lookup.template import Solid, Template, compile_template
from miner.lookup.traceback import Frame

__all__ = [
    "GOOD",
    "MAX_MESSAGE",
    "MAX_PREFIX",
    "MIN_COVERAGE",
    "MIN_FRAGMENT",
    "MIN_LITERAL",
    "MIN_SPECIFIC",
    "SHOWN",
    "TRACEBACK_HEAD",
    "UNSAFE",
    "Card",
    "Entry",
    "Evidence",
    "Frame",
    "LookupIndex",
    "Match",
    "Raised",
    "ReleaseBook",
    "ReleaseMatch",
    "SiteRef",
    "SiteTable",
    "Solid",
    "Template",
    "card_location",
    "code_similarity",
    "compile_template",
    "json_strings",
    "life_sentences",
    "match_json",
    "normalize",
    "parse_paste",
    "raised_json",
    "release_match_json",
    "report_json",
    "report_releases_json",
    "report_releases_text",
    "report_text",
    "search_releases",
    "site_code",
    "site_ref",
    "strip_common_prefix",
    "strip_prefixes",
    "visible",
    "visible_json",
]
