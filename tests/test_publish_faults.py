"""Fault injection: an output folder is the old complete one or the new
complete one, whatever happens while it is written (``miner.publish.output``).

* ``python -m miner mine`` killed (``SIGKILL``) or interrupted (``SIGINT``) at
  random points of a run that writes a few thousand files over an older
  output: the manifest's file list equals the folder's files, and the
  manifest and the index name the same commit;
* worker processes (the mining pool, the site's render pool) do not outlive
  a killed or terminated run by more than a second;
* a full disk (a small tmpfs, as root), two runs into one folder at once, a
  run whose files all fail, a folder holding a reader's own files;
* hostile content (HTML, Markdown, Liquid, terminal escapes, backticks, ``|``
  and a line break in file names, a file name that is not UTF-8): the
  Markdown rendered by a CommonMark renderer in Chromium runs no script, the
  site neither, every file is UTF-8, and the records round-trip through
  ``sites.jsonl``, ``miner lookup`` and ``miner site``.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import random
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import git
import pytest
from browser import Watched, chromium
from conftest import commit_all, write_files

import miner
from miner import pipeline
from miner.cli import main
from miner.files import Staging, lock_path, locked
from miner.model import FileResult
from miner.publish import records
from miner.publish.cards import USER_FACING, code_span, md_prose, md_text

ROOT = Path(miner.__file__).resolve().parent.parent
#: Errors of the generated repository: enough for a run to write for a second or two.
FILES, PER_FILE = 60, 15


def generated(version: str) -> dict[str, str]:
    """``FILES`` modules of ``PER_FILE`` user-facing errors each; ``version``
    changes every message (so every card and record changes between versions)."""
    out = {"gen/__init__.py": ""}
    for i in range(FILES):
        body = [
            f"def f{j}(mode):\n    if mode == {j}:\n        raise ValueError("
            f'f"feature {version}-{i}-{j} is not supported in mode {{mode}}")\n'
            for j in range(PER_FILE)
        ]
        out[f"gen/m{i:03d}.py"] = "\n".join(body)
    return out


def new_repo(root: Path, files: dict[str, str | bytes], tag: str = "v1") -> Path:
    root.mkdir(parents=True)
    repo = git.Repo.init(root, initial_branch="main")
    with repo.config_writer() as cfg:
        cfg.set_value("core", "autocrlf", "false")
        cfg.set_value("commit", "gpgsign", "false")
    write_files(root, files)
    commit_all(repo, "fixture", tag)
    return root


@pytest.fixture(scope="module")
def big(tmp_path_factory) -> Path:
    """The generated repository: tags ``a`` and ``b`` (every message changed,
    a module gone)."""
    root = tmp_path_factory.mktemp("faults") / "gen"
    new_repo(root, generated("one"), tag="a")
    files = generated("two")
    del files["gen/m000.py"]
    (root / "gen" / "m000.py").unlink()
    write_files(root, files)
    commit_all(git.Repo(root), "two", "b")
    return root


def env() -> dict[str, str]:
    path = os.environ.get("PYTHONPATH")
    return {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{path}" if path else str(ROOT)}


def miner_cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "miner", *args]


def run(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        miner_cmd(*args), env=env(), capture_output=True, text=True, timeout=timeout, check=False
    )


def mine_args(repo: Path, rev: str, out: Path, *extra: str) -> list[str]:
    # the fixtures' errors are cards by their words: their toy code has no options class
    args = ["mine", "--repo", str(repo), "--commit", rev, "--out", str(out), "-q"]
    return [*args, "--no-origins", *extra]


def files_under(folder: Path) -> set[str]:
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}


def listed(out: Path) -> set[str]:
    """What the manifests say the folder holds: the mined folder's list and,
    when there is a site, the site's own list."""
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    files = set(manifest["written"])
    if (out / "site" / "manifest.json").is_file():
        site = json.loads((out / "site" / "manifest.json").read_text(encoding="utf-8"))
        files |= {f"site/{rel}" for rel in site["written"]}
    return files


def complete(out: Path) -> str:
    """Check that ``out`` is one run's complete output; returns its commit."""
    assert listed(out) == files_under(out)
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    sha = manifest["commit"]["sha"]
    assert f"Commit `{sha}`" in (out / "index.md").read_text(encoding="utf-8")
    rows = [line for line in (out / "sites.jsonl").read_text().splitlines() if line]
    assert len(rows) == manifest["counts"]["sites"]
    cards = {p for p in files_under(out) if p.startswith("errors/")}
    by_audience = manifest["counts"]["errors_by_audience"]
    assert len(cards) == sum(by_audience[name] for name in USER_FACING)
    if (out / "site" / "manifest.json").is_file():
        site = json.loads((out / "site" / "manifest.json").read_text(encoding="utf-8"))
        assert site["commit"]["sha"] == sha
    return sha


