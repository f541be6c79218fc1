"""Regenerate the golden cards of SGLang v0.5.19 from a mined output folder.

``make golden`` mines the tag into a scratch folder and runs this script; it
writes, for every error of the golden table (``tests/golden/cards_v0519.py``),
the card as published (``cards/<id>.md``) and what the card layer decided for
it as data (``records/<id>.json``: audience and its rule, the condition, the
origins, ``logged``, ``unreachable``, the kinds of the solutions and of the
example fix, and the findings when the analysis has them). ``make test`` runs
``make golden`` and fails when ``git diff`` shows a change, so every change to
a golden card is reviewed as a diff and committed on purpose.

Usage: ``python tests/golden/regenerate.py --mine DIR --out tests/golden/sglang-v0.5.19``.
Exit status 2 with a one-line message when DIR is not a mined output folder or
lacks an error of the table.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from golden.cards_v0519 import CARDS  # noqa: E402

#: The fields of an error's analysis kept as golden data (the prose is in the card).
KEPT = (
    "audience",
    "audience_rule",
    "condition_text",
    "findings",
    "logged",
    "origins",
    "solution_kinds",
    "unreachable",
)


def golden_record(record: dict[str, Any]) -> dict[str, Any]:
    """The golden data of one error: its id, exception, message, primary site
    (``path:line``) and the :data:`KEPT` fields of its analysis, from the JSON
    record of ``api/errors/<id>.json``."""
    analysis = record["analysis"]
    kept = {key: analysis[key] for key in KEPT if key in analysis}
    fix = analysis.get("example_fix")
    kept["example_fix_kind"] = fix.get("kind") if fix else None
    site = record["sites"][0]
    return {
        "error_id": record["error_id"],
        "exception": record["exception"],
        "message": record["message"],
        "site": f"{site['path']}:{site['line']}",
        **kept,
    }


def regenerate(mine: Path, out: Path) -> int:
    """Write ``out/cards/<id>.md`` and ``out/records/<id>.json`` for every
    error of the golden table from the mined folder ``mine``; remove the files
    of errors no longer in the table. Returns how many errors were written.

    Raises SystemExit (status 2) when ``mine`` lacks an error's JSON record."""
    cards, records = out / "cards", out / "records"
    cards.mkdir(parents=True, exist_ok=True)
    records.mkdir(parents=True, exist_ok=True)
    ids = [row["id"] for row in CARDS]
    for error_id in ids:
        source = mine / "api" / "errors" / f"{error_id}.json"
        if not source.is_file():
            raise SystemExit(f"{source}: no such record; run make golden (it mines the tag first)")
        data = golden_record(json.loads(source.read_text(encoding="utf-8")))
        text = json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
        (records / f"{error_id}.json").write_text(text, encoding="utf-8")
        card = mine / "errors" / f"{error_id}.md"
        target = cards / f"{error_id}.md"
        if card.is_file():
            target.write_bytes(card.read_bytes())
        else:
            target.unlink(missing_ok=True)
    wanted = set(ids)
    for folder, suffix in ((cards, ".md"), (records, ".json")):
        for stale in folder.glob(f"*{suffix}"):
            if stale.stem not in wanted:
                stale.unlink()
    return len(ids)


def main(argv: list[str] | None = None) -> int:
    """Command line: ``--mine DIR --out DIR``; prints how many errors it wrote."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mine", type=Path, required=True, help="a miner mine output folder")
    parser.add_argument("--out", type=Path, required=True, help="the golden folder to write")
    args = parser.parse_args(argv)
    if not (args.mine / "manifest.json").is_file():
        print(
            f"{args.mine}: not a mined output folder (no manifest.json); run make golden",
            file=sys.stderr,
        )
        return 2
    count = regenerate(args.mine, args.out)
    print(f"golden: {count} errors written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
