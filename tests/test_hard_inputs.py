"""Every case of ``../shared/cases/EXPECTED.md``, mined from a fixture repository.

All case files (the generated ones made by running their generators, the
symbolic links of case 31 recreated as links) are committed to one fixture
repository and mined by one ``miner mine`` run. The tables below hold the
answers in our record format; where it deliberately differs from EXPECTED.md,
a comment says how:

* guards are ``Guard.describe()`` strings; ``try`` is listed only for a site in
  the ``try`` body (EXPECTED.md also lists it above an ``except`` guard);
* ``%``-format and ``.format`` messages are rendered with the argument
  expressions as placeholders (``range [%d, %d]`` % (low, high) becomes
  ``range [{low:d}, {high:d}]``), literal braces doubled;
* scopes are ``__qualname__`` (``outer.<locals>.inner``);
* an unresolved message has ``message`` None, kind ``dynamic`` and the
  argument's source in ``message_source``.

The case folder is data: it is read from ``CASES_DIR`` and copied into
temporary folders, never collected or linted.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import git
import pytest
from conftest import CASES_DIR, commit_all

from miner.cli import main

pytestmark = pytest.mark.skipif(
    not (CASES_DIR / "EXPECTED.md").is_file(),
    reason=f"hard-input cases not found at {CASES_DIR} (set RAISE_MINER_CASES)",
)

#: Generators run at test time; each writes its case file into the current folder.
GENERATORS = {
    "26_gen_deep_parens.py": "26_deep_parens_segfault.py",
    "28_gen_recursion.py": "28a_deep_elif_chain.py",
}
#: Case 31's links (``31_symlinks/README.txt``); a copy may hold them as plain files.
SYMLINKS = {
    "31_symlinks/pkg/alias_module.py": "real_module.py",
    "31_symlinks/pkg/dangling.py": "does_not_exist.py",
    "31_symlinks/pkg/loop": "..",
    "31_symlinks/pkg_link": "pkg",
}


def init_repo(root: Path) -> git.Repo:
    repo = git.Repo.init(root, initial_branch="main")
    with repo.config_writer() as cfg:
        cfg.set_value("core", "autocrlf", "false")
        cfg.set_value("core", "symlinks", "true")
        cfg.set_value("commit", "gpgsign", "false")
    return repo


def copy_cases(root: Path) -> None:
    """Every case file as data (not the 4 MB output of case 29's generator)."""
    for src in sorted(CASES_DIR.rglob("*")):
        rel = src.relative_to(CASES_DIR).as_posix()
        if rel in SYMLINKS or src.is_dir():
            continue
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, target)
        target.chmod(0o644)
    for generator in GENERATORS:
        # Data-producing scripts, run with the current Python, never imported.
        subprocess.run([sys.executable, generator], cwd=root, check=True, timeout=120)
    for rel, target in SYMLINKS.items():
        link = root / rel
        link.parent.mkdir(parents=True, exist_ok=True)
        os.symlink(target, link)


@dataclass
class Mined:
    exit_code: int
    sites: dict[tuple[str, int], dict[str, Any]]
    files: dict[str, dict[str, Any]]
    """Manifest entries (files not mined, or mined with a note) by path."""
    counts: dict[str, Any]
    out: Path

    def site(self, path: str, line: int) -> dict[str, Any]:
        return self.sites[(path, line)]

    def of(self, path: str) -> list[dict[str, Any]]:
        return [s for (p, _), s in sorted(self.sites.items()) if p == path]


def mine_repo(root: Path, out: Path, *extra: str) -> Mined:
    code = main(["mine", "--repo", str(root), "--commit", "v1", "--out", str(out), *extra])
    rows = [json.loads(line) for line in (out / "sites.jsonl").read_text("utf-8").splitlines()]
    manifest = json.loads((out / "manifest.json").read_text("utf-8"))
    return Mined(
        exit_code=code,
        sites={(s["path"], s["line"]): s for s in rows},
        files={f["path"]: f for f in manifest["files"]},
        counts=manifest["counts"],
        out=out,
    )


@pytest.fixture(scope="module")
def cases_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("cases") / "repo"
    root.mkdir()
    repo = init_repo(root)
    copy_cases(root)
    commit_all(repo, "every hard-input case", tag="v1")
    return root


@pytest.fixture(scope="module")
def mined(cases_repo: Path, tmp_path_factory: pytest.TempPathFactory) -> Mined:
    return mine_repo(cases_repo, tmp_path_factory.mktemp("out"))


def guards(site: dict[str, Any]) -> list[str]:
    """A site's enclosing guards as ``describe()`` strings (the assert's own
    failing test left out)."""
    from miner.model import Guard

    return [Guard.from_json(g).describe() for g in site["guards"] if g["kind"] != "assert"]


# -- the run as a whole --------------------------------------------------------
def test_fixture_repository_stores_links_as_links(cases_repo: Path) -> None:
    tree = git.Repo(cases_repo).git.ls_tree("-r", "v1")
    modes = {line.split("\t")[1]: line.split()[0] for line in tree.splitlines()}
    assert modes["31_symlinks/pkg/alias_module.py"] == "120000"
    assert modes["31_symlinks/pkg/dangling.py"] == "120000"
    assert modes["31_symlinks/pkg_link"] == "120000"
    assert modes["31_symlinks/pkg/real_module.py"] == "100644"