def leftovers(out: Path) -> list[str]:
    """Staging or old folders beside ``out``, temporary files inside it."""
    beside = [
        p.name for p in out.parent.iterdir() if re.match(rf"^\.{out.name}\.(staging|old)-", p.name)
    ]
    inside = [
        p
        for p in files_under(out)
        if re.search(r"/\.[^/]+\.[a-z0-9_]{8}$|^\.[^/]+\.[a-z0-9_]{8}$", p)
    ]
    return beside + inside


def sha_of(repo: Path, rev: str) -> str:
    return git.Repo(repo).commit(rev).hexsha


# -- kills at random points -----------------------------------------------------------


def staging_of(out: Path) -> list[Path]:
    return sorted(out.parent.glob(f".{out.name}.staging-*"))


def start_writing(cmd: list[str], out: Path) -> tuple[subprocess.Popen[str], float]:
    """Start ``cmd`` and wait until it begins to write ``out`` (its staging
    folder appears); returns the process and when that was (monotonic)."""
    before = set(staging_of(out))
    proc = subprocess.Popen(cmd, env=env(), stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and proc.poll() is None:
        if set(staging_of(out)) - before:
            break
        time.sleep(0.005)
    return proc, time.monotonic()


@pytest.fixture(scope="module")
def timed(big: Path, tmp_path_factory) -> float:
    """Seconds a run of ``a`` over ``b`` spends writing (from its staging
    folder's start to its end): what the kills sample. These runs and the
    ones the test stops use ``--no-cache``, so each computes and writes in
    full (with the cache on, a revision mined before replays its kept files
    much faster, and the signals would come after it ended)."""
    scratch = tmp_path_factory.mktemp("timing") / "out"
    assert run(*mine_args(big, "a", scratch, "--no-cache")).returncode == 0
    assert run(*mine_args(big, "b", scratch, "--no-cache")).returncode == 0
    proc, start = start_writing(miner_cmd(*mine_args(big, "a", scratch, "--no-cache")), scratch)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    return max(0.2, time.monotonic() - start)


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGKILL, signal.SIGINT])
def test_a_run_stopped_anywhere_leaves_the_old_or_the_new_output(
    big: Path, timed: float, tmp_path: Path, signum: int
) -> None:
    """Each run is stopped at a random point of its writing (from the moment
    its staging folder appears to a little past the time a whole write takes)."""
    out = tmp_path / "out"
    rng = random.Random(f"{signum}-{timed:.1f}")
    # into a new folder: no folder, or a complete one
    proc, _ = start_writing(miner_cmd(*mine_args(big, "a", out, "--no-cache")), out)
    time.sleep(rng.uniform(0, 1.1) * timed)
    proc.send_signal(signum)
    proc.communicate(timeout=120)
    assert not out.exists() or complete(out) == sha_of(big, "a")
    assert run(*mine_args(big, "a", out, "--no-cache")).returncode == 0
    old, new = sha_of(big, "a"), sha_of(big, "b")
    assert complete(out) == old
    stopped = 0
    tries = 0
    # at least 3 (SIGKILL) or 2 (SIGINT) stops, and more until one run was
    # really stopped: a run may end before a late signal (at most 8 runs)
    while tries < (3 if signum == signal.SIGKILL else 2) or (not stopped and tries < 8):
        tries += 1
        rev = "b" if complete(out) == old else "a"
        proc, _ = start_writing(miner_cmd(*mine_args(big, rev, out, "--no-cache")), out)
        time.sleep(rng.uniform(0, 1.1 if tries <= 3 else 0.5) * timed)
        proc.send_signal(signum)
        _, err = proc.communicate(timeout=120)
        sha = complete(out)
        assert sha in (old, new)
        stopped += proc.returncode != 0
        if signum == signal.SIGINT and proc.returncode == 130:
            lines = err.strip().splitlines()
            assert len(lines) == 1 and lines[0].startswith("miner: interrupted; "), lines
            kept = lines[0].endswith("the previous output is kept")
            assert kept == (sha != sha_of(big, rev))
            assert leftovers(out) == []  # an interrupted run cleans up itself
        else:
            assert proc.returncode in (0, -signal.SIGKILL), err
    assert stopped, "every run ended before its stop signal"
    # a later run removes what a killed one left, and finishes the output
    assert run(*mine_args(big, "b", out, "--no-cache")).returncode == 0
    assert complete(out) == new
    assert leftovers(out) == []


