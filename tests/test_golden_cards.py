"""Golden cards of SGLang v0.5.19 (issue 12, item 6).

``tests/golden/cards_v0519.py`` holds one entry per card: the message and
primary site it is found by, the error id and audience it must have, a note of
what a reviewer verified in the source of the tag (path:line), and the facts a
correct card states, written as regexes per card section (``facts``), fixes and
names that must not be there (``absent``), and the defects the current card has
(``defects``: the correct fact, its test marked ``xfail(strict=True)`` with the
reason, so fixing the card turns it into an unexpected pass that asks for the
mark to go).

Each regex is searched both in the published Markdown card (its section, HTML
entities decoded) and in the same field of the JSON record, so the two renderings
cannot drift apart. The table checks run offline; the cards are checked on the
release mined once per session (``mined_release``, integration).
"""

from __future__ import annotations

import html
import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from golden.cards_v0519 import CARDS as TABLE
from golden.cards_v0519 import drop, is_, off, on, pass_, set_

TAG = "v0.5.19"
SUBSYSTEMS = (
    "scheduler",
    "memory pool",
    "server args",
    "disaggregation",
    "speculative decoding",
    "quantization",
    "multimodal",
    "diffusion",
    "LoRA",
    "distributed",
    "OpenAI API",
)
AUDIENCES = ("user-setting", "user-input", "dependency", "unsupported")
SECTIONS = ("what", "when", "solutions", "example", "example_before", "example_after")
HEADINGS = {
    "what": "## What it means",
    "when": "## When it happens",
    "solutions": "## Solutions",
    "example": "## Example fix",
}
SITE_RE = re.compile(r"^python/\S+\.py:\d+$")
CITED_RE = re.compile(r"\b[\w/.-]+\.py:\d+")


@dataclass(frozen=True)
class Check:
    """Regexes per section: ``must`` all match, ``must_not`` none matches."""

    must: dict[str, tuple[str, ...]]
    must_not: dict[str, tuple[str, ...]]
    audience: str | None = None
    reason: str = ""


@dataclass(frozen=True)
class GoldenCard:
    """One row of the golden table (see the module docstring)."""

    id: str
    subsystem: str
    audience: str | None
    message: str
    site: tuple[str, int]
    also_sites: tuple[tuple[str, int], ...]
    verified: str
    facts: Check
    defects: tuple[Check, ...]


def _site(text: str) -> tuple[str, int]:
    path, _, line = text.rpartition(":")
    return path, int(line)


def _sections(raw: Mapping[str, Iterable[str]] | None) -> dict[str, tuple[str, ...]]:
    return {key: tuple(value) for key, value in (raw or {}).items()}


def load_table(rows: Iterable[Mapping[str, Any]] = TABLE) -> tuple[GoldenCard, ...]:
    """The golden table (``tests/golden/cards_v0519.py``) as records, in order."""
    cards = []
    for row in rows:
        defects = tuple(
            Check(
                must=_sections(d.get("must")),
                must_not=_sections(d.get("must_not")),
                audience=d.get("audience"),
                reason=d["reason"],
            )
            for d in row.get("defects", ())
        )
        cards.append(
            GoldenCard(
                id=row["id"],
                subsystem=row["subsystem"],
                audience=row.get("audience"),
                message=row["message"],
                site=_site(row["site"]),
                also_sites=tuple(_site(s) for s in row.get("also_sites", ())),
                verified=row["verified"],
                facts=Check(
                    must=_sections(row.get("facts")), must_not=_sections(row.get("absent"))
                ),
                defects=defects,
            )
        )
    return tuple(cards)


CARDS = load_table()


# ------------------------------------------------------------ the table itself


def test_table_covers_the_subsystems() -> None:
    """At least 30 cards, at least 3 per subsystem, several multi-site ones."""
    assert len(CARDS) >= 30
    per_subsystem = Counter(card.subsystem for card in CARDS)
    assert set(per_subsystem) == set(SUBSYSTEMS)
    assert min(per_subsystem.values()) >= 3, per_subsystem
    assert sum(1 for card in CARDS if card.also_sites) >= 3
    assert len({card.id for card in CARDS}) == len(CARDS)
    assert len({(card.message, card.site) for card in CARDS}) == len(CARDS)


@pytest.mark.parametrize("card", CARDS, ids=lambda c: c.id)
def test_table_row_is_well_formed(card: GoldenCard) -> None:
    """Every row: a 16-hex id, a user-facing audience, a site, a note citing
    path:line, at least one fact, regexes that compile, known sections and a
    reason for every defect."""
    assert re.fullmatch(r"[0-9a-f]{16}", card.id)
    audiences = [card.audience, *(d.audience for d in card.defects)]
    assert any(a in AUDIENCES for a in audiences if a), card.id
    assert SITE_RE.match(f"{card.site[0]}:{card.site[1]}")
    assert all(SITE_RE.match(f"{p}:{n}") for p, n in card.also_sites)
    assert CITED_RE.search(card.verified), "the note cites no path:line"
    assert card.facts.must, "a card with no verified fact"
    for check in (card.facts, *card.defects):
        for section, patterns in (*check.must.items(), *check.must_not.items()):
            assert section in SECTIONS, section
            for pattern in patterns:
                re.compile(pattern)
    for defect in card.defects:
        assert CITED_RE.search(defect.reason), "a defect must cite its evidence"
        assert defect.must or defect.must_not or defect.audience


