"""Precision and recall of lookup's "good", and its latency (issue 35).

    python benchmarks/bench_lookup.py --out OUT

``OUT`` is a mined v0.5.19 (``make demo``). On the lookup table
(tests/fixtures/lookup_table.json), each paste alone and each labelled one
inside a 200-line log (the paste among decode-batch lines), it prints:

* precision of "good" (of the pastes whose first answer is good, the share
  answered with the expected error; a paste that must match nothing counts
  when anything is good) and recall (of the labelled pastes, the share
  answered right and good);
* latency of ``LookupIndex.search``, warm (the index loaded and every paste
  searched once before the timed runs): median of ``--repeat`` runs per
  paste, then the median, p95 and largest over the pastes of at most 200
  lines; and a line of ``[`` and ``TP0 `` repeated with no ``]``, 128 KB and
  1 MB (issue 35, kind 6), and a log of 8,000 lines (1.1 MB) holding one
  message;
* the same for the site's search (``static/search.js`` in Node, with the
  site's ``search-data.js``, or one written from OUT's records into a
  temporary folder) when ``node`` is installed.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from miner.lookup import LookupIndex
from miner.publish import html, records

ROOT = Path(__file__).resolve().parent.parent
TABLE = ROOT / "tests" / "fixtures" / "lookup_table.json"
SCRIPT = ROOT / "templates" / "site" / "static" / "search.js"

#: Reads {"data", "script", "pastes", "repeat"} on stdin; prints, per paste,
#: [error id of the first answer or null, its score, median milliseconds].
NODE_RUNNER = r"""
const fs = require("fs"), vm = require("vm");
const input = JSON.parse(fs.readFileSync(0, "utf8"));
globalThis.window = globalThis;
vm.runInThisContext(fs.readFileSync(input.data, "utf8"));
vm.runInThisContext(fs.readFileSync(input.script, "utf8"));
const docs = window.RAISE_MINER_SEARCH.docs, search = window.raiseMinerSearch;
input.pastes.forEach(p => search(p));
const out = input.pastes.map(p => {
  const times = [];
  let found = [];
  for (let n = 0; n < input.repeat; n++) {
    const start = process.hrtime.bigint();
    found = search(p);
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  times.sort((a, b) => a - b);
  const top = found.length ? found[0] : null;
  return [top ? docs[top.index][0] : null, top ? top.score : 0, times[times.length >> 1]];
});
process.stdout.write(JSON.stringify(out));
"""


def log_around(paste: str, lines: int = 200) -> str:
    """``paste`` in the middle of a log of ``lines`` lines."""
    noise = [
        f"[2025-08-12 08:{n // 60:02d}:{n % 60:02d} TP0] Decode batch. #running-req: {n % 17}, "
        f"#token: {1000 + 37 * n}, token usage: 0.0{n % 9}, gen throughput (token/s): 45.3, "
        "#queue-req: 0"
        for n in range(lines)
    ]
    own = paste.splitlines()
    keep = max(lines - len(own), 0)
    return "\n".join(noise[: keep // 2] + own + noise[keep // 2 : keep])


#: The long pastes: a line of "[" and "TP0 " repeated, no "]" (issue 35, kind 6),
#: and a log of 8,000 lines holding one message.
LONG = {
    "a line of 128 KB ('[' and 'TP0 ' repeated)": "[" + "TP0 " * (32 * 1024),
    "a line of 1 MB ('[' and 'TP0 ' repeated)": "[" + "TP0 " * (256 * 1024),
    "a log of 8,000 lines (1.1 MB)": log_around(
        "ValueError: Host-pool retraction does not support Mamba models.", 8000
    ),
}


def cases(table: dict[str, Any]) -> list[tuple[str, str | None]]:
    """(paste, expected id) of every row, then every labelled row in a log."""
    rows = table["pastes"]
    out = [(r["paste"], r["error_id"]) for r in rows]
    out += [(log_around(r["paste"]), r["error_id"]) for r in rows if r["error_id"]]
    return out


def precision_recall(answers: Sequence[tuple[str | None, float]], expected: Sequence[str | None]):
    """(precision, recall, answered, right, labelled) of "good" answers."""
    answered = right = 0
    for (found, score), wanted in zip(answers, expected, strict=True):
        if found is not None and score >= 0.5:
            answered += 1
            right += found == wanted
    labelled = sum(1 for wanted in expected if wanted)
    return right / max(answered, 1), right / max(labelled, 1), answered, right, labelled


def python_runs(index: LookupIndex, pastes: Sequence[str], repeat: int):
    """Per paste: (first answer's id or None, its score, median seconds)."""
    for paste in pastes:
        index.search(paste)
    out = []
    for paste in pastes:
        times = []
        for _ in range(repeat):
            start = time.perf_counter()
            found = index.search(paste)
            times.append(time.perf_counter() - start)
        top = found[0] if found else None
        out.append(
            (
                top.card.error_id if top else None,
                top.score if top else 0.0,
                statistics.median(times),
            )
        )
    return out


def node_runs(data: Path, pastes: Sequence[str], repeat: int):
    """The same, from the site's search in Node (None without node)."""
    node = shutil.which("node")
    if node is None:
        return None
    payload = {"data": str(data), "script": str(SCRIPT), "pastes": list(pastes), "repeat": repeat}
    done = subprocess.run(
        [node, "-e", NODE_RUNNER],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        check=True,
    )
    return [(found, score, ms / 1000) for found, score, ms in json.loads(done.stdout)]


def search_data(out: Path, folder: Path) -> Path:
    """The site's ``search-data.js`` of OUT, or one written from its records."""
    published = out / "site" / "search-data.js"
    if published.is_file():
        return published
    mined = records.read_mined(out)
    data = html.script_json(html.search_data(mined.result, mined.analyses))
    written = folder / "search-data.js"
    written.write_text(f"window.RAISE_MINER_SEARCH = {data};\n", "utf-8")
    return written


def report(name: str, runs, expected: Sequence[str | None], pastes: Sequence[str]) -> None:
    table = runs[: len(expected)]
    precision, recall, answered, right, labelled = precision_recall(
        [(f, s) for f, s, _ in table], expected
    )
    print(
        f"{name}: precision of good {precision:.1%} ({right}/{answered}), "
        f"recall {recall:.1%} ({right}/{labelled})"
    )
    short = sorted(t for (_, _, t), p in zip(table, pastes, strict=False) if p.count("\n") < 200)
    p95 = short[min(len(short) - 1, int(0.95 * len(short)))]
    print(
        f"{name}: latency of {len(short)} pastes up to 200 lines: median "
        f"{statistics.median(short) * 1000:.1f} ms, p95 {p95 * 1000:.1f} ms, "
        f"largest {short[-1] * 1000:.1f} ms"
    )
    for label, (_, _, seconds) in zip(LONG, runs[len(expected) :], strict=True):
        print(f"{name}: {label}: {seconds * 1000:.1f} ms")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path("output"), help="a mined v0.5.19")
    parser.add_argument("--table", type=Path, default=TABLE)
    parser.add_argument("--repeat", type=int, default=5, help="timed runs per paste")
    args = parser.parse_args(argv)
    table = json.loads(args.table.read_text("utf-8"))
    found = cases(table)
    pastes = [p for p, _ in found] + list(LONG.values())
    expected = [e for _, e in found]
    commit = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout.strip()
    print(
        f"lookup table: {len(table['pastes'])} pastes ({sum(1 for _, e in found if e) // 2} "
        f"labelled, alone and in a 200-line log), {table['release']}, at {commit}"
    )
    started = time.perf_counter()
    index = LookupIndex.load(args.out)
    print(
        f"index of {args.out}: {len(index.entries)} errors, loaded in "
        f"{time.perf_counter() - started:.2f} s"
    )
    report("miner lookup", python_runs(index, pastes, args.repeat), expected, pastes)
    with tempfile.TemporaryDirectory(prefix="bench-lookup-") as folder:
        runs = node_runs(search_data(args.out, Path(folder)), pastes, args.repeat)
    if runs is None:
        print("site search: node is not installed; not measured")
    else:
        report("site search", runs, expected, pastes)
    return 0


if __name__ == "__main__":
    sys.exit(main())
