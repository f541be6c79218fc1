"""The diff of two mined versions: typed change objects, one per error.

Every error of the old version is paired with at most one error of the new
version, and the reverse (a match is one-to-one). The matching rule, applied in
three passes over the errors still unpaired:

1. **Same error id** (:data:`MatchRule.SAME_ID`): the id hashes the exception
   and message template (or, for an error without a readable message, its
   file, scope and message expression), never a line number, so code that only
   shifted keeps its id.
2. **Same scope and exception type, similar message**
   (:data:`MatchRule.SAME_SCOPE`): the two errors are raised from a common
   scope (file and ``__qualname__``), with the same exception as written, and
   their messages are similar.
3. **Similar message and guards, anywhere** (:data:`MatchRule.SIMILAR`): the
   messages are similar and the guards of the primary sites are similar. A
   readable message (literal or template) needs at least :data:`MIN_TEXT`
   characters of literal text; an error without one (a computed message, a
   bare ``assert``) must have the very same message expression or assert test
   and the same exception, since ``assert x.a is not None`` and ``assert x.b is
   not None`` look alike but are different checks. A bare ``raise
   NotImplementedError`` (no text at all) is never paired across scopes.

*Similar* means :func:`similarity` >= :data:`THRESHOLD` (0.8): the
normalised Indel similarity ``2 * LCS(a, b) / (len(a) + len(b))`` of the
normalised texts (LCS: longest common subsequence of characters), computed by
``rapidfuzz.fuzz.ratio`` (C++; pure ``difflib`` took most of a release diff's
time in pass 3). A message is normalised to its literal
text with every placeholder written ``{}`` and runs of white space folded, so
``f"bad {x}"`` and ``"bad %s" % y`` compare equal; an error without a readable
message compares by its message expression (``= msg``), or for a bare
``assert`` by its test. Guards compare as their one-line descriptions
(``not (x is None)``), outermost first, joined with `` / ``.

Within a pass, candidate pairs are taken best first (highest message
similarity, then guard similarity, then same exception, same ``__qualname__``,
same file), ties broken by the old then the new primary site's (path, line)
and error id, so the result does not depend on input order. When one old error
has several new look-alikes, the best is paired and the others are reported as
:data:`ChangeKind.ADDED`.

A pair is then classified from its differences (:class:`Aspect`):
:data:`ChangeKind.CHANGED` when the message template, exception type, guards
or number of sites differ (a move of file or scope is listed as an aspect as
well); :data:`ChangeKind.MOVED` when only the file or scope differ;
:data:`ChangeKind.UNCHANGED` otherwise (line numbers are not compared).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

from rapidfuzz import fuzz, process

from miner.model import SCHEMA_VERSION, CommitInfo, Error, Site

#: Two texts are similar when their :func:`similarity` is at least this.
THRESHOLD = 0.8
#: Literal characters a message needs before pass 3 pairs it across scopes.
MIN_TEXT = 10


class ChangeKind(str, Enum):
    """What happened to an error between two versions (values are report sentences)."""

    ADDED = "Error was added"
    REMOVED = "Error was removed"
    CHANGED = "Error was changed"
    MOVED = "Error moved to another file or scope"
    UNCHANGED = "Error is unchanged"

    @property
    def key(self) -> str:
        """Stable lower-case name used in JSON and on the command line (``added``)."""
        return self.name.lower()


class Aspect(str, Enum):
    """One difference between the two errors of a pair."""

    MESSAGE = "Message template was reworded"
    EXCEPTION = "Exception type changed"
    GUARDS = "Guarding conditions changed"
    SITES = "Raised at more or fewer places"
    FILE = "Raised from another file"
    SCOPE = "Raised from another scope"

    @property
    def key(self) -> str:
        return self.name.lower()


class MatchRule(str, Enum):
    """Which pass of the matching rule paired two errors."""

    SAME_ID = "Same error id"
    SAME_SCOPE = "Same scope and exception type, similar message"
    SIMILAR = "Similar message and guards"

    @property
    def key(self) -> str:
        return self.name.lower()


#: Aspects that make a pair ``changed`` rather than ``moved``.
_CHANGING = (Aspect.MESSAGE, Aspect.EXCEPTION, Aspect.GUARDS, Aspect.SITES)
#: Report order of the kinds.
KIND_ORDER = (
    ChangeKind.REMOVED,
    ChangeKind.ADDED,
    ChangeKind.CHANGED,
    ChangeKind.MOVED,
    ChangeKind.UNCHANGED,
)


@dataclass(frozen=True, slots=True)
class SitePair:
    """A site of the old error and the site of the new error it became; one
    side is None when the error gained or lost a site."""

    old: Site | None
    new: Site | None


@dataclass(frozen=True, slots=True)
class Change:
    """One error's fate between two versions.

    ``old`` is None for ``added``, ``new`` is None for ``removed``; ``rule``,
    ``similarity`` and ``sites`` describe a pair and are empty otherwise.
    """

    kind: ChangeKind
    old: Error | None
    new: Error | None
    rule: MatchRule | None = None
    aspects: tuple[Aspect, ...] = ()
    similarity: float | None = None
    """Message similarity of the pair, 0..1 (1.0 for a same-id pair)."""
    sites: tuple[SitePair, ...] = ()

    @property
    def error(self) -> Error:
        """The newest side: ``new`` when present, else ``old``."""
        error = self.new or self.old
        assert error is not None
        return error

    @property
    def module(self) -> str:
        return self.error.module

    def to_json(self, old_commit: CommitInfo, new_commit: CommitInfo) -> dict[str, Any]:
        """The JSON record of the change (sites carry source URLs of their commit)."""
        return {
            "kind": self.kind.key,
            "description": self.kind.value,
            "rule": None if self.rule is None else self.rule.key,
            "similarity": None if self.similarity is None else round(self.similarity, 4),
            "aspects": [{"kind": a.key, "description": a.value} for a in self.aspects],
            "old": None if self.old is None else _error_json(self.old, old_commit),
            "new": None if self.new is None else _error_json(self.new, new_commit),
            "sites": [
                {
                    "old": None if p.old is None else _site_json(p.old, old_commit),
                    "new": None if p.new is None else _site_json(p.new, new_commit),
                }
                for p in self.sites
            ],
        }


@dataclass(frozen=True, slots=True)
class Diff:
    """Every change between two versions, in report order (kind, module, location)."""

    old: CommitInfo
    new: CommitInfo
    changes: tuple[Change, ...]

    def counts(self) -> dict[str, int]:
        """Number of changes of each kind, keyed by :attr:`ChangeKind.key` (all kinds)."""
        found = Counter(c.kind for c in self.changes)
        return {kind.key: found[kind] for kind in KIND_ORDER}

    def of_kind(self, kind: ChangeKind) -> list[Change]:
        return [c for c in self.changes if c.kind == kind]

    def find(self, error_id: str) -> Change | None:
        """The change whose old or new error has ``error_id``."""
        for change in self.changes:
            for error in (change.old, change.new):
                if error is not None and error.error_id == error_id:
                    return change
        return None

    def to_json(self, *, unchanged: bool = False) -> dict[str, Any]:
        """The diff as JSON; unchanged pairs are counted, and listed only when asked."""
        return {
            "schema_version": SCHEMA_VERSION,
            "old": self.old.to_json(),
            "new": self.new.to_json(),
            "matching": {
                "similarity": "2*LCS/(len(a)+len(b)) (rapidfuzz.fuzz.ratio/100)",
                "threshold": THRESHOLD,
                "min_text": MIN_TEXT,
                "rules": [rule.key for rule in MatchRule],
            },
            "counts": self.counts(),
            "changes": [
                c.to_json(self.old, self.new)
                for c in self.changes
                if unchanged or c.kind != ChangeKind.UNCHANGED
            ],
        }


def _site_json(site: Site, commit: CommitInfo) -> dict[str, Any]:
    return {
        "error_id": site.error_id,
        "site_id": site.site_id,
        "path": site.path,
        "line": site.line,
        "scope": site.scope,
        "guards": [g.describe() for g in site.guards],
        "url": commit.source_url(site.path, site.line),
    }


def _error_json(error: Error, commit: CommitInfo) -> dict[str, Any]:
    return {
        "error_id": error.error_id,
        "exception": error.exception,
        "message": error.message,
        "message_kind": error.message_kind,
        "message_source": error.primary.message_source,
        "title": error.title,
        "module": error.module,
        "path": error.primary.path,
        "line": error.primary.line,
        "scope": error.primary.scope,
        "guards": [g.describe() for g in error.primary.guards],
        "sites": len(error.sites),
    }


# -- normalisation and similarity ---------------------------------------------------------


def message_text(error: Error) -> str:
    """The text an error's message is compared by (see the module doc)."""
    site = error.primary
    if error.message_kind in ("literal", "template"):
        text = "".join((p.text or "") if p.expr is None else "{}" for p in error.message_parts)
    elif site.message_source:
        text = f"= {site.message_source}"
    elif site.kind == "assert" and site.guards:
        text = f"assert {site.guards[-1].test}"
    else:
        text = ""
    return " ".join(text.split())


