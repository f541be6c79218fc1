"""Every kind of hard input, mined from one fixture repository.

The inputs are the project's own (``hard_input_fixtures``): committed files of
``fixtures/hard_inputs/``, byte-level cases written from bytes literals,
generated ones (deep parentheses, a long ``elif`` chain, a huge table) and a
folder of symbolic links. All but the huge table are committed to one
repository and mined by one ``miner mine`` run; the tables below hold the exact
records expected, read off the fixture files (every line number also checked
against CPython's ``ast`` where it parses the file, see
``test_lines_agree_with_the_standard_library``). Conventions:

* guards are ``Guard.describe()`` strings (an assert's own failing test left
  out); ``try`` is listed for a site in the ``try`` body only, not above an
  ``except`` guard;
* ``%``-format and ``.format`` messages are rendered with the argument
  expressions as placeholders (``span [%d..%d]`` % (first, last) becomes
  ``span [{first:d}..{last:d}]``), literal braces doubled;
* scopes are ``__qualname__`` (``outer.<locals>.inner``);
* an unresolved message has ``message`` None, kind ``dynamic`` and the
  argument's source in ``message_source``; ``from None`` is the cause ``"None"``.
"""

from __future__ import annotations

import ast
import json
import sys
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import git
import pytest
from conftest import commit_all
from hard_input_fixtures import BYTE_CASES, SYMLINKS, elif_chain, flat_cases, huge_table, write_tree

from miner.cli import main


def init_repo(root: Path) -> git.Repo:
    repo = git.Repo.init(root, initial_branch="main")
    with repo.config_writer() as cfg:
        cfg.set_value("core", "autocrlf", "false")
        cfg.set_value("core", "symlinks", "true")
        cfg.set_value("commit", "gpgsign", "false")
    return repo


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


#: Whole-repository mines of every hard input (about a minute): make test runs them.
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def cases_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("cases") / "repo"
    root.mkdir()
    repo = init_repo(root)
    write_tree(root)
    commit_all(repo, "every hard input", tag="v1")
    return root


@pytest.fixture(scope="module")
def mined(cases_repo: Path, tmp_path_factory: pytest.TempPathFactory) -> Mined:
    return mine_repo(cases_repo, tmp_path_factory.mktemp("out"))


@pytest.fixture(scope="module")
def mined_whole(cases_repo: Path, tmp_path_factory: pytest.TempPathFactory) -> Mined:
    """The same repository mined with ``--full-parse`` (whole modules to libcst)."""
    return mine_repo(cases_repo, tmp_path_factory.mktemp("out-full"), "--full-parse")


def guards(site: dict[str, Any]) -> list[str]:
    """A site's enclosing guards as ``describe()`` strings (the assert's own
    failing test left out)."""
    from miner.model import Guard

    return [Guard.from_json(g).describe() for g in site["guards"] if g["kind"] != "assert"]


# -- the tables ----------------------------------------------------------------
class Row(NamedTuple):
    """One expected record."""

    line: int
    exception: str | None
    message: str | None
    kind: str
    """``message_kind``."""
    style: str
    """``message_style``."""
    scope: str
    guards: list[str]
    cause: str | None = None
    reraised: list[str] | None = None
    """The types the enclosing handler catches; None when not a re-raise."""
    test: str | None = None
    """An assert's failing test; None for a raise."""
    parser: str = "libcst"


def asserted(line: int, test: str, message: str | None, kind: str, style: str, scope: str,
             guards: list[str] | None = None) -> Row:  # fmt: skip
    return Row(line, "AssertionError", message, kind, style, scope, guards or [], test=test)


MSG_LITERALS = [
    Row(7, "TypeError", "a name is required", "literal", "literal", "require_name",
        ["name is None"]),
    # Three parts, a comment between two of them.
    Row(12, "OverflowError",
        "quota exhausted for this tenant; free some slots or ask for a larger quota.",
        "literal", "literal", "check_quota", ["used >= quota"]),
    # No dedent: the eight spaces of the middle line are kept.
    Row(21, "RuntimeError",
        "banner is disabled\n        this line keeps its eight spaces\nlast line of the banner",
        "literal", "literal", "banner", ["not enabled"]),
    # Raw: backslash-n, backslash-t, backslash-x41 stay two or four characters.
    Row(30, "ValueError", r"bad path D:\new\table\x41 for \w+", "literal", "literal",
        "path_rules", ['style == "windows"']),
    Row(32, "ValueError", "malformed frame header", "literal", "bytes", "path_rules",
        ['not (style == "windows")', 'style == "wire"']),
    Row(37, "ValueError",
        "reading under \N{MINUS SIGN}50\N{DEGREE SIGN}F\tis implausible\n",
        "literal", "literal", "thermometer", ["reading < -50"]),
    # A separate `if`: the earlier test is not negated.
    Row(39, "ValueError", "温度过高 — the sensor melted 🌡 naïve", "literal", "literal",
        "thermometer", ["reading > 150"]),
    Row(44, "LookupError", None, "none", "none", "empty_forms", ["code == 7"]),
    Row(46, "LookupError", None, "none", "none", "empty_forms", ["code == 8"]),
    # An empty message is a literal, not "no message".
    Row(47, "IndexError", "", "literal", "literal", "empty_forms", []),
]  # fmt: skip

