"""The blob cache: served only for the same blob and extractor version, re-pathed,
never trusted when damaged, foreign or locked, and safe to share."""

from __future__ import annotations

import logging
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import add_commit

from miner import pipeline
from miner.cli import main
from miner.mining import cache as cache_mod
from miner.mining.cache import FILENAME, BlobCache, extractor_version, repath
from miner.mining.extraction import MineOptions
from miner.model import FileResult, MineResult

FILES = {
    "pkg/a.py": "def f(x):\n    if not x:\n        raise ValueError(f'bad {x!r}')\n",
    "pkg/b.py": "class C:\n    def g(self, n):\n        assert n > 0, 'n must be positive'\n",
    "pkg/c.py": "x = 1\n",
}


def mine(root: Path, rev: str, cache_dir: Path | None, **kw) -> MineResult:
    kw.setdefault("jobs", 1)
    options = MineOptions(cache=cache_dir is not None, cache_dir=cache_dir, **kw)
    return pipeline.mine(str(root), rev, options=options)


def test_warm_run_parses_nothing_and_gives_the_same_records(make_repo, tmp_path: Path) -> None:
    root = make_repo(FILES)
    cold = mine(root, "v1", tmp_path / "cache")
    warm = mine(root, "v1", tmp_path / "cache")
    plain = mine(root, "v1", None)
    assert cold.stats is not None and warm.stats is not None
    assert (cold.stats.cache_hits, cold.stats.parsed, cold.stats.cache) == (0, 3, "used")
    assert (warm.stats.cache_hits, warm.stats.parsed, warm.stats.jobs) == (3, 0, 0)
    assert warm.files == cold.files == plain.files
    assert warm.sites == plain.sites
    assert [s.message for s in warm.sites] == ["bad {x!r}", "n must be positive"]


def test_only_new_blobs_are_parsed(make_repo, tmp_path: Path) -> None:
    root = make_repo(FILES)
    mine(root, "v1", tmp_path / "cache")
    add_commit(root, {"pkg/a.py": FILES["pkg/a.py"] + "raise KeyError('k')\n"}, tag="v2")
    second = mine(root, "v2", tmp_path / "cache")
    assert second.stats is not None
    assert (second.stats.blobs, second.stats.cache_hits, second.stats.parsed) == (3, 2, 1)
    assert second.files == mine(root, "v2", None).files


def test_a_blob_cached_at_another_path_is_served_with_this_path(make_repo, tmp_path: Path) -> None:
    root = make_repo(FILES)
    mine(root, "v1", tmp_path / "cache")
    add_commit(root, {"moved/deeper/a_copy.py": FILES["pkg/a.py"]}, tag="v2", remove=("pkg/a.py",))
    served = mine(root, "v2", tmp_path / "cache")
    assert served.stats is not None and served.stats.parsed == 0
    (site_a, site_b) = served.sites
    assert site_a.path == "moved/deeper/a_copy.py"
    assert (site_a.line, site_a.message) == (3, "bad {x!r}")
    moved = next(f for f in served.files if f.path == "moved/deeper/a_copy.py")
    assert all(s.path == moved.path for s in moved.sites)
    assert served.files == mine(root, "v2", None).files
    assert served.sites == mine(root, "v2", None).sites


def test_one_blob_at_two_paths_is_parsed_once(make_repo, tmp_path: Path) -> None:
    root = make_repo({"x/one.py": FILES["pkg/a.py"], "y/two.py": FILES["pkg/a.py"]})
    result = mine(root, "v1", tmp_path / "cache")
    assert result.stats is not None
    assert (result.stats.files, result.stats.blobs, result.stats.parsed) == (2, 1, 1)
    assert [(s.path, s.line) for s in result.sites] == [("x/one.py", 3), ("y/two.py", 3)]


def test_repath_replaces_every_path() -> None:
    root_result = FileResult(path="a.py", blob="1" * 40, status="mined")
    assert repath(root_result, "a.py") is root_result
    assert repath(root_result, "b/a.py").path == "b/a.py"


def test_a_garbage_cache_file_is_moved_aside_and_rebuilt(make_repo, tmp_path: Path, caplog) -> None:
    root = make_repo(FILES)
    cache_dir = tmp_path / "cache"
    cache_dir.mkdir()
    (cache_dir / FILENAME).write_bytes(b"this is not a database" * 100)
    with caplog.at_level(logging.WARNING, logger="miner"):
        result = mine(root, "v1", cache_dir)
    assert result.stats is not None and result.stats.cache == "rebuilt"
    assert "cache unusable (file is not a database); moved it to *.bad" in caplog.text
    assert result.files == mine(root, "v1", None).files
    assert (cache_dir / (FILENAME + ".bad")).read_bytes().startswith(b"this is not")
    again = mine(root, "v1", cache_dir)
    assert again.stats is not None and (again.stats.cache_hits, again.stats.cache) == (3, "used")


