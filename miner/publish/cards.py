"""Write a mine result: JSON records, the manifest, and the cards (Jinja2).

Where an error is documented depends on its audience (``Analysis.audience``):
an error a user can cause and fix (:data:`USER_FACING`) gets a full card,
``errors/<id>.md``; the others (:data:`GROUPED`: internal checks, abstract
stubs, the test suite, scripts) get a compact entry, anchored by the error id,
on a page per module, ``<audience>/<module>.md``, and the page
``<audience>/README.md`` says once what such an error means and what to do.
Every error keeps its JSON record, ``api/errors/<id>.json``, and its id: a
change of audience moves the card, never renames it (:func:`card_ref`).

One Jinja2 environment renders every card; the folder is published as a
whole (:mod:`miner.publish.output`: a staging folder swapped in), files only
rewritten when their content changed, so re-rendering a release touches only
what is new. Files a previous run wrote for errors that are gone are removed,
and nothing it did not write. Nothing written depends on the wall clock, so
the same commit gives byte-identical output.

Text from the mined code (messages, paths, scopes, guards, docstrings in the
prose) is Markdown-escaped wherever it is not in a code span or fence
(:func:`md_text`, :func:`md_prose`, applied to every ``{{ }}`` by the
environment's ``finalize``): no raw HTML, no Liquid or Jinja delimiters, no
backtick that closes a code span, no ``|`` or line break that ends a table
cell (:func:`code_span`, :func:`fence`, :func:`table_cell`).
"""

from __future__ import annotations

import hashlib
import itertools
import re
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import quote

import jinja2

from miner import TEMPLATES
from miner.lifecycle import fork_imap
from miner.model import Analysis, CommitInfo, Error, Guard, History, MineResult, Site
from miner.publish import output
from miner.publish.records import dumps, error_json, manifest_json, record_files


class Md(str):
    """Markdown that needs no more escaping: a code span, a fence, escaped
    text (what the filters below return; ``finalize`` leaves it as it is)."""

    __slots__ = ()


_BACKTICKS = re.compile(r"`+")
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def fence(text: str, lang: str = "") -> Md:
    """A Markdown code fence longer than any backtick run inside ``text`` (so
    nothing in it closes the fence); the info string is kept to letters,
    digits, ``_``, ``+`` and ``-``."""
    longest = max((len(m) for m in _BACKTICKS.findall(text)), default=0)
    ticks = "`" * max(3, longest + 1)
    lang = re.sub(r"[^A-Za-z0-9_+-]", "", lang)
    return Md(f"{ticks}{lang}\n{text}\n{ticks}")


