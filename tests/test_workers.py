"""The worker pool: parallel extraction that one bad file cannot sink.

Crashes come two ways: a real one (libcst's native parser segfaults on the
deeply nested parentheses of ``hard_input_fixtures.deep_parens()``, unless a
pre-check keeps the file from it) and the pool's test-only hook
(``RAISE_MINER_TEST_HOOKS=1`` and a ``# raise-miner-test: <action>`` line),
which does not depend on a parser bug.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import git
import pytest
from hard_input_fixtures import deep_parens

from miner import pipeline
from miner.cli import main
from miner.extract.runner import extract_file
from miner.mining import source
from miner.mining.extraction import MineOptions
from miner.mining.pool import Limits, Task, extract_parallel, make_batches
from miner.model import MineResult

ORDINARY = "def check_{n}(x):\n    if x < {n}:\n        raise ValueError(f'x={{x}} is below {n}')\n"


def hook(action: str, n: int = 0) -> str:
    """A file that makes the worker misbehave (``n`` keeps the blobs distinct)."""
    return f"# raise-miner-test: {action}\ndef f():\n    raise RuntimeError('never mined {n}')\n"


@pytest.fixture
def hooks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAISE_MINER_TEST_HOOKS", "1")


def mine_files(make_repo, files: dict[str, str], tmp_path: Path, **limits) -> MineResult:
    root = make_repo(files)
    options = MineOptions(jobs=2, cache=False, limits=Limits(**limits))
    return pipeline.mine(str(root), "v1", options=options)


def statuses(result: MineResult) -> dict[str, tuple[str, str | None]]:
    return {f.path: (f.status, f.reason) for f in result.files if f.status != "mined"}


def test_a_crashing_file_among_a_thousand_costs_only_itself(
    make_repo, tmp_path: Path, capsys, hooks
) -> None:
    files = {f"pkg/m{n:04d}.py": ORDINARY.format(n=n) for n in range(1000)}
    files["pkg/zz_crash.py"] = hook("segv")
    files["pkg/deep.py"] = deep_parens()
    root = make_repo(files)
    out = tmp_path / "out"

    code = main(["mine", "--repo", str(root), "--commit", "v1", "--out", str(out), "--jobs", "2"])

    assert code == 1
    manifest = json.loads((out / "manifest.json").read_text())
    counts = manifest["counts"]
    assert counts["files_mined"] == 1000
    assert counts["files_failed"] == len(files) - 1000
    assert counts["raise_sites"] == 1000
    notes = {f["path"]: (f["status"], f["reason"]) for f in manifest["files"]}
    assert notes["pkg/zz_crash.py"] == ("failed", "parser crashed (SIGSEGV)")
    # A segfault in libcst, or whatever reason a pre-check gives instead.
    assert notes["pkg/deep.py"][0] == "failed"
    assert set(notes) == set(files) - {f"pkg/m{n:04d}.py" for n in range(1000)}
    sites = [json.loads(line) for line in (out / "sites.jsonl").read_text().splitlines()]
    by_path = {s["path"]: s for s in sites}
    assert by_path["pkg/m0999.py"]["message"] == "x={x} is below 999"
    assert by_path["pkg/m0999.py"]["line"] == 3
    assert f"{len(files) - 1000} files not mined" in capsys.readouterr().err


@pytest.mark.parametrize(
    "action, limits, reason",
    [
        ("sleep", {"file_timeout": 1}, "time limit 1 s"),
        ("oom", {"memory_mb": 512}, "out of memory (limit 512 MB)"),
        # What libcst's native parser does when an allocation fails: report, abort.
        ("native-oom", {"memory_mb": 2048}, "out of memory (limit 2048 MB)"),
    ],
)
def test_a_limit_costs_one_file(
    make_repo, tmp_path: Path, hooks, action: str, limits: dict, reason: str
) -> None:
    files = {f"m{n}.py": ORDINARY.format(n=n) for n in range(20)}
    files["bad.py"] = hook(action)
    result = mine_files(make_repo, files, tmp_path, **limits)
    assert statuses(result) == {"bad.py": ("failed", reason)}
    assert len(result.sites) == 20


def test_native_parser_out_of_memory_costs_one_file(make_repo, tmp_path: Path) -> None:
    """Real libcst: an allocation failure in the native parser aborts the process."""
    huge = "def f():\n    raise ValueError([\n" + "".join(f"{n},\n" for n in range(200_000))
    huge += "    ])\n"
    files = {f"m{n}.py": ORDINARY.format(n=n) for n in range(20)}
    files["huge.py"] = huge
    result = mine_files(make_repo, files, tmp_path, memory_mb=400)
    assert statuses(result) == {"huge.py": ("failed", "out of memory (limit 400 MB)")}
    assert len(result.sites) == 20


def test_hooks_do_nothing_unless_enabled(make_repo, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("RAISE_MINER_TEST_HOOKS", raising=False)
    result = mine_files(make_repo, {"a.py": hook("segv")}, tmp_path)
    assert statuses(result) == {}
    assert [s.message for s in result.sites] == ["never mined 0"]


def test_several_crashes_in_one_batch_each_cost_one_file(make_repo, tmp_path: Path, hooks) -> None:
    """Small files share batches: after a crash, the rest of the batch goes to
    a fresh worker, and the next crash in it costs only that file too."""
    files = {f"m{n:02d}.py": ORDINARY.format(n=n) for n in range(30)}
    for n in (3, 11, 12, 29):
        files[f"m{n:02d}.py"] = hook("segv", n)
    result = mine_files(make_repo, files, tmp_path)
    assert statuses(result) == {
        f"m{n:02d}.py": ("failed", "parser crashed (SIGSEGV)") for n in (3, 11, 12, 29)
    }
    assert len(result.sites) == 26
    assert result.stats is not None and result.stats.workers_lost == 4


def test_parallel_results_equal_in_process_results_in_entry_order(make_repo) -> None:
    files = {f"pkg/m{n:03d}.py": ORDINARY.format(n=n) * (n % 7 + 1) for n in range(120)}
    files["pkg/empty.py"] = ""
    files["pkg/no_sites.py"] = "x = 1\n"
    root = make_repo(files)
    repo = git.Repo(root)
    entries = source.python_blobs(repo, repo.commit("v1"))
    parallel = pipeline.extract(repo, entries, options=MineOptions(jobs=2, cache=False)).files
    serial = [extract_file(e.path, e.blob, source.read_blob(repo, e.blob)) for e in entries]
    assert parallel == serial
    assert [f.path for f in parallel] == sorted(files)


def test_parent_sent_bytes_give_the_same_results(make_repo) -> None:
    files = {f"m{n}.py": ORDINARY.format(n=n) for n in range(40)}
    root = make_repo(files)
    repo = git.Repo(root)
    entries = source.python_blobs(repo, repo.commit("v1"))
    read = pipeline.extract(repo, entries, options=MineOptions(jobs=2, cache=False)).files
    sent = pipeline.extract(
        repo, entries, options=MineOptions(jobs=2, cache=False, send_bytes=True)
    ).files
    assert read == sent


def test_unreadable_blob_fails_alone(make_repo, tmp_path: Path) -> None:
    root = make_repo({"a.py": ORDINARY.format(n=1)})
    tasks = [
        Task(0, "a.py", git.Repo(root).commit("v1").tree["a.py"].hexsha, 10),
        Task(1, "gone.py", "0" * 40, 10),
    ]
    got: dict[int, tuple[str, str | None, bool]] = {}
    extract_parallel(
        str(root / ".git"),
        tasks,
        jobs=1,
        on_result=lambda i, r, ok: got.__setitem__(i, (r.status, r.reason, ok)),
    )
    assert got[0] == ("mined", None, True)
    status, reason, cacheable = got[1]
    assert (status, cacheable) == ("failed", False)
    assert reason is not None and reason.startswith("cannot read blob: ")


def test_batches_are_largest_first_and_balanced() -> None:
    sizes = [100_000, 5, 40_000, 300, 20_000, 20_000, 7, 16_384]
    tasks = [Task(i, f"f{i}.py", f"{i:040x}", size) for i, size in enumerate(sizes)]
    batches = make_batches(tasks, jobs=2)
    # total 156,696 bytes / 32 is under the 16 KiB floor: batches close at 16 KiB.
    assert [[t.size for t in b] for b in batches] == [
        [100_000],
        [40_000],
        [20_000],
        [20_000],
        [16_384],
        [300, 7, 5],
    ]
    assert sorted(t.index for b in batches for t in b) == list(range(len(sizes)))


def test_batches_hold_at_most_64_files() -> None:
    tasks = [Task(i, f"f{i:03d}.py", f"{i:040x}", 1) for i in range(130)]
    assert [len(b) for b in make_batches(tasks, jobs=4)] == [64, 64, 2]


def test_workers_that_cannot_start_stop_the_run_with_a_clear_error(make_repo, tmp_path) -> None:
    """A script without a main guard: each worker re-runs it and dies at start.
    The run stops with one error instead of blaming (or retrying) every file."""
    root = make_repo({f"m{n}.py": ORDINARY.format(n=n) for n in range(5)})
    script = tmp_path / "unguarded.py"
    script.write_text(
        "from miner import pipeline\n"
        "from miner.mining.extraction import MineOptions\n"
        f"pipeline.mine({str(root)!r}, 'v1', options=MineOptions(jobs=2, cache=False))\n"
    )
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 1
    last = run.stderr.strip().splitlines()[-1]
    assert last.startswith("miner.errors.WorkerStartError: a worker process exited with code 1")
    assert "if __name__ == '__main__':" in last