def literal_length(error: Error) -> int:
    """Characters of literal text in the message (placeholders excluded)."""
    return len(message_text(error).replace("{}", "").replace("= ", "", 1).strip())


def is_readable(error: Error) -> bool:
    """True when the message is a literal or template users can read."""
    return error.message_kind in ("literal", "template")


def _pass3_eligible(error: Error) -> bool:
    if is_readable(error):
        return literal_length(error) >= MIN_TEXT
    return bool(message_text(error))


def guard_text(site: Site) -> str:
    """A site's guards as one comparable line, outermost first."""
    return " / ".join(g.describe() for g in site.guards)


def similarity(a: str, b: str) -> float:
    """``2 * LCS(a, b) / (len(a) + len(b))`` (``rapidfuzz.fuzz.ratio / 100``):
    1.0 for equal texts (two empty texts too), 0.0 for nothing in common."""
    return float(fuzz.ratio(a, b)) / 100


# -- matching -----------------------------------------------------------------------------


def _locations(error: Error) -> set[tuple[str, str]]:
    return {(s.path, s.scope) for s in error.sites}


def _order(error: Error) -> tuple[str, int, str]:
    return (error.primary.path, error.primary.line, error.error_id)


@dataclass(frozen=True, slots=True)
class _Candidate:
    old: Error
    new: Error
    message: float
    guards: float

    def sort_key(self) -> tuple[Any, ...]:
        o, n = self.old.primary, self.new.primary
        return (
            -self.message,
            -self.guards,
            self.old.exception != self.new.exception,
            o.scope != n.scope,
            o.path != n.path,
            _order(self.old),
            _order(self.new),
        )


