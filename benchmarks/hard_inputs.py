"""Time and peak memory of mining the hard inputs, one subprocess per input.

    .venv/bin/python benchmarks/hard_inputs.py [--cases ../shared/cases]

Prints a Markdown table: input, path (units or whole module), outcome, CPU
seconds and peak resident memory of the process. The generated inputs are
written to a temporary folder by running the case folder's generators.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

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


def generated(cases: Path, folder: Path) -> list[Path]:
    out = []
    for generator in ("26_gen_deep_parens.py", "28_gen_recursion.py", "29_gen_huge_table.py"):
        shutil.copyfile(cases / generator, folder / generator)
        before = set(folder.iterdir())
        subprocess.run([sys.executable, generator], cwd=folder, check=True, timeout=300)
        out += sorted(set(folder.iterdir()) - before)
    concat = folder / "long_concatenation.py"
    pieces = " ".join(f'"w{i} "' for i in range(2000))
    concat.write_text(f"def f(x):\n    if x:\n        raise ValueError({pieces})\n")
    return [*out, concat]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    default = Path(__file__).resolve().parents[2] / "shared" / "cases"
    parser.add_argument("--cases", type=Path, default=default)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        inputs = generated(args.cases, Path(tmp))
        inputs += sorted(args.cases.glob("2[0-5]*.py"))
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
