"""Each file's facts read alone (in the extraction's workers), kept in the
blob cache, and joined in the parent into the same facts as read whole."""

from __future__ import annotations

import dataclasses
import sqlite3
import textwrap
from pathlib import Path

import pytest

from miner import pipeline
from miner.analysis import filefacts
from miner.analysis.facts import FileFacts, RepoFacts, collect, file_facts
from miner.extract.runner import extract_file
from miner.mining import pool
from miner.mining.cache import FILENAME
from miner.mining.extraction import MineOptions, stored_file_facts
from miner.model import CommitInfo, Site

INFO = CommitInfo("repo", "acme/pkg", "v1", "a" * 40, "2026-01-01T00:00:00+00:00")

LOOP = '''\
"""Waiting for a worker.

Polls until a deadline."""
import functools
import time

LIMIT = 8


def wait(deadline, ready, strict):
    while time.time() < deadline:
        if strict and not ready():
            raise ValueError("not ready")
    raise TimeoutError("timed out")


@functools.cache
def load(name, n):
    if n > LIMIT:
        raise ValueError("too many")
'''

CLI = """\
import argparse

verbose: bool = False


def parse(argv):
    parser = argparse.ArgumentParser()
    parser.add_argument("--max-items", type=int, default=8, help="Most items.")
    args = parser.parse_args(argv)
    if args.max_items < 1 or verbose:
        raise ValueError("max items must be positive")
    return args
"""

FILES = {
    "pkg/__init__.py": "",
    "pkg/loop.py": LOOP,
    "pkg/cli.py": CLI,
    "pkg/other.py": "def helper(x):\n    return wait(x, None, True)\n",
}


def _sites(data: dict[str, bytes]) -> tuple[Site, ...]:
    mined = [extract_file(p, "0" * 40, d) for p, d in sorted(data.items())]
    return pipeline.assemble(INFO, mined).sites


def _data() -> dict[str, bytes]:
    return {p: t.encode() for p, t in FILES.items()}


def _by_path(sites: tuple[Site, ...], path: str) -> list[Site]:
    return [s for s in sites if s.path == path]


def _in_order(facts: RepoFacts) -> dict[str, object]:
    """Every field of ``facts``, its mappings as lists of items (their order counts)."""
    return {
        f.name: list(v.items()) if isinstance(v := getattr(facts, f.name), dict) else v
        for f in dataclasses.fields(facts)
    }


def test_the_facts_joined_from_each_files_record_equal_the_facts_read_whole() -> None:
    data = _data()
    sites = _sites(data)
    records, read = filefacts.complete(data, sites, {})
    assert sorted(read) == sorted(data)
    joined = collect(data, sites, known=records)
    whole = collect(data, sites)
    assert _in_order(joined) == _in_order(whole)
    # LOOP's lines: the while loop on 11, its raise on 13, the raise after it on 14
    assert dict(joined.loop_ends) == {("pkg/loop.py", 11): 14}
    assert list(joined.module_values.items()) == [
        (("pkg/cli.py", "verbose"), (3, "False")),
        (("pkg/loop.py", "LIMIT"), (7, "8")),
    ]
    assert joined.module_docs == {"pkg/loop.py": "Waiting for a worker."}
    assert joined.module_doc_lines == {"pkg/loop.py": 1}
    assert joined.booleans == {"verbose"}
    (option,) = joined.config.options
    assert (option.name, option.flags, option.path) == ("max_items", ("--max-items",), "pkg/cli.py")
    # the module name is the configuration model's (it reads the other files' paths)
    assert records["pkg/cli.py"].argparse == (dataclasses.replace(option, module=None),)
    assert records["pkg/loop.py"].argparse is None
    ((key, (decorator,)),) = joined.decorators.items()
    assert key == ("pkg/loop.py", "load") and (decorator.line, decorator.text) == (
        17,
        "@functools.cache",
    )


def test_a_record_is_the_same_made_from_the_sites_as_extracted() -> None:
    """The workers see a file's sites before they get their ids: the record
    is the same, and is used for the sites with ids."""
    data = _data()
    sites = _sites(data)
    extracted = extract_file("pkg/loop.py", "0" * 40, data["pkg/loop.py"]).sites
    made = filefacts.decode(filefacts.WorkerFacts()("pkg/loop.py", data["pkg/loop.py"], extracted))
    assert made == file_facts("pkg/loop.py", data["pkg/loop.py"], _by_path(sites, "pkg/loop.py"))
    records, read = filefacts.complete(data, sites, {"pkg/loop.py": made})
    assert "pkg/loop.py" not in read and records["pkg/loop.py"] is made


