"""Time and peak memory of mining the hard inputs, one subprocess per input.

    .venv/bin/python benchmarks/hard_inputs.py [--cases tests/fixtures/hard_inputs] [--all]

Prints a Markdown table: input, path (units or whole module), outcome, CPU
seconds and peak resident memory of the process. The inputs are the project's
own (``tests/hard_input_fixtures.py``), written to a temporary folder: the
generated ones (deep parentheses, a long ``elif`` chain, a huge table, 2,000
joined literals), then the inputs that one parser or the other rejects, taken
from the cases folder or the byte-level cases; ``--all`` measures every
one-file input.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from hard_input_fixtures import (  # noqa: E402
    BYTE_CASES,
    FIXTURES,
    deep_parens,
    elif_chain,
    huge_table,
)

#: One-file inputs that CPython, libcst or both reject.
PARSER_HARD = (
    "nul_in_literal.py",
    "nul_in_code.py",
    "legacy_py2.py",
    "fallback_tabs.py",
    "fallback_rf_continuation.py",
    "fallback_lone_backslash.py",
    "grammar_newer.py",
)

_MEASURE = """
import json, resource, sys, time
from miner.extract.runner import extract_file
data = open(sys.argv[1], "rb").read()
start = time.process_time()
result = extract_file("x.py", "0" * 40, data, partial=sys.argv[2] == "units")
cpu = time.process_time() - start
parsers = sorted({s.parser for s in result.sites})
print(json.dumps({
    "status": result.status, "sites": len(result.sites), "parsers": parsers,
    "reason": (result.reason or "")[:70], "cpu": round(cpu, 2),
    "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024,
}))
"""


def measure(path: Path, mode: str) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", _MEASURE, str(path), mode],
        capture_output=True,
        text=True,
        timeout=1200,
    )
    if done.returncode != 0:
        return {"status": f"process died (rc {done.returncode})", "cpu": "-", "rss_mb": "-"}
    return json.loads(done.stdout)


def generated(folder: Path) -> list[Path]:
    pieces = " ".join(f'"w{i} "' for i in range(2000))
    made = {
        "deep_parens.py": deep_parens(),
        "elif_chain.py": elif_chain(),
        "huge_table.py": huge_table(),
        "long_concatenation.py": f"def f(x):\n    if x:\n        raise ValueError({pieces})\n",
    }
    for name, text in made.items():
        (folder / name).write_text(text, "utf-8")
    return [folder / name for name in made]


def one_file_inputs(cases: Path, folder: Path, everything: bool) -> list[Path]:
    """The cases folder's files, and the byte-level cases written to ``folder``."""
    found = {p.name: p for p in sorted(cases.glob("*.py"))}
    for name, data in BYTE_CASES.items():
        if name not in found:
            (folder / name).write_bytes(data)
            found[name] = folder / name
    names = sorted(found) if everything else [n for n in PARSER_HARD if n in found]
    return [found[n] for n in names]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=Path, default=FIXTURES, help="a folder of .py inputs")
    parser.add_argument(
        "--all", action="store_true", help="every one-file input, not only those a parser rejects"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        inputs = generated(Path(tmp))
        inputs += one_file_inputs(args.cases, Path(tmp), args.all)
        print("| input | path | outcome | CPU s | peak RSS MB |")
        print("|---|---|---|---|---|")
        for path in inputs:
            for mode in ("units", "whole"):
                row = measure(path, mode)
                outcome = f"{row['status']}"
                if "sites" in row:
                    outcome += f", {row['sites']} sites {'/'.join(row['parsers'])}"  # type: ignore[arg-type]
                if row.get("reason"):
                    outcome += f" ({row['reason']})"
                print(f"| {path.name} | {mode} | {outcome} | {row['cpu']} | {row['rss_mb']} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
