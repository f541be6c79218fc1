"""Hard inputs beyond the case folder: nesting, recursion, size, line breaks, failures."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import libcst as cst
import pytest

from miner.extract import limits, runner
from miner.extract.limits import bracket_depth, call_with_deep_stack, nesting_refusal
from miner.extract.runner import extract_file

BLOB = "0" * 40


def mine(source: str | bytes, *, partial: bool = True) -> runner.FileResult:
    data = source.encode("utf-8") if isinstance(source, str) else source
    return extract_file("m.py", BLOB, data, partial=partial)


# -- nesting -------------------------------------------------------------------
def test_bracket_depth_skips_strings_and_comments() -> None:
    text = 'x = [(1, {"a": "((("}), f"{(y)}"]  # ((((\ny = """\n(((\n"""\n'
    assert bracket_depth(text) == 3
    assert bracket_depth("(" * 250 + ")" * 250) == 250
    assert bracket_depth("f(a[b{c}])") == 3


def test_nesting_refusals_are_told_apart_from_other_syntax_errors() -> None:
    with pytest.raises(SyntaxError) as parens:
        compile("x = " + "(" * 300 + "1" + ")" * 300, "m.py", "exec")
    assert nesting_refusal(parens.value) == "CPython: too many nested parentheses (line 1)"
    assert nesting_refusal(RecursionError()) == "CPython: recursion limit reached while parsing"
    assert nesting_refusal(MemoryError()) == "CPython: parser stack overflow"
    with pytest.raises(SyntaxError) as other:
        compile("def f(:\n", "m.py", "exec")
    assert nesting_refusal(other.value) is None


def test_deep_brackets_in_a_file_ast_rejects_for_another_reason() -> None:
    # NUL bytes: CPython refuses the file before it counts brackets, so the
    # scan decides; 300 levels never reach libcst.
    source = "x = " + "(" * 300 + "1" + ")" * 300 + "\nraise ValueError('\x00')\n"
    result = mine(source)
    assert result.status == "failed"
    assert result.reason == "nesting too deep for libcst (300 levels of brackets; limit 200)"


@pytest.mark.parametrize(
    ("expression", "reason"),
    [
        ("-" * 10_000 + "1", "CPython: parser stack overflow"),
        ("(" * 3_000 + "1" + ")" * 3_000, "CPython: too many nested parentheses (line 2)"),
    ],
    ids=["unary", "parens"],
)
def test_input_that_crashes_libcst_never_reaches_it(expression: str, reason: str) -> None:
    """libcst 1.9 dies with SIGSEGV on both; a subprocess keeps a regression
    from taking the test session down with it."""
    code = textwrap.dedent(
        f"""
        from miner.extract.runner import extract_file
        source = "def f():\\n    raise ValueError(" + {expression!r} + ")\\n"
        result = extract_file("m.py", "0" * 40, source.encode())
        print(result.status, result.reason)
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"failed nesting too deep for libcst ({reason})"


# -- recursion -----------------------------------------------------------------
def test_deep_stack_restores_the_recursion_limit_and_passes_errors_on() -> None:
    before = sys.getrecursionlimit()

    def depth(n: int) -> int:
        return 0 if n == 0 else 1 + depth(n - 1)

    assert call_with_deep_stack(lambda: depth(10_000)) == 10_000
    assert sys.getrecursionlimit() == before
    with pytest.raises(KeyError, match="inside"):
        call_with_deep_stack(lambda: {}["inside"])
    assert sys.getrecursionlimit() == before


def test_long_implicit_concatenation_is_mined() -> None:
    # libcst's visitors exhaust the default limit at about 350 literals.
    pieces = " ".join(f'"w{i} "' for i in range(600))
    result = mine(f"def f(x):\n    if x:\n        raise ValueError({pieces})\n")
    assert (result.status, result.reason) == ("mined", None)
    (site,) = result.sites
    assert site.message == "".join(f"w{i} " for i in range(600))
    assert site.parser == "libcst"
    assert sys.getrecursionlimit() == 1000


def test_recursion_beyond_the_deep_stack_falls_back_to_ast(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def exhausted(*args: object, **kwargs: object) -> list[object]:
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(runner, "collect", exhausted)
    result = mine("def f(x):\n    if x:\n        raise ValueError('deep')\n")
    assert result.status == "mined"
    assert result.reason == (
        "mined with the ast fallback (libcst: recursion limit (30000) reached)"
    )
    assert [(s.line, s.message, s.parser) for s in result.sites] == [(3, "deep", "ast")]


# -- any exception class -------------------------------------------------------
def test_any_libcst_exception_falls_back_to_ast(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(text: str) -> cst.Module:
        raise TypeError("unexpected node")

    monkeypatch.setattr(runner.cst, "parse_module", broken)
    result = mine("raise ValueError('x')\n", partial=False)
    assert result.status == "mined"
    assert (
        result.reason == "mined with the ast fallback (libcst failed: TypeError: unexpected node)"
    )
    assert [s.parser for s in result.sites] == ["ast"]


def test_a_failure_without_ast_is_that_file_s_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(text: str) -> cst.Module:
        raise UnicodeDecodeError("utf-8", b"\x80", 0, 1, "invalid start byte")

    monkeypatch.setattr(runner.cst, "parse_module", broken)
    # NUL bytes: ast cannot help, so libcst's failure is the file's.
    result = mine("raise ValueError('x')\n# \x00\n")
    assert result.status == "failed"
    assert result.reason == (
        "libcst failed: UnicodeDecodeError: 'utf-8' codec can't decode byte 0x80 in "
        "position 0: invalid start byte; Python's parser: source code string cannot "
        "contain null bytes"
    )


def test_neither_parser_gives_both_reasons_and_python2_only_when_it_looks_so() -> None:
    broken = mine("def f(:\n    raise ValueError('x')\n")
    assert broken.status == "failed"
    assert broken.reason is not None
    assert broken.reason.startswith("libcst cannot parse: ")
    assert broken.reason.endswith("; Python's parser: invalid syntax (line 1)")
    old = mine('def f(x):\n    if x:\n        raise ValueError, "bad x"\n')
    assert old.reason is not None and old.reason.endswith("(Python 2 syntax?)")


# -- size ----------------------------------------------------------------------
def test_files_over_the_size_limit_are_skipped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(limits, "MAX_FILE_BYTES", 2**20)
    result = mine("raise ValueError('x')\n" + "#" * 2**20 + "\n")
    assert result.status == "skipped"
    assert result.reason == "file too large (1.0 MiB; limit 1 MiB)"
    assert result.sites == ()


def test_whole_module_parse_has_a_size_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(limits, "MAX_WHOLE_PARSE_BYTES", 100)
    source = "def f(x):\n    if x:\n        raise ValueError('x')\n" + "y = 1\n" * 30
    result = mine(source, partial=False)
    assert result.status == "mined"
    assert result.reason == (
        "mined with the ast fallback: 0.0 MiB is over the whole-module libcst limit (0 MiB)"
    )
    assert [(s.line, s.parser) for s in result.sites] == [(3, "ast")]
    assert [(s.line, s.parser) for s in mine(source).sites] == [(3, "libcst")]


# -- line breaks ---------------------------------------------------------------
def test_only_python_line_breaks_count() -> None:
    # Form feed and the separators str.splitlines also splits on are not line
    # breaks for Python; a lone CR is.
    others = "\x0c\x1c\x1d\x1e\x85\u2028\u2029"
    source = (
        f"# {others}\r"
        f"def f(x):\r\n"
        f"    if x:  # {others}\n"
        f"        raise ValueError('a{others}b')\r"
        f"    assert x, 'after a lone CR'\n"
    )
    result = mine(source)
    first, second = result.sites
    assert (first.line, first.message) == (4, f"a{others}b")
    assert [g.line for g in first.guards] == [3]
    assert (second.line, second.message) == (5, "after a lone CR")
    assert second.excerpt.text.split("\n")[0] == f"# {others}"
    assert "\r" not in first.excerpt.text


def test_a_carriage_return_in_a_message_comes_only_from_an_escape() -> None:
    result = mine(b'raise ValueError("""one\r\ntwo\rthree""")\r\nraise KeyError("a\\rb")\r\n')
    first, second = result.sites
    assert first.message == "one\ntwo\nthree"
    assert second.message == "a\rb"  # written as an escape: the runtime text


def test_no_deep_stack_thread_costs_only_that_file(monkeypatch: pytest.MonkeyPatch) -> None:
    """Under a tight address-space limit (the worker pool's ``RLIMIT_AS``) the
    retry thread may not start: the file fails with the reason, nothing more."""

    def exhausted(*args: object, **kwargs: object) -> list[object]:
        raise RecursionError("maximum recursion depth exceeded")

    def refuse(self: object) -> None:
        raise RuntimeError("can't start new thread")

    monkeypatch.setattr(runner, "collect", exhausted)
    monkeypatch.setattr(limits.threading.Thread, "start", refuse)
    before = sys.getrecursionlimit()
    result = mine("def f(x):\n    raise ValueError('deep')\n")
    assert result.status == "failed"
    assert result.reason == (
        "recursion limit reached while mining; "
        "cannot start a deep-stack thread: can't start new thread"
    )
    assert sys.getrecursionlimit() == before


def _mine_chain(branches: int) -> tuple[str, int, int]:
    lines = ["def dispatch(op):\n", "    if op == 0:\n", "        raise KeyError('op 0')\n"]
    for i in range(1, branches):
        lines += [f"    elif op == {i}:\n", f"        raise KeyError('op {i}')\n"]
    result = extract_file("chain.py", BLOB, "".join(lines).encode())
    return result.status, len(result.sites), sys.getrecursionlimit()


def test_deep_stack_works_in_a_worker_process() -> None:
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=1, mp_context=context) as pool:
        assert pool.submit(_mine_chain, 500).result(timeout=300) == ("mined", 500, 1000)


def test_a_bad_byte_on_the_cookie_lines_is_decoded_lossily() -> None:
    # CPython reads line 1-2 for a coding cookie; a stray Latin-1 byte there
    # makes tokenize raise instead of UnicodeDecodeError.
    result = mine(b"# Jos\xe9\ndef f(n):\n    if n < 0:\n        raise ValueError('negative')\n")
    assert (result.status, result.encoding) == ("mined", "utf-8")
    assert result.reason == "decoded with replacement characters (invalid bytes)"
    (site,) = result.sites
    assert (site.line, site.message, site.excerpt.text.split("\n")[0]) == (
        4,
        "negative",
        "# Jos\ufffd",
    )
