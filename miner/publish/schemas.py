"""JSON Schemas (draft 2020-12) of every record written, generated from the record types.

Each schema is built by introspecting the frozen dataclasses of
:mod:`miner.model` (``dataclasses.fields`` and ``typing.get_type_hints``):

=====================  ==============================================
``str`` ``int`` ...    ``{"type": "string"}``, ``integer``, ``boolean``, ``number``
``Literal[...]``       ``{"enum": [...]}``
``X | None``           ``X`` or ``null``
``tuple[X, ...]``      ``{"type": "array", "items": X}``
a dataclass            ``{"$ref": "#/$defs/<Name>"}``
=====================  ==============================================

Every object has ``additionalProperties: false`` and requires every key its
``to_json`` always writes. Where ``to_json`` is not a plain copy of the fields
(a key left out, a key written only when set, a key added), a :class:`Shape`
below says so; ``tests/test_schemas.py`` checks, key by key, that each
schema's properties are exactly what ``to_json`` writes for a fully populated
record, so the two cannot drift apart.

The published schemas, ``<name>-v<SCHEMA_VERSION>.json``:

=====================  ======================================================
``site``               one row of ``sites.jsonl``
``analysis``           one row of ``analyses.jsonl``
``error``              ``api/errors/<id>.json`` (mined folder and site)
``manifest``           ``manifest.json``
``site-manifest``      the site's ``manifest.json`` (the files it holds)
``index``              the site's ``api/index.json.gz`` (gzip'd)
=====================  ======================================================

Each file is self-contained (its own ``$defs``). The site ships all of them
under ``api/schema/``, the mined folder the record schemas under ``schema/``,
both rendered from here at write time: there is no checked-in copy to drift.
"""

from __future__ import annotations

import copy
import dataclasses
import enum
import inspect
import types
import typing
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any, Literal, get_args, get_origin

from miner.model import (
    SCHEMA_VERSION,
    Analysis,
    AudienceName,
    Caught,
    CommitInfo,
    Condition,
    Constraint,
    DynamicReason,
    Error,
    ExampleFix,
    Excerpt,
    FileResult,
    Finding,
    Guard,
    History,
    HistoryEvent,
    Hop,
    MessagePart,
    Origin,
    OriginKind,
    Parser,
    Site,
    Unreachable,
)
from miner.releases.diff import Aspect

DRAFT = "https://json-schema.org/draft/2020-12/schema"

Schema = dict[str, Any]

#: An error or site id (:mod:`miner.mining.ids`).
ID: Schema = {"type": "string", "pattern": "^[0-9a-f]{16}$"}
#: A full git object id (commit or blob).
SHA: Schema = {"type": "string", "pattern": "^[0-9a-f]{40}$"}
#: A 1-based line number.
LINE: Schema = {"type": "integer", "minimum": 1}
STRING: Schema = {"type": "string"}

_SCALARS: dict[Any, Schema] = {
    str: {"type": "string"},
    bool: {"type": "boolean"},
    int: {"type": "integer"},
    float: {"type": "number"},
}


def ref(name: str) -> Schema:
    return {"$ref": f"#/$defs/{name}"}


def nullable(schema: Schema) -> Schema:
    """``schema`` or null."""
    if "enum" in schema:
        return {**schema, "enum": [*schema["enum"], None]}
    if isinstance(schema.get("type"), str) and "$ref" not in schema:
        return {**schema, "type": [schema["type"], "null"]}
    return {"anyOf": [schema, {"type": "null"}]}


def obj(
    properties: Mapping[str, Schema], required: tuple[str, ...] | None = None, **extra: Any
) -> Schema:
    """A closed object: only ``properties``; ``required`` defaults to all of them."""
    names = list(properties)
    out: Schema = {"type": "object", **extra, "properties": dict(properties)}
    out["required"] = names if required is None else [n for n in names if n in required]
    out["additionalProperties"] = False
    return out


def type_schema(hint: Any) -> Schema:
    """The JSON Schema of one type hint of a record field.

    Raises:
        TypeError: a type the records do not use (so a new one fails loudly).
    """
    origin = get_origin(hint)
    if origin is Literal:
        return {"enum": list(get_args(hint))}
    if origin in (typing.Union, types.UnionType):
        kinds = [a for a in get_args(hint) if a is not type(None)]
        inner = (
            type_schema(kinds[0]) if len(kinds) == 1 else {"anyOf": [type_schema(a) for a in kinds]}
        )
        return nullable(inner) if len(kinds) < len(get_args(hint)) else inner
    if origin is tuple:
        items = get_args(hint)
        if len(items) == 2 and items[1] is Ellipsis:
            return {"type": "array", "items": type_schema(items[0])}
    elif dataclasses.is_dataclass(hint) and isinstance(hint, type):
        return ref(hint.__name__)
    elif isinstance(hint, type) and issubclass(hint, enum.Enum):
        return {"enum": [member.value for member in hint]}
    elif hint in _SCALARS:
        return dict(_SCALARS[hint])
    raise TypeError(f"no JSON Schema for the record type {hint!r}")


