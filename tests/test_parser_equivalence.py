"""The ``ast`` fallback gives the same records as the libcst visitor.

Both extractors run on the same decoded text and their sites are compared
field by field (everything but ``parser``). Every difference is listed; the
ones that cannot be removed are asserted as known (and listed in the README).
"""

from __future__ import annotations

import ast
import os
from pathlib import Path

import git
import libcst as cst
import pytest
from hard_input_fixtures import flat_cases

from miner.extract.ast_fallback import collect_ast
from miner.extract.limits import call_with_deep_stack
from miner.extract.runner import collect, extract_file
from miner.extract.text import decode_source
from miner.mining import source as git_source
from miner.model import Site

#: Differences that remain between the two extractors, as (path, line, field).
#: None today: the self-documenting ``{x=}`` field, which ``ast`` rewrites, is
#: recovered from the source, and so is every keyword line ``ast`` drops.
KNOWN_DIFFERENCES: set[tuple[str, int, str]] = set()


def differences(path: str, cst_sites: list[Site], ast_sites: list[Site]) -> list[str]:
    """Human-readable differences, ``path:line field: cst != ast``."""
    if [s.line for s in cst_sites] != [s.line for s in ast_sites]:
        return [
            f"{path}: lines differ: {[s.line for s in cst_sites]} != {[s.line for s in ast_sites]}"
        ]
    found = []
    for a, b in zip(cst_sites, ast_sites, strict=True):
        left, right = a.to_json(), b.to_json()
        for key in left:
            if key != "parser" and left[key] != right[key]:
                if (path, a.line, key) not in KNOWN_DIFFERENCES:
                    found.append(f"{path}:{a.line} {key}: {left[key]!r} != {right[key]!r}")
    return found


def both(path: str, data: bytes) -> tuple[list[Site], list[Site]] | None:
    """Sites by libcst (whole module) and by the fallback, or None when one of
    the parsers rejects the file."""
    text = decode_source(data)
    try:
        tree = ast.parse(text.text)
        module = cst.parse_module(text.text)
    except (SyntaxError, ValueError, cst.ParserSyntaxError):
        return None

    def run() -> tuple[list[Site], list[Site]]:
        return (
            sorted(collect(module, path=path, lines=text.lines), key=lambda s: s.line),
            collect_ast(tree, path=path, lines=text.lines),
        )

    return call_with_deep_stack(run)  # the long elif chain needs the deep stack


def test_both_extractors_agree_on_every_hard_input_both_parse() -> None:
    compared = {}
    problems: list[str] = []
    for name, data in flat_cases().items():
        pair = both(name, data)
        if pair is None:
            continue
        compared[name] = len(pair[0])
        problems += differences(name, *pair)
        assert all(s.parser == "ast" for s in pair[1])
    assert problems == []
    # Every input both parsers accept: CPython rejects the NUL bytes, Python 2,
    # the grammar newer than 3.11 and the deep parentheses; libcst rejects the
    # three fallback_* files.
    assert compared == {
        "asserts_forms.py": 8,
        "bom_utf8.py": 2,
        "causes_reraises.py": 10,
        "cookie_latin1.py": 2,
        "elif_chain.py": 401,
        "excerpt_edges.py": 2,
        "guards_branches.py": 13,
        "guards_loops_try.py": 14,
        "guards_match.py": 8,
        "latin1_no_cookie.py": 1,
        "line_endings_mixed.py": 3,
        "msg_fstrings.py": 8,
        "msg_literals.py": 10,
        "msg_percent_format.py": 10,
        "msg_variables.py": 16,
        "scopes_nesting.py": 11,
    }