def descendants(pid: int) -> set[int]:
    """Every living process below ``pid`` (from ``/proc``)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if fields[0] != "Z":
            children.setdefault(int(fields[1]), []).append(int(entry.name))
    found: set[int] = set()
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.add(child)
            todo.append(child)
    return found


def alive(pids: set[int]) -> set[int]:
    living = set()
    for pid in pids:
        with contextlib.suppress(OSError):
            if (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z":
                living.add(pid)
    return living


def python_children(pids: set[int]) -> int:
    """How many of ``pids`` are Python processes (workers, a forkserver)."""
    count = 0
    for pid in pids:
        with contextlib.suppress(OSError):
            count += b"python" in (Path("/proc") / str(pid) / "cmdline").read_bytes()
    return count


def stop_when_busy(cmd: list[str], signum: int, workers: int) -> tuple[set[int], int, str]:
    """Start ``cmd``, wait until it has at least ``workers`` Python processes
    below it, send ``signum``; returns the descendants seen, the exit code
    and stderr."""
    if not Path("/proc").is_dir():
        pytest.skip("no /proc to list child processes")
    proc = subprocess.Popen(
        cmd, env=env(), stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True
    )
    seen: set[int] = set()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        seen |= descendants(proc.pid)
        if python_children(alive(seen)) >= workers:
            break
        time.sleep(0.05)
    assert proc.poll() is None, "the run ended before its workers started"
    time.sleep(0.3)
    seen |= descendants(proc.pid)
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=60)
    return seen, proc.returncode, err


@pytest.mark.slow
def test_mining_workers_die_with_a_killed_run(big: Path, tmp_path: Path) -> None:
    cmd = miner_cmd(*mine_args(big, "a", tmp_path / "out", "--no-cache", "-j", "2"))
    # the forkserver and two workers
    seen, code, _ = stop_when_busy(cmd, signal.SIGKILL, 3)
    assert code == -signal.SIGKILL
    time.sleep(1.0)
    assert alive(seen) == set()


@pytest.mark.slow
def test_site_workers_stop_on_sigterm(big: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert run(*mine_args(big, "a", out)).returncode == 0
    seen, code, err = stop_when_busy(
        miner_cmd("site", "--out", str(out), "-j", "2"), signal.SIGTERM, 2
    )
    assert code == 143
    assert err.strip().splitlines() == ["miner: terminated; the previous output is kept"]
    time.sleep(1.0)
    assert alive(seen) == set()
    assert complete(out) == sha_of(big, "a") and not (out / "site").exists()
    assert leftovers(out) == []


# -- two runs, failures, a reader's folder ---------------------------------------------


@pytest.mark.slow
def test_a_second_run_into_the_same_folder_stops_with_one_line(big: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    first = subprocess.Popen(
        miner_cmd(*mine_args(big, "b", out, "--site")), env=env(), stderr=subprocess.PIPE, text=True
    )
    lock = lock_path(out)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not (lock.is_file() and lock.read_text().strip()):
        time.sleep(0.05)
    second = run(*mine_args(big, "a", out))
    assert second.returncode == 2
    assert second.stderr.splitlines() == [
        f"miner: error: {out}: another miner run (pid {first.pid}) is writing this folder; "
        "wait for it to end or pass another --out"
    ]
    _, err = first.communicate(timeout=300)
    assert first.returncode == 0, err
    assert complete(out) == sha_of(big, "b")


def test_a_run_whose_files_fail_keeps_the_previous_output(
    make_repo, tmp_path: Path, capsys
) -> None:
    repo = make_repo(
        {"pkg/a.py": "def f(x):\n    raise ValueError(f'mode {x} is not supported')\n"}
    )
    out = tmp_path / "out"
    assert main(mine_args(repo, "v1", out)) == 0
    before = {rel: (out / rel).read_bytes() for rel in files_under(out)}
    capsys.readouterr()
    code = main(mine_args(repo, "v1", out, "--no-cache", "--memory-limit", "1", "-j", "1"))
    assert code == 2
    err = capsys.readouterr().err.strip().splitlines()
    # most files failed (or no worker could start): nothing published, one line
    assert len(err) == 1 and err[0].startswith("miner: error: "), err
    assert {rel: (out / rel).read_bytes() for rel in files_under(out)} == before
    assert leftovers(out) == []


def test_a_folder_of_someone_else_is_refused(make_repo, tmp_path: Path, capsys) -> None:
    repo = make_repo(
        {"pkg/a.py": "def f(x):\n    raise ValueError(f'mode {x} is not supported')\n"}
    )
    theirs = tmp_path / "theirs"
    mine = ["errors/HOWTO.md", "api/errors/settings.json", "site/errors/custom.html"]
    mine.append("site/diffs/notes.html")
    write_files(theirs, dict.fromkeys(mine, "mine"))
    assert main(mine_args(repo, "v1", theirs)) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "not written by raise-miner" in err[0]
    assert files_under(theirs) == set(mine)
    # a site into a reader's folder neither
    out = tmp_path / "out"
    assert main(mine_args(repo, "v1", out)) == 0
    assert main(["site", "--out", str(out), "--dest", str(theirs / "site")]) == 2
    assert files_under(theirs) == set(mine)
    # a folder the tool wrote keeps the reader's files it holds, run after run
    write_files(out, dict.fromkeys(mine, "mine"))
    assert main(mine_args(repo, "v1", out, "--site")) == 0
    assert main(["site", "--out", str(out)]) == 0
    assert all((out / rel).read_text() == "mine" for rel in mine)
    # and deletes, of what it wrote, only what the new run does not write
    (out / "errors" / "HOWTO.md").unlink()
    add = {"pkg/b.py": "def g(x):\n    raise KeyError(f'mode {x} is not supported')\n"}
    write_files(repo, add)
    commit_all(git.Repo(repo), "b", "v2")
    assert main(mine_args(repo, "v2", out)) == 0
    (repo / "pkg" / "b.py").unlink()
    commit_all(git.Repo(repo), "no b", "v3")
    assert main(mine_args(repo, "v3", out)) == 0
    assert all((out / rel).read_text() == "mine" for rel in mine if rel != "errors/HOWTO.md")
    assert listed(out) | {rel for rel in mine if rel != "errors/HOWTO.md"} == files_under(out)


def test_temporary_files_of_a_killed_older_run_go_away(make_repo, tmp_path: Path) -> None:
    repo = make_repo(
        {"pkg/a.py": "def f(x):\n    raise ValueError(f'mode {x} is not supported')\n"}
    )
    out = tmp_path / "out"
    assert main(mine_args(repo, "v1", out)) == 0
    (out / "api" / "errors" / ".29523a91d30f1d06.json.qhw_75dk").write_text("{")
    (out / ".index.md.abcd_123").write_text("#")
    staging = Staging(out).reserve(f".{out.name}.staging-")  # a killed run's, recorded
    staging.mkdir()
    (staging / "manifest.json").write_text("{}")
    assert main(mine_args(repo, "v1", out)) == 0
    assert leftovers(out) == []
    assert listed(out) == files_under(out)


def test_an_old_folder_put_aside_by_a_killed_swap_comes_back(make_repo, tmp_path: Path) -> None:
    """The fallback swap (two renames) killed between them: the next run puts
    the old output back before it starts."""
    repo = make_repo(
        {"pkg/a.py": "def f(x):\n    raise ValueError(f'mode {x} is not supported')\n"}
    )
    out = tmp_path / "out"
    assert main(mine_args(repo, "v1", out)) == 0
    staging = Staging(out)  # the names the killed run made, recorded as it made them
    out.rename(staging.reserve(staging.old_prefix))
    staging.reserve(staging.prefix).mkdir()
    with locked(out):
        Staging(out).recover()
    assert complete(out)
    assert leftovers(out) == []


@pytest.mark.parametrize("renameat2", [True, False])
def test_ctrl_c_held_through_the_swap_leaves_nothing_beside(
    make_repo, tmp_path: Path, monkeypatch, renameat2: bool
) -> None:
    """Ctrl-C during the swap is held until the swap ends, then raised there:
    the new output is in place and the old tree put aside is removed (it was
    left as ``.out.staging-*`` when the signal was raised before its removal)."""
    from conftest import add_commit

    from miner import files

    real_exchange = files.exchange

    def exchange_then_ctrl_c(a: Path, b: Path) -> bool:
        os.kill(os.getpid(), signal.SIGINT)  # held: delivered when the swap ends
        return real_exchange(a, b) if renameat2 else False

    repo = make_repo(
        {"pkg/a.py": "def f(x):\n    raise ValueError(f'mode {x} is not supported')\n"}
    )
    new = add_commit(
        repo, {"pkg/b.py": "def g(y):\n    raise KeyError(f'no model {y}')\n"}, tag="v2"
    )
    out = tmp_path / "out"
    assert main(mine_args(repo, "v1", out)) == 0
    monkeypatch.setattr(files, "exchange", exchange_then_ctrl_c)
    # another thread alive (as a pool's feeder may be): the kernel may hand it
    # the signal, whatever the main thread's signal mask holds
    import threading

    done = threading.Event()
    threading.Thread(target=done.wait, daemon=True).start()
    try:
        assert main(mine_args(repo, "v2", out)) == 130
    finally:
        done.set()
    assert complete(out) == new
    assert leftovers(out) == []


def test_ctrl_c_while_the_staging_is_seeded_removes_it(
    make_repo, tmp_path: Path, monkeypatch
) -> None:
    """Ctrl-C while the staging folder is being filled with links to the old
    files: the staging goes, the old output stays."""
    from miner import files

    def interrupted(source: str, target: str, seeded: dict[str, int]) -> None:
        Path(target, "half").write_text("")
        raise KeyboardInterrupt

    repo = make_repo(
        {"pkg/a.py": "def f(x):\n    raise ValueError(f'mode {x} is not supported')\n"}
    )
    out = tmp_path / "out"
    assert main(mine_args(repo, "v1", out)) == 0
    before = files_under(out)
    monkeypatch.setattr(files, "seed", interrupted)
    assert main(mine_args(repo, "v1", out, "--no-cache", "--site")) == 130
    assert files_under(out) == before and complete(out)
    assert leftovers(out) == []


def test_the_swap_without_renameat2(make_repo, tmp_path: Path, monkeypatch) -> None:
    """Where ``RENAME_EXCHANGE`` is missing, two renames do; the result is the same."""
    from miner import files

    monkeypatch.setattr(files, "exchange", lambda a, b: False)
    repo = make_repo(
        {"pkg/a.py": "def f(x):\n    raise ValueError(f'mode {x} is not supported')\n"}
    )
    out = tmp_path / "out"
    assert main(mine_args(repo, "v1", out, "--site")) == 0
    assert main(mine_args(repo, "v1", out, "--site")) == 0
    assert complete(out) and leftovers(out) == []


def test_a_site_published_on_its_own(make_repo, tmp_path: Path) -> None:
    """``miner site --dest`` outside the mined folder: its own manifest and
    lock; inside it (not ``site/``): published with the mined folder."""
    repo = make_repo(
        {"pkg/a.py": "def f(x):\n    raise ValueError(f'mode {x} is not supported')\n"}
    )
    out, www = tmp_path / "out", tmp_path / "www"
    assert main(mine_args(repo, "v1", out)) == 0
    assert main(["site", "--out", str(out), "--dest", str(www), "-j", "1"]) == 0
    site = json.loads((www / "manifest.json").read_text())
    assert site["kind"] == "site" and set(site["written"]) == files_under(www)
    (www / "notes.html").write_text("mine")
    assert main(["site", "--out", str(out), "--dest", str(www), "-j", "1"]) == 0
    assert (www / "notes.html").read_text() == "mine"
    assert main(["site", "--out", str(out), "--dest", str(out / "public"), "-j", "1"]) == 0
    inner = json.loads((out / "public" / "manifest.json").read_text())
    assert {f"public/{rel}" for rel in inner["written"]} | listed(out) == files_under(out)
    # a site folder is not a mined folder, and the other way round
    assert main(mine_args(repo, "v1", www)) == 2
    assert main(["site", "--out", str(out), "--dest", str(out)]) == 2
    assert leftovers(out) == [] and leftovers(www) == []


def test_legacy_output_without_a_file_list(make_repo, tmp_path: Path) -> None:
    """A folder written before the manifest listed its files: what that
    version wrote (records and cards named by error id) is replaced, a
    reader's files are kept."""
    repo = make_repo(
        {"pkg/a.py": "def f(x):\n    raise ValueError(f'mode {x} is not supported')\n"}
    )
    out = tmp_path / "out"
    assert main(mine_args(repo, "v1", out)) == 0
    manifest = json.loads((out / "manifest.json").read_text())
    del manifest["written"]
    (out / "manifest.json").write_text(json.dumps(manifest))
    stale = ["errors/0123456789abcdef.md", "api/errors/0123456789abcdef.json"]
    write_files(out, dict.fromkeys([*stale, "errors/HOWTO.md", "notes.txt"], "x"))
    assert main(mine_args(repo, "v1", out)) == 0
    assert listed(out) | {"errors/HOWTO.md", "notes.txt"} == files_under(out)


