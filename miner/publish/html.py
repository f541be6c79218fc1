"""The static HTML site: a page per error, an index with offline search, a JSON API.

Layout under the site folder (``<out>/site`` by default), every link relative
so it works from ``file://`` and from any static host::

    index.html                 every error; filters, sorting, search box
    errors/<error_id>.html     one card per error (stable URL)
    diffs/<name>.html          one page per release diff found in <out>/diffs/
    api/index.json             every error, with message parts and sites
    api/errors/<error_id>.json one error (same record as the mined output)
    api/diffs/<name>.json      the release diffs, as found
    api/schema/*-v<N>.json     JSON Schemas of the above (N = SCHEMA_VERSION)
    search-data.js             the search index (data for static/search.js)
    static/                    CSS, search.js, vendored MiniSearch

Pages come from Jinja2 templates in ``templates/site/`` with autoescaping
on: messages, guards and excerpts are source text and may hold ``<``, ``&``,
quotes or ``</script>``. JSON placed where a browser parses script is written
with :func:`script_json`. Every file is a function of the records, so the
same records give the same bytes; files are written atomically and only when
changed, and pages of errors that are gone are removed.

Release diffs: any ``<out>/diffs/*.json`` holding an object is published as a
page (``diffs/<stem>.html``) and as JSON; lists of objects in it are shown as
tables, an ``error_id`` linked to its card. That is the hook for the diff
stage: it writes its JSON there and the site picks it up.
"""

from __future__ import annotations

import dataclasses
import importlib.resources
import json
import logging
import os
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import jinja2
from markdown_it import MarkdownIt
from markupsafe import Markup
from pygments import highlight as pygments_highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import PythonLexer, get_lexer_by_name
from pygments.util import ClassNotFound

from miner import __version__
from miner.errors import OutputError
from miner.files import remove_stale, write_text
from miner.model import SCHEMA_VERSION, Analysis, Error, MineResult, Site, shorten
from miner.publish.cards import environment
from miner.publish.patterns import PREFIX_PATTERNS
from miner.publish.records import dumps, error_json

if TYPE_CHECKING:  # importlib.resources.abc is Python 3.11+; annotations only
    from importlib.resources.abc import Traversable

log = logging.getLogger("miner")

#: The site's templates, static files and JSON Schemas, as package data.
SITE_TEMPLATES = importlib.resources.files("miner.publish") / "templates" / "site"
#: Analysis fields the card lays out itself; any other field gets a generic section.
CARD_FIELDS = (
    "error_id",
    "trigger",
    "what_it_means",
    "situations",
    "solutions",
    "example_fix",
    "related",
    "author",
)
#: Fewer errors than this are rendered in the calling process.
PARALLEL_MIN = 500
#: Fence languages of example fixes that Pygments names differently.
LEXER_ALIASES = {"shell": "bash", "sh": "bash", "dotenv": "bash", "env": "bash"}


def script_json(data: Any) -> str:
    """Compact, deterministic JSON that is safe inside ``<script>`` and in a
    ``.js`` file: ``<``, ``>``, ``&`` and the line separators U+2028/2029 are
    written as ``\\u`` escapes, so no message can close the script element."""
    text = json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    for char, escape in (
        ("<", "\\u003c"),
        (">", "\\u003e"),
        ("&", "\\u0026"),
        ("\u2028", "\\u2028"),
        ("\u2029", "\\u2029"),
    ):
        text = text.replace(char, escape)
    return text


@cache
def _markdown() -> MarkdownIt:
    # Raw HTML in the prose is shown as text, never passed through.
    return MarkdownIt("commonmark", {"html": False})


def markdown(text: str | None) -> Markup:
    """Analysis prose (Markdown) as HTML; raw HTML inside it is escaped."""
    return Markup(_markdown().render(text or ""))


def markdown_inline(text: str | None) -> Markup:
    """One line of Markdown (a list item) as inline HTML."""
    return Markup(_markdown().renderInline(text or ""))


@cache
def _formatter(start: int, marked: tuple[int, ...]) -> HtmlFormatter:
    return HtmlFormatter(
        linenos="table",
        linenostart=start,
        hl_lines=list(marked),
        lineanchors="L",
        anchorlinenos=True,
        wrapcode=True,
    )


