"""How a run ends: signals, worker processes that die with their parent, and
the few steps that a signal must not cut in two.

* ``SIGTERM`` becomes :class:`TerminatedError` in the main thread, as
  ``SIGINT`` (Ctrl-C) becomes ``KeyboardInterrupt``: both unwind the stack, so
  every ``finally`` runs (the staging folder of an output is removed, worker
  pools are stopped) before :func:`miner.cli.main` prints one line and exits
  143 or 130.
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
import os
import signal
import sys
from collections.abc import Iterator
from typing import Any

#: ``prctl`` option: the signal sent to this process when its parent dies.
PR_SET_PDEATHSIG = 1
#: The signals a run ends on, with their exit codes (128 + signal number).
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class TerminatedError(BaseException):
    """``SIGTERM`` arrived (a ``BaseException``, like ``KeyboardInterrupt``,
    so that no ``except Exception`` swallows it)."""

    exit_code = 128 + signal.SIGTERM


def _on_sigterm(signum: int, frame: Any) -> None:
    raise TerminatedError


def install_handlers() -> None:
    """Make ``SIGTERM`` raise :class:`TerminatedError` (main thread only)."""
    signal.signal(signal.SIGTERM, _on_sigterm)


@contextlib.contextmanager
def handled(*, keep: bool = False) -> Iterator[None]:
    """Run the block with :func:`install_handlers`, then put the stop signals'
    previous handlers back, so a caller in the same process (a test calling
    ``cli.main``) is left as it was; a child it starts later would inherit an
    ignored ``SIGINT``. ``keep``: leave them as the block left them (the
    process is about to exit; :func:`quiet` then covers its teardown)."""
    previous = {signum: signal.getsignal(signum) for signum in STOP_SIGNALS}
    install_handlers()
    try:
        yield
    finally:
        if not keep:
            for signum, handler in previous.items():
                with contextlib.suppress(ValueError, OSError, TypeError):
                    signal.signal(signum, handler)


def quiet() -> None:
    """After the first stop signal: ignore more of them while the run ends
    (a second Ctrl-C would print a traceback from the exit's clean-up)."""
    for signum in STOP_SIGNALS:
        with contextlib.suppress(ValueError, OSError):
            signal.signal(signum, signal.SIG_IGN)


def die_with_parent() -> None:
    """In a worker process: be killed when the parent process dies, and leave
    Ctrl-C to the parent (no traceback from each worker).

    When the parent died already (before the request took effect), exit now.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
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
    meanwhile is delivered then (and raises there)."""
    try:
        previous = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    except (AttributeError, ValueError):  # pragma: no cover - not the main thread / platform
        yield
        return
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)
