"""Benchmark: mining a release against the standard library's parser.

Runs, one after another on the same machine, each in its own process:

A   ``ast.parse`` of every ``.py`` blob of the release, read from git (one process);
N   ``libcst.parse_module`` + ``PositionProvider`` + a visitor that records
    the lines of ``raise`` and ``assert`` (one process); by default on every
    5th file, extrapolated to the release by bytes (``--libcst-sample 1``: all);
F   the floor of the miner's extraction: per file, ``ast.parse``, the plan of
    the statements holding sites (:func:`miner.extract.runner.plan_units`),
    ``libcst.parse_module`` of each planned unit and its ``PositionProvider``
    (what no run of this design can skip: it leaves out the site collector,
    the facts, the analysis, the rendering and the writing), in one process
    per core like the miner's workers;
S   semgrep with a ``raise $X(...)`` rule over a checkout, when installed;
then ``miner mine`` cold (empty cache), warm into the same folder (same
commit and output again: the manifest's digest of the inputs lets it skip the
analysis and the rendering), warm into a new folder (facts and analyses from
the analysis cache), the next release cold, the next releases incremental
(after the previous ones are cached), with the share of blobs (and bytes)
that were new, and ``miner history`` of the eight oldest releases from an
empty cache against one cold mine (``--skip-history`` leaves it out: it is the
most expensive run). Each miner run's notes give its own split of the wall
time per stage (extraction, facts, analysis, rendering, writing: the
``stages:`` line ``miner mine`` prints).

Wall time is the whole process (start-up included). Peak memory is the
highest sum of proportional set sizes (PSS, ``/proc/PID/smaps_rollup``) over
the process and all its descendants (the miner's workers too), sampled every
50 ms.

Usage: ``python benchmarks/bench.py --corpus .corpus/sglang [--readme docs/internals.md]``
(``make bench``).
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import datetime
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MARK_START = "<!-- bench:start -->"
MARK_END = "<!-- bench:end -->"
RULE = """rules:
  - id: raise-call
    pattern: raise $X(...)
    message: raise
    languages: [python]
    severity: INFO
"""


# -- measuring a process tree ---------------------------------------------------


def _descendants(pid: int) -> list[int]:
    found, index = [pid], 0
    while index < len(found):
        current = found[index]
        index += 1
        try:
            for task in Path(f"/proc/{current}/task").iterdir():
                children = (task / "children").read_text()
                found.extend(int(c) for c in children.split())
        except OSError:
            continue
    return found


def _cpu_ticks(pid: int) -> int:
    """User + system CPU of one process so far, in clock ticks (``/proc/PID/stat``)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])
    except (OSError, IndexError, ValueError):
        return 0


def _pss_kib(pid: int) -> int:
    try:
        with Path(f"/proc/{pid}/smaps_rollup").open() as fh:
            for line in fh:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


@dataclasses.dataclass
class Run:
    label: str
    wall: float
    cpu: float
    peak_mib: float
    code: int
    out: str
    err: str
    load: float
    note: str = ""


def measure(label: str, cmd: list[str], *, env: dict[str, str] | None = None) -> Run:
    """Run ``cmd``; wall seconds, CPU seconds and peak PSS of its process tree.

    CPU is the sum over every process seen in the tree of its last sampled
    user + system time (the last < 50 ms of each process is missed).
    """
    load = os.getloadavg()[0]
    start = time.perf_counter()
    proc = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT
    )
    peak = 0
    ticks: dict[int, int] = {}
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not done.is_set():
            tree = _descendants(proc.pid)
            peak = max(peak, sum(_pss_kib(p) for p in tree))
            for pid in tree:
                ticks[pid] = max(ticks.get(pid, 0), _cpu_ticks(pid))
            done.wait(0.05)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    out, err = proc.communicate()
    wall = time.perf_counter() - start
    done.set()
    sampler.join()
    cpu = sum(ticks.values()) / os.sysconf("SC_CLK_TCK")
    run = Run(label, wall, cpu, peak / 1024, proc.returncode, out, err, load)
    print(
        f"  {label}: {wall:.1f} s wall, {cpu:.1f} s CPU, {run.peak_mib:.0f} MiB, "
        f"exit {proc.returncode}",
        flush=True,
    )
    if proc.returncode not in (0, 1):
        print(err[-2000:], file=sys.stderr)
    return run


# -- the baselines, run as subcommands of this script ----------------------------