def code_span(text: Any) -> Md:
    """Inline Markdown code that survives backticks in ``text``: delimited by a
    backtick run longer than any inside, padded with a space when the text
    starts or ends with a backtick. Line breaks become spaces (what a code
    span shows for them anyway; a blank line would end the span)."""
    text = _LINE_BREAK.sub(" ", str(text))
    longest = max((len(m) for m in _BACKTICKS.findall(text)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return Md(f"{ticks}{pad}{text}{pad}{ticks}")


#: What :func:`md_text` escapes: every ASCII punctuation character with a
#: Markdown (or GitHub table) meaning, by a backslash.
_MD_PUNCT = re.compile(r"([\\`*_\[\]#|~!])")
#: An ``&`` that would start an entity reference.
_ENTITY = re.compile(r"&(?=#?[A-Za-z0-9]+;)")
#: Liquid (Jekyll) and Jinja openers: ``{{``, ``{%`` and ``{#``.
_TEMPLATE_OPEN = re.compile(r"\{(?=[{%#])")


def _escape_html(text: str) -> str:
    """``<`` and ``>`` as entities, an entity-like ``&...;`` as ``&amp;...;``,
    and ``{{``/``{%``/``{#`` broken by a backslash (``{\\{`` shows ``{{``)."""
    text = _ENTITY.sub("&amp;", text).replace("<", "&lt;").replace(">", "&gt;")
    return _TEMPLATE_OPEN.sub("{\\\\", text)


def md_text(text: Any) -> Md:
    """Plain text from the mined code (a title, a revision) as Markdown that
    shows exactly it, on one line: Markdown punctuation backslash-escaped,
    HTML characters as entities, template openers broken, line breaks as
    spaces; safe in a heading, a list item, a link text or a table cell."""
    text = _LINE_BREAK.sub(" ", str(text))
    return Md(_escape_html(_MD_PUNCT.sub(r"\\\1", text)))


#: A backslash escape of an ASCII punctuation character, or a backtick run.
_INLINE_TOKEN = re.compile(r"\\[!-/:-@\[-`{-~]|`+")


def md_prose(text: str) -> Md:
    """Markdown prose (the analysis' sections, which quote docstrings and
    messages) made safe to render: outside code spans, HTML characters as
    entities and template openers broken (:func:`_escape_html`); a code span
    is kept only when it closes on the same line, and every other backtick is
    escaped, so that a renderer pairs backticks exactly as read here. The
    prose keeps its emphasis, lists and code spans."""
    if not any(c in text for c in "<>&{`"):
        return Md(text)
    out: list[str] = []
    plain = 0  # start of the text not yet copied
    pos = 0
    while True:
        match = _INLINE_TOKEN.search(text, pos)
        if match is None:
            break
        token = match.group()
        if token[0] == "\\":
            pos = match.end()
            continue
        closing = re.compile(rf"(?<!`)`{{{len(token)}}}(?!`)").search(text, match.end())
        out.append(_escape_html(text[plain : match.start()]))
        if closing is not None and "\n" not in text[match.end() : closing.start()]:
            out.append(text[match.start() : closing.end()])
            plain = pos = closing.end()
        else:
            out.append("\\`" * len(token))
            plain = pos = match.end()
    out.append(_escape_html(text[plain:]))
    return Md("".join(out))


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\ud800-\udfff]")


def _escape(code: int) -> str:
    if 0xDC80 <= code <= 0xDCFF:  # a byte that is not UTF-8 (surrogateescape)
        return f"\\x{code - 0xDC00:02x}"
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def _show(match: re.Match[str]) -> str:
    return _escape(ord(match.group()))


def _unseen(char: str) -> bool:
    """Whether ``char`` is an invisible format character (Unicode category
    ``Cf``: bidirectional embeddings, overrides and isolates, zero-width space
    and joiners, soft hyphen, byte order mark, tag characters)."""
    return unicodedata.category(char) == "Cf"


def visible(value: Any) -> Any:
    """What a card prints for a value: control characters other than tab and
    newline (NUL, ESC, a ``\\r`` escape in a message) as ``\\xNN`` escapes,
    a byte of a file name that is not UTF-8 (``caf\\udce9.py``, decoded
    with ``surrogateescape``) as ``\\xNN`` (``caf\\xe9.py``), and every
    invisible format character (:func:`_unseen`) as ``\\u202e``,
    ``\\u200b``, ``\\xad``, ``\\U000e0041``: a bidirectional override cannot
    reorder what a card or a page shows ("Trojan Source"). Markdown and
    HTML leave such an escape as it is."""
    if not isinstance(value, str):
        return value
    text = _CONTROL.sub(_show, value) if _CONTROL.search(value) else value
    if not text.isascii() and any(_unseen(c) for c in text):
        text = "".join(_escape(ord(c)) if _unseen(c) else c for c in text)
    # type(value): a Markup value stays marked safe, an Md value Markdown.
    return value if text is value else type(value)(text)


def md_finalize(value: Any) -> Any:
    """Every ``{{ }}`` of a Markdown template: :func:`visible`, then a string
    that no filter made Markdown (:class:`Md`) is treated as prose
    (:func:`md_prose`)."""
    value = visible(value)
    if isinstance(value, str) and not isinstance(value, Md):
        return md_prose(value)
    return value


def table_cell(text: Any) -> Md:
    """Text safe inside a Markdown table cell (code spans too): ``|`` escaped as
    GitHub's tables want (also inside a code span), each line break shown as
    the two characters ``\\n``; an escaped ``\\|`` is kept."""
    text = re.sub(r"(?<!\\)\|", r"\\|", str(text))
    return Md(text.replace("\r", "").replace("\n", "\\n"))


def url(value: Any) -> Md:
    """A URL safe as a Markdown link destination: spaces, parentheses, angle
    brackets, quotes, backticks, ``|``, backslashes, control characters and
    anything not ASCII percent-encoded (bytes of a file name that is not UTF-8
    as themselves: ``caf%E9.py``)."""
    raw = str(value).encode("utf-8", "surrogateescape")
    return Md(quote(raw, safe="/:#?&=%@!$+,;~-._*'[]"))


#: Audiences whose errors users can cause and fix: each error gets a full card
#: (the same set as :data:`miner.analysis.audience.USER_FACING`, in display order).
USER_FACING = ("user-setting", "user-input", "dependency", "unsupported")
#: The other audiences, in display order: a compact entry per error on a page
#: per module, ``<audience>/<module>.md``, and one page saying what they mean.
GROUPED = ("internal", "abstract", "test", "script")
#: Every audience, in display order.
AUDIENCES = USER_FACING + GROUPED

#: What each audience's errors are, as a heading.
AUDIENCE_TITLES = {
    "user-setting": "Settings",
    "user-input": "Requests and inputs",
    "dependency": "Dependencies and platforms",
    "unsupported": "Unsupported features",
    "internal": "Internal checks",
    "abstract": "Methods a subclass must implement",
    "test": "Errors of the test suite",
    "script": "Errors of scripts, benchmarks and tools",
}
#: One line on each audience: who causes the error (index pages).
AUDIENCE_SUMMARIES = {
    "user-setting": "a command-line flag, an environment variable or a setting causes it",
    "user-input": "a request, its parameters, the model or its files cause it",
    "dependency": "a package, its version, the device or the platform causes it",
    "unsupported": "a feature or combination this version does not support",
    "internal": "an internal check failed: most likely a bug, or a state that is not supported",
    "abstract": "a method a subclass must implement: a backend or plugin lacks it",
    "test": "raised by the test suite, not at run time",
    "script": "raised by benchmark, example and developer-tool scripts, not at run time",
}

#: The page ``<audience>/README.md`` (and ``index.html``) of each grouped
#: audience: what such an error means and what to do, said once (Markdown;
#: ``{project}``, ``{slug}``, ``{rev}`` and ``{issues}`` are filled in).
AUDIENCE_GUIDES = {
    "internal": """\
An internal check of {project} failed: an `assert`, or a `raise` guarding the
code's own state (a value that cannot be `None` here, shapes or sizes that
must agree, a branch that should not be reached). No setting, input or
dependency named in the message causes it. What follows holds for all of these
errors, so it is said here once; the entry of each error, on the page of its
module, shows only what it checks and where.

**What it means.** Most likely a bug in {project}, or a state the code does not
support (an unusual combination of model, features, parallelism and hardware
that reaches a path nobody planned for).

**What to do.**

1. Search the issues{issues} for the message (without the values that change
   from run to run).
2. Report it, with: the full message and the traceback; the {project} version
   (these pages document {rev}); the launch command, with every flag and
   environment variable you set; the model, the GPUs and the driver.
3. Meanwhile, try without the newest or experimental options of the launch
   command: the check often guards a combination that is rarely run.

Python drops `assert` statements under `python -O`: an assert here then does
not fire, and the state it checks fails later, less clearly.""",
    "abstract": """\
A method a subclass must implement: the base class raises
`NotImplementedError` in it (an abstract method, or a body that does nothing
else). The error means that a backend, model, plugin or other subclass in use
does not implement the method.

**What to do.** The traceback names the class and the method. Pick a backend
or option that supports the feature (the flags that choose the attention,
sampling, quantization or hardware backend), or, when you write the subclass
yourself, implement the method there.""",
    "test": """\
Raised by the test suite of {project} (code in test folders, `test_*.py`,
`conftest.py`): test helpers, fixtures and checks of expected results. The
server does not run this code; you meet these errors when running the tests.

**What to do.** Read the test named in the traceback: a failed check means the
result differs from what the test expects; an error in a helper usually means
a missing test dependency, model or device.""",
    "script": """\
Raised by the benchmark, example and developer-tool scripts shipped with
{project} (folders such as `benchmark/`, `examples/`, `scripts/`, `docs/`,
tools and debugging utilities), not by the server at run time.

**What to do.** Check the arguments the script was given (its `--help`) and
its documentation; the entry for each error shows the condition it checks.""",
}


def project_name(slug: str) -> str:
    """``sgl-project/sglang`` -> ``sglang``."""
    return slug.rstrip("/").rsplit("/", 1)[-1] or slug


def audience_guide(audience: str, commit: CommitInfo) -> str:
    """The Markdown text of a grouped audience's page (:data:`AUDIENCE_GUIDES`)."""
    issues = f" of [{commit.slug}](https://github.com/{commit.slug}/issues)"
    return AUDIENCE_GUIDES[audience].format(
        project=project_name(commit.slug),
        slug=commit.slug,
        rev=commit.rev,
        issues=issues if "/" in commit.slug else "",
    )


def grouped(audience: str | None) -> bool:
    """Whether errors of ``audience`` are entries on grouped pages (no full card)."""
    return audience in GROUPED


_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")
#: Page names the folders use for themselves.
_RESERVED = frozenset({"readme", "index"})
#: Longer page names are cut and given a hash of the module.
_MAX_NAME = 120


def page_name(module: str) -> str:
    """File stem of a module's grouped page: the dotted module with any other
    character than letters, digits, ``_``, ``.`` and ``-`` as ``_`` (never
    hidden, never ``README`` or ``index``, at most about 130 characters)."""
    name = _UNSAFE.sub("_", module) or "_"
    if name.startswith(".") or name.lower() in _RESERVED:
        name = f"_{name}"
    if len(name) > _MAX_NAME:
        digest = hashlib.sha1(module.encode("utf-8", "surrogateescape")).hexdigest()[:12]
        name = f"{name[: _MAX_NAME - 13]}-{digest}"
    return name


def card_ref(error_id: str, module: str, audience: str | None, suffix: str = ".md") -> str:
    """Where an error is documented, relative to the output (or site) root:
    ``errors/<id><suffix>`` for a user-facing error (or one without an
    audience), ``<audience>/<module page><suffix>#<id>`` for the others."""
    if grouped(audience):
        return f"{audience}/{page_name(module)}{suffix}#{error_id}"
    return f"errors/{error_id}{suffix}"


def link_from_page(ref: str) -> str:
    """A link to ``ref`` (:func:`card_ref`) from a page one folder deep
    (a card or a grouped page): ``<id>.md`` from a card to a card."""
    if ref.startswith("errors/"):
        return ref[len("errors/") :]
    return f"../{ref}"


@dataclass(frozen=True)
class Placed:
    """One error as a writer places it: the commit it is rendered from (a
    retired error's last commit), its analysis and its history."""

    error: Error
    commit: CommitInfo
    analysis: Analysis
    history: History | None = None

    @property
    def audience(self) -> str:
        return self.analysis.audience

    def ref(self, suffix: str = ".md") -> str:
        return card_ref(self.error.error_id, self.error.module, self.audience, suffix)


@dataclass(frozen=True)
class GroupPage:
    """One grouped page: the entries of one audience in one module."""

    audience: str
    name: str
    """File stem (:func:`page_name`)."""
    entries: tuple[Placed, ...]
    """In module, line and id order."""

    @property
    def modules(self) -> list[str]:
        return sorted({p.error.module for p in self.entries})


def index_order(error: Error) -> tuple[str, int, str]:
    """Errors in index order: module, line, id."""
    return (error.module, error.primary.line, error.error_id)


def group_pages(placed: Iterable[Placed]) -> list[GroupPage]:
    """The grouped pages of the non-user-facing errors among ``placed``, by
    audience (display order) and page name."""
    pages: dict[tuple[str, str], list[Placed]] = defaultdict(list)
    for item in placed:
        if grouped(item.audience):
            pages[(item.audience, page_name(item.error.module))].append(item)
    return [
        GroupPage(audience, name, tuple(sorted(items, key=lambda p: index_order(p.error))))
        for (audience, name), items in sorted(
            pages.items(), key=lambda kv: (GROUPED.index(kv[0][0]), kv[0][1])
        )
    ]


def assert_test(site: Site) -> str | None:
    """The test of an ``assert`` site (its innermost guard), else None."""
    if site.kind == "assert" and site.guards and site.guards[-1].kind == "assert":
        return site.guards[-1].test
    return None


def shown_guards(site: Site) -> tuple[Guard, ...]:
    """The guards an entry lists: outermost first, an assert's own test left
    out (the entry shows it as the test)."""
    return site.guards[:-1] if assert_test(site) is not None else site.guards


@cache
def environment() -> jinja2.Environment:
    """The one Jinja2 environment: Markdown templates escape for Markdown
    (``finalize``: :func:`md_finalize`), HTML templates are autoescaped (the
    site's overlay, :func:`miner.publish.html.site_environment`)."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        autoescape=jinja2.select_autoescape(["html", "htm", "xml", "html.j2"]),
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        undefined=jinja2.StrictUndefined,
        finalize=md_finalize,
    )
    env.filters["fence"] = fence
    env.filters["code"] = code_span
    env.filters["cell"] = table_cell
    env.filters["md"] = md_text
    env.filters["url"] = url
    env.filters["md_ready"] = Md  # a macro's output: escaped inside already
    return env


def render_card(
    error: Error,
    commit: CommitInfo,
    analysis: Analysis,
    errors_by_id: Mapping[str, Error] | None = None,
    history: History | None = None,
    refs: Mapping[str, str] | None = None,
) -> str:
    """The Markdown card of one error; ``errors_by_id`` gives related errors'
    titles, ``history`` adds the history block, ``refs`` (error id ->
    :func:`card_ref`) says where other errors' cards are (default: a card
    next to this one)."""
    return (
        environment()
        .get_template("card.md.j2")
        .render(
            error=error,
            commit=commit,
            analysis=analysis,
            errors_by_id=errors_by_id if errors_by_id is not None else {},
            history=history,
            link=linker(refs),
        )
    )


def linker(refs: Mapping[str, str] | None, suffix: str = ".md", *, card: bool = True) -> Any:
    """``link(error_id)``: the link to an error's card from a page one folder
    deep: a card (``card``: a sibling card is ``<id><suffix>``) or another page."""
    refs = refs or {}

    def link(error_id: str) -> str:
        ref = refs.get(error_id, f"errors/{error_id}{suffix}")
        return link_from_page(ref) if card else f"../{ref}"

    return link


def render_group(page: GroupPage, commit: CommitInfo, refs: Mapping[str, str]) -> str:
    """The Markdown page ``<audience>/<module>.md``: one anchored entry per
    error (exception and message or test, sites, scope, guards, why it is in
    this audience, its JSON), no per-error prose."""
    return (
        environment()
        .get_template("group.md.j2")
        .render(
            page=page,
            commit=commit,
            title=AUDIENCE_TITLES[page.audience],
            summary=AUDIENCE_SUMMARIES[page.audience],
            link=linker(refs),
            assert_test=assert_test,
            shown_guards=shown_guards,
        )
    )


def render_audience(audience: str, pages: Sequence[GroupPage], commit: CommitInfo) -> str:
    """The Markdown page ``<audience>/README.md``: what such an error means and
    what to do, said once, and the audience's module pages with counts."""
    return (
        environment()
        .get_template("audience.md.j2")
        .render(
            audience=audience,
            title=AUDIENCE_TITLES[audience],
            guide=audience_guide(audience, commit),
            pages=pages,
            commit=commit,
            total=sum(len(p.entries) for p in pages),
        )
    )