MSG_FSTRINGS = [
    Row(7, "ValueError", "share {share:.1%} of {label!r} is above half", "template", "fstring",
        "describe", ["share > 0.5"]),
    # The self-documenting `=` is kept; the nested spec too.
    Row(9, "ValueError", "{limit=} must not be negative {label!s:^{limit * 2}}", "template",
        "fstring", "describe", ["limit < 0"]),
    Row(11, "ValueError", "no rows; pick a column of {' / '.join(sorted(index))}", "template",
        "fstring", "describe", ["not rows"]),
    Row(13, "KeyError", "label {label!a} not indexed; first: {index['first']}", "template",
        "fstring", "describe", ["label not in index"]),
    Row(18, "ValueError", "write {{{field}}} in the template, not {{}} near {value}",
        "template", "fstring", "placeholders", ["value is None"]),
    # The plain literal's braces are text, doubled, not a placeholder.
    Row(23, "EOFError",
        "source {source} has no lines; a header looks like {{key: type}} [{lines} lines]",
        "template", "fstring", "mixed_parts", ["lines == 0"]),
    Row(32, "OverflowError",
        "total {total} is over the cap {cap if strict else 'none'} "
        "(by {total - cap:+,}, {total / max(cap, 1):.0%})",
        "template", "fstring", "arithmetic", ["total > cap"]),
    Row(40, "NotADirectoryError", r"no drive E:\volumes\{drive}\backup", "template", "fstring",
        "raw_template", ["not drive"]),
]  # fmt: skip

MSG_PERCENT_FORMAT = [
    # The implicit concatenation is joined before `%` applies.
    Row(9, "ValueError", "level must be one of low|mid|high, got {level!r}", "template",
        "percent", "percent_styles", ["level not in choices"]),
    Row(14, "ValueError", "span [{first:d}..{last:d}] is reversed (50% of runs)", "template",
        "percent", "percent_styles", ["first > last"]),
    Row(16, "KeyError", "{level} offered no choices at {first}", "template", "percent",
        "percent_styles", ["not choices"]),
    Row(21, "ValueError", "level {level} too shallow (depth {depth:<6})", "template", "format",
        "format_styles", ["level == 1"]),
    Row(23, "ValueError", 'level {level!s} clashes with {"root"} and {{braces}}', "template",
        "format", "format_styles", ["level == 2"]),
    # Keyword fields take the keyword's expression; `**extra` is ignored.
    Row(25, "ValueError", "level {level} at {9:{pad}x}", "template", "format", "format_styles",
        ["level == 3"]),
    # The format string is a module constant: unresolved (conservative).
    Row(26, "ValueError", None, "dynamic", "expression", "format_styles", []),
    # The `+` chain rendered like an f-string.
    Row(31, "LookupError", 'scheme {scheme} unknown; supported: {" | ".join(known)}',
        "template", "concat", "plus_joined", ["scheme"]),
    # Never '" | "' as the message.
    Row(32, "LookupError", None, "dynamic", "expression", "plus_joined", []),
    # A logging-style extra argument: a literal, not a %-format; the
    # backslash-newline inside the literal keeps the next line's 14 spaces.
    Row(37, "ValueError", "codec must be gzip or zstd." + " " * 14 + "%r requested", "literal",
        "literal", "logging_style", ['codec not in ("gzip", "zstd")']),
]  # fmt: skip

MSG_VARIABLES = [
    Row(9, "OverflowError", "the counter overflowed", "literal", "literal", "one_literal",
        ["count > 99"]),
    # A parenthesised assignment over several lines.
    Row(18, "ValueError", "count {count} left the window ({floor}, {ceiling}); widen the window",
        "template", "fstring", "one_fstring", ["not floor < count < ceiling"]),
    Row(25, "TypeError", "annotated label", "literal", "literal", "annotated_then_chained",
        ["flag"]),
    Row(26, "TypeError", "chained label", "literal", "literal", "annotated_then_chained", []),
    # Grown by `+=` under a condition: never the first literal alone, but the
    # appended part as an optional part of the template.
    Row(34, "MemoryError", "budget exceeded. context: {context}", "template", "steps",
        "grown_with_plus_equals", ["budget < 0"]),
    # Two assignments: neither is picked.
    Row(42, "ImportError", None, "dynamic", "expression", "set_in_both_branches", [],
        cause="exc"),
    # The nested def's assignment is not this function's.
    Row(53, "RuntimeError", "outer cause", "literal", "literal", "outer_wins_over_inner",
        ["flag"]),
    Row(63, "RuntimeError", None, "dynamic", "expression", "only_the_inner_def_assigns", []),
    # A module constant and a parameter: unresolved.
    Row(68, "LookupError", None, "dynamic", "expression", "constant_and_argument", ["flag"]),
    Row(69, "LookupError", None, "dynamic", "expression", "constant_and_argument", []),
    # Bound by `except ... as`, and rebound by a `for` target: unresolved.
    Row(79, "LookupError", None, "dynamic", "expression", "rebound_names",
        ["except KeyError as missing"]),
    Row(80, "LookupError", None, "dynamic", "expression", "rebound_names", []),
    Row(85, "ValueError", None, "dynamic", "expression", "walrus_and_unpacking",
        ['(hint := payload.get("hint")) is not None']),
    Row(87, "ValueError", None, "dynamic", "expression", "walrus_and_unpacking", []),
    # Reassigned later in the loop: never "before".
    Row(94, "ValueError", None, "dynamic", "expression", "reassigned_later",
        ["for entry in batch", "entry is None"]),
    # A comprehension's target is its own scope.
    Row(101, "ValueError", "cells are malformed", "literal", "literal", "comprehension_scope",
        []),
]  # fmt: skip