def _blobs(corpus: str, tag: str, step: int = 1) -> tuple[list[tuple[str, str]], int]:
    """Every ``step``-th ``.py`` blob of ``tag`` as (path, blob id), in path
    order, and the bytes of all of them (one ``git ls-tree``)."""
    import git

    repo = git.Repo(corpus)
    listing = repo.git.ls_tree("-r", "-l", "-z", tag, stdout_as_string=False)
    rows = []
    for record in listing.split(b"\0"):
        meta, _, path = record.partition(b"\t")
        if path.endswith(b".py") and meta.split()[1] == b"blob":
            mode, _type, sha, size = meta.split()
            if mode != b"120000":
                rows.append((path.decode("utf-8", "surrogateescape"), sha.decode(), int(size)))
    rows.sort()
    return [(p, b) for p, b, _ in rows[::step]], sum(size for *_, size in rows)


def _read(corpus: str):  # one repository handle: blob id -> bytes
    import git

    odb = git.Repo(corpus).odb
    return lambda blob: odb.stream(bytes.fromhex(blob)).read()


def baseline_ast(corpus: str, tag: str) -> None:
    blobs, total = _blobs(corpus, tag)
    read = _read(corpus)
    failed = 0
    for _path, blob in blobs:
        try:
            ast.parse(read(blob))
        except (SyntaxError, ValueError):
            failed += 1
    print(f"files={len(blobs)} failed={failed} bytes={total}")


def baseline_libcst(corpus: str, tag: str, step: int) -> None:
    import libcst as cst
    from libcst.metadata import MetadataWrapper, PositionProvider

    class Lines(cst.CSTVisitor):
        METADATA_DEPENDENCIES = (PositionProvider,)

        def __init__(self) -> None:
            super().__init__()
            self.lines: list[int] = []

        def visit_Raise(self, node: cst.Raise) -> None:
            self.lines.append(self.get_metadata(PositionProvider, node).start.line)

        def visit_Assert(self, node: cst.Assert) -> None:
            self.lines.append(self.get_metadata(PositionProvider, node).start.line)

    sample, total = _blobs(corpus, tag, step)
    read = _read(corpus)
    start = time.perf_counter()
    sites = failed = sample_bytes = 0
    for _path, blob in sample:
        data = read(blob)
        sample_bytes += len(data)
        try:
            visitor = Lines()
            # No defensive deep copy of the tree (the miner skips it too).
            MetadataWrapper(cst.parse_module(data), unsafe_skip_copy=True).visit(visitor)
            sites += len(visitor.lines)
        except Exception:  # noqa: BLE001 - a baseline counts failures, nothing more
            failed += 1
    loop = time.perf_counter() - start
    print(
        f"files={len(sample)} failed={failed} sites={sites} loop={loop:.3f} "
        f"sample_bytes={sample_bytes} total_bytes={total}"
    )


_FLOOR_READ = None


def _floor_init(corpus: str) -> None:
    global _FLOOR_READ
    _FLOOR_READ = _read(corpus)


def _floor_file(blob: str) -> tuple[int, int, float, float, float, float]:
    """(units, unit lines, CPU seconds of ast.parse, plan, libcst parse,
    positions) of one blob; files either parser refuses count no units."""
    import libcst as cst
    from libcst.metadata import MetadataWrapper, PositionProvider

    from miner.extract.runner import plan_units

    assert _FLOOR_READ is not None
    text = _FLOOR_READ(blob).decode("utf-8", "replace")
    clock = time.process_time
    t0 = clock()
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return 0, 0, clock() - t0, 0.0, 0.0, 0.0
    t1 = clock()
    lines = text.splitlines()
    units = ["\n".join(lines[u.start - 1 : u.end]) + "\n" for u in plan_units(tree, lines).units]
    del tree
    t2 = clock()
    parse = positions = 0.0
    count = 0
    for unit in units:
        if unit[:1] in (" ", "\t", "\f"):
            unit = "if 1:\n" + unit
        start = clock()
        try:
            module = cst.parse_module(unit)
        except Exception:  # noqa: BLE001 - the floor counts what parses
            parse += clock() - start
            continue
        middle = clock()
        PositionProvider()._gen(MetadataWrapper(module, unsafe_skip_copy=True))
        parse, positions = parse + middle - start, positions + clock() - middle
        count += 1
    return count, sum(u.count("\n") for u in units), t1 - t0, t2 - t1, parse, positions


def baseline_floor(corpus: str, tag: str, jobs: int) -> None:
    import multiprocessing

    blobs, total = _blobs(corpus, tag)
    context = multiprocessing.get_context("fork")
    with context.Pool(jobs, initializer=_floor_init, initargs=(corpus,)) as pool:
        rows = pool.map(_floor_file, [blob for _path, blob in blobs], chunksize=8)
    units, lines, parse_ast, plan, parse_cst, positions = (
        sum(col) for col in zip(*rows, strict=True)
    )
    print(
        f"files={len(blobs)} units={units} unit_lines={lines} bytes={total} jobs={jobs} "
        f"ast={parse_ast:.1f} plan={plan:.1f} libcst={parse_cst:.1f} positions={positions:.1f}"
    )