def test_every_case_file_is_accounted_for_in_one_run(mined: Mined) -> None:
    assert mined.exit_code == 1  # done, but some files were not mined
    problems = {p: (f["status"], f["reason"]) for p, f in mined.files.items()}
    not_mined = {p for p, (status, _) in problems.items() if status != "mined"}
    assert not_mined == {
        "21_nul_in_code.py",
        "22_python2_file.py",
        "26_deep_parens_segfault.py",
        "31_symlinks/pkg/alias_module.py",
        "31_symlinks/pkg/dangling.py",
    }
    noted = {p for p, (status, _) in problems.items() if status == "mined"}
    assert noted == {
        "19_latin1_comment_no_cookie.py",
        "24a_tabs_mixed_valid.py",
        "24c_rf_backslash_newline.py",
    }
    # 27 case files and 3 in 31_symlinks; the links loop and pkg_link are not .py entries.
    assert mined.counts["files"] == 30
    assert mined.counts["files_failed"] == 3
    assert mined.counts["files_skipped"] == 2
    assert mined.counts["sites_by_parser"] == {"ast": 2, "libcst": 530}


def test_every_record_validates_against_its_schema(mined: Mined) -> None:
    from test_schemas import validate_output

    counts = validate_output(mined.out, None)
    assert counts["site"] == len(mined.sites) and counts["manifest"] == 1


def test_no_output_file_holds_a_nul_byte(mined: Mined) -> None:
    written = [p for p in mined.out.rglob("*") if p.is_file()]
    assert len(written) > 100
    for path in written:
        assert b"\x00" not in path.read_bytes(), path
    assert "\\u0000" in (mined.out / "sites.jsonl").read_text("utf-8")


# -- 01..04: messages ----------------------------------------------------------
# (line, exception, message, kind, style, scope, guards)
LITERALS = [
    (7, "ValueError", "value must not be None", "literal", "literal", "plain", ["x is None"]),
    (
        12,
        "RuntimeError",
        "buffer is too small for the request; increase the pool size or lower the batch size.",
        "literal",
        "literal",
        "implicit_concat",
        ["size > limit"],
    ),
    (
        21,
        "RuntimeError",
        "first line of the message\n    second line, indented\nthird line",
        "literal",
        "literal",
        "triple_quoted",
        ["not flag"],
    ),
    (
        30,
        "ValueError",
        r"expected \d+ digits in C:\tmp\new",
        "literal",
        "literal",
        "raw_and_bytes",
        ['kind == "pattern"'],
    ),
    (
        32,
        "ValueError",
        "bad header bytes",
        "literal",
        "bytes",
        "raw_and_bytes",
        ['not (kind == "pattern")', 'kind == "bytes"'],
    ),
    (
        37,
        "ValueError",
        "temperature below 0\N{DEGREE SIGN}C\tis not allowed\n",
        "literal",
        "literal",
        "escapes_and_unicode",
        ["temp < 0"],
    ),
    (
        39,
        "ValueError",
        "数值超出范围 — too hot 🔥 café",
        "literal",
        "literal",
        "escapes_and_unicode",
        ["temp > 100"],
    ),
    (44, "ValueError", None, "none", "none", "no_message", ["mode == 1"]),
    (46, "ValueError", None, "none", "none", "no_message", ["mode == 2"]),
    # An empty message is a literal, not "no message".
    (47, "KeyError", "", "literal", "literal", "no_message", []),
]

FSTRINGS = [
    (
        7,
        "ValueError",
        "ratio {ratio:.2f} for {name!r} exceeds 1",
        "template",
        "fstring",
        "conversions",
        ["ratio > 1"],
    ),
    (
        9,
        "ValueError",
        "{name=} has negative width {width!s:>{width + 10}}",
        "template",
        "fstring",
        "conversions",
        ["width < 0"],
    ),
    (
        11,
        "ValueError",
        "no items; expected one of {', '.join(sorted(table))}",
        "template",
        "fstring",
        "conversions",
        ["not items"],
    ),
    (
        13,
        "KeyError",
        "unknown key {name!r}; known: {table['default']}",
        "template",
        "fstring",
        "conversions",
        ["name not in table"],
    ),
    (
        18,
        "ValueError",
        "use {{{key}}} placeholders, got {{}} for {value}",
        "template",
        "fstring",
        "braces",
        ["value is None"],
    ),
    (
        23,
        "OSError",
        "file {path} is empty; the config expects a mapping like {{name: value}} "
        "({size} bytes read)",
        "template",
        "fstring",
        "mixed_concat",
        ["size == 0"],
    ),
    (
        32,
        "RuntimeError",
        "got {count} entries but the limit is {limit if flag else 'unbounded'} "
        "({count - limit:+d} over, {count / max(limit, 1):.1%})",
        "template",
        "fstring",
        "expressions_inside",
        ["count > limit"],
    ),
    (
        40,
        "FileNotFoundError",
        r"missing folder C:\data\{folder}\cache",
        "template",
        "fstring",
        "raw_fstring",
        ["not folder"],
    ),
]

