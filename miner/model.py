"""The records every stage reads and writes.

Conventions, stated once for every record here:

* Lines are 1-based and count line breaks the way CPython does: ``\\n``, ``\\r\\n``
  and a lone ``\\r`` (never form feed or the Unicode separators that
  ``str.splitlines`` also splits on). Columns are not recorded.
* Paths are repository-relative POSIX paths as git stores them.
* Source text inside records (guard tests, placeholder expressions, causes) is
  single-line: comments dropped, runs of white space folded to one space.
* Collections inside records are tuples, so every record is hashable and frozen.
* ``to_json()`` gives plain JSON-ready values with keys in a fixed order;
  ``from_json()`` is its inverse.
"""

from __future__ import annotations

import operator
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field, fields
from enum import Enum
from typing import Any, ClassVar, Literal, TypeVar

#: Version of every record format written: ``sites.jsonl``, ``analyses.jsonl``,
#: ``manifest.json``, the JSON API, release diffs and the release site's files
#: (one number for all; the JSON Schemas, :mod:`miner.publish.schemas`, carry it).
#: 2: ids no longer hold the repository slug; ``analyses.jsonl`` added.
SCHEMA_VERSION = 2

#: ``call``: a call of a *raising helper* (a function that raises an exception
#: built from its parameters, see :mod:`miner.extract.helpers`): the message
#: and conditions come from the call's arguments.
SiteKind = Literal["raise", "assert", "call"]
MessageKind = Literal["literal", "template", "dynamic", "none"]
#: Why a ``dynamic`` message could not be rendered as a template (see
#: :func:`miner.extract.rules.render`):
#:
#: * ``parameter``: a parameter of the enclosing function (``raise E(msg)``);
#: * ``variable-from-call``: a local set by a call that builds no string
#:   the source shows (``msg = describe(x)``);
#: * ``variable-branches``: a local whose value at the raise is not decided by
#:   straight-line code (set in branches, loops or ``try``, or changed in ways
#:   not modelled);
#: * ``variable``: a local set to another non-string expression;
#: * ``non-literal-join``: ``sep.join(items)`` whose items are not a list or
#:   tuple the source spells out (a generator, a comprehension, a value from
#:   elsewhere);
#: * ``call``: another call (``str(e)``, ``build_message(...)``);
#: * ``caught-exception``: the exception an ``except ... as e`` caught (``E(e)``);
#: * ``attribute``: an attribute or item (``self.msg``, ``e.args[0]``);
#: * ``global``: a name the function does not bind (a module constant, a
#:   global), or any name outside a function;
#: * ``exception-instance``: ``raise err`` of an exception built elsewhere;
#: * ``star-args``: ``*args`` / ``**kwargs`` come first;
#: * ``other``: any other expression (``a if c else b``, an operator).
DynamicReason = Literal[
    "parameter",
    "variable-from-call",
    "variable-branches",
    "variable",
    "non-literal-join",
    "call",
    "caught-exception",
    "attribute",
    "global",
    "exception-instance",
    "star-args",
    "other",
]
#: How the message was written in the source. ``concat`` is ``+`` of strings and
#: expressions; ``join`` is ``sep.join([...])`` (of a list spelled out, or of a
#: local list built by appends); ``steps`` a local string built in steps
#: (``msg = "..."``, then ``msg += ...``). A local variable resolved to its
#: value keeps the style of the value.
MessageStyle = Literal[
    "literal",
    "bytes",
    "fstring",
    "tstring",
    "percent",
    "format",
    "concat",
    "join",
    "steps",
    "expression",
    "none",
]
Parser = Literal["libcst", "ast"]
#: What a :class:`Guard` is: an enclosing statement (``if`` ... ``assert``), or
#: an earlier statement the path gets past (``exit`` ... ``unreachable``).
GuardKind = Literal[
    "if",
    "while",
    "while-else",
    "for",
    "async for",
    "for-else",
    "try",
    "except",
    "except*",
    "try-else",
    "finally",
    "with",
    "async with",
    "case",
    "assert",
    "exit",
    "exit-except",
    "exit-case",
    "exit-while",
    "asserted",
    "unreachable",
]
#: Who can cause and fix an error (see :mod:`miner.analysis.audience`); the
#: first four are user-facing.
AudienceName = Literal[
    "user-setting",
    "user-input",
    "dependency",
    "unsupported",
    "abstract",
    "internal",
    "test",
    "script",
]


_R = TypeVar("_R")


def compact_pickle(cls: type[_R]) -> type[_R]:
    """A frozen, slotted dataclass ``cls`` whose instances pickle as their
    class and their fields' values, rebuilt by the constructor (every field
    is an ``__init__`` argument). The dataclass's own slotted pickling looks
    up the fields of every object (about 3 s for the 162,000 objects of
    SGLang's records, read back from the commit store or the analysis cache
    on every warm run); this is a third of that."""
    made: Any = cls
    names = [f.name for f in fields(made)]
    values = operator.attrgetter(*names)
    if len(names) == 1:
        made.__reduce__ = lambda self: (type(self), (values(self),))
    else:
        made.__reduce__ = lambda self: (type(self), values(self))
    return made


@compact_pickle
@dataclass(frozen=True, slots=True)
class MessagePart:
    """One piece of a message template, in runtime order.

    A part is either literal text (``text`` set, ``expr`` None) or a placeholder
    (``expr`` set, ``text`` None) whose runtime value is unknown. Matching a
    runtime message against the parts is unambiguous: literal braces are plain
    characters in ``text``, never placeholders.
    """

    text: str | None = None
    """Literal runtime text (escapes evaluated, ``{{`` already collapsed to ``{``)."""
    expr: str | None = None
    """Source text of the placeholder's expression, single-line."""
    conversion: str | None = None
    """``r``, ``s`` or ``a`` for ``!r`` / ``!s`` / ``!a`` (and ``%r`` / ``%a``)."""
    spec: str | None = None
    """The format spec as written (``.2f``, ``>{width}``), or None."""
    optional: int | None = None
    """None: the part is always there. ``n`` (1, 2, ...): the part belongs to
    the ``n``-th optional group of the template, parts present together or
    not at all (text appended to the message under an ``if``: ``if x:
    msg += f" got {x}"``). The template text (``Site.message``) shows every
    group as present."""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any]
        if self.expr is None:
            out = {"text": self.text}
        else:
            out = {"expr": self.expr}
            if self.conversion:
                out["conversion"] = self.conversion
            if self.spec is not None:
                out["spec"] = self.spec
        if self.optional is not None:
            out["optional"] = self.optional
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> MessagePart:
        return cls(
            text=data.get("text"),
            expr=data.get("expr"),
            conversion=data.get("conversion"),
            spec=data.get("spec"),
            optional=data.get("optional"),
        )


