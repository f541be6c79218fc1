"""Time the analysis stages on one commit: mining, facts, analyze.

Usage: ``python benchmarks/bench_analysis.py [REPO] [REV]`` (default: the
SGLang release repository at ``$RAISE_MINER_CORPUS`` or ``.corpus/sglang``, tag
``v0.5.19``). Prints seconds per stage; numbers are noisy on a shared machine.
"""

from __future__ import annotations

import os
import sys
import time

from miner import pipeline
from miner.analysis import analyze
from miner.analysis.facts import collect
from miner.mining import source


def main(argv: list[str]) -> int:
    repo_arg = argv[0] if argv else os.environ.get("RAISE_MINER_CORPUS", ".corpus/sglang")
    rev = argv[1] if len(argv) > 1 else "v0.5.19"
    start = time.perf_counter()
    repo, commit, info = pipeline.pin(repo_arg, rev)
    entries = source.python_blobs(repo, commit)
    result = pipeline.assemble(info, pipeline.extract(repo, entries).files)
    mined = time.perf_counter()
    files = {
        e.path: source.read_blob(repo, e.blob) for e in entries if pipeline.skip_reason(e) is None
    }
    read = time.perf_counter()
    repo_facts = collect(files, result.sites)
    facts = time.perf_counter()
    analyses = analyze(result, repo_facts)
    done = time.perf_counter()
    print(f"{info.slug}@{info.short_sha}: {len(result.errors)} errors, {len(analyses)} analyses")
    print(f"mine    {mined - start:8.2f} s")
    print(f"read    {read - mined:8.2f} s  ({len(files)} files)")
    print(f"facts   {facts - read:8.2f} s")
    print(f"analyze {done - facts:8.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
