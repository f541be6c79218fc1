"""The card's prose sections, written by rules from the mined facts (deterministic).

Every section is written from ONE condition: the primary site's reach
condition (:func:`miner.analysis.condition.condition_of`: its guards and
early exits joined and simplified). Each atom of it is linked to the settings
it reads (:class:`~miner.analysis.links.Linker`, one atom at a time), so a
conjunct reads either in the settings' terms (a flag with its value, an
environment variable, a derived setting) or, unlinked, in plain words
(:mod:`miner.analysis.wording`).

* "When it happens": every conjunct, an OR conjunct as "any of", early exits
  said as such; the other sites of the error with their conditions; the flags
  and variables the message names.
* "What it means": what leads here (the settings with their values and the
  other conjuncts, in the scope), then why, quoted from the code's comments,
  docstrings and help texts with ``path:line`` (:mod:`miner.analysis.evidence`).
* "Solutions": a setting change wherever the condition reaches one (what the
  alternative does, from its help text; never a default that the argument
  handling may turn into the failing value), the message's own advice with
  real names (:mod:`miner.analysis.remedy`), and what the rest of the
  condition needs, negated properly.

Every flag and variable named comes from
:class:`~miner.analysis.config.ConfigModel`, so a setting that does not exist
at the commit never appears.
"""

from __future__ import annotations

import ast
import builtins
import io
import re
import textwrap
import tokenize
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any, overload

from miner.analysis import paths as callpaths
from miner.analysis.arguments import Argument
from miner.analysis.audience import (
    USER_FACING,
    Audience,
    message_text,
    named_env_vars,
    named_flags,
    path_kind,
    reads_setting,
)
from miner.analysis.branches import LEAVING_KINDS, NO_BRANCH, Branch, exit_branch
from miner.analysis.callers import Caller, target_name
from miner.analysis.code import dotted, parse_expr
from miner.analysis.condition import (
    Reach,
    atom_names,
    atom_value,
    condition_from,
    implied,
    possible,
    site_reach,
)
from miner.analysis.config import Condition as Setting
from miner.analysis.config import ConfigModel, EnvVar, Option
from miner.analysis.evidence import (
    Quote,
    first_sentence,
    help_requirement,
    help_sentence,
    quotes,
)
from miner.analysis.exceptions import short
from miner.analysis.facts import (
    WRAPPERS,
    LocalValue,
    OptionalImport,
    RepoFacts,
    assigned_expr,
    binding_line,
    boolean_expr,
)
from miner.analysis.links import Clause, Linker, Read
from miner.analysis.paths import MAX_NEEDS, CallReach, Need
from miner.analysis.remedy import Phrases, Remedies, Remedy, cut_text
from miner.analysis.resolvers import callee, guard_names, local_calls, test_names
from miner.analysis.wording import (
    atom_words,
    code,
    excerpt_lines,
    joined,
    negate_compare,
    negated,
    plural,
    sentence,
    shown,
    values_list,
)
from miner.model import Condition, Error, ExampleFix, FixKind, Guard, Site, SolutionKind

__all__ = ["Fix", "Reading", "Writer", "code", "shown", "values_list"]

_NO = Option("", (), "", "", 0, "argparse")

#: Longest negated condition written out in "Solutions" (characters); a
#: longer one is left to the Example fix.
MAX_SHOWN = 240
#: Most lines of a ``def`` header :meth:`Writer.barred_calls` reads.
MAX_HEADER_LINES = 30
#: Most callers listed per level in "Common situations".
MAX_CALLERS = 4
#: Callers past :data:`MAX_CALLERS` named (with their first call) in one sentence.
MAX_MORE_CALLERS = 8
#: Most other sites listed in "When it happens".
MAX_OTHER_SITES = 4
#: Most conjuncts named in the first sentence of "What it means".
MAX_SUMMARY = 5
#: Most quotes cited in "What it means" (user-facing cards; others get one).
MAX_QUOTES = 3
#: Most values of a setting listed in a sentence.
MAX_VALUES = 4
#: Setting states at most in a "Launches where ..." situation (more: the
#: "When it happens" list already names them, one per line).
MAX_LAUNCH_STATES = 4
#: Most names besides the settings said to give a value (:meth:`Writer.reads_words`).
MAX_OTHER_NAMES = 2
#: Most value sources cited per card.
MAX_SOURCES = 3
#: Most ways out listed from the conditions that read no setting.
MAX_WAYS = 6
#: Most later checks named in one "Once it passes, the later checks ..." sentence.
MAX_LATER = 4
#: Characters of the next check's message quoted in Solutions.
MAX_NEXT_MESSAGE = 160
#: Guards that put no condition on reaching the site.
_NOT_CONDITIONS = frozenset({"try", "finally", "try-else", "with", "async with"})


def _setting_test(term: Term) -> tuple[tuple[str, str], str, frozenset[str]] | None:
    """(setting, op, values) of a one-atom term comparing a setting with literals."""
    if term.cond.op != "atom" or len(term.parts) != 1:
        return None
    clause = term.parts[0].clause
    if clause is None or clause.read is None:
        return None
    cond = clause.condition
    if cond.op not in ("==", "in", "!=", "not in") or not cond.values:
        return None
    return (clause.read.kind, clause.read.target), cond.op, frozenset(cond.values)


def _without_implied(terms: tuple[Term, ...]) -> tuple[Term, ...]:
    """The terms without a ``x != a`` (or ``x not in S``) that a ``x == b`` (or
    ``x in T``) of the same setting implies (no value of T in {a} or S): "is
    not `decode`" says nothing once "is `prefill`" holds."""
    tests = [_setting_test(term) for term in terms]
    equal: dict[tuple[str, str], list[frozenset[str]]] = {}
    for test in tests:
        if test is not None and test[1] in ("==", "in"):
            equal.setdefault(test[0], []).append(test[2])
    kept = []
    for term, test in zip(terms, tests, strict=True):
        if (
            test is not None
            and test[1] in ("!=", "not in")
            and any(not (values & test[2]) for values in equal.get(test[0], ()))
        ):
            continue
        kept.append(term)
    return tuple(kept)


#: A help text offering a switch in place of an error.
_INSTEAD_OF_ERROR = re.compile(
    r"\b(?:instead of|rather than)\s+(?:raising|returning|throwing|failing|an?\s+error|erroring)",
    re.IGNORECASE,
)


def _on_by_default(opt: Option) -> bool:
    """A flag that is true unless given as false (``default=True`` with a
    value-taking action such as SGLang's ``StoreBoolean``, not a switch)."""
    action = (opt.action or "").rsplit(".", 1)[-1]
    return (
        opt.default == "True"
        and not opt.is_bool
        and action not in ("", "store_false", "BooleanOptionalAction")
    )


def _with_context(example: ExampleFix | None, others: list[ExampleFix]) -> ExampleFix | None:
    """``example`` with the other triggering flags on both command lines.

    The other fixes' "before" lines (``cmd ... --enable-x``) are the settings
    the error also needs; a fix that only adds ``--disable-y`` shows them, so
    that its "before" raises: ``cmd ... --enable-x`` -> ``cmd ... --enable-x
    --disable-y``. Only shell lines of the same command; a flag the example
    already names is not added twice.
    """
    if example is None or example.language != "shell":
        return example
    if " ... " in example.after:
        cmd = example.after.split(" ... ", 1)[0]
    elif example.after.endswith(" ...") and " ... " in example.before:
        cmd = example.after[: -len(" ...")]  # a fix that drops the flag
    else:
        return example
    own = set(re.findall(r"--[\w-]+", example.before + " " + example.after))
    extra: list[str] = []
    for other in others:
        if other is example or other.language != "shell":
            continue
        head, sep, rest = other.before.partition(" ... ")
        if head != cmd or not sep or not rest.startswith("--") or "\n" in rest:
            continue
        if set(re.findall(r"--[\w-]+", rest)) & own:
            continue
        own.update(re.findall(r"--[\w-]+", rest))
        extra.append(rest)
    if not extra:
        return example
    context = " ".join(extra)

    def add(line: str) -> str:
        start, sep, rest = line.partition(" ... ")
        if not sep:
            return f"{line} {context}" if line == f"{cmd} ..." else line
        return f"{start} ... {context} {rest}"

    before = example.before if " ... " in example.before else f"{cmd} ..."
    if before == f"{cmd} ...":
        return replace(example, before=f"{cmd} ... {context}", after=add(example.after))
    return replace(example, before=add(before), after=add(example.after))


#: The values of a switch, for a failing command line of one without choices.
_SWITCH_VALUES = ("True", "False")


def _command(cmd: str, words: str | None) -> str | None:
    """``cmd ... words`` (``cmd ...`` for no words); None when ``words`` is
    None: no command line gives the value (:meth:`Option.given`)."""
    if words is None:
        return None
    return f"{cmd} ... {words}" if words else f"{cmd} ..."


def _flag_fix(text: str, before: str | None, after: str | None) -> Fix:
    """``text`` with the command lines ``before`` -> ``after`` as its example
    (:attr:`FixKind.FLAG`); without one when a line cannot be given or both are the same."""
    if before is None or after is None or before == after:
        return Fix(text)
    return Fix(text, ExampleFix("shell", before, after, FixKind.FLAG))


def _run(module: str | None, path: str) -> str:
    """``python -m module`` when the module path is importable, else ``python path``."""
    if module and all(part.isidentifier() for part in module.split(".")):
        return f"python -m {module}"
    return f"python {path}" if path else "python your_program.py"


def _compare_text(cond: Setting) -> str:
    """A setting comparison kept as written, its negation spelled out
    (``not (x > 1)`` -> ``x <= 1``)."""
    text = cond.text or cond.name
    if text.startswith("not (") and text.endswith(")"):
        try:
            node = ast.parse(text[5:-1], mode="eval").body
        except (SyntaxError, ValueError, RecursionError):
            node = None
        if isinstance(node, ast.Compare):
            flipped = negate_compare(node)
            if flipped is not None:
                return code(flipped)
        return f"{code(text[5:-1])} is false"
    return code(text)


@dataclass(frozen=True, slots=True)
class Fix:
    """One way out, with the example it leads to."""

    text: str
    example: ExampleFix | None = None


@dataclass(frozen=True, slots=True)
class Part:
    """One atom of the condition, linked to a setting or not."""

    atom: Condition
    clause: Clause | None
    """The atom as a setting comparison when it reads one (``clause.read`` set)."""
    origin: Guard | None
    """The guard or exit the atom was read from."""
    strong: bool = False
    """The setting is read for sure: exactly, or by name from an arguments
    object (:func:`miner.analysis.audience.reads_setting`)."""
    boolean: bool = False
    """The atom is a local the function last assigns a ``bool`` above the
    test (:meth:`Writer.assignment_above`): it is true or false, not truthy."""


@dataclass(frozen=True, slots=True)
class Term:
    """One conjunct of the condition: an atom, or an ``or`` (or ``and``) of atoms."""

    cond: Condition
    parts: tuple[Part, ...]

    @property
    def origin(self) -> Guard | None:
        return next((p.origin for p in self.parts if p.origin is not None), None)

    @property
    def linked(self) -> bool:
        return any(p.clause is not None for p in self.parts)


@dataclass(frozen=True, slots=True)
class Excluded:
    """Conjuncts that no value of one expression meets together
    (:meth:`Writer.excluded`): ``arch // 10 in [8, 9, 10, 11]`` asserted,
    then ``arch // 10 != 8``, ``!= 9`` and ``not in [10, 11]`` on the way to
    the raise, with ``arch`` assigned nowhere in between."""

    expr: str
    """The expression tested (``arch // 10``)."""
    terms: tuple[Term, ...]
    """The conjuncts testing it, in the order of the condition."""

    @property
    def names(self) -> list[str]:
        """The names :attr:`expr` reads, sorted."""
        return _bare_names(self.expr)

    @property
    def asserted(self) -> Term | None:
        """The first of them an earlier ``assert`` makes hold, if any."""
        return next(
            (t for t in self.terms if t.origin is not None and t.origin.kind == "asserted"), None
        )


@dataclass(frozen=True, slots=True)
class Source:
    """Where a name tested by the condition gets its value: in its function
    (``path`` empty), or elsewhere in the commit."""

    name: str
    line: int
    value: str
    """The assigned expression as written (one line)."""
    read: Read | None = None
    """A setting the value reads for sure, if any (the first of :attr:`reads`)."""
    path: str = ""
    """The file of the assignment when it is not in the site's function
    (found anywhere in the commit: :attr:`miner.analysis.facts.RepoFacts.assigned`)."""
    reads: tuple[Read, ...] = ()
    """Every setting the value reads for sure, one read per setting."""
    calls: tuple[Argument, ...] = ()
    """For a parameter of the function: what each call gives it
    (:attr:`RepoFacts.arguments`); the fields above are then the first call's."""


@dataclass(frozen=True, slots=True)
class Predicate:
    """An unlinked conjunct that tests the truth of a name or a call
    (``ctx.is_hybrid_ssm``), with the function that gives its value when known."""

    term: Term
    name: str
    """The name tested (its last part) or the function called."""
    negated: bool
    call: str | None = None
    """The function the name is assigned from (``uses_ssm_state``), or the one called."""
    doc: tuple[str, str, int] | None = None
    """That function's docstring (first paragraph), path and line."""

    def names(self) -> tuple[str, ...]:
        return (self.name, self.call) if self.call and self.call != self.name else (self.name,)


@dataclass(frozen=True, slots=True)
class Reading:
    """What the writer knows of one error, computed once."""

    error: Error
    site: Site
    condition: Condition
    """The primary site's reach condition, simplified."""
    terms: tuple[Term, ...]
    """Its conjuncts (those of the unsimplified condition when it is ``false``)."""
    audience: str
    quotes: tuple[Quote, ...] = ()
    named: tuple[str, ...] = ()
    """Flags and variables of the model that the message names."""
    remedies: tuple[Remedy, ...] = ()
    requirement: tuple[str, str] | None = None
    """(kind, text) of the message's sentence saying what is needed or refused
    (:meth:`miner.analysis.remedy.Phrases.requirement`)."""
    reason: str | None = None
    """The reason the message gives, if any."""
    lines: dict[int, str] = field(default_factory=dict)
    sources: tuple[Source, ...] = ()
    """Where the names of the unlinked conjuncts get their values."""
    dead: tuple[Guard, ...] = ()
    """``unreachable`` exits: an earlier statement that leaves on every path."""
    excluded: Excluded | None = None
    """Conjuncts that allow no value of what they test: the raise cannot be
    reached as written (:meth:`Writer.excluded`)."""
    callers: callpaths.Reached | None = None
    """How the raising function is reached: its calls and their conditions
    (:mod:`miner.analysis.paths`)."""
    predicates: tuple[Predicate, ...] = ()
    """The truth tests among the unlinked conjuncts (``ctx.is_ssm``) with the
    function each is assigned from (:meth:`Writer.predicates`)."""
    failed_imports: tuple[tuple[Term, tuple[OptionalImport, ...]], ...] = ()
    """The conjuncts that hold exactly when imports of the site's module
    failed as it was loaded, each with those imports
    (:meth:`Writer.failed_imports`)."""
    barred: Mapping[tuple[str, int], tuple[tuple[str, str], ...]] = field(default_factory=dict)
    """(path, line) of each call of the raising function whose literal
    arguments make :attr:`condition` false, so that it never raises from
    there, with the (parameter, argument as written) pairs that decide it
    (:meth:`Writer.barred_calls`)."""

    @property
    def user_facing(self) -> bool:
        return self.audience in {a.value for a in USER_FACING}

    @property
    def contradictory(self) -> bool:
        """The conjuncts cannot all hold as written: the simplified condition
        is ``false``, or :attr:`excluded`."""
        return self.condition.is_false or self.excluded is not None

    @property
    def parts(self) -> tuple[Part, ...]:
        return tuple(p for t in self.terms for p in t.parts)

    @property
    def linked(self) -> tuple[Part, ...]:
        return tuple(p for p in self.parts if p.clause is not None)


