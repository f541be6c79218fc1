"""Extraction on small sources: message forms, guard kinds, scopes, excerpts,
re-raises and causes. Each case is mined both with the unit planner (the
default) and with a whole-module libcst parse, and the records must agree."""

from __future__ import annotations

import textwrap

import pytest

from miner.extract.runner import extract_file
from miner.model import FileResult, Guard, MessagePart, Site


def mine(source: str, path: str = "pkg/mod.py") -> list[Site]:
    data = textwrap.dedent(source).lstrip("\n").encode()
    partial = extract_file(path, "0" * 40, data)
    full = extract_file(path, "0" * 40, data, partial=False)
    assert partial.status == "mined", partial.reason
    assert partial.sites == full.sites
    return list(partial.sites)


def only(source: str) -> Site:
    sites = mine(source)
    assert len(sites) == 1, sites
    return sites[0]


def guards(site: Site) -> list[tuple[str, str, bool]]:
    return [(g.kind, g.test, g.negated) for g in site.guards]


# -- messages ---------------------------------------------------------------

MESSAGE_CASES = [
    # (raise expression, message, kind, style)
    ('ValueError("plain text")', "plain text", "literal", "literal"),
    ('ValueError("a " "b" \'c\')', "a bc", "literal", "literal"),
    ('ValueError(r"C:\\new\\d")', "C:\\new\\d", "literal", "literal"),
    ('ValueError("tab\\there\\N{DEGREE SIGN}")', "tab\there°", "literal", "literal"),
    ('ValueError(b"raw bytes")', "raw bytes", "literal", "bytes"),
    ('ValueError("")', "", "literal", "literal"),
    ('ValueError("literal {braces}")', "literal {{braces}}", "literal", "literal"),
    ('ValueError(f"got {x!r} and {y:.2f}")', "got {x!r} and {y:.2f}", "template", "fstring"),
    ('ValueError(f"{x=}")', "{x=}", "template", "fstring"),
    ('ValueError(f"{{lit}} {x}")', "{{lit}} {x}", "template", "fstring"),
    ('ValueError(f"a {x} " "b {c}")', "a {x} b {{c}}", "template", "fstring"),
    ('ValueError("got %r of %d" % (a, b))', "got {a!r} of {b:d}", "template", "percent"),
    ('ValueError("got %s" % a)', "got {a}", "template", "percent"),
    ('ValueError("100%% of %(n)s" % {"n": k})', "100% of {k}", "template", "percent"),
    ('ValueError("{} and {name!r}".format(a, name=b))', "{a} and {b!r}", "template", "format"),
    ('ValueError("x " + str(n) + " y")', "x {str(n)} y", "template", "concat"),
    ('ValueError(detail="from keyword")', "from keyword", "literal", "literal"),
    ('ValueError(t"t {x}")', "t {x}", "template", "tstring"),
]


@pytest.mark.parametrize(("expr", "message", "kind", "style"), MESSAGE_CASES)
def test_message_forms(expr: str, message: str, kind: str, style: str) -> None:
    site = only(f"def f(x, y, a, b, k, n):\n    raise {expr}\n")
    assert (site.message, site.message_kind, site.message_style) == (message, kind, style)


def test_message_parts_keep_literal_braces_apart_from_placeholders() -> None:
    site = only('def f(x):\n    raise KeyError(f"{{x}} is {x!r:>5} " "{y}")\n')
    assert site.message_parts == (
        MessagePart(text="{x} is "),
        MessagePart(expr="x", conversion="r", spec=">5"),
        MessagePart(text=" {y}"),
    )


def test_self_documenting_field_parts() -> None:
    site = only('def f(n):\n    raise ValueError(f"bad {n=}")\n')
    assert site.message_parts == (MessagePart(text="bad n="), MessagePart(expr="n", conversion="r"))


def test_dynamic_and_none_messages() -> None:
    sites = mine(
        """
        def f(names, err):
            if names:
                raise ValueError(", ".join(names))
            if err:
                raise ValueError
            raise ValueError()
        """
    )
    assert [(s.message, s.message_kind, s.message_source) for s in sites] == [
        (None, "dynamic", '", ".join(names)'),
        (None, "none", None),
        (None, "none", None),
    ]


