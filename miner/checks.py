"""A linter for mined cards: how alike they read, and the defects their prose has.

:func:`check_cards` reads a mined output folder (``errors/<id>.md`` cards,
``api/errors/<id>.json`` records, ``manifest.json`` and, when present,
``config.json``) and gives a :class:`CardReport`; :func:`format_report` prints it.

Figures, per audience (the ``audience`` key of the error's JSON when present,
else the audience :func:`miner.analysis.audience.classify` gives from the JSON
record and ``config.json``, else every card counts under ``all``):

* the share of cards whose "What it means" text equals another card's once
  inline code spans are replaced by a placeholder (the same sentence with other
  names in it), and the same for "Solutions" (the whole numbered list; a card
  that leaves Solutions out reads like no other); the other card may be of any
  audience;
* the share of cards whose "What it means" cites evidence: at least one
  ```path:line``` span other than the primary site's raise line and the lines
  of its guards and early exits (a comment, help text, docstring or assignment
  the card quotes or points to; :func:`cites_evidence`).

Defects, each counted once per card with up to :data:`MAX_EXAMPLES` example ids:

* ``double-negation``: the prose (outside code fences) says ``not (not``, "`not
  X` is false" / "does not hold", or "`X is not None` / `X != y` / `X not in y`
  does not hold / is false";
* ``fix-double-negation``: the "Example fix" holds ``not (not``;
* ``or-as-and``: a condition of the primary site that is an OR (``if a or b``,
  or a failing ``assert a and b``) has two of its parts in one sentence of the
  prose joined by "and" (not as "any of"), or as separate bullets of "When it
  happens" (the list of guard-to-setting links aside: one read per bullet);
  when the error's analysis records its simplified condition, only
  while two of the parts still sit under one OR of it (``(a or b) and not a``
  is ``b and not a``: an AND, rightly told so);
* ``unconditional-claim``: the card says "no condition guards it", "every time
  this line is reached", "raised whenever", "is unconditional" or "raises
  unconditionally" while the primary site has a condition (any guard other
  than ``try`` / ``finally`` / ``with``) or an early exit;
* ``no-flag-claim``: the card says "No flag or environment variable is
  involved" while the message names a ``--flag`` (not of a quoted shell
  command) or an environment variable of ``config.json``;
* ``title-cut-mid-word``: the ``# `` title is the text cut inside a word;
* ``broken-sentence``: "raised whenever in `X` reaches this line", "whenever
  while the module is imported reaches", two parentheticals in a row
  ("(`X=0`) (default `0`)"), a parenthetical nested in a parenthetical ("(which
  carries the name of the setting `X` (no command-line flag))"), a sentence
  that goes on with a capitalized verb after "and" ("... and Pass `--x`"), or
  a section that prints ``None``;
* ``title-variable``: the title is a bare variable name (``msg``,
  ``self.reason``): the message is computed at run time from that variable.

What a reader sees, per audience (:class:`ReaderFigures`), read from the
records' kinds where they have them: the share of cards with each section left
out, the median and 90th percentile of a card's words without the source
excerpt, the example fixes that only restate the condition
(``example_fix.kind`` ``condition``; limit 0), the cards whose Solutions are only
a negated condition (every ``solution_kinds`` item ``condition``; limit
:data:`MAX_ONLY_CONDITION` of the cards) and the switches (``store_true``,
``BooleanOptionalAction``... of ``config.json``) given a value on an example's
command line (limit 0). A limit not met counts as a defect (exit 1).
"""

from __future__ import annotations

import ast
import json
import re
import statistics
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from miner.analysis.audience import (
    USER_FACING,
    Settings,
    classify,
    named_env_vars,
    named_flags,
)
from miner.analysis.config import Condition, ConfigModel, Derived, EnvVar, Option
from miner.model import Error, MessagePart, Site

#: Most example error ids kept per defect.
MAX_EXAMPLES = 5

#: Defect keys in report order, with what each means (one line).
DEFECTS: dict[str, str] = {
    "double-negation": "double negation in the prose",
    "fix-double-negation": "`not (not` in the example fix",
    "or-as-and": "an OR condition told as AND",
    "unconditional-claim": "says unconditional while the site has conditions",
    "no-flag-claim": "says no flag is involved while the message names one",
    "title-cut-mid-word": "title cut in the middle of a word",
    "broken-sentence": "broken sentence",
    "title-variable": "title is a bare variable name",
}