class Writer:
    """Writes the sections of a card for one error of one commit."""

    def __init__(
        self,
        facts: RepoFacts,
        short_sha: str,
        linker: Linker | None = None,
        sites: Sequence[Site] = (),
    ) -> None:
        """``sites`` are the commit's raise sites (for :meth:`next_check`)."""
        self.facts = facts
        self.config: ConfigModel = facts.config
        self.short_sha = short_sha
        self.flags = self.config.flag_names()
        self.linker = linker or Linker(facts.config, dict(facts.predicates))
        self.remedy = Remedies(self.config, self.entry)
        self.env_names = frozenset(e.name for e in self.config.env)
        self.phrases = Phrases(self.flags, self.env_names)
        self._links: dict[tuple[str, str, frozenset[str]], Clause | None] = {}
        paths: dict[str, set[str]] = {}
        for opt in self.config.options:
            if opt.owner in self.config.classes:
                paths.setdefault(opt.owner, set()).add(opt.path)
        self.classes = {name: frozenset(found) for name, found in paths.items()}
        self.paths = callpaths.of_facts(facts, self.link_atom)
        self._after: dict[tuple[str, int], list[Site]] = {}
        self._lines: dict[tuple[str, str], list[int]] = {}
        self._ways: dict[Term, bool] = {}
        """Term of :attr:`_ways_of` -> :meth:`way_out` (one error is written
        at a time: emptied when another reading asks)."""
        self._ways_of: Reading | None = None
        self._runs: dict[str, bool] = {}
        """File -> :meth:`_primary_runs`."""
        self._sibling_terms: dict[tuple[str, int], tuple[Term, ...]] = {}
        """(path, line) -> :meth:`site_terms` of a site another error asked about."""
        self._sites: dict[tuple[str, str], list[Site]] = {}
        """(path, scope) -> the sites of that function (:meth:`raising_values`)."""
        for other in sites:
            self._lines.setdefault((other.path, other.scope), []).append(other.line)
            self._sites.setdefault((other.path, other.scope), []).append(other)
            if other.kind == "raise" and other.guards and _own_if(other.guards[-1], other):
                for exit in other.exits:
                    if exit.kind == "exit" and exit.negated:
                        self._after.setdefault((other.path, exit.line), []).append(other)

    # ------------------------------------------------------------ reading an error

    def link_atom(
        self, atom: Condition, origin: Guard | None, path: str, line: int = 0
    ) -> Clause | None:
        """The atom, tested in the file ``path``, as a setting comparison, or
        None when it reads no setting; read in the function around the line of
        ``origin`` (else ``line``), whose views of the arguments object read
        settings (:meth:`~miner.analysis.links.Linker.link_guard`)."""
        if atom.kind != "expr":
            return None
        at = origin.line if origin is not None and origin.line else line
        views = self.config.views_in(path, at)
        key = (atom.shown, path, views)
        if key not in self._links:
            link = self.linker.link_guard(0, Guard("if", atom.shown, False, 0), path, at)
            clause = link.clauses[0] if len(link.clauses) == 1 else None
            self._links[key] = clause if clause and clause.read else None
        return self._links[key]

    def with_nested_exits(self, site: Site) -> Site:
        """``site`` with the exits nested in earlier branches that the mined
        exits leave out added to its exits (:attr:`RepoFacts.nested_exits`,
        :mod:`miner.analysis.nested`): what the card reads, not the record."""
        extra = self.facts.nested_exits.get((site.path, site.line))
        return replace(site, exits=(*site.exits, *extra)) if extra else site

    def site_terms(self, site: Site) -> tuple[Reach, tuple[Term, ...], dict[int, str]]:
        """The site's reach, the conjuncts of its condition as the card tells
        them (linked to settings, implied ones left out) and its excerpt's
        lines by number. ``site`` has its nested exits
        (:meth:`with_nested_exits`)."""
        reach = site_reach(site)
        shown_reach = site_reach(site, simplify=False) if reach.condition.is_false else reach
        terms = tuple(
            self._term(c, shown_reach, site)
            for c in shown_reach.condition.conjuncts()
            if c.op not in ("true", "false")
        )
        terms = _without_implied(tuple(dict.fromkeys(terms)))
        lines = excerpt_lines(site.excerpt.text, site.excerpt.start_line)
        terms = self._own_locals(site, terms, lines)
        terms = self._without_implied_values(site, terms, lines)
        terms = self._through_locals(site, terms, lines)
        return reach, terms, lines

    def _chosen(self, clause: Clause) -> bool:
        """Whether ``clause`` compares an option that has choices with values
        among them (a value the command line refuses is told otherwise)."""
        if clause.read is None or clause.read.kind != "option":
            return False
        opt = self.config.option_in(clause.read.target, clause.read.option_path)
        choices = (opt.choices or ()) if opt is not None else ()
        return bool(choices) and all(v in choices for v in clause.condition.values)

    def sibling_terms(self, other: Site) -> tuple[Term, ...]:
        """:meth:`site_terms` of another site (its nested exits added), made
        once per site whichever error asks."""
        key = (other.path, other.line)
        terms = self._sibling_terms.get(key)
        if terms is None:
            terms = self._sibling_terms[key] = self.site_terms(self.with_nested_exits(other))[1]
        return terms

    def raising_values(self, r: Reading, part: Part) -> tuple[str, ...]:
        """Values of the setting ``part`` tests that another raise of the
        same function refuses under conditions this error already meets:
        that raise's conjuncts are a test of the same setting with those
        values and otherwise conjuncts of this one (SGLang's
        ``create_grammar_backend``: where XGrammar fails with strict thinking,
        ``--grammar-backend none`` raises "--enable-strict-thinking requires
        a grammar backend ..." at line 415: no way out)."""
        clause = part.clause
        if clause is None or clause.read is None or clause.read.kind != "option":
            return ()
        ours = {t.cond.text() for t in r.terms}
        found: list[str] = []
        for other in self._sites.get((r.site.path, r.site.scope), ()):
            if other.line == r.site.line or other.kind != "raise":
                continue
            terms = self.sibling_terms(other)
            tests = [
                t
                for t in terms
                if t.cond.op == "atom"
                and t.parts[0].clause is not None
                and t.parts[0].clause.read is not None
                and t.parts[0].clause.read.target == clause.read.target
                and t.parts[0].clause.condition.op in ("==", "in")
            ]
            rest = [t for t in terms if t not in tests]
            test = tests[0].parts[0].clause if len(tests) == 1 else None
            if test is not None and all(t.cond.text() in ours for t in rest):
                found.extend(test.condition.values)
        return tuple(dict.fromkeys(found))

    def read(self, error: Error, audience: str = Audience.INTERNAL.value) -> Reading:
        site = self.with_nested_exits(error.primary)
        reach, terms, lines = self.site_terms(site)
        parts = [p for t in terms for p in t.parts]
        options: list[Option] = []
        for part in parts:
            if self._raises_at(site, part.origin, lines):
                continue  # a setting another error's check tests: its help says nothing of this one
            options.extend(self.options_of(part.clause))
        words = message_text(error)
        named = [f for f in named_flags(words) if f in self.flags]
        named += named_env_vars(words, self.env_names)
        for name in named:
            opt = self._flag_option(name, site.path)
            if opt is not None:
                options.append(opt)
        # A comment above an exit that raises another error is about that
        # error, unless that check and this site are one paragraph of checks.
        guards = sorted(
            {
                p.origin
                for p in parts
                if p.origin is not None
                and (
                    not self._raises_at(site, p.origin, lines)
                    or _one_paragraph(p.origin.line, site.line, lines)
                )
            },
            key=lambda g: -g.line,
        )
        exception = self.facts.exceptions.get(short(error.exception))
        calls = []
        for part in parts:
            for name in _CALLED.findall(part.atom.atom):
                doc = self.facts.call_docs.get(name)
                if doc is not None and not self._foreign_call(part.atom.atom, name, site.path):
                    calls.append((name, *doc))
        found = quotes(
            site,
            guards,
            list(dict.fromkeys(options)),
            exception,
            dict.fromkeys(calls),
            self.facts.module_docs.get(site.path),
            (
                *self.facts.doc_lines.get((site.path, site.line), (0, 0)),
                self.facts.module_doc_lines.get(site.path, 0),
            ),
        )
        facing = audience in {a.value for a in USER_FACING}
        sources = self.sources(site, terms, lines) if facing else ()
        preds = self.predicates(site, terms)
        sure: list[Option] = []
        for part in parts:
            read = part.clause.read if part.clause is not None else None
            if read is None or not (read.exact or part.strong):
                continue
            if self._raises_at(site, part.origin, lines):
                continue  # what resolves a setting only another error's check tests
            sure.extend(self.options_of(part.clause))
        found = sorted(
            [*found, *self.note_quotes(site, list(dict.fromkeys(sure)), preds)],
            key=lambda q: q.rank,
        )
        return Reading(
            error=error,
            site=site,
            condition=reach.condition,
            terms=terms,
            audience=audience,
            quotes=tuple(found),
            named=tuple(dict.fromkeys(named)),
            remedies=tuple(self.remedy.remedies(words, site.path)),
            requirement=self.phrases.requirement(words) if facing else None,
            reason=self.phrases.reason(words) if facing else None,
            lines=lines,
            sources=sources,
            dead=tuple(g for g in site.exits if g.kind == "unreachable"),
            excluded=self.excluded(site, terms, lines),
            callers=self.paths.reached(target_name(site.scope) or ""),
            predicates=preds,
            failed_imports=self.failed_imports(site, terms),
            barred=self.barred_calls(site, reach.condition, lines),
        )

    def barred_calls(
        self, site: Site, condition: Condition, lines: dict[int, str]
    ) -> dict[tuple[str, int], tuple[tuple[str, str], ...]]:
        """The calls of ``site``'s function that cannot raise it, by (path,
        line): those whose arguments (:attr:`RepoFacts.arguments`) for the
        parameters ``condition`` tests are literals that make it false
        (``f(sources, shard_dim=0)`` where it raises only when ``shard_dim is
        None``; :func:`~miner.analysis.condition.possible`), each with the
        (parameter, argument) pairs that decide it. Only atoms made of names,
        literals and comparisons are evaluated
        (:func:`~miner.analysis.condition.atom_value`), and only parameters
        the function does not bind again between its ``def`` header and the
        site, read in the excerpt ``lines`` (nothing when the ``def`` is not
        in it)."""
        if site.scope == "<module>" or condition.op in ("true", "false"):
            return {}
        atoms = [a for a in condition.atoms() if atom_names(a)]
        names = sorted({n for a in atoms for n in atom_names(a)})
        given: dict[tuple[str, int], dict[str, tuple[str, object]]] = {}
        for name in names:
            for arg in self.facts.arguments.get((site.path, site.scope, name), ()):
                try:
                    value = ast.literal_eval(arg.text)
                except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                    continue
                given.setdefault((arg.path, arg.line), {})[name] = (arg.text, value)
        if not given:
            return {}
        start = _def_above(site, lines)
        body = _header_end(lines, start)
        head, at = lines.get(start, ""), lines.get(site.line, "")
        indent = len(head) - len(head.lstrip())
        function = site.scope.rsplit(".", 1)[-1]
        if (
            body is None
            or not re.match(rf"\s*(?:async\s+)?def\s+{re.escape(function)}\b", head)
            or len(at) - len(at.lstrip()) <= indent
        ):
            return {}  # not the site's own function's header
        for name in names:
            rebound = binding_line(name)
            if any(
                rebound.search(lines[n].encode("utf-8", "surrogatepass"))
                for n in range(body + 1, site.line)
                if n in lines and name in lines[n]
            ):
                for args in given.values():
                    args.pop(name, None)
        out: dict[tuple[str, int], tuple[tuple[str, str], ...]] = {}
        for call, args in given.items():
            values = {name: value for name, (_, value) in args.items()}
            known = {a.atom: t for a in atoms if (t := atom_value(a, values)) is not None}
            if known and not possible(condition, known):
                # the names of the atoms whose literal those values make false
                deciding = {
                    n
                    for a in atoms
                    if a.atom in known and known[a.atom] == a.negated
                    for n in atom_names(a)
                }
                out[call] = tuple((n, args[n][0]) for n in sorted(deciding))
        return out

    def failed_imports(
        self, site: Site, terms: tuple[Term, ...]
    ) -> tuple[tuple[Term, tuple[OptionalImport, ...]], ...]:
        """The conjuncts of ``terms`` every atom of which says that a name of
        the site's module has the value its ``except ImportError`` handler
        gives it (``torchaudio is None``, ``not use_flashinfer``:
        :attr:`RepoFacts.optional_imports`), each with those imports. Such a
        conjunct is an ``and``/``or`` of those atoms alone, so it is false
        once the imports succeed."""
        out = []
        for term in terms:
            found = [self._failed_import(site.path, atom) for atom in term.cond.atoms()]
            imports = [f for f in found if f is not None]
            if imports and len(imports) == len(found):
                out.append((term, tuple(dict.fromkeys(imports))))
        return tuple(out)

    def _failed_import(self, path: str, atom: Condition) -> OptionalImport | None:
        """The optional import of ``path`` whose failure ``atom`` (as it holds
        on the way to the site) says, or None."""
        if atom.kind != "expr" or not self.facts.optional_imports:
            return None
        node = parse_expr(atom.shown)
        value = None
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            name, value = node.operand, ""
        elif (
            isinstance(node, ast.Compare)
            and len(node.ops) == 1
            and isinstance(node.ops[0], (ast.Is, ast.Eq))
            and isinstance(node.comparators[0], ast.Constant)
            and (node.comparators[0].value is None or node.comparators[0].value is False)
        ):
            name, value = node.left, repr(node.comparators[0].value)
        else:
            return None
        if not isinstance(name, ast.Name):
            return None
        found = self.facts.optional_imports.get((path, name.id))
        if found is None or (value and value != found.value):
            return None
        return found

    def predicates(self, site: Site, terms: tuple[Term, ...]) -> tuple[Predicate, ...]:
        """The unlinked conjuncts that test a name (``ctx.is_hybrid_ssm``) or a call
        (``is_hip()``), each with the function giving its value: the call itself,
        or the one the name is assigned from in the excerpt or (one function
        only) anywhere in the commit (:attr:`RepoFacts.assigned`)."""
        out = []
        for term in terms:
            if term.cond.op != "atom" or term.parts[0].clause is not None:
                continue
            atom = term.cond
            node = parse_expr(atom.atom)
            if not isinstance(node, (ast.Name, ast.Attribute, ast.Call)):
                continue
            names = guard_names([atom.atom])
            if len(names) != 1:
                continue
            name = names.pop()
            call: str | None = name if isinstance(node, ast.Call) else None
            if call is None:
                here = local_calls(site.excerpt.text, [name])
                calls = {
                    callee(a.value)
                    for a in self.facts.assigned.get(name, ())
                    if a.may_bind(dotted(node) or name, site.path, site.scope)
                }
                if name in here:
                    call = here[name]
                elif len(calls) == 1:
                    call = calls.pop()
            doc = self.facts.call_docs.get(call) if call else None
            out.append(Predicate(term, name, atom.negated, call, doc))
        return tuple(out)

    def note_quotes(
        self, site: Site, options: list[Option], preds: tuple[Predicate, ...]
    ) -> list[Quote]:
        """Comments in the functions that read or resolve the card's settings,
        above a statement using a name the card's other conditions test (or the
        function it is assigned from), or naming one: those that resolve the
        setting first (:class:`miner.analysis.resolvers.Note`)."""
        names = {n for p in preds for n in p.names()}
        own = site.scope.split(".<locals>.")[-1].rsplit(".", 1)[-1]
        found = []
        for opt in options:
            keys = names - {opt.name}
            if not keys:
                continue
            for note in self.facts.notes.get(opt.name, ()):
                if note.path == site.path and note.function == own:
                    continue
                if path_kind(note.path) is not None:
                    continue  # a test or a script says nothing of the library's reasons
                if not self.config.near(opt, note.path):
                    continue  # another part's setting of the same name
                text = first_sentence(note.text)
                if len(text.split()) < 4:
                    continue
                used = note.uses & keys
                if not used and not any(re.search(rf"\b{re.escape(k)}\b", note.text) for k in keys):
                    continue
                flag = opt.flag or f"{opt.owner}.{opt.name}"
                verb = "resolved" if note.writes else "read"
                about = f"Where {code(flag)} is {verb}, in {code(note.function)}"
                rank = 8 if note.writes else 12
                found.append(
                    Quote(
                        "setting-comment",
                        text,
                        note.path,
                        note.line,
                        about,
                        rank,
                    )
                )
        return sorted(found, key=lambda q: q.rank)[:2]

    def _own_locals(
        self, site: Site, terms: tuple[Term, ...], lines: dict[int, str]
    ) -> tuple[Term, ...]:
        """``terms`` without the links by name alone of the bare names the
        site's function assigns itself before the test (in the excerpt) from
        a value that does not name it: ``quant_config =
        _get_encoder_quant_config(...)`` makes ``quant_config`` a local, not
        the setting ``DiTConfig.quant_config``. A value that names it (``x =
        server_args.x``, ``getattr(args, "x", 1)``, ``int(x)``) keeps the link;
        a key of a dict (``options.get("num_frames")``, a request's field) does
        not (:func:`_names_it`)."""
        start = _def_above(site, lines)
        out = []
        for term in terms:
            below = term.origin.line if term.origin is not None else site.line
            parts = tuple(
                replace(p, clause=None) if self._binds_itself(site, p, lines, start, below) else p
                for p in term.parts
            )
            parts = tuple(
                replace(p, boolean=True) if self._local_bool(site, p, lines, start, below) else p
                for p in parts
            )
            out.append(term if parts == term.parts else replace(term, parts=parts))
        return tuple(out)

    def _without_implied_values(
        self, site: Site, terms: tuple[Term, ...], lines: dict[int, str]
    ) -> tuple[Term, ...]:
        """``terms`` without a test that a local is not one of some literals
        when another test says it is one of others (:func:`_value_test`),
        the local bound nowhere between the first of them and the raise
        (:meth:`_unchanged`): under ``elif model_arch in
        ["GptOssForCausalLM"]``, the earlier arms' ``model_arch not in
        ["DeepseekV3ForCausalLM", ...]`` say nothing (the settings' own tests:
        :func:`_without_implied`)."""
        found = [None if t.linked else _term_value_test(t) for t in terms]
        allowed: dict[str, list[tuple[frozenset[Any], int]]] = {}
        for term, test in zip(terms, found, strict=True):
            if test is not None and test[2] and term.origin is not None:
                allowed.setdefault(test[0], []).append((test[1], term.origin.line))
        kept = []
        for term, test in zip(terms, found, strict=True):
            if test is not None and not test[2] and term.origin is not None:
                left, ruled = test[0], test[1]
                implied = [line for values, line in allowed.get(left, ()) if not values & ruled]
                first = min(term.origin.line, *implied) if implied else 0
                if implied and self._unchanged(site, _bare_names(left), first, lines):
                    continue
            kept.append(term)
        return tuple(kept)

    def _through_locals(
        self, site: Site, terms: tuple[Term, ...], lines: dict[int, str]
    ) -> tuple[Term, ...]:
        """``terms`` with each atom that compares one bare local with literals
        linked to the setting the local holds: the function assigns it the
        setting's value itself, above the test and not in a branch the test
        is reached without (:meth:`assignment_above`), and the value is that
        one read exactly (``name = get_exec().kernel.grammar_backend``, then
        ``swa_page_size != 256`` in ``_build_dsv4_kv_pool``: a test of
        ``--page-size``). The clause keeps the atom's own text. A local that
        more than one test against literals compares (once the tests other
        tests imply are left out: :meth:`_without_implied_values`) stays
        unlinked: the sections tell one test of a setting per conjunct
        (``name != "outlines"``, ``name != "xgrammar"`` ... would each read
        "is not ... (so it is ...)")."""
        start = _def_above(site, lines)
        tested = Counter(
            found[0] for t in terms for p in t.parts if (found := _value_test(p.atom.atom))
        )
        out = []
        for term in terms:
            below = term.origin.line if term.origin is not None else site.line
            parts = tuple(
                self._through_local(site, p, lines, start, below)
                if all(tested[n] == 1 for n in _names(p.atom.atom))
                else p
                for p in term.parts
            )
            out.append(term if parts == term.parts else replace(term, parts=parts))
        return tuple(out)

    def _through_local(
        self, site: Site, part: Part, lines: dict[int, str], start: int, below: int
    ) -> Part:
        if part.clause is not None or part.atom.kind != "expr":
            return part
        found = _value_test(part.atom.atom)
        if found is None or not found[0].isidentifier():
            return part
        name = found[0]
        value = self.assignment_above(site, name, lines, start, below)
        if value is None or not value.value:
            return part
        reads = self.linker.reads_in(value.value, site.path, site.line)
        if len(reads) != 1 or not reads[0].exact or reads[0].text != value.value:
            return part
        read = reads[0]
        shown = re.sub(rf"^{re.escape(name)}\b", lambda _: value.value, part.atom.shown)
        clause = self.link_atom(replace(part.atom, shown=shown), part.origin, site.path, site.line)
        if clause is None or clause.read is None or clause.read.target != read.target:
            return part
        evidence = f"`{name}` is set as `{value.value}` at line {value.line}: " + (
            clause.read.evidence
        )
        linked = Clause(
            replace(clause.condition, text=part.atom.shown),
            replace(clause.read, evidence=evidence),
        )
        return replace(part, clause=linked, strong=True)

    def _local_bool(
        self, site: Site, part: Part, lines: dict[int, str], start: int, below: int
    ) -> bool:
        """Whether the part tests a bare name its function last assigns a
        ``bool`` above the test (``scaling_active = a is not None and ...``)."""
        if part.clause is not None and part.clause.read is not None:
            return False
        node = parse_expr(part.atom.atom)
        if not isinstance(node, ast.Name) or node.id in self.facts.booleans:
            return False
        found = self.assignment_above(site, node.id, lines, start, below)
        return found is not None and found.boolean

    def assignment_above(
        self, site: Site, name: str, lines: dict[int, str], start: int, below: int
    ) -> LocalValue | None:
        """The nearest ``name = value`` above line ``below`` in the site's
        function: in the excerpt ``lines`` (after ``start``), or, when the
        excerpt shows neither the ``def`` nor another binding of the bare
        ``name`` above ``below``, the function's own nearest binding above
        the excerpt if it is a plain assignment (:attr:`RepoFacts.local_values`).
        None when neither is found."""
        found = _nearest_assignment(name, lines, start, below)
        if found is not None:
            line, text, node = found
            if not _encloses(lines, line, below):
                return None  # in a branch the test may be reached without
            return LocalValue(start, line, text, boolean_expr(node))
        first = site.excerpt.start_line
        if "." in name or start >= first or _binds_locally(name, lines, below):
            return None
        values = self.facts.local_values.get((site.path, site.scope, name), ())
        own = max((v.start for v in values if v.start <= site.line), default=-1)
        above = [v for v in values if v.start == own and v.line < min(first, below)]
        if not above or not above[-1].value or 0 < above[-1].end <= below:
            return None
        return above[-1]

    def _assignment(
        self,
        site: Site,
        name: str,
        lines: dict[int, str],
        start: int,
        below: int,
        members: bool = False,
    ) -> tuple[int, str] | None:
        """:meth:`assignment_above` as (line, value) when the value is worth
        showing (:func:`_says_little`); with ``members`` (the name is what
        an ``in`` / ``not in`` test looks into), a literal collection is:
        it lists the values the test allows."""
        found = self.assignment_above(site, name, lines, start, below)
        if found is None:
            return None
        if _says_little(found.value) and not (members and _literal_collection(found.value)):
            return None
        return found.line, found.value

    def _binds_itself(
        self, site: Site, part: Part, lines: dict[int, str], start: int, below: int
    ) -> bool:
        read = part.clause.read if part.clause is not None else None
        if read is None or read.exact or part.strong:
            return False
        names = _names(part.atom.atom)
        if len(names) != 1 or "." in names[0]:
            return False
        found = self._assignment(site, names[0], lines, start, below)
        return found is not None and not _names_it(found[1], names[0])

    def excluded(
        self, site: Site, terms: tuple[Term, ...], lines: dict[int, str]
    ) -> Excluded | None:
        """The first expression whose conjuncts allow no value: each compares
        it with ``==``, ``!=``, ``in`` or ``not in`` to literals
        (:func:`_value_test`), the values some allow are all excluded by the
        others, and the expression tests only locals of the function that
        nothing binds between the first of those tests and the raise
        (:meth:`_unchanged`): a call in between cannot change them. None
        when there is no such expression."""
        allowed: dict[str, frozenset[Any]] = {}
        ruled: dict[str, set[Any]] = {}
        used: dict[str, list[Term]] = {}
        for term in terms:
            found = _term_value_test(term)
            if found is None:
                continue
            left, values, within = found
            used.setdefault(left, []).append(term)
            if within:
                allowed[left] = allowed[left] & values if left in allowed else values
            else:
                ruled.setdefault(left, set()).update(values)
        for left, allow in allowed.items():
            tests = used[left]
            if len(tests) > 1 and not allow - ruled.get(left, set()):
                first = min(t.origin.line for t in tests if t.origin is not None)
                excluded = Excluded(left, tuple(tests))
                if self._unchanged(site, excluded.names, first, lines):
                    return excluded
        return None

    def _unchanged(self, site: Site, names: list[str], first: int, lines: dict[int, str]) -> bool:
        """Whether every one of ``names`` is a local of the site's function
        (bound in it: :attr:`RepoFacts.local_values` above the excerpt, or
        the excerpt below the ``def``; a module's ``ARCH = None`` above it
        makes no local) that no line from ``first`` to the raise binds."""
        if not names:
            return False
        start = _def_above(site, lines)  # a binding above the ``def`` (its parameters on it)
        for name in names:
            values = self.facts.local_values.get((site.path, site.scope, name), ())
            if any(first <= v.line <= site.line for v in values):
                return False
            pattern = binding_line(name)
            shown = [
                n
                for n, text in lines.items()
                if start <= n < site.line
                and name in text
                and pattern.search(text.encode("utf-8", "replace"))
            ]
            if any(n >= first for n in shown):
                return False
            if not values and not shown:
                return False  # not known to be a local: a call may change it
        return True

    def sources(
        self, site: Site, terms: tuple[Term, ...], lines: dict[int, str]
    ) -> tuple[Source, ...]:
        """Where the names the unlinked conjuncts test are assigned, between the
        enclosing ``def`` and the test (a name assigned from another local
        is followed one step); not in the excerpt, a predicate call assigned
        to it elsewhere (:attr:`RepoFacts.assigned`) that may bind it. A name
        the function binds itself (:attr:`RepoFacts.local_binds`) is a local:
        only the function's own assignment nearest above the test counts."""
        start = _def_above(site, lines)
        out: list[Source] = []
        seen: set[str] = set()
        for term in terms:
            if any(p.strong for p in term.parts) or self._raises_at(site, term.origin, lines):
                continue
            below = term.origin.line if term.origin is not None else site.line
            for atom in term.cond.atoms():
                looked_into = _looked_into(atom.atom)
                for name in _names(atom.atom):
                    if name in seen or len(out) >= MAX_SOURCES:
                        continue
                    seen.add(name)
                    found = self._assignment(
                        site, name, lines, start, below, members=name in looked_into
                    )
                    if found is None:
                        elsewhere = [
                            a
                            for a in self.facts.assigned.get(name.rsplit(".", 1)[-1], ())
                            if a.may_bind(name, site.path, site.scope)
                        ]
                        own = self.facts.local_binds.get((site.path, site.scope, name))
                        if own:
                            # The function binds the name itself: a local, which
                            # no other function's assignment gives its value.
                            # Its own assignment nearest above the test, if that
                            # is the one known.
                            nearest = max((n for n in own if n < below), default=0)
                            elsewhere = [
                                a
                                for a in elsewhere
                                if a.path == site.path
                                and a.scope == site.scope
                                and a.line == nearest
                            ]
                        if elsewhere:
                            first = elsewhere[0]
                            here = first.path == site.path and first.scope == site.scope
                            path = "" if here else first.path  # the function, above the excerpt
                            out.append(Source(name, first.line, first.value, None, path))
                        elif not own and (calls := self.argument_calls(site, name)):
                            first_call = calls[0]
                            out.append(
                                Source(
                                    name,
                                    first_call.line,
                                    first_call.text,
                                    None,
                                    first_call.path,
                                    calls=calls,
                                )
                            )
                        continue
                    line, value = found
                    reads = self._setting_reads(value, site)
                    read = reads[0] if reads else None
                    out.append(Source(name, line, value, read, reads=reads))
                    if read is None and _names(value) == [value] and value not in seen:
                        seen.add(value)
                        deeper = self._assignment(site, value, lines, start, line)
                        if deeper is not None:
                            line, inner = deeper
                            reads = self._setting_reads(inner, site)
                            read = reads[0] if reads else None
                            out.append(Source(value, line, inner, read, reads=reads))
        return tuple(out)

    def _raises_at(self, site: Site, guard: Guard | None, lines: dict[int, str]) -> bool:
        """Is ``guard`` an early exit whose branch raises, or an earlier
        ``assert`` (its other side is another error, not a way out)?"""
        if guard is not None and guard.kind == "asserted":
            return True
        if guard is not None and guard.kind == "while":
            return (site.path, guard.line) in self.facts.loop_ends
        return self.exit_found(site, guard, lines)[0] == "raise"

    def exit_found(self, site: Site, guard: Guard | None, lines: dict[int, str]) -> Branch:
        """How the branch of an exit of ``site`` leaves (an ``if`` or an
        ``except`` clause, :data:`~miner.analysis.branches.LEAVING_KINDS`), from
        :attr:`RepoFacts.exits`, else read from the excerpt ``lines``;
        :data:`~miner.analysis.branches.NO_BRANCH` when not known."""
        if guard is None or guard.kind not in LEAVING_KINDS or not guard.negated:
            return NO_BRANCH
        return self.facts.exits.get((site.path, guard.line)) or _excerpt_exit(lines, guard.line)

    def _setting_read(self, value: str, site: Site) -> Read | None:
        """The first of :meth:`_setting_reads`, if any."""
        reads = self._setting_reads(value, site)
        return reads[0] if reads else None

    def _setting_reads(self, value: str, site: Site) -> tuple[Read, ...]:
        """The settings the assigned ``value`` reads for sure, outermost
        first, one read per setting. A read by name alone of an option that a
        function's parser defines (a tool's ``parse_args``, not a
        configuration class) counts only in that tool's file:
        ``model_config.hf_config`` in arg_groups is not ``--model-config`` of
        prepare_deepseek_pack.py."""
        found: dict[str, Read] = {}
        for read in self.linker.reads_in(value, site.path, site.line):
            if read.kind == "derived" or not reads_setting(read, site, self.classes):
                continue
            opt = (
                self.config.option_in(read.target, read.option_path)
                if read.kind == "option"
                else None
            )
            if (
                opt is not None
                and not read.exact
                and opt.owner not in self.config.classes
                and opt.path != site.path
            ):
                continue
            found.setdefault(read.target, read)
        return tuple(found.values())

    def reads_words(self, src: Source) -> str:
        """The settings ``src``'s value reads, then the other names it tests as
        written, so that the list is whole: ``--elastic-ep-backend``,
        ``--max-ep-size`` and ``cfg.tp_size`` (a name too short to link by
        name alone); past :data:`MAX_OTHER_NAMES` of those, "other values"."""
        reads = [read for read in src.reads or (src.read,) if read]
        items = [self.read_ref(read) for read in reads]
        rest = [
            name
            for name in _names(src.value)
            if not any(re.search(rf"(?<![\w.]){re.escape(name)}(?!\w)", r.text) for r in reads)
        ]
        if len(rest) > MAX_OTHER_NAMES:
            return joined([*items, "other values"])
        return joined([*items, *(code(name) for name in rest)])

    def _term(self, cond: Condition, reach: Reach, site: Site) -> Term:
        whole = reach.origin_of(cond) if cond.op != "atom" else None
        parts = []
        for atom in cond.atoms():
            origin = whole or reach.origin(atom)
            clause = self.link_atom(atom, origin, site.path, site.line)
            strong = (
                clause is not None
                and clause.read is not None
                and reads_setting(clause.read, site, self.classes)
            )
            parts.append(Part(atom, clause, origin, strong))
        return Term(cond, tuple(parts))

    def _flag_option(self, name: str, path: str) -> Option | None:
        """The option a message of the file ``path`` means by the flag
        ``name`` (:meth:`~miner.analysis.remedy.Remedies.option`)."""
        if not name.startswith("--"):
            return None
        return self.remedy.option(name, path)

    def _defined_at(self, name: str) -> str:
        """``path:line`` of each parser defining the flag ``name`` (up to
        three, and how many more), for a flag :meth:`_flag_option` cannot
        tell apart; empty for an unknown flag."""
        places = sorted({f"`{o.path}:{o.line}`" for o in self.remedy.flags.get(name, ())})
        if len(places) > 3:
            places = [*places[:3], f"{len(places) - 3} more"]
        return ", ".join(places)

    def options_of(self, clause: Clause | None) -> list[Option]:
        """The options a linked clause reads (through a derived setting too)."""
        if clause is None or clause.read is None or clause.read.kind == "env":
            return []
        if clause.read.kind == "option":
            opt = self.config.option_in(clause.read.target, clause.read.option_path)
            return [opt] if opt is not None else []
        found = self.expanded(clause.read, clause.condition)
        if found is None:
            return []
        return [o for c in found[0] if (o := self.config.option(c.name)) is not None]

    # ------------------------------------------------------------ settings in words

    def part_state(self, part: Part) -> str:
        """The state of the setting an atom reads, in words (``--x is on``),
        or empty for an atom that reads none, or reads an option not
        exactly."""
        clause = part.clause
        if clause is None or clause.read is None:
            return ""
        read = clause.read
        if read.kind == "env":
            return self.env_state(read.target, clause.condition)
        if read.kind == "option":
            opt = self.config.option_in(read.target, read.option_path)
            if opt is not None and read.exact:
                return self.option_state(opt, clause.condition)
            return ""
        found = self.expanded(read, clause.condition)
        if not found:
            return ""
        joiner = " and " if found[1] == "all" else " or "
        return joiner.join(self.setting_state(c.name, c) for c in found[0])

    def option_ref(self, opt: Option, inner: bool = False) -> str:
        """``the flag `--x` `` or ``the setting `S.x` (no command-line
        flag)``; ``inner`` (inside parentheses already): ``..., which has no
        command-line flag``."""
        if opt.flag:
            return f"the flag {code(opt.flag)}"
        name = code(opt.owner + "." + opt.name)
        if inner:
            return f"the setting {name}, which has no command-line flag"
        return f"the setting {name} (no command-line flag)"

    def option_state(self, opt: Option, cond: Setting) -> str:
        """``--x`` is ``v`` and the like (what makes the error happen)."""
        ref = code(opt.flag) if opt.flag else code(f"{opt.owner}.{opt.name}")
        choices = opt.choices or ()
        op, values = cond.op, cond.values
        if op == "truthy":
            return f"{ref} is on" if opt.is_bool else f"{ref} is set (a non-empty value)"
        if op == "falsy":
            if _on_by_default(opt):
                return f"{ref} is set to false (its default is `True`)"
            return f"{ref} is off (not given)" if opt.is_bool else f"{ref} is unset or empty"
        unset, shown_values = _none_left_out(opt, values)
        if op in ("==", "in"):
            if unset and shown_values:
                text = (
                    f"{ref} is "
                    + (
                        values_list(shown_values)
                        if len(shown_values) == 1
                        else f"one of {values_list(shown_values)}"
                    )
                    + (" (or not given)" if opt.flag else " (or `None`)")
                )
            else:
                text = (
                    f"{ref} is {values_list(values)}"
                    if len(values) == 1
                    else (f"{ref} is one of {values_list(values)}")
                )
            bad = [v for v in shown_values if choices and v not in choices]
            if bad:
                text += f", which is not among its choices {values_list(choices)}"
            return text
        if op in ("!=", "not in"):
            others = [c for c in choices if c not in values]
            if unset and shown_values:
                text = (
                    f"{ref} is given and is not {values_list(shown_values)}"
                    if opt.flag
                    else f"{ref} is not `None` nor {values_list(shown_values)}"
                )
            else:
                text = f"{ref} is not {values_list(values)}"
            if others and len(others) <= MAX_VALUES:
                # a flag that defaults to ``None`` also differs when left out
                left = opt.flag and _defaults_to_none(opt) and "None" not in values
                text += f" (so it is {values_list(others)}{' or not given' if left else ''})"
            return text
        if op == "is None":
            stored = self.resolved_besides(opt, ["None"])
            if stored:
                # not given is not enough: start-up may give it a value
                value, path, line = stored[0]
                more = f" and {plural(len(stored) - 1, 'more place')}" if len(stored) > 1 else ""
                if opt.default not in ("None", None):
                    given = "set to `None`"
                else:
                    given = "not given" if opt.flag else "its default"
                return (
                    f"{ref} is `None` ({given}, and not set by the argument handling, which "
                    f"stores {code(value)} in some cases: `{path}:{line}`{more})"
                )
            if opt.default in ("None", None):
                # a field without a flag is not given on a command line: code sets it
                if not opt.flag:
                    return f"{ref} is `None` (its default)"
                return f"{ref} is not given (its default is `None`)"
            return f"{ref} is `None`"
        if op == "is not None":
            return f"{ref} is given" if opt.flag else f"{ref} is not `None`"
        return f"{_compare_text(cond)}, where {code(cond.name)} is {ref}"

    def env_state(self, name: str, cond: Setting) -> str:
        var = self.config.env_var(name)
        default = (
            f" (default {code(shown(var.default))})"
            if var and var.default not in (None, "")
            else ""
        )
        ref = f"the environment variable {code(name)}"
        op = cond.op
        if op == "truthy":
            if var is not None and var.kind == "bool":
                return f"{ref} is set to a true value{default}"
            return f"{ref} is set to a non-empty value{default}"
        if op == "falsy":
            return f"{ref} is unset or false{default}"
        if op in ("==", "in"):
            return f"{ref} is {values_list(cond.values)}"
        if op in ("!=", "not in"):
            return f"{ref} is not {values_list(cond.values)}{default}"
        if op == "is None":
            return f"{ref} is not set"
        if op == "is not None":
            return f"{ref} is set"
        return f"{_compare_text(cond)}, where {code(cond.name)} reads {ref}"

    def expanded(self, read: Read, cond: Setting) -> tuple[list[Setting], str] | None:
        """A derived read's conditions over settings (negated when the guard
        needs it false), with ``all`` / ``any``."""
        derived = (
            self.facts.predicates.get(read.target)
            if read.exact and read.target in (self.facts.predicates)
            else self.config.derived_setting(read.target)
        )
        if derived is None:
            derived = self.facts.predicates.get(read.target)
        if derived is None or cond.op not in ("truthy", "falsy"):
            return None
        conds = list(derived.conditions)
        mode = derived.mode
        if cond.op == "falsy":
            conds = [c.negated() for c in conds]
            mode = "any" if mode == "all" else "all"
        return conds, mode

    def setting_state(self, name: str, cond: Setting) -> str:
        opt = self.config.option(name)
        if opt is None:
            return _compare_text(cond)
        return self.option_state(opt, cond)

    def clause_text(self, clause: Clause, plain: str | None = None, strong: bool = False) -> str:
        """A linked atom in the settings' terms; ``plain`` is the atom in plain
        words (for a link by name only, unless ``strong``)."""
        cond, read = clause.condition, clause.read
        assert read is not None
        if read.kind == "env":
            return self.env_state(read.target, cond)
        if read.kind == "option":
            opt = self.config.option_in(read.target, read.option_path)
            assert opt is not None
            if read.exact or strong:
                return self.option_state(opt, cond)
            said = plain or code(read.text)
            # an aside in parentheses: after ";" it would read as another
            # item of an "any of" list (a way out, in Solutions)
            aside = f"by its name, {code(read.text)} is {self.option_ref(opt, True)}"
            if said.endswith(")"):  # "is falsy (`None`, empty or zero; by its name, ...)"
                return f"{said[:-1]}; {aside})"
            return f"{said} ({aside})"
        found = self.expanded(read, cond)
        truth = "true" if cond.op == "truthy" else "false"
        if found is None:
            return f"{code(read.text)} is {truth}"
        conds, mode = found
        joiner = " and " if mode == "all" else " or "
        inner = joiner.join(self.setting_state(c.name, c) for c in conds)
        derived = self.config.derived_setting(read.target) or self.facts.predicates.get(read.target)
        label = (
            f"{code(derived.owner + '.' + derived.name + '()')}"
            if derived is not None and derived.owner
            else code(read.target + "()")
        )
        if read.exact or strong:
            return (
                f"{code(read.text)} is {truth}: the derived setting {label} is {truth} when {inner}"
            )
        return (
            f"{code(read.text)} is {truth}; it carries the name of the derived setting {label}, "
            f"which is {truth} when {inner}"
        )

    def with_phrase(self, clause: Clause, strong: bool = False) -> str | None:
        """A setting read for sure as the user sets it (``--x v``, ``X=1``), or None."""
        read, cond = clause.read, clause.condition
        if read is None or not (read.exact or strong):
            return None
        if read.kind == "env":
            var = self.config.env_var(read.target)
            name = read.target
            if cond.op == "truthy":
                return code(f"{name}=1") if var and var.kind == "bool" else f"{code(name)} set"
            if cond.op in ("falsy", "is None"):
                return f"{code(name)} unset"
            if cond.op == "is not None":
                return f"{code(name)} set"
            if cond.op in ("==",) and cond.values:
                return code(f"{name}={cond.values[0]}")
            return None
        if read.kind != "option":
            return None
        opt = self.config.option_in(read.target, read.option_path)
        if opt is None or not opt.flag:
            return None
        flag, values = opt.flag, cond.values
        unset, given = _none_left_out(opt, values)
        if cond.op == "==" and values:
            return code(f"{flag} {values[0]}")
        if cond.op == "in" and unset and given:
            return f"{code(flag)} set to {values_list(given)} (or not given)"
        if cond.op == "in" and values:
            return f"{code(flag)} set to {values_list(values)}"
        if cond.op == "truthy":
            return code(flag) if opt.is_bool else f"{code(flag)} set"
        if cond.op == "falsy":
            if _on_by_default(opt):
                return f"{code(flag)} set to false"
            return f"without {code(flag)}" if opt.is_bool else f"{code(flag)} unset or empty"
        if cond.op == "is None":
            return f"{code(flag)} not given"
        if cond.op == "is not None":
            return f"{code(flag)} given"
        if cond.op in ("!=", "not in") and values:
            others = [c for c in (opt.choices or ()) if c not in values]
            if others and len(others) <= MAX_VALUES:
                left = _defaults_to_none(opt) and "None" not in values
                return f"{code(flag)} set to {values_list(others)}" + (
                    " or not given" if left else ""
                )
            if unset and given:
                return f"{code(flag)} given and not {values_list(given)}"
            return f"{code(flag)} set to another value than {values_list(values)}"
        return None

    # ------------------------------------------------------------ conditions in words

    def part_words(self, part: Part, brief: bool = False) -> str:
        """The atom in the settings' terms when linked; ``brief``: a link by
        name only stays in plain words (the link is said in its own sentence)."""
        booleans = self.facts.booleans
        if part.boolean:
            booleans = booleans | {part.atom.atom}
        plain = atom_words(part.atom, booleans)
        read = part.clause.read if part.clause is not None else None
        if part.clause is None or read is None or (brief and not part.strong and not read.exact):
            return plain
        return self.clause_text(part.clause, plain, part.strong)

    def cond_words(
        self, cond: Condition, parts: dict[tuple[str, bool], Part], brief: bool = False
    ) -> str:
        """A condition in words: an ``or`` as "any of: a; b", an ``and`` inside
        it as "all of a, b"."""
        if cond.op == "atom":
            part = parts.get((cond.atom, cond.negated))
            return self.part_words(part, brief) if part else atom_words(cond, self.facts.booleans)
        if cond.op == "true":
            return "always"
        if cond.op == "false":
            return "never"
        items = [self.cond_words(a, parts, brief) for a in cond.args]
        if cond.op == "or":
            return "any of: " + "; ".join(items)
        return "all of " + joined(items)

    def term_words(self, term: Term, brief: bool = False) -> str:
        parts = {(p.atom.atom, p.atom.negated): p for p in term.parts}
        return self.cond_words(term.cond, parts, brief)

    def negated_words(self, term: Term) -> str:
        """What makes ``term`` false, in words (negation pushed inward)."""
        parts: dict[tuple[str, bool], Part] = {}
        for p in term.parts:
            flipped = negated(p.atom)
            clause = p.clause
            if clause is not None:
                clause = Clause(clause.condition.negated(), clause.read)
            parts[(flipped.atom, flipped.negated)] = replace(p, atom=flipped, clause=clause)
        return self.cond_words(negated(term.cond), parts)

    def raises(self, r: Reading, guard: Guard | None) -> bool:
        """:meth:`_raises_at` for the site of ``r``."""
        return self._raises_at(r.site, guard, r.lines)

    def handler_of(self, r: Reading, name: str, path: str, line: int) -> tuple[str, int] | None:
        """The handler that catches the error of ``r`` raised through the call
        of ``name`` at ``path:line`` and raises nothing itself
        (:attr:`~miner.analysis.paths.CallReach.caught`, innermost ``try``
        first): one whose types name the error's class, a built-in class it
        derives from (``Exception``), or a bare ``except``; None when no
        handler around the call is known to catch it."""
        reach = self.facts.call_reach.get((name, path, line))
        if reach is None:
            return None
        for types, at in reach.caught:
            if _catches(types, short(r.error.exception or "")):
                return types, at
        return None

    def uncalled(self, site: Site, name: str) -> str:
        """What runs the function ``name`` of ``site`` that no call names:
        an attribute access for a property, pydantic for its validators,
        else what its decorators may register
        (:attr:`RepoFacts.decorators`, wrappers such as ``@property`` left
        out), else a registry, a callback, an override or users' code."""
        decorators = self.facts.decorators.get((site.path, site.scope), ())
        found = [d for d in decorators if d.name not in WRAPPERS]
        owner = site.scope.split(".<locals>.")[-1].split(".")
        cls = owner[-2] if len(owner) > 1 else None
        for deco in decorators:
            last = deco.name.rsplit(".", 1)[-1]
            if cls and last in ("property", "cached_property", "setter", "deleter"):
                does = {"setter": "assigns", "deleter": "deletes"}.get(last, "reads")
                return (
                    f"{code(name)} is a property of {code(cls)} ({code(deco.text)}, line "
                    f"{deco.line}): it runs whenever code {does} `.{name}` of one, which no "
                    "search for a call by name finds."
                )
        for deco in found:
            kind = {
                "model_validator": "model validator",
                "root_validator": "model validator",
                "field_validator": "field validator",
                "validator": "field validator",
            }.get(deco.name.rsplit(".", 1)[-1])
            if deco.pydantic and kind and cls:
                return (
                    f"{code(name)} is a pydantic {kind} ({code(deco.text)}, line {deco.line}): "
                    f"pydantic runs it whenever a {code(cls)} is created, on the values it is "
                    "created from; no call names it."
                )
        if found:
            decos = ", ".join(f"{code(d.text)} (line {d.line})" for d in found[:2])
            return (
                f"No call of {code(name)} by name was found in the commit; its decorator "
                f"{decos} may register it (for a route, a registry or a callback), or users' "
                "code calls it."
            )
        return (
            f"No call of {code(name)} by name was found in the commit: it is reached "
            "through a registry, a callback, an override or from users' code."
        )

    def next_check(self, site: Site) -> Site | None:
        """The raise that checks the same value next once ``site``'s own
        ``if`` is false: the next site of the same function, when it is a
        raise with a message in the same blocks whose own ``if`` has that test
        among its early exits and tests a name that test tests
        (:func:`~miner.analysis.resolvers.test_names`): after ``if duration
        <= 0: raise``, the range check of ``duration``; not the check of
        ``top_p`` after that of ``temperature``."""
        if not site.guards or not _own_if(site.guards[-1], site):
            return None
        later = [n for n in self._lines.get((site.path, site.scope), ()) if n > site.line]
        found = [
            other
            for other in self._after.get((site.path, site.guards[-1].line), ())
            if other.line == min(later, default=-1)
            and other.scope == site.scope
            and other.guards[:-1] == site.guards[:-1]
            and other.message
            and _values_tested(other.guards[-1].test) & _values_tested(site.guards[-1].test)
        ]
        return found[0] if len(found) == 1 else None

    def later_checks(self, r: Reading) -> tuple[tuple[tuple[int, str], ...], bool]:
        """The checks after the site of ``r`` that every run passing its own
        check meets next, and what each needs, in the settings' words: (line,
        words) in line order. A later raise or ``assert`` of the same function
        counts when it is in the same block (the same enclosing guards), its
        early exits include this site's own check, every early exit between
        the two raises (another check: no ``return`` or ``continue`` makes it
        conditional), and its own check is one setting's state
        (:meth:`part_state`). ``handle_elastic_ep``: once
        ``--enable-dp-attention`` is passed, ``--enable-dp-lm-head`` is needed
        at line 491, ``--attn-cp-size 1`` at 495 and ``--moe-dp-size 1`` at 499.
        The flag is true when later checks of the block that test other
        values were left out."""
        site = r.site
        own = site.guards[-1] if site.guards else None
        if own is None or not (own.kind == "assert" or _own_if(own, site)):
            return (), False
        found: list[tuple[int, str]] = []
        others = False
        for other in self._sites.get((site.path, site.scope), ()):
            if other.line <= site.line or not other.guards:
                continue
            mine = other.guards[-1]
            if other.guards[:-1] != site.guards[:-1]:
                continue
            if not (mine.kind == "assert" or _own_if(mine, other)):
                continue
            if isinstance(parse_expr(mine.test), ast.BoolOp):
                # its simplified term may leave out the part that this
                # site's path already rules out: only a test of one setting
                others = True
                continue
            other = self.with_nested_exits(other)
            if not any(e.line == own.line for e in other.exits):
                continue  # not reached only after this site's check passes
            if any(
                site.line < e.line < other.line and not self._raises_at(other, e, r.lines)
                for e in other.exits
            ):
                continue  # a way around the later check
            ours = [t for t in self.sibling_terms(other) if t.origin == mine]
            if len(ours) != 1 or ours[0].cond.op != "atom" or not self.part_state(ours[0].parts[0]):
                others = True
                continue
            found.append((other.line, self.negated_words(ours[0])))
        return tuple(sorted(dict(found).items())), others

    def leads_elsewhere(self, r: Reading, term: Term) -> Guard | None:
        """The earlier exit of the site of ``r`` that raises another error
        once ``term`` is false while the other conjuncts still hold (see
        :func:`~miner.analysis.condition.implied`), or None: a fix of ``term``
        alone leads into that error. ``--ssl-certfile`` left unset while
        ``--ssl-keyfile`` is set raises "--ssl-keyfile requires
        --ssl-certfile" before the check of the certificate's file."""
        own = {a.atom for a in term.cond.atoms()}
        for exit in r.site.exits:
            if exit.kind != "exit" or not self.raises(r, exit):
                continue
            taken = _taken(exit)
            if not own & {a.atom for a in taken.atoms()}:
                continue  # the term does not change what the exit tests
            # what the exit itself requires is what the fix would break
            others = [t.cond for t in r.terms if t is not term and t.origin != exit]
            if implied(Condition.FALSE, others, [term.cond]):
                continue  # no values meet the rest with the term false
            if implied(taken, others, [term.cond]):
                return exit
        return None

    def _named_value(self, clause: Clause) -> bool:
        """Whether making ``clause`` false means giving a setting without
        choices one value named in the code (``x != "hunyuan"``, ``x not in
        (...)``): a name (of a parser, a model) rather than a mode."""
        if clause.condition.op not in ("!=", "not in"):
            return False
        opts = self.options_of(clause)
        return bool(opts) and all(not o.choices for o in opts)

    def unrelated_switch(self, clause: Clause, r: Reading) -> bool:
        """Whether the fix of ``clause`` would turn on a switch, off by
        default, that the error's message does not name nor speak of: the
        check skips when that feature runs, and turning a feature on to skip
        a check is no fix (``if not self.enable_hisparse and not
        deferred_pending`` before SGLang's "pool memory leak detected";
        ``--skip-tokenizer-init``, off on every call of
        ``create_grammar_backend``, for "Invalid grammar backend"). A
        message that names the flag or the feature's words ("dp attention
        must be enabled" for ``--enable-dp-attention``) keeps it, and so
        does a help that offers the switch instead of the error
        (``--allow-auto-truncate``: "Allow automatically truncating requests
        that exceed the maximum input length instead of returning an
        error.")."""
        read, cond = clause.read, clause.condition
        if read is None or read.kind != "option" or cond.op != "falsy":
            return False
        opt = self.config.option_in(read.target, read.option_path)
        if opt is None or not opt.is_bool or opt.default not in (None, "None", "False"):
            return False
        if opt.name.startswith(("disable_", "no_")):
            return False  # it turns a feature off: the usual way around a check
        if opt.help and _INSTEAD_OF_ERROR.search(opt.help):
            return False  # the switch is the documented way around the error
        words = message_text(r.error).lower().replace("-", " ").replace("_", " ")
        if any(f.lower().lstrip("-").replace("-", " ") in words for f in opt.flags):
            return False
        feature = re.sub(r"^(enable|use|with)_", "", opt.name).replace("_", " ")
        return feature not in words

    def goes_around(self, r: Reading, term: Term) -> bool:
        """Whether, on a card of bad input, ``term`` comes from an early exit
        that returns (or leaves the loop) before the check: making it false
        skips the check instead of fixing the input."""
        if r.audience != Audience.USER_INPUT.value or term.origin is None:
            return False
        return self.exit_found(r.site, term.origin, r.lines)[0] in ("return", "continue", "break")

    def way_out(self, r: Reading, term: Term) -> bool:
        """Whether making ``term`` false avoids this error without raising
        another one first: its origin is not an exit that raises
        (:meth:`raises`), and no earlier exit then fires
        (:meth:`leads_elsewhere`). Computed once per term of the reading
        being written."""
        if self._ways_of is not r:
            self._ways.clear()
            self._ways_of = r
        if term not in self._ways:
            self._ways[term] = (
                not self.raises(r, term.origin)
                and not _branch_raises(r.lines, term.origin)
                and self.leads_elsewhere(r, term) is None
            )
        return self._ways[term]

    def module_value_note(self, term: Term, r: Reading) -> str:
        """``; `x` is set at module level as `v` (line N)`` for each bare name
        the conjunct tests that the module assigns once
        (:attr:`RepoFacts.module_values`) and the site's function does not
        bind (no assignment, parameter or loop target of it in the excerpt);
        empty otherwise. A failed import is said elsewhere (:meth:`import_sentences`)."""
        if not self.facts.module_values or any(t is term for t, _ in r.failed_imports):
            return ""
        notes = []
        for atom in term.cond.atoms():
            node = parse_expr(atom.atom)
            bare = [n.id for n in ast.walk(node) if isinstance(n, ast.Name)] if node else []
            for name in dict.fromkeys(bare):
                found = self.facts.module_values.get((r.site.path, name))
                if found is None or _binds_locally(name, r.lines, r.site.line):
                    continue
                line, value = found
                note = f"{code(name)} is set at module level as {code(value)} (line {line})"
                if note not in notes:
                    notes.append(note)
        return "".join(f"; {n}" for n in notes)

    def origin_note(self, guard: Guard | None, r: Reading) -> str:
        """Where a conjunct comes from: `` (line 12)``, or the early exit it
        gets past (``: the code returns early at line 957 otherwise (...)``)."""
        if guard is None:
            return ""
        n = guard.line
        if guard.kind == "exit":
            if not guard.negated:
                return f": every other branch of the `if` chain ending at line {n} leaves"
            branch = self.exit_found(r.site, guard, r.lines)
            verb, stmt, at = branch.kind, branch.one, branch.at
            does = {
                "return": "returns early",
                "raise": "raises another error",
                "continue": "skips to the next item",
                "break": "leaves the loop",
            }.get(verb, "leaves early")
            if branch.reraises:
                does = "raises the exception being handled again"
            elif verb == "raise" and branch.reraised:
                again = _lines_words(branch.reraised)
                does = f"raises the exception being handled again at {again} or another error"
            if not at:
                return f": the code {does} in the `if` at line {n} otherwise"
            if not stmt:
                return f": the code {does} at line {at} otherwise"
            return f": the code {does} at line {at} otherwise ({code(stmt)})"
        if guard.kind == "asserted":
            return f": asserted at line {n}"
        if guard.kind == "exit-while":
            return f": after the loop at line {n} ends"
        if guard.kind == "while" and (end := self.facts.loop_ends.get((r.site.path, n))):
            return f" (line {n}): when the loop ends, the code raises another error at line {end}"
        if guard.kind == "exit-case":
            return f": past the `case` at line {n}"
        if guard.kind == "exit-except":
            branch = self.exit_found(r.site, guard, r.lines)
            if branch.kind != "raise" or not branch.at:
                return ""
            if branch.reraises:
                return f": that handler raises the caught exception again at line {branch.at}"
            if branch.reraised:
                again = _lines_words(branch.reraised)
                return (
                    f": that handler raises the caught exception again at {again} "
                    f"or another error at line {branch.at}"
                )
            return f": that handler raises another error at line {branch.at}"
        if guard.kind == "assert":
            return f": the assertion at line {n} fails"
        if guard.kind in ("except", "except*"):
            return ""
        return f" (line {n})"

    def where(self, site: Site) -> str:
        scope = site.scope
        if scope == "<module>":
            return f"while {code(_module_of(site.path))} is imported"
        if scope.endswith(".__init__"):
            return f"when {code(scope[: -len('.__init__')])} is constructed"
        return f"in {code(scope)}"

    # ------------------------------------------------------------ When it happens

    def trigger(self, r: Reading) -> str:
        site = r.site
        head = f"Raised at `{site.path}:{site.line}` {self.where(site)}"
        lines: list[str] = []
        has_guards = bool(site.exits) or any(g.kind not in _NOT_CONDITIONS for g in site.guards)
        if not r.terms and not r.dead:
            if has_guards:
                around = ", ".join(
                    f"{code(g.describe())} at line {g.line}"
                    for g in (*site.guards, *site.exits)
                    if g.kind not in _NOT_CONDITIONS
                )
                lines.append(
                    f"{head} as soon as the code gets there: the statements around it "
                    f"({around}) put no condition on it."
                )
            else:
                lines.append(f"{head}, every time this line is reached: no condition guards it.")
        else:
            if r.excluded is not None:
                lines.append(
                    f"{head}, when all of these hold as written; no value of "
                    f"{code(r.excluded.expr)} meets them all (see What it means):"
                )
            elif r.contradictory:
                lines.append(
                    f"{head}, when all of these hold as written. Taken together they look "
                    "contradictory; a call in between may change the state, which this "
                    "analysis does not follow:"
                )
            elif len(r.terms) == 1 and not r.dead:
                lines.append(f"{head}, when:")
            else:
                lines.append(f"{head}, when all of these hold:")
            lines.append("")
            for term in r.terms:
                lines.append(
                    f"- {self.term_words(term)}{self.origin_note(term.origin, r)}"
                    + self.module_value_note(term, r)
                )
            for guard in r.dead:
                lines.append(
                    f"- the code gets past line {guard.line}, which leaves on every path "
                    "as mined (a `return` or `raise` before this line)"
                )
        named = self.named_lines(r, "\n".join(lines))
        if named:
            lines += ["", *named]
        reached = callers_trigger(self, r)
        if reached:
            lines += ["", reached]
        others = self.other_sites(r.error)
        if others:
            lines += ["", others]
        return "\n".join(lines)

    def named_lines(self, r: Reading, said: str = "") -> list[str]:
        """The flags and variables the message names that ``said`` (the
        conditions in words) does not name yet, with what they are."""
        out = []
        for name in r.named:
            if code(name) in said:
                continue
            if name.startswith("--"):
                opt = self._flag_option(name, r.site.path)
                if opt is None:
                    if places := self._defined_at(name):
                        out.append(
                            f"The message names {code(name)}, a flag that several parsers "
                            f"define ({places}); which one it means is not known."
                        )
                    continue
                about = self.remedy.describe(opt)
                if opt.deprecated_for:
                    about = f", a deprecated alias of {code(opt.deprecated_for)}"
                elif opt.flag and name != opt.flag:
                    about = f", another spelling of {code(opt.flag)}"
                else:
                    about = f": {about}" if about else ""
                out.append(
                    f"The message names {code(name)}{about} (defined at `{opt.path}:{opt.line}`)."
                )
            else:
                var = self.config.env_var(name)
                if var is None:
                    continue
                default = (
                    f", default {code(shown(var.default))}" if var.default not in (None, "") else ""
                )
                where = f"`{var.path}:{var.line}`" if var.path else "the code"
                verb = "declared" if var.registry else "read"
                out.append(
                    f"The message names the environment variable {code(name)}{default} "
                    f"({verb} at {where})."
                )
        return out

    def other_sites(self, error: Error) -> str | None:
        """The other sites of the message, each with its module and scope and
        the condition that reaches it, in the same words as the primary site's
        (settings named by their flags, negations pushed inward)."""
        others = error.sites[1:]
        if not others:
            return None
        items = []
        for other in others[:MAX_OTHER_SITES]:
            other = self.with_nested_exits(other)
            reach = site_reach(other)
            shown_reach = site_reach(other, simplify=False) if reach.condition.is_false else reach
            terms = tuple(
                dict.fromkeys(
                    self._term(c, shown_reach, other)
                    for c in shown_reach.condition.conjuncts()
                    if c.op not in ("true", "false")
                )
            )
            module = _module_of(other.path)
            head = f"`{other.path}:{other.line}` {self.where(other)}"
            if other.scope != "<module>":
                head += f" (module {code(module)})"
            if not terms:
                items.append(f"- {head}, with no condition on it in its function")
            elif len(terms) == 1:
                items.append(f"- {head}, when {self.term_words(terms[0])}")
            else:
                words = "; ".join(self.term_words(t) for t in terms)
                items.append(f"- {head}, when all of these hold: {words}")
        text = "It is also raised at:\n\n" + "\n".join(items)
        if len(others) > MAX_OTHER_SITES:
            text += f"\n- and at {len(others) - MAX_OTHER_SITES} more places"
        return text

    # ------------------------------------------------------------ What it means

    def situation(self, r: Reading) -> str:
        """The first sentence: what leads here, in the settings' terms."""
        site = r.site
        where = self.where(site)
        settings: list[str] = []
        rest: list[Term] = []
        excluded = _excluded_values(r.terms)
        for term in r.terms:
            if self.raises(r, term.origin):
                continue  # not what leads here: the other side is another error
            phrase = None
            if term.cond.op == "atom" and term.parts[0].clause is not None:
                clause = _with_excluded(term.parts[0].clause, excluded)
                phrase = self.with_phrase(clause, term.parts[0].strong)
            if phrase:
                settings.append(phrase)
            else:
                rest.append(term)
        early = any(t.origin is not None and t.origin.kind == "exit" for t in r.terms)
        rest.sort(key=lambda t: t.cond.op == "or")  # an "any of" list reads last
        shown_rest = [self.predicate_words(r, t) for t in rest[:MAX_SUMMARY]]
        more = len(rest) - MAX_SUMMARY
        if more > 0:
            shown_rest.append(f"{plural(more, 'more condition')} listed under When it happens")
        if r.excluded is not None:
            return f"{sentence(where)[:-1]}, {self.excluded_words(r, r.excluded)}"
        if r.contradictory:
            return sentence(
                f"{sentence(where)[:-1]}, this is raised when all of these hold: "
                f"{joined(shown_rest)}. As written they look contradictory, but a call in "
                "between may change the state (this analysis does not follow such calls)"
            )
        if settings:
            if any(p.startswith("without ") for p in settings):
                # "with without `--x`" never: each item says with or without
                items = [p if p.startswith("without ") else f"with {p}" for p in settings]
                text = f"You get this {joined(items)}"
            else:
                text = f"You get this with {joined(settings)}"
            if shown_rest:
                text += f" when {joined(shown_rest)}"
            return sentence(f"{text}, {where}")
        lead = sentence(where)[:-1]
        if not shown_rest and r.dead:
            lines = ", ".join(str(g.line) for g in r.dead)
            return sentence(
                f"{lead}, this is raised only if the code gets past line {lines}, which "
                "leaves on every path as mined"
            )
        if not shown_rest:
            return sentence(f"{lead}, this is raised as soon as the code gets to line {site.line}")
        only = "only " if early else ""
        return sentence(f"{lead}, this is raised {only}when {joined(shown_rest)}")

    def excluded_words(self, r: Reading, excluded: Excluded) -> str:
        """What an :class:`Excluded` means, as the sentences that follow "In
        `f`, ": the raise cannot be reached as written, and, when an earlier
        ``assert`` is one of the tests, that it fails first unless Python
        runs with ``-O`` (which strips asserts)."""
        tests = []
        for term in excluded.terms:
            guard = term.origin
            at = ""
            if guard is not None:
                at = (
                    f"asserted at line {guard.line}"
                    if guard.kind == "asserted"
                    else f"line {guard.line}"
                )
            tests.append(f"{code(term.cond.text())} ({at})" if at else code(term.cond.text()))
        text = (
            f"this raise cannot be reached as written: no value of {code(excluded.expr)} "
            f"meets {joined(tests)} together, and the function does not assign "
            f"{joined([code(n) for n in excluded.names])} in between."
        )
        first = excluded.asserted
        if first is not None and first.origin is not None:
            line = first.origin.line
            text += " " + sentence(
                f"With asserts on, the `assert` at line {line} fails before the code gets "
                "here, with its own error: this raise is reached only when Python runs with "
                "`-O`, which strips asserts"
            )
        return text

    def predicate_words(self, r: Reading, term: Term) -> str:
        """A conjunct in brief words; a truth test of a name or call whose
        function's docstring says what it tells (``Whether the model keeps
        recurrent state``) also says that, in the docstring's words."""
        words = self.term_words(term, brief=True)
        pred = next((p for p in r.predicates if p.term == term), None)
        if pred is None or pred.doc is None or words.endswith(")"):
            return words
        meaning = whether_clause(pred.doc[0])
        if meaning is None or "(" in meaning or ")" in meaning:
            return words  # never a parenthetical inside the parenthetical
        if pred.negated:
            return f"{words} (it is true when {meaning})"
        return f"{words} ({meaning})"

    def read_ref(self, read: Read) -> str:
        """The setting a read names: ``--tp-size``, ``ServerArgs.x`` or the
        environment variable."""
        if read.kind == "env":
            return f"the environment variable {code(read.target)}"
        opt = self.config.option_in(read.target, read.option_path)
        if opt is None:
            return code(read.target)
        return code(opt.flag) if opt.flag else code(f"{opt.owner}.{opt.name}")

    def argument_calls(self, site: Site, name: str) -> tuple[Argument, ...]:
        """What the calls of ``site``'s function give its parameter ``name``
        (:attr:`RepoFacts.arguments`), when ``name`` is a bare name; nothing
        when every call only passes on a name whose one-line assignment is
        not found (``check(server_args)``, ``f(out)`` with ``out`` set over
        several lines: that says nothing)."""
        if "." in name:
            return ()
        calls = tuple(self.facts.arguments.get((site.path, site.scope, name), ()))
        if all(a.text.isidentifier() and not a.set_value for a in calls):
            return ()
        return calls

    def arguments_words(self, src: Source, r: Reading) -> str:
        """ "`enabled` is a parameter of `f`: the call at `p.py:621` gives
        `enabled`, set there as `x != "disabled"` (line 610)", each call in
        turn, with the settings an argument reads exactly; a call that
        cannot raise it (:attr:`Reading.barred`) is said so."""
        site = r.site
        items = []
        for arg in src.calls:
            kind = path_kind(arg.path)
            label = {"test": "a test", "script": "a script"}.get(kind[0] if kind else "", "")
            where = f" ({label})" if label else ""
            item = f"the call at `{arg.path}:{arg.line}`{where} gives {code(arg.text)}"
            value = arg.set_value or arg.text
            if arg.set_value:
                item += f", set there as {code(arg.set_value)} (line {arg.set_line})"
            reads = [read for read in self.linker.reads_in(value, arg.path, arg.line) if read.exact]
            if reads:
                item += ", which reads " + joined([self.read_ref(read) for read in reads])
            if any(name == src.name for name, _ in r.barred.get((arg.path, arg.line), ())):
                item += ", so that call never raises this error"
            items.append(item)
        return f"{code(src.name)} is a parameter of {code(site.scope)}: " + "; ".join(items)

    def sources_sentence(self, r: Reading) -> str:
        here, there, given = [], [], []
        for src in r.sources:
            if src.calls:
                given.append(sentence(self.arguments_words(src, r)))
                continue
            if src.path:
                there.append(
                    f"{code(src.name.rsplit('.', 1)[-1])} is set as {code(src.value)} "
                    f"(`{src.path}:{src.line}`)" + self.call_doc_words(src.value, src.path)
                )
                continue
            item = f"{code(f'{src.name} = {src.value}')} at line {src.line}"
            if src.read is not None and len(src.reads) <= 1 and src.value == src.read.text:
                item += f", the value of {self.read_ref(src.read)}"
            elif src.read is not None:
                item += f", which reads {self.reads_words(src)}"
            here.append(item + self.call_doc_words(src.value, r.site.path))
        text = []
        if here:
            text.append(sentence("The values it tests are set in the function: " + "; ".join(here)))
        if there:
            text.append(sentence("Elsewhere in the code, " + "; ".join(there)))
        return " ".join([*text, *given])

    def _foreign_call(self, text: str, name: str, path: str) -> bool:
        """Is every call of ``name`` in ``text`` (source in the file ``path``)
        made on a name that file imports from outside the repository
        (``symm_mem.get_backend()``, :attr:`RepoFacts.foreign`)?"""
        foreign = self.facts.foreign.get(path, frozenset())
        roots = [
            m.group(1)
            for m in re.finditer(rf"(?<![\w.])(\w+)(?:\.\w+)*\.{re.escape(name)}\(", text)
        ]
        bare = len(re.findall(rf"(?<![\w.]){re.escape(name)}\(", text))
        return bool(roots) and not bare and all(r in foreign for r in roots)

    def call_doc_words(self, value: str, path: str) -> str:
        """``, and `f()` is documented as "..." (`path:line`)`` for a value that
        is a call of a function with a docstring (not one the file ``path``
        imports from outside the repository); else empty."""
        name = callee(value)
        doc = self.facts.call_docs.get(name) if name else None
        if name is None or doc is None or self._foreign_call(value, name, path):
            return ""
        text = _closed(first_sentence(doc[0]))
        if not text[:1].isupper() or len(text.split()) < 3:
            return ""  # a fragment ("either server-based or req-based")
        return f', and {code(name + "()")} is documented as "{text}" (`{doc[1]}:{doc[2]}`)'

    def quote_sentence(self, q: Quote) -> str:
        text = _closed(q.text)
        if q.kind == "comment":
            return f'The comment {q.about} ({q.where}) says: "{text}"'
        if q.kind == "setting-comment":
            return f'{q.about} ({q.where}), a comment says: "{text}"'
        if q.kind == "help":
            return f'{code(q.about)} is described as "{text}" ({q.where}).'
        if q.kind == "call-doc":
            return f'{code(q.about + "()")} is documented as "{text}" ({q.where}).'
        if q.kind == "function-doc":
            return f'{code(q.about)} is documented as "{text}" ({q.where}).'
        if q.kind == "class-doc":
            return f'The class {code(q.about)} is documented as "{text}" ({q.where}).'
        if q.kind == "module-doc":
            return f'The module {code(q.about)} is documented as "{text}" ({q.where}).'
        return f'The exception {code(q.about)} is documented as "{text}" ({q.where}).'

    def by_name(self, r: Reading) -> list[str]:
        """One sentence per setting linked by name only (what the name says)."""
        out = []
        for part in r.linked:
            clause = part.clause
            assert clause is not None and clause.read is not None
            read = clause.read
            if read.exact or part.strong or self.raises(r, part.origin):
                continue  # (another error's check: its setting says nothing of this one)
            if read.kind == "option":
                opt = self.config.option_in(read.target, read.option_path)
                if opt is not None:
                    out.append(f"By its name, {code(read.text)} is {self.option_ref(opt)}.")
            elif read.kind == "derived":
                found = self.expanded(read, clause.condition)
                derived = self.config.derived_setting(read.target)
                if found is not None and derived is not None:
                    joiner = " and " if found[1] == "all" else " or "
                    inner = joiner.join(self.setting_state(c.name, c) for c in found[0])
                    label = code(
                        f"{derived.owner}.{derived.name}()" if derived.owner else derived.name
                    )
                    truth = "true" if clause.condition.op == "truthy" else "false"
                    out.append(
                        f"By its name, {code(read.text)} is the derived setting {label}, "
                        f"{truth} when {inner}."
                    )
        return list(dict.fromkeys(out))[:2]

    def what_it_means(self, r: Reading) -> str:
        text = [self.situation(r), *self.import_sentences(r), *self.by_name(r)]
        if r.reason and r.user_facing:
            text.append(f'The message gives the reason: "{r.reason}".')
        if r.sources and r.user_facing:
            text.append(self.sources_sentence(r))
        cited = r.quotes[: MAX_QUOTES if r.user_facing else 1]
        text += [self.quote_sentence(q) for q in cited]
        return " ".join(_one_line(t) for t in text)

    # ------------------------------------------------------------ situations

    def situations(self, r: Reading) -> tuple[str, ...]:
        site = r.site
        out: list[str] = []
        said = False
        name = target_name(site.scope)
        if site.scope == "<module>":
            out.append(
                f"Importing the module `{site.path}` (directly or through a package import)."
            )
        elif name is not None:
            callers = self.facts.callers.get(name)
            defs = self.facts.definitions.get(name, 0)
            if callers:
                grouped: dict[tuple[str, str], list[int]] = {}
                barred: list[str] = []
                for caller in callers:
                    given = r.barred.get((caller.path, caller.line))
                    if given is None:
                        grouped.setdefault((caller.scope, caller.path), []).append(caller.line)
                        continue
                    args = joined([f"{code(a)} for {code(p)}" for p, a in given])
                    barred.append(
                        f"{code(caller.scope)} calls {code(name)} at "
                        f"`{caller.path}:{caller.line}` with {args}, so that call never "
                        "raises this error (the condition above is false for those values)."
                    )
                for (scope, path), numbers in list(grouped.items())[:MAX_CALLERS]:
                    parent = target_name(scope)
                    above = self.facts.callers.get(parent, ()) if parent else ()
                    if len(grouped) == 1 and not above and said_by_callers_trigger(r, scope, path):
                        said = True  # "When it happens" names this caller and its conditions
                        continue
                    where = ", ".join(f"`{path}:{n}`" for n in numbers[:3])
                    line = f"{code(scope)} calls {code(name)} at {where}"
                    line += callers_situation(self, r, scope, path)
                    if above:
                        line += f", reached from {_callers_at(above)}"
                    handled = [self.handler_of(r, name, path, n) for n in numbers]
                    if all(handled):
                        types, at = handled[0] or ("", 0)
                        caught = f"`except {types}`" if types else "a bare `except`"
                        line += (
                            f"; there it is inside a `try` whose {caught} (line {at}) handles it "
                            "without raising again: the error does not propagate from that call "
                            "(it may be logged or returned instead)"
                        )
                    out.append(line + ".")
                if len(grouped) > MAX_CALLERS:
                    # named with their first call, so that a common caller
                    # past the first four is not hidden behind a count
                    # (tests and scripts counted, not named)
                    rest = list(grouped.items())[MAX_CALLERS:]
                    verb = "calls" if len(rest) == 1 else "call"
                    who = plural(len(rest), "more function")
                    library = [(k, n) for k, n in rest if _library(k[1])]
                    named = [
                        f"{code(scope)} (`{path}:{numbers[0]}`)"
                        for (scope, path), numbers in library[:MAX_MORE_CALLERS]
                    ]
                    left = len(library) - MAX_MORE_CALLERS
                    if left > 0:
                        named.append(plural(left, "more"))
                    others = len(rest) - len(library)
                    if not library:
                        out.append(f"{who}, all in tests or scripts, {verb} {code(name)}.")
                    else:
                        if others:
                            named.append(f"{others} in tests or scripts")
                        out.append(f"{who} {verb} {code(name)} in the commit: {joined(named)}.")
                out.extend(barred)
            elif name in self.facts.crowded:
                out.append(
                    f"{code(name)} is called from {self.facts.crowded[name]} files of the commit: "
                    "a shared helper reached from many paths."
                )
            elif defs > 1:
                by_scope: dict[tuple[str, str], list[int]] = {}
                for caller in self.facts.self_calls.get((site.path, site.scope), ()):
                    by_scope.setdefault((caller.scope, caller.target), []).append(caller.line)
                for (scope, written), numbers in list(by_scope.items())[:MAX_CALLERS]:
                    where = ", ".join(f"`{site.path}:{n}`" for n in numbers[:3])
                    call = code(written + "()")
                    out.append(f"{code(scope)}, in the same class, calls {call} at {where}.")
                if len(by_scope) > MAX_CALLERS:
                    more = len(by_scope) - MAX_CALLERS
                    out.append(f"{plural(more, 'more call')} in methods of the class.")
                elsewhere = " from elsewhere" if by_scope else ""
                out.append(
                    f"{code(name)} is defined {defs} times in the commit, so its callers"
                    f"{elsewhere} are not resolved by name; the traceback shows which one ran."
                )
            elif name.startswith("test_") or "/test" in f"/{site.path}":
                out.append(
                    f"Running the test suite: {code(name)} is a test (or test helper) in "
                    f"`{site.path}`, run by the test runner rather than called by name."
                )
            elif name in self.facts.uses:
                used_in, used_at = self.facts.uses[name]
                out.append(
                    f"No call of {code(name)} by name was found in the commit; the name is "
                    f"used other than in a call at `{used_in}:{used_at}` (an alias, a table or a "
                    "callback there may call it)."
                )
            else:
                out.append(self.uncalled(site, name))
        flags = []
        for term in r.terms:
            # one disjunct of an "any of" is no situation of its own: an
            # ``or`` is one when each of its atoms is a setting's state
            states = [self.part_state(p) for p in term.parts]
            if term.cond.op == "atom" and states[0]:
                flags.append(states[0])
            elif (
                term.cond.op == "or"
                and len(term.parts) == len(term.cond.args) > 1
                and all(states)
                and all(a.op == "atom" for a in term.cond.args)
            ):
                flags.append("either " + " or ".join(states))
        states = list(dict.fromkeys(flags))
        if states and (len(states) <= MAX_LAUNCH_STATES or not out):
            # a longer list is the card's "When it happens" again: a situation
            # of its own only when nothing else says where the error comes from
            out.append("Launches where " + "; ".join(states) + ".")
        if not out and not said:
            out.append(f"Any run that reaches {code(site.scope)} in `{site.path}`.")
        return tuple(out)

    # ------------------------------------------------------------ solutions

    @overload
    def entry(self, opt: None) -> str: ...
    @overload
    def entry(self, opt: Option) -> str | None: ...
    def entry(self, opt: Option | None) -> str | None:
        """The command line that parses ``opt`` (the primary entry point by
        default); None when that command was not found: the option's module
        neither has a known command nor runs as one
        (:attr:`ConfigModel.scripts`)."""
        if opt is not None:
            command = self.config.command_of(opt)
            if command is not None:
                return _run(command, "")
            if opt.owner != self.config.primary or not self.config.entry_point:
                return _run(opt.module, opt.path) if opt.path in self.config.scripts else None
        if self.config.entry_point:
            return _run(self.config.entry_point, "")
        return "python your_program.py"

    def resolved_to(self, opt: Option, values: list[str]) -> list[tuple[str, str, int]]:
        """Where the argument handling stores one of ``values`` into ``opt``'s
        setting: code of the library near the option (:meth:`ConfigModel.near`;
        the diffusion server's handlers do not set ``sglang.srt``'s flags)."""
        found = [
            (r.value, r.path, r.line)
            for r in self.facts.resolved.get(opt.name, ())
            if r.value in values and self.config.near(opt, r.path) and path_kind(r.path) is None
        ]
        # the general handlers (``arg_groups/overrides.py``) before the per-model ones
        return sorted(found, key=lambda f: (f[1].count("/"), f[1], f[2]))

    def resolved_besides(self, opt: Option, besides: Sequence[str]) -> list[tuple[str, str, int]]:
        """:meth:`resolved_to` every value the argument handling stores into
        ``opt``'s setting but ``besides``."""
        stored = self.facts.resolved.get(opt.name, ())
        return self.resolved_to(opt, [r.value for r in stored if r.value not in besides])

    def _turned_on(self, opt: Option) -> str:
        """`` Leaving it out may not help: ...`` when the argument handling stores
        a true literal into ``opt``'s setting itself (empty otherwise)."""
        stored = self.resolved_to(opt, ["True", "1"])
        if not stored:
            return ""
        where = ", ".join(f"`{path}:{line}`" for _, path, line in stored[:2])
        return (
            " Leaving it out may not help: the argument handling sets it to "
            f"{code(stored[0][0])} itself at start-up in some cases ({where})."
        )

    def option_fix(self, opt: Option, cond: Setting, prefix: str = "") -> Fix | None:
        """How to make ``cond`` (what the error needs) false for ``opt``; a
        ``prefix`` (for a link by name only) leads the sentence."""
        fix = self._option_fix(opt, cond)
        if fix is None or not prefix:
            return fix
        return Fix(prefix + fix.text[0].lower() + fix.text[1:], fix.example)

    def _help_of(
        self,
        opt: Option,
        value: str | None = None,
        avoid: Sequence[str] = (),
        needs: bool = True,
    ) -> str:
        """`` Its help says: "..."``: the help sentence naming ``value``, or
        (without a value) the help's first sentence; empty without one, or
        when that sentence also names one of ``avoid`` (the values that
        raise: "'fp8_e5m2' and 'fp8_e4m3' are supported" is no reason to pick
        ``fp8_e4m3`` where ``fp8_e5m2`` raises). With ``needs``, a later sentence
        of the help that says what the option needs follows
        (:func:`~miner.analysis.evidence.help_requirement`: ``--sidecar``'s
        "Requires --grpc-port or SGLANG_GRPC_PORT.")."""
        text = help_sentence(opt, value) if value else None
        if text is not None and any(help_sentence(replace(opt, help=text), v) for v in avoid):
            return ""
        if text is None and opt.help and opt.help != "==SUPPRESS==" and value is None:
            text = first_sentence(opt.help)
        if not text:
            return ""
        # what the option needs, for a fix that gives it (not one that drops it)
        required = help_requirement(opt) if needs else None
        also = (
            f' and: "{_closed(required.rstrip(";,: "))}"'
            if required and required not in text
            else ""
        )
        return f' Its help says: "{_closed(text)}"{also}'

    def _option_fix(self, opt: Option, cond: Setting) -> Fix | None:
        """:meth:`_option_fix_in` with the command that parses ``opt``; the
        fix's text alone (no command line) when that command is not known."""
        cmd = self.entry(opt)
        fix = self._option_fix_in(opt, cond, cmd or "")
        if cmd is None and fix is not None and fix.example is not None:
            return Fix(fix.text) if fix.text else None
        return fix

    def _option_fix_in(self, opt: Option, cond: Setting, cmd: str) -> Fix | None:
        choices = list(opt.choices or ())
        values = list(cond.values)
        flag = opt.flag
        aliases = self.config.aliases_of(opt.name)
        alias_note = (
            f" (the deprecated alias {values_list(aliases)} sets the same value)" if aliases else ""
        )
        if flag is None:
            return self._field_fix(opt, cond)
        if cond.op in ("==", "in"):
            default = shown(opt.default) if opt.default is not None else None
            stored = self.resolved_to(opt, values)
            others = [c for c in choices if c not in values]
            unsafe = {c for c in others if c == "auto" and (stored or not self.facts.resolved)}
            if default is not None and stored:
                unsafe.add(default)
            safe = [c for c in others if c not in unsafe]
            parts = []
            if safe and len(safe) > MAX_VALUES:
                parts.append(
                    f"set {code(flag)} to another of its choices, such as "
                    f"{values_list(safe[:MAX_VALUES])}"
                )
            elif safe:
                parts.append(f"set {code(flag)} to {values_list(safe)}")
            leave = default is not None and default not in values and default not in unsafe
            if leave and default is not None and default not in safe:
                omitted = help_sentence(opt, "omitted") or help_sentence(opt, "default")
                parts.append(
                    f"leave {code(flag)} out: its default is {code(default)}"
                    + (f' ("{omitted.rstrip(".")}")' if omitted else "")
                )
            text = sentence("; or ".join(parts) + alias_note) if parts else ""
            if safe:
                text += self._help_of(opt, safe[0], values)
            if default is not None and default in unsafe and not stored:
                text += (
                    f" Leaving the flag out keeps its default {code(default)}, which is "
                    f"resolved at start-up and may become {values_list(values)}."
                )
            if stored:
                value = stored[0][0]
                where = ", ".join(f"`{path}:{line}`" for _, path, line in stored[:2])
                keep = f"its default {code(default)}" if default is not None else "its default"
                text += (
                    f" Leaving the flag out may not help: the argument handling may set it to "
                    f"{code(value)} itself at start-up ({where}), for example from {keep}."
                )
            if choices and not any(v in choices for v in values):
                # The command line refuses the failing value before this check:
                # it can only come from the Python API or from code setting it.
                text = (_close(text) + " " if text else "") + (
                    f"The command line does not accept {values_list(values)} for {code(flag)} "
                    "(not among its choices): the value comes from the Python API or from "
                    "code that sets it."
                )
                return Fix(text)
            text = _close(text) if text else ""
            # a needed ``None`` of a flag that defaults to ``None`` is the flag
            # left out: the failing line shows another needed value, or none
            shown_value = next(
                (v for v in values if v != "None" or not _defaults_to_none(opt)), None
            )
            before = _command(cmd, opt.given(shown_value) if shown_value else "")
            if safe:
                pick = next((o for o in safe if o != "auto"), safe[0])
                after = _command(cmd, opt.given(pick))
            elif leave:
                after = f"{cmd} ..."
            else:
                return Fix(text) if text else None
            if before is None or after is None or before == after:
                return Fix(text) if text else None
            return Fix(text, ExampleFix("shell", before, after, FixKind.FLAG))
        if cond.op in ("!=", "not in"):
            unset = opt.default in (None, "None")
            wanted = (
                values
                if not choices
                else [v for v in values if v in choices or (v == "None" and unset)]
            )
            if not wanted:
                return None
            helped = self._help_of(opt, wanted[0])
            text = f"Set {code(flag)} to {values_list(wanted)}{alias_note}." + helped
            if cond.op == "not in" and choices and all(c in values for c in choices):
                # Every value the command line accepts passes: the failing
                # one comes from elsewhere.
                return Fix(
                    f"The command line accepts only {values_list(choices)} for {code(flag)}, "
                    "and each passes this check: the failing value comes from the Python API "
                    f"or from code that sets {code(opt.name)}; give it one of those values "
                    "there." + (" " + _close(helped) if helped else "")
                )
            default = shown(opt.default)
            # the failing command line gives the flag another value: one the
            # choices tell, else a placeholder
            switch = _SWITCH_VALUES if opt.switch else ()
            others = [c for c in choices or switch if c not in values]
            failing = _command(cmd, opt.given(others[0] if others else "VALUE"))
            if wanted == ["None"] or (default == "None" and "None" in wanted):
                # no command line gives a flag the value None: leave it out
                rest = [v for v in wanted if v != "None"]
                text = f"Leave {code(flag)} out (its default is `None`)"
                if rest:
                    text += f" or set it to {values_list(rest)}"
                text += alias_note + "." + helped
                stored = self.resolved_besides(opt, wanted)
                if stored:
                    where = ", ".join(f"`{path}:{line}`" for _, path, line in stored[:2])
                    text = _close(text) + (
                        " Leaving it out may not help: the argument handling may set it to "
                        f"{code(stored[0][0])} itself at start-up ({where})."
                    )
                if default != "None":
                    return Fix(_close(text)) if rest else None
                return _flag_fix(_close(text), failing, f"{cmd} ...")
            if default in wanted:
                # the value it needs is the default: passed explicitly
                text = (
                    f"Set {code(flag)} to {values_list(wanted)}{alias_note}; {code(default)} is "
                    "its default." + helped
                )
                return _flag_fix(_close(text), failing, _command(cmd, opt.given(default)))
            return _flag_fix(_close(text), f"{cmd} ...", _command(cmd, opt.given(wanted[0])))
        if cond.op == "truthy":
            if opt.negation:
                # off only through its own switch: left out, a resolvable
                # default may still turn it on
                text = f"Pass {code(opt.negation)} to turn {code(flag)} off." + self._help_of(opt)
                return _flag_fix(_close(text), f"{cmd} ... {flag}", f"{cmd} ... {opt.negation}")
            if opt.is_bool:
                also = (
                    f", and the deprecated alias {values_list(aliases)} sets it too"
                    if aliases
                    else ""
                )
                text = f"Drop {code(flag)}: it is off by default{also}."
                text += self._help_of(opt, needs=False).replace(
                    "Its help says", "Dropping it gives up"
                )
                text = _close(text) + self._turned_on(opt)
                return _flag_fix(text, f"{cmd} ... {flag}", f"{cmd} ...")
            text = f"Leave {code(flag)} unset (default {code(shown(opt.default))})."
            text += self._turned_on(opt)
            return _flag_fix(text, _command(cmd, opt.given("VALUE")), f"{cmd} ...")
        if cond.op == "falsy" and _on_by_default(opt):
            text = (
                f"Leave {code(flag)} out: its default is `True`; or pass it as true{alias_note}."
                + self._help_of(opt)
            )
            return _flag_fix(_close(text), _command(cmd, opt.given("false")), f"{cmd} ...")
        if cond.op == "falsy":
            if opt.is_bool:
                text = f"Pass {code(flag)}{alias_note}." + self._help_of(opt)
                return _flag_fix(_close(text), f"{cmd} ...", f"{cmd} ... {flag}")
        if cond.op in ("falsy", "is None"):
            if choices:
                text = f"Pass {code(flag)} with one of its choices: {values_list(choices)}."
                return _flag_fix(text, f"{cmd} ...", _command(cmd, opt.given(choices[0])))
            text = f"Pass {code(flag)} with a (non-empty) value." + self._help_of(opt)
            return Fix(_close(text), None)
        if cond.op == "is not None":
            text = f"Drop {code(flag)} (its default is {code(shown(opt.default))})."
            return _flag_fix(text, _command(cmd, opt.given("VALUE")), f"{cmd} ...")
        return None

    def _field_fix(self, opt: Option, cond: Setting) -> Fix | None:
        """The constructor argument of a field without a flag that makes
        ``cond`` false, or None; none when the argument handling itself stores
        a value that meets ``cond`` (:meth:`resolved_to`): a view of the
        resolved arguments reads that value, whatever the constructor got
        (SGLang's ``uses_mamba_radix_cache``, declared true for mamba models)."""
        failing = {"truthy": ["True", "1"], "falsy": ["False", "0", "None"]}.get(
            cond.op, list(cond.values) if cond.op in ("==", "in") else []
        )
        if failing and self.resolved_to(opt, failing):
            return None
        call = f"{opt.owner}(..., {opt.name}="
        if cond.op in ("truthy", "falsy"):
            bad, good = ("True", "False") if cond.op == "truthy" else ("False", "True")
            text = f"Construct {code(opt.owner)} with {code(f'{opt.name}={good}')}."
            return Fix(
                text, ExampleFix("python", f"{call}{bad})", f"{call}{good})", FixKind.ARGUMENT)
            )
        if cond.op in ("==", "in") and cond.values:
            others = [c for c in (opt.choices or ()) if c not in cond.values]
            if others:
                text = (
                    f"Construct {code(opt.owner)} with {code(opt.name)} "
                    f"set to {values_list(others)}."
                )
                return Fix(
                    text,
                    ExampleFix(
                        "python",
                        f"{call}{cond.values[0]!r})",
                        f"{call}{others[0]!r})",
                        FixKind.ARGUMENT,
                    ),
                )
        return None

    def env_fix(
        self, name: str, cond: Setting, read: Read | None = None, path: str | None = None
    ) -> Fix:
        """The fix of the environment variable ``name`` for the condition
        ``cond`` of the raise, read by ``read``: "unset it" only when the
        variable unset does not meet ``cond`` (:func:`_env_default`: the
        read's own default, ``os.environ.get("X", "all")``, or the
        registry's). The example runs the primary entry point only for code
        of its package part (``path``, the raise's file: the diffusion
        server's ``cpu_worker.py`` is not run by ``sglang.launch_server``);
        otherwise the fix is told in words."""
        var = self.config.env_var(name)
        cmd = self.entry(None) if path is None or self._primary_runs(path) else None
        default = (
            f", default {code(shown(var.default))}" if var and var.default not in (None, "") else ""
        )
        verb = "declared" if var and var.registry else "read"
        where = f" ({verb} at `{var.path}:{var.line}`{default})" if var and var.path else ""
        unset = _env_default(read, var)

        def fix(text: str, before: str, after: str) -> Fix:
            if cmd is None:
                return Fix(text)
            return Fix(
                text,
                ExampleFix("shell", before.format(cmd=cmd), after.format(cmd=cmd), FixKind.ENV),
            )

        if cond.op == "truthy" and not (var is not None and var.kind == "bool"):
            if unset and _truthy_text(unset, var.kind if var and var.registry else None):
                text = f"Set {code(name)} to an empty value: unset, it reads {code(unset)}{where}."
                return fix(text, "{cmd} ...", f"{name}= {{cmd}} ...")
            text = f"Unset {code(name)} or set it to an empty value{where}."
            return fix(text, f"{name}=1 {{cmd}} ...", f"unset {name}\n{{cmd}} ...")
        if cond.op == "truthy":
            if unset and _truthy_text(unset, "bool"):
                text = f"Set {code(name)} to a false value, `{name}=0`: it is on by default{where}."
                return fix(text, "{cmd} ...", f"{name}=0 {{cmd}} ...")
            text = f"Unset {code(name)} or set it to a false value, `{name}=0`{where}."
            return fix(text, f"{name}=1 {{cmd}} ...", f"{name}=0 {{cmd}} ...")
        if cond.op == "falsy":
            text = f"Set {code(name)} to a true value, `{name}=1`{where}."
            return fix(text, "{cmd} ...", f"{name}=1 {{cmd}} ...")
        if cond.op in ("==", "in") and cond.values:
            if unset is not None and unset in cond.values:
                # unset, it reads the failing value: only another value helps
                text = (
                    f"Set {code(name)} to another value than {values_list(cond.values)}: "
                    f"unset, it reads {code(unset)}{where}."
                )
                return Fix(text)
            text = (
                f"Set {code(name)} to another value than {values_list(cond.values)}, "
                f"or unset it{where}."
            )
            return fix(text, f"{name}={cond.values[0]} {{cmd}} ...", "{cmd} ...")
        if cond.op in ("!=", "not in") and cond.values:
            if unset is not None and unset in cond.values:
                # unset, it reads a value that passes: the failing run sets it
                text = (
                    f"Unset {code(name)} or set it to {values_list(cond.values)}: unset, it "
                    f"reads {code(unset)}{where}."
                )
                return fix(text, f"{name}=... {{cmd}} ...", f"unset {name}\n{{cmd}} ...")
            text = f"Set {code(name)} to {values_list(cond.values)}{where}."
            return fix(text, "{cmd} ...", f"{name}={cond.values[0]} {{cmd}} ...")
        if cond.op == "is not None":
            text = f"Unset {code(name)}{where}."
            return fix(text, f"{name}=... {{cmd}} ...", f"unset {name}\n{{cmd}} ...")
        if cond.op == "is None":
            return fix(f"Set {code(name)}{where}.", "{cmd} ...", f"{name}=... {{cmd}} ...")
        return Fix(f"Change {code(name)} so that {_compare_text(cond)} no longer holds{where}.")

    def _primary_runs(self, path: str) -> bool:
        """Whether the primary entry point runs the code of the file ``path``:
        the file is near the settings of the primary class in its own file
        (:meth:`ConfigModel.near`), or in no package part that has an
        arguments class of its own (``python/sglang/kernels/`` is; the
        diffusion server's ``python/sglang/multimodal_gen/``, with a
        ``ServerArgs`` of its own, is not); true without a primary class.
        Memoized per file."""
        found = self._runs.get(path)
        if found is None:
            found = self._runs[path] = self._find_primary_runs(path)
        return found

    def _find_primary_runs(self, path: str) -> bool:
        primary = next(
            (
                o
                for o in self.config.options
                if o.owner == self.config.primary and o.path == self.config.primary_path
            ),
            None,
        )
        if primary is None or self.config.near(primary, path):
            return True
        # another package part with arguments of its own runs its own code
        return not any(
            o.owner in self.config.classes
            and o.path != self.config.primary_path
            and (o.module or "").count(".") >= 2
            and o.defined_near(path)
            for o in self.config.options
        )

    def clause_fixes(
        self, clause: Clause, strong: bool = False, path: str | None = None
    ) -> list[Fix]:
        """The fixes that make ``clause`` (what the error needs) false, for a
        raise in the file ``path`` (None: the primary entry point runs it)."""
        read, cond = clause.read, clause.condition
        if read is None:
            return []
        if read.kind == "env":
            return [self.env_fix(read.target, cond, read, path)]
        sure = read.exact or strong
        prefix = "" if sure else f"If {code(read.text)} holds the command-line value: "
        if read.kind == "option" and not sure:
            named = self.config.option_in(read.target, read.option_path)
            if named is not None and not named.flag:
                prefix = f"If {code(read.text)} is {code(named.owner + '.' + named.name)}: "
        if read.kind == "option":
            opt = self.config.option_in(read.target, read.option_path)
            if opt is not None and not opt.flag and read.exact and not self._read_directly(read):
                # a field without a flag, read through a view of the resolved
                # arguments or an accessor: start-up may declare its value
                # (``uses_mamba_radix_cache``), so a constructor argument is no fix
                return []
            fix = self.option_fix(opt, cond, prefix) if opt else None
            return [fix] if fix else []
        found = self.expanded(read, cond)
        if found is None:
            return []
        conds, mode = found
        fixes = []
        # a choice to switch first, then switches to flip
        conds = sorted(conds, key=lambda c: not (self.config.option(c.name) or _NO).choices)
        for c in conds:
            opt = self.config.option(c.name)
            if opt is None:
                continue
            fix = self.option_fix(opt, c, prefix)
            if fix:
                fixes.append(fix)
        if mode == "any" and len(fixes) > 1:
            joined_fixes = "; and ".join(f.text[0].lower() + f.text[1:].rstrip(".") for f in fixes)
            return [
                Fix(
                    f"All of these (any one of them raises it): {joined_fixes}.",
                    fixes[0].example,
                )
            ]
        return fixes

    def _read_directly(self, read: Read) -> bool:
        """Whether ``read`` reads the arguments object itself by one of its
        names (``server_args.x``), not a view of it or an accessor's result."""
        return read.text.rsplit(".", 1)[0] in self.linker.objects

    def default_choice(self, clause: Clause, r: Reading) -> str:
        """What a setting left out (default ``None`` or ``auto``) resolves to, for
        a clause needing it equal to a value some resolver can pick
        (:class:`miner.analysis.resolvers.Choice`): the other value when the
        resolver's condition needs false a predicate the card needs true
        (``supports_host_pool = not uses_ssm_state(...)``); else that leaving
        it out may not help. Empty when no resolver stores such a value."""
        read, cond = clause.read, clause.condition
        if read is None or read.kind != "option" or cond.op not in ("==", "in"):
            return ""
        opt = self.config.option_in(read.target, read.option_path)
        if opt is None or opt.default not in (None, "None", "auto", "'auto'"):
            return ""
        unset = opt.default in (None, "None")
        for choice in self.facts.choices.get(opt.name, ()):
            if choice.value not in cond.values or (unset and not choice.unset_only):
                continue
            if not self.config.near(opt, choice.path):
                continue  # another part's option of the same name
            where = f"in {code(choice.function)} (`{choice.path}:{choice.line}`)"
            for pred in r.predicates:
                req = next(
                    (q for n in pred.names() if (q := choice.conflicts(n, pred.negated))), None
                )
                if req is None:
                    continue
                via = f" (through {code(req.via)}, line {req.via_line})" if req.via else ""
                return (
                    f"Left out, it is resolved {where}: {code(choice.value)} needs "
                    f"{code(req.text)}{via}, so where {self.term_words(pred.term, brief=True)} "
                    f"it becomes {code(choice.other)}."
                )
            return (
                f"Leaving it out may not help: it is then resolved {where}, to "
                f"{code(choice.value)} when its conditions hold and {code(choice.other)} "
                "otherwise."
            )
        return ""

    def solutions(self, r: Reading) -> tuple[list[tuple[SolutionKind, str]], ExampleFix | None]:
        """The card's "Solutions", each with its kind, and its "Example fix":
        an item that is only the raise condition negated and an example that
        only restates it (:attr:`SolutionKind.CONDITION`,
        :attr:`FixKind.CONDITION`) are made, then left out."""
        site, error = r.site, r.error
        fixes: list[Fix] = []
        fixed: set[Term] = set()
        # The innermost check first: it is the one that tells this error apart
        # (an outer ``if mode == "prefill"`` only places it).
        innermost = sorted(r.terms, key=lambda t: -(t.origin.line if t.origin is not None else 0))
        # A bad input is fixed in the input: a setting that only makes the
        # function return before the check goes around it, after the input's terms.
        around: list[Fix] = []
        for term in innermost:
            if not term.linked or not self.way_out(r, term):
                continue  # the other way out is another error
            into = around if self.goes_around(r, term) else fixes
            if term.cond.op == "atom":
                part = term.parts[0]
                assert part.clause is not None
                if into is around and self._named_value(part.clause):
                    # ``if parser == "hunyuan": return``: switching a free-form
                    # setting (a parser, a model name) to the one value that
                    # returns early changes what runs, not the bad input
                    fixed.add(term)
                    continue
                if self.unrelated_switch(part.clause, r):
                    fixed.add(term)
                    continue
                clause = part.clause
                refused = (
                    self.raising_values(r, part)
                    if clause.condition.op in ("==", "in") and self._chosen(clause)
                    else ()
                )
                if refused:
                    # values another raise of the function refuses are no way out
                    kept = tuple(v for v in refused if v not in clause.condition.values)
                    clause = Clause(
                        replace(clause.condition, op="in", values=clause.condition.values + kept),
                        clause.read,
                    )
                found = self.clause_fixes(clause, part.strong, r.site.path)
                if found:
                    extra = self.default_choice(part.clause, r)
                    if extra:
                        last = found[-1]
                        found[-1] = Fix(_close(last.text) + " " + extra, last.example)
                    into.extend(found)
                    fixed.add(term)
            elif (
                term.cond.op == "or"
                and all(
                    p.clause is not None and a.op == "atom"
                    for p, a in zip(term.parts, term.cond.args, strict=False)
                )
                and len(term.parts) == len(term.cond.args)
            ):
                each = [
                    self.clause_fixes(p.clause, p.strong, r.site.path)
                    for p in term.parts
                    if p.clause
                ]
                if any(self.unrelated_switch(p.clause, r) for p in term.parts if p.clause):
                    each = []
                if each and all(each):
                    texts = [f[0].text[0].lower() + f[0].text[1:].rstrip(".") for f in each]
                    into.append(
                        Fix(
                            "All of these (any one of them raises it): "
                            + "; and ".join(texts)
                            + ".",
                            each[0][0].example,
                        )
                    )
                    fixed.add(term)
        fixes.extend(callers_fixes(self, r))
        used = {n for f in fixes for n in re.findall(r"--[\w-]+|\b[A-Z][A-Z0-9_]{3,}\b", f.text)}
        # The message's own advice with a value to pass (``Use --x=v``) is the
        # fix its authors meant: it leads, and its example is the card's.
        # A fix of a guard with the same example as the advice says it with the
        # flag's help: that one leads instead of the advice.
        advised: list[Fix] = []
        for m in r.remedies:
            if m.example is None:
                continue
            same = next(
                (f for f in fixes if f.example is not None and f.example.after == m.example.after),
                None,
            )
            if same is not None:
                fixes.remove(same)
                advised.append(same)
                continue
            # the failing value, from the guard's fix of the same flag, is the "before"
            flag = next((n for n in m.names if n.startswith("--")), None)
            failing = next(
                (
                    f.example.before
                    for f in fixes
                    if flag is not None
                    and f.example is not None
                    and f.example.language == m.example.language
                    and re.search(rf"{re.escape(flag)}(?= |$)", f.example.before)
                ),
                None,
            )
            told = m.example if failing is None else replace(m.example, before=failing)
            # an example that changes nothing shows nothing
            advised.append(Fix(m.text, told if told.before != told.after else None))
        fixes[:0] = advised
        for remedy in r.remedies:
            if remedy.example is None:
                fixes.append(Fix(remedy.text, remedy.example))
            used.update(remedy.names)
        for name in r.named:
            if name in used or any(code(name) in f.text for f in fixes):
                continue
            if name.startswith("--"):
                opt = self._flag_option(name, r.site.path)
                if opt is None:
                    if self._defined_at(name):
                        fixes.append(
                            Fix(f"Check the value you give {code(name)}, which the message names.")
                        )
                    continue
                about = self.remedy.describe(opt)
                if opt.deprecated_for:
                    about = f"a deprecated alias of {code(opt.deprecated_for)}"
                if (
                    opt.is_bool
                    and not opt.deprecated_for
                    and opt.default in (None, "None", "False")
                ):
                    # a switch has no value to check
                    fixes.append(
                        Fix(
                            f"Check that you need {code(name)}, which the message names: a "
                            "switch, off unless given." + self._turned_on(opt) + self._help_of(opt),
                        )
                    )
                    continue
                left_out = _left_out(r, opt.name)
                if left_out is not None and not opt.is_bool:
                    # the error needs the flag not given: no value to check
                    fixes.append(
                        Fix(
                            f"Give {code(name)}, which the message names: this error needs it "
                            f"not given ({code(left_out)})." + self._help_of(opt)
                        )
                    )
                    continue
                fixes.append(
                    Fix(
                        f"Check the value you give {code(name)}, which the message names"
                        + (f" ({about})." if about else ".")
                        + self._help_of(opt),
                    )
                )
            else:
                fixes.append(
                    Fix(f"Check the environment variable {code(name)}, which the message names.")
                )
        items: list[tuple[SolutionKind, str]] = [
            (SolutionKind.FIX, t) for t in dict.fromkeys(_close(f.text) for f in fixes)
        ]
        items[0:0] = [(SolutionKind.INSTALL, t) for t in self.install_fixes(r)]
        fixed.update(term for term, _ in r.failed_imports)
        example = _with_context(
            next((f.example for f in fixes if f.example is not None), None),
            [f.example for f in fixes if f.example is not None],
        )
        name = short(error.exception)
        unlinked = [
            t for t in r.terms if t not in fixed and self.way_out(r, t) and not _loop_exit(t)
        ]
        if name in ("ImportError", "ModuleNotFoundError") and not any(
            "Install" in t for _, t in items
        ):
            # A package is missing when an import failed here, or the message
            # says so; an ImportError raised for an unsupported format is not.
            module = self.imported_module(r)
            if module or r.failed_imports or _ABOUT_PACKAGES.search(message_text(error)):
                what = _imported_words(module, bool(module) and self.own_module(module or ""))
                items.append(
                    (
                        SolutionKind.INSTALL,
                        f"Install the missing package{what} in the same environment.",
                    )
                )
        if unlinked and not r.contradictory:
            listed = [t for t in unlinked if _flat(t.cond)]
            if any(not _loop_item(t) for t in listed):
                # "the loop ... has no item" is true but no fix next to others
                listed = [t for t in listed if not _loop_item(t)]
            ways = [self.negated_words(t) for t in listed]
            # Too many: the last ones, nearest the raise (its own test last),
            # are the most its own; the first are the function's preconditions.
            left = len(ways) - MAX_WAYS
            if left > 0:
                ways = ways[left:]
            lead = {
                Audience.USER_INPUT.value: "The input passes this check when",
                Audience.DEPENDENCY.value: "It is not raised on a setup where",
                Audience.UNSUPPORTED.value: "It is not raised when",
            }.get(r.audience, "It is not raised when")
            said = self.message_says(r) if r.user_facing else ""
            if (
                said
                and r.requirement is not None
                and any(r.requirement[1] in rem.text for rem in r.remedies)
            ):
                said = ""  # already a solution of its own
            fed = [src for src in r.sources if src.read is not None]
            if fed:
                said = (
                    " "
                    + "; ".join(
                        f"{code(src.name)} comes from {self.reads_words(src)} (line {src.line})"
                        for src in fed
                        if src.read is not None
                    )
                    + "."
                    + said
                )
            if len(ways) == 1:
                items.append((SolutionKind.CONDITION, sentence(f"{lead} {ways[0]}") + said))
            elif ways:
                more = (
                    f" (and {plural(left, 'earlier condition')} listed under When it happens)"
                    if left > 0
                    else ""
                )
                items.append(
                    (
                        SolutionKind.CONDITION,
                        sentence(f"{lead} any one of these holds{more}: " + "; ".join(ways)) + said,
                    )
                )
        after = self.next_check(site) if r.user_facing else None
        if after is not None and items:
            shown = condition_from(after.guards[-1:]).text()
            items.append(
                (
                    SolutionKind.FOLLOW_UP,
                    f"Once it passes, the next check of {code(site.scope)} raises "
                    f"{code(short(after.exception or 'an exception'))} at line {after.line} when "
                    f"{code(shown)}: {code(_quoted_message(after.message or ''))}.",
                )
            )
        later, more_checks = (
            self.later_checks(r) if r.user_facing and after is None and items else ((), False)
        )
        if later:
            needs = "; ".join(f"{words} (line {line})" for line, words in later[:MAX_LATER])
            beyond = len(later) - MAX_LATER
            among = ", among others" if more_checks else ""
            items.append(
                (
                    SolutionKind.FOLLOW_UP,
                    f"Once it passes, later checks of {code(site.scope)} in the same block "
                    f"also need{among}: {needs}"
                    + (
                        f"; and {plural(beyond, 'more setting')} (their own cards)."
                        if beyond > 0
                        else "."
                    ),
                )
            )
        for fix in around:
            items.append((SolutionKind.FIX, f"{_close(fix.text)} The check is then not reached."))
        if r.dead and not r.terms:
            lines = ", ".join(str(g.line) for g in r.dead)
            items.append(
                (
                    SolutionKind.NOTE,
                    f"Nothing to change for this line alone: as mined, line {lines} leaves first.",
                )
            )
        if r.excluded is not None:
            first = r.excluded.asserted
            if first is not None and first.origin is not None:
                items.append(
                    (
                        SolutionKind.NOTE,
                        "If you see this message, Python runs with `-O` (asserts stripped) and the "
                        f"`assert` at line {first.origin.line} did not run: its test, "
                        f"{code(first.cond.text())} here, is what failed.",
                    )
                )
            else:
                items.append(
                    (
                        SolutionKind.NOTE,
                        "Nothing to change in settings or inputs: as written the code cannot get "
                        "here. If you see this message, report it with the traceback.",
                    )
                )
        if name == "AssertionError" and not r.user_facing:
            items.append(
                (
                    SolutionKind.NOTE,
                    "If your settings and inputs are valid, report it as a bug with the message "
                    f"and the traceback (an internal check of {code(site.scope)} failed).",
                )
            )
        ways_out = [t.cond for t in unlinked]
        if not items and ways_out and not r.contradictory:
            # conditions too nested to list one by one: the whole negation
            instead = negated(
                ways_out[0] if len(ways_out) == 1 else Condition("and", tuple(ways_out))
            )
            shown = instead.text()
            holds = (
                f"this holds instead: {code(shown)}"
                if len(shown) <= MAX_SHOWN
                else 'the condition of the Example fix\'s "after" holds instead'
            )
            items.append(
                (
                    SolutionKind.CONDITION,
                    f"It is not raised when {holds}."
                    + (self.message_says(r) if r.user_facing else ""),
                )
            )
        loop = self.loop_end(r)
        if not items and loop is not None:
            assert loop.origin is not None
            test = negated(loop.cond).text()
            items.append(
                (
                    SolutionKind.CONDITION,
                    f"It is raised once the `while` loop at line {loop.origin.line} ends because "
                    f"{code(test)} no longer holds: only leaving the loop before that (a `return` "
                    "or `break` in it, where there is one) avoids it."
                    + (self.message_says(r) if r.user_facing else ""),
                )
            )
        if not items:
            items.append(
                (
                    SolutionKind.CONDITION,
                    f"Avoid the call path into {code(site.scope)} (see Common situations): "
                    f"nothing in it lets the call get past `{site.path}:{site.line}`."
                    + (self.message_says(r) if r.user_facing else ""),
                )
            )
        if example is None:
            example = self.code_example(r)
        # a negated condition is no solution: the card leaves it out, and what
        # later checks need says nothing without a way past this one
        said_items: list[tuple[SolutionKind, str]] = [
            (k, t) for k, t in items if k is not SolutionKind.CONDITION
        ]
        if all(k is SolutionKind.FOLLOW_UP for k, _ in said_items):
            said_items = []
        return said_items, (None if example.kind is FixKind.CONDITION else example)

    @staticmethod
    def _import_groups(r: Reading) -> list[tuple[OptionalImport, list[str]]]:
        """The failed imports of ``r`` grouped by their ``try`` and value:
        (the first import of the group, the names it sets)."""
        groups: dict[tuple[int, str], tuple[OptionalImport, list[str]]] = {}
        for _, imports in r.failed_imports:
            for found in imports:
                first, names = groups.setdefault((found.try_line, found.value), (found, []))
                if found.name not in names:
                    names.append(found.name)
        return list(groups.values())

    def import_sentences(self, r: Reading) -> list[str]:
        """Why a name the condition tests has its failure value: the import
        of the module that failed (:attr:`Reading.failed_imports`)."""
        out = []
        for found, names in self._import_groups(r):
            verb = "is" if len(names) == 1 else "are"
            them = "it" if len(names) == 1 else "them"
            out.append(
                f"{values_list(names, 'and')} {verb} {code(found.value)} when an import "
                f"of the `try` at line {found.try_line} of `{found.path}` failed as the module "
                f"was loaded (it imports {values_list(found.modules, 'and')}; the "
                f"`except ImportError` at line {found.handler_line} sets {them})."
            )
        return out

    def install_fixes(self, r: Reading) -> list[str]:
        """``Install the package that provides ...`` for each failed import
        of ``r``, with the command that shows why the import fails."""
        out = []
        for found, names in self._import_groups(r):
            plural = "s" if len(found.packages) > 1 else ""
            check = code(f'python -c "{"; ".join(found.statements)}"')
            verb = "is" if len(names) == 1 else "are"
            out.append(
                f"Install the package that provides the {values_list(found.packages, 'and')} "
                f"module{plural} in the environment that runs this code, then check that "
                f"{check} succeeds (its error says what is missing): "
                f"{values_list(names, 'and')} {verb} {code(found.value)} only when "
                f"that import fails (`{found.path}:{found.handler_line}`)."
            )
        return out

    def message_says(self, r: Reading) -> str:
        """`` The message states the requirement: "..."`` (or what it refuses,
        or its advice), for a message with one; else empty."""
        if r.requirement is None:
            return ""
        kind, text = r.requirement
        lead = {
            "advises": "The message advises",
            "asks": "The message states the requirement",
            "refuses": "The message names what is refused",
        }.get(kind, "The message says")
        return f' {lead}: "{text}".'

    def own_module(self, module: str) -> bool:
        """Whether ``module`` is the repository's own: a relative import, or
        a top-level package that holds options of the configuration model
        (``sglang`` of ``sglang.srt.ray.http_server``)."""
        tops = {o.module.split(".")[0] for o in self.config.options if o.module}
        return module.startswith(".") or module.split(".")[0] in tops

    def imported_module(self, r: Reading) -> str | None:
        """The module a ``try`` above an ``except ImportError`` imports."""
        for guard in r.site.guards:
            if guard.kind in ("except", "except*") and "Import" in guard.test:
                for n in range(guard.line - 1, guard.line - 12, -1):
                    text = r.lines.get(n, "").strip()
                    m = re.match(r"^(?:from\s+([\w.]+)\s+import|import\s+([\w.]+))", text)
                    if m:
                        return m.group(1) or m.group(2)
        return None

    def loop_end(self, r: Reading) -> Term | None:
        """The first conjunct of ``r`` that says a ``while`` loop above the
        site ended (:func:`_loop_exit`) and leads to no other error, unless
        the condition is contradictory: what Solutions and the Example fix
        say when no other conjunct is a way out."""
        if r.contradictory:
            return None
        return next((t for t in r.terms if _loop_exit(t) and self.way_out(r, t)), None)

    def code_example(self, r: Reading) -> ExampleFix:
        site = r.site
        where = f"{site.path}:{site.line}"
        cond = r.condition
        # Making a conjunct false that an exit raising another error keeps
        # true gets that error instead: the "after" negates only the others.
        ways = [t.cond for t in r.terms if self.way_out(r, t) and not _loop_exit(t)]
        if ways and not r.contradictory:
            other = any(not self.way_out(r, t) for t in r.terms)
            instead = negated(ways[0] if len(ways) == 1 else Condition("and", tuple(ways)))
            return ExampleFix(
                "python",
                f"# {where} raises when this holds:\n{cond.text()}",
                "# it does not when this holds instead"
                + (" (the other conditions lead to other errors)" if other else "")
                + f":\n{instead.text()}",
                FixKind.CONDITION,
            )
        loop = self.loop_end(r)
        if loop is not None:
            assert loop.origin is not None
            return ExampleFix(
                "python",
                f"# {where} raises when this holds:\n{cond.text()}",
                f"# it does not when the loop at line {loop.origin.line} leaves early, while "
                f"this still holds:\n{negated(loop.cond).text()}",
                FixKind.CONDITION,
            )
        return ExampleFix(
            "python",
            f"# a call of {site.scope} gets to {where}",
            f"# take another code path than {site.scope}",
            FixKind.CONDITION,
        )