def test_message_variable_assigned_once_is_resolved() -> None:
    sites = mine(
        """
        def f(x):
            msg = f"value {x} too large"
            if x > 3:
                raise ValueError(msg)

        def g(x):
            msg = "a"
            if x:
                msg = "b"
            raise ValueError(msg)

        def h(msg):
            raise ValueError(msg)
        """
    )
    assert [(s.message, s.message_kind, s.message_source) for s in sites] == [
        ("value {x} too large", "template", "msg"),
        (None, "dynamic", "msg"),
        (None, "dynamic", "msg"),
    ]


def test_multiline_call_message_and_end_line() -> None:
    site = only(
        """
        class MlxComponent:
            def __init__(self, cache, params):
                if params.enable_extra:
                    raise NotImplementedError(
                        "MLX radix cache does not support "
                        "enable_extra yet."
                    )
        """
    )
    assert site.message == "MLX radix cache does not support enable_extra yet."
    assert (site.line, site.end_line) == (4, 7)
    assert site.scope == "MlxComponent.__init__"
    assert guards(site) == [("if", "params.enable_extra", False)]


# -- exceptions, causes, re-raises --------------------------------------------


def test_exception_as_written_and_cause() -> None:
    sites = mine(
        """
        import errors

        def f(x):
            try:
                x()
            except (KeyError, IndexError) as exc:
                raise errors.ConfigError("bad config") from exc
            except OSError:
                raise RuntimeError("io") from None
            raise type(x)("copy")
        """
    )
    assert [(s.exception, s.cause, s.line) for s in sites] == [
        ("errors.ConfigError", "exc", 7),
        ("RuntimeError", "None", 9),
        ("type(x)", None, 10),
    ]
    assert guards(sites[0]) == [("except", "(KeyError, IndexError)", False)]
    assert sites[0].guards[0].name == "exc"


def test_reraises() -> None:
    sites = mine(
        """
        def f():
            try:
                pass
            except ValueError as err:
                if err.args:
                    raise err
                raise
            except:
                raise
            raise

        def g(err):
            raise err
        """
    )
    assert [(s.line, s.exception, s.reraise, s.reraised, s.message_kind) for s in sites] == [
        (6, "err", True, ("ValueError",), "none"),
        (7, None, True, ("ValueError",), "none"),
        (9, None, True, ("BaseException",), "none"),
        (10, None, False, (), "none"),
        (13, "err", False, (), "dynamic"),
    ]


def test_reraise_does_not_cross_a_def() -> None:
    sites = mine(
        """
        def outer():
            try:
                pass
            except LookupError:
                def later():
                    raise
                return later
        """
    )
    assert [(s.scope, s.reraise, s.guards) for s in sites] == [("outer.<locals>.later", False, ())]


# -- guards -----------------------------------------------------------------


def test_if_elif_else_chain() -> None:
    sites = mine(
        """
        def f(mode, strict):
            if mode == "fast":
                pass
            elif mode == "safe":
                raise ValueError("safe")
            elif not strict:
                raise ValueError("lenient")
            else:
                raise ValueError("other")
        """
    )
    assert [guards(s) for s in sites] == [
        [("if", 'mode == "fast"', True), ("if", 'mode == "safe"', False)],
        [
            ("if", 'mode == "fast"', True),
            ("if", 'mode == "safe"', True),
            ("if", "not strict", False),
        ],
        [
            ("if", 'mode == "fast"', True),
            ("if", 'mode == "safe"', True),
            ("if", "not strict", True),
        ],
    ]
    assert [[g.line for g in s.guards] for s in sites] == [[2, 4], [2, 4, 6], [2, 4, 6]]


