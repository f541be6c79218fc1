"""The size budget of the published site: what a static host accepts.

The release site's HTML folder (``<out>/site``: pages, the JSON API, the
search data) is what the release workflow deploys. Static hosts refuse a site
past their limits, and the deployment then fails half way or not at all:

* GitHub Pages: a published site of at most 1 GB;
* GitLab Pages: at most 1 GB and 200,000 files.

:data:`DEFAULT` is the stricter of both (1,000,000,000 bytes, 200,000 files).
Every file counts whole, hard links and symbolic links to files too (the
Pages artifact's tar dereferences them).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from miner.errors import MinerError


class BudgetError(MinerError):
    """The published site is over the size budget: deploying it would fail."""

    exit_code = 3


@dataclass(frozen=True)
class Budget:
    """The most a published site may hold."""

    max_bytes: int
    """Bytes of all its files together."""
    max_files: int
    """Number of files."""


#: GitHub Pages (1 GB) and GitLab Pages (1 GB, 200,000 files) both.
DEFAULT = Budget(max_bytes=1_000_000_000, max_files=200_000)


@dataclass(frozen=True)
class Size:
    """What a folder holds: its files' bytes (apparent sizes) and count."""

    bytes: int
    files: int

    def text(self) -> str:
        """``123,456,789 bytes (117.7 MiB), 8,123 files``."""
        return f"{self.bytes:,} bytes ({self.bytes / 2**20:.1f} MiB), {self.files:,} files"


def measure(folder: Path) -> Size:
    """The bytes and files under ``folder`` (every file, links followed; an
    unreadable entry is skipped). A missing folder holds nothing."""
    total = count = 0
    for root, _dirs, files in os.walk(folder, followlinks=True):
        for name in files:
            try:
                total += Path(root, name).stat().st_size
            except OSError:
                continue
            count += 1
    return Size(total, count)


def check(folder: Path, budget: Budget = DEFAULT) -> Size:
    """The size of the published site ``folder``, when within ``budget``.

    Raises:
        BudgetError: over the budget in bytes or files (one line naming the
            folder, its size and the limit).
    """
    size = measure(folder)
    if size.bytes > budget.max_bytes or size.files > budget.max_files:
        raise BudgetError(
            f"{folder}: the published site is {size.text()}, over the budget of "
            f"{budget.max_bytes:,} bytes and {budget.max_files:,} files "
            "(GitHub Pages: 1 GB; GitLab Pages: 1 GB, 200,000 files); not deployable, "
            "publish fewer releases (--since) or raise --max-bytes/--max-files for another host"
        )
    return size
