"""Every way of mining gives the records of the reference path: one process,
whole-module libcst parse (``extract_file(..., partial=False)``).

The other paths: parallel workers with the partial (per-unit) parse, in this
process with the partial parse, a cold cache (results stored), a warm cache
(results served, re-pathed when the blob sits elsewhere). Fixture repositories
hold this project's own source and its hard inputs (``hard_input_fixtures``);
the integration test takes every 5th file of SGLang v0.5.19
(``RAISE_MINER_IDENTITY_STEP`` changes the step; 1 compares the whole release,
about 10 CPU-minutes).

Where the reference itself cannot use libcst on the whole module (it fails,
or a fallback parser made the records), the partial parse may legitimately do
better: a unit can parse where the whole file does not (see
``fallback_lone_backslash.py``). Those files are listed, not compared.
"""

from __future__ import annotations

import os
from pathlib import Path

import git
import pytest
from hard_input_fixtures import flat_cases

from miner import pipeline
from miner.extract.runner import extract_file
from miner.mining import source
from miner.mining.extraction import MineOptions
from miner.model import FileResult

PROJECT = Path(__file__).resolve().parents[1]
FIXTURES = PROJECT / "tests" / "fixtures"
#: Inputs that kill the process running the whole-module parse (reference path).
CRASHERS = {"deep_parens.py"}


def reference(repo: git.Repo, entries: list[source.BlobRef]) -> list[FileResult]:
    return [
        extract_file(e.path, e.blob, source.read_blob(repo, e.blob), partial=False) for e in entries
    ]


def comparable(result: FileResult) -> bool:
    """The reference parsed the whole module with libcst."""
    return result.status == "mined" and all(s.parser == "libcst" for s in result.sites)


def check_all_paths(root: Path, rev: str, tmp_path: Path, jobs: int = 2) -> dict[str, int]:
    repo = git.Repo(root)
    entries = [
        e
        for e in source.python_blobs(repo, source.resolve_commit(repo, rev))
        if pipeline.skip_reason(e) is None
    ]
    expected = reference(repo, entries)
    cache_dir = tmp_path / "identity-cache"
    paths = {
        "parallel, partial": MineOptions(jobs=jobs, cache=False),
        "one process, partial": MineOptions(jobs=0, cache=False),
        "parallel, cold cache": MineOptions(jobs=jobs, cache_dir=cache_dir),
        "warm cache": MineOptions(jobs=jobs, cache_dir=cache_dir),
    }
    counts = {"files": 0, "sites": 0, "not compared": 0}
    for name, options in paths.items():
        got = pipeline.extract(repo, entries, options=options).files
        assert [g.path for g in got] == [e.path for e in entries], name
        for want, have in zip(expected, got, strict=True):
            if comparable(want):
                assert have == want, f"{name}: {want.path} differs from the full parse"
        if name == "warm cache":
            stats = pipeline.extract(repo, entries, options=options).stats
            assert stats.parsed == 0 and stats.cache_hits == stats.blobs
    compared = [w for w in expected if comparable(w)]
    counts["files"] = len(compared)
    counts["sites"] = sum(len(w.sites) for w in compared)
    counts["not compared"] = len(expected) - len(compared)
    return counts


@pytest.mark.slow
def test_project_source_all_paths_match_the_full_parse(make_repo, tmp_path: Path) -> None:
    files = {
        str(p.relative_to(PROJECT)): p.read_bytes()
        for folder in ("miner", "tests", "benchmarks")
        for p in sorted((PROJECT / folder).rglob("*.py"))
        if FIXTURES not in p.parents  # data, compared by the next test
    }
    # The same content at a second path: served from the cache, re-pathed.
    files["copies/cache.py"] = files["miner/mining/cache.py"]
    root = make_repo(files)
    counts = check_all_paths(root, "v1", tmp_path)
    assert counts["files"] == len(files)
    assert counts["sites"] > 150


@pytest.mark.slow
def test_hard_cases_all_paths_match_the_full_parse(make_repo, tmp_path: Path) -> None:
    files = {name: data for name, data in flat_cases().items() if name not in CRASHERS}
    root = make_repo(files)
    counts = check_all_paths(root, "v1", tmp_path)
    # Not compared: the three fallback_* files (the reference falls back to
    # ast), the NUL in code and the Python 2 file (the reference fails).
    assert counts == {"files": 18, "sites": 528, "not compared": 5}