_DEF = re.compile(r"^\s*(?:async\s+)?def\s")
_CALLED = re.compile(r"(?<![\w])([A-Za-z_]\w*)\(")


def _header_end(lines: dict[int, str], start: int) -> int | None:
    """The last line of the ``def`` header at line ``start`` of the excerpt
    ``lines``: the first line from which the header parses with :mod:`ast`
    (a ``pass`` body added); None when line ``start`` is not a ``def`` or
    no header of at most :data:`MAX_HEADER_LINES` lines parses."""
    if not _DEF.match(lines.get(start, "")):
        return None
    head: list[str] = []
    for n in range(start, start + MAX_HEADER_LINES):
        if n not in lines:
            return None
        head.append(lines[n])
        try:
            ast.parse(textwrap.dedent("\n".join(head)) + "\n    pass")
        except (SyntaxError, ValueError, MemoryError, RecursionError):
            continue
        return n
    return None


def _binds_locally(name: str, lines: dict[int, str], below: int) -> bool:
    """Whether the site's function may bind ``name`` above line ``below``:
    an assignment, a parameter, a loop or ``as`` target on an excerpt line
    from the nearest ``def`` above (lines at column 0, the module's own, are
    not the function's; :func:`miner.analysis.facts.binding_line`, as
    :func:`miner.analysis.facts.module_values` reads a module)."""
    start = next((n for n in sorted(lines, reverse=True) if n < below and _DEF.match(lines[n])), 0)
    pattern = binding_line(name)
    return any(
        pattern.search(text.encode("utf-8", "surrogatepass"))
        for n, text in lines.items()
        if start <= n < below and name in text and (n == start or text[:1] in (" ", "\t"))
    )


