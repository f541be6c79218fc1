"""Time the site and lookup on a mined output folder (``miner mine --out DIR``).

    .venv/bin/python benchmarks/bench_site.py DIR

Prints wall-clock seconds and sizes: writing the site into a fresh folder,
writing it again unchanged, loading the lookup index from the site and from
``sites.jsonl``, and matching a few pastes. Numbers vary with the machine's
load; the README quotes one run on v0.5.19.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
import time
from pathlib import Path

from miner.lookup import LookupIndex
from miner.model import group_errors
from miner.publish.html import load_diffs, write_site
from miner.publish.records import read_mined

PASTES = (
    "MlxAuxiliaryStateComponent requires MlxAuxiliaryStatePool, got <class 'NoneType'>",
    "Host-pool retraction does not support Mamba models.",
    "ConnectionRefusedError: [Errno 111] Connection refused",
)


def timed(label: str, func, *args, **kwargs):
    start = time.perf_counter()
    value = func(*args, **kwargs)
    print(f"{label}: {time.perf_counter() - start:.2f} s")
    return value


def main(out: Path) -> None:
    published = timed("load records", read_mined, out)
    result, manifest = published.result, published.manifest
    print(f"errors: {len(result.errors)}, sites: {len(result.sites)}")
    dest = Path(tempfile.mkdtemp(prefix="bench-site-"))
    try:
        args = (result, dest, published.analyses, manifest["counts"])
        kwargs = {"diffs": load_diffs(out)}
        stats = timed("site, fresh", write_site, *args, **kwargs)
        print(f"  {stats['written']} files, {stats['bytes'] / 2**20:.1f} MiB")
        stats = timed("site, unchanged", write_site, *args, **kwargs)
        print(f"  {stats['written']} files rewritten")
    finally:
        shutil.rmtree(dest)
    index = timed("lookup index (LookupIndex.load)", LookupIndex.load, out)
    timed("lookup index from errors", LookupIndex.from_errors, group_errors(result.sites))
    for paste in PASTES:
        matches = timed(f"search {paste[:40]!r}", index.search, paste)
        print(f"  best: {matches[0].score if matches else None}")


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "output"))