@compact_pickle
@dataclass(frozen=True, slots=True)
class Guard:
    """One statement that decides whether a site is reached.

    Two lists of a :class:`Site` hold guards:

    * ``Site.guards``: the enclosing compound statements on the path from the
      scope down to the site. ``kind`` is the statement: ``if``, ``while``,
      ``while-else``, ``for``, ``async for``, ``for-else``, ``try``, ``except``,
      ``except*``, ``try-else``, ``finally``, ``with``, ``async with``, ``case``
      or ``assert`` (the site's own failing test).
    * ``Site.exits``: earlier statements of the same scope (in the site's block
      or an enclosing block) that the path must get past, because on some branch
      they definitely leave (``return``, ``raise``, or ``continue`` / ``break``
      of the loop around the site). ``kind`` is one of the *exit kinds*:

      - ``exit``: an ``if`` / ``elif`` branch that leaves; ``negated`` true (the
        site needs the test false). ``negated`` false when every other branch of
        the chain leaves, so the site needs this branch's test true.
      - ``exit-except``: an ``except`` handler that leaves (every handler before
        it leaves too): the ``try`` body raised no exception of the caught
        types; ``negated`` is true.
      - ``exit-case``: a ``case`` that leaves (``negated`` true: the subject does
        not match), or the one case every other one leaves from (false).
      - ``exit-while``: a ``while`` loop without ``break`` ended, so its test is
        false (``negated`` true).
      - ``asserted``: an earlier ``assert`` passed; its test holds.
      - ``unreachable``: an earlier statement leaves on every branch; the site
        is dead code (``test`` empty).

    ``test`` is the source text that decides the path: the condition for
    ``if``, ``while``, ``assert``, ``exit``, ``exit-while`` and ``asserted``,
    ``target in iter`` for ``for``, the caught types for ``except`` and
    ``exit-except`` (empty for a bare ``except:``), the items for ``with``, the
    pattern (and `` if guard``) for ``case`` and ``exit-case``, empty for
    ``try`` / ``finally`` / ``unreachable``.
    ``negated`` is true when the path runs where the test is false: an earlier
    branch of an ``if``/``elif`` chain, the failing test of an ``assert``, and
    the exits above.
    """

    kind: GuardKind
    test: str
    negated: bool
    line: int
    """Line of the statement's keyword (``if``, ``elif``, ``else``, ``except``...)."""
    name: str | None = None
    """The name bound by ``except ... as name``, else None."""
    subject: str | None = None
    """For ``case``: the ``match`` subject's source text, else None."""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "kind": self.kind,
            "test": self.test,
            "negated": self.negated,
            "line": self.line,
        }
        if self.name is not None:
            out["name"] = self.name
        if self.subject is not None:
            out["subject"] = self.subject
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Guard:
        return cls(
            kind=data["kind"],
            test=data["test"],
            negated=data["negated"],
            line=data["line"],
            name=data.get("name"),
            subject=data.get("subject"),
        )

    def describe(self) -> str:
        """The guard as one line of pseudo-Python, e.g. ``not (x is None)``.

        An exit reads as what holds at the site: ``not (x is None)`` for
        ``if x is None: return``, ``try body raised no KeyError`` for a handler
        that leaves, ``unreachable (line 12 always leaves)``.
        """
        if self.kind in ("exit", "exit-while", "asserted"):
            return f"not ({self.test})" if self.negated else self.test
        if self.kind == "exit-except":
            return f"try body raised no {self.test or 'exception'}"
        if self.kind == "exit-case":
            text = f"match {self.subject}: case {self.test}"
            return f"not ({text})" if self.negated else text
        if self.kind == "unreachable":
            return f"unreachable (line {self.line} always leaves)"
        if self.kind in ("if", "while", "assert"):
            prefix = "" if self.kind != "while" else "while "
            return f"{prefix}not ({self.test})" if self.negated else f"{prefix}{self.test}"
        if self.kind == "case":
            return f"match {self.subject}: case {self.test}"
        if self.kind in ("except", "except*"):
            text = f"{self.kind} {self.test}".rstrip()
            return f"{text} as {self.name}" if self.name else text
        if self.kind in ("try", "finally", "try-else"):
            return {"try": "try", "finally": "finally", "try-else": "try: else"}[self.kind]
        if self.kind in ("while-else", "for-else"):
            keyword = self.kind.split("-")[0]
            return f"{keyword} {self.test}: else"
        return f"{self.kind} {self.test}"


@compact_pickle
@dataclass(frozen=True, slots=True)
class Excerpt:
    """The source around a site: lines ``start_line`` .. ``end_line`` inclusive."""

    start_line: int
    end_line: int
    text: str
    """The lines joined with ``\\n``; no trailing newline, never a ``\\r``."""

    def to_json(self) -> dict[str, Any]:
        return {"start_line": self.start_line, "end_line": self.end_line, "text": self.text}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Excerpt:
        return cls(start_line=data["start_line"], end_line=data["end_line"], text=data["text"])