def highlight_site(site: Site) -> Markup:
    """The site's excerpt as highlighted HTML: real line numbers (anchors
    ``#L-<n>``), the ``raise``/``assert`` statement's lines marked."""
    excerpt = site.excerpt
    first = max(site.line, excerpt.start_line) - excerpt.start_line + 1
    last = min(site.end_line, excerpt.end_line) - excerpt.start_line + 1
    formatter = _formatter(excerpt.start_line, tuple(range(first, last + 1)))
    return Markup(pygments_highlight(excerpt.text + "\n", PythonLexer(), formatter))


def highlight_code(text: str, language: str) -> Markup:
    """A code block (an example fix) highlighted for its fence language."""
    try:
        lexer = get_lexer_by_name(LEXER_ALIASES.get(language, language) or "text")
    except ClassNotFound:
        lexer = get_lexer_by_name("text")
    return Markup(pygments_highlight(text + "\n", lexer, HtmlFormatter(wrapcode=True)))


def field_title(name: str) -> str:
    """``what_it_means`` -> ``What it means``."""
    return name.replace("_", " ").capitalize()


def extra_sections(analysis: Analysis) -> list[tuple[str, Any]]:
    """(title, value) of every non-empty Analysis field the card does not lay
    out itself (fields added later show up without a template change)."""
    out = []
    for item in dataclasses.fields(analysis):
        if item.name in CARD_FIELDS:
            continue
        value = getattr(analysis, item.name)
        if value in (None, "", (), [], {}):
            continue
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            value = dataclasses.asdict(value)
        elif isinstance(value, tuple) and value and dataclasses.is_dataclass(value[0]):
            value = [dataclasses.asdict(v) for v in value]  # type: ignore[call-overload]
        out.append((field_title(item.name), value))
    return out


@cache
def site_environment() -> jinja2.Environment:
    """The project's Jinja2 environment with autoescaping always on and the
    site's filters (``markdown``, ``markdown_inline``, ``tojson_script``)."""
    env = environment().overlay(autoescape=True)
    # The overlay shares these dicts with the base environment: copy before adding.
    env.filters = dict(env.filters)
    env.globals = dict(env.globals)
    env.globals["tool_version"] = __version__
    env.filters["headline"] = headline
    env.filters["markdown"] = markdown
    env.filters["markdown_inline"] = markdown_inline
    env.filters["tojson_script"] = lambda value: Markup(script_json(value))
    env.filters["pretty_json"] = lambda value: json.dumps(
        value, sort_keys=True, indent=2, ensure_ascii=False
    )
    return env


def headline(error: Error, width: int = 140) -> str:
    """The error's message on one line, cut at ``width`` characters with an
    ellipsis; the card title when there is no message template."""
    if error.message is None:
        return error.title
    return shorten(" ".join(error.message.split()), width)


def card_path(error_id: str) -> str:
    """Site-relative path of an error's page."""
    return f"errors/{error_id}.html"


def index_entry(error: Error) -> dict[str, Any]:
    """One error in ``api/index.json``."""
    return {
        "error_id": error.error_id,
        "exception": error.exception,
        "message": error.message,
        "message_kind": error.message_kind,
        "message_parts": [p.to_json() for p in error.message_parts],
        "title": error.title,
        "module": error.module,
        "card": card_path(error.error_id),
        "api": f"api/errors/{error.error_id}.json",
        "sites": [
            {"path": s.path, "line": s.line, "end_line": s.end_line, "scope": s.scope}
            for s in error.sites
        ],
    }


def index_json(
    result: MineResult, counts: Mapping[str, Any], diffs: Sequence[str] = ()
) -> dict[str, Any]:
    """``api/index.json``: the commit, the counts and every error."""
    return {
        "schema_version": SCHEMA_VERSION,
        "schema": f"schema/index-v{SCHEMA_VERSION}.json",
        "tool": {"name": "raise-miner", "version": __version__},
        "commit": result.commit.to_json(),
        "counts": dict(counts),
        "diffs": [f"api/diffs/{name}.json" for name in diffs],
        "errors": [index_entry(e) for e in sorted_errors(result)],
    }


def sorted_errors(result: MineResult) -> list[Error]:
    """Errors in index order: module, line, id."""
    return sorted(result.errors, key=lambda e: (e.module, e.primary.line, e.error_id))