PERCENT_FORMAT = [
    # EXPECTED.md shows the format strings; we render the arguments in place.
    (
        9,
        "ValueError",
        "setting must be one of a|b|c, got {raw!r}",
        "template",
        "percent",
        "percent_forms",
        ["raw not in opts"],
    ),
    (
        14,
        "ValueError",
        "range [{low:d}, {high:d}] is empty (100% invalid)",
        "template",
        "percent",
        "percent_forms",
        ["low > high"],
    ),
    (
        16,
        "KeyError",
        "{raw} has no options for {low}",
        "template",
        "percent",
        "percent_forms",
        ["not opts"],
    ),
    (
        21,
        "ValueError",
        "bad mode {mode} (width {width:>4})",
        "template",
        "format",
        "format_forms",
        ['mode == "a"'],
    ),
    (
        23,
        "ValueError",
        'bad mode {mode!r}; expected {"c"} or {{literal}}',
        "template",
        "format",
        "format_forms",
        ['mode == "b"'],
    ),
    (
        25,
        "ValueError",
        "bad {mode} at {1:{w}d}",
        "template",
        "format",
        "format_forms",
        ['mode == "c"'],
    ),
    # The format string is a module constant: unresolved (conservative).
    (26, "ValueError", None, "dynamic", "expression", "format_forms", []),
    # SHOULD met: the concatenation rendered like an f-string.
    (
        31,
        "RuntimeError",
        'unknown prefix {prefix}; expected one of: {", ".join(names)}',
        "template",
        "concat",
        "plus_and_join",
        ["prefix"],
    ),
    # MUST NOT report '", "' as the message.
    (32, "RuntimeError", None, "dynamic", "expression", "plus_and_join", []),
    # A logging-style extra argument: a literal, not a %-format.
    (
        37,
        "ValueError",
        "config file must be yaml or json." + " " * 19 + "%s supplied",
        "literal",
        "literal",
        "logging_style",
        ['extension not in ("yaml", "json")'],
    ),
]

VARIABLES = [
    (
        9,
        "ValueError",
        "the value is out of range",
        "literal",
        "literal",
        "single_literal",
        ["x > 10"],
    ),
    (
        18,
        "ValueError",
        "value {x} is outside [{lo}, {hi}]; adjust the bounds",
        "template",
        "fstring",
        "single_fstring",
        ["not lo <= x <= hi"],
    ),
    (25, "TypeError", "annotated message", "literal", "literal", "annotated_and_chained", ["x"]),
    (26, "TypeError", "chained message", "literal", "literal", "annotated_and_chained", []),
    (34, "RuntimeError", None, "dynamic", "expression", "augmented", ["limit <= 0"]),
    (42, "ImportError", None, "dynamic", "expression", "two_branches", []),
    # SHOULD met: the nested def's assignment is not this function's.
    (53, "ValueError", "outer reason", "literal", "literal", "shadowed_by_nested_def", ["x"]),
    (63, "ValueError", None, "dynamic", "expression", "only_nested_assigns", []),
    (68, "ValueError", None, "dynamic", "expression", "module_constant_and_parameter", ["x"]),
    (69, "ValueError", None, "dynamic", "expression", "module_constant_and_parameter", []),
    # EXPECTED.md also lists `try` above the except guard; we list it for the try body only.
    (
        79,
        "ValueError",
        None,
        "dynamic",
        "expression",
        "rebound_by_loop_and_except",
        ["except LookupError as problem"],
    ),
    (80, "ValueError", None, "dynamic", "expression", "rebound_by_loop_and_except", []),
    (
        85,
        "ValueError",
        None,
        "dynamic",
        "expression",
        "walrus_and_tuple",
        ['(detail := data.get("detail")) is not None'],
    ),
    (87, "ValueError", None, "dynamic", "expression", "walrus_and_tuple", []),
    (
        94,
        "ValueError",
        None,
        "dynamic",
        "expression",
        "assigned_after_use",
        ["for item in items", "item is None"],
    ),
    # SHOULD met: a comprehension's target is its own scope.
    (
        101,
        "ValueError",
        "rows are invalid",
        "literal",
        "literal",
        "comprehension_name_does_not_leak",
        [],
    ),
]

MESSAGE_TABLES = [
    ("01_literal_messages.py", LITERALS),
    ("02_fstring_templates.py", FSTRINGS),
    ("03_percent_format_concat.py", PERCENT_FORMAT),
    ("04_message_variables.py", VARIABLES),
]


@pytest.mark.parametrize(
    ("path", "row"),
    [(path, row) for path, rows in MESSAGE_TABLES for row in rows],
    ids=[f"{path[:2]}-{row[0]}" for path, rows in MESSAGE_TABLES for row in rows],
)
def test_messages(mined: Mined, path: str, row: tuple[Any, ...]) -> None:
    line, exception, message, kind, style, scope, expected_guards = row
    site = mined.site(path, line)
    assert site["kind"] == "raise"
    assert site["exception"] == exception
    assert site["message"] == message
    assert site["message_kind"] == kind
    assert site["message_style"] == style
    assert site["scope"] == scope
    assert guards(site) == expected_guards
    assert site["parser"] == "libcst"


@pytest.mark.parametrize(
    "path", [path for path, _ in MESSAGE_TABLES], ids=[p[:2] for p, _ in MESSAGE_TABLES]
)
def test_message_tables_cover_every_site(mined: Mined, path: str) -> None:
    rows = dict(MESSAGE_TABLES)[path]
    assert [s["line"] for s in mined.of(path)] == [row[0] for row in rows]


def test_message_parts_keep_braces_apart_from_placeholders(mined: Mined) -> None:
    braces = mined.site("02_fstring_templates.py", 18)["message_parts"]
    assert braces == [
        {"text": "use {"},
        {"expr": "key"},
        {"text": "} placeholders, got {} for "},
        {"expr": "value"},
    ]
    mixed = mined.site("02_fstring_templates.py", 23)["message_parts"]
    assert {"text": " is empty; the config expects a mapping like {name: value} ("} in mixed
    debug = mined.site("02_fstring_templates.py", 9)["message_parts"]
    assert debug[:2] == [{"text": "name="}, {"expr": "name", "conversion": "r"}]
    assert debug[3] == {"expr": "width", "conversion": "s", "spec": ">{width + 10}"}
    unresolved = mined.site("03_percent_format_concat.py", 32)
    assert unresolved["message_source"] == '", ".join(names)'
    assert unresolved["message_parts"] == []
    constant = mined.site("03_percent_format_concat.py", 26)
    assert constant["message_source"] == "TEMPLATE.format(mode)"
    resolved = mined.site("04_message_variables.py", 9)
    assert resolved["message_source"] == "msg"
    assert mined.site("04_message_variables.py", 42)["cause"] == "err"


