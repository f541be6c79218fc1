"""`miner lookup` and the site's search under hostile input.

* Templates and pastes built to make a backtracking matcher explode
  (``f"{a0},{a1},...,{a11},end"`` against ``",end"`` and forty commas took
  more than a minute with the regular expression lookup used to build): the
  matcher of :func:`miner.lookup.compile_template` and its JavaScript port
  answer in milliseconds, and agree with each other.
* Control characters in mined text (``ESC [2J``, OSC 0 and OSC 8, BEL, NUL,
  C1 ``CSI``) reach the terminal as visible escapes, never raw.
"""

from __future__ import annotations

import json
import random
import re
import time
import unicodedata
from pathlib import Path
from typing import Any

import git
import pytest
from browser import Watched, chromium
from conftest import commit_all, write_files
from sample_repo import publish_site

from miner import cli
from miner.lookup import (
    UNSAFE,
    Card,
    LookupIndex,
    SiteRef,
    compile_template,
    report_json,
    report_text,
    strip_prefixes,
    visible,
)
from miner.model import MessagePart
from miner.pipeline import mine_and_analyze

T = MessagePart

#: Generous: the matcher answers these in milliseconds on this machine.
BOUND = 1.0


def fields(count: int) -> str:
    return ",".join(f"{{a{i}}}" for i in range(count))


def holes(count: int, end: str = ",end", *, open_end: bool = False) -> list[MessagePart]:
    """``f"{a0},{a1},...,{a<count-1>}<end>"`` (and ``{z}`` after it when ``open_end``)."""
    parts: list[MessagePart] = []
    for i in range(count):
        parts += [T(expr=f"a{i}"), T(",")]
    parts[-1] = T(end)
    return parts + [T(expr="z")] if open_end else parts


HOSTILE_SOURCE = f'''\
def twelve({", ".join(f"a{i}" for i in range(12))}):
    raise ValueError(f"{fields(12)},end")


def thirty({", ".join(f"a{i}" for i in range(30))}):
    raise ValueError(f"{fields(30)},end")


def thirty_open({", ".join(f"a{i}" for i in range(30))}, z):
    raise ValueError(f"{fields(30)},end{{z}}")


def nested(x, y, z):
    raise ValueError(f"ab ab {{x}} ab ab {{y}} ab ab {{z}} abc")


def spaced(x, y):
    raise ValueError(f"a b c d e f {{x}} g h i {{y}}")


def lines(x, y):
    raise ValueError(f"line one\\n{{x}}\\nline two\\n{{y}}\\nend of it")


def chunks(x, y):
    raise ValueError(f"{{x}}{"a " * 999}aa{{y}}")


def long_chunk(x, y):
    raise ValueError(f"{{x}}{"a" * 1000}{{y}}")
'''

#: The same templates as message parts.
NESTED = [T("ab ab "), T(expr="x"), T(" ab ab "), T(expr="y"), T(" ab ab "), T(expr="z"), T(" abc")]
SPACED = [T("a b c d e f "), T(expr="x"), T(" g h i "), T(expr="y")]
LINES = [T("line one\n"), T(expr="x"), T("\nline two\n"), T(expr="y"), T("\nend of it")]
#: One block of 1,000 white-space-separated chunks: ``a a a ... a aa``.
CHUNKS = [T(expr="x"), T("a " * 999 + "aa"), T(expr="y")]
LONG_CHUNK = [T(expr="x"), T("a" * 1000), T(expr="y")]

