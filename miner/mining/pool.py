"""Parallel extraction: a pool of worker processes that a bad file cannot sink.

:func:`extract_parallel` runs :func:`miner.extract.runner.extract_file` over
many blobs in ``jobs`` worker processes and hands each result to a callback as
it arrives; the caller puts them in path order.

Why our own pool rather than ``concurrent.futures.ProcessPoolExecutor``: a
worker that dies (libcst's native parser segfaults on deeply nested brackets
and aborts when an allocation fails) breaks an executor as a whole, and an
executor cannot stop one task that runs too long. Here each worker is a
``multiprocessing`` process with its own pipe, so the parent always knows which
file a worker is on and since when; it can kill that worker alone, record the
file as ``failed`` with the reason, start a replacement and hand it the rest
of the batch. Workers are forked from a ``forkserver`` that has imported the
extractor once, so starting one costs milliseconds and never inherits the
parent's threads or open git processes.

Work items are balanced by size: blobs are sorted largest first and grouped
into batches of about the same number of bytes, so a few big files start
early and small ones fill in at the end.

Per worker, three limits (:class:`Limits`): an address-space limit
(``RLIMIT_AS``), checked by the kernel; a wall-clock limit per file, checked by
the parent; and whatever kills the process (a signal). Each costs one file:

* ``parser crashed (SIGSEGV)`` (or the signal's name),
* ``out of memory (limit 4096 MB)`` (a ``MemoryError`` in Python, or the
  native parser's "memory allocation failed" abort),
* ``time limit 60 s``.

Test-only hook: with ``RAISE_MINER_TEST_HOOKS=1`` in the environment, a file
whose bytes hold ``# raise-miner-test: <action>`` makes the worker crash,
stall or run out of memory on purpose (see :func:`_test_hook`), so tests can
check the pool without depending on a parser bug.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import resource
import signal
import sys
import tempfile
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from multiprocessing import resource_tracker
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any

import git

from miner.errors import WorkerStartError
from miner.extract.runner import extract_file
from miner.lifecycle import children_quiet, die_with_parent
from miner.mining.cache import UnitReader
from miner.model import FileResult, Site

#: What a worker may compute from a file it mined (its path, bytes and
#: sites) for the parent to keep beside the result: bytes, or None.
FileHook = Callable[[str, bytes, Sequence[Site]], bytes]

#: Exit code of a worker that stops on purpose after reporting a file (out of
#: memory leaves a process in doubtful shape): the parent starts a new one.
EXIT_RESTART = 75
#: The native parser's message on stderr before it aborts for lack of memory.
_NATIVE_OOM = b"memory allocation of"
_TEST_HOOK_ENV = "RAISE_MINER_TEST_HOOKS"
_TEST_MARK = b"# raise-miner-test: "
#: The index a worker sends, with no result, once it is ready for work.
_READY = -1


@dataclass(frozen=True, slots=True)
class Limits:
    """What one file may cost a worker before it is given up."""

    file_timeout: float = 60.0
    """Wall-clock seconds per file (reading, parsing, visiting); 0 or less: none."""
    memory_mb: int | None = 4096
    """Address-space limit per worker process in MiB (``RLIMIT_AS``); None: none."""


@dataclass(frozen=True, slots=True)
class Task:
    """One blob to mine."""

    index: int
    """The caller's key for the result."""
    path: str
    blob: str
    size: int
    """Bytes; used to balance batches."""
    data: bytes | None = None
    """The blob's bytes, or None for the worker to read them from the repository."""