CAUSES = [
    Row(9, "ValueError", "bad csv row near {problem.args}", "template", "fstring", "parse_row",
        ["except csv.Error as problem"], cause="problem"),
    # A parameter as the message: unresolved.
    Row(16, "NameError", None, "dynamic", "expression", "no_context", ["except KeyError"],
        cause="None"),
    Row(21, "RuntimeError", "{len(failures)} shutdown hooks failed: {failures!r}", "template",
        "fstring", "first_failure", ["failures"], cause="failures[-1]"),
    Row(31, None, None, "none", "none", "passthrough",
        ["except (PermissionError, InterruptedError)"],
        reraised=["PermissionError", "InterruptedError"]),
    Row(33, None, None, "none", "none", "passthrough", ["except"], reraised=["BaseException"]),
    # `raise exc` of the caught exception re-raises LookupError.
    Row(41, "exc", None, "none", "none", "bound_reraise",
        ["except LookupError as exc", "job.verbose"], reraised=["LookupError"]),
    # exc.with_traceback(None) re-raises; None is not a message.
    Row(42, "exc", None, "none", "none", "bound_reraise", ["except LookupError as exc"],
        reraised=["LookupError"]),
    # The outer handler's types: the inner try/except does not enclose the raise.
    Row(56, None, None, "none", "none", "reraise_after_loop",
        ["except (UnicodeError, EOFError)", "for codec in fallbacks: else", "not fallbacks"],
        reraised=["UnicodeError", "EOFError"]),
    # A handler outside the function does not make this a re-raise.
    Row(64, None, None, "none", "none", "closure_made_in_handler.<locals>.retry_later", []),
    Row(70, None, None, "none", "none", "nothing_to_reraise", []),
]  # fmt: skip

BRANCH_GUARDS = [
    Row(14, "ImportError", "pathlib is needed at import time", "literal", "literal", "<module>",
        ["not (TYPE_CHECKING)", "except ImportError as missing"], cause="missing"),
    Row(17, "RuntimeError", "python 3.8 or newer is required", "literal", "literal", "<module>",
        ["sys.version_info < (3, 8)"]),
    Row(26, "ValueError", "strict routing has no lane for this parcel", "literal", "literal",
        "route",
        ['not (kind == "bulk")', 'not (kind == "express" and weight < 5)', "not relaxed"]),
    Row(28, "ValueError", "no lane for kind {kind!r}", "template", "fstring", "route",
        ['not (kind == "bulk")', 'not (kind == "express" and weight < 5)',
         "not (not relaxed)"]),
    Row(34, "RuntimeError", "p and q, then r", "literal", "literal", "layered", ["p and q", "r"]),
    # The parentheses are kept: `not p and q` would be another condition.
    Row(37, "RuntimeError", "not both p and q, then r", "literal", "literal", "layered",
        ["not (p and q)", "r"]),
    # One line, both comments dropped.
    Row(46, "ValueError", "caching is not available for this target", "literal", "literal",
        "long_condition", ['opts.cache_enabled or target in {"disk", "tape"}']),
    Row(51, "ValueError", "spec {spec!r} is not name@version", "template", "fstring",
        "assignment_expression", [r'(found := re.fullmatch(r"(\w+)@(\d+)", spec)) is None']),
    Row(56, "ValueError", "too large", "literal", "literal", "same_line", ["n > 9"]),
    Row(58, "ValueError", "not five", "literal", "literal", "same_line", ["not (n == 5)"]),
    # Dead code is still reported.
    Row(63, "ArithmeticError", "never taken", "literal", "literal", "constant_tests", ["0"]),
    Row(65, "ArithmeticError", "taken unless -O", "literal", "literal", "constant_tests",
        ["__debug__"]),
    Row(70, "SystemExit", "set APP_HOME first", "literal", "literal", "<module>",
        ['__name__ == "__main__"', 'not os.environ.get("APP_HOME")']),
]  # fmt: skip

LOOP_GUARDS = [
    # The earlier `if worker.done(): break` exits early: not a guard.
    Row(12, "RuntimeError", "worker crashed while polling", "literal", "literal", "polling",
        ["while rounds < limit", "worker.crashed"]),
    Row(14, "TimeoutError", "worker still busy after {limit} rounds", "template", "fstring",
        "polling", ["while rounds < limit: else"]),
    Row(18, "ValueError", "orphaned task {task.key}", "template", "fstring", "polling",
        ["for task in worker.tasks()", "task.orphaned"]),
    Row(21, "LookupError", "worker has no tasks", "literal", "literal", "polling",
        ["for task in worker.tasks(): else", "not worker.tasks()"]),
    Row(27, "ValueError", "feed sent an empty packet", "literal", "literal", "streaming",
        ["async for packet in feed", "packet is None"]),
    Row(30, "RuntimeError", "transaction conflicted", "literal", "literal", "streaming",
        ["async with guard, store.transaction() as txn", "txn.conflict"]),
    Row(37, "EnvironmentError", "checksum mismatch", "literal", "literal", "nested_withs",
        ["with mutex", 'with open(name) as data, open(name + ".sum") as digest',
         "data.read(4) != digest.read(4)"]),
    Row(43, "BrokenPipeError", "link is down", "literal", "literal", "handlers",
        ["try", "not link.up"]),
    Row(49, "BrokenPipeError", "redial failed", "literal", "literal", "handlers",
        ["except (BrokenPipeError, OSError) as failure", "link.reconnect", "except OSError"],
        cause="failure"),
    Row(50, None, None, "none", "none", "handlers",
        ["except (BrokenPipeError, OSError) as failure"], reraised=["BrokenPipeError", "OSError"]),
    Row(53, "RuntimeError", "link is stale", "literal", "literal", "handlers",
        ["try: else", "link.stale"]),
    Row(56, "ResourceWarning", "link handles left open", "literal", "literal", "handlers",
        ["finally", "link.open_handles"]),
    Row(63, "RuntimeError", "{len(errors.exceptions)} lookups failed", "template", "fstring",
        "groups", ["except* (KeyError, IndexError) as errors"], cause="errors"),
    Row(65, None, None, "none", "none", "groups", ["except* SystemExit"],
        reraised=["SystemExit"]),
]  # fmt: skip