def test_loops_with_try_and_match_guards() -> None:
    sites = mine(
        """
        async def f(items, lock, reply):
            for item in items:
                while item.busy:
                    if item.bad:
                        raise ValueError("bad")
                else:
                    raise LookupError("empty")
            async with lock, open("p") as fh:
                try:
                    raise OSError("read")
                except* TimeoutError:
                    raise RuntimeError("group")
                else:
                    raise RuntimeError("else")
                finally:
                    raise RuntimeError("finally")
            match reply:
                case {"error": e} if e:
                    raise RuntimeError("case")
            async for chunk in items:
                raise ValueError("async loop")
        """
    )
    got = [(s.message, [(g.kind, g.test) for g in s.guards]) for s in sites]
    assert got == [
        ("bad", [("for", "item in items"), ("while", "item.busy"), ("if", "item.bad")]),
        ("empty", [("for", "item in items"), ("while-else", "item.busy")]),
        ("read", [("async with", 'lock, open("p") as fh'), ("try", "")]),
        ("group", [("async with", 'lock, open("p") as fh'), ("except*", "TimeoutError")]),
        ("else", [("async with", 'lock, open("p") as fh'), ("try-else", "")]),
        ("finally", [("async with", 'lock, open("p") as fh'), ("finally", "")]),
        ("case", [("case", '{"error": e} if e')]),
        ("async loop", [("async for", "chunk in items")]),
    ]
    assert sites[6].guards[0].subject == "reply"


def test_multiline_condition_is_one_line_without_comments() -> None:
    site = only(
        """
        def f(cfg, backend):
            if (
                cfg.enable_feature  # the switch
                and backend not in ("x", "y")  # supported
            ):
                raise ValueError("feature needs backend x or y")
        """
    )
    assert guards(site) == [("if", 'cfg.enable_feature and backend not in ("x", "y")', False)]


def test_not_of_a_compound_test_keeps_parentheses_in_describe() -> None:
    site = only("def f(a, b):\n    if a or b:\n        pass\n    else:\n        raise E('x')\n")
    assert site.guards[0].describe() == "not (a or b)"


def test_early_exit_is_not_a_guard() -> None:
    site = only("def f(x):\n    if x:\n        return x\n    raise ValueError('none')\n")
    assert site.guards == ()


def test_assert_guard_and_message() -> None:
    sites = mine(
        """
        def f(start, page, out):
            assert start % page == 0, f"start {start} not aligned to {page}"
            assert (
                out.ok
            ), "parenthesised test"
            assert out.is_contiguous()
        """
    )
    assert [(s.exception, s.message, guards(s)) for s in sites] == [
        (
            "AssertionError",
            "start {start} not aligned to {page}",
            [("assert", "start % page == 0", True)],
        ),
        ("AssertionError", "parenthesised test", [("assert", "out.ok", True)]),
        ("AssertionError", None, [("assert", "out.is_contiguous()", True)]),
    ]


def test_guard_path_resets_at_def_and_class() -> None:
    sites = mine(
        """
        import sys

        if sys.version_info >= (3, 11):
            class Backend:
                if sys.platform == "win32":
                    raise RuntimeError("windows")

                def start(self):
                    raise NotImplementedError("new")
        """
    )
    assert [(s.scope, guards(s)) for s in sites] == [
        ("Backend", [("if", 'sys.platform == "win32"', False)]),
        ("Backend.start", []),
    ]


# -- scopes, docstrings, excerpts -------------------------------------------


def test_scopes_are_qualnames() -> None:
    sites = mine(
        """
        raise ImportError("at import")

        class Settings:
            \"\"\"Holds settings.

            Second paragraph.\"\"\"

            def parse(self):
                \"\"\"Parse one token.\"\"\"
                def convert(token):
                    class Local:
                        def run(self):
                            raise RuntimeError("deep")
                    raise ValueError("convert")
                return convert

            @property
            def size(self):
                raise AttributeError("read-only")

        def one_line(): raise NotImplementedError
        """
    )
    assert [(s.line, s.scope, s.function_doc, s.class_doc) for s in sites] == [
        (1, "<module>", None, None),
        (13, "Settings.parse.<locals>.convert.<locals>.Local.run", None, None),
        (14, "Settings.parse.<locals>.convert", None, "Holds settings."),
        (19, "Settings.size", None, "Holds settings."),
        (21, "one_line", None, None),
    ]


