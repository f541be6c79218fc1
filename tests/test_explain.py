"""``miner explain ERROR_ID``: one card in the terminal, found by id or unique
prefix, on a fixture repository mined once; hostile characters shown as escapes."""

from __future__ import annotations

import json
import shutil
import unicodedata
from pathlib import Path

import git
import pytest
from conftest import commit_all, write_files

from miner.cli import main
from miner.explain import (
    inline_text,
    json_safe,
    link_target,
    origins_text,
    terminal_safe,
    terminal_text,
)

MLX = '''\
class MlxAuxiliaryStateComponent:
    """Unified radix component for MLX native auxiliary-state snapshots."""

    def __init__(self, cache, params):
        if params.enable_mamba_extra_buffer:
            raise NotImplementedError(
                "MLX auxiliary-state radix cache does not support "
                "enable_mamba_extra_buffer yet."
            )
        pool = getattr(cache, "pool", None)
        if not isinstance(pool, dict):
            raise TypeError(
                "MlxAuxiliaryStateComponent requires MlxAuxiliaryStatePool, "
                f"got {type(pool)}"
            )
'''

#: A flag whose check raises a message holding ESC [2J, a right-to-left
#: override and a zero-width space (Unicode format characters, category Cf).
CFG = """\
import argparse


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--mem-fraction-static", type=float)
    args = p.parse_args()
    if args.mem_fraction_static > 1:
        raise ValueError(
            f"--mem-fraction-static {args.mem_fraction_static} above 1 \\x1b[2J\\u202egnp.\\u200b"
        )
"""

#: Enough errors that two ids share a first character (16 hexadecimal digits).
MANY = "".join(
    f"def check_{n}(x):\n    if x == {n}:\n        raise KeyError('unknown key number {n}')\n"
    for n in range(20)
)