def strip_null(schema: Schema) -> Schema:
    """``schema`` without its null alternative (a key written only when set)."""
    if "anyOf" in schema:
        rest = [s for s in schema["anyOf"] if s != {"type": "null"}]
        return rest[0] if len(rest) == 1 else {"anyOf": rest}
    if isinstance(schema.get("type"), list):
        kinds = [t for t in schema["type"] if t != "null"]
        return {**schema, "type": kinds[0] if len(kinds) == 1 else kinds}
    if "enum" in schema:
        return {**schema, "enum": [v for v in schema["enum"] if v is not None]}
    return schema


def doc(thing: Any) -> str:
    """The first paragraph of a docstring, on one line."""
    text = inspect.getdoc(thing) or ""
    return " ".join(text.split("\n\n")[0].split())


@dataclass(frozen=True)
class Shape:
    """How a record's JSON differs from its dataclass fields (empty: a plain copy)."""

    only: tuple[str, ...] | None = None
    """The fields written (default: every field)."""
    drop: tuple[str, ...] = ()
    """Fields the JSON leaves out."""
    omit_none: tuple[str, ...] = ()
    """Fields written only when set: never null, not required."""
    add: Mapping[str, Schema | None] = field(default_factory=dict)
    """Keys the JSON adds: name -> schema, or None for a property of the class
    (typed by its return annotation)."""
    refine: Mapping[str, Schema] = field(default_factory=dict)
    """Keywords merged into a key's schema (a pattern, a minimum, ``items``)."""
    variants: tuple[tuple[str, ...], ...] = ()
    """When set, the JSON is exactly one of these key groups (``oneOf``), each
    value non-null."""
    description: str | None = None
    """Instead of the class's docstring."""


#: Field refinements shared by every record that has the field.
_COMMON: dict[str, Schema] = {
    "error_id": ID,
    "site_id": ID,
    "line": LINE,
    "end_line": LINE,
    "start_line": LINE,
    "sha": SHA,
}

_ID_LIST: Schema = {"items": ID}

#: Every ``$defs`` entry: name -> (record type, shape).
DEFS: dict[str, tuple[type, Shape]] = {
    "MessagePart": (
        MessagePart,
        Shape(
            omit_none=("conversion", "spec", "optional"),
            refine={
                "conversion": {"enum": ["r", "s", "a"]},
                "optional": {"minimum": 1},
            },
            variants=(("text", "optional"), ("expr", "conversion", "spec", "optional")),
        ),
    ),
    "Guard": (Guard, Shape(omit_none=("name", "subject"))),
    "Excerpt": (Excerpt, Shape()),
    "Site": (Site, Shape()),
    "PublishedSite": (
        Site,
        Shape(
            add={"url": {"type": "string", "description": "Permalink to the line at the commit"}},
            description="A site as the error records publish it: the site record and its URL.",
        ),
    ),
    "ExampleFix": (ExampleFix, Shape()),
    "Hop": (Hop, Shape()),
    "Constraint": (Constraint, Shape()),
    "Origin": (Origin, Shape()),
    "Caught": (Caught, Shape()),
    "Unreachable": (Unreachable, Shape()),
    "Finding": (Finding, Shape()),
    "Analysis": (
        Analysis,
        Shape(drop=("error_id",), refine={"related": _ID_LIST}),
    ),
    "HistoryEvent": (
        HistoryEvent,
        Shape(refine={"aspects": {"items": {"enum": [a.key for a in Aspect]}}}),
    ),
    "History": (History, Shape(add={"present": None}, refine={"ids": _ID_LIST})),
    "CommitInfo": (CommitInfo, Shape()),
    "FileNote": (
        FileResult,
        Shape(
            only=("path", "blob", "status", "reason"),
            refine={"blob": SHA},
            description="A file not mined, or mined with a note (why).",
        ),
    ),
    "IndexSite": (
        Site,
        Shape(only=("path", "line", "end_line", "scope"), description="Where a site is."),
    ),
    "ErrorRecord": (
        Error,
        Shape(
            add={
                "schema_version": {"const": SCHEMA_VERSION},
                "repo": {"type": "string", "description": "owner/name"},
                "commit": SHA,
                "commit_date": STRING,
                "title": None,
                "module": None,
                "analysis": nullable(ref("Analysis")),
                "history": nullable(ref("History")),
                "audience": nullable({"enum": list(get_args(AudienceName))}),
            },
            refine={"sites": {"minItems": 1, "items": ref("PublishedSite")}},
            description="One error (exception type and message template) at one commit, "
            "every site raising it, and its card's analysis and history (null when none).",
        ),
    ),
    "IndexEntry": (
        Error,
        Shape(
            add={
                "title": None,
                "module": None,
                "audience": nullable({"enum": list(get_args(AudienceName))}),
                "card": {
                    "type": "string",
                    "pattern": "^(?:errors/[0-9a-f]{16}\\.html|(?:internal|abstract|test|script)"
                    "/[A-Za-z0-9_.-]+\\.html#[0-9a-f]{16})$",
                    "description": "The error's page: its card, or for an internal, abstract, "
                    "test or script error the page of its module and the error's anchor.",
                },
                "api": {
                    "type": "string",
                    "pattern": "^api/modules/[A-Za-z0-9_.-]+\\.json\\.gz$",
                    "description": "The bundle of the error's module holding its record "
                    "(under errors, by id).",
                },
            },
            refine={"sites": {"minItems": 1, "items": ref("IndexSite")}},
            description="One error in the index: enough to match a runtime message.",
        ),
    ),
}