MATCH_GUARDS = [
    # `\n` in the f-string's text is evaluated.
    Row(21, "PermissionError", "request rejected:\n{info}", "template", "fstring", "on_response",
        ["match response: case Rejected(detail=info) if loud"]),
    Row(23, "InterruptedError", None, "none", "none", "on_response",
        ['match response: case "abort" | "cancel"']),
    # `text` is bound by the capture pattern: unresolved.
    Row(25, "RuntimeError", None, "dynamic", "expression", "on_response",
        ['match response: case {"fault": text, **others}']),
    Row(27, "ValueError", "response starts with None", "literal", "literal", "on_response",
        ["match response: case [head, *_] if head is None"]),
    Row(29, "RuntimeError", "unknown response {response!r}", "template", "fstring",
        "on_response", ["match response: case _"]),
    # `match` and `case` as plain names.
    Row(36, "ValueError", "no number in {case!r}", "template", "fstring", "names_not_keywords",
        ["match is None"]),
    Row(41, "ValueError", "the answer, twice", "literal", "literal", "names_not_keywords",
        ['match match.group(0): case "42"', 'match case: case "42"']),
    # One line, the comment dropped, the pattern's outer parentheses dropped.
    Row(50, "LookupError", "pattern spread over lines", "literal", "literal",
        "pattern_over_lines",
        ['match problem: case KeyError() | IndexError() if "rather lengthy explanation" in '
         "repr(problem)"]),
]  # fmt: skip

SCOPES = [
    Row(8, "ImportError", "ujson must be installed before import", "literal", "literal",
        "<module>", ["except ImportError"]),
    Row(13, "RuntimeError", "Profile cannot load on macOS", "literal", "literal", "Profile",
        ['sys.platform == "darwin"']),
    Row(17, "ValueError", "depth must be at least one", "literal", "literal", "Profile.__init__",
        ["depth < 1"]),
    # The setter: the same name as the getter.
    Row(26, "AttributeError", "depth cannot be changed", "literal", "literal", "Profile.depth",
        []),
    # The `for letter in part` after the def belongs to `split`: not a guard.
    Row(33, "ValueError", "not a letter: {letter!r}", "template", "fstring",
        "Profile.tokens.<locals>.split.<locals>.verify", ["not letter.isalpha()"]),
    Row(44, "TypeError", "options are required", "literal", "literal", "Profile.Meta.create",
        ["options is None"]),
    Row(50, "RuntimeError", "temporary {flavor} runner is a stub", "template", "fstring",
        "builder.<locals>.Temporary.execute", []),
    Row(53, "TimeoutError", "download stalled", "literal", "literal", "builder.<locals>.download",
        []),
    # The path resets at the def: the version check is definition context, not a guard.
    Row(62, "NotImplementedError", "engine for 3.12+", "literal", "literal", "Engine.boot", []),
    Row(66, "NotImplementedError", "engine for older pythons", "literal", "literal",
        "Engine.boot", []),
    Row(69, "NotImplementedError", None, "none", "none", "stub", []),
]  # fmt: skip

ASSERTS = [
    asserted(5, "model", "a model must be loaded first", "literal", "literal", "checks"),
    # The parentheses are stripped; the message sits on line 8.
    asserted(6, "model", "wrapped test, the message follows the parenthesis", "literal",
             "literal", "checks"),
    asserted(9, "offset % block == 0", "offset {offset} is not a multiple of the block {block}",
             "template", "fstring", "checks"),
    # A tuple message: unresolved.
    asserted(13, "dst.shape == src.shape", None, "dynamic", "expression", "checks"),
    asserted(14, "dst.is_pinned()", None, "none", "none", "checks"),
    # A concat template keeping the conditional suffix as one placeholder.
    asserted(15, "filled <= size",
             "filled {filled} exceeds size {size}"
             "{f\" [{'; '.join(f'{k}:{v}' for k, v in extra.items())}]\" if extra else \"\"}",
             "template", "concat", "checks"),
    # The `if chunk.empty: continue` before it is not a guard.
    asserted(21, "chunk.parent is not None", "chunk {chunk.label} lost its parent", "template",
             "percent", "checks", ["for chunk in chunks"]),
    # Always true: the string is part of the test, not a message (not flagged).
    asserted(25, '(ready, "a non-empty tuple is always true")', None, "none", "none",
             "tuple_test"),
]  # fmt: skip

NEWER_GRAMMAR = [
    # PEP 701: the same quotes inside the replacement field.
    Row(7, "ValueError", 'empty names; config has {"; ".join(config)}', "template", "fstring",
        "quotes_reused", ["not names"]),
    # The '\t' inside the expression stays source text.
    Row(9, "ValueError", "size {size} for {config[\"kind\"]!r}: {'\\t'.join(names)}", "template",
        "fstring", "quotes_reused", ["size < 0"]),
    # A replacement field over lines with a comment: one line, comment dropped.
    Row(11, "ValueError", "{len(names)} names exceed {size}", "template", "fstring",
        "quotes_reused", ["len(names) > size"]),
    Row(15, "ValueError", 'outer {f"inner {names[-1]!r}"} end', "template", "fstring",
        "quotes_reused", ["names[0] is None"]),
    # PEP 695 generic function.
    Row(20, "IndexError", "last() of an empty list", "literal", "literal", "last",
        ["not values"]),
    # PEP 758: two types without parentheses.
    Row(31, "RuntimeError", "the socket could not connect", "literal", "literal",
        "bare_except_list", ["except ConnectionRefusedError, TimeoutError"]),
    # PEP 750: a t-string is styled as one.
    Row(36, "ValueError", "no template for {account!r}", "template", "tstring",
        "template_string", ["account is None"]),
]  # fmt: skip