def audience_counts(audiences: Iterable[str]) -> list[tuple[str, int]]:
    """``(audience, errors)`` in display order (unknown audiences last, by name)."""
    counts = Counter(audiences)
    known = [(a, counts[a]) for a in AUDIENCES if counts[a]]
    return known + sorted((a, n) for a, n in counts.items() if a not in AUDIENCES)


def render_index(
    result: MineResult,
    analyses: Mapping[str, Analysis],
    retired: Sequence[Error] = (),
    refs: Mapping[str, str] | None = None,
    pages: Sequence[GroupPage] = (),
) -> str:
    """``index.md``: errors per audience; the user-facing errors by audience
    then module, linked to their cards; the grouped pages of the other
    audiences with counts; in a release site, the retired errors."""
    refs = refs or {}
    audience = {e.error_id: analyses[e.error_id].audience for e in result.errors}
    counts = audience_counts(audience.values())
    full = [
        (name, sorted((e for e in result.errors if audience[e.error_id] == name), key=index_order))
        for name, _ in counts
        if not grouped(name)
    ]
    return (
        environment()
        .get_template("index.md.j2")
        .render(
            commit=result.commit,
            manifest=manifest_json(result),
            counts=counts,
            full=full,
            grouped=[
                (name, dict(counts).get(name, 0), [p for p in pages if p.audience == name])
                for name in GROUPED
                if any(p.audience == name for p in pages)
            ],
            grouped_names={p.audience for p in pages},
            titles=AUDIENCE_TITLES,
            summaries=AUDIENCE_SUMMARIES,
            ref=lambda error_id: refs.get(error_id, f"errors/{error_id}.md"),
            retired=sorted(retired, key=index_order),
        )
    )