@compact_pickle
@dataclass(frozen=True, slots=True)
class Site:
    """One ``raise`` or ``assert`` statement at one commit.

    Built complete by the extractor; ``error_id`` and ``site_id`` are
    fingerprints (see :mod:`miner.mining.ids`) that leave out line numbers and
    the commit, so they survive code moving.
    """

    path: str
    line: int
    """Line of the ``raise`` / ``assert`` keyword."""
    end_line: int
    """Last line of the statement."""
    kind: SiteKind
    exception: str | None
    """The exception as written (``ValueError``, ``errors.ConfigError``,
    ``type(e)``); ``AssertionError`` for asserts; None for a bare ``raise``."""
    message: str | None
    """The message template: literal text with ``{`` / ``}`` doubled and
    placeholders as ``{expr!conv:spec}``; None when there is no message or it
    cannot be rendered (see ``message_kind``). A message built in steps
    (``msg = "..."; if x: msg += "..."``) reads with every optional part in
    place; ``message_parts`` says which are optional."""
    message_parts: tuple[MessagePart, ...]
    message_kind: MessageKind
    message_style: MessageStyle
    message_source: str | None
    """Source text of the message argument as written (single-line), or None."""
    cause: str | None
    """Source of the ``from`` clause (``None`` for ``from None``), or None."""
    reraise: bool
    """A bare ``raise`` (or ``raise name`` of the caught exception) inside an
    ``except`` handler of the same function."""
    reraised: tuple[str, ...]
    """For a re-raise: the types the enclosing handler catches, as written
    (``BaseException`` for a bare ``except:``)."""
    scope: str
    """The enclosing ``__qualname__``: ``<module>``, ``Class``, ``Class.method``,
    ``outer.<locals>.inner``."""
    guards: tuple[Guard, ...]
    """The enclosing compound statements, outermost first (see :class:`Guard`)."""
    excerpt: Excerpt
    parser: Parser
    """Which parser produced the record: ``libcst`` or the ``ast`` fallback."""
    function_doc: str | None = None
    """First paragraph of the enclosing function's docstring, or None."""
    class_doc: str | None = None
    """First paragraph of the innermost enclosing class's docstring, or None."""
    error_id: str = ""
    site_id: str = ""
    exits: tuple[Guard, ...] = ()
    """Earlier statements of the same scope that the path gets past only when
    their exit is not taken, in source order, outermost block first (kinds
    ``exit``, ``exit-except``, ``exit-case``, ``exit-while``, ``asserted``,
    ``unreachable``; see :class:`Guard`). Like ``guards``, reset at every
    ``def`` and ``class``. An exit is left out when a statement run between it
    and the site (a loop's later rounds included) may rebind a name or
    attribute path it tests. :func:`miner.analysis.condition.condition_of` joins
    both into one condition."""
    body_only: bool = False
    """The site's statement is the whole body of its enclosing function, apart
    from a docstring and ``pass`` / ``...`` (``def f(self): raise
    NotImplementedError``)."""
    abstract: bool = False
    """The enclosing function is decorated ``abstractmethod`` (any dotted
    spelling; also ``abstractproperty``, ``abstractclassmethod``,
    ``abstractstaticmethod``), or is a method of a class whose bases list
    ``ABC`` / ``Protocol`` (any dotted spelling, ``Protocol[T]`` too) or
    ``metaclass=ABCMeta``."""
    via: tuple[str, ...] = ()
    """For a ``call`` site: the raising helpers it goes through, outermost
    first, each as ``path:line qualname`` of the helper's own site (its
    ``raise``, or its call of the next helper); empty for other sites."""
    message_reason: DynamicReason | None = None
    """For a ``dynamic`` message: why it could not be rendered (see
    :data:`DynamicReason`); None for the other kinds."""

    def to_json(self) -> dict[str, Any]:
        return {
            "error_id": self.error_id,
            "site_id": self.site_id,
            "path": self.path,
            "line": self.line,
            "end_line": self.end_line,
            "kind": self.kind,
            "exception": self.exception,
            "message": self.message,
            "message_parts": [p.to_json() for p in self.message_parts],
            "message_kind": self.message_kind,
            "message_style": self.message_style,
            "message_source": self.message_source,
            "cause": self.cause,
            "reraise": self.reraise,
            "reraised": list(self.reraised),
            "scope": self.scope,
            "guards": [g.to_json() for g in self.guards],
            "exits": [g.to_json() for g in self.exits],
            "body_only": self.body_only,
            "abstract": self.abstract,
            "via": list(self.via),
            "message_reason": self.message_reason,
            "excerpt": self.excerpt.to_json(),
            "parser": self.parser,
            "function_doc": self.function_doc,
            "class_doc": self.class_doc,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Site:
        return cls(
            path=data["path"],
            line=data["line"],
            end_line=data["end_line"],
            kind=data["kind"],
            exception=data["exception"],
            message=data["message"],
            message_parts=tuple(MessagePart.from_json(p) for p in data["message_parts"]),
            message_kind=data["message_kind"],
            message_style=data["message_style"],
            message_source=data["message_source"],
            cause=data["cause"],
            reraise=data["reraise"],
            reraised=tuple(data["reraised"]),
            scope=data["scope"],
            guards=tuple(Guard.from_json(g) for g in data["guards"]),
            exits=tuple(Guard.from_json(g) for g in data.get("exits", ())),
            body_only=data.get("body_only", False),
            abstract=data.get("abstract", False),
            via=tuple(data.get("via", ())),
            message_reason=data.get("message_reason"),
            excerpt=Excerpt.from_json(data["excerpt"]),
            parser=data["parser"],
            function_doc=data.get("function_doc"),
            class_doc=data.get("class_doc"),
            error_id=data.get("error_id", ""),
            site_id=data.get("site_id", ""),
        )


FileStatus = Literal["mined", "skipped", "failed"]


@compact_pickle
@dataclass(frozen=True, slots=True)
class FileResult:
    """What mining one blob gave: never an exception, always one of these.

    ``status`` is ``mined`` (parsed; ``sites`` may be empty), ``skipped`` (not
    parsed on purpose: a symlink, a submodule, an empty or oversized file) or
    ``failed`` (could not be parsed or decoded; ``reason`` says why, and other
    files are unaffected).
    """

    path: str
    blob: str
    """The git blob id (40 hex digits) of the file's content."""
    status: FileStatus
    sites: tuple[Site, ...] = ()
    reason: str | None = None
    """Why a file was skipped or failed, or a note on a mined file (for example
    that it was decoded lossily or mined by the ``ast`` fallback)."""
    encoding: str | None = None
    """The encoding the file was decoded with (``utf-8``, ``utf-8-sig``, a PEP 263 cookie)."""

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "blob": self.blob,
            "status": self.status,
            "reason": self.reason,
            "encoding": self.encoding,
            "sites": [s.to_json() for s in self.sites],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> FileResult:
        return cls(
            path=data["path"],
            blob=data["blob"],
            status=data["status"],
            reason=data.get("reason"),
            encoding=data.get("encoding"),
            sites=tuple(Site.from_json(s) for s in data["sites"]),
        )


@compact_pickle
@dataclass(frozen=True, slots=True)
class CommitInfo:
    """A pinned commit: what was asked for and what it resolved to."""

    repo: str
    """The repository as given (URL or path)."""
    slug: str
    """``owner/name`` used in headers and links (``sgl-project/sglang``)."""
    rev: str
    """The revision as the user wrote it (``v0.5.19``, ``0132848349``)."""
    sha: str
    """Full 40-hex commit id."""
    date: str
    """Committer date, ISO 8601 with offset (``2026-09-04T23:10:25+00:00``)."""
    link_ref: str = ""
    """Ref used in source links (the full SHA unless told otherwise)."""

    @property
    def short_sha(self) -> str:
        return self.sha[:10]

    def source_url(self, path: str, line: int) -> str:
        """``https://github.com/<slug>/blob/<ref>/<path>#L<line>``."""
        ref = self.link_ref or self.sha
        return f"https://github.com/{self.slug}/blob/{ref}/{path}#L{line}"

    def to_json(self) -> dict[str, Any]:
        return {
            "repo": self.repo,
            "slug": self.slug,
            "rev": self.rev,
            "sha": self.sha,
            "date": self.date,
            "link_ref": self.link_ref or self.sha,
        }


#: Titles longer than this many characters are cut at a word boundary.
TITLE_WIDTH = 72


def shorten(text: str, width: int) -> str:
    """``text`` cut to at most ``width`` characters at a word boundary, with an
    ellipsis (``…``) when anything was cut; a single word longer than
    ``width`` is cut inside with the ellipsis."""
    if len(text) <= width:
        return text
    cut = text[: width - 1]
    space = cut.rfind(" ")
    if space >= width // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:.-([{") + "…"


@compact_pickle
@dataclass(frozen=True, slots=True)
class Error:
    """One error as users see it: an exception type and message template,
    raised at one or more sites (primary site first)."""

    error_id: str
    exception: str | None
    message: str | None
    message_parts: tuple[MessagePart, ...]
    message_kind: MessageKind
    sites: tuple[Site, ...] = field(default_factory=tuple)

    @property
    def primary(self) -> Site:
        return self.sites[0]

    @property
    def title(self) -> str:
        """The card title: the message template (or, for an assert, ``assert
        <test>``) cut at a word boundary near :data:`TITLE_WIDTH` characters
        with an ellipsis; a message computed at run time or missing gives
        ``<Exception> in <scope>`` (never a bare variable name)."""
        site = self.primary
        if self.message:
            text = self.message
        elif site.kind == "assert" and site.guards:
            text = f"assert {site.guards[-1].test}"
        else:
            where = "module level" if site.scope == "<module>" else site.scope
            text = f"{self.exception or 're-raise'} in {where}"
        return shorten(" ".join(text.split()), TITLE_WIDTH)

    @property
    def module(self) -> str:
        """Dotted module of the primary site (``sglang.srt.mem_cache.registry``)."""
        path = self.primary.path
        if path.startswith("python/"):
            path = path[len("python/") :]
        if path.endswith("/__init__.py"):
            path = path[: -len("/__init__.py")]
        elif path.endswith(".py"):
            path = path[:-3]
        return path.replace("/", ".")


ConditionOp = Literal["true", "false", "atom", "and", "or"]
AtomKind = Literal["expr", "raised", "match", "loop"]
"""What an atom stands for: ``expr`` a Python expression (the test as
written), ``raised`` an exception of the caught types raised in a ``try`` body,
``match`` a ``match`` subject matching a ``case`` pattern, ``loop`` a ``for``
loop's body running for an item."""


@compact_pickle
@dataclass(frozen=True, slots=True)
class Condition:
    """A boolean condition over source atoms: a tree of ``and`` / ``or`` over
    (possibly negated) atoms, or the constants ``true`` / ``false``.

    ``op`` says which fields are set: ``and`` / ``or``: ``args`` (two or more,
    never of the same ``op`` as the parent); ``atom``: ``atom`` (the expression
    in its positive, canonical spelling), ``negated``, ``kind`` and ``shown``
    (the atom as written with its polarity, negation pushed inward:
    ``x is not None`` for ``x is None`` negated).
    """

    op: ConditionOp
    args: tuple[Condition, ...] = ()
    atom: str = ""
    negated: bool = False
    kind: AtomKind = "expr"
    shown: str = ""

    TRUE: ClassVar[Condition]
    FALSE: ClassVar[Condition]

    @property
    def is_true(self) -> bool:
        """No condition: reached every time its function runs that far."""
        return self.op == "true"

    @property
    def is_false(self) -> bool:
        """Never reached (dead code, or contradictory guards)."""
        return self.op == "false"

    def conjuncts(self) -> tuple[Condition, ...]:
        """The top-level AND terms: the args of an ``and``, nothing for
        ``true``, else the condition itself."""
        if self.op == "and":
            return self.args
        if self.op == "true":
            return ()
        return (self,)

    def atoms(self) -> tuple[Condition, ...]:
        """The atom leaves, left to right."""
        if self.op == "atom":
            return (self,)
        return tuple(leaf for arg in self.args for leaf in arg.atoms())

    def text(self) -> str:
        """Python-like text: ``enable_teacache and x is not None``; an ``or``
        inside an ``and`` (and the reverse) is parenthesized."""
        if self.op == "true":
            return "True"
        if self.op == "false":
            return "False"
        if self.op == "atom":
            return self.shown
        joiner = f" {self.op} "
        return joiner.join(
            f"({a.text()})" if a.op in ("and", "or") else a.text() for a in self.args
        )

    def __str__(self) -> str:
        return self.text()

    def to_json(self) -> dict[str, Any]:
        """``{"op": "true"}``, ``{"op": "and", "args": [...]}`` or
        ``{"atom": ..., "negated": ..., "kind": ..., "text": ...}``."""
        if self.op == "atom":
            return {
                "atom": self.atom,
                "negated": self.negated,
                "kind": self.kind,
                "text": self.shown,
            }
        if self.op in ("and", "or"):
            return {"op": self.op, "args": [a.to_json() for a in self.args]}
        return {"op": self.op}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Condition:
        if "atom" in data:
            return cls(
                "atom",
                atom=data["atom"],
                negated=data["negated"],
                kind=data.get("kind", "expr"),
                shown=data["text"],
            )
        op = data["op"]
        if op in ("and", "or"):
            return cls(op, args=tuple(cls.from_json(a) for a in data["args"]))
        return cls.TRUE if op == "true" else cls.FALSE


Condition.TRUE = Condition("true")
Condition.FALSE = Condition("false")


class OriginKind(str, Enum):
    """What a value a site depends on comes from (a closed set; see :class:`Origin`).

    The first seven are under the user's control (:data:`USER_ORIGINS`).
    """

    FLAG = "flag"
    """A setting of an options class: a command-line flag or a field of an
    arguments dataclass (srt ``ServerArgs``, the diffusion ``ServerArgs``, the
    diffusion ``SamplingParams``...)."""
    ENV = "env"
    """An environment variable."""
    MODEL_CONFIG = "model-config"
    """A field of the model's configuration: ``config.json`` (``hf_config``,
    ``hf_text_config``...) or its quantization config."""
    CHECKPOINT = "checkpoint"
    """The weight files and their metadata (names, dtypes, shapes)."""
    REQUEST = "request"
    """A field of an API request or of its sampling parameters."""
    HARDWARE = "hardware"
    """The device: its kind (CUDA, ROCm, NPU...), capability, count or memory."""
    PACKAGE = "package"
    """An installed distribution: an import that can fail or a version check."""
    PLUGIN = "plugin"
    """An out-of-tree contract: a class or function registered from outside."""
    CONSTANT = "constant"
    """A value fixed in the source (a literal, a module constant, a class)."""
    INTERNAL = "internal"
    """Runtime state of the program (a tensor's shape, a counter, a queue)."""
    UNKNOWN = "unknown"
    """The trace stopped before reaching one of the others (``Origin.reason`` says why)."""


#: The origin kinds a user controls (a flag, a variable, the model, the
#: request, the machine, what is installed).
USER_ORIGINS = frozenset(
    {
        OriginKind.FLAG,
        OriginKind.ENV,
        OriginKind.MODEL_CONFIG,
        OriginKind.CHECKPOINT,
        OriginKind.REQUEST,
        OriginKind.HARDWARE,
        OriginKind.PACKAGE,
    }
)

#: What a condition requires of a value: a comparison with ``values``
#: (``==`` ... ``not in``, ``instance``: an instance of one of the types named),
#: a truth value (``true`` / ``false``), ``is None`` / ``is not None``, an
#: environment variable ``set`` / ``unset``, a package ``missing`` /
#: ``installed``, or ``any`` (the value matters in a way not narrowed: a
#: message shows it, or it is an operand of arithmetic).
ConstraintOp = Literal[
    "==",
    "!=",
    "<",
    "<=",
    ">",
    ">=",
    "in",
    "not in",
    "instance",
    "not instance",
    "true",
    "false",
    "is None",
    "is not None",
    "set",
    "unset",
    "missing",
    "installed",
    "any",
]

#: Why a trace stopped (:attr:`Origin.reason` of an ``unknown`` origin):
#: ``depth-limit`` (:data:`miner.analysis.origins.MAX_DEPTH` hops followed),
#: ``no-binding`` (no assignment of the name or attribute found),
#: ``many-bindings`` (assigned in too many places to follow),
#: ``no-callers`` (a parameter of a function no call found reaches),
#: ``many-callers`` (a parameter of a function called from too many places,
#: or whose calls cannot all be listed: its name is used other than in calls),
#: ``default-only`` (the calls found leave the parameter to its default),
#: ``unparsed`` (the file or the expression does not parse),
#: ``dynamic`` (a value computed in a way not followed: a subscript by a
#: variable, a call of a value, a comprehension),
#: ``field`` (a field of a dataclass that is no options class: its value is
#: given where the object is built; the default written does not decide it).
OriginReason = Literal[
    "",
    "depth-limit",
    "no-binding",
    "many-bindings",
    "no-callers",
    "many-callers",
    "default-only",
    "unparsed",
    "dynamic",
    "field",
]


@compact_pickle
@dataclass(frozen=True, slots=True)
class Hop:
    """One step of an origin's trace: the code at ``path:line`` that was followed."""

    path: str
    line: int
    text: str
    """The expression or statement followed, as written (single-line):
    ``self.use_marlin = get_moe_runner_backend().is_marlin()``."""

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "line": self.line, "text": self.text}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Hop:
        return cls(path=data["path"], line=data["line"], text=data["text"])