def _scope_candidates(old: Sequence[Error], new: Sequence[Error]) -> Iterator[_Candidate]:
    by_location: dict[tuple[str, str], list[Error]] = defaultdict(list)
    for error in new:
        for location in _locations(error):
            by_location[location].append(error)
    for o in old:
        seen: set[str] = set()
        text = message_text(o)
        for location in sorted(_locations(o)):
            for n in by_location.get(location, ()):
                if n.error_id in seen or n.exception != o.exception:
                    continue
                seen.add(n.error_id)
                ratio = similarity(text, message_text(n))
                if ratio >= THRESHOLD:
                    guards = similarity(guard_text(o.primary), guard_text(n.primary))
                    yield _Candidate(o, n, ratio, guards)


def _similar_candidates(old: Sequence[Error], new: Sequence[Error]) -> Iterator[_Candidate]:
    olds = [o for o in old if _pass3_eligible(o) and is_readable(o)]
    old_texts = [message_text(o) for o in olds]
    # errors without a readable message pair only on the very same text
    exact: dict[tuple[str | None, str], list[Error]] = defaultdict(list)
    for o in old:
        if _pass3_eligible(o) and not is_readable(o):
            exact[(o.exception, message_text(o))].append(o)
    # rapidfuzz screens every old text in C++; the cut-off is a hair low so that
    # the exact test below (the same as in the other passes) decides the border
    cutoff = THRESHOLD * 100 - 1e-6
    for n in new:
        if not _pass3_eligible(n):
            continue
        text = message_text(n)
        if is_readable(n):
            found = process.extract(
                text, old_texts, scorer=fuzz.ratio, score_cutoff=cutoff, limit=None
            )
            matches = [(olds[index], similarity(old_texts[index], text)) for _, _, index in found]
        else:
            matches = [(o, 1.0) for o in exact.get((n.exception, text), ())]
        for o, ratio in matches:
            if ratio < THRESHOLD:
                continue
            guards = similarity(guard_text(o.primary), guard_text(n.primary))
            if guards >= THRESHOLD:
                yield _Candidate(o, n, ratio, guards)


def _take_best(
    candidates: Iterable[_Candidate], paired_old: set[str], paired_new: set[str]
) -> list[_Candidate]:
    taken = []
    for cand in sorted(candidates, key=_Candidate.sort_key):
        if cand.old.error_id in paired_old or cand.new.error_id in paired_new:
            continue
        paired_old.add(cand.old.error_id)
        paired_new.add(cand.new.error_id)
        taken.append(cand)
    return taken


def match_errors(
    old: Sequence[Error], new: Sequence[Error]
) -> list[tuple[Error, Error, MatchRule, float]]:
    """One-to-one pairs ``(old, new, rule, message similarity)`` by the module's rule.

    Error ids must be unique within each side.
    """
    new_by_id = {e.error_id: e for e in new}
    pairs: list[tuple[Error, Error, MatchRule, float]] = []
    paired_old: set[str] = set()
    paired_new: set[str] = set()
    for o in sorted(old, key=_order):
        n = new_by_id.get(o.error_id)
        if n is not None:
            pairs.append((o, n, MatchRule.SAME_ID, 1.0))
            paired_old.add(o.error_id)
            paired_new.add(n.error_id)
    for rule, finder in (
        (MatchRule.SAME_SCOPE, _scope_candidates),
        (MatchRule.SIMILAR, _similar_candidates),
    ):
        rest_old = [e for e in old if e.error_id not in paired_old]
        rest_new = [e for e in new if e.error_id not in paired_new]
        if not rest_old or not rest_new:
            break
        for cand in _take_best(finder(rest_old, rest_new), paired_old, paired_new):
            pairs.append((cand.old, cand.new, rule, cand.message))
    return pairs


