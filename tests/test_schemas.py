"""The JSON Schemas generated from the record types (:mod:`miner.publish.schemas`):
they match what ``to_json`` writes key for key, close every object, and every
record written (mined folder and site) validates against them."""

from __future__ import annotations

import dataclasses
import enum
import json
import types
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal, get_args, get_origin

import jsonschema
import pytest
from sample_repo import mine_sample

from miner import pipeline
from miner.model import (
    SCHEMA_VERSION,
    Analysis,
    CommitInfo,
    Condition,
    Error,
    Excerpt,
    FileResult,
    Guard,
    History,
    MessagePart,
    MineResult,
    Site,
)
from miner.publish import bundles, html, output, records, schemas

VALIDATOR = jsonschema.Draft202012Validator

#: Sample values of string fields whose records constrain them (by field name).
STRINGS = {
    "error_id": "0123456789abcdef",
    "site_id": "fedcba9876543210",
    "ids": "0123456789abcdef",
    "related": "00112233445566ff",
    "sha": "a" * 40,
    "blob": "b" * 40,
    "aspects": "message",
    "conversion": "r",
    "path": "python/pkg/mod.py",
}


def sample(hint: Any, name: str) -> Any:
    """A value of type ``hint`` with every optional part set."""
    origin = get_origin(hint)
    if origin is Literal:
        return get_args(hint)[0]
    if origin in (typing.Union, types.UnionType):
        return sample(next(a for a in get_args(hint) if a is not type(None)), name)
    if origin is tuple:
        return (sample(get_args(hint)[0], name),)
    if hint is Condition:  # recursive: an "and" of two atoms
        return Condition(
            "and",
            (
                Condition("atom", atom="x", shown="x"),
                Condition("atom", atom="y is None", negated=True, shown="y is not None"),
            ),
        )
    if dataclasses.is_dataclass(hint):
        return populated(hint)
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return next(iter(hint))
    if hint is bool:
        return True
    if hint is int:
        return 3
    if hint is float:
        return 1.5
    assert hint is str, hint
    return STRINGS.get(name, f"some {name}")


def populated(cls: type, **given: Any) -> Any:
    """An instance of the record type ``cls`` with every field set (none None or empty)."""
    hints = typing.get_type_hints(cls)
    values = {
        f.name: given[f.name] if f.name in given else sample(hints[f.name], f.name)
        for f in dataclasses.fields(cls)
    }
    return cls(**values)


def full_site(**given: Any) -> Site:
    """A site with both kinds of message part (literal text, a placeholder)."""
    parts = (MessagePart(text="got ", optional=1), populated(MessagePart))
    return populated(Site, message_parts=parts, **given)


def full_error() -> Error:
    site = full_site()
    return populated(Error, message_parts=site.message_parts, sites=(site, full_site(parser="ast")))


def full_result() -> MineResult:
    error = full_error()
    return MineResult(
        commit=populated(CommitInfo),
        files=(populated(FileResult, sites=error.sites),),
        sites=error.sites,
        errors=(error,),
    )


def resolve(node: dict[str, Any], root: dict[str, Any], seen: set[str]) -> dict[str, Any]:
    while "$ref" in node:
        name = node["$ref"].split("/")[-1]
        seen.add(name)
        node = root["$defs"][name]
    return node


def walk(
    data: Any, node: dict[str, Any], root: dict[str, Any], seen: set[str], at: str = ""
) -> Iterator[str]:
    """Every object in ``data`` whose keys are not exactly its schema's properties
    (``seen`` collects the ``$defs`` entries visited)."""
    node = resolve(node, root, seen)
    for key in ("anyOf", "oneOf"):
        if key in node:
            if data is None:
                return
            options = [resolve(s, root, set()) for s in node[key]]
            options = [o for o in options if o.get("type") == "object"]
            if len(options) > 1:  # the variant whose required keys the data has
                options = [o for o in options if set(o["required"]) <= set(data)]
            assert len(options) == 1, (at, node)
            node = resolve(
                next(s for s in node[key] if resolve(s, root, set()) is options[0]), root, seen
            )
    if isinstance(data, dict):
        assert node.get("additionalProperties") is False, at
        if set(data) != set(node["properties"]):
            yield f"{at or '/'}: written {sorted(data)}, schema {sorted(node['properties'])}"
        for key, value in data.items():
            if key in node["properties"]:
                yield from walk(value, node["properties"][key], root, seen, f"{at}/{key}")
    elif isinstance(data, list) and "items" in node:
        for i, value in enumerate(data):
            yield from walk(value, node["items"], root, seen, f"{at}/{i}")