# -- 06..10: causes, re-raises, guards, scopes ---------------------------------
# (line, exception, message, cause, reraised or None when not a re-raise, scope, guards)
CAUSES = [
    (
        9,
        "ValueError",
        "invalid payload at {exc.pos}",
        "exc",
        None,
        "with_cause",
        ["except json.JSONDecodeError as exc"],
    ),
    (16, "AttributeError", None, "None", None, "cause_none", ["except KeyError"]),
    (
        21,
        "RuntimeError",
        "multiple restores failed: {errors_seen!r}",
        "errors_seen[0]",
        None,
        "cause_expression",
        ["errors_seen"],
    ),
    (
        31,
        None,
        None,
        None,
        ["OSError", "TimeoutError"],
        "bare_reraise",
        ["except (OSError, TimeoutError)"],
    ),
    (33, None, None, None, ["BaseException"], "bare_reraise", ["except"]),
    # SHOULD met: `raise err` of the caught exception is a re-raise of ValueError.
    (
        41,
        "err",
        None,
        None,
        ["ValueError"],
        "reraise_bound",
        ["except ValueError as err", "loader.strict"],
    ),
    # SHOULD met: err.with_traceback(tb) re-raises; MUST NOT take None as a message.
    (42, "err", None, None, ["ValueError"], "reraise_bound", ["except ValueError as err"]),
    (
        56,
        None,
        None,
        None,
        ["SyntaxError", "ValueError"],
        "reraise_from_loop_else",
        [
            "except (SyntaxError, ValueError)",
            "for candidate in candidates: else",
            "not candidates",
        ],
    ),
    # MUST NOT: a handler outside the function does not make this a re-raise.
    (64, None, None, None, None, "closure_in_handler.<locals>.later", []),
    (70, None, None, None, None, "bare_raise_outside_handler", []),
]


@pytest.mark.parametrize("row", CAUSES, ids=[str(r[0]) for r in CAUSES])
def test_causes_and_reraises(mined: Mined, row: tuple[Any, ...]) -> None:
    line, exception, message, cause, reraised, scope, expected_guards = row
    site = mined.site("06_cause_and_reraise.py", line)
    assert site["exception"] == exception
    assert site["message"] == message
    assert site["cause"] == cause
    assert site["reraise"] is (reraised is not None)
    assert site["reraised"] == (reraised or [])
    assert site["scope"] == scope
    assert guards(site) == expected_guards
    if line == 16:
        assert site["message_source"] == "key"  # a parameter: unresolved


# (line, exception, message, scope, guards)
IF_GUARDS = [
    # `try` omitted above the except guard (ours: try body only).
    (
        13,
        "ImportError",
        "collections.abc is required",
        "<module>",
        ["not (TYPE_CHECKING)", "except ImportError as exc"],
    ),
    (
        16,
        "RuntimeError",
        "this module needs Python 3.9+",
        "<module>",
        ["sys.version_info < (3, 9)"],
    ),
    (
        25,
        "ValueError",
        "lenient mode is not supported",
        "dispatch",
        ['not (mode == "fast")', 'not (mode == "safe" and size > 10)', "not strict"],
    ),
    (
        27,
        "ValueError",
        "unknown mode {mode!r}",
        "dispatch",
        ['not (mode == "fast")', 'not (mode == "safe" and size > 10)', "not (not strict)"],
    ),
    (33, "RuntimeError", "a-or-b with c", "nested", ["a or b", "c"]),
    (36, "RuntimeError", "neither a nor b, with c", "nested", ["not (a or b)", "c"]),
    (
        45,
        "ValueError",
        "feature needs backend x or y",
        "multiline_condition",
        ['cfg.enable_feature and backend not in ("x", "y")'],
    ),
    (
        50,
        "ValueError",
        "cannot parse size {text!r}",
        "walrus_condition",
        [r'(m := re.match(r"(\d+)x(\d+)", text)) is None'],
    ),
    (55, "ValueError", "negative", "one_liners", ["x < 0"]),
    (57, "ValueError", "positive", "one_liners", ["not (x == 0)"]),
    (62, "AssertionError", "unreachable", "dead_code_still_reported", ["False"]),
    (64, "AssertionError", "debug only", "dead_code_still_reported", ["__debug__"]),
    (
        69,
        "SystemExit",
        "usage: prog FILE",
        "<module>",
        ['__name__ == "__main__"', "len(sys.argv) < 2"],
    ),
]