def _excerpt_exit(lines: dict[int, str], head: int) -> Branch:
    """:func:`~miner.analysis.branches.exit_branch` of the ``if`` at ``head``
    read from the excerpt ``lines`` (line -> text); :data:`NO_BRANCH` when
    the excerpt does not show it."""
    if head not in lines:
        return NO_BRANCH
    shown = [lines.get(n, "") for n in range(head, max(lines) + 1)]
    found = exit_branch(shown, 1)
    if not found.at:
        return found
    return found._replace(
        at=found.at + head - 1, reraised=tuple(n + head - 1 for n in found.reraised)
    )


def _lines_words(numbers: Iterable[int]) -> str:
    """``line 12`` or ``lines 12 and 15``."""
    found = [str(n) for n in numbers]
    if len(found) == 1:
        return f"line {found[0]}"
    return f"lines {', '.join(found[:-1])} and {found[-1]}"


def _names(text: str) -> list[str]:
    """The local names and attribute paths (``self.x``, ``ctx.is_hybrid_ssm``)
    an expression tests, in order; not the functions it calls
    (``forward_mode.is_target_verify()`` tests no value named
    ``is_target_verify``)."""
    try:
        node = ast.parse(text, mode="eval").body
    except (SyntaxError, ValueError, RecursionError):
        return []
    found: list[str] = []
    inside: set[int] = set()
    for sub in ast.walk(node):
        if id(sub) in inside:
            continue
        if isinstance(sub, ast.Call):
            inside.update(id(n) for n in ast.walk(sub.func))
        elif isinstance(sub, ast.Attribute):
            path = dotted(sub)
            if path is not None:
                found.append(path)
                inside.update(id(n) for n in ast.walk(sub))
        elif isinstance(sub, ast.Name) and sub.id != "self" and len(sub.id) > 1:
            if isinstance(sub.ctx, ast.Load) and not sub.id[:1].isupper():
                found.append(sub.id)
    return list(dict.fromkeys(found))