def full_records() -> dict[str, Any]:
    """One fully populated record of each schema, as the writers project them."""
    result = full_result()
    error = result.errors[0]
    analysis = populated(Analysis)
    history = populated(History)
    counts = records.manifest_json(result)["counts"]
    return {
        "site": error.sites[0].to_json(),
        "analysis": records.analysis_row(error.error_id, analysis, history),
        "error": records.error_json(error, result.commit, analysis, history),
        "manifest": records.manifest_json(
            result, written=["index.md", "manifest.json"], inputs="0" * 64
        ),
        "index": html.index_json(result, counts, ["v1..v2"]),
        "site-manifest": output.site_manifest(
            result.commit.to_json(), ["index.html", "manifest.json"]
        ),
    }


@pytest.mark.parametrize("name", sorted(schemas.ROOTS))
def test_schema_properties_are_the_keys_written(name: str) -> None:
    """Key for key, at every depth: what ``to_json`` (and the record projections
    of :mod:`miner.publish.records`) writes for a record with every field set is
    exactly the schema's properties. A field added to a record type, or a key
    added to or dropped from its JSON, fails here until the schema says so."""
    schema = schemas.schema(name)
    VALIDATOR.check_schema(schema)
    record = full_records()[name]
    assert list(walk(record, schema, schema, set())) == []
    VALIDATOR(schema).validate(record)


def test_every_record_type_is_checked_key_by_key() -> None:
    seen: set[str] = set()
    for name, record in full_records().items():
        schema = schemas.schema(name)
        assert list(walk(record, schema, schema, seen)) == []
    # the records that are a schema's root itself (a site row, an error record)
    roots = {root["$ref"].split("/")[-1] for _, _, root in schemas.ROOTS.values() if "$ref" in root}
    assert seen | roots == set(schemas.DEFS) | set(schemas.PLAIN_DEFS)


def test_drift_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """The key check fails when ``to_json`` and the schema disagree, either way."""
    schema = schemas.schema("error")
    written = Analysis.to_json
    monkeypatch.setattr(Analysis, "to_json", lambda self: {**written(self), "confidence": 1})
    assert list(walk(full_records()["error"], schema, schema, set())) == [
        "/analysis: written ['audience', 'audience_reason', 'audience_rule', 'author', "
        "'condition', 'condition_text', 'confidence', 'dropped', 'evidence', 'example_fix', "
        "'findings', 'logged', 'origins', 'related', 'situations', 'solution_kinds', "
        "'solutions', 'trigger', 'unreachable', 'what_it_means'], "
        "schema ['audience', 'audience_reason', 'audience_rule', 'author', 'condition', "
        "'condition_text', 'dropped', 'evidence', 'example_fix', 'findings', 'logged', "
        "'origins', 'related', 'situations', 'solution_kinds', 'solutions', 'trigger', "
        "'unreachable', 'what_it_means']"
    ]
    monkeypatch.setattr(
        Analysis, "to_json", lambda self: {k: v for k, v in written(self).items() if k != "author"}
    )
    assert len(list(walk(full_records()["error"], schema, schema, set()))) == 1


def bare_guard() -> Guard:
    return Guard(kind="try", test="", negated=False, line=1)


def test_required_keys_are_the_keys_always_written() -> None:
    """A record with every optional field unset writes exactly the required keys."""
    bare_site = Site(
        path="a.py",
        line=1,
        end_line=1,
        kind="raise",
        exception=None,
        message=None,
        message_parts=(),
        message_kind="none",
        message_style="none",
        message_source=None,
        cause=None,
        reraise=True,
        reraised=(),
        scope="<module>",
        guards=(bare_guard(),),
        excerpt=Excerpt(1, 1, "raise"),
        parser="ast",
        error_id="0123456789abcdef",
        site_id="0123456789abcdef",
    )
    bare = {
        "Site": bare_site.to_json(),
        "Guard": bare_guard().to_json(),
        "MessagePart": MessagePart(expr="x").to_json(),
        "Analysis": Analysis(error_id="0123456789abcdef", trigger="t").to_json(),
        "History": History("0123456789abcdef", (), "v1", "v1", "v1", "v1", ()).to_json(),
    }
    defs = schemas.schema("error")["$defs"]
    for name, data in bare.items():
        node = schemas.definition(name)
        if "oneOf" in node:
            node = next(o for o in node["oneOf"] if set(o["required"]) <= set(data))
        assert set(data) == set(node["required"]), name
        VALIDATOR({**node, "$defs": defs}).validate(data)
    row = records.analysis_row("0123456789abcdef", Analysis("0123456789abcdef", "t"), None)
    assert set(row) == set(schemas.schema("analysis")["required"])


