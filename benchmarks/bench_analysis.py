"""Time the analysis stages on one commit: mining, facts, origins, analyze;
then the facts stage and the origins stage of a base revision of the miner
against this tree's, side by side.

Usage: ``python benchmarks/bench_analysis.py [REPO] [REV] [--base REF]
[--facts-base REF] [--mine-base REF] [--jobs N] [--only facts|origins|mine]``
(default: the SGLang release repository at ``$RAISE_MINER_CORPUS`` or
``.corpus/sglang``, tag ``v0.5.19``, base ``3730f18``: the origins stage
before issue 33; facts base ``c414659``: the facts stage before it was made
faster; mine base ``d18b359``: before the per-file facts were read in the
extraction's workers; 2 jobs). ``--only`` skips the stage timings of this
tree and the other side by sides. Prints seconds per stage; numbers are
noisy on a shared machine.

The mine side by side (:func:`mine_side_by_side`) runs each tree's
extraction and facts stage with a blob cache of its own, empty (a cold
mine: extraction and facts) and then again (the facts stage after a warm
extraction), and prints a digest of the facts of each run.

The facts side by side runs each tree's :func:`~miner.analysis.facts.collect`
the same way (a fresh process per tree, cold, the same pickled inputs) and
prints a digest of the :class:`~miner.analysis.facts.RepoFacts` it returns:
a canonical text of every field (sets sorted, mappings in their order), so
that equal facts give the same digest in any process.

The side by side runs each tree's :func:`~miner.analysis.origins.trace_origins`
in a fresh process of its own (``PYTHONPATH`` set to the tree; the base is
``git archive``-d from this repository), cold: nothing is cached from
another run. Both read the same files and errors (pickled once); each
gathers its own facts with its own :func:`~miner.analysis.facts.collect`
(not timed), so that only the origins stage is measured. Each process
prints its wall and CPU seconds (its workers' included) and a digest of
the stage's output; the digests must be equal (the same origins, ``logged``
and ``unreachable`` facts).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import pickle
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

from miner import pipeline
from miner.analysis import analyze
from miner.analysis.facts import collect
from miner.analysis.origins import trace_origins
from miner.mining import source
from miner.model import MineResult

ROOT = Path(__file__).resolve().parent.parent

#: Run in a fresh process with one tree's ``miner`` first on the path: the
#: origins stage of the pickled files and errors, timed (wall, CPU of the
#: process and of its workers), and a digest of its output.
_STAGE = """
import hashlib, json, pickle, resource, sys, time
import miner
from miner.analysis.facts import collect
from miner.analysis.origins import trace_origins

def cpu():
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime

with open(sys.argv[1], "rb") as fh:
    files, sites, errors = pickle.load(fh)
jobs = int(sys.argv[2])
facts = collect(files, sites, jobs=jobs)
start, used = time.perf_counter(), cpu()
traced = trace_origins(files, errors, facts, jobs=jobs)
wall, used = time.perf_counter() - start, cpu() - used
out = repr((list(traced.origins.items()), list(traced.logged.items()),
            list(traced.unreachable.items())))
print(json.dumps({"tree": miner.__file__, "wall": wall, "cpu": used,
                  "errors": len(traced.origins),
                  "digest": hashlib.sha256(out.encode()).hexdigest()[:16]}))
"""


#: Run like :data:`_STAGE`: the facts stage of the pickled files and sites,
#: timed, and a digest of the canonical text of the facts it returns.
_CANON = """
import ast, dataclasses

def canon(x):
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        fields = (f.name for f in dataclasses.fields(x))
        return type(x).__name__ + "(" + ",".join(canon(getattr(x, f)) for f in fields) + ")"
    if isinstance(x, ast.AST):
        return ast.dump(x, include_attributes=True)
    if isinstance(x, dict):
        return "{" + ",".join(canon(k) + ":" + canon(v) for k, v in x.items()) + "}"
    if isinstance(x, (set, frozenset)):
        return "set(" + ",".join(sorted(canon(v) for v in x)) + ")"
    if isinstance(x, (list, tuple)):
        name = type(x).__name__ if hasattr(x, "_fields") else ""
        return name + "[" + ",".join(canon(v) for v in x) + "]"
    return repr(x)
"""

_FACTS = (
    _CANON
    + """
import hashlib, json, pickle, resource, sys, time
import miner
from miner.analysis.facts import collect

def cpu():
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime

with open(sys.argv[1], "rb") as fh:
    files, sites, errors = pickle.load(fh)
jobs = int(sys.argv[2])
start, used = time.perf_counter(), cpu()
facts = collect(files, sites, jobs=jobs)
wall, used = time.perf_counter() - start, cpu() - used
print(json.dumps({"tree": miner.__file__, "wall": wall, "cpu": used,
                  "errors": len(facts.callers),
                  "digest": hashlib.sha256(canon(facts).encode()).hexdigest()[:16]}))
"""
)

#: Run in a fresh process with one tree's ``miner`` first on the path and
#: its own blob cache (``RAISE_MINER_CACHE``): a commit's extraction
#: (:func:`~miner.pipeline.start_mining`) and its facts stage, as
#: :func:`~miner.pipeline.analyze_mining` runs it (the tree's
#: ``commit_facts``; a base without it reads the files and gathers the facts
#: as it did), each timed (wall seconds), and a digest of the facts.
_MINE = (
    _CANON
    + """
import hashlib, json, sys, time
import miner
from miner import pipeline
from miner.mining.extraction import MineOptions

repo, rev, jobs = sys.argv[1], sys.argv[2], int(sys.argv[3])
start = time.perf_counter()
mining = pipeline.start_mining(repo, rev, options=MineOptions(jobs=jobs))
mined = time.perf_counter()
if hasattr(pipeline, "commit_facts"):
    facts, _ = pipeline.commit_facts(mining)
else:
    sources = pipeline.facts_sources(mining.repo, mining.entries, mining.result)
    facts = pipeline.gather_facts(
        mining.repo, mining.entries, mining.result, jobs=mining.jobs, sources=sources
    )
done = time.perf_counter()
print(json.dumps({"tree": miner.__file__, "extraction": mined - start, "facts": done - mined,
                  "errors": len(facts.callers),
                  "digest": hashlib.sha256(canon(facts).encode()).hexdigest()[:16]}))
"""
)


def _base_tree(ref: str, into: Path) -> Path:
    """The ``miner`` package of revision ``ref`` of this repository, unpacked under ``into``."""
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", "--format=tar", ref, "miner"],
        check=True,
        capture_output=True,
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into


def _stage_run(tree: Path, inputs: Path, jobs: int, script: str = _STAGE) -> dict[str, object]:
    """One cold run of the origins stage (or of ``script``: :data:`_FACTS`)
    of the miner at ``tree``."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run(
        [sys.executable, "-c", script, str(inputs), str(jobs)],
        check=True,
        capture_output=True,
        text=True,
        env=env,
        cwd=tree,
    )
    found: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return found


def side_by_side(
    files: dict[str, bytes], result: MineResult, base: str, jobs: int, stage: str = "origins"
) -> int:
    """Print the ``stage`` (``origins`` or ``facts``) of ``base`` and of this
    tree, and their ratio; 1 when their outputs differ."""
    script = _FACTS if stage == "facts" else _STAGE
    with tempfile.TemporaryDirectory(prefix=f"bench-{stage}-") as tmp:
        inputs = Path(tmp) / "inputs.pkl"
        with inputs.open("wb") as fh:
            pickle.dump((files, result.sites, result.errors), fh)
        old = _stage_run(_base_tree(base, Path(tmp) / "base"), inputs, jobs, script)
        new = _stage_run(ROOT, inputs, jobs, script)
    unit = "callers" if stage == "facts" else "errors"
    print(f"{stage} stage, cold, jobs={jobs}, each in a fresh process:")
    for label, run in ((f"base {base}", old), ("this tree", new)):
        print(
            f"  {label:<16} {run['wall']:8.2f} s wall {run['cpu']:8.2f} s cpu"
            f"  ({run['errors']} {unit}, output {run['digest']})"
        )
    ratio = float(str(old["wall"])) / max(float(str(new["wall"])), 1e-9)
    cpu_ratio = float(str(old["cpu"])) / max(float(str(new["cpu"])), 1e-9)
    print(f"  ratio            {ratio:8.2f} x wall {cpu_ratio:8.2f} x cpu")
    if old["digest"] != new["digest"]:
        print("  the outputs differ")
        return 1
    print("  the outputs are identical")
    return 0