# -- classification -----------------------------------------------------------------------


def _guard_key(site: Site) -> tuple[tuple[Any, ...], ...]:
    return tuple((g.kind, g.test, g.negated, g.name, g.subject) for g in site.guards)


def pair_sites(old: Sequence[Site], new: Sequence[Site]) -> list[SitePair]:
    """Pair the sites of two paired errors, closest first: same file, scope and
    guards; then same file and scope; then same scope; then the rest in
    (path, line) order. Sites left over are unpaired (a side is None)."""
    if len(old) == 1 and len(new) == 1:
        return [SitePair(old[0], new[0])]
    rest_old = sorted(old, key=lambda s: (s.path, s.line))
    rest_new = sorted(new, key=lambda s: (s.path, s.line))
    pairs: list[SitePair] = []
    keys = (
        lambda s: (s.path, s.scope, _guard_key(s)),
        lambda s: (s.path, s.scope),
        lambda s: s.scope,
        lambda s: None,
    )
    for key in keys:
        waiting: dict[Any, list[Site]] = defaultdict(list)
        for site in rest_new:
            waiting[key(site)].append(site)
        unmatched = []
        for site in rest_old:
            bucket = waiting.get(key(site))
            if bucket:
                pairs.append(SitePair(site, bucket.pop(0)))
            else:
                unmatched.append(site)
        rest_old = unmatched
        rest_new = [s for bucket in waiting.values() for s in bucket]
        rest_new.sort(key=lambda s: (s.path, s.line))
    pairs += [SitePair(s, None) for s in rest_old]
    pairs += [SitePair(None, s) for s in rest_new]
    pairs.sort(key=_site_order)
    return pairs


def _site_order(pair: SitePair) -> tuple[int, str, int]:
    site = pair.old or pair.new
    assert site is not None
    return (0 if pair.old is not None else 1, site.path, site.line)


def aspects_of(old: Error, new: Error, sites: Sequence[SitePair]) -> tuple[Aspect, ...]:
    """How two paired errors differ, in :class:`Aspect` order (line numbers ignored)."""
    found = set()
    if old.message != new.message or (
        old.message is None and old.primary.message_source != new.primary.message_source
    ):
        found.add(Aspect.MESSAGE)
    if old.exception != new.exception:
        found.add(Aspect.EXCEPTION)
    for pair in sites:
        if pair.old is None or pair.new is None:
            found.add(Aspect.SITES)
            continue
        if _guard_key(pair.old) != _guard_key(pair.new):
            found.add(Aspect.GUARDS)
        if pair.old.path != pair.new.path:
            found.add(Aspect.FILE)
        if pair.old.scope != pair.new.scope:
            found.add(Aspect.SCOPE)
    return tuple(a for a in Aspect if a in found)


def classify(aspects: Sequence[Aspect]) -> ChangeKind:
    """``changed`` if any aspect beyond file or scope, ``moved`` if only those,
    else ``unchanged``."""
    if any(a in _CHANGING for a in aspects):
        return ChangeKind.CHANGED
    if aspects:
        return ChangeKind.MOVED
    return ChangeKind.UNCHANGED


def diff_errors(old: Sequence[Error], new: Sequence[Error]) -> list[Change]:
    """Every change between two error sets, in report order: kind
    (:data:`KIND_ORDER`), module, then primary site (path, line)."""
    changes = []
    paired_old: set[str] = set()
    paired_new: set[str] = set()
    for o, n, rule, ratio in match_errors(old, new):
        paired_old.add(o.error_id)
        paired_new.add(n.error_id)
        sites = pair_sites(o.sites, n.sites)
        aspects = aspects_of(o, n, sites)
        changes.append(
            Change(
                kind=classify(aspects),
                old=o,
                new=n,
                rule=rule,
                aspects=aspects,
                similarity=ratio,
                sites=tuple(sites),
            )
        )
    changes += [Change(ChangeKind.REMOVED, o, None) for o in old if o.error_id not in paired_old]
    changes += [Change(ChangeKind.ADDED, None, n) for n in new if n.error_id not in paired_new]
    rank = {kind: i for i, kind in enumerate(KIND_ORDER)}
    changes.sort(key=lambda c: (rank[c.kind], c.module, _order(c.error)))
    return changes


def diff(
    old: CommitInfo, old_errors: Sequence[Error], new: CommitInfo, new_errors: Sequence[Error]
) -> Diff:
    """The :class:`Diff` of two mined versions."""
    return Diff(old=old, new=new, changes=tuple(diff_errors(old_errors, new_errors)))
