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
from miner.extract.runner import collect, extract_file, plan_units
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
            known = (path, a.line, key) in KNOWN_DIFFERENCES
            if key != "parser" and left[key] != right[key] and not known:
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


EXITS = '''
import abc
import sys

if sys.version_info < (3, 9): raise ImportError("old")
assert sys.platform, "no platform"; flag = sys.flags.debug
if flag:
    raise RuntimeError(f"debug {flag}")


class Shape(abc.ABC):
    """Shapes."""
    if flag:
        raise TypeError("class body")

    @abc.abstractmethod
    def area(self):
        """Area."""
        raise NotImplementedError

    @property
    @abc.abstractmethod
    def name(self): raise NotImplementedError(self)

    def check(self, items, lock, reply):
        msg = "bad"
        if items is None:
            return
        elif not items: return None
        x = 1; assert x, msg
        for item in items:
            if item.skip: continue
            if item.stop:
                break
            try:
                value = item.value()
            except (KeyError, IndexError):
                continue
            except OSError as err:
                raise
            while item.busy():
                item.wait()
            match reply:
                case {"error": e} if e:
                    raise RuntimeError(e)
                case _:
                    pass
            with lock:
                if value:
                    raise ValueError(msg)
            if value > 3:
                pass
            else:
                raise KeyError(value)
            raise LookupError(f"{item!r}")
        return x
        raise AssertionError("dead")


def plain(a):
    if a: return 1
    def inner(b):
        if not b:
            raise ValueError(b)
    raise NotImplementedError


def units(a, b):
    """Every site here is mined from one statement of the body (a unit)."""
    if a is None:
        return
    assert b, "b unset"
    for x in a:
        if x: continue
        raise ValueError("x")
'''


def test_all_three_paths_agree_on_exits_body_only_and_abstract() -> None:
    data = EXITS.encode()
    pair = both("exits.py", data)
    assert pair is not None
    cst_sites, ast_sites = pair
    assert differences("exits.py", cst_sites, ast_sites) == []
    units = extract_file("exits.py", "0" * 40, data).sites
    assert sorted(units, key=lambda s: s.line) == cst_sites
    kinds = {g.kind for s in cst_sites for g in s.exits}
    assert kinds == {"exit", "exit-except", "exit-case", "exit-while", "asserted", "unreachable"}
    by_line = {s.line: s for s in cst_sites}
    assert [g.describe() for g in by_line[8].exits] == [
        "not (sys.version_info < (3, 9))",
        "sys.platform",
    ]
    assert [g.describe() for g in by_line[14].exits] == []  # a class body is its own scope
    assert [g.describe() for g in by_line[55].exits] == [
        "not (items is None)",
        "not (not items)",
        "x",
        "not (item.skip)",
        "not (item.stop)",
        "try body raised no (KeyError, IndexError)",
        "try body raised no OSError",
        "not (item.busy())",
        'not (match reply: case {"error": e} if e)',
        "value > 3",
    ]
    assert [g.describe() for g in by_line[57].exits][-1] == "unreachable (line 56 always leaves)"
    # The units of units(): the exits before them come from the ast tree.
    plan = plan_units(ast.parse(EXITS), EXITS.split("\n"))
    assert [(u.start, u.end) for u in plan.units][-2:] == [(72, 72), (73, 75)]
    assert [g.describe() for g in by_line[75].exits] == ["not (a is None)", "b", "not (x)"]
    assert by_line[72].exits == by_line[75].exits[:1]
    facts = [(s.line, s.body_only, s.abstract) for s in cst_sites if s.body_only or s.abstract]
    assert facts == [
        (19, True, True),
        (23, True, True),
        (30, False, True),
        (40, False, True),
        (45, False, True),
        (50, False, True),
        (54, False, True),
        (55, False, True),
        (57, False, True),
    ]


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


STORING = """\
def f(items, self):
    a, (b, *c) = items
    self.x.y: int = 1
    d[0].e += 1
    for k, v in items:
        del items[k], self.gone
    with open(a) as fh, ctx() as (g, h):
        print(f"{(w := 3)}")
    try:
        pass
    except OSError as err:
        pass
    import os.path, numpy as np
    from m import q, r as s
    from n import *
    global G
    match items:
        case [Point(x=px), *rest] | {"k": mv, **others}:
            pass
        case Other() as caught:
            pass
    class K:
        z = 1
    lambda: (inner := 1)
"""


def test_the_stores_of_a_statement_agree_between_libcst_and_ast() -> None:
    """:func:`cst_visitor.stores` walks a libcst tree by its fields: every
    binding form gives the names and attribute paths that the ``ast`` side
    finds, for the function and each statement of its body."""
    from miner.extract import ast_fallback, cst_visitor

    expected = {
        "a", "b", "c", "self.x.y", "d", "k", "v", "items", "self.gone", "fh", "g", "h",
        "w", "err", "os", "np", "q", "s", "*", "G", "px", "rest", "mv", "others",
        "caught", "K", "z", "inner",
    }  # fmt: skip
    function = cst.parse_module(STORING).body[0]
    tree = ast.parse(STORING).body[0]
    assert isinstance(function, cst.FunctionDef) and isinstance(tree, ast.FunctionDef)
    assert cst_visitor.stores(function.body) == expected
    assert ast_fallback.stores(tree) - {"f"} == expected
    body = function.body.body
    assert len(body) == len(tree.body)
    for statement, node in zip(body, tree.body, strict=True):
        assert cst_visitor.stores(statement) == ast_fallback.stores(node), ast.unparse(node)
