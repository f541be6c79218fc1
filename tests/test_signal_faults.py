"""Stop signals at random points of a run (issue 36, item 5): ``miner mine
--site -j 2`` (the mining pool and the site's render pool) of a small
repository, stopped again and again by Ctrl-C (``SIGINT`` to the process
group, as a terminal sends it) and ``SIGTERM`` (to the process), one to four
in a row, in a few runs at once. After each stop:

* the run ended within :data:`STOP_LIMIT` seconds of the first signal (no
  hang), with the exit code of a signal it got (130, 143), or 0 only when the
  signal came after the output was published (no swallowed signal);
* one line on stderr, saying whether the output was published, and it says
  the truth; no worker process outlives the run;
* the output is the previous complete one or the new complete one; no lock
  file, no record of folders made, nothing beside the output.

``MINER_SIGNALS`` sets how many signals are sent (default 200; each one
reaching a living run counts), ``MINER_SIGNAL_LANES`` how many runs go at
once (default 2).
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import threading
import time
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import git
import pytest
from conftest import commit_all, write_files
from test_publish_faults import complete, env, leftovers, miner_cmd, new_repo

from miner.files import lock_path, made_path

#: Signals the suite sends (each reaching a living run).
SIGNALS = int(os.environ.get("MINER_SIGNALS", "200"))
#: Seconds a stopped run may take to end after the first signal.
STOP_LIMIT = 5.0
#: Seconds after which a run that has not ended counts as hung.
HANG = 30.0
#: How many stop signals one run is sent (one of these, at random).
PER_RUN = (1, 2, 3, 4)
#: Runs going at once, each into a folder of its own: while one waits (for
#: its workers to start, for its random point) another works.
LANES = int(os.environ.get("MINER_SIGNAL_LANES", "2"))


def module_files(version: str, modules: int = 8, per_module: int = 5) -> dict[str, str]:
    """A package of ``modules`` modules with ``per_module`` user-facing
    errors each; ``version`` is in every message."""
    out = {"gen/__init__.py": ""}
    for i in range(modules):
        out[f"gen/m{i:02d}.py"] = "\n".join(
            f"def f{j}(mode):\n    if mode == {j}:\n        raise ValueError("
            f'f"feature {version}-{i}-{j} is not supported in mode {{mode}}")\n'
            for j in range(per_module)
        )
    return out


@pytest.fixture(scope="module")
def small(tmp_path_factory) -> Path:
    """A repository with tags ``a`` and ``b`` (every message changed)."""
    root = tmp_path_factory.mktemp("signals") / "gen"
    new_repo(root, module_files("one"), tag="a")
    write_files(root, module_files("two"))
    commit_all(git.Repo(root), "two", "b")
    return root


def command(repo: Path, rev: str, out: Path) -> list[str]:
    args = ["mine", "--repo", str(repo), "--commit", rev, "--out", str(out)]
    return miner_cmd(*args, "--site", "-j", "2", "--no-cache", "-q")


def start(cmd: list[str]) -> subprocess.Popen[str]:
    """``cmd`` in a process group of its own (what a terminal's Ctrl-C reaches)."""
    return subprocess.Popen(
        cmd,
        env=env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def send(proc: subprocess.Popen[str], signum: int) -> bool:
    """Ctrl-C as a terminal sends it (to the whole group), ``SIGTERM`` as
    ``kill PID``; False when the run had ended already."""
    if proc.poll() is not None:
        return False
    with contextlib.suppress(ProcessLookupError):
        if signum == signal.SIGINT:
            os.killpg(proc.pid, signum)
        else:
            proc.send_signal(signum)
        return True
    return False


def group_gone(pgid: int, within: float = 3.0) -> bool:
    """Whether every process of the group ``pgid`` (the run's workers) has
    ended within ``within`` seconds."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.02)
    return False


def handlers_in_place(proc: subprocess.Popen[str]) -> float:
    """Wait until the run's process handles ``SIGTERM`` (its first code has
    run: :mod:`miner.entry`); returns when the process was started, as
    ``time.monotonic()``. Before that the interpreter itself is starting,
    with Python's defaults (``SIGTERM`` ends it silently, status 143; a
    Ctrl-C raises in its own start-up), before any of the tool's code."""
    began = time.monotonic()
    status = Path("/proc") / str(proc.pid) / "status"
    while proc.poll() is None and time.monotonic() - began < 30:
        with contextlib.suppress(OSError, ValueError):
            caught = next(ln for ln in status.read_text().splitlines() if ln.startswith("SigCgt"))
            if int(caught.split()[1], 16) & (1 << (signal.SIGTERM - 1)):
                break
        time.sleep(0.001)
    return began


def published_at(out: Path) -> float:
    """When the output folder was last put in place (its inode's change
    time: the swap renames it), in seconds since the epoch."""
    return out.stat().st_ctime


