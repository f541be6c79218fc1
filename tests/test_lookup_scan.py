"""The paste scanner of `miner lookup` (miner/lookup/scan.py and its steps):
log prefixes on long lines, JSON string values, wrapped lines, traceback
blocks complete or cut at either end, indented exception lines, and frames
of files that moved; on fixture cards (the real release: test_lookup_table.py).
"""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from miner.lookup import (
    GOOD,
    MAX_MESSAGE,
    MAX_PREFIX,
    Card,
    Frame,
    LookupIndex,
    SiteRef,
    json_strings,
    parse_paste,
    strip_prefixes,
)
from miner.lookup import prefixes as prefix_module
from miner.lookup.jsonvalues import python_string
from miner.model import MessagePart
from miner.publish.patterns import PREFIX_PATTERNS

T = MessagePart
SP = "/usr/lib/python3.12/site-packages/sglang"
COMPONENTS = "python/sglang/srt/mem_cache/unified_cache/components"
SCHED = "python/sglang/srt/managers/scheduler.py"


def _card(error_id: str, exception: str, parts: list[MessagePart], sites: list[SiteRef]) -> Card:
    message = "".join(p.text if p.expr is None else "{" + p.expr + "}" for p in parts) or None
    return Card(error_id, exception, message, tuple(parts), message or error_id, tuple(sites))


def _site(path: str, line: int, scope: str, code: str, kind: str = "raise") -> SiteRef:
    return SiteRef(path, line, line, scope, kind, code)


INDEX = LookupIndex(
    [
        _card(
            "cutedsl",
            "ValueError",
            [
                T(
                    "CuteDSL MLA backend is only supported on Blackwell GPUs (SM100). "
                    "Please use a different backend."
                )
            ],
            [
                _site(
                    "python/sglang/srt/server_args.py", 900, "ServerArgs.check", "raise ValueError("
                )
            ],
        ),
        _card(
            "cp",
            "ValueError",
            [T("Context parallel only supports single machine (tp_size <= 8)")],
            [_site(SCHED, 50, "Scheduler.__init__", 'raise ValueError("Context parallel only")')],
        ),
        _card(
            "page",
            "ValueError",
            [T("HiRadixCache needs page_size > 0, got "), T(expr="page_size")],
            [
                _site(
                    "python/sglang/srt/mem_cache/hiradix_cache.py", 90, "HiRadixCache.__init__", "x"
                )
            ],
        ),
        _card(
            "mamba-assert",
            "AssertionError",
            [],
            [
                _site(
                    f"{COMPONENTS}/mamba_component.py",
                    93,
                    "MambaComponent._dec_session_coverage",
                    "assert node.mamba_value is not None",
                    "assert",
                )
            ],
        ),
        _card(
            "swa-assert",
            "AssertionError",
            [],
            [
                _site(
                    f"{COMPONENTS}/swa_component.py",
                    122,
                    "SWAComponent._dec_session_coverage",
                    "assert node.swa_lock_ref > 0",
                    "assert",
                )
            ],
        ),
    ]
)


def top(paste: str) -> tuple[str, float] | None:
    found = INDEX.search(paste)
    return (found[0].card.error_id, found[0].score) if found else None


def good_ids(paste: str) -> list[str]:
    return [m.card.error_id for m in INDEX.search(paste) if m.good]


# ---- Kind 6: log prefixes on long lines. ----

#: The bracket pattern as it was before issue 35: quadratic without a "]".
OLD_BRACKET = (
    r"^\[[^\]\n]*(?:\d{4}-\d\d-\d\d|\d\d:\d\d:\d\d|\b(?:TP|DP|PP|EP|CP|RANK)\d+\b)[^\]\n]*\] ?"
)


@settings(max_examples=600, deadline=None)
@given(st.text(alphabet="[] TP0DR1AN-:2\n", max_size=40))
def test_bracket_prefix_pattern_matches_what_it_matched(line: str) -> None:
    """The linear pattern takes the same text as the quadratic one it replaced."""
    old = re.match(OLD_BRACKET, line)
    new = re.match(PREFIX_PATTERNS[0], line)
    assert (old.group() if old else None) == (new.group() if new else None)


class Recording:
    """A compiled pattern that records the length of every text it reads."""

    def __init__(self, pattern: re.Pattern[str], seen: list[int]) -> None:
        self.pattern, self.seen = pattern, seen

    def sub(self, repl: str, text: str, count: int = 0) -> str:
        self.seen.append(len(text))
        return self.pattern.sub(repl, text, count=count)


def test_prefix_patterns_read_at_most_max_prefix_characters(monkeypatch) -> None:
    seen: list[int] = []
    recording = tuple(Recording(p, seen) for p in prefix_module.PREFIXES)
    monkeypatch.setattr(prefix_module, "PREFIXES", recording)
    line = "[" + "TP0 " * 262_144  # a megabyte, no closing bracket
    assert strip_prefixes(line) == line
    tail = "x" * 1_000_000
    assert strip_prefixes(f"[2026-01-01 10:00:00 TP0] ERROR: {tail}") == tail
    assert seen and max(seen) <= MAX_PREFIX


