"""One set of rules, two readers: the site's search (``static/search.js``, run
in Node) and ``miner lookup`` (:class:`miner.lookup.LookupIndex`) give the same
results, scores and sites for the same pastes, in every form a paste comes in.

The rules are defined once in :mod:`miner.publish.patterns` (prefix patterns,
line patterns, numbers) and shipped to the page in ``search-data.js``; this
table checks that the port scores with them as the CLI does.
"""

from __future__ import annotations

import json
from pathlib import Path

import git
import pytest
from conftest import commit_all, write_files
from sample_repo import publish_site
from searchjs import node_search

from miner.lookup import LookupIndex
from miner.model import MineResult
from miner.pipeline import mine_and_analyze
from miner.publish.patterns import LINE_PATTERNS, RULES

CACHE = """\
class HiCache:
    def __init__(self, kind, pages):
        if kind not in ("mha", "mla", "msa"):
            raise ValueError("HiCache only supports MHA, MLA, and MSA models")
        assert pages % 16 == 0, "pages must be a multiple of 16"
        self.pages = pages

    def check(self, quant):
        if "quant_method" not in quant:
            raise ValueError(f"Cannot find any of {['quant_method']} in the model's quantization config.")
        if len(quant) > 8:
            raise RuntimeError("Context parallel only supports single machine (tp_size <= 8). Cross-machine CP has precision issues.")
"""  # noqa: E501
MULTI = """\
def embed(n_ids, n_embed):
    if n_ids != n_embed:
        raise RuntimeError(
            f"Insufficient multimodal embedding length:\\n"
            f"num_mm_tokens_in_input_ids={n_ids}\\n"
            f"vs num_mm_tokens_in_embedding={n_embed}.\\n"
            "This is an internal error"
        )
"""
REGISTRY = """\
def create(kind):
    if kind == "mamba":
        raise ValueError("Host-pool retraction does not support Mamba models.")
    if kind == "":
        raise ValueError("Unknown tree cache kind")
"""
OTHER_REGISTRY = """\
def lookup(name):
    raise KeyError(f"no model registered as {name!r}")
"""
SP = "/usr/lib/python3.11/site-packages/pkg"

PASTES = [
    # exact, with and without type
    "ValueError: Host-pool retraction does not support Mamba models.",
    "Host-pool retraction does not support Mamba models.",
    # 2. end punctuation missing, added
    "ValueError: Cannot find any of ['quant_method'] in the model's quantization config",
    "ValueError: Unknown tree cache kind.",
    "ValueError: Host-pool retraction does not support Mamba models",
    # 3. collectors' prefixes on every line
    "\n".join(
        f"sglang_service-1  | {line}"
        for line in (
            "RuntimeError: Insufficient multimodal embedding length:",
            "num_mm_tokens_in_input_ids=16325",
            "vs num_mm_tokens_in_embedding=5391.",
            "This is an internal error",
        )
    ),
    "Nov 30 10:12:44 gpu-node-7 python[1234]: ValueError: Unknown tree cache kind",
    # 4. reworded since the user's release: the frame's file, function and line
    "Traceback (most recent call last):\n"
    f'  File "{SP}/srt/cache.py", line 3, in __init__\n'
    '    raise ValueError("HiCache only supports MHA, MLA, and NSA (DSA) models")\n'
    "ValueError: HiCache only supports MHA, MLA, and NSA (DSA) models\n",
    # a bare assert, its line moved
    "Traceback (most recent call last):\n"
    f'  File "{SP}/srt/cache.py", line 9, in __init__\n'
    '    assert pages % 16 == 0, "pages must be a multiple of 16"\n'
    "AssertionError: pages must be a multiple of 16\n",
    # the frame pins the line
    "Traceback (most recent call last):\n"
    f'  File "{SP}/srt/registry.py", line 3, in create\n'
    "ValueError: Host-pool retraction does not support Mamba models.\n",
    # 7. words between a log prefix and the message; a logger's name
    "[2026-11-30 10:12:44 TP0] Scheduler hit an exception: Context parallel only supports "
    "single machine (tp_size <= 8)...",
    "[2026-11-30 10:12:44 TP0] Scheduler hit an exception: ValueError: Unknown tree cache kind",
    "2026-11-30 10:12:44,123 ERROR pkg.srt.registry: Host-pool retraction does not support "
    "Mamba models.",
    # path:line, a file name alone, a path without line
    "pkg/srt/registry.py:3",
    "registry.py:5",
    "srt/cache.py:4",
    # fragments, words, another type
    "does not support Mamba",
    "TypeError: Host-pool retraction does not support Mamba models.",
    "KeyError: \"no model registered as 'llama'\"",
    # nothing
    "ZeroDivisionError: division by zero",
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.",
]