# -- the table ------------------------------------------------------------------


def _stat(run: Run, key: str) -> float:
    match = re.search(rf"{key}=([\d.]+)", run.out)
    return float(match.group(1)) if match else 0.0


def _extraction(run: Run) -> str:
    match = re.search(r"extraction ([\d.]+) s", run.out)
    return f"extraction {match.group(1)} s" if match else "extraction ?"


def _stages(run: Run) -> str:
    """The miner's own split of its wall time (its ``stages:`` line)."""
    match = re.search(r"^stages: (.*)$", run.out, re.M)
    return match.group(1) if match else _extraction(run)


def _history_tags(corpus: str, count: int) -> list[str]:
    """The ``count`` oldest release tags of ``corpus`` (version order)."""
    from packaging.version import InvalidVersion, Version

    names = subprocess.run(
        ["git", "-C", corpus, "tag", "--list", "v*"], capture_output=True, text=True, check=True
    ).stdout.split()

    def key(name: str) -> tuple[int, Version | str]:
        try:
            return (0, Version(name))
        except InvalidVersion:
            return (1, name)

    return sorted(names, key=key)[:count]


def _blob_line(run: Run) -> tuple[int, int, int]:
    match = re.search(r"blobs: (\d+) distinct, (\d+) from cache .*?, (\d+) parsed", run.out)
    if not match:
        return (0, 0, 0)
    return int(match.group(1)), int(match.group(2)), int(match.group(3))


def new_blobs(corpus: str, tag: str, before: list[str]) -> tuple[int, int, int, int]:
    """(new blobs, distinct blobs, new bytes, all bytes) of ``tag`` against ``before``."""
    import git

    from miner.mining import source

    repo = git.Repo(corpus)
    seen: set[str] = set()
    for old in before:
        seen.update(e.blob for e in source.python_blobs(repo, repo.commit(old)))
    entries = {e.blob: e.size for e in source.python_blobs(repo, repo.commit(tag))}
    new = {b: s for b, s in entries.items() if b not in seen}
    return len(new), len(entries), sum(new.values()), sum(entries.values())