#: The sections of a card, in its order (:data:`ReaderFigures.left_out`).
SECTIONS = (
    "Error message",
    "What it means",
    "Source",
    "Solutions",
    "Example fix",
    "When it happens",
    "Related errors",
)
#: Most share of an audience's cards whose Solutions are only a negated condition.
MAX_ONLY_CONDITION = 0.05

#: Guards that are not conditions on reaching the site.
_NOT_CONDITIONS = frozenset({"try", "finally", "try-else", "with", "async with"})


@dataclass(frozen=True, slots=True)
class AudienceFigures:
    """How alike the cards of one audience read."""

    audience: str
    cards: int
    same_meaning: int
    """Cards whose "What it means" equals another card's (code spans aside)."""
    same_solutions: int
    """Cards whose "Solutions" equal another card's (code spans aside)."""
    with_evidence: int = 0
    """Cards whose "What it means" cites evidence (:func:`cites_evidence`)."""

    @property
    def meaning_share(self) -> float:
        return self.same_meaning / self.cards if self.cards else 0.0

    @property
    def solutions_share(self) -> float:
        return self.same_solutions / self.cards if self.cards else 0.0

    @property
    def evidence_share(self) -> float:
        return self.with_evidence / self.cards if self.cards else 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "audience": self.audience,
            "cards": self.cards,
            "same_meaning": self.same_meaning,
            "same_solutions": self.same_solutions,
            "meaning_share": round(self.meaning_share, 4),
            "solutions_share": round(self.solutions_share, 4),
            "with_evidence": self.with_evidence,
            "evidence_share": round(self.evidence_share, 4),
        }


@dataclass(frozen=True, slots=True)
class DefectCount:
    """How many cards have one defect, with a few of their error ids."""

    name: str
    description: str
    count: int
    examples: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": self.description,
            "count": self.count,
            "examples": list(self.examples),
        }


@dataclass(frozen=True, slots=True)
class ReaderFigures:
    """What a reader of one audience's cards sees (:func:`reader_figures`)."""

    audience: str
    cards: int
    left_out: tuple[tuple[str, int], ...]
    """(section, cards without it) for each of :data:`SECTIONS`, in order."""
    median_words: float
    p90_words: int
    """Words of a card without its source excerpt: the median and the 90th percentile."""
    restating_examples: int
    """Example fixes of kind ``condition``: they only restate the raise condition."""
    only_condition: int
    """Cards whose Solutions are only negated conditions (by their recorded kinds)."""
    kinds_unknown: int
    """Cards with Solutions whose kinds the record does not hold (an older
    miner, a language model's rewrite): not counted in ``only_condition``."""
    valued_switches: int
    """Switches given a value on an example fix's command line (``--x VALUE``)."""

    @property
    def only_condition_share(self) -> float:
        return self.only_condition / self.cards if self.cards else 0.0

    @property
    def within_limits(self) -> bool:
        """No restating example, no switch with a value, and at most
        :data:`MAX_ONLY_CONDITION` of the cards with only a negated condition."""
        return (
            not self.restating_examples
            and not self.valued_switches
            and self.only_condition_share <= MAX_ONLY_CONDITION
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "audience": self.audience,
            "cards": self.cards,
            "left_out": {name: n for name, n in self.left_out},
            "left_out_share": {
                name: round(n / self.cards, 4) if self.cards else 0.0 for name, n in self.left_out
            },
            "median_words": self.median_words,
            "p90_words": self.p90_words,
            "restating_examples": self.restating_examples,
            "only_condition": self.only_condition,
            "only_condition_share": round(self.only_condition_share, 4),
            "kinds_unknown": self.kinds_unknown,
            "valued_switches": self.valued_switches,
            "within_limits": self.within_limits,
        }


#: Origin kinds a user controls (:data:`miner.model.USER_ORIGINS`), as the JSON writes them.
USER_ORIGIN_KINDS = frozenset(
    {"flag", "env", "model-config", "checkpoint", "request", "hardware", "package"}
)


@dataclass(frozen=True, slots=True)
class FindingFigures:
    """What the findings of the full cards give a reader (:func:`finding_figures`)."""

    cards: int
    """Full cards (user-facing audiences)."""
    with_cause: int
    """Full cards with a cause finding that names a user-controlled origin."""
    with_cause_and_fix: int
    """... that also have at least one verified fix."""
    dropped: tuple[tuple[str, int], ...]
    """(rule, findings the verifier dropped) over every record, most first."""

    @property
    def cause_share(self) -> float:
        return self.with_cause / self.cards if self.cards else 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "cards": self.cards,
            "with_cause": self.with_cause,
            "cause_share": round(self.cause_share, 4),
            "with_cause_and_fix": self.with_cause_and_fix,
            "dropped": {rule: n for rule, n in self.dropped},
        }