#: (template, paste, whether it matches); pastes up to 10,000 characters.
CASES: dict[str, tuple[list[MessagePart], str, bool]] = {
    "12 holes, 40 commas (the report)": (holes(12), ",end" + "," * 40 + "x", False),
    "30 holes, 40 commas": (holes(30), ",end" + "," * 40 + "x", False),
    "12 holes, 5000 commas": (holes(12), ",end" + "," * 5000 + "x", False),
    "30 holes, 5000 commas": (holes(30), ",end" + "," * 5000 + "x", False),
    "30 holes, 5000 commas, matching": (holes(30), "," * 5000 + "end", True),
    "30 holes then a placeholder, 5000 commas": (holes(30, open_end=True), "," * 5000, False),
    "30 holes then a placeholder, 5000 commas and end": (
        holes(30, open_end=True),
        "," * 5000 + "end" + "," * 5000,
        True,
    ),
    "30 holes, 5000 separators of all kinds": (holes(30), ",end" + ", \n" * 1700 + "x", False),
    "nested repeated literals": (NESTED, "ab " * 3000, False),
    "nested repeated literals, matching": (NESTED, "ab ab " * 1000 + "abc", True),
    "long white space runs": (SPACED, "a b c d e f" + " " * 5000 + "x" + "\t" * 5000, False),
    "long white space runs, matching": (
        SPACED,
        "a  b\tc\nd e f" + " " * 5000 + "1 g h i" + "\t" * 5000 + "2",
        True,
    ),
    "new line runs": (LINES, "line one" + "\n" * 5000 + "x" + "\n" * 5000, False),
    "new line runs, matching": (
        LINES,
        "line one" + "\n" * 5000 + "1\nline two\n" + "\n" * 4000 + "2\nend of it",
        True,
    ),
    "1000 chunks in a run of their first": (CHUNKS, "a " * 4000, False),
    "a long chunk in a run of its letter": (LONG_CHUNK, ("a" * 999 + " ") * 9, False),
}


def timed(function: Any, *args: Any) -> tuple[Any, float]:
    start = time.perf_counter()
    result = function(*args)
    return result, time.perf_counter() - start


@pytest.mark.parametrize("name", list(CASES))
def test_matcher_is_fast_on_hostile_input(name: str) -> None:
    parts, paste, matches = CASES[name]
    matcher, _ = timed(compile_template, parts)
    found, seconds = timed(matcher.fullmatch, paste)
    assert found is matches
    assert seconds < BOUND, f"{name}: {seconds:.3f} s"


def hostile_index() -> LookupIndex:
    templates = [parts for parts, _, _ in CASES.values()]
    unique = [p for i, p in enumerate(templates) if p not in templates[:i]]
    return LookupIndex(
        Card(
            f"e{i:02d}", "ValueError", None, tuple(p), f"hostile {i}", (SiteRef("h.py", i, i, "f"),)
        )
        for i, p in enumerate(unique)
    )


@pytest.mark.parametrize("name", list(CASES))
def test_lookup_is_fast_on_hostile_input(name: str) -> None:
    """The whole lookup (paste parsed into readings, every template tried,
    fragments and words scored): the same bound."""
    index = hostile_index()
    _, paste, _ = CASES[name]
    for text in (paste, f"ValueError: {paste}", paste.replace(",", "\n")):
        _, seconds = timed(index.search, text)
        assert seconds < BOUND, f"{name}: {seconds:.3f} s"


def test_lookup_finds_the_report_template() -> None:
    index = hostile_index()
    (best, *_) = index.search(",".join("x" * 12) + ",end")
    assert best.good and best.card.message_parts == tuple(holes(12))


# ---- The terminal: mined text is shown, never obeyed. ----

CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
CLEAR, TITLE, BELL, NUL, CSI = "\x1b[2J", "\x1b]0;pwned\x07", "\x07", "\x00", "\x9b"
LINK = "\x1b]8;;https://evil.example/\x1b\\click\x1b]8;;\x1b\\"
HOSTILE_TEXT = f"boom {CLEAR} {TITLE} {LINK} {BELL} {NUL} {CSI}31m red"


def text_card(error_id: str, text: str, path: str, scope: str) -> Card:
    """A ``ValueError`` card whose message (``text`` then a placeholder) and
    title are ``text``, raised at ``path``:3 in ``scope``."""
    return Card(
        error_id=error_id,
        exception="ValueError",
        message=text + " {x}",
        message_parts=(T(text + " "), T(expr="x")),
        title=text,
        sites=(SiteRef(path, 3, 3, scope),),
    )