def search_data(result: MineResult) -> dict[str, Any]:
    """The browser search's data: compact rows in index order.

    ``docs[i]`` is ``[error_id, exception, title, module, scope, parts,
    sites]``: ``parts`` lists literal strings and ``0`` for each placeholder,
    or is null when the message is not a template; ``sites`` lists ``[path
    index, line, end_line]`` into ``paths``.
    """
    paths = sorted({s.path for s in result.sites if s.error_id})
    path_index = {p: i for i, p in enumerate(paths)}
    docs = []
    for error in sorted_errors(result):
        parts: list[str | int] | None = None
        if error.message_kind in ("literal", "template"):
            parts = [0 if p.expr is not None else (p.text or "") for p in error.message_parts]
        docs.append(
            [
                error.error_id,
                error.exception or "",
                headline(error, 200),
                error.module,
                error.primary.scope,
                parts,
                [[path_index[s.path], s.line, s.end_line] for s in error.sites],
            ]
        )
    return {
        "version": SCHEMA_VERSION,
        "commit": result.commit.to_json(),
        "prefixes": list(PREFIX_PATTERNS),
        "paths": paths,
        "docs": docs,
    }


def load_diffs(out: Path) -> list[tuple[str, dict[str, Any]]]:
    """Release diffs found in ``<out>/diffs/*.json``, by file name; a file that
    is not a JSON object is logged and left out."""
    found = []
    folder = out / "diffs"
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            log.warning("%s: not read as a release diff (%s)", path, exc)
            continue
        if not isinstance(data, dict):
            log.warning("%s: not read as a release diff (not a JSON object)", path)
            continue
        found.append((path.stem, data))
    return found


def diff_tables(data: Mapping[str, Any]) -> tuple[list[tuple[str, Any]], list[dict[str, Any]]]:
    """A diff object split for display: scalar fields, and each list of
    objects as a table ``{"title", "columns", "rows"}``."""
    scalars = []
    tables = []
    for key in sorted(data):
        value = data[key]
        if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            columns = sorted({k for row in value for k in row})
            if "error_id" in columns:
                columns.remove("error_id")
                columns.insert(0, "error_id")
            tables.append({"title": field_title(key), "columns": columns, "rows": value})
        elif not isinstance(value, (dict, list)):
            scalars.append((field_title(key), value))
        else:
            scalars.append((field_title(key), json.dumps(value, sort_keys=True)))
    return scalars, tables


def _walk(folder: Traversable, prefix: str = "") -> Iterator[tuple[str, Traversable]]:
    """Files under a package-data folder, relative path -> resource, sorted."""
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if entry.is_dir():
            yield from _walk(entry, f"{prefix}{entry.name}/")
        elif entry.is_file():
            yield f"{prefix}{entry.name}", entry


def static_files() -> Iterator[tuple[str, str]]:
    """The static assets, site-relative path -> text (CSS, JS, the vendored
    MiniSearch and its license, Pygments' style sheet), and the JSON Schemas."""
    for rel, entry in _walk(SITE_TEMPLATES / "static"):
        yield f"static/{rel}", entry.read_text("utf-8")
    yield "static/pygments.css", HtmlFormatter(style="default").get_style_defs(".highlight") + "\n"
    for rel, entry in _walk(SITE_TEMPLATES / "schema"):
        if rel.endswith(".json"):
            yield f"api/schema/{rel}", entry.read_text("utf-8")


def site_files(
    result: MineResult,
    analyses: Mapping[str, Analysis],
    counts: Mapping[str, Any],
    diffs: Sequence[tuple[str, dict[str, Any]]] = (),
    jobs: int = 1,
) -> Iterator[tuple[str, str]]:
    """Every file of the site as (site-relative path, text), pages last;
    ``jobs`` worker processes render the cards (see :func:`card_files`)."""
    env = site_environment()
    yield from static_files()
    diff_names = [name for name, _ in diffs]
    yield "api/index.json", dumps(index_json(result, counts, diff_names))
    yield "search-data.js", f"window.RAISE_MINER_SEARCH = {script_json(search_data(result))};\n"
    errors = sorted_errors(result)
    titles = {e.error_id: e.title for e in errors}
    commit = result.commit
    exceptions = Counter(e.exception or "" for e in errors)
    modules = sorted({e.module for e in errors})
    yield (
        "index.html",
        env.get_template("site/index.html.j2").render(
            root="",
            commit=commit,
            counts=counts,
            errors=errors,
            exceptions=sorted(exceptions.items()),
            modules=modules,
            diffs=diff_names,
        ),
    )
    for name, data in diffs:
        yield f"api/diffs/{name}.json", dumps(data)
        scalars, tables = diff_tables(data)
        yield (
            f"diffs/{name}.html",
            env.get_template("site/diff.html.j2").render(
                root="../",
                commit=commit,
                name=name,
                scalars=scalars,
                tables=tables,
                titles=titles,
            ),
        )
    yield from card_files(CardContext(result, dict(analyses), titles, errors), jobs)