# ------------------------------------------------------------ the cards


def _markdown_section(card: str, heading: str) -> str:
    start = card.find(f"\n{heading}\n")
    if start == -1:
        return ""
    start += len(heading) + 2
    end = card.find("\n## ", start)
    return html.unescape(card[start : end if end != -1 else len(card)])


def _code_blocks(text: str) -> list[str]:
    return re.findall(r"```[\w-]*\n(.*?)```", text, flags=re.S)


@dataclass(frozen=True)
class Rendered:
    """One card as published: its sections in Markdown and in JSON."""

    record: dict[str, Any]
    markdown: dict[str, str]
    json: dict[str, str]

    def texts(self, section: str) -> tuple[tuple[str, str], ...]:
        return (("markdown", self.markdown[section]), ("json", self.json[section]))


def _rendered(out: Path, error_id: str) -> Rendered:
    """The card and record of ``error_id``. An error the tool files as not
    user-facing has no card page (a table row then asserts the audience it
    should have as a defect); its record holds the same sections, so both
    renderings are read from the record."""
    page = out / "errors" / f"{error_id}.md"
    record = json.loads((out / "api" / "errors" / f"{error_id}.json").read_text("utf-8"))
    analysis = record["analysis"]
    card = page.read_text("utf-8") if page.is_file() else _card_of(analysis)
    blocks = _code_blocks(_markdown_section(card, HEADINGS["example"]))
    before, after = (blocks + ["", ""])[:2]
    fix = analysis.get("example_fix") or {}
    markdown = {key: _markdown_section(card, heading) for key, heading in HEADINGS.items()}
    markdown.update(example_before=before, example_after=after)
    situations = "\n".join(analysis.get("situations") or ())
    return Rendered(
        record=record,
        markdown=markdown,
        json={
            "what": analysis.get("what_it_means") or "",
            "when": f"{analysis.get('trigger') or ''}\n{situations}",
            "solutions": "\n".join(analysis.get("solutions") or ()),
            "example": f"{fix.get('before', '')}\n{fix.get('after', '')}",
            "example_before": fix.get("before", ""),
            "example_after": fix.get("after", ""),
        },
    )


def _card_of(analysis: dict[str, Any]) -> str:
    """The sections of a record as a card's Markdown (for an error with no page)."""
    fix = analysis.get("example_fix") or {}
    situations = "\n".join(analysis.get("situations") or ())
    example = f"```\n{fix['before']}\n```\n\n```\n{fix['after']}\n```" if fix else ""
    parts = {
        "what": analysis.get("what_it_means") or "",
        "solutions": "\n".join(analysis.get("solutions") or ()),
        "example": example,
        "when": f"{analysis.get('trigger') or ''}\n{situations}",
    }
    return "".join(f"\n{HEADINGS[key]}\n\n{text}\n" for key, text in parts.items())


@pytest.fixture(scope="module")
def release(mined_release):
    """(MineResult, output folder) of the release, mined once per session."""
    result, out = mined_release(TAG)
    return result, out


def _find(result, card: GoldenCard):
    """The error with the card's message raised at the card's site."""
    found = [
        error
        for error in result.errors
        if error.message == card.message and any((s.path, s.line) == card.site for s in error.sites)
    ]
    assert len(found) == 1, f"{card.id}: {len(found)} errors with this message at {card.site}"
    return found[0]


def _failures(rendered: Rendered, check: Check) -> list[str]:
    problems = []
    for section, patterns in check.must.items():
        for where, text in rendered.texts(section):
            problems += [
                f"{section} ({where}) lacks /{p}/" for p in patterns if not re.search(p, text)
            ]
    for section, patterns in check.must_not.items():
        for where, text in rendered.texts(section):
            problems += [
                f"{section} ({where}) has /{p}/: {re.search(p, text).group(0)!r}"  # type: ignore[union-attr]
                for p in patterns
                if re.search(p, text)
            ]
    if check.audience and rendered.record["audience"] != check.audience:
        problems.append(f"audience is {rendered.record['audience']!r}, not {check.audience!r}")
    return problems


@pytest.mark.integration
@pytest.mark.parametrize("card", CARDS, ids=lambda c: c.id)
def test_card_is_found_by_message_and_site(release, card: GoldenCard) -> None:
    """The card of the message at its site has the recorded id, audience and
    sites, and cites the site where it says when it happens."""
    result, out = release
    error = _find(result, card)
    assert error.error_id == card.id
    sites = {(s.path, s.line) for s in error.sites}
    assert set(card.also_sites) <= sites
    assert (error.primary.path, error.primary.line) == card.site
    rendered = _rendered(out, card.id)
    assert rendered.record["error_id"] == card.id
    assert rendered.record["message"] == card.message
    if card.audience:
        assert rendered.record["audience"] == card.audience
    cited = f"{card.site[0]}:{card.site[1]}"
    for _, text in rendered.texts("when"):
        assert f"`{cited}`" in text
        for path, line in card.also_sites:
            assert f"{path}:{line}" in text