BYTE_LEVEL = {
    "line_endings_mixed.py": [
        # CPython folds CRLF to LF inside literals: no \r in the message.
        Row(6, "ValueError", "top row\nbottom row", "literal", "literal", "windows_text",
            ["level == 1"]),
        # Backslash + CRLF inside a literal continues it.
        Row(9, "ValueError", "continued after a backslash", "literal", "literal",
            "windows_text", ["level == 2"]),
        # A lone CR ends line 11: the raise is on line 13 (not 12, as split("\n") says).
        Row(13, "RuntimeError", "after the odd endings: {user}", "template", "fstring",
            "windows_text", ["level == 3"]),
    ],
    "bom_utf8.py": [
        asserted(6, "encoder", "an encoder must be configured for embeddings", "literal",
                 "literal", "embed"),
        Row(10, "TypeError", "encoder must be callable", "literal", "literal", "embed",
            ["not callable(encoder)"]),
    ],
    # Decoded with the cookie's Latin-1.
    "cookie_latin1.py": [
        Row(8, "KeyError", "mot inconnu: «{word}»", "template", "percent", "translate",
            ["word not in glossary"]),
        Row(10, "ValueError", "traduction manquante pour {word} (été, 25°C)", "template",
            "fstring", "translate", ["glossary[word] is None"]),
    ],
    # A lossy decode, mined, with a note in the manifest.
    "latin1_no_cookie.py": [
        Row(9, "ValueError", "total must be positive", "literal", "literal", "ensure_positive",
            ["total <= 0"]),
    ],
    # CPython rejects the file, libcst parses it: mined.
    "nul_in_literal.py": [
        Row(7, "ValueError", "delimiter \x00 (NUL) is reserved", "literal", "literal",
            "split_fields", ['delimiter == "\x00"']),
        Row(8, "ValueError", "the escape \x00 still means NUL", "literal", "literal",
            "split_fields", []),
    ],
    "excerpt_edges.py": [
        Row(2, "EnvironmentError", "USER is not set", "literal", "literal", "<module>",
            ['not os.environ.get("USER")']),
        # The `if v: return v` before it exits early: not a guard.
        Row(9, "ValueError", "end of the file", "literal", "literal", "final", []),
    ],
}  # fmt: skip

#: Valid Python that libcst rejects: the ``ast`` fallback mines it (see
#: ``test_what_libcst_rejects_is_mined_by_the_ast_fallback`` for the reasons).
FALLBACK = {
    "fallback_tabs.py": [
        Row(6, "ValueError", "nothing to clamp", "literal", "literal", "clamp", ["v is None"],
            parser="ast"),
    ],
    # Raw: the backslash and the newline after it are both kept.
    "fallback_rf_continuation.py": [
        Row(6, "FileNotFoundError", "nothing under F:\\archive\\{stem} \\\nwas found",
            "template", "fstring", "resolve", ["not stem"], parser="ast"),
    ],
    # Only the function holding the site is given to libcst, and the stray
    # backslash lies outside it: libcst mines it (the whole module it rejects).
    "fallback_lone_backslash.py": [
        Row(9, "ValueError", "raised below the lone backslash", "literal", "literal", "after",
            ["flag"]),
    ],
}  # fmt: skip

#: The one regular file of ``symlinked/`` (its links are skipped).
SYMLINKED = [
    Row(6, "ValueError", "location must not be empty", "literal", "literal", "open_store",
        ["not location"]),
]  # fmt: skip

TABLES: dict[str, list[Row]] = {
    "msg_literals.py": MSG_LITERALS,
    "msg_fstrings.py": MSG_FSTRINGS,
    "msg_percent_format.py": MSG_PERCENT_FORMAT,
    "msg_variables.py": MSG_VARIABLES,
    "causes_reraises.py": CAUSES,
    "guards_branches.py": BRANCH_GUARDS,
    "guards_loops_try.py": LOOP_GUARDS,
    "guards_match.py": MATCH_GUARDS,
    "scopes_nesting.py": SCOPES,
    "asserts_forms.py": ASSERTS,
    "grammar_newer.py": NEWER_GRAMMAR,
    **BYTE_LEVEL,
    **FALLBACK,
    "symlinked/lib/actual.py": SYMLINKED,
}
#: Mined, checked by ``test_long_elif_chain_is_mined_whole`` instead of a table.
ELIF_CHAIN = "elif_chain.py"
#: Not mined at all: the file's status and reason (see the tests below).
NOT_MINED = {
    "nul_in_code.py": "failed",
    "legacy_py2.py": "failed",
    "deep_parens.py": "failed",
    "symlinked/lib/mirror.py": "skipped",
    "symlinked/lib/broken.py": "skipped",
}
#: Mined, with a note in the manifest.
NOTED = {
    "latin1_no_cookie.py": "decoded with replacement characters (invalid bytes)",
    "fallback_tabs.py": "mined with the ast fallback (libcst cannot parse: "
    "tokenizer error: no matching outer block for dedent @ 1:1)",
    "fallback_rf_continuation.py": "mined with the ast fallback (libcst cannot parse: "
    "tokenizer error: unterminated string literal @ 1:1)",
}

TABLE_ROWS = [(path, row) for path, rows in TABLES.items() for row in rows]