@pytest.fixture(scope="module")
def mined(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The output folder of the fixture repository, mined once."""
    root = tmp_path_factory.mktemp("repo")
    repo = git.Repo.init(root, initial_branch="main")
    with repo.config_writer() as cfg:
        cfg.set_value("commit", "gpgsign", "false")
    write_files(root, {"pkg/mlx.py": MLX, "pkg/cfg.py": CFG, "pkg/many.py": MANY})
    commit_all(repo, "fixture", "v1")
    out = tmp_path_factory.mktemp("out")
    argv = ["mine", "--repo", str(root), "--commit", "v1", "--out", str(out), "--slug", "acme/mlx"]
    assert main([*argv, "--jobs", "0", "--no-origins"]) == 0  # the toy has no options class
    return out


def ids(out: Path) -> list[str]:
    return sorted(p.stem for p in (out / "api" / "errors").glob("*.json"))


def error_of(out: Path, exception: str, words: str) -> str:
    """The id of the error raising ``exception`` with ``words`` in its message."""
    found = [
        error_id
        for error_id in ids(out)
        if (record := json.loads((out / "api" / "errors" / f"{error_id}.json").read_text()))[
            "exception"
        ]
        == exception
        and words in (record["message"] or "")
    ]
    assert len(found) == 1, found
    return found[0]


def explain(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["explain", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_explain_prints_the_card_for_a_terminal(mined: Path, capsys) -> None:
    error_id = error_of(mined, "NotImplementedError", "radix cache")
    related = error_of(mined, "TypeError", "MlxAuxiliaryStatePool")
    code, out, err = explain(capsys, error_id, "--out", str(mined))
    assert (code, err) == (0, "")
    assert out.startswith(
        "acme/mlx · error · NotImplementedError\n"
        "\n"
        "MLX auxiliary-state radix cache does not support…\n"
        "=================================================\n"
        "\n"
        "Error message\n"
        "-------------\n"
        "\n"
        "    MLX auxiliary-state radix cache does not support enable_mamba_extra_buffer yet.\n"
        "\n"
        "What it means\n"
        "-------------\n"
    )
    assert (
        "Source\n"
        "------\n"
        "\n"
        "Thrown at `pkg/mlx.py:6` in `MlxAuxiliaryStateComponent.__init__`\n"
        "\n"
        "    class MlxAuxiliaryStateComponent:\n"
    ) in out
    # the sample cards' order of sections; the guard's negation is no solution
    # and no example fix: both sections are left out
    order = ["What it means", "Source", "When it happens", "Related errors"]
    assert sorted(order, key=lambda h: out.index(f"\n{h}\n")) == order
    assert "\nSolutions\n" not in out and "\nExample fix\n" not in out
    assert "- `params.enable_mamba_extra_buffer` is true (line 5)\n" in out
    # another card's link names the command that shows it
    assert (
        f"- MlxAuxiliaryStateComponent requires MlxAuxiliaryStatePool, got… "
        f"(miner explain {related}) — `TypeError` at `pkg/mlx.py:12`\n"
    ) in out
    assert "```" not in out and "](" not in out
    assert out.endswith(f"Data as JSON: `api/errors/{error_id}.json`.\n")


def test_a_unique_prefix_explains_the_same_error(mined: Path, capsys) -> None:
    error_id = error_of(mined, "NotImplementedError", "radix cache")
    whole = explain(capsys, error_id, "--out", str(mined))
    prefix = next(
        error_id[:n]
        for n in range(1, 17)
        if [i for i in ids(mined) if i.startswith(error_id[:n])] == [error_id]
    )
    assert explain(capsys, prefix, "--out", str(mined)) == whole
    assert explain(capsys, error_id.upper(), "--out", str(mined)) == whole


def test_an_internal_error_shows_its_entry_of_the_module_page(mined: Path, capsys) -> None:
    error_id = error_of(mined, "TypeError", "MlxAuxiliaryStatePool")
    record = json.loads((mined / "api" / "errors" / f"{error_id}.json").read_text())
    code, out, _ = explain(capsys, error_id, "--out", str(mined))
    assert code == 0
    assert out == (
        "acme/mlx · internal · pkg.mlx\n"
        "\n"
        "`TypeError`: `MlxAuxiliaryStateComponent requires MlxAuxiliaryStatePool, got…`\n"
        "------------------------------------------------------------------------------\n"
        "\n"
        "- Message: `MlxAuxiliaryStateComponent requires MlxAuxiliaryStatePool, got {type(pool)}`\n"
        f"- At `pkg/mlx.py:12` ({record['sites'][0]['url']}) in "
        "`MlxAuxiliaryStateComponent.__init__`\n"
        "- Guards, outermost first: `not isinstance(pool, dict)` (line 11)\n"
        "- Why `internal`: message names no setting, input or dependency (rule `default`)\n"
        f"- JSON: `api/errors/{error_id}.json` ({mined}/api/errors/{error_id}.json)\n"
        "\n"
        f"What internal errors mean and what to do: README ({mined}/internal/README.md)\n"
    )


def test_ambiguous_prefix_exits_2_naming_the_candidates(mined: Path, capsys) -> None:
    known = ids(mined)
    first = next(c for c in "0123456789abcdef" if sum(i.startswith(c) for i in known) >= 2)
    sharing = [i for i in known if i.startswith(first)]
    code, out, err = explain(capsys, first, "--out", str(mined))
    assert (code, out) == (2, "")
    assert err == (
        f"miner: error: {first}: ambiguous id prefix, {len(sharing)} errors start with it "
        f"({', '.join(sharing[:5])}{', ...' if len(sharing) > 5 else ''}); give more characters\n"
    )


def test_unknown_id_exits_2_with_one_line(mined: Path, capsys) -> None:
    known = ids(mined)
    absent = next(
        p
        for p in (f"{a}{b}" for a in "0123456789abcdef" for b in "0123456789abcdef")
        if not any(i.startswith(p) for i in known)
    )
    folder = mined / "api" / "errors"
    code, out, err = explain(capsys, absent, "--out", str(mined))
    assert (code, out) == (2, "")
    assert err == (
        f"miner: error: {absent}: no error id starts with this in {folder}; find the id with "
        "`miner lookup MESSAGE` or in index.md, or pass the mined folder with --out DIR\n"
    )
    code, out, err = explain(capsys, "not-an-id\x1b[2J", "--out", str(mined))
    assert (code, out) == (2, "")
    assert err == (
        "miner: error: not-an-id\\x1b[2J: not an error id (ids are 16 hexadecimal characters); "
        f"give an id or its first characters, as {mined / 'index.md'} lists them\n"
    )


def test_a_folder_without_records_exits_2(tmp_path: Path, capsys) -> None:
    code, out, err = explain(capsys, "abcd", "--out", str(tmp_path))
    assert (code, out) == (2, "")
    assert err == (
        f"miner: error: {tmp_path}: no mined records here (api/errors missing); "
        f"run `miner mine --out {tmp_path}` first, or pass --out DIR\n"
    )


def test_mined_control_and_format_characters_are_shown_as_escapes(mined: Path, capsys) -> None:
    error_id = error_of(mined, "ValueError", "mem-fraction-static")
    card = (mined / "errors" / f"{error_id}.md").read_text()
    # the card writes ESC and the format characters as escapes already
    assert "above 1 \\x1b[2J\\u202egnp.\\u200b\n" in card
    code, out, _ = explain(capsys, error_id, "--out", str(mined))
    assert code == 0
    assert (
        "    --mem-fraction-static {args.mem_fraction_static} above 1 \\x1b[2J\\u202egnp.\\u200b\n"
        in out
    )
    raw = [c for c in out if c != "\n" and unicodedata.category(c) in ("Cc", "Cf")]
    assert raw == []


def test_json_format_prints_the_record_as_stored(mined: Path, capsys) -> None:
    error_id = error_of(mined, "ValueError", "mem-fraction-static")
    path = mined / "api" / "errors" / f"{error_id}.json"
    code, out, _ = explain(capsys, error_id[:8], "--out", str(mined), "--format", "json")
    assert code == 0
    assert json.loads(out) == json.loads(path.read_text())
    assert "\u202e" not in out and "\u200b" not in out and "\x1b" not in out
    assert json.loads(out)["message"].endswith("above 1 \x1b[2J\u202egnp.\u200b")


def test_origins_prints_the_guards_linked_to_settings(mined: Path, capsys) -> None:
    error_id = error_of(mined, "ValueError", "mem-fraction-static")
    code, out, _ = explain(capsys, error_id, "--out", str(mined), "--origins")
    assert code == 0
    assert out == (
        f"Error {error_id}: reached when args.mem_fraction_static > 1\n"
        "Guards linked to settings:\n"
        "  - `args.mem_fraction_static` reads the setting `main.mem_fraction_static` "
        "(exact; guard at line 8)\n"
        "Origins: not traced (mine with --origins)\n"
        "pkg/cfg.py:9 in main\n"
        "  guard line 8 (if): args.mem_fraction_static > 1\n"
    )
    code, out, _ = explain(capsys, error_id, "--out", str(mined), "--origins", "--format", "json")
    assert json.loads(out) == {
        "error_id": error_id,
        "condition": "args.mem_fraction_static > 1",
        "links": [
            "`args.mem_fraction_static` reads the setting `main.mem_fraction_static` "
            "(exact; guard at line 8)"
        ],
        "origins": None,
        "logged": None,
        "unreachable": None,
        "sites": [
            {
                "path": "pkg/cfg.py",
                "line": 9,
                "scope": "main",
                "guards": [
                    {
                        "kind": "if",
                        "line": 8,
                        "negated": False,
                        "test": "args.mem_fraction_static > 1",
                    }
                ],
                "exits": [],
            }
        ],
    }


def test_origins_of_an_error_are_printed_when_the_record_has_them(
    mined: Path, tmp_path: Path, capsys
) -> None:
    out = tmp_path / "out"
    shutil.copytree(mined, out)
    error_id = error_of(out, "ValueError", "mem-fraction-static")
    path = out / "api" / "errors" / f"{error_id}.json"
    record = json.loads(path.read_text())
    record["analysis"]["origins"] = [
        {
            "kind": "flag",
            "name": "--mem-fraction-static",
            "owner": "main",
            "constraint": {"op": ">", "values": ["1"]},
            "role": "condition",
            "defined": "pkg/cfg.py:5",
            "chain": [{"path": "pkg/cfg.py", "line": 8, "text": "args.mem_fraction_static > 1"}],
        },
        {"kind": "env", "name": "SGL\u202eX", "chain": [], "reason": "no-callers"},
    ]
    record["analysis"]["logged"] = {
        "path": "pkg/cfg.py",
        "line": 12,
        "types": "Exception",
        "frame": "same",
        "logs": True,
    }
    given = {"kind": "constant", "name": "0.5", "constraint": {"op": ">", "values": ["1"]}}
    given["chain"] = [{"path": "pkg/run.py", "line": 3, "text": "fraction=0.5"}]
    record["analysis"]["unreachable"] = {
        "path": "pkg/cfg.py",
        "line": 8,
        "condition": "fraction > 1",
        "values": [given],
    }
    path.write_text(json.dumps(record, ensure_ascii=False))
    code, text, _ = explain(capsys, error_id, "--out", str(out), "--origins")
    assert code == 0
    assert (
        "Origins:\n"
        "  flag --mem-fraction-static (main) > 1  [condition; defined pkg/cfg.py:5]\n"
        "    pkg/cfg.py:8  args.mem_fraction_static > 1\n"
        "  env SGL\\u202eX  [no-callers]\n"
        "Logged: caught by the handler at pkg/cfg.py:12 (except Exception; same frame), "
        "not re-raised\n"
        "Unreachable: fraction > 1 (line 8) is never true: fraction=0.5 at pkg/run.py:3\n"
        "pkg/cfg.py:9 in main\n"
    ) in text
    code, text, _ = explain(capsys, error_id, "--out", str(out), "--origins", "--format", "json")
    assert json.loads(text)["origins"] == record["analysis"]["origins"]


def test_without_markdown_the_entry_is_composed_from_the_record(
    mined: Path, tmp_path: Path, capsys
) -> None:
    out = tmp_path / "out"
    shutil.copytree(mined, out)
    error_id = error_of(out, "NotImplementedError", "radix cache")
    (out / "errors" / f"{error_id}.md").unlink()
    code, text, _ = explain(capsys, error_id, "--out", str(out))
    assert code == 0
    heading = "`NotImplementedError`: `MLX auxiliary-state radix cache does not support…`"
    assert text.startswith(
        f"{heading}\n{'-' * len(heading)}\n"
        "\n"
        "- Message: `MLX auxiliary-state radix cache does not support "
        "enable_mamba_extra_buffer yet.`\n"
        "- At `pkg/mlx.py:6` in `MlxAuxiliaryStateComponent.__init__`\n"
        "\n"
        "What it means\n"
        "-------------\n"
    )
    # the record holds no solution (the guard's negation is none): no section
    assert "\nSolutions\n" not in text and "\nWhen it happens\n" in text


def test_terminal_safe_escapes_controls_and_every_format_character() -> None:
    assert terminal_safe("a\x1b[2Jb\x07\tc") == "a\\x1b[2Jb\\x07\\tc"
    assert terminal_safe("x\u202ey\u200bz\ufeff\u00ad") == "x\\u202ey\\u200bz\\ufeff\\u00ad"
    assert terminal_safe("tag\U000e0041") == "tag\\U000e0041"
    assert terminal_safe("é → ok") == "é → ok"


def test_json_safe_keeps_the_value() -> None:
    value = {"m": "é\u200b\u202e\U000e0041\x85b\x1b"}
    text = json_safe(json.dumps(value, ensure_ascii=False))
    assert text == '{"m": "é\\u200b\\u202e\\udb40\\udc41\\u0085b\\u001b"}'
    assert json.loads(text) == value
    assert not any(unicodedata.category(c) in ("Cc", "Cf") for c in text)


def test_inline_text_undoes_markdown_escapes_outside_code_spans() -> None:
    assert (
        inline_text(r"**Retired:** a\_b &lt;x&gt; `a\_b &lt;`") == "Retired: a_b <x> `a\\_b &lt;`"
    )
    assert inline_text(r"[`p.py:3`](https://h/p.py#L3) \`x") == "`p.py:3` (https://h/p.py#L3) `x"


def test_link_targets_for_a_terminal() -> None:
    base = Path("out/errors")
    assert link_target("0123456789abcdef.md", base) == "miner explain 0123456789abcdef"
    assert link_target("../internal/pkg.md#0123456789abcdef", base) == (
        "miner explain 0123456789abcdef"
    )
    assert link_target("../index.md", base) == "out/index.md"
    assert link_target("https://x.invalid/a", base) == "https://x.invalid/a"


def test_terminal_text_headings_fences_and_blank_runs() -> None:
    markdown = '# Title\n\n\n\n## Part\n\n````text\n``` inside\n\tx\n````\n<a id="x"></a>\n---\n'
    assert terminal_text(markdown) == (
        "Title\n=====\n\nPart\n----\n\n    ``` inside\n        x\n" + "-" * 40 + "\n"
    )


def test_origins_text_without_sites_or_links() -> None:
    view = {"error_id": "ab", "condition": "", "links": [], "sites": []}
    view |= {"origins": None, "logged": None}
    assert (
        origins_text(view)
        == "Error ab: reached when no condition recorded\nGuards linked to settings:\n"
        "  none found\nOrigins: not traced (mine with --origins)\n"
    )


def test_origins_tells_an_early_exit_as_where_the_code_leaves(mined: Path, capsys) -> None:
    error_id = error_of(mined, "TypeError", "MlxAuxiliaryStatePool")
    code, out, _ = explain(capsys, error_id, "--out", str(mined), "--origins")
    assert code == 0
    assert out == (
        f"Error {error_id}: reached when not params.enable_mamba_extra_buffer and "
        "not isinstance(pool, dict)\n"
        "Guards linked to settings:\n"
        "  none found\n"
        "Origins: not traced (mine with --origins)\n"
        "pkg/mlx.py:12 in MlxAuxiliaryStateComponent.__init__\n"
        "  guard line 11 (if): not isinstance(pool, dict)\n"
        "  exit line 5 (exit): leaves before the site when params.enable_mamba_extra_buffer\n"
    )
