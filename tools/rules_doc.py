"""Write docs/rules.md from the docstrings of the findings rules (``make rules-doc``)."""

from __future__ import annotations

from pathlib import Path

from miner.analysis.findings.rules import rules_markdown

if __name__ == "__main__":
    target = Path(__file__).resolve().parent.parent / "docs" / "rules.md"
    target.write_text(rules_markdown(), encoding="utf-8")
    print(target)