# -- a full disk ------------------------------------------------------------------------


@contextlib.contextmanager
def tmpfs(folder: Path, size: str) -> Iterator[Path]:
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    folder.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"mount not permitted here: {done.stderr.strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)


def free(path: Path) -> int:
    stats = os.statvfs(path)
    return stats.f_bavail * stats.f_frsize


@pytest.mark.slow
def test_a_full_disk_keeps_the_previous_output(big: Path, make_repo, tmp_path: Path) -> None:
    small = make_repo(
        {"pkg/a.py": "def f(x):\n    raise ValueError(f'mode {x} is not supported')\n"}
    )
    with tmpfs(tmp_path / "fs", "3m") as fs:
        out = fs / "out"
        assert run(*mine_args(small, "v1", out)).returncode == 0
        old = complete(out)
        room = free(fs)
        # the new output does not fit: the write fails, the staging goes
        done = run(*mine_args(big, "b", out))
        assert done.returncode == 2, done.stderr
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and "No space left on device" in lines[0], lines
        assert "previous output is kept" in lines[0]
        assert complete(out) == old
        assert leftovers(out) == []
        assert free(fs) == room
        # no room for even the current output's size: refused before the work
        filler = fs / "filler"
        filler.write_bytes(b"\0" * max(0, free(fs) - 64 * 1024))
        done = run(*mine_args(small, "v1", out))
        assert done.returncode == 2
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and "MiB free" in lines[0], lines
        assert complete(out) == old
        assert leftovers(out) == []