def check_writable(out: Path) -> None:
    """See :func:`miner.publish.output.check_writable` (kept here for callers)."""
    output.check_writable(out)


#: Fewer cards and pages than this are rendered in this process (starting
#: the worker processes costs more than it saves).
PARALLEL_MIN = 1000
#: Cards or pages per task sent to a worker process.
CHUNK = 200


@dataclass(frozen=True)
class _Rendering:
    """What each error's files and each grouped page read: built once, then
    shared by the forked workers (inherited, not sent)."""

    commit: CommitInfo
    placed: Sequence[Placed]
    """The errors of the commit (not the retired ones), in error order."""
    pages: Sequence[GroupPage]
    errors_by_id: Mapping[str, Error]
    refs: Mapping[str, str]
    retired: Sequence[Placed] = ()
    """Errors the release no longer raises, each with the last commit that
    raised it: its JSON and (user-facing) card are rendered from that commit;
    a grouped one gets its entry on its grouped page."""
    retired_by_id: Mapping[str, Error] = field(default_factory=dict)

    def files(self, index: int) -> list[tuple[str, str]]:
        """(path, text) of item ``index``: below ``len(placed)``, that error's
        JSON record and (user-facing) card; then the same of each retired
        error; then a grouped page."""
        current, retired = len(self.placed), len(self.retired)
        if index >= current + retired:
            page = self.pages[index - current - retired]
            return [(f"{page.audience}/{page.name}.md", render_group(page, self.commit, self.refs))]
        if index < current:
            item, by_id = self.placed[index], self.errors_by_id
        else:
            item, by_id = self.retired[index - current], self.retired_by_id
        error, commit, analysis, history = item.error, item.commit, item.analysis, item.history
        out = [
            (
                f"api/errors/{error.error_id}.json",
                dumps(error_json(error, commit, analysis, history)),
            )
        ]
        if not grouped(analysis.audience):
            card = render_card(error, commit, analysis, by_id, history, self.refs)
            out.append((f"errors/{error.error_id}.md", card))
        return out