@dataclasses.dataclass(frozen=True)
class CardContext:
    """What every card page needs; handed once to each worker process."""

    result: MineResult
    analyses: dict[str, Analysis]
    titles: dict[str, str]
    errors: list[Error]
    """The errors in index order; cards are rendered by position."""


_CONTEXT: CardContext | None = None


def _set_context(context: CardContext) -> None:
    global _CONTEXT
    _CONTEXT = context


def render_card(context: CardContext, error: Error) -> tuple[str, str]:
    """One error's JSON record and HTML page (texts)."""
    analysis = context.analyses.get(error.error_id) or Analysis(error_id=error.error_id, trigger="")
    fix = analysis.example_fix
    page = (
        site_environment()
        .get_template("site/error.html.j2")
        .render(
            root="../",
            commit=context.result.commit,
            error=error,
            site=error.primary,
            analysis=analysis,
            excerpt=highlight_site(error.primary),
            fix=None
            if fix is None
            else {
                "before": highlight_code(fix.before, fix.language),
                "after": highlight_code(fix.after, fix.language),
            },
            extras=extra_sections(analysis),
            titles=context.titles,
        )
    )
    return dumps(error_json(error, context.result.commit, analysis)), page


def _render_at(position: int) -> tuple[str, str]:
    assert _CONTEXT is not None, "worker started without its context"
    return render_card(_CONTEXT, _CONTEXT.errors[position])


def card_files(context: CardContext, jobs: int = 1) -> Iterator[tuple[str, str]]:
    """(path, text) of every error's JSON record and page, in index order.

    With ``jobs`` > 1 and enough errors, the cards are rendered by that many
    worker processes (Pygments' lexer is most of the time); the order, and so
    the output, is the same.
    """
    count = len(context.errors)
    if jobs <= 1 or count < PARALLEL_MIN:
        pages: Iterator[tuple[str, str]] = (render_card(context, e) for e in context.errors)
        pool = None
    else:
        pool = ProcessPoolExecutor(jobs, initializer=_set_context, initargs=(context,))
        pages = pool.map(_render_at, range(count), chunksize=64)
    try:
        for error, (record, page) in zip(context.errors, pages, strict=True):
            yield f"api/errors/{error.error_id}.json", record
            yield card_path(error.error_id), page
    finally:
        if pool is not None:
            pool.shutdown(cancel_futures=True)


def write_site(
    result: MineResult,
    dest: Path,
    analyses: Mapping[str, Analysis],
    counts: Mapping[str, Any],
    *,
    diffs: Sequence[tuple[str, dict[str, Any]]] = (),
    jobs: int | None = None,
) -> dict[str, int]:
    """Write the site of ``result`` into ``dest``.

    ``analyses`` maps every error id to its analysis; ``counts`` are the
    manifest's counts shown on the index; ``jobs`` is the number of processes
    rendering cards (default: one per CPU). Returns counts of files
    ``written``, ``unchanged`` and ``removed`` (pages and JSON of errors that
    are gone), and the site's total ``bytes``.

    Raises:
        OutputError: ``dest`` cannot be created or written.
    """
    stats = {"written": 0, "unchanged": 0, "removed": 0, "bytes": 0}
    wanted: set[Path] = set()
    try:
        for rel, text in site_files(result, analyses, counts, diffs, jobs or os.cpu_count() or 1):
            path = dest / rel
            wanted.add(path)
            stats["written" if write_text(path, text) else "unchanged"] += 1
            stats["bytes"] += len(text.encode("utf-8", "surrogateescape"))
        stale = [("errors", "*.html"), ("api/errors", "*.json"), ("diffs", "*.html")]
        stale.append(("api/diffs", "*.json"))
        stats["removed"] += remove_stale(((dest / f, p) for f, p in stale), wanted)
    except OSError as exc:
        raise OutputError(
            f"{dest}: cannot write the site ({exc.strerror or exc}); "
            "check permissions and free space"
        ) from None
    return stats