# -- hostile content ----------------------------------------------------------------

CORE = '''\
class BadThingError(Exception):
    """<img src=x onerror=alert('excdoc')> {{ liquid }} `x` <script>alert('excdoc2')</script>"""


def check(mode):
    assert mode, "first <line> of two\\nsecond `line`"


def run(mode):
    """Run it. <script>alert('doc')</script> {% raw %} `a` <img src=y onerror=alert('doc2')>"""
    if mode == "fast":
        raise ValueError("<script>alert('title')</script> mode {{ site.title }} | is not supported")
    if mode == "x":
        raise BadThingError(f"bad \\x1b[31m {mode} <b onmouseover=alert(1)>b</b> is not supported")
    if mode == "y":
        raise KeyError("a `\\n\\n<img src=w onerror=alert('blank')>` \\\\`<i>` is not supported")
    raise NotImplementedError("`<img src=z onerror=alert('tick')>` ``` is not supported")
'''
#: File names: a backtick with HTML, a ``|``, a line break, bytes that are not UTF-8.
HOSTILE_NAMES = {
    "pkg/we`<img src=q onerror=alert(9)>`ird|na<b>me.py": "h",
    "pkg/new\nline <img src=n onerror=alert(7)>.py": "k",
    b"pkg/caf\xe9.py": "g",
}
CAFE = b"pkg/caf\xe9.py".decode("utf-8", "surrogateescape")