class Pace:
    """How long a whole run takes now, from its start to its exit (seconds):
    the median of the last runs that ended before a signal reached them
    (first: the runs that made each lane's first output). The load of the
    machine changes it while the suite runs; the random points follow."""

    def __init__(self, first: list[float]) -> None:
        self.times: deque[float] = deque(first, maxlen=7)
        self.lock = threading.Lock()

    def span(self) -> float:
        with self.lock:
            return statistics.median(self.times)

    def ran(self, seconds: float) -> None:
        with self.lock:
            self.times.append(seconds)


@dataclass(frozen=True)
class Stopped:
    """One run and the stop signals sent to it."""

    code: int
    sent: list[int]
    """The signals that reached it, in order."""
    err: str
    first_at: float
    """When the first was sent (epoch seconds; 0.0: none was)."""
    took: float
    """Seconds from the first signal to the run's exit."""


def stop_once(repo: Path, out: Path, rng: random.Random, pace: Pace) -> Stopped:
    """Start a run over ``out`` and send it :data:`PER_RUN` stop signals:
    the first at a random point of a whole run's span (a little past it, so
    that some runs end first), the others soon after, as an impatient user
    sends them (they reach the run while it stops, or find it ended)."""
    before = json.loads((out / "manifest.json").read_text())["commit"]["rev"]
    rev = "b" if before == "a" else "a"
    proc = start(command(repo, rev, out))
    began = handlers_in_place(proc)
    time.sleep(max(0.0, rng.uniform(0, 1.05) * pace.span() - (time.monotonic() - began)))
    plan = [rng.choice((signal.SIGINT, signal.SIGTERM)) for _ in range(rng.choice(PER_RUN))]
    sent: list[int] = []
    first_at, first_mono = 0.0, 0.0
    for index, signum in enumerate(plan):
        if index:
            time.sleep(rng.uniform(0, 0.1))
        at, mono = time.time(), time.monotonic()
        if send(proc, signum):
            sent.append(signum)
            if len(sent) == 1:
                first_at, first_mono = at, mono
    try:
        _, err = proc.communicate(timeout=HANG)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        _, err = proc.communicate()
        pytest.fail(f"the run hung after {sent} ({rev}): {err}")
    ended = time.monotonic()
    if not sent:
        pace.ran(ended - began)
    assert group_gone(proc.pid), f"workers outlived the run after {sent}"
    return Stopped(proc.returncode, sent, err, first_at, ended - first_mono if sent else 0.0)


def check_end(out: Path, code: int, sent: list[int], err: str, first_at: float, old: str) -> None:
    """The end state after a stopped run (module docstring)."""
    sha = complete(out)  # the previous complete output or the new complete one
    changed = sha != old
    # 130 for Ctrl-C, 143 for SIGTERM (never -2, the status of a process
    # Python ended by SIGINT: miner.cli._forget_escaped_interrupt)
    codes = {128 + s for s in sent}
    if code == 0:
        assert not sent or published_at(out) <= first_at, f"signals {sent} swallowed: {err}"
        assert changed
    else:
        assert code in codes, (code, sent, err)
        lines = err.strip().splitlines()
        word = "terminated" if code == 143 else "interrupted"
        assert len(lines) == 1 and lines[0].startswith(f"miner: {word}; "), lines
        says_published = lines[0].endswith("was published before the stop")
        assert says_published == changed, (lines, changed)
        if not says_published:
            assert lines[0].endswith("the previous output is kept"), lines
    assert not lock_path(out).exists()
    assert not made_path(out).exists()
    assert leftovers(out) == []


def first_output(repo: Path, out: Path) -> float:
    """Mine ``a`` into ``out`` without a signal; returns how long it took."""
    began = time.monotonic()
    proc = start(command(repo, "a", out))
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    return time.monotonic() - began


@dataclass
class Tally:
    """What the lanes saw, shared between them."""

    signals: int = 0
    runs: int = 0
    slowest: float = 0.0
    outcomes: dict[int, int] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, stopped: Stopped) -> bool:
        """Count one run; False once :data:`SIGNALS` have been sent."""
        with self.lock:
            self.runs += 1
            self.signals += len(stopped.sent)
            self.outcomes[stopped.code] = self.outcomes.get(stopped.code, 0) + 1
            if stopped.code:
                self.slowest = max(self.slowest, stopped.took)
            assert self.runs <= 3 * SIGNALS, f"{self.signals} signals in {self.runs} runs"
            return self.signals < SIGNALS


def lane(repo: Path, out: Path, seed: int, pace: Pace, tally: Tally) -> None:
    """Runs into ``out``, each stopped at random, until the lanes together
    have sent :data:`SIGNALS` signals; the end state checked after each."""
    rng = random.Random(seed)
    going = True
    while going:
        old = complete(out)
        stopped = stop_once(repo, out, rng, pace)
        check_end(out, stopped.code, stopped.sent, stopped.err, stopped.first_at, old)
        going = tally.add(stopped)


