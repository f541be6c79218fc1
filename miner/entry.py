"""The ``miner`` command's first code: stop signals handled before anything
else is imported.

Importing the command line (:mod:`miner.cli` and what it imports) takes a
noticeable part of a short run. A Ctrl-C or a ``SIGTERM`` arriving then
would meet Python's defaults (a ``KeyboardInterrupt`` traceback from some
import; a silent death). :func:`run` first installs handlers that end the
process at once with the run's one line and exit code (nothing has been
read or written yet), then imports and runs :func:`miner.cli.run`, which
installs the run's own handlers (:mod:`miner.lifecycle`).
"""

from __future__ import annotations

import os
import signal
from typing import Any

#: What each stop signal ends the process with before the command starts.
_EARLY = {
    signal.SIGINT: (b"miner: interrupted; the previous output is kept\n", 130),
    signal.SIGTERM: (b"miner: terminated; the previous output is kept\n", 143),
}


def _stop_early(signum: int, frame: Any) -> None:
    line, code = _EARLY[signal.Signals(signum)]
    os.write(2, line)
    os._exit(code)


def install_early() -> None:
    """End the process with one line and 130 (Ctrl-C) or 143 (``SIGTERM``)
    on a stop signal (``SIGINT`` left ignored when the process started with
    it ignored: a background job of a shell)."""
    for signum in _EARLY:
        if signum == signal.SIGINT and signal.getsignal(signum) == signal.SIG_IGN:
            continue
        signal.signal(signum, _stop_early)


def run() -> None:
    """The ``miner`` command: :func:`install_early`, then :func:`miner.cli.run`."""
    install_early()
    from miner.cli import run as run_command

    run_command()
