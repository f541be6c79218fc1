"""`miner lookup`: the paste parser, the template matcher and the ranking, on
fixture templates (the real release is in test_lookup_release.py)."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sample_repo import HOST_POOL_TRACEBACK, error_for, mine_sample

from miner import cli
from miner.lookup import (
    GOOD,
    Frame,
    LookupIndex,
    compile_template,
    parse_paste,
    strip_prefixes,
)
from miner.model import MessagePart
from miner.pipeline import publish

T = MessagePart  # literal: T(text=...), placeholder: T(expr=...)


@pytest.mark.parametrize(
    ("parts", "message", "matches"),
    [
        ([T("Model "), T(expr="name"), T(" not found")], "Model llama-3 8B not found", True),
        ([T("Model "), T(expr="name"), T(" not found")], "Model x not found!", False),
        ([T("Model "), T(expr="name"), T(" not found")], "Model  x\nnot found", True),
        ([T("got "), T(expr="type(pool)")], "got <class 'NoneType'>", True),
        ([T("a "), T(expr="x"), T(expr="y"), T(" b")], "a 12 b", True),
        ([T("value "), T(expr="v")], "value line one\nline two", True),
        ([T("need {braces} "), T(expr="v")], "need {braces} 3", True),
        ([T("cost $5 (max) "), T(expr="v")], "cost $5 (max) 7", True),
        ([T("cost $5 (max) "), T(expr="v")], "cost 5 max 7", False),
        ([T("exact")], "exact", True),
        ([T("exact")], "exactly", False),
        ([T(expr="a"), T(" != "), T(expr="b")], "3 != 4", True),
        # A white space run of the template matches any run, or none.
        ([T("page size "), T(expr="n")], "pagesize 3", True),
        ([T("pagesize "), T(expr="n")], "page size 3", False),
        ([T("a"), T("b "), T(expr="n"), T(" c")], "  ab\t7\n c \n", True),
        ([T("a"), T("b "), T(expr="n"), T(" c")], "a b 7 c", False),
        # Repeated literals: each middle one at its leftmost place is enough.
        ([T(expr="a"), T(","), T(expr="b"), T(",end")], ",end,,,,end", True),
        ([T(expr="a"), T(","), T(expr="b"), T(",end")], ",end,,,,x", False),
        ([T(expr="a"), T("ab ab"), T(expr="b"), T("ab")], "xab abyab", True),
        ([T(expr="a"), T("ab ab"), T(expr="b"), T("ab")], "xab ab", False),  # no overlap
        ([T("ab"), T(expr="b"), T("ba")], "aba", False),
        ([T("ab"), T(expr="b"), T("ba")], "abba", True),
        # No literal text: a placeholder takes anything, else only white space.
        ([T(expr="a")], "anything\nat all", True),
        ([T(" ")], " \n", True),
        ([T(" ")], "x", False),
        ([], "", True),
    ],
)
def test_compile_template(parts: list[MessagePart], message: str, matches: bool) -> None:
    assert bool(compile_template(parts).fullmatch(message)) is matches


def reference_pattern(parts: list[MessagePart]) -> re.Pattern[str]:
    """The backtracking regular expression lookup used to build (exponential
    on hostile input; fine on the small cases here): the specification the
    linear matcher keeps."""
    pieces, previous_placeholder = [r"\s*"], False
    for part in parts:
        if part.expr is not None:
            if not previous_placeholder:
                pieces.append("(.*?)")
            previous_placeholder = True
        elif part.text:
            previous_placeholder = False
            pieces.append(r"\s*".join(re.escape(c) for c in re.split(r"\s+", part.text)))
    pieces.append(r"\s*")
    return re.compile("".join(pieces), re.DOTALL)


#: Few letters and several kinds of white space, so that literals repeat,
#: overlap and meet white space in every way.
_ALPHABET = "ab,\n \t\x1c\x85\xa0"
_PARTS = st.lists(
    st.one_of(st.just(T(expr="x")), st.text(_ALPHABET, max_size=4).map(T)), max_size=7
)


@st.composite
def _template_and_message(draw: st.DrawFn) -> tuple[list[MessagePart], str]:
    parts = draw(_PARTS)
    if draw(st.booleans()):
        return parts, draw(st.text(_ALPHABET, max_size=14))
    # A rendering of the template, white space runs changed.
    values = st.text(_ALPHABET, max_size=3)
    message = "".join(p.text or "" if p.expr is None else draw(values) for p in parts)
    spaces = draw(st.lists(st.sampled_from(["", " ", "\n\t", "\xa0 "]), min_size=1))
    runs = iter(spaces * len(message))
    return parts, re.sub(r"\s+", lambda _: next(runs), message)


@settings(max_examples=1500, deadline=None)
@given(_template_and_message())
def test_template_matcher_is_the_regular_expression(case) -> None:
    parts, message = case
    expected = reference_pattern(parts).fullmatch(message) is not None
    assert compile_template(parts).fullmatch(message) is expected


@pytest.mark.parametrize(
    ("line", "stripped"),
    [
        ("[2026-09-10 12:00:00 TP0] Scheduler hit an exception:", "Scheduler hit an exception:"),
        ("[2026-09-10 12:00:00 DP1 TP3] ValueError: x", "ValueError: x"),
        ("[TP0] boom", "boom"),
        ("2026-09-10 12:00:00,123 - ERROR - boom", "- boom"),
        ("2026-09-10T12:00:00.123Z ERROR: boom", "boom"),
        ("ERROR:sglang.srt.managers.scheduler:boom", "boom"),
        ("[ERROR] boom", "boom"),
        ("ERROR boom", "boom"),
        ("error: boom", "boom"),
        ("error in config", "error in config"),
        ("(Scheduler pid=1234) ValueError: x", "ValueError: x"),
        ("E0910 12:00:00.123456  1234 scheduler.cc:42] boom", "boom"),
        ('[2026-09-10 12:00:00 TP0]   File "a.py", line 3, in f', '  File "a.py", line 3, in f'),
        ("[Errno 2] No such file", "[Errno 2] No such file"),
        ("Errors happen", "Errors happen"),
        ("[1, 2] is not a valid shape", "[1, 2] is not a valid shape"),
    ],
)
def test_strip_prefixes(line: str, stripped: str) -> None:
    assert strip_prefixes(line) == stripped


CHAINED = """\
[2026-09-10 12:00:00 TP0] Scheduler hit an exception: Traceback (most recent call last):
  File "/opt/venv/lib/python3.11/site-packages/sglang/srt/server_args.py", line 3, in check
    raise ValueError(f"Invalid tp_size {args.tp_size}: must be a positive integer")