def finding_figures(cards: Iterable[Card], audiences: Mapping[str, str]) -> FindingFigures:
    """:class:`FindingFigures` of ``cards`` (error id -> audience in ``audiences``),
    from the findings and drops their JSON records hold."""
    facing = {a.value for a in USER_FACING}
    full = with_cause = with_fix = 0
    dropped: Counter[str] = Counter()
    for card in cards:
        analysis = _analysis(card.record)
        dropped.update(str(r) for r in analysis.get("dropped") or ())
        if audiences.get(card.error_id) not in facing:
            continue
        full += 1
        found = [f for f in analysis.get("findings") or () if isinstance(f, Mapping)]
        cause = any(
            f.get("kind") == "cause" and f.get("origin") in USER_ORIGIN_KINDS for f in found
        )
        with_cause += cause
        with_fix += cause and any(f.get("kind") == "fix" for f in found)
    return FindingFigures(full, with_cause, with_fix, tuple(dropped.most_common()))


@dataclass(frozen=True, slots=True)
class CardReport:
    """What :func:`check_cards` found in one output folder."""

    out_dir: str
    commit: str
    """``slug@short-sha (rev)`` from ``manifest.json``, or ``""``."""
    cards: int
    audience_source: str
    """Where audiences came from: ``json``, ``classified`` or ``none`` (all cards under ``all``)."""
    audiences: tuple[AudienceFigures, ...]
    """One row per audience (sorted by name), then the ``all`` row."""
    defects: tuple[DefectCount, ...]
    """One row per defect of :data:`DEFECTS`, in that order."""
    reader: tuple[ReaderFigures, ...] = ()
    """What a reader sees: one row per audience (as :attr:`audiences`), then ``all``."""
    findings: FindingFigures | None = None
    """What the findings give the full cards, and the verifier's drops by rule."""

    @property
    def has_defects(self) -> bool:
        """A defect counted, or a reader limit not met (:attr:`ReaderFigures.within_limits`)."""
        return any(d.count for d in self.defects) or not all(r.within_limits for r in self.reader)

    def defect(self, name: str) -> DefectCount:
        return next(d for d in self.defects if d.name == name)

    def figures(self, audience: str) -> AudienceFigures:
        return next(a for a in self.audiences if a.audience == audience)

    def evidence_share(self, audiences: Iterable[str]) -> float:
        """Share of the cards of ``audiences`` whose "What it means" cites evidence."""
        rows = [a for a in self.audiences if a.audience in set(audiences)]
        cards = sum(a.cards for a in rows)
        return sum(a.with_evidence for a in rows) / cards if cards else 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "out_dir": self.out_dir,
            "commit": self.commit,
            "cards": self.cards,
            "audience_source": self.audience_source,
            "audiences": [a.to_json() for a in self.audiences],
            "defects": [d.to_json() for d in self.defects],
            "reader": [r.to_json() for r in self.reader],
            "findings": None if self.findings is None else self.findings.to_json(),
        }


# --------------------------------------------------------------------------- reading cards


@dataclass(frozen=True, slots=True)
class Card:
    """One card split into its parts."""

    error_id: str
    title: str
    sections: Mapping[str, str]
    """Heading (without ``## ``) -> the text under it, stripped."""
    record: Mapping[str, Any]
    """The error's JSON record (empty when missing)."""


_FENCE = re.compile(r"^(`{3,}|~{3,})[^\n]*\n.*?^\1[ \t]*$", re.M | re.S)
_SPAN = re.compile(r"(`+)(.+?)\1", re.S)
_PLACEHOLDER = "`…`"


def parse_card(error_id: str, text: str, record: Mapping[str, Any] | None = None) -> Card:
    """Split a card into its title and ``## `` sections (fences kept whole)."""
    title = ""
    sections: dict[str, list[str]] = {}
    current: list[str] | None = None
    in_fence: str | None = None
    for line in text.split("\n"):
        fence = re.match(r"^(`{3,}|~{3,})", line)
        if fence and (in_fence is None or line.strip() == in_fence):
            in_fence = fence.group(1) if in_fence is None else None
        elif in_fence is None and line.startswith("## "):
            current = sections.setdefault(line[3:].strip(), [])
            continue
        elif in_fence is None and line.startswith("# ") and not title and current is None:
            title = line[2:]
            continue
        if current is not None:
            current.append(line)
    return Card(
        error_id=error_id,
        title=title,
        sections={k: "\n".join(v).strip() for k, v in sections.items()},
        record=record or {},
    )