def test_closed_objects_reject_extra_and_missing_keys() -> None:
    for name, record in full_records().items():
        validator = VALIDATOR(schemas.schema(name))
        assert validator.is_valid(record)
        assert not validator.is_valid({**record, "surprise": 1}), name
        for key in schemas.schema(name)["required"]:
            assert not validator.is_valid({k: v for k, v in record.items() if k != key}), key
    # nested objects are closed as well
    site = full_records()["site"]
    validator = VALIDATOR(schemas.schema("site"))
    for broken in (
        {**site, "excerpt": {**site["excerpt"], "lines": 3}},
        {**site, "guards": [{**site["guards"][0], "depth": 1}]},
        {**site, "message_parts": [{"text": "a", "expr": "b"}]},
        {**site, "message_parts": [{"expr": "b", "conversion": "x"}]},
        {**site, "kind": "yield"},
        {**site, "line": 0},
        {**site, "error_id": "XYZ"},
    ):
        assert not validator.is_valid(broken)
    row = full_records()["analysis"]
    validator = VALIDATOR(schemas.schema("analysis"))
    assert validator.is_valid({k: v for k, v in row.items() if k != "history"})
    assert not validator.is_valid({**row, "analysis": {**row["analysis"], "error_id": "x"}})
    assert not validator.is_valid({**row, "history": {**row["history"], "present": None}})


def test_one_schema_version() -> None:
    for name in schemas.ROOTS:
        schema = schemas.schema(name)
        assert schema["$id"] == f"{name}-v{SCHEMA_VERSION}.json"
        assert f"version {SCHEMA_VERSION}" in schema["title"]
        if "schema_version" in schema["properties"]:
            assert schema["properties"]["schema_version"] == {"const": SCHEMA_VERSION}


# -- every record written ------------------------------------------------------------------


def validate_output(out: Path, site: Path | None) -> dict[str, int]:
    """Validate every record under the mined folder ``out`` (and the site ``site``)
    against the generated schemas; returns how many of each were validated."""
    checks = {name: VALIDATOR(schemas.schema(name)) for name in schemas.ROOTS}
    counts = dict.fromkeys(checks, 0)

    def check(name: str, data: Any, where: object) -> None:
        errors = sorted(checks[name].iter_errors(data), key=lambda e: list(e.path))
        assert not errors, f"{where}: {errors[0].message} at {list(errors[0].path)}"
        counts[name] += 1

    for _, row in records.iter_jsonl(out / records.SITES):
        check("site", row, out / records.SITES)
    for _, row in records.iter_jsonl(out / records.ANALYSES):
        check("analysis", row, out / records.ANALYSES)
    check("manifest", records.read_json(out / records.MANIFEST), records.MANIFEST)
    folders = [out / "api" / "errors"]
    # the schemas written are the generated ones
    for name, schema in schemas.schemas(schemas.RECORD_SCHEMAS):
        assert json.loads((out / "schema" / name).read_text()) == schema
    if site is not None:
        check("index", bundles.load_bundle((site / bundles.INDEX).read_bytes()), bundles.INDEX)
        check("site-manifest", records.read_json(site / "manifest.json"), "site manifest")
        shipped = {p.name for p in (site / "api" / "schema").iterdir()}
        assert shipped == {name for name, _ in schemas.schemas()}
        for name, schema in schemas.schemas():
            assert json.loads((site / "api" / "schema" / name).read_text()) == schema
    for folder in folders:
        for path in sorted(folder.glob("*.json")):
            check("error", json.loads(path.read_text(encoding="utf-8")), path)
    if site is not None:  # the site's records, in one bundle per module
        for path in sorted((site / bundles.BUNDLES).glob("*" + bundles.SUFFIX)):
            bundle = bundles.load_bundle(path.read_bytes())
            for error_id in bundle["errors"]:
                check("error", bundles.bundle_record(bundle, error_id), f"{path}: {error_id}")
    return counts


def test_every_record_of_the_fixture_validates(make_repo, tmp_path: Path) -> None:
    _, mined = mine_sample(make_repo)
    out = tmp_path / "out"
    pipeline.publish(mined, out, site=True, jobs=1)
    counts = validate_output(out, out / "site")
    errors = len(mined.result.errors)
    assert counts == {
        "site": len(mined.result.sites),
        "analysis": errors,
        "manifest": 1,
        "error": 2 * errors,
        "index": 1,
        "site-manifest": 1,
    }
    assert errors > 5


@pytest.mark.integration
def test_every_record_of_sglang_validates(mined_release, tmp_path: Path) -> None:
    result, out = mined_release("v0.5.19")
    counts = validate_output(out, None)
    # the site's index, built as the site writes it (rendering every page is not needed)
    manifest = records.read_json(out / records.MANIFEST)
    index = html.index_json(result, manifest["counts"])
    VALIDATOR(schemas.schema("index")).validate(index)
    counts["index"] = 1
    print("validated:", counts)
    assert counts["site"] == len(result.sites) > 1000
    assert counts["analysis"] == counts["error"] == len(result.errors)