def record(site: dict[str, Any]) -> Row:
    """A mined site in the shape of a table row."""
    test = None
    if site["kind"] == "assert":
        own = site["guards"][-1]
        assert (own["kind"], own["negated"], own["line"]) == ("assert", True, site["line"])
        test = own["test"]
    return Row(
        line=site["line"],
        exception=site["exception"],
        message=site["message"],
        kind=site["message_kind"],
        style=site["message_style"],
        scope=site["scope"],
        guards=guards(site),
        cause=site["cause"],
        reraised=site["reraised"] if site["reraise"] else None,
        test=test,
        parser=site["parser"],
    )


# -- the run as a whole --------------------------------------------------------
def test_fixture_repository_stores_links_as_links(cases_repo: Path) -> None:
    tree = git.Repo(cases_repo).git.ls_tree("-r", "v1")
    modes = {line.split("\t")[1]: line.split()[0] for line in tree.splitlines()}
    for link in SYMLINKS:
        assert modes[link] == "120000", link
    assert modes["symlinked/lib/actual.py"] == "100644"


def test_byte_level_cases_are_stored_byte_for_byte(cases_repo: Path) -> None:
    repo = git.Repo(cases_repo)
    for name, data in BYTE_CASES.items():
        assert repo.commit("v1").tree[name].data_stream.read() == data, name
    assert b"\r\n" in BYTE_CASES["line_endings_mixed.py"]
    assert BYTE_CASES["bom_utf8.py"].startswith(b"\xef\xbb\xbf")
    assert not BYTE_CASES["excerpt_edges.py"].endswith(b"\n")


def test_every_input_is_accounted_for_in_one_run(mined: Mined) -> None:
    assert mined.exit_code == 1  # done, but some files were not mined
    problems = {p: (f["status"], f["reason"]) for p, f in mined.files.items()}
    assert {p: status for p, (status, _) in problems.items() if status != "mined"} == NOT_MINED
    assert {p: reason for p, (status, reason) in problems.items() if status == "mined"} == NOTED
    # The one-file inputs and the 3 .py entries of symlinked/; the directory
    # links cycle and lib_alias are not .py entries.
    assert mined.counts["files"] == len(flat_cases()) + 3 == 27
    assert mined.counts["files_failed"] == 3
    assert mined.counts["files_skipped"] == 2
    assert mined.counts["files_mined"] == len(TABLES) + 1 == 22
    assert mined.counts["sites_by_parser"] == {"ast": 2, "libcst": 530}
    assert (mined.counts["raise_sites"], mined.counts["assert_sites"]) == (523, 9)
    assert mined.counts["reraise_sites"] == 7
    mined_paths = {path for path, _ in mined.sites}
    assert mined_paths == set(TABLES) | {ELIF_CHAIN}


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


def test_lines_agree_with_the_standard_library(mined: Mined, cases_repo: Path) -> None:
    """Every site's line and end line are those of CPython's ``ast`` wherever it
    parses the file (the NUL bytes of nul_in_literal.py replaced first; before
    3.14 it cannot parse grammar_newer.py)."""
    unparsed = []
    for path in [*TABLES, ELIF_CHAIN]:
        data = (cases_repo / path).read_bytes().replace(b"\x00", b"?")
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", SyntaxWarning)  # the always-true assert
                tree = ast.parse(data)
        except SyntaxError:
            unparsed.append(path)
            continue
        spans = sorted(
            (n.lineno, n.end_lineno)
            for n in ast.walk(tree)
            if isinstance(n, ast.Raise | ast.Assert)
        )
        assert [(s["line"], s["end_line"]) for s in mined.of(path)] == spans, path
        if path != ELIF_CHAIN:
            assert [line for line, _ in spans] == [row.line for row in TABLES[path]], path
    assert unparsed == (["grammar_newer.py"] if sys.version_info < (3, 14) else [])


# -- every record, field by field ----------------------------------------------
@pytest.mark.parametrize(
    ("path", "row"), TABLE_ROWS, ids=[f"{path}:{row.line}" for path, row in TABLE_ROWS]
)
def test_record(mined: Mined, path: str, row: Row) -> None:
    site = mined.site(path, row.line)
    assert site["kind"] == ("assert" if row.test is not None else "raise")
    assert record(site) == row


@pytest.mark.parametrize("path", list(TABLES))
def test_table_covers_every_site_of_the_file(mined: Mined, path: str) -> None:
    assert [s["line"] for s in mined.of(path)] == [row.line for row in TABLES[path]]


def test_message_parts_keep_braces_apart_from_placeholders(mined: Mined) -> None:
    braces = mined.site("msg_fstrings.py", 18)["message_parts"]
    assert braces == [
        {"text": "write {"},
        {"expr": "field"},
        {"text": "} in the template, not {} near "},
        {"expr": "value"},
    ]
    mixed = mined.site("msg_fstrings.py", 23)["message_parts"]
    assert {"text": " has no lines; a header looks like {key: type} ["} in mixed
    debug = mined.site("msg_fstrings.py", 9)["message_parts"]
    assert debug[:2] == [{"text": "limit="}, {"expr": "limit", "conversion": "r"}]
    assert debug[3] == {"expr": "label", "conversion": "s", "spec": "^{limit * 2}"}
    ascii_conversion = mined.site("msg_fstrings.py", 13)["message_parts"]
    assert ascii_conversion[1] == {"expr": "label", "conversion": "a"}
    unresolved = mined.site("msg_percent_format.py", 32)
    assert unresolved["message_source"] == '" | ".join(known)'
    assert unresolved["message_parts"] == []
    constant = mined.site("msg_percent_format.py", 26)
    assert constant["message_source"] == "PATTERN.format(level)"
    assert mined.site("msg_variables.py", 9)["message_source"] == "text"
    assert mined.site("causes_reraises.py", 16)["message_source"] == "name"
    assert mined.site("guards_match.py", 25)["message_source"] == "text"