def prose(text: str) -> str:
    """``text`` without its code fences."""
    return _FENCE.sub("", text)


def normalized(text: str) -> str:
    """Text with inline code spans replaced by a placeholder and spaces folded."""
    return " ".join(_SPAN.sub(_PLACEHOLDER, prose(text)).split())


def _spans(line: str) -> list[tuple[int, int, str]]:
    return [(m.start(), m.end(), " ".join(m.group(2).split())) for m in _SPAN.finditer(line)]


# --------------------------------------------------------------------------- the checks

_DOUBLE_NOT = re.compile(r"not \(not\b")
#: A negated expression: ``not x``, ``x is not None``, ``x not in y``, ``x != y``.
_NEGATED = re.compile(r"^not\b| is not | not in |!=")
_FALSE_AFTER = re.compile(r"^\s+(?:is false|does not hold)")
_UNCONDITIONAL = re.compile(
    r"no condition guards it|every time this line is reached|raised whenever|"
    r"is unconditional|raises unconditionally"
)
_NO_FLAG = "No flag or environment variable is involved"
#: The header of the list of guard-to-setting links under "When it happens".
_LINKS_HEADER = "How the guards were linked to settings:"
_BROKEN = (
    re.compile(r"whenever (?:in `|while the module)"),
    re.compile(r"\)\s\((?!line \d)"),
    re.compile(r"\([^()`]*(?:`[^`]*`[^()`]*)*\([^()]*\)\)"),
    re.compile(r" and (?:Drop|Set|Pass|Leave|Unset|Construct|Install|Use|Make|Read|Avoid) "),
    re.compile(r"^None$", re.M),
)
#: A docstring quoted in the prose: its own wording is not the card's.
_QUOTE = re.compile(r'"[^"\n]*"')
_BARE_NAME = re.compile(r"^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*$")
_PROSE_SECTIONS = ("What it means", "When it happens", "Solutions")


def double_negation(card: Card) -> bool:
    for name in _PROSE_SECTIONS:
        text = prose(card.sections.get(name, ""))
        if _DOUBLE_NOT.search(text):
            return True
        for m in _SPAN.finditer(text):
            if _NEGATED.search(m.group(2).strip()) and _FALSE_AFTER.match(text[m.end() :]):
                return True
    return False


def fix_double_negation(card: Card) -> bool:
    return _DOUBLE_NOT.search(card.sections.get("Example fix", "")) is not None


def _primary(card: Card) -> Mapping[str, Any]:
    sites = card.record.get("sites") or [{}]
    first = sites[0]
    return first if isinstance(first, Mapping) else {}


def or_parts(guard: Mapping[str, Any]) -> list[str]:
    """The parts of a guard that make the raise happen when any one holds:
    ``if a or b`` -> ``[a, b]``; a failing ``assert a and b`` (or an ``else``
    of ``if a and b``) -> ``[a, b]``; else ``[]``."""
    if guard.get("kind") not in ("if", "while", "assert", "elif"):
        return []
    test = str(guard.get("test", ""))
    try:
        tree = ast.parse(test, mode="eval").body
    except (SyntaxError, ValueError):
        return []
    wanted = ast.And if guard.get("negated") else ast.Or
    if not (isinstance(tree, ast.BoolOp) and isinstance(tree.op, wanted)):
        return []
    parts = [ast.get_source_segment(test, v) or ast.unparse(v) for v in tree.values]
    return [" ".join(p.split()) for p in parts]


def _part_of(span: str, parts: list[str]) -> int | None:
    for i, part in enumerate(parts):
        if span in (part, f"not ({part})", f"not {part}"):
            return i
    return None


def _or_groups(condition: Any) -> list[list[str]]:
    """The atoms (as written and in positive spelling) under each ``or`` of a
    condition record (:meth:`miner.model.Condition.to_json`)."""
    groups: list[list[str]] = []

    def atoms(node: Any) -> list[str]:
        if not isinstance(node, Mapping):
            return []
        if "atom" in node:
            return [str(node.get("text", "")), str(node["atom"])]
        return [a for arg in node.get("args") or () for a in atoms(arg)]

    def walk(node: Any) -> None:
        if not isinstance(node, Mapping) or "atom" in node:
            return
        if node.get("op") == "or":
            groups.append(atoms(node))
        for arg in node.get("args") or ():
            walk(arg)

    walk(condition)
    return groups