def _mine_run(tree: Path, cache: Path, repo: str, rev: str, jobs: int) -> dict[str, object]:
    """One run of :data:`_MINE` with the miner at ``tree`` and the blob cache ``cache``."""
    env = {**os.environ, "PYTHONPATH": str(tree), "RAISE_MINER_CACHE": str(cache)}
    done = subprocess.run(
        [sys.executable, "-c", _MINE, str(Path(repo).resolve()), rev, str(jobs)],
        check=True,
        capture_output=True,
        text=True,
        env=env,
        cwd=tree,
    )
    found: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return found


def mine_side_by_side(repo: str, rev: str, base: str, jobs: int) -> int:
    """Print, for ``base`` and this tree, a cold run (extraction and facts
    with an empty blob cache of its own) and then a warm one (the same
    cache: the facts stage after a warm extraction), each in a fresh
    process, the two trees taking turns; 1 when their facts differ."""
    runs: dict[str, list[dict[str, object]]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-mine-") as tmp:
        trees = {f"base {base}": _base_tree(base, Path(tmp) / "base"), "this tree": ROOT}
        for _state in ("cold", "warm"):
            for n, (label, tree) in enumerate(trees.items()):
                run = _mine_run(tree, Path(tmp) / f"cache-{n}", repo, rev, jobs)
                runs.setdefault(label, []).append(run)
    print(f"mine {rev}, jobs={jobs}, each tree with its own blob cache, in fresh processes:")
    print(f"  {'':<16} {'cold: extraction+facts':>34} {'warm: facts':>14}")
    for label, (cold, warm) in runs.items():
        total = float(str(cold["extraction"])) + float(str(cold["facts"]))
        print(
            f"  {label:<16} {total:8.2f} s (of which facts {float(str(cold['facts'])):6.2f} s)"
            f" {float(str(warm['facts'])):10.2f} s"
            f"  (facts {cold['digest']} / {warm['digest']})"
        )
    digests = {str(run["digest"]) for pair in runs.values() for run in pair}
    if len(digests) != 1:
        print("  the facts differ")
        return 1
    print("  the facts are identical")
    return 0


def _stage_times(files: dict[str, bytes], result: MineResult, jobs: int) -> None:
    """Print this tree's facts, origins and analyze stages' seconds."""
    read = time.perf_counter()
    repo_facts = collect(files, result.sites)
    facts = time.perf_counter()
    traced = trace_origins(files, result.errors, repo_facts, jobs=jobs)
    origins = time.perf_counter()
    analyses = analyze(result, repo_facts)
    done = time.perf_counter()
    print(f"facts   {facts - read:8.2f} s")
    print(f"origins {origins - facts:8.2f} s  ({len(traced.origins)} errors, jobs={jobs})")
    print(f"analyze {done - origins:8.2f} s  ({len(analyses)} analyses)")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "repo", nargs="?", default=os.environ.get("RAISE_MINER_CORPUS", ".corpus/sglang")
    )
    parser.add_argument("rev", nargs="?", default="v0.5.19")
    parser.add_argument("--base", default="3730f18", help="the revision to compare against")
    parser.add_argument(
        "--facts-base", default="c414659", help="the revision to compare the facts stage against"
    )
    parser.add_argument(
        "--mine-base",
        default="d18b359",
        help="the revision to compare a cold mine and the facts after a warm extraction against",
    )
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument(
        "--only", choices=("facts", "origins", "mine"), help="one side by side alone"
    )
    args = parser.parse_args(argv)
    if args.only == "mine":
        return mine_side_by_side(args.repo, args.rev, args.mine_base, args.jobs)
    start = time.perf_counter()
    repo, commit, info = pipeline.pin(args.repo, args.rev)
    entries = source.python_blobs(repo, commit)
    result = pipeline.assemble(info, pipeline.extract(repo, entries).files)
    mined = time.perf_counter()
    files = pipeline.facts_sources(repo, entries, result)
    read = time.perf_counter()
    print(f"{info.slug}@{info.short_sha}: {len(result.errors)} errors")
    print(f"mine    {mined - start:8.2f} s")
    print(f"read    {read - mined:8.2f} s  ({len(files)} files)")
    if args.only is None:
        _stage_times(files, result, args.jobs)
    code = 0
    if args.only in (None, "facts"):
        code |= side_by_side(files, result, args.facts_base, args.jobs, "facts")
    if args.only in (None, "origins"):
        code |= side_by_side(files, result, args.base, args.jobs, "origins")
    if args.only is None:
        code |= mine_side_by_side(args.repo, args.rev, args.mine_base, args.jobs)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