def record_schema(cls: type, shape: Shape) -> Schema:
    """The object schema of one record type as its JSON writes it."""
    hints = typing.get_type_hints(cls)
    names = [f.name for f in dataclasses.fields(cls) if f.name not in shape.drop]
    if shape.only is not None:
        names = [n for n in names if n in shape.only]
    properties: dict[str, Schema] = {}
    for name in names:
        schema = type_schema(hints[name])
        if name in shape.omit_none or any(name in v for v in shape.variants):
            schema = strip_null(schema)
        properties[name] = schema
    for name, added in shape.add.items():
        if added is None:
            prop = getattr(cls, name)
            added = type_schema(typing.get_type_hints(prop.fget)["return"])
        properties[name] = added
    for name in properties:
        properties[name] = {
            **properties[name],
            **_COMMON.get(name, {}),
            **shape.refine.get(name, {}),
        }
    description = shape.description or doc(cls)
    if shape.variants:
        return {
            "description": description,
            "oneOf": [
                obj(
                    {n: properties[n] for n in keys},
                    tuple(n for n in keys if n not in shape.omit_none),
                )
                for keys in shape.variants
            ],
        }
    required = tuple(n for n in properties if n not in shape.omit_none)
    return obj(properties, required, description=description)


def _counts() -> Schema:
    parsers = {name: {"type": "integer", "minimum": 0} for name in get_args(Parser)}
    count: Schema = {"type": "integer", "minimum": 0}
    names = (
        "files",
        "files_mined",
        "files_with_sites",
        "files_skipped",
        "files_failed",
        "sites",
        "raise_sites",
        "assert_sites",
        "call_sites",
        "reraise_sites",
    )
    properties: dict[str, Schema] = {n: count for n in names}
    properties["sites_by_parser"] = obj(parsers, required=())
    properties["dynamic_messages"] = count
    reasons = {name: count for name in get_args(DynamicReason)}
    properties["dynamic_messages_by_reason"] = obj(reasons)
    properties["errors"] = count
    audiences = {name: count for name in get_args(AudienceName)}
    properties["errors_by_audience"] = obj(audiences, required=())
    properties["origins_by_kind"] = obj({k.value: count for k in OriginKind}, required=())
    properties["errors_logged"] = count
    properties["errors_unreachable"] = count
    properties["user_facing_with_user_origin"] = count
    return obj(properties, description="What was mined: files, sites and errors.")


def _condition() -> Schema:
    """A reach condition (:meth:`miner.model.Condition.to_json`): a constant,
    an ``and`` / ``or`` of conditions, or an atom."""
    kinds = list(get_args(typing.get_type_hints(Condition)["kind"]))
    return {
        "description": doc(Condition),
        "type": "object",
        "oneOf": [
            obj(
                {
                    "op": {"enum": ["true", "false", "and", "or"]},
                    "args": {"type": "array", "items": ref("Condition"), "minItems": 2},
                },
                required=("op",),
            ),
            obj(
                {
                    "atom": STRING,
                    "negated": {"type": "boolean"},
                    "kind": {"enum": kinds},
                    "text": STRING,
                }
            ),
        ],
    }


def _tool() -> Schema:
    return obj({"name": {"const": "raise-miner"}, "version": STRING})


def _written(folder: str) -> Schema:
    return {
        "type": "array",
        "items": {"type": "string", "pattern": "^[^/].*$"},
        "uniqueItems": True,
        "description": f"Every file the tool wrote in the {folder}, relative to it, sorted "
        "(the manifest itself included): the only files a later run may delete.",
    }