def _still_or(parts: list[str], condition: Any) -> bool:
    """Do two of ``parts`` still sit under one ``or`` of the simplified
    condition? (``(not a or not b) and a`` simplifies to ``a and not b``: told
    as AND, rightly.)"""

    def part(atom: str) -> int | None:
        for i, p in enumerate(parts):
            if atom in (p, f"not ({p})", f"not {p}") or p in (atom, f"not ({atom})"):
                return i
        return None

    for group in _or_groups(condition):
        if len({i for a in group if (i := part(" ".join(a.split()))) is not None}) >= 2:
            return True
    return False


def or_as_and(card: Card) -> bool:
    analysis = card.record.get("analysis")
    condition = analysis.get("condition") if isinstance(analysis, Mapping) else None
    for guard in _primary(card).get("guards") or ():
        parts = or_parts(guard)
        if len(parts) < 2:
            continue
        if condition is not None and not _still_or(parts, condition):
            continue
        bullets: set[int] = set()
        for name in ("What it means", "When it happens"):
            in_links = False
            for line in prose(card.sections.get(name, "")).split("\n"):
                if line.endswith(":") and not line.startswith("- "):
                    # the list of guard-to-setting links records one read per
                    # bullet; it states no condition
                    in_links = line == _LINKS_HEADER
                if re.match(r"^\d+\. ", line) or "any of" in line or in_links:
                    continue
                hits = [
                    (s, e, i) for s, e, t in _spans(line) if (i := _part_of(t, parts)) is not None
                ]
                if line.startswith("- ") and len({i for _, _, i in hits}) == 1:
                    bullets.add(hits[0][2])
                for (_, end, i), (start, _, j) in zip(hits, hits[1:], strict=False):
                    if i != j and " and " in line[end:start]:
                        return True
        if len(bullets) >= 2:
            return True
    return False


def _has_conditions(site: Mapping[str, Any]) -> bool:
    guards = site.get("guards") or ()
    return bool(site.get("exits")) or any(g.get("kind") not in _NOT_CONDITIONS for g in guards)


def unconditional_claim(card: Card) -> bool:
    text = "\n".join(prose(card.sections.get(n, "")) for n in (*_PROSE_SECTIONS, "Example fix"))
    return _UNCONDITIONAL.search(text) is not None and _has_conditions(_primary(card))


def message_words(record: Mapping[str, Any]) -> str:
    """The literal words of the record's message (placeholders as ``{}``), else
    the string literals of its source."""
    parts = record.get("message_parts") or ()
    if parts:
        return "".join("{}" if "expr" in p else str(p.get("text") or "") for p in parts)
    if record.get("message"):
        return str(record["message"])
    source = str(_primary_of(record).get("message_source") or "")
    return " ".join(m.group(2) for m in re.finditer(r"""(['"])((?:\\.|(?!\1).)*)\1""", source))


def _primary_of(record: Mapping[str, Any]) -> Mapping[str, Any]:
    sites = record.get("sites") or [{}]
    return sites[0] if isinstance(sites[0], Mapping) else {}


def no_flag_claim(card: Card, env_vars: Iterable[str]) -> bool:
    text = "\n".join(prose(card.sections.get(n, "")) for n in _PROSE_SECTIONS)
    if _NO_FLAG not in text:
        return False
    words = message_words(card.record)
    return bool(named_flags(words) or named_env_vars(words, env_vars))


def full_title(record: Mapping[str, Any]) -> str | None:
    """The title before it was cut (as :attr:`miner.model.Error.title` builds it)."""
    site = _primary_of(record)
    if record.get("message"):
        text = str(record["message"])
    elif site.get("message_source"):
        text = str(site["message_source"])
    elif site.get("kind") == "assert" and site.get("guards"):
        text = f"assert {site['guards'][-1].get('test', '')}"
    elif site:
        text = f"{record.get('exception') or 're-raise'} in {site.get('scope', '')}"
    else:
        return None
    return " ".join(text.split())


def title_cut_mid_word(card: Card) -> bool:
    full = full_title(card.record)
    title = card.title
    if not full or not title or len(full) <= len(title) or not full.startswith(title):
        return False
    return bool(re.match(r"\w", title[-1]) and re.match(r"\w", full[len(title)]))


def broken_sentence(card: Card) -> bool:
    for name in ("What it means", "When it happens", "Solutions"):
        text = _SPAN.sub(_PLACEHOLDER, prose(card.sections.get(name, "")))
        text = _QUOTE.sub('"…"', text)
        if any(p.search(text) for p in _BROKEN):
            return True
    return False


_CITATION = re.compile(r"`([^`\s]+\.pyi?):(\d+)`")