@pytest.mark.integration
@pytest.mark.parametrize("card", CARDS, ids=lambda c: c.id)
def test_card_states_the_verified_facts(release, card: GoldenCard) -> None:
    """The settings, values and fixes verified in the source are on the card,
    and the refuted fixes are not."""
    _, out = release
    problems = _failures(_rendered(out, card.id), card.facts)
    assert not problems, "\n".join(problems)


DEFECTS = [
    pytest.param(
        card,
        defect,
        id=f"{card.id}-{n}",
        marks=pytest.mark.xfail(strict=True, reason=defect.reason),
    )
    for card in CARDS
    for n, defect in enumerate(card.defects, 1)
]


@pytest.mark.integration
@pytest.mark.parametrize(("card", "defect"), DEFECTS)
def test_card_defect_is_fixed(release, card: GoldenCard, defect: Check) -> None:
    """The correct fact of a known defect (xfail until the card states it)."""
    _, out = release
    problems = _failures(_rendered(out, card.id), defect)
    assert not problems, "\n".join(problems)


# ------------------------------------------------------------ the checker itself


def test_checker_reads_sections_and_reports_each_wrong_fact(tmp_path: Path) -> None:
    """The sections are cut from a card and its JSON as published, entities
    decoded; a missing fact, a refuted fix and a wrong audience are each
    reported, per rendering."""
    card = (
        "# t\n\n## What it means\n\nWhy &gt; how.\n\n## When it happens\n\n"
        "- `--x` is on\n\n## Solutions\n\n1. Pass `--y because`: required.\n\n"
        "## Example fix\n\n```shell\n# before\nrun --x\n```\n\n```shell\n# after\nrun\n```\n"
    )
    record = {
        "error_id": "0123456789abcdef",
        "audience": "internal",
        "analysis": {
            "what_it_means": "Why > how.",
            "trigger": "- `--x` is on",
            "situations": ["Launches with `--x`."],
            "solutions": ["Pass `--y`."],
            "example_fix": {"before": "# before\nrun --x", "after": "# after\nrun"},
        },
    }
    (tmp_path / "errors").mkdir()
    (tmp_path / "api" / "errors").mkdir(parents=True)
    (tmp_path / "errors" / "0123456789abcdef.md").write_text(card, "utf-8")
    (tmp_path / "api" / "errors" / "0123456789abcdef.json").write_text(json.dumps(record))
    rendered = _rendered(tmp_path, "0123456789abcdef")
    assert rendered.markdown["what"].strip() == "Why > how."
    assert rendered.markdown["example_before"] == "# before\nrun --x\n"
    assert rendered.markdown["example_after"] == "# after\nrun\n"
    assert rendered.json["when"] == "- `--x` is on\nLaunches with `--x`."
    assert _failures(rendered, Check(must={"what": ("Why > how",)}, must_not={})) == []
    check = Check(
        must={"when": (r"`--x` is on",), "example_after": (r"--y",)},
        must_not={"solutions": (r"`--y because`",)},
        audience="user-setting",
    )
    assert _failures(rendered, check) == [
        "example_after (markdown) lacks /--y/",
        "example_after (json) lacks /--y/",
        "solutions (markdown) has /`--y because`/: '`--y because`'",
        "audience is 'internal', not 'user-setting'",
    ]


@pytest.mark.parametrize(
    ("pattern", "matches", "misses"),
    [
        (on("--x"), ["`--x` is on", "`--x` is set (a non-empty value)"], ["`--x` is off"]),
        (off("--x"), ["`--x` is off (not given)", "`--x` is not given"], ["`--x` is on"]),
        (
            is_("--x", "a"),
            ["`--x` is `a` (line 3)", "`--x=a`"],
            ["`--x` is not `a`", "`--xy` is `a`"],
        ),
        (pass_("--x"), ["2. Pass `--x`. Its help says", "add `--x`"], ["Drop `--x`", "`--x`"]),
        (drop("--x"), ["Drop `--x`: it is off", "leave `--x` out"], ["Pass `--x`"]),
        (
            set_("--x", "1"),
            ["Set `--x` to `1`.", "Pass `--x 1`", "use `--x=1`"],
            ["Set `--x` to `10`", "Set `--y` to `1`"],
        ),
    ],
)
def test_fact_patterns(pattern: str, matches: list[str], misses: list[str]) -> None:
    """The table's flag patterns accept rewordings of a fact, not another fact."""
    assert all(re.search(pattern, text) for text in matches)
    assert not any(re.search(pattern, text) for text in misses)