def output_files(
    result: MineResult,
    analyses: Mapping[str, Analysis],
    *,
    config: Mapping[str, Any] | None = None,
    histories: Mapping[str, History] | None = None,
    retired: Sequence[tuple[Error, CommitInfo, Analysis]] = (),
    jobs: int = 1,
) -> Iterator[tuple[str, str | Iterable[str]]]:
    """Every record and card of ``result`` but the manifest, as
    (folder-relative path, text) in writing order, each path once (the JSON
    Lines records as their lines: :func:`~miner.publish.records.record_files`; see
    :func:`write_output`). ``jobs`` > 1: the error records, cards and grouped
    pages are rendered by that many forked processes when there are
    :data:`PARALLEL_MIN` or more (the same text, in the same order), and come
    back as they are rendered: the whole output is never held at once."""
    histories = histories or {}
    yield from record_files(result, analyses, config=config, histories=histories).items()
    placed = [
        Placed(e, result.commit, analyses[e.error_id], histories.get(e.error_id))
        for e in result.errors
    ]
    current = placed[:]
    old = [Placed(e, c, a, histories.get(e.error_id)) for e, c, a in retired]
    placed += old
    refs = {p.error.error_id: p.ref() for p in placed}
    pages = group_pages(placed)
    rendering = _Rendering(
        result.commit,
        current,
        pages,
        {e.error_id: e for e in result.errors},
        refs,
        old,
        {e.error_id: e for e, _, _ in retired},
    )
    count = len(current) + len(old) + len(pages)
    parts = fork_imap(jobs if count >= PARALLEL_MIN else 1, rendering.files, range(count), CHUNK)
    for part in parts:
        yield from part
    for audience in GROUPED:
        mine = [p for p in pages if p.audience == audience]
        if mine:
            yield f"{audience}/README.md", render_audience(audience, mine, result.commit)
    # superseded ids (the error lives on under a newer id) are not listed as retired
    gone = [
        error
        for error, _, _ in retired
        if error.error_id not in histories or histories[error.error_id].error_id == error.error_id
    ]
    yield "index.md", render_index(result, analyses, gone, refs, pages)