LOOP_GUARDS = [
    (
        12,
        "RuntimeError",
        "queue closed while waiting",
        "loops",
        ["while attempts < retries", "queue.closed"],
    ),
    (
        14,
        "TimeoutError",
        "queue not ready after {retries} attempts",
        "loops",
        ["while attempts < retries: else"],
    ),
    (18, "ValueError", "bad item {item.id}", "loops", ["for item in queue.items()", "item.bad"]),
    (
        21,
        "LookupError",
        "queue is empty",
        "loops",
        ["for item in queue.items(): else", "not queue.items()"],
    ),
    (
        27,
        "ValueError",
        "stream yielded None",
        "async_loops",
        ["async for chunk in stream", "chunk is None"],
    ),
    (
        30,
        "RuntimeError",
        "transaction failed",
        "async_loops",
        ["async with lock, session.begin() as tx", "tx.failed"],
    ),
    (
        37,
        "IOError",
        "index out of sync",
        "with_blocks",
        [
            "with lock",
            'with open(path) as fh, open(path + ".idx") as idx',
            "fh.read(1) != idx.read(1)",
        ],
    ),
    (43, "ConnectionError", "not connected", "try_parts", ["try", "not conn.open"]),
    (
        49,
        "ConnectionError",
        "reopen failed",
        "try_parts",
        ["except (ConnectionError, OSError) as err", "conn.retry", "except OSError"],
    ),
    (50, None, None, "try_parts", ["except (ConnectionError, OSError) as err"]),
    (53, "RuntimeError", "connection left dirty", "try_parts", ["try: else", "conn.dirty"]),
    (56, "ResourceWarning", "connection leaked", "try_parts", ["finally", "conn.leaked"]),
    (
        63,
        "RuntimeError",
        "{len(group.exceptions)} tasks failed",
        "exception_groups",
        ["except* (ValueError, TypeError) as group"],
    ),
    (65, None, None, "exception_groups", ["except* KeyboardInterrupt"]),
]

MATCH_GUARDS = [
    (
        21,
        "AssertionError",
        "remote script failed:\n{tb}",
        "handle",
        ["match reply: case Failed(trace=tb) if strict"],
    ),
    (23, "KeyboardInterrupt", None, "handle", ['match reply: case "stop" | "halt"']),
    # `message` is a capture-pattern binding: unresolved.
    (25, "RuntimeError", None, "handle", ['match reply: case {"error": message, **rest}']),
    (
        27,
        "ValueError",
        "first element is None",
        "handle",
        ["match reply: case [first, *_] if first is None"],
    ),
    (29, "RuntimeError", "unexpected reply {reply!r}", "handle", ["match reply: case _"]),
    (36, "ValueError", "no word in {case!r}", "soft_keywords", ["match is None"]),
    (
        41,
        "ValueError",
        "nested match",
        "soft_keywords",
        ['match match.group(0): case "x"', 'match case: case "x"'],
    ),
    # One line, comment dropped; the pattern's outer parentheses are dropped (optional).
    (
        50,
        "RuntimeError",
        "multi-line case pattern",
        "multiline_pattern",
        ['match err: case TypeError() | ValueError() if "absurdly long message" in str(err)'],
    ),
]

SCOPES = [
    (8, "ImportError", "fastjson is required at import time", "<module>", ["except ImportError"]),
    (
        13,
        "RuntimeError",
        "Settings is not supported on Windows",
        "Settings",
        ['sys.platform == "win32"'],
    ),
    (17, "ValueError", "size must be positive", "Settings.__init__", ["size <= 0"]),
    (26, "AttributeError", "size is read-only", "Settings.size", []),
    # The `for ch in token` after the def belongs to `convert`: not a guard.
    (
        33,
        "ValueError",
        "bad digit {ch!r}",
        "Settings.parse.<locals>.convert.<locals>.check",
        ["not ch.isdigit()"],
    ),
    (44, "TypeError", "spec is required", "Settings.Inner.build", ["spec is None"]),
    (50, "RuntimeError", "local runner for {kind} cannot run", "factory.<locals>.Local.run", []),
    (53, "ConnectionError", "offline", "factory.<locals>.fetch", []),
    # The path resets at the def: the version check is definition context, not a guard.
    (62, "NotImplementedError", "new backend", "Backend.start", []),
    (66, "NotImplementedError", "old backend", "Backend.start", []),
    (69, "NotImplementedError", None, "one_line", []),
]

GUARD_TABLES = [
    ("07_guards_if_elif_else.py", IF_GUARDS),
    ("08_guards_loops_with_try.py", LOOP_GUARDS),
    ("09_match_case.py", MATCH_GUARDS),
    ("10_scopes.py", SCOPES),
]


@pytest.mark.parametrize(
    ("path", "row"),
    [(path, row) for path, rows in GUARD_TABLES for row in rows],
    ids=[f"{path[:2]}-{row[0]}" for path, rows in GUARD_TABLES for row in rows],
)
def test_guards_and_scopes(mined: Mined, path: str, row: tuple[Any, ...]) -> None:
    line, exception, message, scope, expected_guards = row
    site = mined.site(path, line)
    assert site["exception"] == exception
    assert site["message"] == message
    assert site["scope"] == scope
    assert guards(site) == expected_guards


@pytest.mark.parametrize("path", [path for path, _ in GUARD_TABLES] + ["06_cause_and_reraise.py"])
def test_guard_tables_cover_every_site(mined: Mined, path: str) -> None:
    rows = dict(GUARD_TABLES).get(path, CAUSES)
    assert [s["line"] for s in mined.of(path)] == [row[0] for row in rows]


def test_guard_lines_and_bound_names(mined: Mined) -> None:
    # except guards hold the types in `test` and the bound name in `name`.
    site = mined.site("08_guards_loops_with_try.py", 49)
    assert site["guards"][0] == {
        "kind": "except",
        "test": "(ConnectionError, OSError)",
        "negated": False,
        "line": 44,
        "name": "err",
    }
    assert site["cause"] == "err"
    assert [g["line"] for g in mined.site("08_guards_loops_with_try.py", 14)["guards"]] == [13]
    assert [g["line"] for g in mined.site("08_guards_loops_with_try.py", 53)["guards"]] == [51, 52]
    assert [g["line"] for g in mined.site("08_guards_loops_with_try.py", 56)["guards"]] == [54, 55]
    case = mined.site("09_match_case.py", 50)["guards"][0]
    assert (case["kind"], case["line"], case["subject"]) == ("case", 46, "err")
    assert mined.site("08_guards_loops_with_try.py", 63)["cause"] == "group"