def escape_card() -> Card:
    return text_card(
        "0123456789abcdef",
        HOSTILE_TEXT,
        f"python/sglang/{CLEAR}{TITLE}\nfake line{BELL}.py",
        f"f{NUL}{CSI}",
    )


def assert_visible(output: str, lines: int) -> None:
    assert not CONTROL.search(output)
    assert not UNSAFE.search(output.replace("\n", ""))
    assert len(output.split("\n")) == lines  # a new line in a path is no new line here
    for shown in (r"\x1b[2J", r"\x1b]0;pwned\x07", r"\x1b]8;;https://evil.example/\x1b\click"):
        assert shown in output
    assert r"\x00" in output and r"\u009b31m red" in output and r"\nfake line\x07.py" in output


def test_visible() -> None:
    assert visible(HOSTILE_TEXT) == (
        r"boom \x1b[2J \x1b]0;pwned\x07 \x1b]8;;https://evil.example/\x1b\click"
        r"\x1b]8;;\x1b\ \x07 \x00 \u009b31m red"
    )
    assert visible("tab\there\r\nDEL\x7f \u202eevil\u2066 \u2028") == (
        r"tab\there\r\nDEL\x7f \u202eevil\u2066 \u2028"
    )
    text = "plain ünïcödé, C:\\path\\x1b (a backslash stays), 日本語"
    assert visible(text) == text


def test_report_text_shows_control_characters(tmp_path: Path) -> None:
    index = LookupIndex([escape_card()])
    paste = f"ValueError: {HOSTILE_TEXT} 42"
    matches = index.search(paste)
    assert matches and matches[0].good
    output = report_text(paste, matches, tmp_path / f"out{CLEAR}", None)
    assert_visible(output, 4)
    assert re.match(r"1\. 0\.\d\d  ValueError: boom \\x1b\[2J \\x1b\]0;pwned\\x07 ", output)
    # The closest candidates are shown the same way.
    candidates = index.search("boom red pwned")
    assert candidates and not candidates[0].good
    assert_visible(report_text("boom", candidates, tmp_path, None), 5)


def test_cli_lookup_prints_no_control_characters(tmp_path: Path, capsys, monkeypatch) -> None:
    index = LookupIndex([escape_card()])
    monkeypatch.setattr(LookupIndex, "load", classmethod(lambda cls, out: index))
    paste = f"{HOSTILE_TEXT} 42"
    assert cli.main(["lookup", "--out", str(tmp_path), paste]) == 0
    assert_visible(capsys.readouterr().out.rstrip("\n"), 4)
    assert cli.main(["lookup", "--out", str(tmp_path), "--json", paste]) == 0
    out = capsys.readouterr().out
    assert not CONTROL.search(out.replace("\n", ""))
    assert not UNSAFE.search(out.replace("\n", ""))
    payload = json.loads(out)  # escapes in JSON: the values are intact
    assert payload["results"][0]["message"] == HOSTILE_TEXT + " {x}"
    assert payload["results"][0]["scope"] == f"f{NUL}{CSI}"
    assert payload["pasted"][0]["message"] == paste


#: Invisible format characters (Unicode ``Cf``) outside the bidirectional
#: embeddings, overrides and isolates: a right-to-left mark, the Arabic
#: letter mark, a zero-width space, a byte order mark, a tag character.
FORMAT_TEXT = "txt\u200f\u061cexe zero\u200bwidth bom\ufeff tag\U000e0041"


def format_card() -> Card:
    return text_card("fedcba9876543210", FORMAT_TEXT, "python/sglang/a.py", "f")