def default_jobs() -> int:
    """The CPUs this process may run on (``sched_getaffinity``), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def make_batches(tasks: Sequence[Task], jobs: int) -> list[list[Task]]:
    """Tasks sorted largest first, grouped into batches of roughly equal bytes.

    A batch holds at most 64 files and about ``total / (16 * jobs)`` bytes
    (between 16 KiB and 1 MiB), so every worker gets many batches and the last
    ones, made of the smallest files, even out the finish.
    """
    ordered = sorted(tasks, key=lambda t: (-t.size, t.path, t.index))
    total = sum(t.size for t in ordered)
    target = min(1 << 20, max(16 << 10, total // (16 * max(1, jobs))))
    batches: list[list[Task]] = []
    current: list[Task] = []
    size = 0
    for task in ordered:
        current.append(task)
        size += task.size
        if size >= target or len(current) >= 64:
            batches.append(current)
            current, size = [], 0
    if current:
        batches.append(current)
    return batches


# -- the worker process ---------------------------------------------------------


def _test_hook(data: bytes) -> None:
    """Test-only: misbehave on purpose (the parent enables it when its
    environment holds ``RAISE_MINER_TEST_HOOKS=1``); the file's bytes pick the
    action: ``segv`` (kill the worker with SIGSEGV), ``sleep`` (stall past any
    time limit), ``oom`` (allocate until the memory limit stops it), and
    ``native-oom`` (what libcst's native parser does when an allocation fails:
    a message on stderr, then abort).
    """
    if _TEST_MARK not in data:
        return
    action = data.split(_TEST_MARK, 1)[1].split(b"\n", 1)[0].strip()
    if action == b"segv":
        os.kill(os.getpid(), signal.SIGSEGV)
    elif action == b"sleep":
        time.sleep(3600)
    elif action == b"oom":
        hoard = [bytearray(64 << 20) for _ in range(1024)]  # 64 GiB: past any limit
        del hoard
    elif action == b"native-oom":
        os.write(2, b"memory allocation of 64 bytes failed\n")
        os.abort()


def _worker_main(
    conn: Connection,
    git_dir: str,
    partial: bool,
    memory_mb: int | None,
    stderr_path: str,
    test_hooks: bool,
    units: tuple[str, str] | None = None,
    hook: FileHook | None = None,
) -> None:
    """Serve batches from ``conn`` until it closes: one message per file,
    ``(index, result, cacheable, units parsed, hook's bytes or None)``;
    ``units`` is the blob cache's (path, extractor version) whose ``units``
    table it reads; ``hook`` runs on each file mined (:func:`hooked`)."""
    # Killed when the forkserver (whose child this is) ends, which it does when
    # the run's process ends (even by SIGKILL); Ctrl-C is the parent's to handle.
    die_with_parent()
    try:
        fd = os.open(stderr_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    except OSError:  # the run stopped and removed its scratch folder as this one began
        os._exit(1)
    os.dup2(fd, 2)  # a native crash's report goes where the parent can read it
    os.close(fd)
    if memory_mb:
        limit = memory_mb << 20
        _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        if hard != resource.RLIM_INFINITY:
            limit = min(limit, hard)
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    repo: git.Repo | None = None
    memo = UnitReader(*units) if units is not None and partial else None
    conn.send((_READY, None, False, [], None))
    while True:
        try:
            batch: list[Task] | None = conn.recv()
        except (EOFError, OSError):
            return
        if batch is None:
            return
        for task in batch:
            data = task.data
            try:
                if data is None:
                    if repo is None:
                        repo = git.Repo(git_dir)
                    data = repo.odb.stream(bytes.fromhex(task.blob)).read()
            except Exception as exc:  # noqa: BLE001 - one unreadable blob fails alone
                reason = f"cannot read blob: {type(exc).__name__}: {exc}"
                conn.send((task.index, _failed(task, reason), False, [], None))
                continue
            try:
                if test_hooks:
                    _test_hook(data)
                result = extract_file(task.path, task.blob, data, partial=partial, memo=memo)
                if result.status == "failed" and "MemoryError" in (result.reason or ""):
                    raise MemoryError
            except MemoryError:
                data = None
                conn.send((task.index, _failed(task, out_of_memory(memory_mb)), False, [], None))
                sys.exit(EXIT_RESTART)  # a fresh process rather than a doubtful one
            except Exception as exc:  # noqa: BLE001 - extract_file should never raise
                reason = f"{type(exc).__name__} while mining: {exc}"
                conn.send((task.index, _failed(task, reason), False, [], None))
                continue
            parsed = memo.take() if memo is not None else []
            conn.send((task.index, result, True, parsed, hooked(hook, data, result)))


def hooked(hook: FileHook | None, data: bytes, result: FileResult) -> bytes | None:
    """``hook`` of a mined file (its path, bytes and sites), or None: no
    hook, the file was not mined, or the hook failed (the parent then does
    without; a ``MemoryError`` included, the file's sites being safe)."""
    if hook is None or result.status != "mined":
        return None
    try:
        return hook(result.path, data, result.sites)
    except Exception:  # noqa: BLE001 - the hook's failure costs only its bytes
        return None


def _failed(task: Task, reason: str) -> FileResult:
    return FileResult(path=task.path, blob=task.blob, status="failed", reason=reason)


def out_of_memory(memory_mb: int | None) -> str:
    """The reason recorded for a file that exhausted a worker's memory."""
    return f"out of memory (limit {memory_mb} MB)" if memory_mb else "out of memory"


def time_limit(seconds: float) -> str:
    """The reason recorded for a file that ran past the per-file time limit."""
    return f"time limit {seconds:g} s"


# -- the parent's side ----------------------------------------------------------


@dataclass
class _Worker:
    process: Any
    conn: Connection
    stderr_path: str
    ready: bool = False
    """The worker has started and said so; a death before that is not a file's fault."""
    batch: list[Task] = field(default_factory=list)
    position: int = 0
    """Index in ``batch`` of the file being mined."""
    started: float = 0.0
    """``time.monotonic()`` when the current file began."""

    @property
    def busy(self) -> bool:
        return self.position < len(self.batch)

    @property
    def current(self) -> Task:
        return self.batch[self.position]


def _context() -> Any:
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["miner.mining.pool"])
    return ctx


def extract_parallel(
    git_dir: str,
    tasks: Sequence[Task],
    *,
    jobs: int,
    partial: bool = True,
    limits: Limits | None = None,
    on_result: Callable[[int, FileResult, bool], None],
    units: tuple[str, str] | None = None,
    on_units: Callable[[list[tuple[str, bytes]]], None] | None = None,
    hook: tuple[FileHook, Callable[[int, bytes], None]] | None = None,
) -> int:
    """Mine ``tasks`` in ``jobs`` worker processes.

    Args:
        git_dir: the repository's git folder; workers open it once each to
            read blobs of tasks sent without ``data``.
        tasks: the blobs to mine; ``index`` keys the results.
        jobs: worker processes to run at once (at least 1).
        partial: passed to :func:`~miner.extract.runner.extract_file`.
        limits: per-file and per-worker limits (default :class:`Limits`).
        on_result: called in the parent with ``(task.index, result, cacheable)``
            once per task, in completion order; ``cacheable`` is True when the
            extractor produced the result, False when the pool recorded a
            failure (crash, limit, unreadable blob).
        units: the blob cache's (path, extractor version): the workers read
            the sites of units parsed before from its ``units`` table
            (:class:`~miner.mining.cache.UnitReader`).
        on_units: called in the parent with the (key, encoded sites) of the
            units a worker parsed for one file, after that file's result.
        hook: (what a worker computes from each file it mines, called in the
            parent with ``(task.index, the bytes it made)`` after that file's
            result); pickled by reference, so a function or an instance of a
            class of an importable module.

    Returns:
        How many workers were lost (crashed, killed or restarted) and replaced.

    A file on which a worker crashes, runs out of memory or passes the time
    limit is reported as a ``failed`` result with the reason; the rest of that
    worker's batch goes to a fresh worker. Never raises for a file's sake;
    ``KeyboardInterrupt`` stops every worker before it propagates.
    """
    pool = _Pool(git_dir, jobs, partial, limits or Limits(), on_result, units, on_units)
    pool.hook = hook
    pool.pending.extend(make_batches(tasks, jobs))
    if not pool.pending:
        return 0
    finished = False
    try:
        pool.run()
        finished = True
    finally:
        pool.shutdown(graceful=finished)
    return pool.lost


class _Pool:
    """The state of one :func:`extract_parallel` run: the workers, the batches
    not yet sent, and how many workers were lost."""

    def __init__(
        self,
        git_dir: str,
        jobs: int,
        partial: bool,
        limits: Limits,
        on_result: Callable[[int, FileResult, bool], None],
        units: tuple[str, str] | None = None,
        on_units: Callable[[list[tuple[str, bytes]]], None] | None = None,
    ) -> None:
        self.git_dir = git_dir
        self.units = units if on_units is not None else None
        self.on_units = on_units
        self.jobs = jobs
        self.partial = partial
        self.limits = limits
        self.on_result = on_result
        self.pending: deque[list[Task]] = deque()
        self.workers: list[_Worker] = []
        self.lost = 0
        self.ctx = _context()
        self.scratch = tempfile.TemporaryDirectory(prefix="raise-miner-workers-")
        self.serial = 0
        self.test_hooks = os.environ.get(_TEST_HOOK_ENV) == "1"
        self.hook: tuple[FileHook, Callable[[int, bytes], None]] | None = None

    def run(self) -> None:
        """Send batches and collect results until every task has a result."""
        self.workers.extend(self.spawn() for _ in range(min(self.jobs, len(self.pending))))
        while self.pending or any(w.busy for w in self.workers):
            self.dispatch()
            if not self.workers:
                self.workers.append(self.spawn())
                continue
            ready = set(wait(self.waitables(), self.timeout()))
            for worker in list(self.workers):
                self.check(worker, ready)
            wanted = min(self.jobs, len(self.pending) + sum(1 for w in self.workers if w.busy))
            self.workers.extend(self.spawn() for _ in range(wanted - len(self.workers)))

    def spawn(self) -> _Worker:
        self.serial += 1
        stderr_path = str(Path(self.scratch.name) / f"worker-{self.serial}.stderr")
        parent_conn, child_conn = self.ctx.Pipe(duplex=True)
        process = self.ctx.Process(
            target=_worker_main,
            args=(
                child_conn,
                self.git_dir,
                self.partial,
                self.limits.memory_mb,
                stderr_path,
                self.test_hooks,
                self.units,
                None if self.hook is None else self.hook[0],
            ),
            name=f"raise-miner-worker-{self.serial}",
            daemon=True,
        )
        with children_quiet():  # it unblocks the stop signals when it starts one
            resource_tracker.ensure_running()
        with children_quiet():  # the forkserver (started by the first) and the worker
            process.start()
        child_conn.close()
        return _Worker(process=process, conn=parent_conn, stderr_path=stderr_path)

    def dispatch(self) -> None:
        """Give a batch to every idle worker while batches are pending."""
        for worker in list(self.workers):
            if worker.busy or not self.pending:
                continue
            batch = self.pending.popleft()
            try:
                worker.conn.send(batch)
            except OSError:  # it died while idle: nobody to blame
                self.pending.appendleft(batch)
                self.retire(worker, None)
                continue
            worker.batch, worker.position = batch, 0
            worker.started = time.monotonic()

    def waitables(self) -> list[Any]:
        return [w.conn for w in self.workers] + [w.process.sentinel for w in self.workers]

    def timeout(self) -> float | None:
        """Seconds until the first busy worker passes the per-file time limit."""
        if self.limits.file_timeout <= 0:
            return None
        deadlines = [w.started + self.limits.file_timeout for w in self.workers if w.busy]
        return max(0.0, min(deadlines) - time.monotonic()) if deadlines else None

    def check(self, worker: _Worker, ready: set[Any]) -> None:
        """Take a worker's results; replace it when it died or ran out of time.

        Raises:
            WorkerStartError: it died before it could take any work.
        """
        alive = True
        if worker.conn in ready or worker.process.sentinel in ready:
            alive = self.drain(worker)
        if worker.process.sentinel in ready or not alive:
            worker.process.join()
            if not worker.ready:
                raise WorkerStartError(
                    f"a worker process exited with code {worker.process.exitcode} "
                    "before taking work (a script that mines must guard its main "
                    "code with `if __name__ == '__main__':`); --jobs 0 mines "
                    "in one process"
                )
            self.retire(worker, _death_reason(worker, self.limits))
        elif (
            self.limits.file_timeout > 0
            and worker.busy
            and time.monotonic() - worker.started > self.limits.file_timeout
        ):
            worker.process.kill()
            self.retire(worker, time_limit(self.limits.file_timeout))

    def retire(self, worker: _Worker, reason: str | None) -> None:
        """Drop a dead (or killed) worker: blame its current file, requeue the rest."""
        self.lost += 1
        worker.conn.close()
        worker.process.join()
        if worker.busy:
            rest = worker.batch[worker.position :]
            if reason is not None:
                self.on_result(rest[0].index, _failed(rest[0], reason), False)
                rest = rest[1:]
            if rest:
                self.pending.appendleft(rest)
        self.workers.remove(worker)

    def drain(self, worker: _Worker) -> bool:
        """Take every result waiting in the pipe; False when the pipe is closed."""
        try:
            while worker.conn.poll():
                index, result, cacheable, parsed, made = worker.conn.recv()
                if index == _READY:
                    worker.ready = True
                    continue
                if worker.busy and worker.current.index == index:
                    worker.position += 1
                    worker.started = time.monotonic()
                self.on_result(index, result, cacheable)
                if parsed and self.on_units is not None:
                    self.on_units(parsed)
                if made is not None and self.hook is not None:
                    self.hook[1](index, made)
        except (EOFError, OSError):
            return False
        except Exception:  # noqa: BLE001 - a message cut short by the worker's death
            return False
        return True

    def shutdown(self, *, graceful: bool) -> None:
        """Stop every worker (asked to finish when ``graceful``, else killed)."""
        for worker in self.workers:
            if graceful:
                with contextlib.suppress(OSError):
                    worker.conn.send(None)
            else:
                worker.process.kill()
        for worker in self.workers:
            worker.process.join(timeout=5)
            if worker.process.is_alive():
                worker.process.kill()
                worker.process.join()
            worker.conn.close()
        self.scratch.cleanup()


def _death_reason(worker: _Worker, limits: Limits) -> str | None:
    """Why the worker's current file failed, from how the worker ended."""
    code = worker.process.exitcode
    if code == EXIT_RESTART:
        return None  # it reported its file and stepped down
    try:
        report = Path(worker.stderr_path).read_bytes()[-4096:]
    except OSError:
        report = b""
    if _NATIVE_OOM in report:
        return out_of_memory(limits.memory_mb)
    if code is not None and code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"parser crashed ({name})"
    return f"worker exited with code {code}"