@compact_pickle
@dataclass(frozen=True, slots=True)
class Constraint:
    """What the site's condition requires of an origin's value: ``op`` over
    ``values`` (``==`` ``marlin``; ``in`` the architectures listed; ``unset``)."""

    op: ConstraintOp
    values: tuple[str, ...] = ()
    """The values compared with, as display text (strings without quotes,
    other literals as written); empty for the ops that take none."""

    def to_json(self) -> dict[str, Any]:
        return {"op": self.op, "values": list(self.values)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Constraint:
        return cls(op=data["op"], values=tuple(data.get("values", ())))


ANY = Constraint("any")

#: What read the value: the site's own path ``condition``, a placeholder of
#: its ``message``, or the condition around a call of the site's function
#: (``caller``: the call is only made when it holds).
OriginRole = Literal["condition", "message", "caller"]


@compact_pickle
@dataclass(frozen=True, slots=True)
class Origin:
    """One thing a site's path condition or message depends on, traced to
    what it comes from (:func:`miner.analysis.origins.site_origins`)."""

    kind: OriginKind
    name: str
    """What it is, by kind: the flag (``--moe-runner-backend``, or the field
    name when it has no flag), the variable (``SGLANG_X``), the model config
    field (``architectures``), the request field (``max_tokens``), the probe
    called (``is_cuda``, ``torch.cuda.get_device_capability``), the module
    imported (``deep_ep``), the constant or runtime expression as written,
    and for ``unknown`` the expression where the trace stopped."""
    read: str
    """The expression of the site's condition or message the trace started
    from, as written (``self.use_marlin``)."""
    role: OriginRole = "condition"
    """Read by the path ``condition``, shown in the ``message``, or read by
    the condition of a call of the site's function (``caller``)."""
    owner: str = ""
    """Where ``name`` belongs, by kind: the options class of a flag
    (``ServerArgs``, ``SamplingParams``), the registry of a variable
    (``Envs``) or ``""``, ``config.json`` or ``quantization config`` for a
    model config field, the request class of a request field
    (``ChatCompletionRequest``, ``""`` when not known), the distribution to
    install for a package (``sgl-kernel-npu`` for the module ``attentions``)."""
    defined: str = ""
    """``path:line`` of the definition of ``name`` (the option, the
    variable's registry entry, the request field, the ``try`` of an
    optional import); ``""`` when not known."""
    default: str | None = None
    """The default as written, for a flag or an environment variable."""
    constraint: Constraint = ANY
    """What the condition requires of the value for the site to be reached."""
    chain: tuple[Hop, ...] = ()
    """The code followed from the site to the origin, site first."""
    reason: OriginReason = ""
    """For ``unknown``: why the trace stopped; ``""`` otherwise."""

    @property
    def user(self) -> bool:
        """Whether a user controls this origin (:data:`USER_ORIGINS`)."""
        return self.kind in USER_ORIGINS

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind.value,
            "name": self.name,
            "read": self.read,
            "role": self.role,
            "owner": self.owner,
            "defined": self.defined,
            "default": self.default,
            "constraint": self.constraint.to_json(),
            "chain": [h.to_json() for h in self.chain],
            "reason": self.reason,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Origin:
        return cls(
            kind=OriginKind(data["kind"]),
            name=data["name"],
            read=data["read"],
            role=data.get("role", "condition"),
            owner=data.get("owner", ""),
            defined=data.get("defined", ""),
            default=data.get("default"),
            constraint=Constraint.from_json(data["constraint"]),
            chain=tuple(Hop.from_json(h) for h in data.get("chain", ())),
            reason=data.get("reason", ""),
        )


@compact_pickle
@dataclass(frozen=True, slots=True)
class Unreachable:
    """No in-tree call can make a site's condition true (the ``unreachable``
    fact): one atom of its top-level ``and`` reads a parameter whose every
    argument, at every call the commit holds (or its default), is a constant
    the atom cannot accept (``is_paged=True`` at both calls of a function
    raising only when ``not is_paged``). Or the ``else`` of an exhaustive
    dispatch: every value a flag (its choices) or an enum (its members) can
    take is handled by an earlier branch (``subject`` and ``choices`` set).
    Or a function no file of the commit calls or names (``uncalled``). Or
    a function every call of which its own condition keeps from the site
    (``guard``)."""

    path: str
    line: int
    """The guard (or the site) that reads the atom; for a dispatch, the last
    branch before the ``else``."""
    condition: str
    """The atom as written: ``not is_paged``; for a dispatch, the value the
    branches test (``backend``, ``self.disaggregation_mode``)."""
    values: tuple[Origin, ...]
    """Each constant given, with the chain to the call that gives it (kind
    ``constant``; ``constraint`` is what the atom needs and the value cannot
    meet); for a dispatch on a flag, the flag's origin (kind ``flag``)."""
    subject: str = ""
    """For a dispatch: the flag (``--sampling-backend``) or the enum class
    (``DisaggregationMode``) whose every value the branches handle; else empty."""
    choices: tuple[str, ...] = ()
    """For a dispatch: every value of ``subject`` (the flag's choices as its
    ``add_argument`` lists them, ``None`` for a default of None; the enum's
    members as its class defines them), each handled before the ``else``."""
    uncalled: bool = False
    """No file of the commit calls or names the site's function but its own
    ``def`` (``condition`` is the function's name, ``line`` its ``def``):
    only code outside the commit can get there."""
    guard: str = ""
    """Every call of the site's function is made only where a conjunct of
    its own condition holds (``condition``, at ``path:line`` of the first
    call; ``values`` the origin it reads, with what the call needs of it;
    none when that conjunct is this one negated, written with the call's
    arguments: :mod:`miner.analysis.origins.restated`) that contradicts
    this conjunct of the site's condition, as written (``not _is_cuda``);
    else empty."""

    @property
    def way(self) -> Literal["dispatch", "callers", "uncalled", "arguments"]:
        """Which kind of fact this is: the ``else`` of a ``dispatch``
        (``subject`` set), ``callers`` whose conditions rule it out
        (``guard`` set), a function nothing calls (``uncalled``), else the
        constant ``arguments`` every call gives."""
        if self.subject:
            return "dispatch"
        if self.guard:
            return "callers"
        return "uncalled" if self.uncalled else "arguments"

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "line": self.line,
            "condition": self.condition,
            "values": [v.to_json() for v in self.values],
            "subject": self.subject,
            "choices": list(self.choices),
            "uncalled": self.uncalled,
            "guard": self.guard,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Unreachable:
        return cls(
            path=data["path"],
            line=data["line"],
            condition=data["condition"],
            values=tuple(Origin.from_json(v) for v in data.get("values", ())),
            subject=data.get("subject", ""),
            choices=tuple(data.get("choices", ())),
            uncalled=bool(data.get("uncalled", False)),
            guard=data.get("guard", ""),
        )


@compact_pickle
@dataclass(frozen=True, slots=True)
class Caught:
    """A handler that catches a site's exception without re-raising it: the
    user sees at most a log line, not the error (the ``logged`` fact)."""

    path: str
    line: int
    """The line of the ``except`` clause."""
    types: str
    """The caught types as written (``Exception``; ``""`` for a bare ``except:``)."""
    frame: Literal["same", "caller"]
    """``same``: a ``try`` around the site in its own function; ``caller``:
    a ``try`` around a call of the site's function."""
    logs: bool
    """The handler calls a logger (``logger.error(...)``, ``warnings.warn``, ``print``)."""

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "line": self.line,
            "types": self.types,
            "frame": self.frame,
            "logs": self.logs,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Caught:
        return cls(
            path=data["path"],
            line=data["line"],
            types=data["types"],
            frame=data["frame"],
            logs=data["logs"],
        )


#: What a :class:`Finding` claims: the ``cause`` (a user-controlled origin and
#: the values that make the condition true), the ``reason`` SGLang refuses it
#: (a cited sentence, or that the release has no implementation of it), a
#: ``fix`` (a change that makes the condition false), and for errors a user
#: does not see as such: ``logged`` (caught and logged), ``unreachable`` (no
#: in-tree call gets there) and ``report`` (an internal check: what a bug
#: report should hold).
FindingKind = Literal["cause", "reason", "fix", "logged", "unreachable", "report"]

#: What a ``fix`` finding changes: ``set`` a flag to a value, switch a flag
#: ``on`` (``--x``) or ``off`` (``--no-x``), ``drop`` a switch that was given,
#: ``leave-out`` a flag so that its default (or what the argument handling
#: resolves it to) applies, ``unset`` or ``set-env`` an environment variable,
#: ``install`` a distribution; ``""`` for the other kinds.
FixAction = Literal["", "set", "on", "off", "drop", "leave-out", "unset", "set-env", "install"]


@compact_pickle
@dataclass(frozen=True, slots=True)
class Finding:
    """One typed claim about an error, made by one rule of
    :mod:`miner.analysis.findings` from the error's origins and the commit's
    facts, and checked by its verifier before anything is printed. It holds
    names, values and ``path:line`` only: the words are the templates'
    (``templates/findings.md.j2``)."""

    kind: FindingKind
    rule: str
    """The rule that made it (``cause-flag``, ``fix-flag-value``...; ``docs/rules.md``)."""
    origin: str = ""
    """The :class:`OriginKind` value of what it is about (``flag``, ``env``,
    ``package``...), ``""`` when it is about no origin (a reason, a report)."""
    name: str = ""
    """The flag (``--moe-runner-backend``), variable, model-config or request
    field, module or probe it is about; ``""`` when none."""
    owner: str = ""
    """The options class of a flag, the registry of a variable, the
    distribution of a package (``flashinfer-python``), as the origin records it."""
    op: str = ""
    """For a cause: the :data:`ConstraintOp` the condition puts on the value;
    for a fix: the same op, which the change makes false."""
    values: tuple[str, ...] = ()
    """For a cause or a fix: the values the constraint compares with; for a
    reason that the release has no implementation: the origins' names; for
    a report: the message's runtime fields."""
    value: str | None = None
    """For a cause: the default, when the default itself meets the
    constraint (None otherwise). For a fix: the value the change leaves (``set``: the value given,
    ``on`` / ``off`` / ``drop``: ``True`` / ``False``, ``leave-out``: the
    default, or what a resolver picks, ``unset``: the variable's default,
    ``set-env``: the value set, ``install``: the requirement)."""
    words: tuple[str, ...] = ()
    """The exact change: command-line words (``--mamba-radix-cache-strategy``,
    ``no_buffer``; a switch alone), an environment line (``SGLANG_X=1``,
    ``unset SGLANG_X``) or a command (``pip``, ``install``, ``flashinfer-python``).
    For a cause: the command-line words that give its values, when a command
    line can (the "before" of an example)."""
    command: str = ""
    """The module whose ``python -m`` parses the flag (``sglang.launch_server``),
    ``""`` when not known or not a flag."""
    action: FixAction = ""
    default: str | None = None
    """A flag's or variable's default as written (``'auto'``), None when it
    has none or the finding is not about one."""
    quote: str = ""
    """A sentence quoted from the source as written: the reason (comment,
    message, help text or docstring), or a fix's cost (its help text)."""
    quote_at: str = ""
    """``path:line`` of ``quote`` (``""`` without one)."""
    source: str = ""
    """Where ``quote`` comes from (``comment``, ``setting-comment``, ``help``,
    ``docstring``, ``message``), or ``not-implemented`` for a reason that the
    release has no implementation of the combination; ``""`` otherwise."""
    resolves: tuple[str, ...] = ()
    """Values that raise which the argument handling may store into a flag
    left out: a ``set`` fix's caveat (leaving the flag out is no fix), or
    what a resolver picks for a ``leave-out`` fix only under its
    requirement (``quote``), as written."""
    resolved_at: tuple[str, ...] = ()
    """``path:line`` of each store of ``resolves`` (or of the resolver)."""
    evidence: tuple[str, ...] = ()
    """``path:line`` of everything the finding rests on: the origin's
    definition and the guard reading it, the quote, the resolution."""

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "rule": self.rule,
            "origin": self.origin,
            "name": self.name,
            "owner": self.owner,
            "op": self.op,
            "values": list(self.values),
            "value": self.value,
            "words": list(self.words),
            "command": self.command,
            "action": self.action,
            "default": self.default,
            "quote": self.quote,
            "quote_at": self.quote_at,
            "source": self.source,
            "resolves": list(self.resolves),
            "resolved_at": list(self.resolved_at),
            "evidence": list(self.evidence),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Finding:
        return cls(
            kind=data["kind"],
            rule=data["rule"],
            origin=data.get("origin", ""),
            name=data.get("name", ""),
            owner=data.get("owner", ""),
            op=data.get("op", ""),
            values=tuple(data.get("values", ())),
            value=data.get("value"),
            words=tuple(data.get("words", ())),
            command=data.get("command", ""),
            action=data.get("action", ""),
            default=data.get("default"),
            quote=data.get("quote", ""),
            quote_at=data.get("quote_at", ""),
            source=data.get("source", ""),
            resolves=tuple(data.get("resolves", ())),
            resolved_at=tuple(data.get("resolved_at", ())),
            evidence=tuple(data.get("evidence", ())),
        )


class FixKind(str, Enum):
    """What an :class:`ExampleFix` changes, set where the example is made."""

    FLAG = "flag"
    """A command-line flag of the entry point: given, dropped or another value."""
    ENV = "env"
    """An environment variable on the command line."""
    ARGUMENT = "argument"
    """An argument of the options class, constructed in Python."""
    CONDITION = "condition"
    """Only the raise condition, then its negation (or the call path, then
    "another path"): no change a user makes. The card leaves it out."""


class SolutionKind(str, Enum):
    """What one item of the card's "Solutions" is, set where it is made."""

    FIX = "fix"
    """A change of a setting or an input, or the message's own advice."""
    INSTALL = "install"
    """A package to install."""
    FOLLOW_UP = "follow-up"
    """What the next checks need once this one passes: only after a fix."""
    NOTE = "note"
    """What the code tells of reaching the line (asserts stripped, no way in,
    an internal check to report)."""
    CONDITION = "condition"
    """Only the raise condition negated ("It is not raised when ...", "The
    input passes this check when ..."): the card leaves it out."""


@compact_pickle
@dataclass(frozen=True, slots=True)
class ExampleFix:
    """A before/after pair for the card's "Example fix" section."""

    language: str
    """Fence language: ``shell`` (a command line), ``python`` or ``dotenv``."""
    before: str
    after: str
    kind: FixKind | None
    """What the example changes; None only in a record of an older miner."""


@compact_pickle
@dataclass(frozen=True, slots=True)
class Analysis:
    """The prose sections of one error's card, written from mined facts.

    Text fields are Markdown. A section that the facts cannot support is None
    or empty, and the card leaves it out rather than printing filler.
    """

    error_id: str
    trigger: str
    """"When it happens": the trigger in words, from the guards and scope."""
    what_it_means: str | None = None
    situations: tuple[str, ...] = ()
    """Common situations that lead there (callers, entry points)."""
    solutions: tuple[str, ...] = ()
    solution_kinds: tuple[SolutionKind, ...] = ()
    """The kind of each item of ``solutions``, in order; empty when not known
    (a language model's rewrite, a record of an older miner)."""
    example_fix: ExampleFix | None = None
    related: tuple[str, ...] = ()
    """Error ids of related errors, best first (never the error itself)."""
    author: str = ""
    """Who wrote the prose: ``Analysis generated from the source at <sha>``."""
    evidence: tuple[str, ...] = ()
    """How each guard was linked to a setting (Markdown, one line per link:
    which name matched which flag or variable, exact or by name only)."""
    audience: AudienceName = "internal"
    """Who can cause and fix the error (:class:`miner.analysis.audience.Audience`
    value): ``user-setting``, ``user-input``, ``dependency``, ``unsupported``
    (user-facing), ``abstract``, ``internal``, ``test`` or ``script``."""
    audience_rule: str = ""
    """The rule that decided the audience (``path-test``, ``guard-setting``...)."""
    audience_reason: str = ""
    """What decided it: the guard, the words of the message or the path rule."""
    condition: Condition | None = None
    """The primary site's reach condition (:func:`miner.analysis.condition.condition_of`):
    every guard and early exit joined and simplified; None when not computed."""
    condition_text: str = ""
    """``condition`` as Python-like text (``enable_teacache and x is not None``)."""
    origins: tuple[Origin, ...] = ()
    """What the primary site's condition and message read, traced to what
    each value comes from (:mod:`miner.analysis.origins`), condition first."""
    logged: Caught | None = None
    """A handler that catches the primary site's exception without
    re-raising it (the user sees a log line, not the error); None when none is found."""
    unreachable: Unreachable | None = None
    """Why no in-tree call can reach the primary site; None when one may."""
    findings: tuple[Finding, ...] = ()
    """The verified findings (:mod:`miner.analysis.findings`): causes, reasons,
    fixes, logged / unreachable / report, in rule order."""
    dropped: tuple[str, ...] = ()
    """The rule of each finding the verifier dropped (one entry per drop)."""

    def to_json(self) -> dict[str, Any]:
        return {
            "trigger": self.trigger,
            "what_it_means": self.what_it_means,
            "situations": list(self.situations),
            "solutions": list(self.solutions),
            "solution_kinds": [k.value for k in self.solution_kinds],
            "example_fix": None
            if self.example_fix is None
            else {
                "language": self.example_fix.language,
                "before": self.example_fix.before,
                "after": self.example_fix.after,
                "kind": None if self.example_fix.kind is None else self.example_fix.kind.value,
            },
            "related": list(self.related),
            "author": self.author,
            "evidence": list(self.evidence),
            "audience": self.audience,
            "audience_rule": self.audience_rule,
            "audience_reason": self.audience_reason,
            "condition": None if self.condition is None else self.condition.to_json(),
            "condition_text": self.condition_text,
            "origins": [o.to_json() for o in self.origins],
            "logged": None if self.logged is None else self.logged.to_json(),
            "unreachable": None if self.unreachable is None else self.unreachable.to_json(),
            "findings": [f.to_json() for f in self.findings],
            "dropped": list(self.dropped),
        }

    @classmethod
    def from_json(cls, error_id: str, data: dict[str, Any]) -> Analysis:
        """The inverse of :meth:`to_json` (which leaves the id to its container)."""
        fix = data.get("example_fix")
        return cls(
            error_id=error_id,
            trigger=data["trigger"],
            what_it_means=data.get("what_it_means"),
            situations=tuple(data.get("situations", ())),
            solutions=tuple(data.get("solutions", ())),
            solution_kinds=tuple(SolutionKind(k) for k in data.get("solution_kinds", ())),
            example_fix=None
            if fix is None
            else ExampleFix(
                fix["language"],
                fix["before"],
                fix["after"],
                None if fix.get("kind") is None else FixKind(fix["kind"]),
            ),
            related=tuple(data.get("related", ())),
            author=data.get("author", ""),
            evidence=tuple(data.get("evidence", ())),
            audience=data.get("audience", "internal"),
            audience_rule=data.get("audience_rule", ""),
            audience_reason=data.get("audience_reason", ""),
            condition=None
            if data.get("condition") is None
            else Condition.from_json(data["condition"]),
            condition_text=data.get("condition_text", ""),
            origins=tuple(Origin.from_json(o) for o in data.get("origins", ())),
            logged=None if data.get("logged") is None else Caught.from_json(data["logged"]),
            unreachable=None
            if data.get("unreachable") is None
            else Unreachable.from_json(data["unreachable"]),
            findings=tuple(Finding.from_json(f) for f in data.get("findings", ())),
            dropped=tuple(data.get("dropped", ())),
        )


@compact_pickle
@dataclass(frozen=True, slots=True)
class HistoryEvent:
    """A release in which an error (one lineage, across rewordings) changed."""

    release: str
    """The tag where the change is first seen."""
    kind: Literal["added", "changed", "moved", "removed"]
    """``added`` (first seen, or seen again after an absence), ``changed``,
    ``moved`` (file or scope only) or ``removed`` (no longer raised)."""
    aspects: tuple[str, ...] = ()
    """What changed, as :class:`miner.releases.diff.Aspect` keys: ``message``,
    ``exception``, ``guards``, ``sites``, ``file``, ``scope``."""
    error_id: str = ""
    """The error's id in ``release`` (the last id it had, for ``removed``)."""

    def to_json(self) -> dict[str, Any]:
        return {
            "release": self.release,
            "kind": self.kind,
            "aspects": list(self.aspects),
            "error_id": self.error_id,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> HistoryEvent:
        return cls(
            release=data["release"],
            kind=data["kind"],
            aspects=tuple(data.get("aspects", ())),
            error_id=data.get("error_id", ""),
        )


@compact_pickle
@dataclass(frozen=True, slots=True)
class History:
    """The life of one error over the releases mined in order.

    An error keeps one history when it is reworded, changes type or guards, or
    moves: the releases are paired by :mod:`miner.releases.diff`, so ``ids`` may hold
    several error ids, oldest first.
    """

    error_id: str
    """The id in the last release that raised the error (its current card)."""
    ids: tuple[str, ...]
    """Every id the error had, oldest first (``error_id`` is the last)."""
    first_seen: str
    """The first release (tag) that raised it."""
    last_seen: str
    """The last release that raised it (``newest`` when still present)."""
    newest: str
    """The newest release mined: what "still present" is measured against."""
    oldest: str
    """The oldest release mined; ``first_seen == oldest`` means "at least since"."""
    seen: tuple[str, ...]
    """Every release that raised it, in release order."""
    events: tuple[HistoryEvent, ...] = ()
    """Added, changed, moved and removed events, in release order."""

    @property
    def present(self) -> bool:
        """Raised by the newest release mined."""
        return self.last_seen == self.newest

    @property
    def changes(self) -> tuple[HistoryEvent, ...]:
        """The ``changed`` and ``moved`` events."""
        return tuple(e for e in self.events if e.kind in ("changed", "moved"))

    def to_json(self) -> dict[str, Any]:
        return {
            "error_id": self.error_id,
            "ids": list(self.ids),
            "first_seen": self.first_seen,
            "last_seen": self.last_seen,
            "present": self.present,
            "newest": self.newest,
            "oldest": self.oldest,
            "seen": list(self.seen),
            "events": [e.to_json() for e in self.events],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> History:
        return cls(
            error_id=data["error_id"],
            ids=tuple(data["ids"]),
            first_seen=data["first_seen"],
            last_seen=data["last_seen"],
            newest=data["newest"],
            oldest=data["oldest"],
            seen=tuple(data["seen"]),
            events=tuple(HistoryEvent.from_json(e) for e in data["events"]),
        )


@compact_pickle
@dataclass(frozen=True, slots=True)
class RunStats:
    """What one extraction did; printed by the CLI, never written to the output."""

    files: int = 0
    """``.py`` entries of the tree."""
    skipped: int = 0
    """Entries not read (symbolic links, submodules)."""
    blobs: int = 0
    """Distinct blobs among the entries read."""
    cache_hits: int = 0
    """Blobs served from the cache."""
    parsed: int = 0
    """Blobs mined by the extractor this run (cache misses)."""
    failed: int = 0
    """Files the pool gave up on (crash, time or memory limit, unreadable blob)."""
    workers_lost: int = 0
    """Worker processes that died or were stopped and replaced."""
    jobs: int = 0
    """Worker processes used at most (0: mined in this process)."""
    cache: str = "off"
    """The cache's state: ``used``, ``rebuilt``, ``read-only`` or ``off``."""
    seconds: float = 0.0
    """Wall-clock time of the extraction (for the summary line; never written)."""


@compact_pickle
@dataclass(frozen=True, slots=True)
class MineResult:
    """Everything mined from one commit: its files, sites and errors."""

    commit: CommitInfo
    files: tuple[FileResult, ...]
    """One result per ``.py`` entry of the tree, in path order (empty when the
    result was read back from a mined folder: the manifest stands for it)."""
    sites: tuple[Site, ...]
    """Every site, in (path, line) order, with ids assigned."""
    errors: tuple[Error, ...]
    """Sites grouped into errors, in error-id order (re-raises excluded)."""
    stats: RunStats | None = field(default=None, compare=False)
    """What the extraction did (cache hits, blobs parsed, workers lost); not
    part of the output, which depends on the commit alone."""

    @property
    def problems(self) -> tuple[FileResult, ...]:
        """Files that were skipped or failed."""
        return tuple(f for f in self.files if f.status != "mined")


def group_errors(sites: Iterable[Site]) -> list[Error]:
    """Sites grouped by ``error_id`` (primary site first: path, then line), in
    error-id order.

    Re-raises (a bare ``raise``, or ``raise err`` of the caught exception)
    raise nothing new and are left out.
    """
    groups: dict[str, list[Site]] = defaultdict(list)
    for site in sites:
        if site.reraise or (site.kind == "raise" and site.exception is None):
            continue
        groups[site.error_id].append(site)
    errors = []
    for error_id in sorted(groups):
        members = sorted(groups[error_id], key=lambda s: (s.path, s.line))
        first = members[0]
        errors.append(
            Error(
                error_id=error_id,
                exception=first.exception,
                message=first.message,
                message_parts=first.message_parts,
                message_kind=first.message_kind,
                sites=tuple(members),
            )
        )
    return errors