def test_a_damaged_row_is_never_served(make_repo, tmp_path: Path, caplog) -> None:
    root = make_repo(FILES)
    cache_dir = tmp_path / "cache"
    good = mine(root, "v1", cache_dir)
    with sqlite3.connect(cache_dir / FILENAME) as conn:
        conn.execute("UPDATE results SET data = ?", (b"junk",))
    with caplog.at_level(logging.WARNING, logger="miner"):
        result = mine(root, "v1", cache_dir)
    assert "cache damaged (damaged row for blob" in caplog.text
    assert result.stats is not None
    assert (result.stats.cache_hits, result.stats.parsed, result.stats.cache) == (0, 3, "rebuilt")
    assert result.files == good.files
    again = mine(root, "v1", cache_dir)
    assert again.stats is not None and again.stats.cache_hits == 3


def test_a_row_holding_another_blob_is_never_served(make_repo, tmp_path: Path, caplog) -> None:
    root = make_repo(FILES)
    cache_dir = tmp_path / "cache"
    good = mine(root, "v1", cache_dir)
    a_blob, b_blob = (
        next(f.blob for f in good.files if f.path == p) for p in FILES if "c" not in p
    )
    with sqlite3.connect(cache_dir / FILENAME) as conn:
        (b_data,) = conn.execute("SELECT data FROM results WHERE blob = ?", (b_blob,)).fetchone()
        conn.execute("UPDATE results SET data = ? WHERE blob = ?", (b_data, a_blob))
    with caplog.at_level(logging.WARNING, logger="miner"):
        result = mine(root, "v1", cache_dir)
    assert f"row for blob {a_blob} holds blob {b_blob}" in caplog.text
    assert result.files == good.files


@pytest.mark.parametrize(
    "setup, reason",
    [
        ("PRAGMA user_version = 7", "cache format 7, this miner reads format 4"),
        ("PRAGMA application_id = 42", "not a raise-miner cache (application_id 0x2a)"),
    ],
)
def test_a_foreign_cache_file_is_rebuilt(
    make_repo, tmp_path: Path, caplog, setup: str, reason: str
) -> None:
    root = make_repo(FILES)
    cache_dir = tmp_path / "cache"
    mine(root, "v1", cache_dir)
    with sqlite3.connect(cache_dir / FILENAME) as conn:
        conn.execute(setup)
    with caplog.at_level(logging.WARNING, logger="miner"):
        result = mine(root, "v1", cache_dir)
    assert f"cache unusable ({reason}); moved it to *.bad and rebuilt it" in caplog.text
    assert result.stats is not None and (result.stats.cache, result.stats.parsed) == ("rebuilt", 3)


def test_another_extractor_version_is_never_served(make_repo, tmp_path: Path) -> None:
    root = make_repo(FILES)
    cache_dir = tmp_path / "cache"
    mine(root, "v1", cache_dir)
    with BlobCache.open(cache_dir, version="f" * 64) as other:
        assert other.get_many([f.blob for f in mine(root, "v1", None).files]) == {}
    with BlobCache.open(cache_dir) as ours:
        assert len(ours.get_many([f.blob for f in mine(root, "v1", None).files])) == 3


def test_old_versions_are_pruned(tmp_path: Path) -> None:
    result = FileResult(path="a.py", blob="a" * 40, status="mined")
    for n in range(6):
        with BlobCache.open(tmp_path, version=f"{n:064x}") as cache:
            cache.put_many([result])
    with sqlite3.connect(tmp_path / FILENAME) as conn:
        kept = [r[0] for r in conn.execute("SELECT DISTINCT version FROM results ORDER BY 1")]
    assert kept == [f"{n:064x}" for n in (2, 3, 4, 5)]


def test_version_follows_the_extractor_source(tmp_path: Path, monkeypatch) -> None:
    package = Path(cache_mod.__file__).resolve().parent.parent
    copy = tmp_path / "miner"
    shutil.copytree(package / "extract", copy / "extract")
    shutil.copy(package / "model.py", copy / "model.py")
    monkeypatch.setattr(cache_mod, "_PACKAGE", copy)
    assert extractor_version() == cache_mod.extractor_version()
    before = extractor_version()
    (copy / "render.py").write_text("# not part of the records\n")
    assert extractor_version() == before
    with (copy / "extract" / "template.py").open("a") as fh:
        fh.write("\n# a change\n")
    assert extractor_version() != before