#: The shapes of issue 35: a log line before a cut traceback, a traceback
#: starting mid-way, errors inside JSON (and a Python dict's repr), wrapped
#: and indented lines, a bare assert in a moved folder, a megabyte line.
SHAPES = [
    "[2025-08-12 08:24:37] Error in request: Host-pool retraction does not support Mamba models.\n"
    "Traceback (most recent call last):\n"
    f'  File "{SP}/srt/server.py", line 10, in handle\n'
    "    run()\n",
    f'  File "{SP}/srt/registry.py", line 5, in create\n'
    '    raise ValueError("Unknown tree cache kind")\n'
    "ValueError: Unknown tree cache kind\n"
    "Traceback (most recent call last):\n"
    f'  File "{SP}/srt/server.py", line 3, in main\n',
    json.dumps({"object": "error", "message": "Unknown tree cache kind", "code": 400}),
    "data: "
    + json.dumps(
        {
            "choices": [
                {
                    "finish_reason": {
                        "type": "abort",
                        "message": "KeyError: 'no model registered as \\'llama\\''",
                    }
                }
            ]
        }
    ),
    "openai.BadRequestError: Error code: 400 - "
    + repr({"object": "error", "message": "Host-pool retraction does not support Mamba models."}),
    "2025-08-12 08:24:37 ERROR "
    + json.dumps(
        {
            "exc_info": "Traceback (most recent call last):\n"
            f'  File "{SP}/srt/cache.py", line 9, in __init__\n'
            '    assert pages % 16 == 0, "pages must be a multiple of 16"\n'
            "AssertionError: pages must be a multiple of 16"
        }
    ),
    "[2025-08-12 08:24:37 TP0] RuntimeError: the kernels of this wheel were built for machines\n"
    "    that does not support Mamba models.\n",
    "[2025-08-12 08:24:36 TP0] Load weight end.\n"
    "[2025-08-12 08:24:37 TP0] ValueError: Host-pool retraction does not\n"
    "        support Mamba models.\n"
    "[2025-08-12 08:24:37] Received sigquit from a child process.\n",
    "    Traceback (most recent call last):\n"
    f'      File "{SP}/srt/registry.py", line 44, in create\n'
    "    ValueError: Unknown tree cache kind\n",
    "Traceback (most recent call last):\n"
    f'  File "{SP}/srt/legacy/cache.py", line 30, in __init__\n'
    '    assert pages % 16 == 0, "pages must be a multiple of 16"\n'
    "AssertionError\n",
    "[" + "TP0 " * 262_144,
    "[2026-01-01 10:00:00 TP0] ValueError: Unknown tree cache kind" + " " * 300_000,
]


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> tuple[MineResult, Path]:
    root = tmp_path_factory.mktemp("parity")
    repo_root = root / "repo"
    repo_root.mkdir()
    repo = git.Repo.init(repo_root, initial_branch="main")
    with repo.config_writer() as cfg:
        cfg.set_value("commit", "gpgsign", "false")
    write_files(
        repo_root,
        {
            "pkg/srt/cache.py": CACHE,
            "pkg/srt/multi.py": MULTI,
            "pkg/srt/registry.py": REGISTRY,
            "pkg/models/registry.py": OTHER_REGISTRY,
        },
    )
    commit_all(repo, "fixture", "v1")
    mined = mine_and_analyze(str(repo_root), "v1", slug="o/pkg", link_ref="v1")
    publish_site(mined, root / "site", jobs=1)
    return mined.result, root / "site"


def python_results(index: LookupIndex, paste: str) -> list[list[object]]:
    return [
        [m.card.error_id, round(m.score, 3), m.site.path, m.site.line]
        for m in index.search(paste, limit=5)
    ]