def test_function_docstring_summary() -> None:
    site = only('def f():\n    """Build the cache.\n\n    Details."""\n    raise E("x")\n')
    assert site.function_doc == "Build the cache."


def test_excerpt_clipped_at_file_edges_and_blank_edges_trimmed() -> None:
    body = "\n".join(f"x{i} = {i}" for i in range(1, 30))
    source = "\n\nimport os\nraise RuntimeError('top')\n" + body + "\nraise RuntimeError('end')"
    result = extract_file("edges.py", "0" * 40, source.encode())
    assert result.sites == extract_file("edges.py", "0" * 40, source.encode(), partial=False).sites
    first, last = result.sites
    assert (first.line, first.excerpt.start_line, first.excerpt.end_line) == (4, 3, 22)
    assert first.excerpt.text.splitlines()[0] == "import os"
    assert (last.line, last.excerpt.start_line, last.excerpt.end_line) == (34, 16, 34)
    assert last.excerpt.text.splitlines()[-1] == "raise RuntimeError('end')"


def test_crlf_and_lone_cr_lines_count_like_python() -> None:
    data = b"def f(flag):\r\n    if flag:\r\n        x = 1\r    raise ValueError('a\\\r\nb')\r\n"
    result = extract_file("m.py", "0" * 40, data)
    (site,) = result.sites
    assert site.line == 4
    assert site.message == "ab"
    assert "\r" not in site.excerpt.text


def test_bom_and_coding_cookie() -> None:
    bom = extract_file("a.py", "0" * 40, b"\xef\xbb\xbfraise E('bom')\n")
    latin = extract_file(
        "b.py", "0" * 40, b"# -*- coding: latin-1 -*-\nraise KeyError('entr\xe9e')\n"
    )
    assert bom.sites[0].excerpt.text == "raise E('bom')"
    assert (latin.encoding, latin.sites[0].message) == ("iso-8859-1", "entrée")


# -- files that are not plain ------------------------------------------------


def test_file_without_markers_is_not_parsed() -> None:
    result = extract_file("a.py", "0" * 40, b"x = (\n")
    assert result == FileResult(path="a.py", blob="0" * 40, status="mined")


def test_raise_only_in_strings_has_no_sites() -> None:
    result = extract_file("a.py", "0" * 40, b"'''raise ValueError'''\n# assert x\n")
    assert (result.status, result.sites) == ("mined", ())


def test_unparsable_file_is_reported_not_raised() -> None:
    result = extract_file("py2.py", "0" * 40, b'print "hi"\nraise E, "old"\n')
    assert result.status == "failed"
    assert result.reason is not None and result.reason.startswith("libcst cannot parse")


def test_empty_file() -> None:
    result = extract_file("e.py", "0" * 40, b"")
    assert (result.status, result.reason) == ("mined", "empty file")


def test_guard_to_json_round_trip() -> None:
    guard = Guard("except", "KeyError", False, 3, name="e")
    assert Guard.from_json(guard.to_json()) == guard
    site = only("def f():\n    raise E(f'{x!r:>3}')\n")
    assert Site.from_json(site.to_json()) == site


# -- raising helpers: each call is a ``call`` site -------------------------------

HELPER_FILES = {
    "pkg/util.py": """\
import logging

logger = logging.getLogger(__name__)


def raise_error_or_warn(obj, strict, counter_name, message, log_interval=1000):
    if strict:
        raise ValueError(message)
    else:
        logger.warning(message)


def check_positive(value):
    if value <= 0:
        raise ValueError(f"must be positive, got {value}")


def fail_with(strict, message="default failure"):
    if not strict:
        return
    raise RuntimeError(message)
""",
    "pkg/checker.py": """\
import envs
from pkg.util import check_positive, fail_with, raise_error_or_warn


class Checker:
    def check(self, free, total):
        if free != total:
            msg = (
                "req pool leak detected! "
                f"free={free}, total={total}"
            )
            raise_error_or_warn(self, envs.STRICT.get(), "count", msg)
        check_positive(total)
        fail_with(True)

    def _report_leak(self, pool_name: str, token_msg: str):
        msg = f"{pool_name} memory leak detected! {token_msg}"
        raise_error_or_warn(
            self,
            envs.STRICT.get(),
            "count_memory_leak_warnings",
            msg,
        )
""",
    "pkg/scheduler.py": """\
class Scheduler:
    def idle(self, messages):
        if messages:
            self.invariant_checker._report_leak("pool", "\\n".join(messages))
        self.other.raise_error_or_warn(None, True, "x", "not ours: a method of another object")
        raise_error_or_warn(None, True, "x", "not imported here")
""",
}