def test_cli_lookup_shows_every_format_character_escaped(
    tmp_path: Path, capsys, monkeypatch
) -> None:
    index = LookupIndex([format_card()])
    monkeypatch.setattr(LookupIndex, "load", classmethod(lambda cls, out: index))
    paste = f"ValueError: {FORMAT_TEXT} 42"
    assert cli.main(["lookup", "--out", str(tmp_path), paste]) == 0
    out = capsys.readouterr().out
    shown = r"txt\u200f\u061cexe zero\u200bwidth bom\ufeff tag\U000e0041"
    assert f"ValueError: {shown} {{x}}" in out
    assert not any(unicodedata.category(c) == "Cf" for c in out)
    assert cli.main(["lookup", "--out", str(tmp_path), "--json", paste]) == 0
    out = capsys.readouterr().out
    assert r"tag\udb40\udc41" in out  # a surrogate pair: the same JSON value
    assert not any(unicodedata.category(c) == "Cf" for c in out)
    assert json.loads(out)["results"][0]["message"] == FORMAT_TEXT + " {x}"


def test_report_json_is_the_same_value(tmp_path: Path) -> None:
    index = LookupIndex([escape_card()])
    paste = f"{HOSTILE_TEXT} 42"
    output = report_json(paste, index.search(paste), tmp_path, None)
    assert "\\u009b31m" in output and "\\u001b[2J" in output
    payload = json.loads(output)
    assert payload["results"][0]["path"] == escape_card().sites[0].path


# ---- The site's search box, in Chromium. ----


@pytest.fixture(scope="module")
def hostile_site(tmp_path_factory) -> tuple[Any, Path]:
    root = tmp_path_factory.mktemp("hostile")
    repo_root = root / "sglang"
    repo_root.mkdir()
    repo = git.Repo.init(repo_root, initial_branch="main")
    with repo.config_writer() as cfg:
        cfg.set_value("core", "autocrlf", "false")
        cfg.set_value("commit", "gpgsign", "false")
    write_files(repo_root, {"python/sglang/srt/hostile.py": HOSTILE_SOURCE})
    commit_all(repo, "hostile templates", "v1")
    mined = mine_and_analyze(str(repo_root), "v1", slug="sgl-project/sglang", link_ref="v1")
    publish_site(mined, root / "site")
    return mined.result, root / "site"


@pytest.fixture(scope="module")
def hostile_page(hostile_site) -> Any:
    with chromium() as browser:
        watched = Watched(browser)
        watched.page.goto((hostile_site[1] / "index.html").as_uri())
        yield watched
        assert watched.errors == []


#: Time one search in the page: the matcher alone, and the search box from the
#: input event to the results shown (after the box's 120 ms pause).
MEASURE = """async text => {
    const t0 = performance.now();
    window.raiseMinerSearch(text);
    const search = performance.now() - t0;
    const box = document.getElementById("q"), results = document.getElementById("results");
    const shown = new Promise(resolve => {
        const observer = new MutationObserver(() => {
            if (results.dataset.query !== text) return;
            observer.disconnect();
            resolve(performance.now());
        });
        observer.observe(results, {attributes: true});
    });
    const t1 = performance.now();
    box.value = text;
    box.dispatchEvent(new Event("input"));
    return [search, (await shown) - t1];
}"""


def test_mined_templates_are_the_hostile_ones(hostile_site) -> None:
    result, _ = hostile_site
    mined = {tuple(e.message_parts) for e in result.errors}
    hostile = (holes(12), holes(30), holes(30, open_end=True), NESTED, SPACED, LINES, CHUNKS)
    for parts in (*hostile, LONG_CHUNK):
        assert tuple(parts) in mined


@pytest.mark.parametrize("name", list(CASES))
def test_search_box_is_fast_on_hostile_input(hostile_page, hostile_site, name: str) -> None:
    _, paste, _ = CASES[name]
    search, box = hostile_page.page.evaluate(MEASURE, paste)
    assert search < BOUND * 1000, f"{name}: search {search:.0f} ms"
    assert box < BOUND * 1000 + 120, f"{name}: search box {box:.0f} ms"
    # Same best card as miner lookup.
    python = [
        m.card.error_id
        for m in LookupIndex.from_errors(hostile_site[0].errors).search(paste)
        if m.good
    ]
    page = hostile_page.page.evaluate(
        "text => window.raiseMinerSearch(text).filter(r => r.score >= 0.5)"
        ".map(r => window.RAISE_MINER_SEARCH.docs[r.index][0])",
        paste,
    )
    assert page[:1] == python[:1]