_ASSIGN = re.compile(r"^\s*([\w.]+)\s*(?::[^=]+)?=(?!=)\s*(.+)$")


def _in_brackets(lines: dict[int, str], start: int, line: int) -> bool:
    """Whether ``line`` starts inside an open bracket (a call's arguments)
    when the lines from ``start`` (a ``def``) on are read as Python tokens;
    False when ``start`` is no ``def`` line or they do not tokenize."""
    if not _DEF.match(lines.get(start, "")):
        return False
    text = "".join(lines.get(n, "") + "\n" for n in range(start, line))
    depth = 0
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.OP and token.string in "([{":
                depth += 1
            elif token.type == tokenize.OP and token.string in ")]}":
                depth -= 1
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass  # the end of the text inside a bracket: depth is what was read
    return depth > 0


def _def_above(site: Site, lines: dict[int, str]) -> int:
    """The line of the ``def`` above the site in the excerpt ``lines``, else
    the line before the excerpt."""
    return next(
        (n for n in sorted(lines, reverse=True) if n < site.line and _DEF.match(lines[n])),
        site.excerpt.start_line - 1,
    )


def _nearest_assignment(
    name: str, lines: dict[int, str], start: int, below: int
) -> tuple[int, str, ast.expr] | None:
    """The nearest ``name = value`` in the excerpt ``lines`` above line
    ``below`` (after ``start``): (its line, the value on one line, its tree)
    (:func:`~miner.analysis.facts.assigned_expr`: continued over at most
    four lines); None when there is none or its value does not parse."""
    for n in range(below - 1, start, -1):
        text = lines.get(n, "")
        if name not in text:
            continue
        m = _ASSIGN.match(text)
        if m is None or m.group(1) != name or _in_brackets(lines, start, n):
            continue  # ``name=value,`` inside a call is a keyword argument
        found = assigned_expr([m.group(2), *(lines.get(n + k, "") for k in range(1, 5))])
        return None if found is None else (n, *found)
    return None