def cites_evidence(card: Card) -> bool:
    """Does "What it means" cite a ```path:line``` other than the primary site's
    raise line and the lines of its guards and exits (the message and the guard
    text, which the card states anyway)?"""
    site = _primary(card)
    path = site.get("path")
    own = {site.get("line")}
    for guard in (*site.get("guards", ()), *site.get("exits", ())):
        if isinstance(guard, Mapping):
            own.add(guard.get("line"))
    for m in _CITATION.finditer(card.sections.get("What it means", "")):
        if m.group(1) != path or int(m.group(2)) not in own:
            return True
    return False


def title_variable(card: Card) -> bool:
    site = _primary_of(card.record)
    if card.record.get("message") is not None or not site.get("message_source"):
        return False
    source = " ".join(str(site["message_source"]).split())
    return card.title == source and _BARE_NAME.match(source) is not None


# --------------------------------------------------------------------------- audiences


def config_from_json(data: Mapping[str, Any]) -> ConfigModel:
    """The configuration model back from ``config.json`` (:meth:`ConfigModel.to_json`)."""

    def option(o: Mapping[str, Any]) -> Option:
        fields: dict[str, Any] = {k: o.get(k) for k in Option.__dataclass_fields__}
        fields["flags"] = tuple(o.get("flags") or ())
        if o.get("choices") is not None:
            fields["choices"] = tuple(o["choices"])
        return Option(**fields)

    def condition(c: Mapping[str, Any]) -> Condition:
        return Condition(
            c["name"], c["op"], tuple(c.get("values", ())), c.get("text", ""), c.get("env", False)
        )

    derived = tuple(
        Derived(
            name=d["name"],
            owner=d["owner"],
            path=d["path"],
            line=d["line"],
            expression=d["expression"],
            conditions=tuple(condition(c) for c in d.get("conditions", ())),
            mode=d.get("mode", "all"),
            via=tuple(d.get("via", ())),
        )
        for d in data.get("derived", ())
    )
    env = tuple(
        EnvVar(**{k: e.get(k) for k in EnvVar.__dataclass_fields__ if k in e})
        for e in data.get("env", ())
    )
    return ConfigModel(
        options=tuple(option(o) for o in data.get("options", ())),
        derived=derived,
        env=env,
        classes=tuple(data.get("classes", ())),
        accessors=tuple((a["call"], a["namespace"]) for a in data.get("accessors", ())),
        views=tuple(
            (v["path"], v["start"], v["end"], tuple(v["names"])) for v in data.get("views", ())
        ),
        entry_point=data.get("entry_point"),
        entry_points=tuple(
            (e["class"], e["path"], e["module"]) for e in data.get("entry_points", ())
        ),
        scripts=tuple(data.get("scripts", ())),
    )


def error_from_json(record: Mapping[str, Any]) -> Error | None:
    """The :class:`Error` of an ``api/errors`` record, or None when it has no sites."""
    sites = record.get("sites") or ()
    if not sites:
        return None
    try:
        built = tuple(Site.from_json(dict(s)) for s in sites)
        parts = tuple(MessagePart.from_json(p) for p in record.get("message_parts") or ())
        return Error(
            error_id=str(record.get("error_id", built[0].error_id)),
            exception=record.get("exception"),
            message=record.get("message"),
            message_parts=parts,
            message_kind=record.get("message_kind", built[0].message_kind),
            sites=built,
        )
    except (KeyError, TypeError, ValueError):
        return None


def _audience_key(record: Mapping[str, Any]) -> str | None:
    value = record.get("audience")
    if isinstance(value, Mapping):
        value = value.get("audience")
    return str(value) if value else None


# --------------------------------------------------------------------------- what a reader sees


def reader_words(card: Card) -> int:
    """The words of ``card``'s title and sections, its source excerpt left out."""
    texts = [card.title]
    texts += [prose(t) if name == "Source" else t for name, t in card.sections.items()]
    return sum(len(t.split()) for t in texts)


def switch_flags(config: ConfigModel | None) -> frozenset[str]:
    """The flags of ``config`` that take no value (:attr:`Option.switch`), and
    their ``--no-x``: a flag that some option of another action shares is left out."""
    kinds: dict[str, set[bool]] = defaultdict(set)
    for opt in config.options if config else ():
        for flag in opt.flags:
            kinds[flag].add(opt.switch)
        if opt.negation:
            kinds[opt.negation].add(True)
    return frozenset(flag for flag, seen in kinds.items() if seen == {True})


def _analysis(record: Mapping[str, Any]) -> Mapping[str, Any]:
    analysis = record.get("analysis")
    return analysis if isinstance(analysis, Mapping) else {}


