"""Files written whole or not at all: the one place that writes bytes to disk.

Used by the commit store (:mod:`miner.mining.store`) and every writer of
:mod:`miner.publish`.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Container, Iterable
from pathlib import Path


def write_text(path: Path, text: str) -> bool:
    """Write ``text`` to ``path`` atomically unless it already holds it.

    Returns True when the file was (re)written.
    """
    return write_bytes(path, text.encode("utf-8", "surrogateescape"))


def write_bytes(path: Path, data: bytes) -> bool:
    """Write ``data`` to ``path`` atomically unless it already holds it.

    Returns True when the file was (re)written.
    """
    try:
        if path.read_bytes() == data:
            return False
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        Path(tmp).chmod(0o644)
        Path(tmp).replace(path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return True


def remove_stale(folders: Iterable[tuple[Path, str]], wanted: Container[Path]) -> int:
    """Delete files matching each ``(folder, glob)`` that are not in ``wanted``
    (what a previous run wrote for errors that are gone); returns how many."""
    removed = 0
    for folder, pattern in folders:
        for stale in sorted(folder.glob(pattern)):
            if stale not in wanted:
                stale.unlink()
                removed += 1
    return removed