@pytest.mark.slow
def test_stop_signals_at_random_points_end_the_run_cleanly(small: Path, tmp_path: Path) -> None:
    outs = [tmp_path / f"out{index}" for index in range(LANES)]
    tally = Tally()
    with ThreadPoolExecutor(LANES) as threads:
        pace = Pace(list(threads.map(lambda out: first_output(small, out), outs)))
        lanes = [
            threads.submit(lane, small, out, 36 + i, pace, tally) for i, out in enumerate(outs)
        ]
        for running in lanes:
            running.result()
    assert tally.signals >= SIGNALS
    assert tally.slowest < STOP_LIMIT, f"a stopped run took {tally.slowest:.1f} s to end"
    # both kinds of stop were seen, and runs done before a signal reached them
    assert {0, 130, 143} <= set(tally.outcomes), tally.outcomes


# -- a signal whose exception is swallowed -------------------------------------------------


class _Swallows:
    """What GitPython's objects do when collected: clean-up in ``__del__``,
    where an exception (here ``SIGTERM``'s, raised while it runs) is only
    reported, never raised."""

    def __del__(self) -> None:
        signal.raise_signal(signal.SIGTERM)
        for _ in range(1000):  # the handler runs between these bytecodes
            pass


@pytest.mark.parametrize("site", [False, True])
def test_a_stop_signal_swallowed_by_a_del_still_stops_the_run(
    make_repo, tmp_path: Path, monkeypatch, capsys, site: bool
) -> None:
    from conftest import add_commit

    from miner import pipeline
    from miner.cli import main

    repo = make_repo({"pkg/a.py": "def f(x):\n    raise ValueError(f'mode {x} is bad')\n"})
    add_commit(repo, {"pkg/b.py": "def g(y):\n    raise KeyError(f'no model {y}')\n"}, tag="v2")
    out = tmp_path / "out"
    argv = ["mine", "--repo", str(repo), "--out", str(out), "-q", *(["--site"] if site else [])]
    assert main([*argv, "--commit", "v1"]) == 0
    before = complete(out)
    real = pipeline.analyze_mining

    def swallowing(mining):  # type: ignore[no-untyped-def]
        _Swallows()  # collected at once: SIGTERM raised in its __del__
        return real(mining)

    monkeypatch.setattr(pipeline, "analyze_mining", swallowing)
    capsys.readouterr()
    assert main([*argv, "--commit", "v2", "--no-cache"]) == 143
    assert capsys.readouterr().err.splitlines() == [
        "miner: terminated; the previous output is kept"
    ]
    assert complete(out) == before
    assert not lock_path(out).exists() and leftovers(out) == []
    # the signal was this run's: the next one is not stopped by it
    monkeypatch.undo()
    assert main([*argv, "--commit", "v2"]) == 0
    assert complete(out) != before


def test_ctrl_c_that_python_wraps_in_another_error_still_exits_130(
    make_repo, tmp_path: Path, monkeypatch, capsys
) -> None:
    """Python 3.11 wraps an exception raised in ``__set_name__`` (a class
    being made, as a dataclass import makes them) in a ``RuntimeError``: a
    Ctrl-C arriving there is still a Ctrl-C (one line, 130), not a
    traceback."""
    from miner import pipeline
    from miner.cli import main

    repo = make_repo({"pkg/a.py": "def f(x):\n    raise ValueError(f'mode {x} is bad')\n"})
    out = tmp_path / "out"

    class Field:
        def __set_name__(self, owner: type, name: str) -> None:
            signal.raise_signal(signal.SIGINT)
            for _ in range(1000):  # the handler runs between these bytecodes
                pass

    def interrupted(mining):  # type: ignore[no-untyped-def]
        type("Holder", (), {"field": Field()})
        raise AssertionError("the Ctrl-C was not raised")

    monkeypatch.setattr(pipeline, "analyze_mining", interrupted)
    argv = ["mine", "--repo", str(repo), "--commit", "v1", "--out", str(out), "-q"]
    assert main([*argv, "--no-cache"]) == 130
    assert capsys.readouterr().err.splitlines() == [
        "miner: interrupted; the previous output is kept"
    ]
    assert not out.exists() and not lock_path(out).exists() and leftovers(out) == []


def test_a_ctrl_c_that_left_exec_still_ends_python_m_with_its_code(tmp_path: Path) -> None:
    """A ``KeyboardInterrupt`` that left code run by ``exec()`` (a dataclass
    being made) and was caught: Python ends a ``python -m`` process by
    ``SIGINT`` at exit (status -2) unless the tool clears its note first."""
    for name, clear in (("plain", ""), ("cleared", "_forget_escaped_interrupt()\n")):
        package = tmp_path / name
        package.mkdir()
        (package / "__main__.py").write_text(
            "import sys\n"
            "from miner.cli import _forget_escaped_interrupt\n"
            "try:\n"
            "    exec('raise KeyboardInterrupt')\n"
            "except KeyboardInterrupt:\n"
            "    pass\n"
            f"{clear}"
            "sys.exit(130)\n"
        )
    codes = [
        subprocess.run([sys.executable, "-m", name], cwd=tmp_path, env=env()).returncode
        for name in ("plain", "cleared")
    ]
    assert codes[1] == 130
    if sys.version_info[:2] == (3, 11):  # the interpreter this was seen on
        assert codes[0] == -signal.SIGINT