# -- 12, 14: asserts and excerpts ----------------------------------------------
# (line, failing test, message, kind, style, guards)
ASSERTS = [
    (5, "get_embedding", "this model is only used for embedding", "literal", "literal", []),
    (
        6,
        "get_embedding",
        "parenthesised test, message after the closing paren",
        "literal",
        "literal",
        [],
    ),
    (
        9,
        "start % page == 0",
        "segment start {start} is not aligned to page_size {page}",
        "template",
        "fstring",
        [],
    ),
    # A tuple message: unresolved.
    (13, "out.dtype == inp.dtype", None, "dynamic", "expression", []),
    (14, "out.is_contiguous()", None, "none", "none", []),
    # Acceptable: a concat template that keeps the conditional suffix as a placeholder.
    (
        15,
        "used <= capacity",
        "used {used} > capacity {capacity}"
        "{f\" ({', '.join(f'{k}={v}' for k, v in context.items())})\" if context else \"\"}",
        "template",
        "concat",
        [],
    ),
    (
        21,
        "seg.owner is not None",
        "segment {seg.name} has no owner",
        "template",
        "percent",
        ["for seg in segments"],
    ),
    # Always true: the string is part of the test, not the message (conservative; not flagged).
    (25, '(flag, "this tuple is always truthy")', None, "none", "none", []),
]


@pytest.mark.parametrize("row", ASSERTS, ids=[str(r[0]) for r in ASSERTS])
def test_asserts(mined: Mined, row: tuple[Any, ...]) -> None:
    line, test, message, kind, style, expected_guards = row
    site = mined.site("12_asserts.py", line)
    assert site["kind"] == "assert"
    assert site["exception"] == "AssertionError"
    assert site["message"] == message
    assert (site["message_kind"], site["message_style"]) == (kind, style)
    assert site["guards"][-1] == {"kind": "assert", "test": test, "negated": True, "line": line}
    assert guards(site) == expected_guards
    assert site["scope"] == ("always_true" if line == 25 else "asserts")


def test_asserts_table_covers_every_site(mined: Mined) -> None:
    assert [s["line"] for s in mined.of("12_asserts.py")] == [row[0] for row in ASSERTS]
    assert mined.site("12_asserts.py", 6)["end_line"] == 8
    assert mined.site("12_asserts.py", 13)["message_source"] == "(out.dtype, inp.dtype)"


def test_excerpts_at_file_edges(mined: Mined, cases_repo: Path) -> None:
    text = (cases_repo / "14_excerpt_boundaries.py").read_text("utf-8")
    first = mined.site("14_excerpt_boundaries.py", 2)
    last = mined.site("14_excerpt_boundaries.py", 9)
    assert (first["exception"], first["message"], first["scope"]) == (
        "EnvironmentError",
        "HOME is not set",
        "<module>",
    )
    assert guards(first) == ['not os.environ.get("HOME")']
    # The `if x: return x` before the last raise is an early exit, not a guard.
    assert (last["scope"], guards(last)) == ("last", [])
    for site in (first, last):
        assert site["excerpt"] == {"start_line": 1, "end_line": 9, "text": text}
    assert text.endswith('raise ValueError("last line of the file")')


# -- 16..22: line breaks, encodings, NUL, Python 2 -----------------------------
def test_mixed_line_endings(mined: Mined) -> None:
    path = "16_mixed_line_endings.py"
    rows = [
        (6, "ValueError", "first line\nsecond line", ["flag == 1"]),
        (9, "ValueError", "joined by a backslash continuation", ["flag == 2"]),
        # A lone CR ends line 11: the raise is on line 13, not 12.
        (13, "RuntimeError", "after mixed endings: {name}", ["flag == 3"]),
    ]
    assert [s["line"] for s in mined.of(path)] == [r[0] for r in rows]
    for line, exception, message, expected_guards in rows:
        site = mined.site(path, line)
        assert (site["exception"], site["message"], site["scope"]) == (
            exception,
            message,
            "crlf_messages",
        )
        assert guards(site) == expected_guards
        assert "\r" not in json.dumps(site, ensure_ascii=False).replace("\\r", "")
        assert "\r" not in site["excerpt"]["text"]
    excerpt = mined.site(path, 13)["excerpt"]["text"].split("\n")
    assert excerpt[10:12] == ["    x = 1", "    if flag == 3:"]


def test_utf8_bom(mined: Mined) -> None:
    path = "17_utf8_bom.py"
    check = mined.site(path, 6)
    assert (check["kind"], check["message"], check["scope"]) == (
        "assert",
        "this classifier is only used for embedding",
        "forward",
    )
    assert check["guards"][-1]["test"] == "get_embedding"
    raised = mined.site(path, 10)
    assert (raised["exception"], raised["message"]) == (
        "TypeError",
        "get_embedding must be callable",
    )
    assert guards(raised) == ["not callable(get_embedding)"]
    assert not check["excerpt"]["text"].startswith("\ufeff")
    assert mined.files.get(path) is None  # mined without a note


