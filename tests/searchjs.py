"""Run the site's search (``static/search.js`` with the site's ``search-data.js``)
in Node, outside a browser: the same matcher the page runs, for tables of
pastes checked against ``miner lookup`` (tests/test_search_parity.py)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

#: Reads {"data": path, "script": path, "pastes": [...]} on standard input,
#: prints the ranked results of each paste: [[error_id, score, path, line], ...].
RUNNER = r"""
const fs = require("fs");
const vm = require("vm");
const input = JSON.parse(fs.readFileSync(0, "utf8"));
globalThis.window = globalThis;
vm.runInThisContext(fs.readFileSync(input.data, "utf8"));
vm.runInThisContext(fs.readFileSync(input.script, "utf8"));
const docs = window.RAISE_MINER_SEARCH.docs, paths = window.RAISE_MINER_SEARCH.paths;
const out = input.pastes.map(text => window.raiseMinerSearch(text).slice(0, input.limit).map(
  r => [docs[r.index][0], r.score, paths[r.site[0]], r.site[1], r.reasons]));
process.stdout.write(JSON.stringify(out));
"""


def node() -> str:
    """The ``node`` executable (the test is skipped without one)."""
    found = shutil.which("node")
    if found is None:
        pytest.skip("node is not installed")
    return found


def node_search(site: Path, pastes: list[str], limit: int = 5) -> list[list[list[Any]]]:
    """The site's search results for each paste, best first: ``[error_id,
    score, path, line, reasons]`` (at most ``limit`` each)."""
    payload = {
        "data": str(site / "search-data.js"),
        "script": str(site / "static" / "search.js"),
        "pastes": pastes,
        "limit": limit,
    }
    done = subprocess.run(
        [node(), "-e", RUNNER],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result: list[list[list[Any]]] = json.loads(done.stdout)
    return result


#: Reads {"data", "script", "pastes"}; prints, per paste, what the page's
#: parser reads: [[exception, messages, role, alone, [[path, line, function, code]]], ...].
PARSE_RUNNER = r"""
const fs = require("fs");
const vm = require("vm");
const input = JSON.parse(fs.readFileSync(0, "utf8"));
globalThis.window = globalThis;
vm.runInThisContext(fs.readFileSync(input.data, "utf8"));
vm.runInThisContext(fs.readFileSync(input.script, "utf8"));
process.stdout.write(JSON.stringify(input.pastes.map(text =>
  window.raiseMinerSearch.parsePaste(text).map(r => [r.exception, r.messages, r.role, r.alone,
    r.frames.map(f => [f.path, f.line, f.func, f.code])]))));
"""


def node_parse(site: Path, pastes: list[str]) -> list[list[list[Any]]]:
    """How the site's search reads each paste (its port of ``parse_paste``)."""
    payload = {
        "data": str(site / "search-data.js"),
        "script": str(site / "static" / "search.js"),
        "pastes": pastes,
    }
    done = subprocess.run(
        [node(), "-e", PARSE_RUNNER],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result: list[list[list[Any]]] = json.loads(done.stdout)
    return result