def valued_switches(record: Mapping[str, Any], switches: frozenset[str]) -> int:
    """How often the record's shell example fix gives one of ``switches`` a
    value: ``--x=v``, or ``--x v`` with ``v`` neither a flag nor ``...``."""
    fix = _analysis(record).get("example_fix")
    if not isinstance(fix, Mapping) or fix.get("language") != "shell":
        return 0
    count = 0
    for line in (fix.get("before"), fix.get("after")):
        words = str(line or "").split()
        for word, following in zip(words, [*words[1:], "..."], strict=True):
            flag, eq, _ = word.partition("=")
            if flag in switches and (eq or not following.startswith(("-", "..."))):
                count += 1
    return count


def reader_figures(audience: str, cards: list[Card], switches: frozenset[str]) -> ReaderFigures:
    """What a reader of ``cards`` sees (:class:`ReaderFigures`), from the
    cards' sections and the kinds their records hold."""
    words = sorted(reader_words(c) for c in cards) or [0]
    only = unknown = restating = 0
    for card in cards:
        analysis = _analysis(card.record)
        fix = analysis.get("example_fix")
        restating += isinstance(fix, Mapping) and fix.get("kind") == "condition"
        kinds = analysis.get("solution_kinds") or []
        if analysis.get("solutions") and not kinds:
            unknown += 1
        only += bool(kinds) and all(k == "condition" for k in kinds)
    return ReaderFigures(
        audience=audience,
        cards=len(cards),
        left_out=tuple((name, sum(name not in c.sections for c in cards)) for name in SECTIONS),
        median_words=statistics.median(words),
        p90_words=words[min(len(words) - 1, int(0.9 * len(words)))],
        restating_examples=restating,
        only_condition=only,
        kinds_unknown=unknown,
        valued_switches=sum(valued_switches(c.record, switches) for c in cards),
    )


# --------------------------------------------------------------------------- the report


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _commit(manifest: Any) -> str:
    if not isinstance(manifest, Mapping) or not isinstance(manifest.get("commit"), Mapping):
        return ""
    commit = manifest["commit"]
    sha = str(commit.get("sha", ""))[:10]
    return f"{commit.get('slug', '')}@{sha} ({commit.get('rev', '')})"


def check_cards(out_dir: Path) -> CardReport:
    """Lint every card of the mined output folder ``out_dir``."""
    out_dir = Path(out_dir)
    manifest = _read_json(out_dir / "manifest.json")
    config_data = _read_json(out_dir / "config.json")
    config = config_from_json(config_data) if isinstance(config_data, Mapping) else None
    env_vars = frozenset(e.name for e in config.env) if config else frozenset()
    settings = Settings.from_config(config) if config else Settings()
    cards: list[Card] = []
    for path in sorted((out_dir / "errors").glob("*.md")):
        record = _read_json(out_dir / "api" / "errors" / f"{path.stem}.json")
        text = path.read_text(encoding="utf-8", errors="replace")
        cards.append(parse_card(path.stem, text, record if isinstance(record, Mapping) else {}))

    audiences: dict[str, str] = {}
    sources: set[str] = set()
    for card in cards:
        key = _audience_key(card.record)
        if key is not None:
            audiences[card.error_id], source = key, "json"
        elif (error := error_from_json(card.record)) is not None:
            audiences[card.error_id], source = (
                classify(error, settings).audience.value,
                "classified",
            )
        else:
            audiences[card.error_id], source = "all", "none"
        sources.add(source)
    source = "+".join(s for s in ("json", "classified", "none") if s in sources) or "none"

    meaning = Counter(normalized(c.sections.get("What it means", "")) for c in cards)
    solutions = Counter(normalized(c.sections.get("Solutions", "")) for c in cards)
    groups: dict[str, list[Card]] = defaultdict(list)
    for card in cards:
        groups[audiences[card.error_id]].append(card)
    if set(groups) != {"all"}:
        groups["all"] = cards
    rows = []
    switches = switch_flags(config)
    reader = tuple(
        reader_figures(name, groups[name], switches)
        for name in sorted(groups, key=lambda n: (n == "all", n))
    )
    for name in sorted(groups, key=lambda n: (n == "all", n)):
        members = groups[name]
        rows.append(
            AudienceFigures(
                audience=name,
                cards=len(members),
                same_meaning=sum(
                    1
                    for c in members
                    if meaning[normalized(c.sections.get("What it means", ""))] > 1
                ),
                # a card without Solutions (left out: nothing to say) reads like no other
                same_solutions=sum(
                    1
                    for c in members
                    if c.sections.get("Solutions")
                    and solutions[normalized(c.sections["Solutions"])] > 1
                ),
                with_evidence=sum(1 for c in members if cites_evidence(c)),
            )
        )

    checks = {
        "double-negation": double_negation,
        "fix-double-negation": fix_double_negation,
        "or-as-and": or_as_and,
        "unconditional-claim": unconditional_claim,
        "no-flag-claim": lambda c: no_flag_claim(c, env_vars),
        "title-cut-mid-word": title_cut_mid_word,
        "broken-sentence": broken_sentence,
        "title-variable": title_variable,
    }
    found: dict[str, list[str]] = {name: [] for name in DEFECTS}
    for card in cards:
        for name, check in checks.items():
            if check(card):
                found[name].append(card.error_id)
    defects = tuple(
        DefectCount(name, DEFECTS[name], len(ids), tuple(ids[:MAX_EXAMPLES]))
        for name, ids in found.items()
    )
    return CardReport(
        out_dir=str(out_dir),
        commit=_commit(manifest),
        cards=len(cards),
        audience_source=source,
        audiences=tuple(rows),
        defects=defects,
        reader=reader,
        findings=finding_figures(cards, audiences),
    )