def test_latin1_cookie(mined: Mined) -> None:
    path = "18_latin1_coding.py"
    first, second = mined.site(path, 8), mined.site(path, 10)
    assert (first["exception"], first["message"], first["message_style"]) == (
        "KeyError",
        "entrée inconnue: {name}",
        "percent",
    )
    assert guards(first) == ["name not in table"]
    assert (second["exception"], second["message"], second["message_style"]) == (
        "ValueError",
        "valeur absente pour «{name}» (°C)",
        "fstring",
    )
    assert guards(second) == ["table[name] is None"]
    assert first["scope"] == second["scope"] == "lookup"
    assert "\ufffd" not in first["excerpt"]["text"]
    assert "entrée" in first["excerpt"]["text"]


def test_latin1_byte_without_cookie_is_mined_with_a_note(mined: Mined) -> None:
    # SHOULD met: a lossy decode, mined, with a note in the manifest.
    path = "19_latin1_comment_no_cookie.py"
    site = mined.site(path, 9)
    assert (site["exception"], site["message"], site["scope"]) == (
        "ValueError",
        "n must be non-negative",
        "check",
    )
    assert guards(site) == ["n < 0"]
    assert mined.files[path]["status"] == "mined"
    assert mined.files[path]["reason"] == "decoded with replacement characters (invalid bytes)"


def test_nul_in_string_literal(mined: Mined) -> None:
    # libcst parses the file (CPython does not); mined, and NUL escaped in JSON.
    path = "20_nul_in_string_literal.py"
    assert [s["line"] for s in mined.of(path)] == [7, 8]
    first, second = mined.site(path, 7), mined.site(path, 8)
    assert first["message"] == "separator must not be \x00 (NUL)"
    assert guards(first) == ['sep == "\x00"']
    assert second["message"] == "escaped form \x00 is fine"
    assert first["scope"] == second["scope"] == "pack"
    line = next(
        row for row in (mined.out / "sites.jsonl").read_text("utf-8").splitlines() if path in row
    )
    assert "separator must not be \\u0000 (NUL)" in line


def test_nul_in_code_fails_with_both_reasons(mined: Mined) -> None:
    entry = mined.files["21_nul_in_code.py"]
    assert entry["status"] == "failed"
    assert entry["reason"] == (
        "libcst cannot parse: tokenizer error: '\\0' is not a valid character in this "
        "position @ 1:1; Python's parser: source code string cannot contain null bytes"
    )
    assert mined.of("21_nul_in_code.py") == []


def test_python2_file_fails_with_a_hint(mined: Mined) -> None:
    entry = mined.files["22_python2_file.py"]
    assert entry["status"] == "failed"
    assert entry["reason"].startswith("libcst cannot parse: parser error: error at 7:32")
    assert entry["reason"].endswith(
        "Python's parser: Missing parentheses in call to 'print'. Did you mean print(...)? "
        "(line 7) (Python 2 syntax?)"
    )
    assert mined.of("22_python2_file.py") == []


# -- 24: valid Python that libcst rejects --------------------------------------
FALLBACK = [
    (
        "24a_tabs_mixed_valid.py",
        6,
        "ValueError",
        "x is None",
        "check",
        ["x is None"],
        "tokenizer error: no matching outer block for dedent @ 1:1",
    ),
    (
        "24c_rf_backslash_newline.py",
        6,
        "FileNotFoundError",
        "no file C:\\data\\{name} \\\nfound",
        "locate",
        ["not name"],
        "tokenizer error: unterminated string literal @ 1:1",
    ),
    (
        "24d_lone_backslash_line.py",
        9,
        "ValueError",
        "after the lone backslash",
        "second",
        ["x"],
        "parser error: error at 8:7: expected INDENT @ 9:8",
    ),
]


@pytest.mark.parametrize("row", FALLBACK, ids=[r[0][:3] for r in FALLBACK])
def test_what_libcst_rejects_is_mined_by_the_ast_fallback(
    mined: Mined, cases_repo: Path, tmp_path: Path, row: tuple[Any, ...]
) -> None:
    path, line, exception, message, scope, expected_guards, cst_reason = row
    whole = mine_repo(cases_repo, tmp_path / "full", "--full-parse")
    for result in (mined, whole):
        site = result.site(path, line)
        assert [s["line"] for s in result.of(path)] == [line]
        assert (site["exception"], site["message"], site["scope"]) == (exception, message, scope)
        assert guards(site) == expected_guards
    fallback = whole.site(path, line)
    assert fallback["parser"] == "ast"
    note = whole.files[path]
    assert (note["status"], note["reason"]) == (
        "mined",
        f"mined with the ast fallback (libcst cannot parse: {cst_reason})",
    )
    # Without --full-parse, only the function holding the site is given to
    # libcst: 24d's stray backslash lies outside it, so libcst mines 24d.
    assert mined.site(path, line)["parser"] == ("libcst" if path.startswith("24d") else "ast")


# -- 25, 26, 28a, 31 -----------------------------------------------------------
NEWER_GRAMMAR = [
    (8, "ValueError", 'no keys; known: {", ".join(table)}', "fstring", "pep701", ["not keys"]),
    (
        10,
        "ValueError",
        "bad width {width} for {table[\"name\"]!r}: {'\\n'.join(keys)}",
        "fstring",
        "pep701",
        ["width < 0"],
    ),
    (
        12,
        "ValueError",
        "too many keys: {len(keys)} > {width}",
        "fstring",
        "pep701",
        ["len(keys) > width"],
    ),
    (
        16,
        "ValueError",
        'nested {f"inner {keys[1]!r}"} done',
        "fstring",
        "pep701",
        ["keys[0] is None"],
    ),
    (21, "IndexError", "first() of an empty list", "literal", "first", ["not items"]),
    (
        32,
        "RuntimeError",
        "could not open the connection",
        "literal",
        "pep758",
        ["except TimeoutError, ConnectionError"],
    ),
    # SHOULD met: a t-string is styled as one.
    (37, "ValueError", "template message for {user!r}", "tstring", "pep750", ["user is None"]),
]


