"""Re-mining only what changed (issue 15): the cached and skipping paths give
the bytes of the serial path, and say what they skipped.

The serial path: one process, no blob cache, no analysis cache
(``MineOptions(jobs=0, cache=False)``), into a new folder. The other paths:
workers and a cold cache into a new folder; the analysis cache into another
new folder; the same inputs again into the same folder (nothing redone).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import add_commit
from hypothesis import given, settings
from hypothesis import strategies as st
from sample_repo import FILES

from miner import pipeline
from miner.mining import digest
from miner.mining.extraction import MineOptions
from miner.publish import output
from miner.publish.cards import Md
from miner.publish.records import dumps, escape_surrogates


def tree(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` (relative path -> bytes)."""
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def run(repo: Path, rev: str, out: Path, options: MineOptions) -> pipeline.MineRun:
    return pipeline.mine_into(
        str(repo),
        rev,
        out,
        site=True,
        slug="sgl-project/sglang",
        link_ref=rev,
        options=options,
        jobs=1,
    )


def test_cached_and_skipped_runs_give_the_serial_bytes(make_repo, tmp_path: Path) -> None:
    repo = make_repo(FILES)
    serial = run(repo, "v1", tmp_path / "serial", MineOptions(jobs=0, cache=False))
    assert not serial.skipped and not serial.reused
    expected = tree(tmp_path / "serial")
    assert "errors" in {rel.split("/")[0] for rel in expected}
    assert any(rel.startswith("site/errors/") for rel in expected)

    cache = tmp_path / "cache"
    cold = run(repo, "v1", tmp_path / "cold", MineOptions(jobs=2, cache_dir=cache))
    assert not cold.skipped and not cold.reused
    assert tree(tmp_path / "cold") == expected

    # a new folder: the files kept by the cold run, written again
    replayed = run(repo, "v1", tmp_path / "replayed", MineOptions(jobs=2, cache_dir=cache))
    assert replayed.replayed and not replayed.reused and not replayed.skipped
    assert replayed.seconds["facts"] == replayed.seconds["analysis"] == 0.0
    assert tree(tmp_path / "replayed") == expected

    # records from the commit store alone: facts, analyses and files made again
    shutil.rmtree(cache / "rendered")
    shutil.rmtree(cache / "analyses")
    stored = run(repo, "v1", tmp_path / "stored", MineOptions(jobs=2, cache_dir=cache))
    assert not (stored.reused or stored.replayed or stored.skipped)
    assert stored.result.stats is None  # not extracted: read back from the store
    assert tree(tmp_path / "stored") == expected

    # without the kept files: facts and analyses from the analysis cache, rendered
    shutil.rmtree(cache / "rendered")
    warm = run(repo, "v1", tmp_path / "warm", MineOptions(jobs=2, cache_dir=cache))
    assert warm.reused and not warm.skipped and not warm.replayed
    assert warm.seconds["facts"] == 0.0
    assert tree(tmp_path / "warm") == expected

    # the same folder again: nothing analysed, rendered or written
    again = run(repo, "v1", tmp_path / "warm", MineOptions(jobs=2, cache_dir=cache))
    assert again.skipped
    assert again.counts["output"]["written"] == 0
    assert again.counts["output"]["unchanged"] == len(
        [rel for rel in expected if not rel.startswith("site/")]
    )
    assert again.counts["site"]["written"] == 0
    assert again.seconds["rendering"] == again.seconds["writing"] == 0.0
    assert tree(tmp_path / "warm") == expected
    manifest = output.read_manifest(tmp_path / "warm")
    assert manifest is not None and len(manifest["inputs"]) == 64


def test_cached_facts_and_analyses_equal_the_computed_ones(make_repo, tmp_path: Path) -> None:
    repo = make_repo(FILES)
    fresh = pipeline.mine_and_analyze(
        str(repo), "v1", slug="sgl-project/sglang", options=MineOptions(jobs=0, cache=False)
    )
    options = MineOptions(jobs=0, cache_dir=tmp_path / "cache")
    first = pipeline.mine_and_analyze(str(repo), "v1", slug="sgl-project/sglang", options=options)
    second = pipeline.mine_and_analyze(str(repo), "v1", slug="sgl-project/sglang", options=options)
    assert not first.reused and second.reused
    assert first.inputs == second.inputs == fresh.inputs
    for mined in (first, second):
        assert mined.result.sites == fresh.result.sites
        assert mined.facts == fresh.facts
        assert mined.analyses == fresh.analyses


def test_a_changed_input_is_redone_and_published(make_repo, tmp_path: Path) -> None:
    repo = make_repo(FILES)
    options = MineOptions(jobs=0, cache_dir=tmp_path / "cache")
    out = tmp_path / "out"
    first = run(repo, "v1", out, options)
    before = tree(out)
    changed = {
        "python/sglang/srt/utils/html_tags.py": FILES[
            "python/sglang/srt/utils/html_tags.py"
        ].replace("Refusing tag", "Refusing the tag")
    }
    add_commit(repo, changed, tag="v2")
    second = run(repo, "v2", out, options)
    assert not second.skipped and not second.reused
    after = tree(out)
    assert after != before
    assert any(b"Refusing the tag" in text for text in after.values())
    assert not any(b"Refusing tag" in text for text in after.values())
    manifest = output.read_manifest(out)
    assert manifest is not None
    assert first.counts["output"]["written"] > 0
    # the same inputs again, into the same folder: skipped
    assert run(repo, "v2", out, options).skipped