def test_a_megabyte_line_is_read_up_to_the_longest_message() -> None:
    raised = parse_paste("[" + "TP0 " * 262_144)
    assert raised and all(len(text) <= MAX_MESSAGE for r in raised for text in r.messages)
    assert all(m.score < GOOD for m in INDEX.search("[" + "TP0 " * 262_144))


# ---- Kind 1: tracebacks cut at either end, and the log line before one. ----

CUT_AFTER_LOG_LINE = f"""\
[2025-08-12 08:24:37] Error in request: Context parallel only supports single machine (tp_size <= 8)
Traceback (most recent call last):
  File "{SP}/srt/entrypoints/http_server.py", line 612, in generate_request
    ret = await _global_state.tokenizer_manager.generate_request(obj, request).__anext__()
  File "{SP}/srt/managers/tokenizer_manager.py", line 498, in generate_request
"""


def test_message_on_a_log_line_before_a_traceback_cut_before_its_exception() -> None:
    block, *plain = parse_paste(CUT_AFTER_LOG_LINE)
    assert (block.exception, block.messages, block.role) == (None, (), "final")
    assert [f.line for f in block.frames] == [612, 498]
    assert (None, ("Context parallel only supports single machine (tp_size <= 8)",)) in [
        (r.exception, r.messages) for r in plain
    ]
    assert top(CUT_AFTER_LOG_LINE) == ("cp", 0.9)


HEADLESS = f"""\
  File "{SP}/srt/mem_cache/hiradix_cache.py", line 423, in __init__
    raise ValueError(f"HiRadixCache needs page_size > 0, got {{page_size}}")
ValueError: HiRadixCache needs page_size > 0, got 0
[2025-08-12 08:24:38 TP0] Scheduler hit an exception: Traceback (most recent call last):
  File "{SP}/srt/managers/scheduler.py", line 3712, in run_scheduler_process
    scheduler.event_loop_normal()
"""


def test_a_traceback_starting_mid_way_then_a_second_block() -> None:
    raised = parse_paste(HEADLESS)
    assert [(r.exception, r.role, len(r.frames)) for r in raised[:2]] == [
        (None, "final", 1),
        ("ValueError", "context", 1),
    ]
    assert raised[1].messages == ("HiRadixCache needs page_size > 0, got 0",)
    assert raised[1].frames == (Frame(f"{SP}/srt/mem_cache/hiradix_cache.py", 423, "__init__"),)
    best = INDEX.search(HEADLESS)[0]
    assert best.card.error_id == "page" and best.good and best.raised == 1


# ---- Kind 2: JSON string values. ----


def test_json_strings_reads_values_not_keys() -> None:
    text = (
        'INFO: 200 {"object": "error", "message": "a \\"quoted\\" \\u00e9\\nline",'
        ' "nested": {"deep": ["x", "y"]}, "code": 400} said "not json" {"cut": "to the end'
    )
    assert json_strings(text, 10) == ["error", 'a "quoted" é\nline', "x", "y"]
    assert json_strings(text, 2) == ["error", 'a "quoted" é\nline']
    assert json_strings('no braces "here"', 10) == []


def test_python_dict_reprs_are_read_too() -> None:
    text = "Error code: 400 - {'object': 'error', 'message': \"can't \\x41\\u00e9\", 'n': None}"
    assert json_strings(text, 10) == ["error", "can't Aé"]
    assert python_string("'a\\'b\\\\c\\q\\U0001f600'") == "a'b\\c\\q\U0001f600"


@pytest.mark.parametrize(
    "paste",
    [
        json.dumps(
            {"object": "error", "message": "HiRadixCache needs page_size > 0, got 0", "code": 400}
        ),
        "data: "
        + json.dumps(
            {
                "choices": [
                    {
                        "finish_reason": {
                            "type": "abort",
                            "message": "ValueError: HiRadixCache needs page_size > 0, got 0",
                        }
                    }
                ]
            }
        ),
        "2025-08-12 08:24:37 ERROR "
        + json.dumps(
            {
                "level": "ERROR",
                "exc_info": "Traceback (most recent call last):\n"
                f'  File "{SP}/srt/mem_cache/hiradix_cache.py", line 90, in __init__\n'
                "    x\nValueError: HiRadixCache needs page_size > 0, got 0",
            }
        ),
        "openai.BadRequestError: Error code: 400 - "
        + repr({"object": "error", "message": "HiRadixCache needs page_size > 0, got 0"}),
    ],
    ids=["http-body", "finish-reason", "log-record-traceback", "client-repr"],
)
def test_errors_inside_json_are_unwrapped(paste: str) -> None:
    best = INDEX.search(paste)[0]
    assert best.card.error_id == "page" and best.good


def test_json_values_are_read_a_bounded_number_of_times() -> None:
    """Values holding JSON holding values: at most MAX_JSON_VALUES in all."""
    inner = json.dumps({"message": "x" * 10})
    paste = json.dumps({str(n): json.dumps({"a": inner, "b": inner}) for n in range(200)})
    assert len(parse_paste(paste)) < 64 * 8