def test_the_site_ships_the_rules(built) -> None:
    text = (built[1] / "search-data.js").read_text()
    import json

    data = json.loads(text[text.index("=") + 1 : text.rindex(";")])
    assert data["rules"] == RULES and data["patterns"] == LINE_PATTERNS


def test_site_search_and_lookup_agree_on_every_paste(built) -> None:
    result, site = built
    index = LookupIndex.from_errors(result.errors)
    page = node_search(site, PASTES + SHAPES)
    for paste, shown in zip(PASTES + SHAPES, page, strict=True):
        expected = python_results(index, paste)
        got = [[r[0], round(r[1], 3), r[2], r[3]] for r in shown]
        assert got == expected, paste


def test_the_table_covers_every_kind(built) -> None:
    """The table is no table of misses: most pastes find a good card, the
    last two none, and the reworded and punctuation forms are among the good."""
    result, _ = built
    index = LookupIndex.from_errors(result.errors)
    good = [bool(index.search(p)) and index.search(p)[0].good for p in PASTES]
    assert good[-2:] == [False, False]
    assert sum(good) >= len(PASTES) - 4
    by_message = {e.message: e.error_id for e in result.errors}
    assert (
        index.search(PASTES[2])[0].card.error_id
        == by_message["Cannot find any of {['quant_method']} in the model's quantization config."]
    )
    assert (
        index.search(PASTES[7])[0].card.error_id
        == by_message["HiCache only supports MHA, MLA, and MSA models"]
    )


def test_errors_of_other_releases_are_searched(built, tmp_path: Path) -> None:
    """A retired error handed to :func:`search_data` is found by the page
    with the same rules, labelled."""
    import dataclasses
    import json

    from miner.model import MessagePart
    from miner.publish.html import search_data

    result, site = built
    (host,) = [e for e in result.errors if e.message and e.message.startswith("Host-pool")]
    retired = dataclasses.replace(
        host,
        error_id="0123456789abcdef",
        message="Host-pool retraction does not support Jamba models.",
        message_parts=(MessagePart(text="Host-pool retraction does not support Jamba models."),),
    )
    data = search_data(result, retired=[(retired, "retired in v0")])
    assert data["docs"][-1][0] == "0123456789abcdef" and data["docs"][-1][9] == "retired in v0"
    assert {d[9] for d in data["docs"][:-1]} == {""}
    copy = tmp_path / "site"
    (copy / "static").mkdir(parents=True)
    (copy / "static" / "search.js").write_text((site / "static" / "search.js").read_text())
    (copy / "search-data.js").write_text(f"window.RAISE_MINER_SEARCH = {json.dumps(data)};\n")
    (top, *_), *_ = node_search(
        copy, ["ValueError: Host-pool retraction does not support Jamba models."]
    )
    assert top[0] == "0123456789abcdef" and top[1] >= 0.9


def test_the_shapes_find_their_cards(built) -> None:
    """The shapes of issue 35 are no table of misses either: each finds its
    card with a good score, the wrapped pieces of another message and the
    megabyte line none."""
    result, _ = built
    index = LookupIndex.from_errors(result.errors)
    by_message = {e.message: e.error_id for e in result.errors}
    host = by_message["Host-pool retraction does not support Mamba models."]
    unknown = by_message["Unknown tree cache kind"]
    pages = by_message["pages must be a multiple of 16"]
    model = by_message["no model registered as {name!r}"]
    expected = [
        host,
        unknown,
        unknown,
        model,
        host,
        pages,
        None,
        host,
        unknown,
        pages,
        None,
        unknown,
    ]
    found = []
    for paste in SHAPES:
        best = index.search(paste)
        found.append(best[0].card.error_id if best and best[0].good else None)
    assert found == expected


def test_the_page_reads_pastes_as_parse_paste(built) -> None:
    """Every exception, reading, role and frame the CLI reads in a paste,
    the page reads too, in the same order."""
    from searchjs import node_parse

    from miner.lookup import parse_paste

    pastes = PASTES + SHAPES[:-1]
    for text, page in zip(pastes, node_parse(built[1], pastes), strict=True):
        python = [
            [
                r.exception,
                list(r.messages),
                r.role,
                r.alone,
                [[f.path, f.line, f.function, f.code] for f in r.frames],
            ]
            for r in parse_paste(text)
        ]
        assert page == python, text[:200]