def helper_sites(make_repo) -> list[Site]:
    from miner.mining.extraction import MineOptions
    from miner.pipeline import mine as mine_repo

    repo = make_repo(HELPER_FILES, tag="v1")
    result = mine_repo(str(repo), "v1", options=MineOptions(jobs=0, cache=False))
    return list(result.sites)


def test_raising_helper_calls_are_sites(make_repo) -> None:
    sites = helper_sites(make_repo)
    calls = [s for s in sites if s.kind == "call"]
    assert [
        (s.path, s.line, s.end_line, s.scope, s.exception, s.message, s.message_kind) for s in calls
    ] == [
        (
            "pkg/checker.py",
            12,
            12,
            "Checker.check",
            "ValueError",
            "req pool leak detected! free={free}, total={total}",
            "template",
        ),
        ("pkg/checker.py", 14, 14, "Checker.check", "RuntimeError", "default failure", "literal"),
        (
            "pkg/checker.py",
            18,
            23,
            "Checker._report_leak",
            "ValueError",
            "{pool_name} memory leak detected! {token_msg}",
            "template",
        ),
        (
            "pkg/scheduler.py",
            4,
            4,
            "Scheduler.idle",
            "ValueError",
            'pool memory leak detected! {"\\n".join(messages)}',
            "template",
        ),
    ]
    check, fail, leak, idle = calls
    # The call's guards, then the helper's parameter tests with the call's arguments.
    assert guards(check) == [("if", "free != total", False), ("if", "envs.STRICT.get()", False)]
    assert guards(fail) == [("if", "True", False)]  # `if not strict: return` before the raise
    assert guards(leak) == [("if", "envs.STRICT.get()", False)]
    assert guards(idle) == [("if", "messages", False), ("if", "envs.STRICT.get()", False)]
    assert all(g.line == idle.line for g in idle.guards[1:])
    assert check.message_parts == (
        MessagePart(text="req pool leak detected! free="),
        MessagePart(expr="free"),
        MessagePart(text=", total="),
        MessagePart(expr="total"),
    )
    assert (check.message_source, check.message_style) == ("msg", "fstring")
    assert check.via == ("pkg/util.py:8 raise_error_or_warn",)
    assert idle.via == (
        "pkg/checker.py:18 Checker._report_leak",
        "pkg/util.py:8 raise_error_or_warn",
    )
    assert (
        idle.excerpt.text.splitlines()[idle.line - idle.excerpt.start_line]
        .strip()
        .startswith("self.invariant_checker._report_leak(")
    )
    # check_positive tests its value, not a parameter alone: no helper.
    # The helper's own raise stays a (dynamic) site.
    (own,) = [s for s in sites if s.path == "pkg/util.py" and s.line == 8]
    assert (own.kind, own.message_kind, own.via) == ("raise", "dynamic", ())


