"""The card linter on a tiny output folder: one card per defect, clean cards beside them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from miner.analysis.config import Condition, ConfigModel, Derived, EnvVar, Option
from miner.checks import (
    DEFECTS,
    CardReport,
    check_cards,
    config_from_json,
    format_report,
    normalized,
    or_parts,
    parse_card,
    reader_words,
    switch_flags,
    valued_switches,
)

LONG = "The pool lease cannot be cancelled because the generation moved on meanwhile"


def guard(kind: str, test: str, negated: bool = False) -> dict[str, Any]:
    return {"kind": kind, "test": test, "negated": negated, "line": 3}


def record(
    eid: str,
    message: str | None,
    guards: list[dict[str, Any]],
    *,
    audience: str | None = "internal",
    source: str | None = None,
    kind: str = "raise",
) -> dict[str, Any]:
    site = {
        "error_id": eid,
        "site_id": eid,
        "path": "pkg/core/engine.py",
        "line": 5,
        "end_line": 5,
        "kind": kind,
        "exception": "ValueError",
        "message": message,
        "message_parts": [{"text": message}] if message else [],
        "message_kind": "literal" if message else ("dynamic" if source else "none"),
        "message_style": "literal" if message else "expression",
        "message_source": source or (repr(message) if message else None),
        "cause": None,
        "reraise": False,
        "reraised": [],
        "scope": "Engine.run",
        "guards": guards,
        "excerpt": {"start_line": 5, "end_line": 5, "text": "raise ValueError(...)"},
        "parser": "libcst",
        "url": "https://example.invalid",
    }
    out: dict[str, Any] = {
        "error_id": eid,
        "exception": "ValueError",
        "message": message,
        "message_parts": site["message_parts"],
        "message_kind": site["message_kind"],
        "title": "",
        "sites": [site],
    }
    if audience is not None:
        out["audience"] = audience
    return out


def card_text(
    title: str,
    meaning: str,
    trigger: str,
    solutions: list[str],
    fix: str = "x = 1",
) -> str:
    numbered = "\n".join(f"{i}. {s}" for i, s in enumerate(solutions, 1))
    return (
        "acme/pkg · error · ValueError\n\n"
        f"# {title}\n\n"
        "## Error message\n\n```text\nboom\n```\n\n"
        "## Source\n\nThrown at `pkg/core/engine.py:5` in `Engine.run`\n\n"
        "```python\nif not (not x):\n    raise ValueError('boom')\n```\n\n"
        f"## What it means\n\n{meaning}\n\n"
        f"## When it happens\n\n{trigger}\n\nCommon situations:\n\n- Any run.\n\n"
        f"## Solutions\n\n{numbered}\n\n"
        f"## Example fix\n\n```python\n# before\n{fix}\n```\n\n"
        "## Related errors\n\nNo other error was mined from this commit.\n\n---\n\nFooter.\n"
    )


NO_FLAG = (
    "No flag or environment variable is involved: the code checks `x`; these depend on "
    "the inputs, the model or the state at run time."
)


def trig(*bullets: str) -> str:
    return "Raised at `pkg/core/engine.py:5` in `Engine.run`, when:\n\n" + "\n".join(
        f"- {b} (line 3)" for b in bullets
    )


#: error id -> (audience, record arguments, card arguments, defects the card has)
CARDS: dict[str, tuple[dict[str, Any], dict[str, Any], set[str]]] = {
    "clean1": (
        {"message": "Clean error one", "guards": [guard("if", "x")], "audience": "user-setting"},
        {
            "title": "Clean error one",
            "meaning": "`ValueError`: bad. Here it is raised in `Engine.run` when `x` is true.",
            "trigger": trig("`x` is true"),
            "solutions": ["Pass `--tp-size` with a smaller value."],
        },
        set(),
    ),
    "clean2": (
        {"message": "Clean error two", "guards": [guard("if", "y")], "audience": "user-setting"},
        {
            "title": "Clean error two",
            "meaning": "`ValueError`: bad. Here it is raised in `Engine.go` when `y` is true.",
            "trigger": trig("`y` is true"),
            "solutions": ["Drop `--enable-x` (it is off by default)."],
        },
        set(),
    ),
    "negfalse": (
        {"message": "Not ready", "guards": [guard("if", "not ready")]},
        {
            "title": "Not ready",
            "meaning": "`ValueError`: bad. Here it is raised in `Engine.run` when `not ready` "
            "is false.",
            "trigger": trig("`not ready` is false"),
            "solutions": ["Make sure `ready` holds."],
        },
        {"double-negation"},
    ),
    "isnotnone": (
        {"message": "No pool", "guards": [guard("assert", "pool is not None", True)]},
        {
            "title": "No pool",
            "meaning": "`ValueError`: bad. Here it is raised in `Engine.run` when "
            "`pool is not None` does not hold.",
            "trigger": trig("`pool is not None` does not hold"),
            "solutions": ["Make sure `pool is not None` holds."],
            "fix": "not (not (pool is not None))",
        },
        {"double-negation", "fix-double-negation"},
    ),
    "guardlist": (
        {"message": "Merged layer", "guards": [guard("if", "not layer.merged", True)]},
        {
            "title": "Merged layer",
            "meaning": "`ValueError`: bad. Here it is raised in `Engine.run` when `layer.merged` "
            "is true.",
            "trigger": trig("`layer.merged` is true")
            + "\n\nGuards, outermost first:\n\n1. `not (not layer.merged)` (line 3)",
            "solutions": ["Make sure `layer.merged` is false."],
        },
        {"double-negation"},
    ),
    "orjoined": (
        {"message": "Bad lease", "guards": [guard("if", "lease is None or gen != old")]},
        {
            "title": "Bad lease",
            "meaning": "`ValueError`: bad. Here it is raised in `Engine.run` when `lease is None` "
            "holds and `gen != old` holds.",
            "trigger": trig("any of: `lease is None` holds; `gen != old` holds"),
            "solutions": ["Check the lease."],
        },
        {"or-as-and"},
    ),
    "orbullets": (
        {"message": "Bad sizes", "guards": [guard("assert", "a and b", True)]},
        {
            "title": "Bad sizes",
            "meaning": "`ValueError`: bad. Here it is raised in `Engine.run` when any of "
            "`a`, `b` is false.",
            "trigger": trig("`a` is false", "`b` is false"),
            "solutions": ["Check the sizes."],
        },
        {"or-as-and"},
    ),
    "orclean": (
        {"message": "Bad mode", "guards": [guard("if", "a or b")]},
        {
            "title": "Bad mode",
            "meaning": "`ValueError`: bad. Here it is raised in `Engine.run` when any of: "
            "`a` is true; `b` is true.",
            "trigger": trig("any of: `a` is true; `b` is true"),
            "solutions": ["Check the mode: `a` and `b` must both be false."],
        },
        set(),
    ),
    "uncond": (
        {"message": "Cannot read", "guards": [guard("except", "OSError")]},
        {
            "title": "Cannot read",
            "meaning": '`ValueError`: bad. Its docstring: "Reads." It reads a file.',
            "trigger": "Raised at `pkg/core/engine.py:5` in `Engine.run`, every time this "
            "line is reached: no condition guards it.",
            "solutions": ["Check the file."],
        },
        {"unconditional-claim"},
    ),
    "uncondtry": (
        {"message": "Cannot parse", "guards": [guard("try", "")]},
        {
            "title": "Cannot parse",
            "meaning": "`ValueError`: bad. It parses a file.",
            "trigger": "Raised at `pkg/core/engine.py:5` in `Engine.run`, every time this "
            "line is reached: no condition guards it.",
            "solutions": ["Check the input."],
        },
        set(),
    ),
    "noflagenv": (
        {"message": "Set PKG_DEBUG to 0 first", "guards": [guard("if", "x")]},
        {
            "title": "Set PKG_DEBUG to 0 first",
            "meaning": "`ValueError`: bad. Here it is raised in `Engine.run` when `x` is true.",
            "trigger": trig("`x` is true") + "\n\n" + NO_FLAG,
            "solutions": ["Check `x`."],
        },
        {"no-flag-claim"},
    ),
    "noflagflag": (
        {"message": "Use --tp-size 2", "guards": [guard("if", "x")]},
        {
            "title": "Use --tp-size 2",
            "meaning": "`ValueError`: bad. Here it is raised in `Engine.run` when `x` is true.",
            "trigger": trig("`x` is true") + "\n\n" + NO_FLAG,
            "solutions": ["Check `x` here."],
        },
        {"no-flag-claim"},
    ),
    "noflagpip": (
        {"message": "Run pip install --upgrade foo; OTHER_VAR is ignored", "guards": []},
        {
            "title": "Run pip install --upgrade foo; OTHER_VAR is ignored",
            "meaning": "`ValueError`: bad. It is raised in `Engine.run`.",
            "trigger": NO_FLAG,
            "solutions": ["Upgrade foo."],
        },
        set(),
    ),
    "cutword": (
        {"message": LONG, "guards": [guard("if", "x")]},
        {
            "title": LONG[:60],
            "meaning": "`ValueError`: bad. Here it is raised in `Engine.run` when `q` is true.",
            "trigger": trig("`q` is true"),
            "solutions": ["Retry the lease."],
        },
        {"title-cut-mid-word"},
    ),
    "cutspace": (
        {"message": LONG, "guards": [guard("if", "x")]},
        {
            "title": LONG[:57],
            "meaning": "`ValueError`: bad. Here it is raised in `Engine.run` when `r` is true.",
            "trigger": trig("`r` is true"),
            "solutions": ["Retry the lease later."],
        },
        set(),
    ),
    "whenever": (
        {"message": "Always fails", "guards": []},
        {
            "title": "Always fails",
            "meaning": "`ValueError`: bad. Here it is raised whenever in `Engine.run` reaches "
            "this line.",
            "trigger": "Raised at `pkg/core/engine.py:5` in `Engine.run`.",
            "solutions": ["Do not call it."],
        },
        {"broken-sentence"},
    ),
    "twoparens": (
        {"message": "Debug on", "guards": [guard("if", "envs.PKG_DEBUG.get()")]},
        {
            "title": "Debug on",
            "meaning": "`ValueError`: bad. Here it is raised in `Engine.run` because the "
            'environment variable `PKG_DEBUG` is set (`Engine`: "Runs (fast) (always).").',
            "trigger": trig("the environment variable `PKG_DEBUG` is set"),
            "solutions": [
                "Unset `PKG_DEBUG` or set it to a false value (`PKG_DEBUG=0`) (default `False`)."
            ],
        },
        {"broken-sentence"},
    ),
    "variable": (
        {"message": None, "source": "err_msg", "guards": [guard("if", "failed")], "audience": None},
        {
            "title": "err_msg",
            "meaning": "`ValueError`: bad. Here it is raised in `Engine.run` when `failed` is "
            "true.",
            "trigger": trig("`failed` is true"),
            "solutions": ["Read `err_msg`."],
        },
        {"title-variable"},
    ),
}


def write_output(root: Path, cards: dict[str, tuple[dict[str, Any], dict[str, Any], set[str]]]):
    (root / "errors").mkdir(parents=True)
    (root / "api" / "errors").mkdir(parents=True)
    for eid, (rec, card, _) in cards.items():
        rec = dict(rec)
        message, guards = rec.pop("message"), rec.pop("guards")
        data = record(eid, message, guards, **rec)
        (root / "api" / "errors" / f"{eid}.json").write_text(json.dumps(data))
        (root / "errors" / f"{eid}.md").write_text(card_text(**card))
    manifest = {
        "commit": {"slug": "acme/pkg", "sha": "0123456789abcdef", "rev": "v1"},
        "counts": {"errors": len(cards)},
    }
    (root / "manifest.json").write_text(json.dumps(manifest))
    config = {
        "classes": ["ServerArgs"],
        "entry_point": None,
        "accessors": [],
        "options": [
            {
                "name": "tp_size",
                "flags": ["--tp-size"],
                "owner": "ServerArgs",
                "path": "pkg/server_args.py",
                "line": 3,
                "source": "dataclass",
                "type": "int",
                "default": "1",
                "choices": None,
                "help": None,
                "action": None,
                "deprecated_for": None,
                "namespace": None,
                "module": "pkg.server_args",
            }
        ],
        "derived": [],
        "env": [{"name": "PKG_DEBUG", "kind": "bool", "default": "False", "path": "pkg/env.py"}],
    }
    (root / "config.json").write_text(json.dumps(config))


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> CardReport:
    root = tmp_path_factory.mktemp("out")
    write_output(root, CARDS)
    return check_cards(root)


def test_defect_counts_and_examples(report: CardReport) -> None:
    expected: dict[str, list[str]] = {name: [] for name in DEFECTS}
    for eid in sorted(CARDS):
        for name in CARDS[eid][2]:
            expected[name].append(eid)
    assert [d.name for d in report.defects] == list(DEFECTS)
    assert {d.name: list(d.examples) for d in report.defects} == expected
    assert {d.name: d.count for d in report.defects} == {
        "double-negation": 3,
        "fix-double-negation": 1,
        "or-as-and": 2,
        "unconditional-claim": 1,
        "no-flag-claim": 2,
        "title-cut-mid-word": 1,
        "broken-sentence": 2,
        "title-variable": 1,
    }
    assert report.has_defects
    assert report.cards == len(CARDS) == 18


def test_figures_per_audience(report: CardReport) -> None:
    assert report.commit == "acme/pkg@0123456789 (v1)"
    assert report.audience_source == "json+classified"
    # the card without an audience key is classified from its record: a raise
    # whose message is computed from a variable, under a guard that reads nothing
    assert [a.audience for a in report.audiences] == ["internal", "user-setting", "all"]
    setting = report.figures("user-setting")
    assert (setting.cards, setting.same_meaning, setting.same_solutions) == (2, 2, 0)
    assert setting.meaning_share == 1.0
    internal = report.figures("internal")
    assert internal.cards == 16
    everything = report.figures("all")
    assert everything.cards == 18
    # "... when `x` is true." with other code: clean1, clean2, guardlist,
    # noflagenv, noflagflag, cutword, cutspace, variable; "Make sure `ready`
    # holds." and "Make sure `pool is not None` holds." are one Solutions list
    assert everything.same_meaning == 8
    assert internal.same_meaning == 6
    assert (everything.same_solutions, internal.same_solutions) == (2, 2)


def test_clean_folder_has_no_defects(tmp_path: Path) -> None:
    clean = {k: v for k, v in CARDS.items() if not v[2]}
    write_output(tmp_path, clean)
    report = check_cards(tmp_path)
    assert report.cards == len(clean) == 6
    assert not report.has_defects
    assert all(d.count == 0 and d.examples == () for d in report.defects)
    assert format_report(report).endswith("no defects\n")


def test_folder_without_records_counts_under_all(tmp_path: Path) -> None:
    (tmp_path / "errors").mkdir()
    (tmp_path / "errors" / "a.md").write_text(card_text("A", "Same `x`.", "T", ["S `y`."]))
    (tmp_path / "errors" / "b.md").write_text(card_text("B", "Same `z`.", "T", ["S `w`."]))
    report = check_cards(tmp_path)
    assert report.audience_source == "none"
    assert [(a.audience, a.cards, a.same_meaning, a.same_solutions) for a in report.audiences] == [
        ("all", 2, 2, 2)
    ]
    assert report.commit == ""
    assert not report.has_defects


def test_format_report(report: CardReport) -> None:
    text = format_report(report)
    head = f"Cards in {report.out_dir} (acme/pkg@0123456789 (v1)): 18;"
    assert text.startswith(head + " audiences from json+classified\n")
    assert "user-setting         2       2 100.0%       0   0.0%        0   0.0%" in text
    # no card of the fixture cites a comment, help text or docstring by path:line
    assert (
        "User-facing cards (dependency, unsupported, user-input, user-setting) whose What "
        "it means cites evidence: 0.0%" in text
    )
    assert report.evidence_share(["user-setting"]) == 0.0
    assert report.to_json()["audiences"][1]["with_evidence"] == 0
    assert "or-as-and                 2  an OR condition told as AND (orbullets, orjoined)" in text
    assert text.endswith("defects found\n")
    assert report.to_json()["defects"][0] == {
        "name": "double-negation",
        "description": "double negation in the prose",
        "count": 3,
        "examples": ["guardlist", "isnotnone", "negfalse"],
    }


def test_parse_card_keeps_fences_whole() -> None:
    text = card_text("T", "M `a`.", "W", ["S."], fix="## not a heading\nx")
    card = parse_card("e", text)
    assert card.title == "T"
    assert list(card.sections) == [
        "Error message",
        "Source",
        "What it means",
        "When it happens",
        "Solutions",
        "Example fix",
        "Related errors",
    ]
    assert "## not a heading" in card.sections["Example fix"]
    assert normalized(card.sections["What it means"]) == "M `…`."


@pytest.mark.parametrize(
    ("g", "parts"),
    [
        (guard("if", "a or b.c(d, e)"), ["a", "b.c(d, e)"]),
        (guard("if", "a or b", negated=True), []),
        (guard("assert", "a and  b", negated=True), ["a", "b"]),
        (guard("if", "a and b"), []),
        (guard("if", "(a or b) and c"), []),
        (guard("except", "A or B"), []),
        (guard("if", "a or"), []),
    ],
)
def test_or_parts(g: dict[str, Any], parts: list[str]) -> None:
    assert or_parts(g) == parts


def test_config_from_json_round_trip() -> None:
    config = ConfigModel(
        options=(Option("mode", ("--mode",), "Args", "a.py", 3, "argparse", choices=("x", "y")),),
        derived=(
            Derived("fast", "Args", "a.py", 9, "a.mode == 'x'", (Condition("mode", "==", ("x",)),)),
        ),
        env=(EnvVar("APP_HOME", "str", None, "a.py", 4, 1),),
        classes=("Args",),
        accessors=(("get_args", ""),),
        entry_point="app",
    )
    back = config_from_json(json.loads(json.dumps(config.to_json())))
    assert back == config


def _switch(name: str, flag: str, action: str, default: str | None) -> dict[str, Any]:
    return {
        "name": name,
        "flags": [flag],
        "owner": "ServerArgs",
        "path": "pkg/server_args.py",
        "line": 3,
        "source": "argparse",
        "action": action,
        "default": default,
    }


#: error id -> (analysis of the record, sections the card leaves out)
READER: dict[str, tuple[dict[str, Any], tuple[str, ...]]] = {
    "fixed": (
        {
            "solutions": ["Drop `--enable-x`."],
            "solution_kinds": ["fix"],
            "example_fix": {
                "language": "shell",
                "before": "run ... --enable-x VALUE --dcp=1",
                "after": "run ... --tp-size 2 --no-dcp",
                "kind": "flag",
            },
        },
        (),
    ),
    "bare": (
        {"solutions": [], "solution_kinds": [], "example_fix": None},
        ("Solutions", "Example fix"),
    ),
    "restated": (
        {
            "solutions": ["It is not raised when `x` is false."],
            "solution_kinds": ["condition"],
            "example_fix": {
                "language": "python",
                "before": "x",
                "after": "not x",
                "kind": "condition",
            },
        },
        (),
    ),
    "older": ({"solutions": ["Check `x`."], "example_fix": None}, ("Example fix",)),
}


def _without(text: str, sections: tuple[str, ...]) -> str:
    for name in sections:
        head, _, rest = text.partition(f"## {name}\n")
        text = head + rest[rest.index("## ") :]
    return text


def test_reader_figures_from_the_records_kinds(tmp_path: Path) -> None:
    (tmp_path / "errors").mkdir()
    (tmp_path / "api" / "errors").mkdir(parents=True)
    for eid, (analysis, left_out) in READER.items():
        data = {
            **record(eid, "boom", [guard("if", "x")], audience="user-setting"),
            "analysis": analysis,
        }
        (tmp_path / "api" / "errors" / f"{eid}.json").write_text(json.dumps(data))
        text = card_text(eid, "Why.", "When.", ["S."])
        (tmp_path / "errors" / f"{eid}.md").write_text(_without(text, left_out))
    options = [
        _switch("enable_x", "--enable-x", "store_true", "False"),
        _switch("dcp", "--dcp", "argparse.BooleanOptionalAction", "None"),
        {**_switch("tp_size", "--tp-size", "store", "1"), "action": None},
    ]
    (tmp_path / "config.json").write_text(json.dumps({"options": options}))
    (tmp_path / "manifest.json").write_text(json.dumps({"commit": {}}))
    report = check_cards(tmp_path)
    setting, everything = report.reader
    assert setting.to_json() == {
        **everything.to_json(),
        "audience": "user-setting",
    }
    assert (setting.cards, setting.restating_examples, setting.only_condition) == (4, 1, 1)
    assert (setting.kinds_unknown, setting.valued_switches) == (1, 2)  # --enable-x VALUE, --dcp=1
    assert dict(setting.left_out) == {
        "Error message": 0,
        "What it means": 0,
        "Source": 0,
        "Solutions": 1,
        "Example fix": 2,
        "When it happens": 0,
        "Related errors": 0,
    }
    assert setting.only_condition_share == 0.25 and not setting.within_limits
    assert report.has_defects and not any(d.count for d in report.defects)
    words = sorted(
        reader_words(parse_card(e, (tmp_path / "errors" / f"{e}.md").read_text())) for e in READER
    )
    assert (setting.median_words, setting.p90_words) == ((words[1] + words[2]) / 2, words[3])
    assert report.to_json()["reader"][0]["left_out_share"]["Example fix"] == 0.5
    text = format_report(report)
    assert "What a reader sees" in text and text.endswith("defects found\n")


def test_switch_flags_and_values() -> None:
    config = config_from_json(
        {
            "options": [
                _switch("a", "--a", "store_true", None),
                _switch("b", "--b", "argparse.BooleanOptionalAction", None),
                _switch("c", "--c", "StoreBoolean", "False"),
                _switch("d", "--shared", "store_true", None),
                _switch("e", "--shared", "StoreBoolean", None),
            ]
        }
    )
    assert switch_flags(config) == {"--a", "--b", "--no-b"}
    fix = {
        "language": "shell",
        "before": "run ... --a --b",
        "after": "run ... --no-b x --c true --a",
    }
    assert valued_switches({"analysis": {"example_fix": fix}}, switch_flags(config)) == 1
    python = {**fix, "language": "python"}
    assert valued_switches({"analysis": {"example_fix": python}}, switch_flags(config)) == 0


@pytest.mark.parametrize(
    ("action", "default", "given"),
    [
        ("store_true", None, {"True": "--x", "False": "", "None": None, "VALUE": "--x"}),
        ("store_true", "None", {"True": "--x", "False": None, "None": "", "VALUE": "--x"}),
        ("store_false", None, {"True": "", "False": "--x", "None": None, "VALUE": "--x"}),
        (
            "argparse.BooleanOptionalAction",
            "None",
            {"True": "--x", "False": "--no-x", "None": "", "VALUE": "--x"},
        ),
        (
            "argparse.BooleanOptionalAction",
            "True",
            {"True": "--x", "False": "--no-x", "None": None, "VALUE": "--x"},
        ),
        ("StoreBoolean", "False", {"True": "--x True", "False": "--x False", "VALUE": "--x VALUE"}),
        (None, "1", {"2": "--x 2", "VALUE": "--x VALUE"}),
    ],
)
def test_a_switch_is_never_given_a_value(
    action: str | None, default: str | None, given: dict[str, str | None]
) -> None:
    opt = Option("x", ("--x",), "S", "p.py", 1, "argparse", action=action, default=default)
    assert {value: opt.given(value) for value in given} == given