# ---- Kind 3: wrapped lines, fragments, indentation. ----

WRAPPED_OTHER = (
    "[2025-08-12 08:24:37 TP0] RuntimeError: FlashInfer TRTLLM-gen attention kernels need\n"
    "    Blackwell GPUs (SM100).\n"
    "[2025-08-12 08:24:37] Received sigquit from a child process.\n"
)


def test_a_wrapped_line_is_never_a_fragment_on_its_own() -> None:
    """The second line of a wrapped message no release raises is a piece of
    an unrelated message: no card is good. Pasted alone, it is a fragment."""
    assert good_ids(WRAPPED_OTHER) == []
    assert good_ids("Blackwell GPUs (SM100).") == ["cutedsl"]
    plain = parse_paste(WRAPPED_OTHER)
    assert "Blackwell GPUs (SM100)." not in [r.messages[-1] for r in plain]
    assert not any(r.alone for r in plain)


def test_wrapped_lines_are_joined_before_matching() -> None:
    paste = (
        "[2025-08-12 08:24:36 TP0] Load weight end.\n"
        "[2025-08-12 08:24:37 TP0] ValueError: CuteDSL MLA backend is only supported on\n"
        "        Blackwell GPUs (SM100). Please use a different backend.\n"
        "[2025-08-12 08:24:37] Received sigquit from a child process.\n"
    )
    best = INDEX.search(paste)[0]
    assert (best.card.error_id, best.score) == ("cutedsl", 0.92)
    assert best.reasons == (
        "message matches the template (100% literal)",
        "same exception type ValueError",
    )


@pytest.mark.parametrize(
    "paste",
    [
        # the whole traceback indented (a Markdown code block)
        "    Traceback (most recent call last):\n"
        f'      File "{SP}/srt/managers/scheduler.py", line 77, in start\n'
        "    ValueError: Context parallel only supports single machine (tp_size <= 8)\n",
        # the exception line indented like a source line
        "Traceback (most recent call last):\n"
        f'  File "{SP}/srt/managers/scheduler.py", line 77, in start\n'
        "    ValueError: Context parallel only supports single machine (tp_size <= 8)\n",
        # a statement over several lines (Python 3.13), then the exception indented
        "Traceback (most recent call last):\n"
        f'  File "{SP}/srt/managers/scheduler.py", line 77, in start\n'
        "    raise ValueError(\n"
        '        "Context parallel only"\n'
        "    )\n"
        "    ValueError: Context parallel only supports single machine (tp_size <= 8)\n",
    ],
    ids=["all-indented", "exception-indented", "multi-line-statement"],
)
def test_an_indent_does_not_stop_the_exception_type_being_read(paste: str) -> None:
    raised = parse_paste(paste)[0]
    assert raised.exception == "ValueError"
    assert raised.messages == ("Context parallel only supports single machine (tp_size <= 8)",)
    assert top(paste) == ("cp", 0.97)  # 0.9, +0.05 a frame in its file, +0.02 same type


# ---- Kind 4: frames of files that moved. ----


def assert_traceback(path: str, line: int, function: str, code: str) -> str:
    return (
        "Traceback (most recent call last):\n"
        f'  File "{SP}/srt/managers/scheduler.py", line 2801, in event_loop_normal\n'
        "    self.tree_cache.dec_lock_ref(node)\n"
        f'  File "{SP}/{path}", line {line}, in {function}\n'
        f"    {code}\n"
        "AssertionError\n"
    )


def test_a_bare_assert_in_a_moved_folder_is_found_by_function_and_source_line() -> None:
    moved = assert_traceback(
        "srt/mem_cache/unified_cache_components/mamba_component.py",
        116,
        "_dec_session_coverage",
        "assert node.mamba_value is not None",
    )
    best = INDEX.search(moved)[0]
    assert (best.card.error_id, best.score, best.site.line) == ("mamba-assert", 0.85, 93)
    assert best.reasons == (
        f"a traceback frame shows its line ({COMPONENTS}/mamba_component.py in "
        "MambaComponent._dec_session_coverage; the file moved)",
    )


@pytest.mark.parametrize(
    ("path", "function", "code"),
    [
        # another function of the file
        ("srt/mem_cache/unified_cache_components/mamba_component.py", "other", "assert x"),
        # a file of that name in an unrelated package
        (
            "../transformers/models/mamba/mamba_component.py",
            "_dec_session_coverage",
            "assert node.mamba_value is not None",
        ),
        # another source line
        (
            "srt/mem_cache/unified_cache_components/mamba_component.py",
            "_dec_session_coverage",
            "assert batch.size > 0",
        ),
    ],
    ids=["other-function", "other-package", "other-line"],
)
def test_a_moved_file_pins_only_its_function_and_line(path: str, function: str, code: str) -> None:
    assert good_ids(assert_traceback(path, 116, function, code)) == []
