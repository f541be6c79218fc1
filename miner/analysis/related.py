"""Related errors: up to five per error, ranked deterministically.

Score of a candidate (higher first, then error id):

* same scope (same file and ``__qualname__``): 8
* each shared setting read by the guards (flag, derived setting, variable): 4
* same module: 3, plus up to :data:`PROXIMITY` the closer the lines; same folder: 1
* shared identifiers in messages and guard tests, weighted by rarity
  (``1 / log2(1 + files using it)``, words used by more than
  :data:`MAX_DF` errors are ignored)
* a tie-break when equal scores straddle the cut: title similarity from the
  stdlib :class:`difflib.SequenceMatcher` (``quick_ratio``: the characters two
  titles share). It is deterministic and needs no dependency; it runs only on
  those ties (at most :data:`SHORTLIST` per error). The full ``ratio`` cost ten
  seconds on a release, and a C library such as rapidfuzz would add a compiled
  dependency for a tie-break; the rarity-weighted identifiers above already carry
  the text similarity that matters.

Candidates come from inverted indexes (same file, shared setting, shared
rare identifier), never from all pairs.
"""

from __future__ import annotations

import heapq
import math
import posixpath
import re
from collections import defaultdict
from collections.abc import Mapping
from difflib import SequenceMatcher

from miner.model import Error

MAX_RELATED = 5
MAX_DF = 40
SHORTLIST = 15
#: Bonus (below 1) for a raise near this one in the same file: 1 / (1 + line distance).
PROXIMITY = 0.5
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]{3,}")
_STOP = frozenset(
    [
        "self",
        "none",
        "true",
        "false",
        "with",
        "when",
        "that",
        "this",
        "from",
        "have",
        "must",
        "does",
        "only",
        "should",
        "support",
        "supported",
        "found",
        "expected",
        "value",
        "values",
        "type",
        "given",
        "got",
        "required",
        "invalid",
        "cannot",
        "unknown",
        "error",
        "raise",
        "return",
        "none",
    ]
)


def identifiers(error: Error) -> frozenset[str]:
    """Lower-cased words of the message and the primary site's guard tests."""
    text = " ".join(
        [error.message or error.primary.message_source or ""]
        + [g.test for g in error.primary.guards]
    )
    return frozenset(w for w in (m.lower() for m in _WORD.findall(text)) if w not in _STOP)


class RelatedIndex:
    """The inverted indexes of a commit's errors (by file, setting, rare
    identifier and folder), built once; :meth:`of` ranks one error's related
    errors from them, so that the analysis workers rank theirs each
    (:func:`miner.analysis.analyze`).

    ``settings`` maps error id -> the settings its guards read.
    """

    def __init__(
        self, errors: tuple[Error, ...] | list[Error], settings: Mapping[str, tuple[str, ...]]
    ) -> None:
        self.settings = settings
        self.by_path: dict[str, list[str]] = defaultdict(list)
        self.by_setting: dict[str, list[str]] = defaultdict(list)
        self.by_word: dict[str, list[str]] = defaultdict(list)
        self.words: dict[str, frozenset[str]] = {}
        self.info: dict[str, Error] = {}
        for error in errors:
            eid = error.error_id
            self.info[eid] = error
            self.by_path[error.primary.path].append(eid)
            for s in settings.get(eid, ()):
                self.by_setting[s].append(eid)
            self.words[eid] = identifiers(error)
            for w in self.words[eid]:
                self.by_word[w].append(eid)
        self.weight = {
            w: 1.0 / math.log2(1 + len(ids))
            for w, ids in self.by_word.items()
            if 1 < len(ids) <= MAX_DF
        }
        self.paths = {e.error_id: e.primary.path for e in errors}
        self.folders = {eid: posixpath.dirname(p) for eid, p in self.paths.items()}
        self.by_folder: dict[str, list[Error]] = defaultdict(list)
        for error in sorted(errors, key=lambda e: (e.primary.path, e.primary.line, e.error_id)):
            folder = self.folders[error.error_id]
            while True:
                self.by_folder[folder].append(error)
                if not folder:
                    break
                folder = posixpath.dirname(folder)

    def of(self, error: Error) -> tuple[str, ...]:
        """The related error ids of ``error`` (one of the indexed errors), best
        first, never itself."""
        eid = error.error_id
        site = error.primary
        acc: dict[str, float] = defaultdict(float)
        for cid in self.by_path.get(site.path, ()):
            osite = self.info[cid].primary
            acc[cid] += 3 + PROXIMITY / (1 + abs(osite.line - site.line))
            if osite.scope == site.scope:
                acc[cid] += 8
        for s in self.settings.get(eid, ()):
            if len(self.by_setting[s]) <= 200:
                for cid in self.by_setting[s]:
                    acc[cid] += 4
        for w in self.words[eid]:
            if w in self.weight:
                for cid in self.by_word[w]:
                    acc[cid] += self.weight[w]
        acc.pop(eid, None)
        paths, folders = self.paths, self.folders
        folder, path = folders[eid], site.path
        scored = heapq.nsmallest(
            MAX_RELATED + SHORTLIST,
            (
                (-round(score + (paths[c] != path and folders[c] == folder), 6), c)
                for c, score in acc.items()
            ),
        )
        ranked = [(-negative, cid) for negative, cid in scored]
        chosen = [cid for score, cid in _break_ties(ranked, error.title, self.info) if score > 0]
        if not chosen:
            chosen = _nearby(error, self.by_folder)
        return tuple(chosen)


def _break_ties(
    scored: list[tuple[float, str]], title: str, info: Mapping[str, Error]
) -> list[tuple[float, str]]:
    """The best :data:`MAX_RELATED` of ``scored`` (sorted by score, then id).

    When candidates with the same score straddle the cut, that group (at most
    :data:`SHORTLIST` of them) is ordered by title similarity first.
    """
    if len(scored) <= MAX_RELATED or scored[MAX_RELATED - 1][0] != scored[MAX_RELATED][0]:
        return scored[:MAX_RELATED]
    cut = scored[MAX_RELATED - 1][0]
    head = [t for t in scored if t[0] > cut]
    tied = [t for t in scored if t[0] == cut][:SHORTLIST]
    tied.sort(
        key=lambda t: (
            -round(SequenceMatcher(None, title, info[t[1]].title).quick_ratio(), 6),
            t[1],
        )
    )
    return (head + tied)[:MAX_RELATED]


def _nearby(error: Error, by_folder: Mapping[str, list[Error]]) -> list[str]:
    """Fallback for an error that shares nothing: the nearest errors by folder
    (its own, then each parent), in path and line order."""
    folder = posixpath.dirname(error.primary.path)
    while True:
        near = [e.error_id for e in by_folder.get(folder, []) if e.error_id != error.error_id]
        if near or not folder:
            return near[:MAX_RELATED]
        folder = posixpath.dirname(folder)
