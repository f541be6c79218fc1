"""How a run ends: signals, worker processes that die with their parent, and
the few steps that a signal must not cut in two.

* ``SIGTERM`` becomes :class:`TerminatedError` in the main thread, as
  ``SIGINT`` (Ctrl-C) becomes ``KeyboardInterrupt``: both unwind the stack, so
  every ``finally`` runs (the staging folder of an output is removed, worker
  pools are stopped) before :func:`miner.cli.main` prints one line and exits
  143 or 130. Later stop signals are only noted (a second Ctrl-C does not
  cut the clean-up in two), and so is one whose exception was swallowed
  (raised inside a ``__del__``): :func:`check_stop` raises it again.
* :func:`children_quiet` starts child processes with the stop signals
  blocked, so one sent to the whole process group while a child starts
  prints nothing from it.
* :func:`die_with_parent` is called first thing in every worker process (the
  mining pool's, the site's render pool's): the kernel kills the worker when
  its parent dies, even by ``SIGKILL`` (``prctl(PR_SET_PDEATHSIG)``); workers
  also ignore ``SIGINT``, which a terminal sends to the whole process group,
  so Ctrl-C prints no traceback from them.
* :func:`signals_held` defers ``SIGINT`` and ``SIGTERM`` across a step that
  must finish once begun (the swap of an output folder).
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import logging
import multiprocessing
import os
import signal
import sys
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any, TypeVar

log = logging.getLogger(__name__)
T = TypeVar("T")
R = TypeVar("R")

#: ``prctl`` option: the signal sent to this process when its parent dies.
PR_SET_PDEATHSIG = 1
#: The signals a run ends on, with their exit codes (128 + signal number).
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class TerminatedError(BaseException):
    """``SIGTERM`` arrived (a ``BaseException``, like ``KeyboardInterrupt``,
    so that no ``except Exception`` swallows it)."""

    exit_code = 128 + signal.SIGTERM


#: The stop signals this process received since :func:`handled` began, in
#: order: noted by the handlers before they raise, so that a signal whose
#: exception was swallowed (raised inside a ``__del__`` or a weak reference's
#: callback, where Python only reports it) still stops the run at the next
#: :func:`check_stop`.
_RECEIVED: list[int] = []


def _note(signum: int, frame: Any) -> None:
    """A stop signal after the first: noted only (the run is ending; an
    exception now would cut the clean-up of the first in two)."""
    _RECEIVED.append(signum)


def _stop(signum: int) -> None:
    """Note ``signum``; on the first stop signal, make later ones
    :func:`_note` only and raise its exception."""
    first = not _RECEIVED
    _RECEIVED.append(signum)
    if first:
        for number in STOP_SIGNALS:
            if signal.getsignal(number) != signal.SIG_IGN:
                signal.signal(number, _note)
        raise _stop_error(signum)


def _on_sigterm(signum: int, frame: Any) -> None:
    _stop(signum)


def _on_sigint(signum: int, frame: Any) -> None:
    _stop(signum)


def _stop_error(signum: int) -> BaseException:
    return KeyboardInterrupt() if signum == signal.SIGINT else TerminatedError()


def received() -> int | None:
    """The first stop signal received since :func:`handled` began, or None."""
    return _RECEIVED[0] if _RECEIVED else None


def check_stop() -> None:
    """Raise the exception of a stop signal that arrived and did not end the
    run (its exception was swallowed: :data:`_RECEIVED`); nothing otherwise.

    Raises:
        KeyboardInterrupt: ``SIGINT`` arrived.
        TerminatedError: ``SIGTERM`` arrived.
    """
    if _RECEIVED:
        raise _stop_error(_RECEIVED[0])


def _unraisable(hook: Callable[[Any], None]) -> Callable[[Any], None]:
    """``sys.unraisablehook`` that takes a stop signal's exception raised
    where Python cannot raise it (a ``__del__``) silently: the signal is
    noted (:data:`_RECEIVED`) and :func:`check_stop` raises it again; other
    exceptions go to ``hook``."""

    def report(unraisable: Any) -> None:
        if isinstance(unraisable.exc_value, (KeyboardInterrupt, TerminatedError)):
            if not _RECEIVED:
                kind = isinstance(unraisable.exc_value, KeyboardInterrupt)
                _RECEIVED.append(signal.SIGINT if kind else signal.SIGTERM)
            return
        hook(unraisable)

    return report


def install_handlers() -> None:
    """Make ``SIGTERM`` raise :class:`TerminatedError` and ``SIGINT``
    ``KeyboardInterrupt``, each noted first (:func:`check_stop`); main
    thread only. A ``SIGINT`` ignored stays ignored (a shell starts its
    background jobs so: the terminal's Ctrl-C is not theirs)."""
    signal.signal(signal.SIGTERM, _on_sigterm)
    if signal.getsignal(signal.SIGINT) != signal.SIG_IGN:
        signal.signal(signal.SIGINT, _on_sigint)


@contextlib.contextmanager
def handled(*, keep: bool = False) -> Iterator[None]:
    """Run the block with :func:`install_handlers` (and no stop signal
    received yet), then put the stop signals' previous handlers back, so a
    caller in the same process (a test calling ``cli.main``) is left as it
    was; a child it starts later would inherit an ignored ``SIGINT``.
    ``keep``: leave them as the block left them (the process is about to
    exit; :func:`quiet` then covers its teardown)."""
    previous = {signum: signal.getsignal(signum) for signum in STOP_SIGNALS}
    hook = sys.unraisablehook
    _RECEIVED.clear()
    install_handlers()
    sys.unraisablehook = _unraisable(hook)
    try:
        yield
    finally:
        if not keep:
            _RECEIVED.clear()  # a caller's later work is not stopped by this block's signals
            sys.unraisablehook = hook
            for signum, handler in previous.items():
                with contextlib.suppress(ValueError, OSError, TypeError):
                    signal.signal(signum, handler)


def quiet() -> None:
    """After the first stop signal: ignore more of them while the run ends
    (a second Ctrl-C would print a traceback from the exit's clean-up)."""
    for signum in STOP_SIGNALS:
        with contextlib.suppress(ValueError, OSError):
            signal.signal(signum, signal.SIG_IGN)


@contextlib.contextmanager
def children_quiet() -> Iterator[None]:
    """Block the stop signals in this thread while the block starts child
    processes (a fork, a forkserver's ``exec``): they inherit the blocked
    mask, so a Ctrl-C sent to the whole group while one is starting (before
    :func:`die_with_parent`, or while a forkserver imports its modules)
    prints no traceback from it. A signal sent to this process meanwhile is
    taken by another thread or delivered when the block ends: never lost."""
    if not hasattr(signal, "pthread_sigmask"):  # pragma: no cover - not POSIX
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def die_with_parent() -> None:
    """In a worker process: be killed when the parent process dies, and leave
    Ctrl-C to the parent (no traceback from each worker); ``SIGTERM`` ends
    it. The stop signals, blocked while it started (:func:`children_quiet`),
    are unblocked once so handled.

    When the parent died already (before the request took effect), exit now.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)
    parent = os.getppid()
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):  # pragma: no cover - no prctl
            pass
    if parent == 1 or os.getppid() != parent:
        os._exit(1)


@contextlib.contextmanager
def signals_held() -> Iterator[None]:
    """Hold ``SIGINT`` and ``SIGTERM`` until the block ends; one that arrived
    meanwhile is delivered then (and raises there).

    Held by Python handlers that only note the signal, not by the thread's
    signal mask: a process-directed signal may reach another thread (a pool's
    feeder), whose mask is not this one's, and Python runs every handler in
    the main thread anyway."""
    pending: list[int] = []
    previous: dict[int, Any] = {}
    try:
        for signum in STOP_SIGNALS:
            previous[signum] = signal.signal(signum, lambda n, _f: pending.append(n))
    except ValueError:  # pragma: no cover - not the main thread
        for number, handler in previous.items():
            signal.signal(number, handler)
        yield
        return
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
        if pending:
            signal.raise_signal(pending[0])


def worker_pool(
    jobs: int, initializer: Callable[..., None], *initargs: Any
) -> ProcessPoolExecutor | None:
    """A pool of ``jobs`` processes forked from this one (so they share its
    memory: the facts and the records are not sent), each started with
    ``initializer(*initargs)``, which must call :func:`die_with_parent` first.
    None where processes cannot be forked (not Linux, macOS: spawning would
    send everything): the caller then works in this process."""
    if not sys.platform.startswith("linux"):
        return None
    context = multiprocessing.get_context("fork")
    return ProcessPoolExecutor(jobs, mp_context=context, initializer=initializer, initargs=initargs)


def submit(pool: ProcessPoolExecutor, func: Callable[..., R], *args: Any) -> Future[R]:
    """``pool.submit(func, *args)``, its workers (forked at the first
    submission) started with the stop signals blocked (:func:`children_quiet`)."""
    with children_quiet():
        return pool.submit(func, *args)


def stop_pool(pool: ProcessPoolExecutor, *, graceful: bool) -> None:
    """Shut ``pool`` down; unless ``graceful`` (an error or a signal stopped
    the run), kill its workers first rather than wait for them."""
    if not graceful:
        for process in list((getattr(pool, "_processes", None) or {}).values()):
            with contextlib.suppress(OSError, AttributeError):
                process.kill()
    pool.shutdown(wait=True, cancel_futures=True)


_BESIDE: tuple[Callable[..., Any], tuple[Any, ...]] | None = None
#: How many forked pools are running with the parent's objects frozen.
_FROZEN = 0


@contextlib.contextmanager
def _parent_frozen() -> Iterator[None]:
    """While forked workers run: every object of this process moved to the
    garbage collector's permanent generation, so that its collections here
    do not write to the pages the workers share with it (a full collection
    writes into the header of every object it visits: each such page would
    then be copied, counted once for this process and once for each worker).
    What the block allocates is collected as usual; the frozen objects are
    put back when the outermost such block ends (:func:`gc.freeze`, and the
    Python docs' advice to freeze before ``fork``)."""
    global _FROZEN
    gc.freeze()
    _FROZEN += 1
    try:
        yield
    finally:
        _FROZEN -= 1
        if _FROZEN == 0:
            gc.unfreeze()


def _share_parent_memory() -> None:
    """In a forked worker: move every object inherited from the parent to
    the garbage collector's permanent generation, so that the worker's
    collections never write to those objects' pages, which then stay
    shared with the parent instead of being copied into each worker (the
    Python docs' advice for ``fork`` without ``exec``, :func:`gc.freeze`)."""
    gc.freeze()


def _start_beside(func: Callable[..., Any], args: tuple[Any, ...]) -> None:
    global _BESIDE
    die_with_parent()
    _share_parent_memory()
    _BESIDE = (func, args)


def _run_beside() -> Any:
    assert _BESIDE is not None, "worker started without its work"
    func, args = _BESIDE
    return func(*args)


@contextlib.contextmanager
def beside(jobs: int, func: Callable[..., T], *args: Any) -> Iterator[Callable[[], T]]:
    """Run ``func(*args)`` in a forked process while the block runs (with
    ``jobs`` > 1 on Linux; else in this process when its result is asked
    for); yields the function that returns its result (waiting for it).

    ``func`` and ``args`` are inherited by the fork, not sent; the result is
    sent back (pickled). A worker that dies (killed, out of memory) costs
    time, not the result: it is then computed here.
    """
    pool = worker_pool(1, _start_beside, func, args) if jobs > 1 else None
    if pool is None:
        yield lambda: func(*args)
        return
    with _parent_frozen():
        yield from _beside_in(pool, func, args)


def _beside_in(
    pool: ProcessPoolExecutor, func: Callable[..., T], args: tuple[Any, ...]
) -> Iterator[Callable[[], T]]:
    """:func:`beside` with its worker ``pool`` made."""
    future: Future[T] = submit(pool, _run_beside)

    def result() -> T:
        try:
            return future.result()
        except BrokenProcessPool:
            log.warning("a worker process died; its part is computed in this process")
            return func(*args)

    finished = False
    try:
        yield result
        finished = True
    finally:
        stop_pool(pool, graceful=finished)


_MAP: tuple[Callable[[Any], Any], Sequence[Any]] | None = None


def _start_map(func: Callable[[Any], Any], items: Sequence[Any]) -> None:
    global _MAP
    die_with_parent()
    _share_parent_memory()
    _MAP = (func, items)


def _map_span(span: tuple[int, int]) -> list[Any]:
    assert _MAP is not None, "worker started without its work"
    func, items = _MAP
    return [func(item) for item in items[span[0] : span[1]]]


def fork_imap(jobs: int, func: Callable[[T], R], items: Sequence[T], chunk: int = 1) -> Iterator[R]:
    """``func(x)`` for each of ``items``, in order, as they are computed by
    ``jobs`` forked processes (``jobs`` > 1, Linux, more than ``chunk``
    items; else in this process, one at a time).

    ``func`` and ``items`` are inherited by the fork, not sent; each task is
    ``chunk`` consecutive items, and the results come back (pickled) in
    order, so they are the same as one process's when ``func`` reads nothing
    that another call changes. A worker that dies (killed, out of memory)
    costs time, not the result: what is not yet yielded is then computed
    here. Closing the iterator early kills the workers. At most ``jobs`` x
    :data:`IN_FLIGHT` tasks run ahead of the results read: a slow reader
    holds that many results, not all of them.
    """
    count = len(items)
    pool = worker_pool(jobs, _start_map, func, items) if jobs > 1 and count > chunk else None
    if pool is None:
        yield from (func(item) for item in items)
        return
    with _parent_frozen():
        yield from _map_in(pool, func, items, chunk, jobs)


#: Tasks after which :func:`fork_imap` replaces its workers with new forks:
#: a worker's memory grows with every page of the parent it touches (a
#: reference count written copies the page), so a long-lived one ends up with
#: its own copy of most of them.
RENEW = 32


#: Tasks per worker of :func:`fork_imap` sent ahead of the one whose results
#: are being read: enough to keep every worker busy, few enough that results
#: read slowly (a parent writing files) do not pile up in its memory.
IN_FLIGHT = 3


def _bounded(
    pool: ProcessPoolExecutor, spans: Sequence[tuple[int, int]], ahead: int
) -> Iterator[list[Any]]:
    """The results of ``_map_span`` over ``spans``, in order, with at most
    ``ahead`` tasks sent and not yet read (:meth:`Executor.map` sends them
    all at once, and keeps every result until it is read)."""
    pending: deque[Future[list[Any]]] = deque()
    sent = 0
    while sent < len(spans) or pending:  # what is left when it stops: :func:`stop_pool`
        while sent < len(spans) and len(pending) < ahead:
            pending.append(submit(pool, _map_span, spans[sent]))
            sent += 1
        yield pending.popleft().result()


def _map_in(
    pool: ProcessPoolExecutor, func: Callable[[T], R], items: Sequence[T], chunk: int, jobs: int
) -> Iterator[R]:
    """:func:`fork_imap` with its first worker ``pool`` made: each
    :data:`RENEW` tasks run in a pool of their own, forked when the previous
    one has stopped."""
    count = len(items)
    spans = [(start, min(start + chunk, count)) for start in range(0, count, chunk)]
    done = 0
    for first in range(0, len(spans), RENEW):
        if first:
            gc.freeze()  # what this process made since, shared with the new forks too
            made = worker_pool(jobs, _start_map, func, items)
            assert made is not None, "the first pool was made"
            pool = made
        finished = False
        try:
            try:
                for part in _bounded(pool, spans[first : first + RENEW], jobs * IN_FLIGHT):
                    yield from part
                    done += len(part)
            except BrokenProcessPool:  # a worker died (killed, out of memory): the rest here
                log.warning("a worker process died; the rest is computed in this process")
                yield from (func(item) for item in items[done:])
                finished = True
                return
            finished = True
        finally:
            stop_pool(pool, graceful=finished)


def fork_map(jobs: int, func: Callable[[T], R], items: Sequence[T], chunk: int = 1) -> list[R]:
    """``list(fork_imap(jobs, func, items, chunk))``: :func:`fork_imap`'s
    results, all of them."""
    return list(fork_imap(jobs, func, items, chunk))