ValueError: Invalid tp_size 0: must be a positive integer

The above exception was the direct cause of the following exception:

Traceback (most recent call last):
  File "/opt/venv/lib/python3.11/site-packages/sglang/launch_server.py", line 14, in <module>
    main()
    ~~~~^^
RuntimeError: Initialization failed:
see the log above

During handling of the above exception, another exception occurred:

Traceback (most recent call last):
  File "/opt/venv/lib/python3.11/site-packages/sglang/launch_server.py", line 20, in <module>
    cleanup()
KeyError: 'tp_worker'
"""


def test_parse_chained_traceback() -> None:
    raised = parse_paste(CHAINED)
    assert [(r.exception, r.role) for r in raised[:3]] == [
        ("KeyError", "final"),
        ("RuntimeError", "context"),
        ("ValueError", "cause"),
    ]
    # A line outside the blocks (the second line of a message) is a candidate too.
    assert [(r.exception, r.messages, r.role) for r in raised[3:]] == [
        (None, ("see the log above",), "message")
    ]
    assert raised[0].messages == ("'tp_worker'", "tp_worker")
    assert raised[1].messages[0] == "Initialization failed:\nsee the log above"
    assert raised[1].messages[-1] == "Initialization failed:"
    assert raised[2].frames == (
        Frame("/opt/venv/lib/python3.11/site-packages/sglang/srt/server_args.py", 3, "check"),
    )
    assert raised[2].messages == ("Invalid tp_size 0: must be a positive integer",)


def test_parse_plain_message_reads_type_prefix_both_ways() -> None:
    raised = parse_paste("ERROR: ValueError: Model 'x' not found in /models")
    assert [(r.exception, r.messages[0]) for r in raised] == [
        (None, "ValueError: Model 'x' not found in /models"),
        ("ValueError", "Model 'x' not found in /models"),
    ]
    assert parse_paste("") == [] and parse_paste("  \n ") == []


def test_parse_traceback_with_unindented_source_line() -> None:
    text = (
        "Traceback (most recent call last):\n"
        'File "/x/sglang/srt/mem_cache/registry.py", line 8, in f\n'
        'raise ValueError("Host-pool retraction does not support Mamba models.")\n'
        "ValueError: Host-pool retraction does not support Mamba models.\n"
    )
    (raised,) = parse_paste(text)
    assert raised.exception == "ValueError"
    assert raised.messages == ("Host-pool retraction does not support Mamba models.",)


@pytest.fixture
def sample(make_repo):
    return mine_sample(make_repo)


@pytest.fixture
def index(sample) -> LookupIndex:
    return LookupIndex.from_errors(sample[1].result.errors)


def test_repo_path_maps_installed_paths(index: LookupIndex) -> None:
    assert (
        index.repo_path("/usr/lib/python3.11/site-packages/sglang/srt/mem_cache/registry.py")
        == "python/sglang/srt/mem_cache/registry.py"
    )
    assert index.repo_path("C:\\venv\\Lib\\site-packages\\sglang\\srt\\server_args.py") == (
        "python/sglang/srt/server_args.py"
    )
    assert index.repo_path("/usr/lib/python3.11/json/decoder.py") is None
    assert index.repo_path("registry.py") is None  # one component pins nothing


@pytest.mark.parametrize(
    ("paste", "path_tail", "line", "low", "high"),
    [
        (HOST_POOL_TRACEBACK, "registry.py", 8, 0.99, 1.0),
        (
            "MlxAuxiliaryStateComponent requires MlxAuxiliaryStatePool, got <class 'NoneType'>",
            "auxiliary_state.py",
            12,
            0.8,
            0.85,
        ),
        ("Invalid tp_size -1: must be a positive integer", "server_args.py", 3, 0.85, 0.9),
        (
            "ValueError: Invalid tp_size -1: must be a positive integer",
            "server_args.py",
            3,
            0.9,
            0.92,
        ),
        # The type shown disagrees with the one raised there: still found, ranked lower.
        (
            "TypeError: Invalid tp_size -1: must be a positive integer",
            "server_args.py",
            3,
            0.7,
            0.8,
        ),
        (
            "AssertionError: page_size must be a multiple of 16, got 12",
            "server_args.py",
            6,
            0.85,
            0.92,
        ),
        ("does not support Mamba models", "registry.py", 8, 0.6, 0.7),
        # A dynamic message is found only through its frame.
        (
            'Traceback (most recent call last):\n  File "/site-packages/sglang/srt/server_args.py"'
            ", line 8, in check\n    raise RuntimeError(msg)\nRuntimeError: anything at all\n",
            "server_args.py",
            8,
            0.9,
            0.9,
        ),
        # A multi-line placeholder value.
        ("Model 'a\nb' not found in /models/dir one", "server_args.py", 5, 0.6, 0.75),
    ],
)
def test_search_finds_the_card(
    sample, index: LookupIndex, paste: str, path_tail: str, line: int, low: float, high: float
) -> None:
    matches = index.search(paste)
    expected = error_for(sample[1].result, path_tail, line)
    assert matches[0].card.error_id == expected
    assert low <= matches[0].score <= high
    assert matches[0].good


def test_traceback_pins_the_site_and_says_why(sample, index: LookupIndex) -> None:
    (best, *_) = index.search(HOST_POOL_TRACEBACK)
    assert (best.site.path, best.site.line) == ("python/sglang/srt/mem_cache/registry.py", 8)
    assert best.reasons == (
        "message matches the template (100% literal)",
        "a traceback frame points at python/sglang/srt/mem_cache/registry.py:8",
    )


def test_chained_traceback_matches_the_cause_when_the_final_is_unknown(
    sample, index: LookupIndex
) -> None:
    matches = index.search(CHAINED)
    assert matches[0].card.error_id == error_for(sample[1].result, "server_args.py", 3)
    assert matches[0].raised == 2  # the third exception of the paste, the cause
    # Pinned and matched (0.95 + 0.05 x 37/38 literal), then x0.97 for not being the final one.
    assert matches[0].score == pytest.approx((0.95 + 0.05 * 37 / 38) * 0.97, abs=1e-4)


@pytest.mark.parametrize(
    "paste",
    [
        "Connection refused",
        "CUDA out of memory. Tried to allocate 2.00 GiB",
        "KeyError: 'tp_worker'",
        "Model path is required",  # words of a template, not its text
        "Invalid tp",  # too short to be a fragment
    ],
)
def test_no_good_match(index: LookupIndex, paste: str) -> None:
    matches = index.search(paste)
    assert all(m.score < GOOD for m in matches)


def test_cli_lookup_text_and_json(sample, tmp_path: Path, capsys, monkeypatch) -> None:
    repo, mined = sample
    result = mined.result
    out = tmp_path / "out"
    publish(mined, out)
    expected = error_for(result, "auxiliary_state.py", 12)
    page = out / "internal" / "sglang.srt.hardware_backend.mlx.kv_cache.auxiliary_state.md"
    message = "MlxAuxiliaryStateComponent requires MlxAuxiliaryStatePool, got <class 'NoneType'>"
    assert cli.main(["lookup", "--out", str(out), message]) == 0
    text = capsys.readouterr().out.splitlines()
    assert text == [
        "1. 0.82  TypeError: MlxAuxiliaryStateComponent requires MlxAuxiliaryStatePool, "
        "got {type(pool)}",
        "   python/sglang/srt/hardware_backend/mlx/kv_cache/auxiliary_state.py:12 in "
        "MlxAuxiliaryStateComponent.__init__",
        # an internal check: its entry on the page of its module
        f"   card: {page}#{expected}",
        "   why: message matches the template (78% literal)",
    ]
    monkeypatch.setattr("sys.stdin", io.StringIO(HOST_POOL_TRACEBACK))
    assert cli.main(["lookup", "--data", str(out), "--json", "--base-url", "https://x/y/"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["matched"] is True
    top = payload["results"][0]
    assert top["card"] == f"https://x/y/errors/{error_for(result, 'registry.py', 8)}.html"
    assert (top["path"], top["line"], top["score"]) == (
        "python/sglang/srt/mem_cache/registry.py",
        8,
        1.0,
    )
    assert payload["pasted"][0]["frames"][-1]["line"] == 8


def test_cli_lookup_no_match_prints_candidates(sample, tmp_path: Path, capsys) -> None:
    out = tmp_path / "out"
    publish(sample[1], out)
    assert cli.main(["lookup", "--out", str(out), "retraction is not supported here"]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "no card matches this well; the closest candidates:"
    assert "Host-pool retraction does not support" in lines[1]
    assert cli.main(["lookup", "--out", str(tmp_path / "missing"), "x"]) == 2
    assert "no mined records here (manifest.json missing)" in capsys.readouterr().err


# ---- Pastes in every form: collectors' prefixes, frames, reworded messages. ----

from miner.lookup import Card, SiteRef  # noqa: E402

QUANT = "python/sglang/srt/layers/quantization/base_config.py"
HIRADIX = "python/sglang/srt/mem_cache/hiradix_cache.py"
MM = "python/sglang/srt/managers/mm_utils.py"
SCHED = "python/sglang/srt/managers/scheduler.py"


def _card(error_id, exception, parts, sites) -> Card:
    parts = tuple(parts)
    message = "".join(p.text if p.expr is None else "{" + p.expr + "}" for p in parts) or None
    return Card(error_id, exception, message, parts, message or error_id, tuple(sites))


def _site(path, line, scope, code, kind="raise", end=None) -> SiteRef:
    return SiteRef(path, line, end or line, scope, kind, code)


KINDS_INDEX = LookupIndex(
    [
        _card(
            "quant",
            "ValueError",
            [T("Cannot find any of "), T(expr="keys"), T(" in the model's quantization config.")],
            [_site(QUANT, 120, "QuantizationConfig.get_from_keys", "raise ValueError(")],
        ),
        _card(
            "hiradix",
            "ValueError",
            [T("HiRadixCache only supports MHA, MLA, DSA, and MSA models")],
            [_site(HIRADIX, 98, "HiRadixCache.__init__", "raise ValueError(", end=100)],
        ),
        _card(
            "hiradix-page",
            "ValueError",
            [T("HiRadixCache needs page_size > 0, got "), T(expr="page_size")],
            [_site(HIRADIX, 90, "HiRadixCache.__init__", "raise ValueError(", end=92)],
        ),
        _card(
            "mm",
            "RuntimeError",
            [
                T("Insufficient multimodal embedding length:\nnum_mm_tokens_in_input_ids="),
                T(expr="a"),
                T("\nvs num_mm_tokens_in_embedding="),
                T(expr="b"),
                T(".\nThis is an internal error"),
            ],
            [_site(MM, 700, "embed_mm_inputs", "raise RuntimeError(", end=705)],
        ),
        _card(
            "cp",
            "ValueError",
            [T("Context parallel only supports single machine (tp_size <= 8)")],
            [
                _site(SCHED, 50, "Scheduler.__init__", 'raise ValueError("Context parallel only")'),
                _site(
                    SCHED, 900, "Scheduler.check_cp", 'raise ValueError("Context parallel only")'
                ),
            ],
        ),
        _card(
            "assert-lens",
            "AssertionError",
            [],
            [_site(SCHED, 402, "Scheduler.step", "assert len(reqs) == len(out)", "assert")],
        ),
        _card(
            "assert-other",
            "AssertionError",
            [],
            [_site(SCHED, 410, "Scheduler.step", "assert batch is not None", "assert")],
        ),
        _card(
            "leak",
            "ValueError",
            [T("pool memory leak detected! "), T(expr='"\\n".join(messages)')],
            [_site(SCHED, 4525, "Scheduler.idle", "self.invariant_checker._report_leak(", "call")],
        ),
    ]
)

MM_MESSAGE = [
    "RuntimeError: Insufficient multimodal embedding length:",
    "num_mm_tokens_in_input_ids=16325",
    "vs num_mm_tokens_in_embedding=5391.",
    "This is an internal error",
]
HIRADIX_TRACEBACK = """\
Traceback (most recent call last):
  File "/usr/lib/python3.12/site-packages/sglang/srt/managers/scheduler.py", line 311, in __init__
    self.tree_cache = HiRadixCache(params)
  File "/usr/lib/python3.12/site-packages/sglang/srt/mem_cache/hiradix_cache.py", line 84, in __init__
    raise ValueError(
ValueError: HiRadixCache only supports MHA, MLA, and NSA (DSA) models
"""  # noqa: E501
ASSERT_TRACEBACK = """\
Traceback (most recent call last):
  File "/opt/sglang/python/sglang/srt/managers/scheduler.py", line 380, in step
    assert len(reqs) == len(out)
           ^^^^^^^^^^^^^^^^^^^^^
AssertionError
"""


@pytest.mark.parametrize(
    ("paste", "expected", "low"),
    [
        # End punctuation missing, or added.
        (
            "ValueError: Cannot find any of ['quant_method'] in the model's quantization config",
            "quant",
            0.8,
        ),
        ("HiRadixCache only supports MHA, MLA, DSA, and MSA models.", "hiradix", 0.85),
        # Collectors' prefixes on every line.
        ("\n".join(f"sglang_service-1  | {line}" for line in MM_MESSAGE), "mm", 0.85),
        (
            "\n".join(f"Nov 30 10:12:44 gpu-7 python[1234]: {line}" for line in MM_MESSAGE),
            "mm",
            0.85,
        ),
        ("\n".join(f"sglang-7d9f8c-x2k sglang {line}" for line in MM_MESSAGE), "mm", 0.85),
        ("\n".join(f"[2026-08-23 09:11:04 TP6 EP6] {line}" for line in MM_MESSAGE), "mm", 0.85),
        # A reworded message: the frame's file, function and source line decide.
        (HIRADIX_TRACEBACK, "hiradix", 0.5),
        # A bare assert: its source line under a frame of its file and function.
        (ASSERT_TRACEBACK, "assert-lens", 0.85),
        # The exception in the middle of a log line; words before the message.
        (
            "[2026-11-30 10:12:44 TP0] Scheduler hit an exception: ValueError: Context parallel"
            " only supports single machine (tp_size <= 8)",
            "cp",
            0.85,
        ),
        (
            "[2026-11-30 10:12:44 TP0] Scheduler hit an exception: Context parallel only supports"
            " single machine (tp_size <= 8)...",
            "cp",
            0.85,
        ),
        # A logger's name is no exception type.
        (
            "2026-11-30 10:12:44,123 ERROR sglang.srt.managers.scheduler: Context parallel only"
            " supports single machine (tp_size <= 8)",
            "cp",
            0.85,
        ),
        # path:line, as the site's search box reads it.
        ("python/sglang/srt/managers/scheduler.py:4525", "leak", 0.9),
        ("sglang/srt/managers/scheduler.py:402", "assert-lens", 0.9),
    ],
)
def test_paste_forms(paste: str, expected: str, low: float) -> None:
    matches = KINDS_INDEX.search(paste)
    assert matches[0].card.error_id == expected, [(m.card.error_id, m.score) for m in matches]
    assert matches[0].score >= low
    assert len(matches) == 1 or matches[1].score < matches[0].score


def test_frames_choose_the_site_of_a_shared_message() -> None:
    paste = (
        "Traceback (most recent call last):\n"
        '  File "/x/sglang/srt/managers/scheduler.py", line 951, in check_cp\n'
        '    raise ValueError("Context parallel only")\n'
        "ValueError: Context parallel only supports single machine (tp_size <= 8)\n"
    )
    (best, *_) = KINDS_INDEX.search(paste)
    assert (best.card.error_id, best.site.line, best.score) == ("cp", 900, 1.0)


def test_an_unrelated_frame_line_pins_nothing() -> None:
    # scheduler.py:402 is the assert's line, but this frame is not where the
    # exception was raised, runs another function and shows another line.
    paste = (
        "Traceback (most recent call last):\n"
        '  File "/x/sglang/srt/managers/scheduler.py", line 402, in __init__\n'
        "    self.init_cache_with_memory_pool()\n"
        '  File "/x/torch/cuda/memory.py", line 12, in alloc\n'
        "    raise OutOfMemoryError(msg)\n"
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n"
    )
    assert all(m.score < GOOD for m in KINDS_INDEX.search(paste))
    # The same line number as the innermost frame, in another function: nothing either.
    moved = ASSERT_TRACEBACK.replace("line 380, in step", "line 402, in run").replace(
        "assert len(reqs) == len(out)", "assert self.ready"
    )
    assert all(m.score < GOOD for m in KINDS_INDEX.search(moved))


def test_several_blocks_each_parsed() -> None:
    paste = (
        "[2026-11-30 10:12:44 TP0] Scheduler hit an exception: "
        + HIRADIX_TRACEBACK
        + "[2026-11-30 10:12:45 TP1] Scheduler hit an exception: Traceback (most recent call"
        " last):\n"
        '  File "/usr/lib/python3.12/site-packages/sglang/srt/managers/scheduler.py", line 3'
    )
    raised = parse_paste(paste)
    assert [r.exception for r in raised] == [None, "ValueError"]
    assert raised[1].frames[-1] == Frame(
        "/usr/lib/python3.12/site-packages/sglang/srt/mem_cache/hiradix_cache.py", 84, "__init__"
    )
    assert raised[1].frames[-1].code == "raise ValueError("
    assert KINDS_INDEX.search(paste)[0].card.error_id == "hiradix"


@pytest.mark.parametrize(
    ("lines", "expected"),
    [
        (["svc-1  | a", "svc-1  | b"], ["a", "b"]),
        (["pod-7f9 main a b", "pod-7f9 main c"], ["a b", "c"]),
        # A message's own words are never taken.
        (["The value is wrong", "The value is right"], None),
        (["only one line"], None),
        (["    indented", "    code"], None),
    ],
)
def test_strip_common_prefix(lines: list[str], expected: list[str] | None) -> None:
    from miner.lookup import strip_common_prefix

    assert strip_common_prefix(lines) == (expected if expected is not None else lines)


@pytest.mark.parametrize(
    ("line", "stripped"),
    [
        ("sglang_service-1  | RuntimeError: x", "RuntimeError: x"),
        ("sglang_1  | boom", "boom"),
        ("Nov 30 10:12:44 gpu-7 python[1234]: boom", "boom"),
        ("ERROR sglang.srt.managers.scheduler: boom", "boom"),
        ("sglang.srt.errors.ConfigError: boom", "sglang.srt.errors.ConfigError: boom"),
        ("a | b", "a | b"),
    ],
)
def test_collector_prefixes(line: str, stripped: str) -> None:
    assert strip_prefixes(line) == stripped