def format_report(report: CardReport) -> str:
    """The report as plain text: a table of shares per audience, then the defects."""
    lines = [
        f"Cards in {report.out_dir}"
        + (f" ({report.commit})" if report.commit else "")
        + f": {report.cards}; audiences from {report.audience_source}",
        "",
        "Cards whose section reads like another card's (inline code aside):",
        "",
        f"{'audience':<14} {'cards':>7} {'What it means':>15} {'Solutions':>15}"
        f" {'cites evidence':>16}",
    ]
    for row in report.audiences:
        lines.append(
            f"{row.audience:<14} {row.cards:>7} "
            f"{row.same_meaning:>7} {row.meaning_share:>6.1%} "
            f"{row.same_solutions:>7} {row.solutions_share:>6.1%} "
            f"{row.with_evidence:>8} {row.evidence_share:>6.1%}"
        )
    facing = sorted(a.value for a in USER_FACING)
    if any(row.audience in facing for row in report.audiences):
        lines += [
            "",
            "User-facing cards (" + ", ".join(facing) + ") whose What it means cites "
            f"evidence: {report.evidence_share(facing):.1%}",
        ]
    lines += _reader_lines(report)
    lines += _finding_lines(report.findings)
    lines += ["", "Defects (cards; examples):", ""]
    for d in report.defects:
        examples = ", ".join(d.examples)
        lines.append(
            f"{d.name:<20} {d.count:>6}  {d.description}" + (f" ({examples})" if examples else "")
        )
    lines.append("")
    lines.append("defects found" if report.has_defects else "no defects")
    return "\n".join(lines) + "\n"


def _reader_lines(report: CardReport) -> list[str]:
    """The reader figures of ``report`` as table lines (none without cards)."""
    if not report.reader:
        return []
    short = {"Error message": "message", "What it means": "meaning", "Source": "source"}
    short |= {"Solutions": "solutions", "Example fix": "example", "When it happens": "when"}
    short |= {"Related errors": "related"}
    lines = [
        "",
        "What a reader sees: sections left out (share of cards), words without the source "
        "excerpt, and the limits (restating examples 0, only-condition Solutions <= "
        f"{MAX_ONLY_CONDITION:.0%}, switches given a value 0):",
        "",
        f"{'audience':<14} {'cards':>6} {'median':>7} {'p90':>5} {'restate':>8} "
        f"{'only-cond':>10} {'unknown':>8} {'switch=v':>9}  left out",
    ]
    for r in report.reader:
        left = ", ".join(
            f"{short[name]} {n / r.cards:.1%}" for name, n in r.left_out if n and r.cards
        )
        lines.append(
            f"{r.audience:<14} {r.cards:>6} {r.median_words:>7g} {r.p90_words:>5} "
            f"{r.restating_examples:>8} {r.only_condition_share:>10.1%} {r.kinds_unknown:>8} "
            f"{r.valued_switches:>9}  {left or '-'}"
        )
    return lines


def _finding_lines(figures: FindingFigures | None) -> list[str]:
    """The findings figures as text lines (none without full cards)."""
    if figures is None or not figures.cards:
        return []
    drops = ", ".join(f"{rule} {n}" for rule, n in figures.dropped) or "none"
    return [
        "",
        f"Full cards whose cause names a user-controlled origin: {figures.with_cause} of "
        f"{figures.cards} ({figures.cause_share:.1%}); with a verified fix too: "
        f"{figures.with_cause_and_fix}",
        f"Findings dropped by the verifier, by rule: {drops}",
    ]