def test_guard_lines_and_bound_names(mined: Mined) -> None:
    # except guards hold the types in `test` and the bound name in `name`.
    site = mined.site("guards_loops_try.py", 49)
    assert site["guards"][0] == {
        "kind": "except",
        "test": "(BrokenPipeError, OSError)",
        "negated": False,
        "line": 44,
        "name": "failure",
    }
    assert [g["line"] for g in site["guards"]] == [44, 45, 48]
    assert [g["line"] for g in mined.site("guards_loops_try.py", 14)["guards"]] == [13]
    assert [g["line"] for g in mined.site("guards_loops_try.py", 21)["guards"]] == [19, 20]
    assert [g["line"] for g in mined.site("guards_loops_try.py", 53)["guards"]] == [51, 52]
    assert [g["line"] for g in mined.site("guards_loops_try.py", 56)["guards"]] == [54, 55]
    case = mined.site("guards_match.py", 50)["guards"][0]
    assert (case["kind"], case["line"], case["subject"]) == ("case", 46, "problem")
    handler = mined.site("grammar_newer.py", 31)["guards"][0]
    assert (handler["kind"], handler["test"]) == ("except", "ConnectionRefusedError, TimeoutError")
    # A multi-line condition's guard sits on the `if` line.
    assert [g["line"] for g in mined.site("guards_branches.py", 46)["guards"]] == [41]


def test_statement_spans(mined: Mined) -> None:
    assert mined.site("asserts_forms.py", 6)["end_line"] == 8
    assert mined.site("asserts_forms.py", 13)["message_source"] == "(dst.shape, src.shape)"
    assert mined.site("msg_literals.py", 12)["end_line"] == 16
    assert mined.site("grammar_newer.py", 11)["end_line"] == 13
    assert mined.site("guards_branches.py", 56)["end_line"] == 56


# -- excerpts and bytes --------------------------------------------------------
def test_excerpts_at_file_edges(mined: Mined, cases_repo: Path) -> None:
    text = (cases_repo / "excerpt_edges.py").read_text("utf-8")
    assert text.endswith('raise ValueError("end of the file")')  # no line break at the end
    for line in (2, 9):
        assert mined.site("excerpt_edges.py", line)["excerpt"] == {
            "start_line": 1,
            "end_line": 9,
            "text": text,
        }


def test_excerpt_window_trims_blank_edge_lines(mined: Mined, cases_repo: Path) -> None:
    """18 lines either side, clipped to the file, blank lines at either edge trimmed."""
    lines = (cases_repo / "msg_variables.py").read_text("utf-8").split("\n")
    # 35..71 around line 53; lines 35-36 and 70-71 are blank.
    middle = mined.site("msg_variables.py", 53)["excerpt"]
    assert (middle["start_line"], middle["end_line"]) == (37, 69)
    assert middle["text"] == "\n".join(lines[36:69])
    assert middle["text"].startswith("def set_in_both_branches(exc, plugin):")
    # 83..119 around line 101, clipped at the file's last line, 105.
    last = mined.site("msg_variables.py", 101)["excerpt"]
    assert (last["start_line"], last["end_line"]) == (83, 105)
    assert last["text"].endswith("    return repr(value)")


def test_mixed_line_endings_leave_no_carriage_return(mined: Mined) -> None:
    for site in mined.of("line_endings_mixed.py"):
        assert "\r" not in json.dumps(site, ensure_ascii=False).replace("\\r", "")
        assert "\r" not in site["excerpt"]["text"]
    excerpt = mined.site("line_endings_mixed.py", 13)["excerpt"]
    assert (excerpt["start_line"], excerpt["end_line"]) == (1, 13)
    assert excerpt["text"].split("\n")[10:12] == ["    y = 2", "    if level == 3:"]


def test_utf8_bom_is_not_part_of_the_text(mined: Mined) -> None:
    check = mined.site("bom_utf8.py", 6)
    assert check["excerpt"]["text"].startswith("# Saved by an editor")
    assert check["end_line"] == 8
    assert "bom_utf8.py" not in mined.files  # mined without a note


def test_latin1_cookie_decodes_the_excerpt(mined: Mined) -> None:
    excerpt = mined.site("cookie_latin1.py", 8)["excerpt"]["text"]
    assert "\ufffd" not in excerpt
    assert "mot inconnu: «%s»" in excerpt
    assert "(été, 25°C)" in excerpt


def test_latin1_byte_without_cookie_is_replaced(mined: Mined) -> None:
    excerpt = mined.site("latin1_no_cookie.py", 9)["excerpt"]["text"]
    assert excerpt.split("\n")[3] == "# Author: Fran\ufffdoise Ga\ufffdtan"


def test_nul_in_string_literal_is_escaped_in_json(mined: Mined) -> None:
    rows = [
        line
        for line in (mined.out / "sites.jsonl").read_text("utf-8").splitlines()
        if json.loads(line)["path"] == "nul_in_literal.py"
    ]
    assert len(rows) == 2
    assert "delimiter \\u0000 (NUL) is reserved" in rows[0]
    assert 'delimiter == \\"\\u0000\\"' in rows[0]
    assert "the escape \\u0000 still means NUL" in rows[1]


def test_nul_in_code_fails_with_both_reasons(mined: Mined) -> None:
    entry = mined.files["nul_in_code.py"]
    assert entry["status"] == "failed"
    assert entry["reason"] == (
        "libcst cannot parse: tokenizer error: '\\0' is not a valid character in this "
        "position @ 1:1; Python's parser: source code string cannot contain null bytes"
    )
    assert mined.of("nul_in_code.py") == []