#: What the left side of a value test may hold: names, literals, arithmetic.
_PLAIN_NODES = (ast.Name, ast.Load, ast.Constant, ast.BinOp, ast.UnaryOp, ast.operator, ast.unaryop)


#: The literal values a value test compares with (hashable, compared by value).
_SCALARS = (int, float, str, bytes, bool, type(None))


def _truthy_text(value: str, kind: str | None) -> bool:
    """Whether an environment variable's value ``value`` reads as true: as
    a registry's typed variable of ``kind`` (``bool``: ``true``, ``1``,
    ``yes``, ``on``; ``int`` / ``float``: not zero), else as the raw string
    ``os.environ.get`` returns (any non-empty text, ``"0"`` too)."""
    if kind == "bool":
        return value.strip().lower() in ("true", "1", "yes", "on", "y", "t")
    if kind in ("int", "float"):
        try:
            return float(value) != 0
        except ValueError:
            return True
    return value != ""


def _env_default(read: Read | None, var: EnvVar | None) -> str | None:
    """The value an environment variable reads as when unset, as text
    without quotes: the literal default of the read itself
    (``os.environ.get("SGLANG_CPU_OMP_THREADS_BIND", "all")``: ``all``;
    ``os.getenv("X", default="1")``; none given: unset), else, for a
    registry's variable (``envs.X.get()``), the registry's default
    (:attr:`EnvVar.default`); None when none is known or it is ``None``."""
    node = parse_expr(read.text) if read is not None else None
    if isinstance(node, ast.Call) and node.args and (var is None or not var.registry):
        given = node.args[1] if len(node.args) >= 2 else None
        given = next((k.value for k in node.keywords if k.arg == "default"), given)
        if isinstance(given, ast.Constant) and given.value is not None:
            return str(given.value)
        return None
    if var is None or var.default in (None, "None", ""):
        return None
    text = var.default
    node = parse_expr(text)
    if isinstance(node, ast.Constant):
        return None if node.value is None else str(node.value)
    return None