FORMS = '''
import errors as errs


class Config:
    """Settings.

    More text."""

    def load(self, path, *args, **kw):
        """Load a file."""
        msg = "cannot load %s" % path
        if not path:
            raise ValueError(msg)
        elif path.endswith(".bin"):
            raise errs.FormatError(f"binary {path!r:>{self.width}} ({len(args)=})")
        with open(path) as fh, lock:
            for line in fh:
                if line.startswith("#"):
                    continue
                try:
                    key, value = line.split("=")
                except ValueError as exc:
                    raise errs.ParseError("bad {0!r} in {name}".format(line, name=path)) from exc
                else:
                    assert key, "empty key: " + repr(line) + "!"
                finally:
                    pass
            else:
                raise EOFError(*args)
        while kw:
            raise KeyError(detail=f"{ {k: v for k, v in kw.items()} }")
        else:
            raise RuntimeError(b"bytes\\x00 message")
        match path:
            case "a" | "b" if kw:
                raise TypeError("a or b")
            case {"k": v, **rest}:
                raise TypeError(v)
            case _:
                raise

    async def fetch(self):
        async with self.session() as s:
            async for chunk in s:
                raise ConnectionError(f"{chunk=!s} {chunk = }" "{literal}" r"\\d")
        raise self.error_class("x")


def outer():
    try:
        pass
    except* (ValueError, TypeError) as group:
        raise
    def inner(err):
        raise err.with_traceback(None)
    return inner
'''


def test_both_extractors_agree_on_every_statement_form() -> None:
    pair = both("forms.py", FORMS.encode())
    assert pair is not None
    cst_sites, ast_sites = pair
    assert len(cst_sites) == 14
    assert differences("forms.py", cst_sites, ast_sites) == []
    # A few fields that needed the source, not the tree:
    by_line = {s.line: s for s in ast_sites}
    assert by_line[16].message == "binary {path!r:>{self.width}} ({len(args)=})"
    assert by_line[46].message == "{chunk=!s} {chunk=}{{literal}}\\d"
    assert by_line[32].message == "{ {k: v for k, v in kw.items()} }"
    assert by_line[54].reraised == ("ValueError", "TypeError")
    assert by_line[56].exception == "err.with_traceback"  # no handler in inner(): not a re-raise
    assert [(g.describe(), g.line) for g in by_line[34].guards] == [("while kw: else", 33)]
    assert [(g.describe(), g.line) for g in by_line[30].guards][-1] == ("for line in fh: else", 29)
    assert [(g.describe(), g.line) for g in by_line[26].guards][-2:] == [
        ("try: else", 25),
        ("not (key)", 26),
    ]
    assert by_line[41].guards[-1].line == 40
    assert by_line[24].cause == "exc"


def test_a_file_libcst_rejects_is_marked_as_the_fallback_s() -> None:
    source = "def check(x):\n\t if x is None:\n\t\t raise ValueError('x is None')\n"
    result = extract_file("tabs.py", "0" * 40, source.encode(), partial=False)
    assert result.status == "mined"
    assert result.reason == (
        "mined with the ast fallback (libcst cannot parse: tokenizer error: "
        "no matching outer block for dedent @ 1:1)"
    )
    (site,) = result.sites
    assert (site.parser, site.line, site.message, site.scope) == ("ast", 3, "x is None", "check")
    assert [g.describe() for g in site.guards] == ["x is None"]


CORPUS = os.environ.get("RAISE_MINER_CORPUS")


@pytest.mark.integration
@pytest.mark.skipif(
    not CORPUS or not Path(CORPUS).is_dir(),
    reason="set RAISE_MINER_CORPUS to the SGLang release repository (make corpus)",
)
def test_both_extractors_agree_on_a_sample_of_a_release() -> None:
    """A deterministic tenth of v0.5.19 (blob ids divisible by 10): the records
    libcst gives through the normal path (units) against the fallback's."""
    repo = git.Repo(CORPUS)
    commit = repo.commit("v0.5.19")
    problems: list[str] = []
    sites = files = 0
    for entry in git_source.python_blobs(repo, commit):
        if entry.mode != git_source.MODE_FILE or int(entry.blob, 16) % 10:
            continue
        data = git_source.read_blob(repo, entry.blob)
        result = extract_file(entry.path, entry.blob, data)
        if not result.sites:
            continue
        text = decode_source(data)
        fallback = collect_ast(ast.parse(text.text), path=entry.path, lines=text.lines)
        ordered = sorted(result.sites, key=lambda s: s.line)
        problems += differences(entry.path, ordered, fallback)
        sites += len(ordered)
        files += 1
    assert problems == []
    assert files > 100
    assert sites > 1000