@pytest.mark.integration
def test_release_sample_all_paths_match_the_full_parse(corpus: Path, tmp_path: Path) -> None:
    step = int(os.environ.get("RAISE_MINER_IDENTITY_STEP", "5"))
    repo = git.Repo(corpus)
    every = source.python_blobs(repo, source.resolve_commit(repo, "v0.5.19"))
    sample = every[::step]
    expected = reference(repo, sample)
    cache_dir = tmp_path / "identity-cache"
    for options in (
        MineOptions(cache_dir=cache_dir),  # parallel, partial, cold cache
        MineOptions(cache_dir=cache_dir),  # warm cache
        MineOptions(cache=False),  # parallel, partial, no cache
    ):
        extraction = pipeline.extract(repo, sample, options=options)
        differing = [
            want.path
            for want, have in zip(expected, extraction.files, strict=True)
            if comparable(want) and have != want
        ]
        assert differing == [], f"{len(differing)} files differ from the full parse"
    assert sum(comparable(w) for w in expected) == len(sample)
    assert sum(len(w.sites) for w in expected) > 3000


UNIT_CASES = {
    "message name bound earlier in the function": (
        "def f(x):\n    msg = 'x is bad'\n    if x:\n        raise ValueError(msg)\n",
        [("f", 4, "ValueError", "x is bad", [("if", "x", 3)])],
    ),
    "raised capitalised name bound to an instance": (
        "def f(make):\n    Problem = make()\n    for item in range(3):\n        raise Problem\n",
        [("f", 4, "Problem", None, [("for", "item in range(3)", 3)])],
    ),
    "one-line method": (
        "class C:\n    def f(self, x): raise KeyError(f'no {x}')\n",
        [("C.f", 2, "KeyError", "no {x}", [])],
    ),
    "statements sharing a line": (
        "def f(x):\n    y = (1,\n         2); raise OSError('shared')\n",
        [("f", 3, "OSError", "shared", [])],
    ),
    "guards of else, finally and case inside one body statement": (
        "def f(x, y):\n"
        "    try:\n"
        "        pass\n"
        "    except KeyError as err:\n"
        "        raise\n"
        "    else:\n"
        "        match y:\n"
        "            case [a, *_] if a:\n"
        "                raise TypeError('first')\n"
        "    finally:\n"
        "        assert x, 'x unset'\n",
        [
            ("f", 5, None, None, [("except", "KeyError", 4)]),
            ("f", 9, "TypeError", "first", [("try-else", "", 6), ("case", "[a, *_] if a", 8)]),
            ("f", 11, "AssertionError", "x unset", [("finally", "", 10), ("assert", "x", 11)]),
        ],
    ),
    "nested function inside a body statement": (
        "class K:\n"
        "    '''K doc.'''\n"
        "    def outer(self, n):\n"
        "        '''Outer doc.'''\n"
        "        if n:\n"
        "            def inner():\n"
        "                '''Inner doc.'''\n"
        "                raise RuntimeError('inner')\n"
        "            raise ValueError('outer')\n",
        [
            ("K.outer.<locals>.inner", 8, "RuntimeError", "inner", []),
            ("K.outer", 9, "ValueError", "outer", [("if", "n", 5)]),
        ],
    ),
}


@pytest.mark.parametrize("name", list(UNIT_CASES))
def test_units_cut_from_functions_give_the_full_parse_records(name: str) -> None:
    source_text, expected = UNIT_CASES[name]
    data = source_text.encode()
    partial = extract_file("m.py", "0" * 40, data, partial=True)
    full = extract_file("m.py", "0" * 40, data, partial=False)
    assert partial == full
    got = [
        (s.scope, s.line, s.exception, s.message, [(g.kind, g.test, g.line) for g in s.guards])
        for s in partial.sites
    ]
    assert got == expected
    if name == "nested function inside a body statement":
        inner, outer = partial.sites
        assert (inner.function_doc, inner.class_doc) == ("Inner doc.", "K doc.")
        assert (outer.function_doc, outer.class_doc) == ("Outer doc.", "K doc.")