def _term_value_test(term: Term) -> tuple[str, frozenset[Any], bool] | None:
    """:func:`_value_test` of a conjunct that is one atom from a guard or an
    exit, as (the expression, the literal values, whether the conjunct says
    the expression is one of them: the atom's polarity applied)."""
    if term.cond.op != "atom" or term.origin is None:
        return None
    found = _value_test(term.cond.atom)
    if found is None:
        return None
    left, values, positive = found
    return left, values, positive != term.cond.negated


def _bare_names(expr: str) -> list[str]:
    """The bare names the expression ``expr`` reads, sorted (none when it
    does not parse)."""
    node = parse_expr(expr)
    return sorted({n.id for n in ast.walk(node) if isinstance(n, ast.Name)} if node else ())


def _value_test(text: str) -> tuple[str, frozenset[Any], bool] | None:
    """``x == 1`` / ``x != 1`` / ``x in [1, 2]`` / ``x not in (1, 2)`` as
    (``x`` as written by ``ast.unparse``, the literal values, whether the
    test says "is one of them"); None for any other test, for a left side
    that is more than names, literals and arithmetic (a call or an
    attribute may give another value each time), and for values that are
    not literals of hashable constants."""
    node = parse_expr(text)
    if not isinstance(node, ast.Compare) or len(node.ops) != 1:
        return None
    left, op, right = node.left, node.ops[0], node.comparators[0]
    if not all(isinstance(n, _PLAIN_NODES) for n in ast.walk(left)):
        return None
    if not any(isinstance(n, ast.Name) for n in ast.walk(left)):
        return None
    try:
        value = ast.literal_eval(right)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    if isinstance(op, (ast.Eq, ast.NotEq)):
        if not isinstance(value, _SCALARS):
            return None
        values = frozenset({value})
    elif isinstance(op, (ast.In, ast.NotIn)):
        if not isinstance(value, (list, tuple, set, frozenset)) or not all(
            isinstance(v, _SCALARS) for v in value
        ):
            return None
        values = frozenset(value)
    else:
        return None
    return ast.unparse(left), values, isinstance(op, (ast.Eq, ast.In))