def test_a_missing_file_or_other_options_are_not_skipped(make_repo, tmp_path: Path) -> None:
    repo = make_repo(FILES)
    options = MineOptions(jobs=0, cache_dir=tmp_path / "cache")
    out = tmp_path / "out"
    run(repo, "v1", out, options)
    expected = tree(out)
    card = next(rel for rel in expected if rel.startswith("errors/"))
    (out / card).unlink()
    repaired = run(repo, "v1", out, options)
    assert not repaired.skipped and repaired.replayed
    assert repaired.counts["output"]["written"] == 1
    assert tree(out) == expected
    # without the site the inputs differ: published again, the site removed
    plain = pipeline.mine_into(
        str(repo), "v1", out, slug="sgl-project/sglang", link_ref="v1", options=options
    )
    assert not plain.skipped


def test_code_version_follows_the_package_source(tmp_path: Path, monkeypatch) -> None:
    """The version is a hash of the package's files: any edit (an analysis
    module, a template) changes it, with no constant to bump."""
    copy = tmp_path / "miner"
    shutil.copytree(
        Path(digest.__file__).resolve().parents[1],
        copy,
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    templates = tmp_path / "templates"
    shutil.copytree(digest.TEMPLATES, templates)
    monkeypatch.setattr(digest, "_PACKAGE", copy)
    monkeypatch.setattr(digest, "_TEMPLATES", templates)
    digest.code_version.cache_clear()
    try:
        base = digest.code_version()
        (copy / "analysis" / "sections.py").write_text(
            (copy / "analysis" / "sections.py").read_text() + "\n# edited\n"
        )
        digest.code_version.cache_clear()
        after_analysis = digest.code_version()
        template = next(templates.rglob("*.j2"))
        template.write_text(template.read_text() + "\n")
        digest.code_version.cache_clear()
        after_template = digest.code_version()
    finally:
        digest.code_version.cache_clear()
    assert len({base, after_analysis, after_template}) == 3


JSON_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text()
    | st.text().map(Md)
)
JSON_VALUES = st.recursive(
    JSON_SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.lists(inner, max_size=4).map(tuple)
        | st.dictionaries(st.text(), inner, max_size=4)
        | st.dictionaries(st.integers(), inner, max_size=3)
    ),
    max_leaves=20,
)


@settings(max_examples=200, deadline=None)
@given(JSON_VALUES)
def test_dumps_writes_what_the_standard_library_writes(value: object) -> None:
    """The records' JSON encoder is the standard library's, character for
    character (indent, sorted keys, escapes, floats, non-string keys)."""
    expected = escape_surrogates(json.dumps(value, sort_keys=True, indent=2, ensure_ascii=False))
    assert dumps(value) == expected + "\n"


def test_dumps_of_what_json_refuses_raises_as_json_does() -> None:
    with pytest.raises(TypeError):
        dumps({"a": {1, 2}})
    with pytest.raises(TypeError):
        dumps({(1, 2): "tuple key"})
    assert dumps({"a": "caf\udce9", "b": "\x00\n"}) == (
        '{\n  "a": "caf\\udce9",\n  "b": "\\u0000\\n"\n}\n'
    )


def test_dumps_refuses_what_orjson_writes_and_json_does_not() -> None:
    """orjson writes dataclasses, enums, dates and UUIDs; the records'
    encoder refuses them as :mod:`json` does, and writes what orjson
    refuses (deep nesting, 65-bit integers, integer keys) as :mod:`json`."""
    import dataclasses
    import datetime
    import enum
    import uuid

    @dataclasses.dataclass
    class Point:
        x: int

    class Colour(enum.Enum):
        RED = "red"

    for value in (Point(1), Colour.RED, datetime.date(2026, 11, 30), uuid.UUID(int=1)):
        with pytest.raises(TypeError):
            dumps({"a": [value]})
    deep: list = []
    for _ in range(300):
        deep = [deep]
    for value in (deep, {"n": 2**65}, {1: "one", 2: 2}, [1e-7, float("nan")]):
        expected = json.dumps(value, sort_keys=True, indent=2, ensure_ascii=False) + "\n"
        assert dumps(value) == expected


def test_mine_prints_what_it_skipped(make_repo, tmp_path: Path, capsys) -> None:
    from miner.cli import main

    repo = make_repo(FILES)
    args = ["mine", "--repo", str(repo), "--commit", "v1", "--cache-dir", str(tmp_path / "c")]
    assert main([*args, "--out", str(tmp_path / "out"), "--jobs", "0"]) == 0
    assert "stages: extraction" in capsys.readouterr().out
    assert main([*args, "--out", str(tmp_path / "out"), "--jobs", "0"]) == 0
    again = capsys.readouterr().out
    assert "output unchanged" in again and "0 files written" in again
    assert "writing 0.0 s (skipped)" in again
    assert main([*args, "--out", str(tmp_path / "new"), "--jobs", "0"]) == 0
    assert "analysis 0.0 s (kept files)" in capsys.readouterr().out
