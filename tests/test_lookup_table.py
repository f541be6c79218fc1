"""A calibrated "good": the lookup table (tests/fixtures/lookup_table.json,
written by benchmarks/lookup_table.py from the real templates of v0.5.19)
on the real release, mined once for the session with its HTML site.

Every labelled paste must find its error first with a good score, every
other paste (errors raised by torch, transformers, plain Python; wrapped
messages whose lines are pieces of unrelated ones) no good card at all: the
precision of "good" is 100% and its recall 100% on the table. The site's
search (Node) gives the same answers as ``miner lookup`` for every paste.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from searchjs import node_search

from miner.lookup import GOOD, LookupIndex
from miner.model import MineResult

TABLE: dict[str, Any] = json.loads(
    (Path(__file__).parent / "fixtures" / "lookup_table.json").read_text("utf-8")
)
ROWS: list[dict[str, Any]] = TABLE["pastes"]
TAG = TABLE["release"]


def test_the_table_holds_every_kind_of_paste() -> None:
    """At least 80 labelled pastes, at least 15 that match nothing, and
    every kind of issue 35 (1: log lines and cut tracebacks, 2: JSON, 3:
    prefixes, wrapping and indentation, 4: files that moved)."""
    labelled = [r for r in ROWS if r["error_id"]]
    assert TAG == "v0.5.19"
    assert len(labelled) >= 80 and len(ROWS) - len(labelled) >= 15
    kinds = Counter(r["kind"] for r in labelled)
    assert {kind: kinds[kind] >= 5 for kind in "1234"} == dict.fromkeys("1234", True)
    assert sum(r["shape"] == "wrapped-fragment-of-another" for r in ROWS) >= 3


@pytest.fixture(scope="module")
def release(mined_release) -> tuple[MineResult, Path]:
    return mined_release(TAG)


@pytest.fixture(scope="module")
def index(release) -> LookupIndex:
    return LookupIndex.load(release[1])


@pytest.mark.integration
def test_labels_are_sites_of_the_release(release) -> None:
    result, _ = release
    sites = {(s.error_id, s.path, s.line) for s in result.sites}
    missing = [
        r for r in ROWS if r["error_id"] and (r["error_id"], r["path"], r["line"]) not in sites
    ]
    assert missing == []


def _shown(matches: list[Any]) -> list[tuple[str, float, str, int]]:
    return [(m.card.error_id, m.score, m.site.path, m.site.line) for m in matches]


@pytest.mark.integration
@pytest.mark.parametrize("row", ROWS, ids=[f"{n}-{r['shape']}" for n, r in enumerate(ROWS)])
def test_good_is_right_for_every_paste(index: LookupIndex, row: dict[str, Any]) -> None:
    matches = index.search(row["paste"])
    if row["error_id"] is None:
        assert [m for m in matches if m.score >= GOOD] == [], _shown(matches)
        return
    assert matches and matches[0].card.error_id == row["error_id"], _shown(matches)
    assert matches[0].good, _shown(matches)
    assert len(matches) == 1 or matches[1].score < matches[0].score, _shown(matches)


@pytest.mark.integration
def test_precision_and_recall_of_good(index: LookupIndex) -> None:
    answered = right = 0
    for row in ROWS:
        matches = index.search(row["paste"])
        if matches and matches[0].good:
            answered += 1
            right += matches[0].card.error_id == row["error_id"]
    labelled = sum(1 for r in ROWS if r["error_id"])
    assert (right / answered, right / labelled) == (1.0, 1.0)


@pytest.mark.integration
def test_site_search_agrees_on_the_table(release, index: LookupIndex) -> None:
    _, out = release
    page = node_search(out / "site", [r["paste"] for r in ROWS])
    for row, shown in zip(ROWS, page, strict=True):
        expected = [
            [m.card.error_id, round(m.score, 3), m.site.path, m.site.line]
            for m in index.search(row["paste"])
        ]
        assert [[r[0], round(r[1], 3), r[2], r[3]] for r in shown] == expected, row["shape"]


#: Kind 5 of issue 35: messages a class formats itself and messages built in
#: steps (``msg = "…"; msg += …; raise RuntimeError(msg)``), pasted as the
#: user sees them -> (error id, path, line) of v0.5.19.
FORMATTED = [
    (
        "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static. "
        "Current value: mem_fraction_static=0.88",
        ("a51d5c4a43264d85", "python/sglang/srt/model_executor/pool_configurator.py", 86),
    ),
    (
        "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.",
        ("a51d5c4a43264d85", "python/sglang/srt/model_executor/pool_configurator.py", 86),
    ),
    (
        "sglang.srt.disaggregation.base.conn.KVTransferError: "
        "KVTransferError(bootstrap_room=8123412): Request 8123412 timed out after 300.0s "
        "in KVPoll.Bootstrapping",
        ("0d9a9bf36978cf2b", "python/sglang/srt/disaggregation/mooncake/conn.py", 2336),
    ),
]


@pytest.mark.integration
@pytest.mark.parametrize(("paste", "expected"), FORMATTED, ids=["steps", "steps-short", "class"])
def test_formatted_and_stepwise_messages_find_their_error(
    index: LookupIndex, paste: str, expected: tuple[str, str, int]
) -> None:
    """The optional tail of a message built with ``+=`` may be absent; the
    text ``KVTransferError.__init__`` formats around the reason matches the
    template ``KVTransferError(bootstrap_room={…}): {failure_reason}``."""
    matches = index.search(paste)
    assert matches and matches[0].good, _shown(matches)
    top = matches[0]
    assert (top.card.error_id, top.site.path, top.site.line) == expected, _shown(matches)