def test_raising_helpers_are_kept_in_the_blob_cache(make_repo, tmp_path, monkeypatch) -> None:
    """The helpers of a blob's own sites come from the cache's ``helpers``
    table in a later run, re-pathed when the blob stands at another path,
    and the call sites are the same as without the cache."""
    import sqlite3

    from miner.mining.cache import FILENAME
    from miner.mining.extraction import MineOptions
    from miner.pipeline import mine as mine_repo

    moved = {("pkg/tools.py" if p == "pkg/util.py" else p): t for p, t in HELPER_FILES.items()}
    moved["pkg/checker.py"] = moved["pkg/checker.py"].replace("pkg.util", "pkg.tools")
    first = make_repo(HELPER_FILES, tag="v1")
    second = make_repo(moved, tag="v1")
    cache = MineOptions(jobs=0, cache_dir=tmp_path / "cache")
    bare = MineOptions(jobs=0, cache=False)
    assert mine_repo(str(first), "v1", options=cache).sites == tuple(helper_sites(make_repo))
    with sqlite3.connect(tmp_path / "cache" / FILENAME) as conn:
        stored = conn.execute("SELECT count(*) FROM helpers").fetchone()[0]
    assert stored == 1  # util.py's blob: the only one whose own sites may make helpers
    from miner.mining import calls as calls_mod

    parsed: list[str] = []
    functions = calls_mod._Sources.functions
    monkeypatch.setattr(
        calls_mod._Sources,
        "functions",
        lambda self, path: parsed.append(path) or functions(self, path),
    )
    kept = mine_repo(str(second), "v1", options=cache)
    assert "pkg/tools.py" not in parsed  # its helpers came from the cache
    monkeypatch.undo()
    assert kept.sites == mine_repo(str(second), "v1", options=bare).sites
    calls = [s for s in kept.sites if s.kind == "call"]
    assert [s.via[-1] for s in calls] == [
        "pkg/tools.py:8 raise_error_or_warn",
        "pkg/tools.py:21 fail_with",
        "pkg/tools.py:8 raise_error_or_warn",
        "pkg/tools.py:8 raise_error_or_warn",
    ]


@pytest.mark.parametrize(
    ("source", "may"),
    [
        ("def fail(strict, message):\n    raise E(message)\n", True),
        ("def fail(strict):\n    message = 'x'\n    raise E(message)\n", False),
        # parameters over several lines, with annotations and defaults
        (
            "def fail(\n    strict: bool = f(1),\n    message: str = None,\n):\n"
            "    raise E(message)\n",
            True,
        ),
        # a string in the parameter list may hide a parenthesis: not read
        ("def fail(strict=')'):\n    message = 'x'\n    raise E(message)\n", True),
        # another function of the same name has the parameter: parse
        ("def fail():\n    raise E(message)\nclass C:\n    def fail(self, message): ...\n", True),
        # type parameters: not read
        ("def fail[T](strict):\n    raise E(message)\n", True),
    ],
)
def test_a_file_is_parsed_for_helpers_only_when_the_message_may_be_a_parameter(
    source: str, may: bool
) -> None:
    from miner.mining.calls import _may_be_parameter

    (site,) = [s for s in mine(source.replace("[T]", ""), "p.py") if s.kind == "raise"]
    assert (site.scope, site.message_source) == ("fail", "message")
    assert _may_be_parameter(site, source) is may


@pytest.mark.parametrize(
    "text",
    [
        "x = helper_x(1)\nhelper(2)\n",
        "obj.helper(1)\n",
        "\u00e9helper(1)\n",
        "def helper(a):\n    pass\n  async def helper():\n    x = 1; def helper(): pass\n",
        "helper\n",
        "_helper(1) + helper_(2) + helper (3)",
        '# helper(\n"""def helper(x)"""',
    ],
)
def test_name_searches_equal_their_regular_expressions(text: str) -> None:
    """The literal-first searches of :mod:`miner.mining.calls` find what the
    plain (slower) regular expressions find."""
    import re

    from miner.mining.calls import _bare_call, _defs, _has_word

    assert _has_word(text, "helper") == bool(re.search(r"\bhelper\b", text))
    plain = re.compile(r"^[ \t]*(?:async[ \t]+)?def[ \t]+(helper)\b", re.M)
    assert _defs(text, ["helper"]).get("helper", 0) == len(plain.findall(text))
    bare = any(
        not text[max(0, m.start() - 4) : m.start()].endswith("def ")
        for m in re.finditer(r"(?<![\w.])helper[ \t]*\(", text)
    )
    assert _bare_call(text, "helper") == bare