def write_records(
    folder: output.Folder,
    result: MineResult,
    analyses: Mapping[str, Analysis],
    *,
    config: Mapping[str, Any] | None = None,
    histories: Mapping[str, History] | None = None,
    retired: Sequence[tuple[Error, CommitInfo, Analysis]] = (),
    extra: Mapping[str, str] | None = None,
    inputs: str = "",
    jobs: int = 1,
) -> dict[str, int]:
    """Write :func:`output_files` (rendered by ``jobs`` processes) and
    ``extra`` (folder-relative path -> text) into ``folder``, then the
    folder's ``README.md`` and the manifest listing them all (and ``inputs``,
    the digest the folder was made from, when given), and delete what a
    previous run wrote there that this one did not. Returns the counts."""
    files = output_files(
        result, analyses, config=config, histories=histories, retired=retired, jobs=jobs
    )
    for rel, text in itertools.chain(files, (extra or {}).items()):
        folder.write(rel, text)
    folder.write(output.README, output.readme_text())
    counts = folder.finish(
        lambda written: dumps(manifest_json(result, analyses, written=written, inputs=inputs))
    )
    return {k: counts[k] for k in ("written", "unchanged", "removed")}


def write_output(
    result: MineResult,
    out: Path,
    analyses: Mapping[str, Analysis],
    *,
    config: Mapping[str, Any] | None = None,
    histories: Mapping[str, History] | None = None,
    retired: Sequence[tuple[Error, CommitInfo, Analysis]] = (),
) -> dict[str, int]:
    """Write every record and card of ``result`` under ``out``: a full card
    for each user-facing error, an entry on its grouped page for the others
    (module docstring), the JSON record of every error, and ``index.md``;
    published as a whole (:func:`miner.publish.output.publication`).

    ``analyses`` maps every error id of ``result`` to its analysis; ``config``
    is the configuration model's JSON (``config.json``). ``histories`` (error
    id -> history) adds a history block to the cards and JSON; ``retired``
    errors (each with the last commit that raised it and its analysis) keep a
    card and JSON record with a notice that ``result`` no longer raises them.

    Returns counts of files ``written`` and ``unchanged`` and ``removed``.

    Raises:
        OutputError: ``out`` cannot be created or written, or holds files
            raise-miner did not write.
    """
    with output.publication(out) as pub:
        return write_records(
            pub.folder, result, analyses, config=config, histories=histories, retired=retired
        )