@pytest.mark.parametrize(
    "lock, warning, expected",
    [
        (  # another writer's transaction: reads go on, this run writes nothing
            ["BEGIN IMMEDIATE"],
            "cache write lock busy (database is locked); results of this run are not cached",
            (3, 1, "read-only"),
        ),
        (  # a lock that keeps readers out as well: the cache is bypassed
            ["PRAGMA locking_mode = EXCLUSIVE", "BEGIN EXCLUSIVE"],
            "cannot use the cache (database is locked); mining without it",
            (0, 4, "off"),
        ),
    ],
)
def test_a_lock_held_elsewhere_past_the_timeout_is_not_waited_for(
    make_repo, tmp_path: Path, caplog, lock: list[str], warning: str, expected: tuple
) -> None:
    root = make_repo(FILES)
    cache_dir = tmp_path / "cache"
    mine(root, "v1", cache_dir)
    add_commit(root, {"pkg/new.py": "raise OSError('new')\n"}, tag="v2")
    holder = sqlite3.connect(cache_dir / FILENAME, isolation_level=None)
    for statement in lock:
        holder.execute(statement)
    try:
        with caplog.at_level(logging.WARNING, logger="miner"):
            result = mine(root, "v2", cache_dir, cache_lock_timeout=0.2)
    finally:
        holder.rollback()
        holder.close()
    assert warning in caplog.text
    assert result.stats is not None
    assert (result.stats.cache_hits, result.stats.parsed, result.stats.cache) == expected
    assert result.files == mine(root, "v2", None).files


def test_no_cache_neither_reads_nor_writes(make_repo, tmp_path: Path, capsys) -> None:
    root = make_repo(FILES)
    cache_dir = tmp_path / "cache"
    args = ["mine", "--repo", str(root), "--commit", "v1", "--cache-dir", str(cache_dir)]
    assert main([*args, "--out", str(tmp_path / "o1"), "--no-cache", "--jobs", "1"]) == 0
    assert not (cache_dir / FILENAME).exists()
    assert "blobs: 3 distinct, 0 from cache (cache off), 3 parsed (1 workers)" in (
        capsys.readouterr().out
    )
    assert main([*args, "--out", str(tmp_path / "o2"), "--jobs", "1"]) == 0
    assert "0 from cache (cache used), 3 parsed" in capsys.readouterr().out
    assert main([*args, "--out", str(tmp_path / "o3"), "--jobs", "1"]) == 0
    assert "records: read from the commit store" in capsys.readouterr().out
    for name in ("manifest.json", "sites.jsonl", "index.md"):
        assert (tmp_path / "o1" / name).read_bytes() == (tmp_path / "o3" / name).read_bytes()


@pytest.mark.slow
def test_two_processes_sharing_one_cache_do_not_corrupt_it(make_repo, tmp_path: Path) -> None:
    files = {
        f"pkg/m{n:03d}.py": f"def f{n}(x):\n    if x:\n        raise ValueError('v{n}')\n"
        * (n % 5 + 1)
        for n in range(400)
    }
    root = make_repo(files)
    add_commit(root, {f"pkg/m{n:03d}.py": f"raise KeyError('k{n}')\n" for n in range(0, 400, 3)})
    add_commit(root, {}, tag="v2")
    cache_dir = tmp_path / "shared-cache"
    env = {k: v for k, v in os.environ.items() if k != "RAISE_MINER_TEST_HOOKS"}
    runs = []
    for n, rev in enumerate(("v1", "v2", "v1", "v2")):
        cmd = [sys.executable, "-m", "miner", "mine", "--repo", str(root), "--commit", rev]
        cmd += ["--out", str(tmp_path / f"out{n}"), "--cache-dir", str(cache_dir), "--jobs", "1"]
        cmd.append("-q")  # stderr: the cache's warnings alone, without the progress lines
        runs.append(subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE))
    outputs = [run.communicate(timeout=300) for run in runs]
    assert [run.returncode for run in runs] == [0, 0, 0, 0], outputs
    for warning in (err for _out, err in outputs):
        assert b"cache" not in warning
    with sqlite3.connect(cache_dir / FILENAME) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        (rows,) = conn.execute("SELECT COUNT(*) FROM results").fetchone()
    assert rows == 400 + len(range(0, 400, 3))
    reference = {rev: mine(root, rev, None) for rev in ("v1", "v2")}
    for n, rev in enumerate(("v1", "v2", "v1", "v2")):
        lines = (tmp_path / f"out{n}" / "sites.jsonl").read_text().splitlines()
        assert len(lines) == len(reference[rev].sites)
    assert (tmp_path / "out0" / "sites.jsonl").read_bytes() == (
        tmp_path / "out2" / "sites.jsonl"
    ).read_bytes()
    warm = mine(root, "v2", cache_dir)
    assert warm.stats is not None and warm.stats.parsed == 0
    assert warm.files == reference["v2"].files