#: The published schemas: name -> (title, description, root schema).
ROOTS: dict[str, tuple[str, str, Schema]] = {
    "site": (
        "site record",
        "One row of sites.jsonl: a raise or assert statement at one commit.",
        ref("Site"),
    ),
    "analysis": (
        "analysis record",
        "One row of analyses.jsonl: an error's analysis and, in a release site, its history.",
        obj(
            {"error_id": ID, "analysis": ref("Analysis"), "history": ref("History")},
            required=("error_id", "analysis"),
        ),
    ),
    "error": (
        "error record",
        "api/errors/<error_id>.json: one error (exception type and message template) "
        "and every site raising it, at one commit.",
        ref("ErrorRecord"),
    ),
    "manifest": (
        "manifest",
        "manifest.json: the repository and commit mined, the tool, counts, and every "
        "file not mined (or mined with a note).",
        obj(
            {
                "schema_version": {"const": SCHEMA_VERSION},
                "tool": _tool(),
                "commit": ref("CommitInfo"),
                "counts": ref("Counts"),
                "files": {"type": "array", "items": ref("FileNote")},
                "written": _written("mined folder"),
                "inputs": {
                    "type": "string",
                    "pattern": "^[0-9a-f]{64}$",
                    "description": "sha256 of everything the folder was made from: the "
                    "commit, its tree and records, the options, and the tool's code; a run "
                    "from the same inputs into this folder skips its work.",
                },
            },
            required=("schema_version", "tool", "commit", "counts", "files", "written"),
        ),
    ),
    "site-manifest": (
        "site manifest",
        "manifest.json of an HTML site: the tool, the commit the site documents, and "
        "every file the tool wrote in the site folder.",
        obj(
            {
                "schema_version": {"const": SCHEMA_VERSION},
                "tool": _tool(),
                "kind": {"const": "site"},
                "commit": ref("CommitInfo"),
                "written": _written("site folder"),
            }
        ),
    ),
    "index": (
        "error index",
        "api/index.json.gz (gzip'd): every error of one commit, with its message parts (enough to "
        "match a runtime message) and sites. Paths in card, api and diffs are relative "
        "to the site root.",
        obj(
            {
                "schema_version": {"const": SCHEMA_VERSION},
                "schema": {"const": f"schema/index-v{SCHEMA_VERSION}.json"},
                "tool": _tool(),
                "commit": ref("CommitInfo"),
                "counts": ref("Counts"),
                "diffs": {
                    "type": "array",
                    "items": {"type": "string", "pattern": "^api/diffs/.+\\.json\\.gz$"},
                },
                "errors": {"type": "array", "items": ref("IndexEntry")},
            }
        ),
    ),
}

#: The schemas written next to the records of a mined folder (``schema/``).
RECORD_SCHEMAS = ("site", "analysis", "error", "manifest")


#: ``$defs`` entries that are no record type: name -> builder.
PLAIN_DEFS = {"Counts": _counts, "Condition": _condition}


def definition(name: str) -> Schema:
    """One ``$defs`` entry."""
    if name in PLAIN_DEFS:
        return PLAIN_DEFS[name]()
    cls, shape = DEFS[name]
    return record_schema(cls, shape)


def _refs(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        target = node.get("$ref")
        if isinstance(target, str) and target.startswith("#/$defs/"):
            yield target[len("#/$defs/") :]
        for value in node.values():
            yield from _refs(value)
    elif isinstance(node, list):
        for value in node:
            yield from _refs(value)


def file_name(name: str) -> str:
    """``error`` -> ``error-v2.json``."""
    return f"{name}-v{SCHEMA_VERSION}.json"


@cache
def _schema(name: str) -> Schema:
    title, description, root = ROOTS[name]
    defs: dict[str, Schema] = {}
    pending = list(_refs(root))
    while pending:
        wanted = pending.pop()
        if wanted not in defs:
            defs[wanted] = definition(wanted)
            pending.extend(_refs(defs[wanted]))
    # A root that is one record is written out in place, not as a lone $ref.
    if set(root) == {"$ref"}:
        inline = next(_refs(root))
        root = {k: v for k, v in defs[inline].items() if k != "description"}
        if all(inline not in _refs(s) for d, s in defs.items() if d != inline):
            del defs[inline]
    schema: Schema = {
        "$schema": DRAFT,
        "$id": file_name(name),
        "title": f"raise-miner {title}, version {SCHEMA_VERSION}",
        "description": description,
        **root,
    }
    if defs:
        schema["$defs"] = dict(sorted(defs.items()))
    return schema


def schema(name: str) -> Schema:
    """The JSON Schema ``name`` (a key of :data:`ROOTS`), a fresh copy."""
    return copy.deepcopy(_schema(name))


def schemas(names: tuple[str, ...] | None = None) -> Iterator[tuple[str, Schema]]:
    """(file name, schema) of the schemas ``names`` (default: all), in name order."""
    for name in sorted(ROOTS if names is None else names):
        yield file_name(name), schema(name)