#: Calls that make an empty container.
_EMPTY_CONTAINERS = frozenset(
    {"set", "dict", "list", "tuple", "frozenset", "OrderedDict", "defaultdict", "deque", "Counter"}
)


def _encloses(lines: dict[int, str], line: int, below: int) -> bool:
    """Whether the block holding line ``line`` of the excerpt ``lines`` goes
    on to line ``below``: no code line between them (``below`` included) is
    indented less (blank lines, comments and closing brackets aside). A
    binding in an ``if`` or ``else`` branch, a loop or a ``try`` that ends
    before the test may not have run when the test runs (interface.py:459
    of v0.5.19 sets ``seqlen_k`` in an ``else`` the paged path never takes)."""
    text = lines.get(line, "")
    indent = len(text) - len(text.lstrip(" \t"))
    for n in range(line + 1, below + 1):
        other = lines.get(n, "")
        code_text = other.lstrip(" \t")
        if not code_text or code_text[0] in "#)]}":
            continue
        if len(other) - len(code_text) < indent:
            return False
    return True


#: The names of mappings of arguments or configuration: a key of one read by
#: the setting's name is that setting (``kwargs.get("model_path")`` in
#: ``PipelineConfig.from_kwargs``, whose kwargs are the server's arguments).
_ARGUMENT_MAPS = re.compile(r"(?i)args|kwargs|config|cfg|settings")


def _names_it(value: str, name: str) -> bool:
    """Whether the expression ``value`` names ``name`` as code (a name, an
    attribute: ``server_args.x``, ``int(x)``), as the attribute string of a
    ``getattr`` (``getattr(args, "x", 1)``), or as the key read from a
    mapping of arguments or configuration (:data:`_ARGUMENT_MAPS`:
    ``kwargs.get("x")``, ``cfg["x"]``); a key of another mapping (a request's
    ``options.get("num_frames")``) does not. Read as text when it does not
    parse."""
    node = parse_expr(value)
    if node is None:
        return re.search(rf"\b{re.escape(name)}\b", value) is not None
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name) and sub.id == name:
            return True
        if isinstance(sub, ast.Attribute) and sub.attr == name:
            return True
        if isinstance(sub, ast.Call) and len(sub.args) >= 1:
            func = sub.func
            getter = isinstance(func, ast.Name) and func.id == "getattr" and len(sub.args) >= 2
            key = sub.args[1] if getter else None
            if (
                isinstance(func, ast.Attribute)
                and func.attr in ("get", "pop", "setdefault")
                and _ARGUMENT_MAPS.search(dotted(func.value) or "")
            ):
                key = sub.args[0]
            if isinstance(key, ast.Constant) and key.value == name:
                return True
        if (
            isinstance(sub, ast.Subscript)
            and isinstance(sub.slice, ast.Constant)
            and sub.slice.value == name
            and _ARGUMENT_MAPS.search(dotted(sub.value) or "")
        ):
            return True
    return False


def _looked_into(text: str) -> frozenset[str]:
    """The bare names the expression ``text`` tests membership in
    (``variant not in _valid`` -> ``_valid``)."""
    node = parse_expr(text)
    if node is None:
        return frozenset()
    return frozenset(
        right.id
        for sub in ast.walk(node)
        if isinstance(sub, ast.Compare)
        for op, right in zip(sub.ops, sub.comparators, strict=True)
        if isinstance(op, (ast.In, ast.NotIn)) and isinstance(right, ast.Name)
    )


def _literal_collection(value: str) -> bool:
    """A tuple, list or set of literal constants (``("auto", "cuda")``),
    short enough for a line."""
    node = parse_expr(value)
    return (
        len(value) <= 120
        and isinstance(node, (ast.Tuple, ast.List, ast.Set))
        and bool(node.elts)
        and all(isinstance(e, ast.Constant) for e in node.elts)
    )


def _says_little(value: str) -> bool:
    """A value not worth showing: a literal start value (a counter, a
    default, a flag set to ``False`` first), or one too long for a line."""
    node = parse_expr(value)
    if len(value) > 120 or node is None:
        return True
    if isinstance(node, ast.Call) and not node.args and not node.keywords:
        if isinstance(node.func, ast.Name) and node.func.id in _EMPTY_CONTAINERS:
            return True  # ``slots = set()``: filled further down
    return isinstance(node, (ast.Constant, ast.Tuple, ast.List, ast.Dict)) and not any(
        isinstance(sub, ast.Call) for sub in ast.walk(node)
    )


def _one_paragraph(first: int, last: int, lines: dict[int, str]) -> bool:
    """Lines ``first`` .. ``last`` of the excerpt ``lines`` are one paragraph:
    none is blank or missing (zaya.py:394-400: a comment above two asserts)."""
    return first < last and all(lines.get(n, "").strip() for n in range(first, last + 1))


def _closed(text: str) -> str:
    """A quoted sentence with one full stop at its end; one cut short ends
    with its ellipsis alone ("... buffer_only requires…", never "…."), and one
    that ends inside its own quotes keeps that end ("... path instead.'")."""
    if text.rstrip("'\")]").endswith((".", "…", "!", "?")) and text[-1:] in "'\")]":
        return text
    text = text.rstrip(".")
    return text if text.endswith(("…", "!", "?")) else text + "."


def _excluded_values(terms: Iterable[Term]) -> dict[str, tuple[str, ...]]:
    """Option field -> every value the conjuncts that are one atom rule out
    (``!=`` / ``not in``), those that lead to another error included:
    ``mode != "prefill"`` and an exit ``if mode == "decode": raise`` leave
    only the other choices."""
    out: dict[str, tuple[str, ...]] = {}
    for term in terms:
        clause = term.parts[0].clause if term.cond.op == "atom" else None
        if clause is None or clause.read is None or clause.read.kind != "option":
            continue
        if clause.condition.op in ("!=", "not in") and clause.condition.values:
            known = out.get(clause.read.target, ())
            out[clause.read.target] = tuple(dict.fromkeys((*known, *clause.condition.values)))
    return out


def _with_excluded(clause: Clause, excluded: Mapping[str, tuple[str, ...]]) -> Clause:
    """``clause`` ruling out every value in ``excluded`` for its option
    (:func:`_excluded_values`) when it rules out some itself."""
    read, cond = clause.read, clause.condition
    if read is None or read.kind != "option" or cond.op not in ("!=", "not in"):
        return clause
    values = excluded.get(read.target, cond.values)
    if values == cond.values:
        return clause
    return Clause(replace(cond, op="not in", values=values), read)


def _branch_raises(lines: dict[int, str], guard: Guard | None) -> bool:
    """Whether ``guard`` is the test of an earlier branch of the site's
    ``if`` / ``elif`` chain (an ``if`` guard, ``negated``) whose own branch
    raises first thing, as the excerpt ``lines`` shows it (``elif load_format == DUMMY:
    raise ValueError(...)`` before the ``else`` that holds the site): making
    the test true gets that error instead."""
    if guard is None or guard.kind != "if" or not guard.negated:
        return False
    found = _excerpt_exit(lines, guard.line)
    return found.kind == "raise" and found.first


def _catches(types: str, exception: str) -> bool:
    """Whether an ``except`` of ``types`` (as written: ``(ValueError,
    KeyError)``, ``json.JSONDecodeError``, ``""`` for a bare ``except``)
    catches ``exception`` (a class name): the name itself, or a built-in
    exception class it derives from when it is built in (``Exception`` does
    not catch ``SystemExit``); for a class of the commit, ``Exception`` and
    ``BaseException`` (taken to be among its bases: they are not read)."""
    if not types:
        return True
    names = {part.strip().rsplit(".", 1)[-1] for part in types.strip("()").split(",")}
    if exception in names:
        return True
    raised = getattr(builtins, exception, None)
    if not (isinstance(raised, type) and issubclass(raised, BaseException)):
        return bool(names & {"Exception", "BaseException"})
    return any(
        isinstance(base := getattr(builtins, n, None), type)
        and issubclass(base, BaseException)
        and issubclass(raised, base)
        for n in names
    )


def _loop_item(term: Term) -> bool:
    """Whether ``term`` is only "the ``for`` loop around the site has an
    item" (an atom of kind ``loop``)."""
    return term.cond.op == "atom" and term.cond.kind == "loop"


def _loop_exit(term: Term) -> bool:
    """Whether ``term`` is a ``while`` loop's test found false because the
    loop above the site ended (an ``exit-while``): making it true keeps the
    loop running, which is no way to avoid the error."""
    return term.origin is not None and term.origin.kind == "exit-while"


def _flat(cond: Condition) -> bool:
    """An atom, or an ``or`` / ``and`` of atoms (its negation reads plainly)."""
    return cond.op == "atom" or all(a.op == "atom" for a in cond.args)


_WHETHER = re.compile(
    r"^(?:returns?\s+|checks?\s+|tells?\s+)?(?:whether|true\s+(?:if|when|iff))\s+(?P<what>.+?)\.?$",
    re.I,
)


def whether_clause(doc: str) -> str | None:
    """What a predicate's docstring says it tells, as a clause: "Whether the
    model keeps recurrent state." -> ``the model keeps recurrent state``;
    "Return True if X." -> ``X``; None for other docstrings."""
    m = _WHETHER.match(first_sentence(doc))
    if m is None:
        return None
    what = m.group("what").strip()
    if len(what.split()) < 3 or what.lower().startswith(("or ", "not ")):
        return None
    return what.replace('"', "'")


def _close(text: str) -> str:
    """A sentence ending in exactly one full stop (after a closing quote too)."""
    text = text.strip()
    text = re.sub(r'\.+"$', '."', text)
    if text.endswith('."') or text.endswith((".", "!", "?")):
        return text
    return text + "."


@lru_cache(maxsize=4096)
def _taken(exit: Guard) -> Condition:
    """The condition under which the ``exit`` guard's branch is taken."""
    return condition_from([replace(exit, kind="if", negated=False)])


def _one_line(text: str) -> str:
    return " ".join(text.split())


#: Words of a message about a package or module to install.
_ABOUT_PACKAGES = re.compile(
    r"\b(install|installed|pip|package|module|library|import|not found|missing|version"
    r"|requires?|needs?|available|unavailable)\b",
    re.IGNORECASE,
)


def _quoted_message(message: str) -> str:
    """A message on one line as written, cut at a word past
    :data:`MAX_NEXT_MESSAGE` characters (:func:`~miner.analysis.remedy.cut_text`)."""
    text = " ".join(message.split())
    return text if len(text) <= MAX_NEXT_MESSAGE else cut_text(text, MAX_NEXT_MESSAGE)


def _values_tested(test: str) -> frozenset[str]:
    """:func:`~miner.analysis.resolvers.test_names` of ``test`` less the
    functions it calls (``os.path.isfile`` of two files is two values)."""
    return frozenset(n for n in test_names(test) if not re.search(rf"\b{n}\s*\(", test))


def _defaults_to_none(opt: Option) -> bool:
    """Whether ``opt``'s default is ``None`` (left out, it holds ``None``)."""
    return opt.default in (None, "None")


def _none_left_out(opt: Option, values: Sequence[str]) -> tuple[bool, list[str]]:
    """``(whether ``None`` among ``values`` is ``opt`` left out, the other
    values)``: of a setting that defaults to ``None``, the value ``None`` is
    not one to compare with its choices."""
    unset = "None" in values and _defaults_to_none(opt)
    return unset, [v for v in values if v != "None"] if unset else list(values)


def _left_out(r: Reading, name: str) -> str | None:
    """The conjunct of ``r`` that needs the setting ``name`` not given
    (``cfg.sidecar is None``), as shown, or None."""
    pattern = re.compile(rf"(?:^|\.){re.escape(name)} is None$")
    for term in r.terms:
        if term.cond.op == "atom" and pattern.search(term.cond.text()):
            return term.cond.text()
    return None


def _own_if(guard: Guard, site: Site) -> bool:
    """Whether ``guard`` is the ``if`` whose true branch holds ``site`` (the
    check that raises it)."""
    return guard.kind == "if" and not guard.negated and guard.line < site.line


def _module_of(path: str) -> str:
    if path.startswith("python/"):
        path = path[len("python/") :]
    if path.endswith("/__init__.py"):
        path = path[: -len("/__init__.py")]
    elif path.endswith(".py"):
        path = path[:-3]
    return path.replace("/", ".")


def _callers_at(callers: Sequence[Caller], most: int = 2) -> str:
    """The first ``most`` calling functions of ``callers`` with the places of
    their calls (up to 3 each, in order): "`A.f` (`p.py:521`, `p.py:588`),
    `B.g` (`q.py:12`)", each function named once."""
    places: dict[str, list[str]] = {}
    for caller in callers:
        if caller.scope in places or len(places) < most:
            places.setdefault(caller.scope, []).append(f"`{caller.path}:{caller.line}`")
    return ", ".join(f"{code(scope)} ({', '.join(at[:3])})" for scope, at in places.items())


# ---------------------------------------------------------------------- the callers' conditions


def _need_words(writer: Writer, need: Need) -> str:
    """A condition in the settings' terms where linked exactly, else as written."""
    parts = tuple(
        Part(atom, clause, need.origin, clause is not None and _exact_clause(clause))
        for atom, clause in zip(need.cond.atoms(), need.clauses, strict=True)
    )
    return writer.term_words(Term(need.cond, parts), brief=True)


def _exact_clause(clause: Clause) -> bool:
    return clause.read is not None and clause.read.exact


def _need_where(need: Need) -> str:
    guard = need.origin
    line = guard.line if guard is not None else need.call.line
    return f"`{need.call.path}:{line}`"


def _call_ref(reach: CallReach) -> str:
    note = ", matched by name" if reach.form == "name" else ""
    return f"{code(reach.scope)} (`{reach.path}:{reach.line}`{note})"


def _calling_scopes(calls: Sequence[CallReach]) -> list[CallReach]:
    """The first call of each calling function."""
    seen: dict[tuple[str, str], CallReach] = {}
    for c in calls:
        seen.setdefault((c.path, c.scope), c)
    return list(seen.values())


def _own_keys(reading: Reading) -> set[tuple[object, ...]]:
    """The site's own conditions linked exactly (said already)."""
    keys: set[tuple[object, ...]] = set()
    for part in reading.parts:
        clause = part.clause
        if clause is not None and clause.read is not None and clause.read.exact:
            c = clause.condition
            keys.add(("setting", (clause.read.kind, clause.read.target, c.op, tuple(c.values))))
    return keys


def new_needs(reading: Reading) -> tuple[Need, ...]:
    """The callers' common conditions the site's own do not say already."""
    reached = reading.callers
    if reached is None:
        return ()
    own = _own_keys(reading)
    return tuple(n for n in reached.needs if n.key not in own)


def callers_trigger(writer: Writer, reading: Reading) -> str | None:
    """ "Reached only through `caller` (path:line), when ..." for "When it
    happens", or None when no condition is common to every call."""
    reached = reading.callers
    needs = new_needs(reading)
    if reached is None or not needs:
        return None
    scopes = _calling_scopes(reached.calls)
    where = list(dict.fromkeys(_need_where(n) for n in needs[:MAX_NEEDS]))
    words = _needs_listed(writer, needs)
    name = code(reached.target)
    if len(scopes) == 1:
        more = len(reached.calls) - 1
        through = _call_ref(scopes[0])
        if more:
            through += f" and {plural(more, 'more call')} there"
        lead = f"Reached only through {through}: every call of {name} in the commit"
    else:
        listed = ", ".join(_call_ref(c) for c in scopes[:4])
        if len(scopes) > 4:
            listed += f" and {plural(len(scopes) - 4, 'more function')}"
        lead = f"Reached only through {listed}: every call of {name} in the commit"
    tested = ", ".join(where[:MAX_NEEDS])
    return f"{lead} runs only when {_joined_words(words)}, as tested at {tested}."


def said_by_callers_trigger(reading: Reading, scope: str, path: str) -> bool:
    """Whether :func:`callers_trigger` names the calls from ``scope`` in ``path``
    as the only way in ("Reached only through ..."), so that a "Common
    situations" line for them would repeat it."""
    reached = reading.callers
    if reached is None or not new_needs(reading):
        return False
    return {(c.scope, c.path) for c in reached.calls} == {(scope, path)}


def _needs_listed(writer: Writer, needs: Sequence[Need]) -> list[str]:
    """The first :data:`MAX_NEEDS` conditions in words, and how many more."""
    words = [_need_words(writer, n) for n in needs[:MAX_NEEDS]]
    if len(needs) > MAX_NEEDS:
        words.append(plural(len(needs) - MAX_NEEDS, "more condition"))
    return words


def callers_situation(writer: Writer, reading: Reading, scope: str, path: str) -> str:
    """`` when <conditions>`` for the calls of the raising function from
    ``scope`` in ``path`` (the conditions all of them need), or empty."""
    reached = reading.callers
    if reached is None:
        return ""
    lists = [
        own
        for call, own in zip(reached.calls, reached.per_call, strict=True)
        if call.scope == scope and call.path == path
    ]
    if not lists:
        return ""
    keys = set.intersection(*({n.key for n in own} for own in lists))
    needs = [n for n in lists[0] if n.key in keys]
    if not needs:
        return ""
    forms = {c.form for c in reached.calls if c.scope == scope and c.path == path}
    note = " (matched by name)" if forms == {"name"} else ""
    return f"{note} when {_joined_words(_needs_listed(writer, needs))}"


def callers_fixes(writer: Writer, reading: Reading) -> list[Fix]:
    """A way out for each setting every call needs, read exactly (not from
    an early exit that raises another error instead)."""
    reached = reading.callers
    out: list[Fix] = []
    if reached is None:
        return out
    for need in new_needs(reading):
        if need.raising or not need.exact or need.cond.op != "atom":
            continue
        clause = need.clauses[0]
        assert clause is not None
        if writer.unrelated_switch(clause, reading):
            continue
        for fix in writer.clause_fixes(clause, True, reading.site.path):
            note = (
                f" Every call of {code(reached.target)} in the commit needs it "
                f"(tested at {_need_where(need)})."
            )
            out.append(Fix(fix.text.rstrip() + note, fix.example))
    return out


def callers_evidence(reading: Reading) -> list[str]:
    """One line per link of a callers' common condition to a setting."""
    out = []
    for need in new_needs(reading):
        for clause in need.clauses:
            if clause is not None and clause.read is not None:
                how = "exact" if clause.read.exact else "by name only"
                out.append(
                    f"{clause.read.evidence} ({how}; guard of the call at "
                    f"`{need.call.path}:{need.call.line}` in `{need.call.scope}`)"
                )
    return out


def _joined_words(items: Sequence[str]) -> str:
    return joined(list(items))


def _library(path: str) -> bool:
    """Whether ``path`` is code that runs as part of the program: not a test
    or a script (vendored code is: the program imports it)."""
    kind = path_kind(path)
    return kind is None or kind[0] == "vendored"


def _imported_words(module: str | None, own: bool) -> str:
    """What the install fix says of the import that failed: the module the
    code imports; for the repository's own module (``own``), that an import
    inside it failed (the missing package is one it imports)."""
    if not module:
        return ""
    if own:
        return f" (an import inside {code(module)}, a module of this repository, failed)"
    return f" (the code imports {code(module)})"