def test_a_record_read_with_other_sites_or_at_another_path_is_read_again() -> None:
    data = _data()
    sites = _sites(data)
    fewer = file_facts("pkg/loop.py", data["pkg/loop.py"], _by_path(sites, "pkg/loop.py")[:1])
    _, read = filefacts.complete(data, sites, {"pkg/loop.py": fewer})
    assert "pkg/loop.py" in read
    rows = {"b" * 40: filefacts.encode(fewer)}
    assert filefacts.known_records(rows, {"b" * 40: ["pkg/moved.py"]}) == {}
    assert filefacts.known_records(rows, {"b" * 40: ["pkg/loop.py"]}) == {"pkg/loop.py": fewer}


def test_a_damaged_record_or_one_of_other_code_is_not_used(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    record = file_facts("pkg/c.py", b"x = 1\n", [])
    stored = filefacts.encode(record)
    assert filefacts.decode(stored) == record
    assert filefacts.decode(b"junk") is None
    monkeypatch.setattr(filefacts, "facts_version", lambda: "other code")
    assert filefacts.decode(stored) is None


def test_the_version_names_the_code_that_makes_a_record() -> None:
    """:func:`~miner.analysis.filefacts.facts_version` reads the modules
    ``facts`` imports, directly or not: nested (the nested exits) is one of
    them, the origins stage and the package's ``__init__`` are not."""
    modules = filefacts.record_modules()
    assert {"miner.analysis.facts", "miner.analysis.nested", "miner.model"} <= set(modules)
    assert not {"miner.analysis", "miner.analysis.origins", "miner.pipeline"} & set(modules)
    assert len(filefacts.facts_version()) == 64


def test_a_failing_hook_costs_only_its_bytes() -> None:
    result = extract_file("pkg/a.py", "0" * 40, b"raise ValueError('x')\n")

    def broken(path: str, data: bytes, sites: object) -> bytes:
        raise RuntimeError("boom")

    assert pool.hooked(broken, b"raise ValueError('x')\n", result) is None
    assert pool.hooked(lambda p, d, s: p.encode(), b"", result) == b"pkg/a.py"


@pytest.mark.parametrize("jobs", [0, 1])
def test_a_mine_keeps_each_files_facts_in_the_blob_cache_for_the_next_run(
    make_repo, tmp_path: Path, jobs: int
) -> None:
    root = make_repo(FILES)
    cache_dir = tmp_path / "cache"
    options = MineOptions(jobs=jobs, cache_dir=cache_dir)
    mining = pipeline.start_mining(str(root), "v1", options=options)
    with sqlite3.connect(cache_dir / FILENAME) as conn:
        (rows,) = conn.execute("SELECT count(*) FROM facts").fetchone()
    assert rows == len(FILES)
    sources = pipeline.facts_sources(mining.repo, mining.entries, mining.result)
    blobs = {e.blob: [e.path] for e in mining.entries}
    stored = stored_file_facts(options, True, blobs)
    known = filefacts.known_records(stored, blobs)
    assert set(known) == set(FILES)
    records, read = filefacts.complete(sources, mining.result.sites, known)
    assert read == []
    assert all(isinstance(r, FileFacts) for r in records.values())
    facts, _ = pipeline.commit_facts(mining)
    assert _in_order(facts) == _in_order(collect(sources, mining.result.sites))


def test_the_workers_compute_no_facts_without_the_cache(make_repo, tmp_path: Path) -> None:
    root = make_repo(FILES)
    mining = pipeline.start_mining(str(root), "v1", options=MineOptions(jobs=1, cache=False))
    assert mining.options is not None and mining.options.file_facts is None
    facts, sources = pipeline.commit_facts(mining)
    assert _in_order(facts) == _in_order(collect(sources, mining.result.sites))


def test_the_fixture_lines_are_where_the_test_says() -> None:
    lines = textwrap.dedent(LOOP).split("\n")
    assert lines[10].lstrip().startswith("while ") and lines[13].lstrip().startswith("raise T")
    assert lines[6] == "LIMIT = 8" and lines[16] == "@functools.cache"
    assert CLI.split("\n")[2] == "verbose: bool = False"