MOVED = {
    "pkg/a.py": (
        "import os\n\n\nclass Loader:\n"
        "    def load(self, path, mode):\n"
        "        if not path:\n"
        "            return None\n"
        "        if mode == 'fast':\n"
        "            raise ValueError(f'no fast load for {path}')\n"
        "        return path\n\n\n"
        "def top(x):\n"
        "    if x is None:\n"
        "        raise TypeError('x is None')\n"
        "    return x\n"
    ),
}


@pytest.mark.parametrize("jobs", [0, 2])
def test_a_changed_file_parses_only_its_changed_units(
    make_repo, tmp_path: Path, monkeypatch, jobs: int
) -> None:
    """The sites of a unit whose text and context are unchanged come from
    the cache's ``units`` table, placed at the unit's new lines, with the
    excerpt of the new file: the records equal those of a run without cache."""
    from miner.extract import runner

    root = make_repo(MOVED)
    cache_dir = tmp_path / "cache"
    mine(root, "v1", cache_dir, jobs=jobs)
    text = MOVED["pkg/a.py"]
    changed = text.replace("import os\n", "import os\nimport sys\n\nDEBUG = 1\n").replace(
        "    if x is None:", "    if x == 0:\n        return 0\n    if x is None:"
    )
    add_commit(root, {"pkg/a.py": changed}, tag="v2")
    parsed: list[str] = []
    real = runner.cst.parse_module

    def counting(code: str, *args, **kwargs):
        parsed.append(code)
        return real(code, *args, **kwargs)

    if jobs == 0:  # the workers of jobs=2 run in other processes
        monkeypatch.setattr(runner.cst, "parse_module", counting)
    second = mine(root, "v2", cache_dir, jobs=jobs)
    parsed_by_second = list(parsed)
    plain = mine(root, "v2", None, jobs=0)
    assert second.files == plain.files
    assert [(s.line, s.excerpt.start_line) for s in second.sites] == [(12, 1), (20, 2)]
    if jobs == 0:
        # load's unit moved by three lines and is served; top's has a new exit before it
        assert len(parsed_by_second) == 1 and "x is None" in parsed_by_second[0]
        assert len(parsed) == 3  # the run without cache parses both


def test_a_damaged_unit_row_is_parsed_again(make_repo, tmp_path: Path) -> None:
    root = make_repo(MOVED)
    cache_dir = tmp_path / "cache"
    mine(root, "v1", cache_dir)
    with sqlite3.connect(cache_dir / FILENAME) as conn:
        assert conn.execute("SELECT count(*) FROM units").fetchone()[0] == 2
        conn.execute("UPDATE units SET data = ?", (b"junk",))
        conn.execute("DELETE FROM results")
    again = mine(root, "v1", cache_dir)
    assert again.files == mine(root, "v1", None).files


@pytest.mark.parametrize("old_format", [1, 2, 3])
def test_an_older_cache_is_upgraded_in_place(tmp_path: Path, old_format: int) -> None:
    """A cache written before the ``units`` (format 1), ``helpers``
    (format 2) or ``facts`` (format 3) table keeps its file: the tables are added."""
    with sqlite3.connect(tmp_path / FILENAME) as conn:
        conn.execute(
            "CREATE TABLE results (version TEXT NOT NULL, blob TEXT NOT NULL, "
            "data BLOB NOT NULL, PRIMARY KEY (version, blob)) WITHOUT ROWID"
        )
        conn.execute(
            "CREATE TABLE versions (version TEXT PRIMARY KEY, last_used REAL NOT NULL) "
            "WITHOUT ROWID"
        )
        conn.execute(f"PRAGMA application_id = {cache_mod.APPLICATION_ID}")
        if old_format >= 2:
            conn.execute(
                "CREATE TABLE units (version TEXT NOT NULL, key TEXT NOT NULL, "
                "data BLOB NOT NULL, PRIMARY KEY (version, key)) WITHOUT ROWID"
            )
        if old_format == 3:
            conn.execute(
                "CREATE TABLE helpers (version TEXT NOT NULL, blob TEXT NOT NULL, "
                "data BLOB NOT NULL, PRIMARY KEY (version, blob)) WITHOUT ROWID"
            )
        conn.execute(f"PRAGMA user_version = {old_format}")
    with BlobCache.open(tmp_path) as cache:
        assert cache.state == "used"
        cache.put_units([("k" * 64, cache_mod.encode_sites(()))])
        reader = cache.unit_reader()
        assert reader is not None and reader.get("k" * 64) == ()
        reader.close()
        cache.put_helpers([("b" * 40, ())])
        assert cache.get_helpers(["b" * 40, "c" * 40]) == {"b" * 40: ()}
        cache.put_facts([("b" * 40, b"facts")])
        assert cache.get_facts(["b" * 40, "c" * 40]) == {"b" * 40: b"facts"}
    with sqlite3.connect(tmp_path / FILENAME) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 4