def test_helper_to_json_round_trip() -> None:
    import ast

    from miner.extract.helpers import Helper, functions, helper_of

    util = HELPER_FILES["pkg/util.py"]
    for line, name in ((8, "raise_error_or_warn"), (21, "fail_with")):
        (site,) = [s for s in mine(util, "pkg/util.py") if s.line == line]
        helper = helper_of(site, *functions(ast.parse(util))[name])
        assert helper is not None and Helper.from_json(helper.to_json()) == helper


def test_raising_helper_calls_are_the_same_with_both_parsers(make_repo) -> None:
    import ast

    import libcst as cst

    from miner.extract.ast_fallback import collect_ast
    from miner.extract.helpers import functions, helper_of
    from miner.extract.runner import collect
    from miner.extract.text import decode_source

    util = HELPER_FILES["pkg/util.py"]
    (site,) = [s for s in mine(util, "pkg/util.py") if s.line == 8]
    helper = helper_of(site, *functions(ast.parse(util))["raise_error_or_warn"])
    assert helper is not None
    table = {"raise_error_or_warn": (helper,)}
    source = textwrap.dedent("""\
        def more(strict, x, msg):
            if x: raise_error_or_warn(None, strict, "c", msg); raise_error_or_warn(None, 1, "c", "n %s" % x)
            for i in range(3):
                raise_error_or_warn(None, *x)
                raise_error_or_warn(None, strict, counter_name="c", message=f"kw {i}")
                (raise_error_or_warn)(None, strict, "c", "paren")
            raise_error_or_warn(None, strict, "c")
        """)  # noqa: E501
    text = decode_source(source.encode())
    by_cst = collect(cst.parse_module(text.text), path="p.py", lines=text.lines, helpers=table)
    by_ast = collect_ast(ast.parse(text.text), path="p.py", lines=text.lines, helpers=table)
    partial = extract_file("p.py", "0" * 40, source.encode(), helpers=table).sites
    drop = {"parser"}
    assert [{k: v for k, v in s.to_json().items() if k not in drop} for s in by_cst] == [
        {k: v for k, v in s.to_json().items() if k not in drop} for s in by_ast
    ]
    assert list(partial) == by_cst
    assert [(s.line, s.message, guards(s)) for s in by_cst] == [
        (2, None, [("if", "x", False), ("if", "strict", False)]),
        (2, "n {x}", [("if", "x", False), ("if", "1", False)]),
        (5, "kw {i}", [("for", "i in range(3)", False), ("if", "strict", False)]),
        (6, "paren", [("for", "i in range(3)", False), ("if", "strict", False)]),
    ]


@pytest.mark.parametrize(
    ("source", "is_helper"),
    [
        ("def fail(msg):\n    raise ValueError(msg)\n", True),
        (
            "def fail(strict, msg):\n    if not strict:\n        return\n"
            "    raise ValueError(msg)\n",
            True,
        ),
        # Reached only when a loop did not return: not every call raises.
        (
            "def owner(name, table):\n    for key in table:\n        if key == name:\n"
            "            return key\n    raise KeyError(f'unknown {name}')\n",
            False,
        ),
        (
            "def fail(msg):\n    try:\n        pass\n    finally:\n        raise ValueError(msg)\n",
            False,
        ),
        # A test of something else than a parameter alone.
        ("def check(x):\n    if x < 0:\n        raise ValueError(f'negative {x}')\n", False),
        # The parameter is rebound before the raise.
        ("def fail(msg):\n    msg = msg.strip()\n    raise ValueError(msg)\n", False),
        # Called by Python itself, and decorated.
        ("class A:\n    def __getitem__(self, key):\n        raise KeyError(key)\n", False),
        ("@functools.cache\ndef fail(msg):\n    raise ValueError(msg)\n", False),
        # The exception is a parameter.
        ("def fail(exc, msg):\n    raise exc(msg)\n", False),
    ],
)
def test_what_makes_a_raising_helper(source: str, is_helper: bool) -> None:
    import ast

    from miner.extract.helpers import functions, helper_of, maybe_helper

    site = [s for s in mine(source) if s.kind == "raise"][-1]
    found = functions(ast.parse(source)).get(site.scope)
    assert found is not None
    made = maybe_helper(site) and helper_of(site, *found) is not None
    assert made is is_helper