def test_page_matcher_is_the_python_matcher(hostile_page) -> None:
    """The port of the matcher decides as :func:`compile_template` does, on
    random templates and messages (white space both languages agree on)."""
    rng = random.Random(14)
    alphabet = "ab, \n\t\xa0"
    cases = []
    for _ in range(3000):
        parts: list[Any] = [
            0 if rng.random() < 0.35 else "".join(rng.choices(alphabet, k=rng.randint(0, 4)))
            for _ in range(rng.randint(0, 7))
        ]
        if rng.random() < 0.5:
            message = "".join(rng.choices(alphabet, k=rng.randint(0, 14)))
        else:
            message = "".join(p if p != 0 else rng.choice(["", "a", " b,"]) for p in parts)
            message = re.sub(r"\s+", lambda _: rng.choice(["", " ", "\n\t"]), message)
        cases.append([parts, message])
    page = hostile_page.page.evaluate(
        "cases => cases.map(c => window.raiseMinerSearch.matchesTemplate(c[0], c[1]))", cases
    )
    python = [
        compile_template([T(expr="x") if p == 0 else T(p) for p in parts]).fullmatch(message)
        for parts, message in cases
    ]
    assert page == python
    assert 500 < sum(python) < 2500  # both answers well represented
    # And the hostile cases themselves.
    hostile = [
        [[0 if p.expr else p.text for p in parts], paste] for parts, paste, _ in CASES.values()
    ]
    assert hostile_page.page.evaluate(
        "cases => cases.map(c => window.raiseMinerSearch.matchesTemplate(c[0], c[1]))", hostile
    ) == [matches for _, _, matches in CASES.values()]


@pytest.mark.parametrize(
    "line", ["(" + "pid=1" * 10_000, "(pid=" + "1" * 50_000, "(" + "p" * 50_000 + "pid=1"]
)
def test_log_prefix_patterns_are_linear_on_long_lines(line: str) -> None:
    """Every log-prefix pattern gives up on a 50,000-character line without its
    closing bracket at once (the ``pid=`` pattern used to take seconds)."""
    started = time.perf_counter()
    assert strip_prefixes(line) == line
    assert time.perf_counter() - started < 0.5


PARSER_CASES = [
    "sglang_service-1  | RuntimeError: Insufficient multimodal embedding length:\n"
    "sglang_service-1  | num_mm_tokens_in_input_ids=16325",
    "pod-7f9c main ValueError: a\npod-7f9c main b",
    "[2026-11-30 10:12:44 TP0] Scheduler hit an exception: Context parallel only supports x",
    "2026-11-30 10:12:44,123 ERROR sglang.srt.managers.scheduler: boom here",
    "Nov 30 10:12:44 gpu-7 python[1234]: KeyError: 'x'",
    "x: ValueError: bad thing",
    "ERROR: ValueError: Model 'x' not found in /models",
]


def test_page_parser_is_the_python_parser(hostile_page) -> None:
    """The port of the paste parser reads pastes as :func:`parse_paste` does:
    the same exceptions and messages (the page may keep a reading twice)."""
    from miner.lookup import parse_paste

    page = hostile_page.page.evaluate(
        "cases => cases.map(c => window.raiseMinerSearch.parsePaste(c)"
        ".map(r => [r.exception, r.messages[0]]))",
        PARSER_CASES,
    )
    for text, shown in zip(PARSER_CASES, page, strict=True):
        python = [[r.exception, r.messages[0]] for r in parse_paste(text)]
        unique = [r for i, r in enumerate(shown) if r not in shown[:i]]
        assert [r for r in unique if r in python] == python, text