def miner_runs(
    args: argparse.Namespace, corpus: str, work: Path, nexts: list[str]
) -> tuple[list[tuple[Run, str]], dict[str, Run]]:
    """The miner's rows (cold, warm, new folder, next releases, history) and
    the cold runs of the next releases by tag."""
    py = sys.executable
    rows: list[tuple[Run, str]] = []

    def miner(label: str, tag: str, cache: Path, out: Path) -> Run:
        cmd = [py, "-m", "miner", "mine", "--repo", corpus, "--commit", tag, "--quiet"]
        cmd += ["--out", str(out), "--cache-dir", str(cache)]
        if args.jobs is not None:
            cmd += ["--jobs", str(args.jobs)]
        run = measure(label, cmd)
        print(f"    {_stages(run)}", flush=True)
        return run

    cache, out = work / "cache", work / "out"
    cold = miner(f"miner cold {args.tag}", args.tag, cache, out)
    rows.append((cold, f"empty cache, empty output; {_stages(cold)}"))
    warm = miner(f"miner warm {args.tag}", args.tag, cache, out)
    rows.append((warm, f"same commit, cache and output folder; {_stages(warm)}"))
    fresh = miner(f"miner warm {args.tag} new folder", args.tag, cache, work / "out-new")
    rows.append((fresh, f"same commit and cache, new output folder; {_stages(fresh)}"))
    mined = [args.tag]
    colds: dict[str, Run] = {}
    if nexts and not args.skip_next_cold:
        c2 = miner(f"miner cold {nexts[0]}", nexts[0], work / "cache-2", work / "out-2")
        colds[nexts[0]] = c2
        rows.append((c2, f"empty cache, empty output; {_stages(c2)}"))
    for tag in nexts:
        _new, _total, new_bytes, all_bytes = new_blobs(corpus, tag, mined)
        run = miner(f"miner incremental {tag}", tag, cache, work / f"out-{tag}")
        distinct, _hits, parsed = _blob_line(run)
        share = parsed / max(1, distinct)
        note = (
            f"cache of {', '.join(mined)}, empty output: {parsed}/{distinct} blobs new "
            f"({share:.0%}), {new_bytes / 1e6:.1f} of {all_bytes / 1e6:.1f} MB; "
            f"{_stages(run)}"
        )
        if tag in colds:
            note += f"; {run.wall / colds[tag].wall:.2f} x its cold"
        rows.append((run, note))
        mined.append(tag)
    if not args.skip_history:
        history = _history_tags(corpus, args.history)
        cmd = [py, "-m", "miner", "history", "--repo", corpus, "--tags", "v*"]
        cmd += ["--from", history[0], "--to", history[-1]]
        cmd += ["--out", str(work / "history"), "--cache-dir", str(work / "cache-history")]
        hist = measure(f"miner history of {len(history)}", cmd)
        note = (
            f"{history[0]}..{history[-1]}, empty cache: "
            f"{hist.wall / cold.wall:.2f} x one cold mine, "
            f"{hist.wall / (len(history) * cold.wall):.2f} x {len(history)} cold mines "
            f"({len(history)} x the cold {args.tag})"
        )
        rows.append((hist, note))
    return rows, colds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", default=str(ROOT / ".corpus" / "sglang"))
    parser.add_argument("--tag", default="v0.5.19")
    parser.add_argument("--next", default="v0.5.20 v0.5.21", help="incremental releases")
    parser.add_argument("--libcst-sample", type=int, default=5, metavar="K")
    parser.add_argument("--skip-libcst-baseline", action="store_true")
    parser.add_argument("--skip-next-cold", action="store_true")
    parser.add_argument(
        "--history",
        type=int,
        default=8,
        metavar="N",
        help="time `miner history` of the N oldest release tags (default 8)",
    )
    parser.add_argument(
        "--skip-history",
        action="store_true",
        help="skip the history run (the most expensive: N releases from an empty cache)",
    )
    parser.add_argument("--jobs", type=int, help="passed to miner mine (default: all CPUs)")
    parser.add_argument("--readme", type=Path, help="replace the table between the bench marks")
    sub = parser.add_subparsers(dest="baseline")
    for name in ("ast", "libcst", "floor"):
        one = sub.add_parser(name)
        one.add_argument("corpus")
        one.add_argument("tag")
        one.add_argument("--step", type=int, default=1)
        one.add_argument("--jobs", type=int, default=1)
    args = parser.parse_args(argv)
    if args.baseline == "ast":
        baseline_ast(args.corpus, args.tag)
        return 0
    if args.baseline == "libcst":
        baseline_libcst(args.corpus, args.tag, args.step)
        return 0
    if args.baseline == "floor":
        baseline_floor(args.corpus, args.tag, args.jobs)
        return 0

    corpus = str(Path(args.corpus).resolve())
    if not Path(corpus, ".git").exists() and not Path(corpus, "HEAD").exists():
        print(f"bench: {corpus}: no release repository; run make corpus", file=sys.stderr)
        return 2
    py = sys.executable
    me = str(Path(__file__).resolve())
    nexts = args.next.split()
    cores = len(os.sched_getaffinity(0))
    print(f"benchmark on {cores} cores, load {os.getloadavg()[0]:.1f}", flush=True)
    rows: list[tuple[Run, str]] = []

    a = measure("A ast.parse", [py, me, "ast", corpus, args.tag])
    rows.append((a, f"{int(_stat(a, 'files'))} files, {_stat(a, 'bytes') / 1e6:.1f} MB"))

    if not args.skip_libcst_baseline:
        step = max(1, args.libcst_sample)
        n = measure("N libcst", [py, me, "libcst", corpus, args.tag, "--step", str(step)])
        if step > 1:
            loop = _stat(n, "loop")
            scale = _stat(n, "total_bytes") / max(1.0, _stat(n, "sample_bytes"))
            n.wall = n.wall - loop + loop * scale
            n.cpu = n.cpu * scale
            n.note = f"est.: every {step}th file, times x {scale:.2f} (bytes)"
        else:
            n.note = "all files"
        rows.append((n, n.note))

    jobs = args.jobs if args.jobs else cores
    f = measure("F extraction floor", [py, me, "floor", corpus, args.tag, "--jobs", str(jobs)])
    f.note = (
        f"{int(_stat(f, 'units'))} units, {int(_stat(f, 'unit_lines'))} lines, {jobs} processes; "
        f"CPU: ast.parse {_stat(f, 'ast'):.1f} s, plan {_stat(f, 'plan'):.1f} s, "
        f"libcst parse {_stat(f, 'libcst'):.1f} s, positions {_stat(f, 'positions'):.1f} s"
    )
    rows.append((f, f.note))

    semgrep = shutil.which("semgrep")
    with tempfile.TemporaryDirectory(prefix="raise-miner-bench-") as tmp:
        work = Path(tmp)
        if semgrep:
            tree = work / "tree"
            tree.mkdir()
            archive = subprocess.run(
                ["git", "-C", corpus, "archive", args.tag], capture_output=True, check=True
            ).stdout
            subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
            (work / "rule.yaml").write_text(RULE)
            s = measure(
                "S semgrep",
                [semgrep, "--config", str(work / "rule.yaml"), "--metrics=off", "--quiet"]
                + ["--json", "-o", str(work / "semgrep.json"), "-j", str(cores), str(tree)],
            )
            rows.append((s, f"semgrep {cores} jobs"))

        more, colds = miner_runs(args, corpus, work, nexts)
        rows += more

    table = render_table(rows, a, cores, args)
    if not semgrep:
        table += "\n\nS (semgrep) not run: not installed (`pip install -e '.[bench]'` adds it)."
    print()
    print(table)
    verdicts = check_targets(rows, a, colds, nexts, args.tag)
    print("\n".join(verdicts))
    if args.readme:
        update_readme(args.readme, table + "\n\n" + "\n".join(f"- {v}" for v in verdicts))
    return 0