def hostile_repo(root: Path) -> Path:
    new_repo(root, {"pkg/__init__.py": "", "pkg/core.py": CORE})
    for name, fn in HOSTILE_NAMES.items():
        raw = name if isinstance(name, bytes) else name.encode()
        text = f"def {fn}(mode):\n    raise ValueError(f'mode {{mode}} in {fn} is not supported')\n"
        (Path(os.fsdecode(root)) / os.fsdecode(raw)).write_text(text)
    commit_all(git.Repo(root), "hostile", "v2")
    return root


@pytest.fixture(scope="module")
def hostile(tmp_path_factory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("hostile")
    repo = hostile_repo(root / "repo")
    out = root / "out"
    done = run(*mine_args(repo, "v2", out, "--site", "--slug", "evil/repo", "-j", "0"))
    assert done.returncode == 0, done.stderr
    return repo, out


def test_hostile_output_is_utf8_and_complete(hostile) -> None:
    _, out = hostile
    for rel in files_under(out):
        data = (out / rel).read_bytes()
        if rel.endswith(".gz"):  # the site's bundles: gzip'd JSON
            data = gzip.decompress(data)
        data.decode("utf-8")  # raises on invalid UTF-8
    assert complete(out)
    assert (out / ".nojekyll").is_file() and (out / "site" / ".nojekyll").is_file()


def test_hostile_markdown_renders_no_html(hostile) -> None:
    """Every Markdown file rendered by a CommonMark renderer (raw HTML on, as
    such renderers have it) in Chromium: no dialog, no element that only raw
    HTML could make, and the hostile texts shown as text."""
    from markdown_it import MarkdownIt

    _, out = hostile
    render = MarkdownIt("commonmark").enable("table")
    pages = sorted(out.rglob("*.md"))
    assert len([p for p in pages if p.parent.name == "errors"]) >= 6
    shown = ""
    with chromium() as browser:
        watched = Watched(browser)
        for path in pages:
            watched.page.set_content(render.render(path.read_text(encoding="utf-8")))
            raw = watched.page.eval_on_selector_all(
                "script, img, iframe, svg, b, i, a[href^='javascript']", "found => found.length"
            )
            assert raw == 0, path
            shown += watched.page.inner_text("body")
        assert watched.dialogs == []
        assert watched.errors == []
    assert "<script>alert('title')</script> mode {{{{ site.title }}}} | is not" in shown
    assert "<img src=x onerror=alert('excdoc')>" in shown or "excdoc" not in shown
    assert "pkg/caf\\xe9.py" in shown


def test_fenced_messages_stay_verbatim(hostile) -> None:
    """A message of several lines is a fence on its module's page, verbatim."""
    _, out = hostile
    page = (out / "internal" / "pkg.core.md").read_text()
    assert "  ```text\n  first <line> of two\n  second `line`\n  ```" in page


def test_hostile_tables_keep_their_columns(hostile) -> None:
    """A ``|`` or a line break in a path, a message or a module name stays in
    its cell: every row of every table has its header's columns, and the
    tables of cards have a row per card."""
    from markdown_it import MarkdownIt

    _, out = hostile
    tokens = MarkdownIt("commonmark").enable("table").parse((out / "index.md").read_text())
    tables: list[list[int]] = []
    for token in tokens:
        if token.type == "table_open":
            tables.append([])
        elif token.type == "tr_open":
            tables[-1].append(0)
        elif token.type in ("th_open", "td_open"):
            tables[-1][-1] += 1
    assert tables and all(len(set(rows)) == 1 for rows in tables), tables
    card_rows = sum(len(rows) - 1 for rows in tables if rows[0] == 5)
    assert card_rows == len(list((out / "errors").glob("*.md"))) >= 6


def test_hostile_site_runs_no_script(hostile) -> None:
    _, out = hostile
    site = out / "site"
    with chromium() as browser:
        watched = Watched(browser)
        for page in sorted(site.rglob("*.html")):
            watched.page.goto(page.as_uri())
            watched.page.wait_for_load_state("load")
        assert watched.dialogs == []
        assert watched.errors == []
        cafe = json.loads(gzip.decompress((site / "api" / "index.json.gz").read_bytes()))
        card = next(e["card"] for e in cafe["errors"] if e["sites"][0]["path"] == CAFE)
        watched.page.goto((site / card).as_uri())
        assert "pkg/caf\\xe9.py" in watched.page.inner_text("body")


def test_hostile_records_round_trip(hostile, capsys) -> None:
    repo, out = hostile
    sites = records.read_sites(out / "sites.jsonl")
    paths = {s.path for s in sites}
    assert CAFE in paths and "pkg/new\nline <img src=n onerror=alert(7)>.py" in paths
    assert b"caf\\udce9" in (out / "sites.jsonl").read_bytes()
    # miner lookup reads them and shows the name escaped
    assert main(["lookup", "--out", str(out), "mode 1 in g is not supported"]) == 0
    shown = capsys.readouterr().out
    assert "pkg/caf\\xe9.py:2" in shown
    shown.encode("utf-8")
    # miner site renders the very same bytes again
    site = out / "site"
    before = {rel: (site / rel).read_bytes() for rel in files_under(site)}
    assert main(["site", "--out", str(out), "-j", "1"]) == 0
    assert {rel: (site / rel).read_bytes() for rel in files_under(site)} == before


# -- the escaping, unit by unit -----------------------------------------------------------


def test_markdown_escaping() -> None:
    assert md_text("<b>{{ x }}</b> a|b `c`") == r"&lt;b&gt;{\{ x }}&lt;/b&gt; a\|b \`c\`"
    assert md_text("one\ntwo") == "one two"
    # prose keeps its code spans; HTML and template openers outside them are escaped
    assert md_prose("use `x < 3` <b> {% y %} &amp;") == r"use `x < 3` &lt;b&gt; {\% y %} &amp;amp;"
    # a backtick that pairs across a line break or with nothing is escaped, so
    # no renderer pairs it with a later one
    assert md_prose("a ` b\n`<i>` c") == "a \\` b\n`<i>` c"
    assert md_prose("\\`<i>`") == "\\`&lt;i&gt;\\`"
    assert md_prose("a `\n\n<i>`") == "a \\`\n\n&lt;i&gt;\\`"
    # a code span survives backticks and blank lines in its text
    assert code_span("a`b\n\n<i>") == "``a`b  <i>``"


# -- the parent's own limits ------------------------------------------------------------


def test_facts_skip_what_the_extractor_skipped_or_failed(make_repo, monkeypatch) -> None:
    """The parent reads for the analysis facts only files the extractor mined
    and none over its size limit; the manifest says why for each."""
    filler = "x = 1\n" * (17 * 2**20 // 6)
    repo = make_repo(
        {
            "pkg/big.py": filler + "raise ValueError('big')\n",
            "pkg/table.py": filler,
            "pkg/ok.py": "def f(x):\n    raise ValueError(f'mode {x} is not supported')\n",
            "pkg/bad.py": "def g():\n    raise KeyError('bad')\n",
        }
    )
    read: list[str] = []
    real_collect = pipeline.collect

    def spy(sources, sites, jobs=1, progress=None, known=None):  # type: ignore[no-untyped-def]
        read.extend(sources)
        return real_collect(sources, sites, jobs=jobs, progress=progress, known=known)

    monkeypatch.setattr(pipeline, "collect", spy)
    real_assemble = pipeline.assemble

    def failing(info, files, stats=None):  # type: ignore[no-untyped-def]
        files = [
            FileResult(path=f.path, blob=f.blob, status="failed", reason="time limit 60 s")
            if f.path == "pkg/bad.py"
            else f
            for f in files
        ]
        return real_assemble(info, files, stats)

    monkeypatch.setattr(pipeline, "assemble", failing)
    mined = pipeline.mine_and_analyze(str(repo), "v1")
    assert sorted(read) == ["pkg/ok.py"]
    notes = {n["path"]: n for n in records.manifest_json(mined.result)["files"]}
    assert notes["pkg/big.py"]["status"] == "skipped"
    assert "too large" in notes["pkg/big.py"]["reason"]
    assert notes["pkg/table.py"]["reason"].startswith("not read for the analysis facts")
    assert notes["pkg/bad.py"]["reason"] == "time limit 60 s"


def test_a_diff_into_a_mined_folder_waits_for_no_mine_run(tmp_path: Path) -> None:
    """``miner diff --out OUT/diffs`` writes inside OUT: while another run
    holds OUT's lock it stops at once with one line, before any work."""
    out = tmp_path / "out"
    out.mkdir()
    (out / "manifest.json").write_text('{"tool": {"name": "raise-miner"}}', encoding="utf-8")
    lock = lock_path(out)
    lock.parent.mkdir(parents=True, exist_ok=True)
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import fcntl, os, sys, time\n"
            f"fd = os.open({str(lock)!r}, os.O_RDWR | os.O_CREAT)\n"
            "fcntl.flock(fd, fcntl.LOCK_EX)\n"
            "os.write(fd, f'{os.getpid()}\\n'.encode())\n"
            "print('held', flush=True)\n"
            "sys.stdin.read()\n",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        diff = run(
            "diff", "--repo", str(tmp_path / "no-repo"), "a", "b", "--out", str(out / "diffs")
        )
    finally:
        holder.communicate("", timeout=30)
    assert diff.returncode == 2
    assert diff.stderr.splitlines() == [
        f"miner: error: {out}: another miner run (pid {holder.pid}) is writing this folder; "
        "wait for it to end or pass another --out"
    ]
    assert not (out / "diffs").exists() or not any((out / "diffs").iterdir())


def test_a_staging_write_never_writes_through_the_published_file(tmp_path: Path) -> None:
    from miner.files import rewrite_bytes

    published, staged = tmp_path / "card.md", tmp_path / "staging-card.md"
    published.write_bytes(b"old card\n")
    os.link(published, staged)  # how a staging folder is seeded
    old = os.umask(0o077)
    try:
        assert rewrite_bytes(str(staged), b"old card\n") is False  # equal bytes: kept
        assert staged.stat().st_ino == published.stat().st_ino
        assert rewrite_bytes(str(staged), b"new card\n") is True
    finally:
        os.umask(old)
    assert published.read_bytes() == b"old card\n"  # the published file keeps its bytes
    assert staged.read_bytes() == b"new card\n"
    assert staged.stat().st_ino != published.stat().st_ino
    assert staged.stat().st_mode & 0o777 == 0o644  # whatever the umask
    assert rewrite_bytes(str(tmp_path / "new.md"), b"x") is True
    (tmp_path / "target").write_text("not ours")
    (tmp_path / "link.md").symlink_to(tmp_path / "target")
    # a symbolic link is removed, not followed
    assert rewrite_bytes(str(tmp_path / "link.md"), b"y") is True
    assert (tmp_path / "target").read_text() == "not ours"
    assert not (tmp_path / "link.md").is_symlink()