def test_grammar_newer_than_the_host_python(mined: Mined) -> None:
    path = "25_py312_py314_syntax.py"
    assert [s["line"] for s in mined.of(path)] == [r[0] for r in NEWER_GRAMMAR]
    for line, exception, message, style, scope, expected_guards in NEWER_GRAMMAR:
        site = mined.site(path, line)
        assert (site["exception"], site["message"], site["message_style"]) == (
            exception,
            message,
            style,
        )
        assert (site["scope"], guards(site)) == (scope, expected_guards)
        assert site["parser"] == "libcst"
    handler = mined.site(path, 32)["guards"][0]
    assert handler["test"] == "TimeoutError, ConnectionError"


def test_deep_parentheses_are_never_given_to_libcst(mined: Mined) -> None:
    entry = mined.files["26_deep_parens_segfault.py"]
    assert entry["status"] == "failed"
    assert entry["reason"] == (
        "nesting too deep for libcst (CPython: too many nested parentheses (line 11))"
    )
    assert mined.of("26_deep_parens_segfault.py") == []
    assert mined.of("26_gen_deep_parens.py") == []


def test_deep_elif_chain_is_mined_whole(mined: Mined) -> None:
    path = "28a_deep_elif_chain.py"
    sites = mined.of(path)
    assert len(sites) == 401
    tests = [f'op == "op{i}"' for i in range(400)]
    for i, site in enumerate(sites[:400]):
        assert site["line"] == 7 + 2 * i
        assert (site["exception"], site["message"], site["message_style"]) == (
            "NotImplementedError",
            f"op{i} is not implemented",
            "literal",
        )
        assert site["scope"] == "dispatch"
        assert guards(site) == [f"not ({t})" for t in tests[:i]] + [tests[i]]
    last = sites[400]
    assert (last["line"], last["exception"], last["message"]) == (
        807,
        "KeyError",
        "unknown op {op!r}",
    )
    assert guards(last) == [f"not ({t})" for t in tests]
    assert [g["line"] for g in last["guards"]] == [6 + 2 * i for i in range(400)]


def test_symlinks_are_not_followed(mined: Mined) -> None:
    real = mined.site("31_symlinks/pkg/real_module.py", 6)
    assert (real["exception"], real["message"], real["scope"]) == (
        "ValueError",
        "path is empty",
        "load",
    )
    assert guards(real) == ["not path"]
    reason = "symbolic link (not followed; its target is mined where it lives)"
    for link in ("31_symlinks/pkg/alias_module.py", "31_symlinks/pkg/dangling.py"):
        assert mined.files[link]["status"] == "skipped"
        assert mined.files[link]["reason"] == reason
        assert mined.of(link) == []
    # Counted once: the alias does not double the real module's site.
    in_case = [key for key in mined.sites if key[0].startswith("31_symlinks/")]
    assert in_case == [("31_symlinks/pkg/real_module.py", 6)]
    # Directory links (the cycle and the sibling) are not .py entries: never walked.
    assert not any(path.startswith("31_symlinks/pkg_link/") for path, _ in mined.sites)
    assert not any("/loop/" in path for path in mined.files)


def test_submodule_is_skipped_with_a_note(make_repo: Any, tmp_path: Path) -> None:
    root = make_repo({"pkg/mod.py": 'def f(x):\n    if x:\n        raise ValueError("bad x")\n'})
    repo = git.Repo(root)
    sha = repo.head.commit.hexsha
    # A gitlink (mode 160000) whose path ends in .py, as `git submodule add` records it.
    repo.git.update_index("--add", "--cacheinfo", f"160000,{sha},vendor/plugin.py")
    commit_all(repo, "add a submodule", tag="v2", stage=False)
    out = tmp_path / "out"
    code = main(["mine", "--repo", str(root), "--commit", "v2", "--out", str(out)])
    manifest = json.loads((out / "manifest.json").read_text("utf-8"))
    assert code == 1
    assert manifest["files"] == [
        {
            "path": "vendor/plugin.py",
            "blob": sha,
            "status": "skipped",
            "reason": "submodule (gitlink): not part of this repository's tree",
        }
    ]
    assert manifest["counts"]["sites"] == 1


# -- 29: a huge generated file -------------------------------------------------
def test_huge_generated_table_is_mined_within_limits(tmp_path: Path) -> None:
    """Case 29 (4.3 MB, 200,008 lines). About 3 s: only the function holding the
    raise is given to libcst (the whole module would take about 20 s)."""
    root = tmp_path / "repo"
    root.mkdir()
    repo = init_repo(root)
    shutil.copyfile(CASES_DIR / "29_gen_huge_table.py", root / "29_gen_huge_table.py")
    subprocess.run([sys.executable, "29_gen_huge_table.py"], cwd=root, check=True, timeout=120)
    assert (root / "29_huge_flat_table.py").stat().st_size > 4_000_000
    commit_all(repo, "huge table", tag="v1")
    result = mine_repo(root, tmp_path / "out")
    assert result.exit_code == 0
    site = result.site("29_huge_flat_table.py", 200007)
    assert (site["exception"], site["message"], site["message_style"]) == (
        "KeyError",
        "unknown key {key!r}",
        "fstring",
    )
    assert (site["scope"], guards(site), site["parser"]) == (
        "lookup",
        ["key not in TABLE"],
        "libcst",
    )
    assert list(result.sites) == [("29_huge_flat_table.py", 200007)]