def render_table(rows: list[tuple[Run, str]], a: Run, cores: int, args: argparse.Namespace) -> str:
    date = datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")
    loads = [run.load for run, _ in rows]
    lines = [
        f"Measured {date} on {cores} cores (`os.sched_getaffinity`), Python "
        f"{sys.version.split()[0]}; load average when each run started: "
        f"{min(loads):.1f}-{max(loads):.1f}"
        + (" (the machine was shared with other jobs)" if max(loads) > cores * 0.75 else "")
        + ".",
        "",
        "| run | wall (s) | wall x A | CPU (s) | CPU x A | peak memory (MiB) | notes |",
        "|---|---:|---:|---:|---:|---:|---|",
    ]
    for run, note in rows:
        lines.append(
            f"| {run.label} | {run.wall:.1f} | {run.wall / a.wall:.2f} | {run.cpu:.1f} "
            f"| {run.cpu / a.cpu:.2f} | {run.peak_mib:.0f} | {note} |"
        )
    return "\n".join(lines)


def check_targets(
    rows: list[tuple[Run, str]], a: Run, colds: dict[str, Run], nexts: list[str], tag: str
) -> list[str]:
    by_label = {run.label: run for run, _ in rows}
    out = []

    def verdict(name: str, value: float, limit: float, unit: str = "x A") -> None:
        state = "holds" if value <= limit else "MISSED"
        out.append(f"{name}: {value:.2f} {unit} (target <= {limit:g}): {state}")

    cold = next(r for label, r in by_label.items() if label.startswith("miner cold"))
    warm = by_label.get(f"miner warm {tag}")
    fresh = next((r for label, r in by_label.items() if label.endswith("new folder")), None)
    verdict("cold mine", cold.wall / a.wall, 2.5)
    floor = by_label.get("F extraction floor")
    if floor is not None:
        out.append(
            f"(the extraction floor F alone: {floor.wall / a.wall:.2f} x A, "
            f"{100 * floor.wall / a.wall / 2.5:.0f}% of the cold target)"
        )
    if warm is not None:
        verdict("warm mine into the same folder", warm.wall / a.wall, 0.3)
    if fresh is not None:
        verdict("warm mine into a new folder", fresh.wall / a.wall, 1.0)
    for tag in nexts[:1]:
        inc = by_label.get(f"miner incremental {tag}")
        if inc is not None and tag in colds:
            verdict(
                f"{tag} after the previous release", inc.wall / colds[tag].wall, 0.5, "x its cold"
            )
    hist = next((r for label, r in by_label.items() if label.startswith("miner history")), None)
    if hist is not None:
        verdict("history of the releases", hist.wall / cold.wall, 3.0, "x one cold mine")
    peak = max(run.peak_mib for run, _ in rows if run.label.startswith("miner"))
    verdict("peak memory of a miner run", peak / 1024, 2.0, "GiB")
    return out


def update_readme(readme: Path, block: str) -> None:
    text = readme.read_text()
    if MARK_START not in text or MARK_END not in text:
        print(f"bench: {readme}: no {MARK_START} ... {MARK_END} block; not updated")
        return
    head, rest = text.split(MARK_START, 1)
    _old, tail = rest.split(MARK_END, 1)
    readme.write_text(f"{head}{MARK_START}\n{block}\n{MARK_END}{tail}")
    print(f"bench: table written to {readme}")


if __name__ == "__main__":
    sys.exit(main())