def test_python2_file_fails_with_a_hint(mined: Mined) -> None:
    entry = mined.files["legacy_py2.py"]
    assert entry["status"] == "failed"
    # libcst's inner position (7:29, the end of the print line) and its header (8:28).
    assert entry["reason"].startswith("libcst cannot parse: parser error: error at 7:29")
    assert " @ 8:28; " in entry["reason"]
    assert entry["reason"].endswith(
        "Python's parser: Missing parentheses in call to 'print'. Did you mean print(...)? "
        "(line 7) (Python 2 syntax?)"
    )
    # Nothing made up from `raise SystemExit, 3` or `raise ValueError, "..."`.
    assert mined.of("legacy_py2.py") == []


# -- valid Python that libcst rejects ------------------------------------------
LIBCST_REASONS = {
    "fallback_tabs.py": "tokenizer error: no matching outer block for dedent @ 1:1",
    "fallback_rf_continuation.py": "tokenizer error: unterminated string literal @ 1:1",
    "fallback_lone_backslash.py": "parser error: error at 8:7: expected INDENT @ 9:8",
}


@pytest.mark.parametrize("path", list(FALLBACK))
def test_what_libcst_rejects_is_mined_by_the_ast_fallback(
    mined: Mined, mined_whole: Mined, path: str
) -> None:
    (row,) = FALLBACK[path]
    assert [record(s) for s in mined.of(path)] == [row]
    # The whole module given to libcst: every one of them falls back.
    assert [record(s) for s in mined_whole.of(path)] == [row._replace(parser="ast")]
    note = mined_whole.files[path]
    assert (note["status"], note["reason"]) == (
        "mined",
        f"mined with the ast fallback (libcst cannot parse: {LIBCST_REASONS[path]})",
    )


def test_full_parse_run_differs_only_in_the_lone_backslash_file(
    mined: Mined, mined_whole: Mined
) -> None:
    assert mined_whole.exit_code == 1
    assert mined_whole.counts["sites_by_parser"] == {"ast": 3, "libcst": 529}
    changed = {key for key in mined.sites if mined.sites[key] != mined_whole.sites[key]}
    assert changed == {("fallback_lone_backslash.py", 9)}
    assert set(mined.sites) == set(mined_whole.sites)


# -- parser limits: deep nesting, deep recursion -------------------------------
def test_deep_parentheses_are_never_given_to_libcst(mined: Mined) -> None:
    entry = mined.files["deep_parens.py"]
    assert entry["status"] == "failed"
    assert entry["reason"] == (
        "nesting too deep for libcst (CPython: too many nested parentheses (line 11))"
    )
    # The ordinary raise before the deep one is lost with the file.
    assert mined.of("deep_parens.py") == []


BRANCHES = 400


def test_long_elif_chain_is_mined_whole(mined: Mined, cases_repo: Path) -> None:
    assert (cases_repo / ELIF_CHAIN).read_text("utf-8") == elif_chain(BRANCHES)
    sites = mined.of(ELIF_CHAIN)
    assert len(sites) == BRANCHES + 1
    tests = [f'cmd == "cmd{i}"' for i in range(BRANCHES)]
    for i, site in enumerate(sites[:BRANCHES]):
        assert record(site) == Row(
            7 + 2 * i,
            "NotImplementedError",
            f"cmd{i} has no handler",
            "literal",
            "literal",
            "handle",
            [f"not ({t})" for t in tests[:i]] + [tests[i]],
        )
    last = sites[BRANCHES]
    assert record(last) == Row(
        807, "KeyError", "no command {cmd!r}", "template", "fstring", "handle",
        [f"not ({t})" for t in tests],
    )  # fmt: skip
    assert [g["line"] for g in last["guards"]] == [6 + 2 * i for i in range(BRANCHES)]


# -- symbolic links and submodules ---------------------------------------------
def test_symlinks_are_not_followed(mined: Mined) -> None:
    reason = "symbolic link (not followed; its target is mined where it lives)"
    for link in ("symlinked/lib/mirror.py", "symlinked/lib/broken.py"):
        assert mined.files[link]["status"] == "skipped"
        assert mined.files[link]["reason"] == reason
        assert mined.of(link) == []
    # Counted once: the mirror does not double the real module's site.
    in_case = [key for key in mined.sites if key[0].startswith("symlinked/")]
    assert in_case == [("symlinked/lib/actual.py", 6)]
    # Directory links (the cycle and the sibling) are not .py entries: never walked.
    assert not any(path.startswith("symlinked/lib_alias/") for path in mined.files)
    assert not any("/cycle/" in path for path in mined.files)


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


# -- a huge generated file -----------------------------------------------------
def test_huge_generated_table_is_mined_within_limits(tmp_path: Path) -> None:
    """A 200,000-entry dict literal (about 5 MB, 200,008 lines), then one raise.
    A few seconds: only the function holding the raise is given to libcst (the
    whole module would take about 20 s)."""
    root = tmp_path / "repo"
    root.mkdir()
    repo = init_repo(root)
    (root / "huge_table.py").write_text(huge_table(200_000), "utf-8")
    assert (root / "huge_table.py").stat().st_size > 4_000_000
    commit_all(repo, "huge table", tag="v1")
    result = mine_repo(root, tmp_path / "out")
    assert result.exit_code == 0
    assert list(result.sites) == [("huge_table.py", 200_007)]
    assert record(result.site("huge_table.py", 200_007)) == Row(
        200_007, "KeyError", "no code named {name!r}", "template", "fstring", "code_for",
        ["name not in CODES"],
    )  # fmt: skip
