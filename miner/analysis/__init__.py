"""Analysis over mined records: the prose sections of the cards, from the facts.

``analyze(result)`` is the one entry point the renderers call; it returns one
:class:`~miner.model.Analysis` per error. The stages, each its own module:

* :mod:`~miner.analysis.facts` gathers, once per commit, the
  :mod:`~miner.analysis.config` model (flags, settings, derived settings,
  environment variables), the :mod:`~miner.analysis.callers` of raising
  functions and the repository's :mod:`~miner.analysis.exceptions`;
* :mod:`~miner.analysis.origins` traces every value a primary site's
  condition and message read to its origins (flags, variables, model
  config, request, hardware, packages...) and finds the ``logged`` fact;
* :mod:`~miner.analysis.condition` joins each primary site's guards and early
  exits into one condition, and :mod:`~miner.analysis.links` links each of its
  atoms to the settings it reads;
* :mod:`~miner.analysis.sections` writes the sections by rules from that
  condition, with :mod:`~miner.analysis.wording` (conditions in words),
  :mod:`~miner.analysis.evidence` (comments, docstrings and help texts quoted)
  and :mod:`~miner.analysis.remedy` (the message's own advice);
* :mod:`~miner.analysis.findings` makes the typed, verified findings
  (cause, reason, fix, logged, unreachable, report) from the origins, which
  the templates word (the Writer's sections stay where an error has no
  finding of that kind: transitional);
* :mod:`~miner.analysis.related` ranks related errors;
* :mod:`~miner.analysis.llm` optionally rewrites the prose with a language model.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from miner.analysis.audience import AudienceDecision, Settings, classify, classify_by_origins
from miner.analysis.facts import RepoFacts
from miner.analysis.findings import findings_of
from miner.analysis.links import Linker, settings_of
from miner.analysis.related import RelatedIndex
from miner.analysis.sections import Reading, Writer, callers_evidence
from miner.lifecycle import fork_imap
from miner.model import Analysis, Error, MineResult

if TYPE_CHECKING:
    from miner.analysis.llm import LLMSettings


def evidence(reading: Reading) -> tuple[str, ...]:
    """One Markdown line per link of a condition atom to a setting: what
    matched, exact or by name, and the guard or exit it was read from."""
    lines = []
    for part in reading.linked:
        read = part.clause.read if part.clause is not None else None
        if read is None:
            continue
        how = "exact" if read.exact else "by name only"
        guard = part.origin
        where = ""
        if guard is not None:
            kind = "exit" if guard.kind.startswith("exit") or guard.kind == "asserted" else "guard"
            where = f"; {kind} at line {guard.line}"
        lines.append(f"{read.evidence} ({how}{where})")
    lines += callers_evidence(reading)  # the callers' conditions
    return tuple(dict.fromkeys(lines))


def rule_author(short_sha: str) -> str:
    return f"Analysis generated from the source at {short_sha}"


#: Fewer errors than this are analysed in this process (starting a pool costs
#: more than it saves).
PARALLEL_MIN = 1000
#: Errors per task sent to a worker of the analysis pool.
CHUNK = 200


@dataclass(frozen=True)
class _Job:
    """What the analysis of each error reads: the same for every error, built
    once, then shared by the workers of the pool (forked: not sent)."""

    errors: Sequence[Error]
    writer: Writer
    settings: Settings
    related: RelatedIndex
    author: str
    facts: RepoFacts

    def audience(self, error: Error) -> AudienceDecision:
        """Who can cause and fix ``error``: from its origins when the commit's
        were traced (:func:`~miner.analysis.audience.classify_by_origins`),
        else from the words and paths of its sites (:func:`classify`)."""
        if self.facts.origins:
            i = error.error_id
            return classify_by_origins(
                error,
                self.facts.origins.get(i, ()),
                self.settings,
                logged=self.facts.logged.get(i),
                unreachable=self.facts.unreachable.get(i),
            )
        return classify(error, self.settings)

    def one(self, error: Error) -> Analysis:
        """The analysis of ``error`` (the rule sections; no language model)."""
        decision = self.audience(error)
        reading = self.writer.read(error, decision.audience.value)
        items, example = self.writer.solutions(reading)
        origins = self.facts.origins.get(error.error_id, ())
        logged = self.facts.logged.get(error.error_id)
        unreachable = self.facts.unreachable.get(error.error_id)
        findings, dropped = findings_of(
            error,
            origins,
            decision.audience.value,
            self.facts,
            logged,
            unreachable,
            reading.condition,
        )
        return Analysis(
            error_id=error.error_id,
            trigger=self.writer.trigger(reading),
            what_it_means=self.writer.what_it_means(reading),
            situations=self.writer.situations(reading),
            solutions=tuple(text for _, text in items),
            solution_kinds=tuple(kind for kind, _ in items),
            example_fix=example,
            related=self.related.of(error),
            author=self.author,
            evidence=evidence(reading),
            audience=decision.audience.value,
            audience_rule=decision.rule,
            audience_reason=decision.reason,
            condition=reading.condition,
            condition_text=reading.condition.text(),
            origins=origins,
            logged=logged,
            unreachable=unreachable,
            findings=findings,
            dropped=dropped,
        )


def _analyses(job: _Job, jobs: int, progress: Callable[[], None] | None) -> list[Analysis]:
    """Every error's analysis, in order: in ``jobs`` forked processes when
    there are :data:`PARALLEL_MIN` errors or more, else in this one. Each
    error's analysis reads only ``job``, so the result is the same;
    ``progress`` is called once per analysis, as it arrives."""
    if len(job.errors) < PARALLEL_MIN:
        jobs = 1
    out = []
    for analysis in fork_imap(jobs, job.one, job.errors, CHUNK):
        out.append(analysis)
        if progress is not None:
            progress()
    return out


def analyze(
    result: MineResult,
    facts: RepoFacts,
    llm: LLMSettings | None = None,
    jobs: int = 1,
    progress: Callable[[], None] | None = None,
) -> dict[str, Analysis]:
    """One :class:`Analysis` per error id of ``result``, in error order.

    ``jobs`` > 1: that many forked processes analyse the errors (when there
    are :data:`PARALLEL_MIN` or more; the same analyses as one process).
    ``progress`` is called once per error analysed by the rules (before any
    rewrite by ``llm``), in this process.

    ``facts`` are the commit's facts (:func:`miner.analysis.facts.collect`);
    with empty ones (``RepoFacts()``) the sections are written from the sites
    alone. With ``llm``, the four prose sections are rewritten by the model
    where its answer validates.
    """
    linker = Linker(facts.config, dict(facts.predicates))
    writer = Writer(facts, result.commit.short_sha, linker, result.sites)
    links = {e.error_id: linker.link_site(e.primary) for e in result.errors}
    related = RelatedIndex(result.errors, {k: settings_of(v) for k, v in links.items()})
    settings = Settings.from_config(facts.config, facts.predicates)
    author = rule_author(result.commit.short_sha)
    job = _Job(result.errors, writer, settings, related, author, facts)
    out = {a.error_id: a for a in _analyses(job, jobs, progress)}
    if llm is not None:
        from miner.analysis.llm import rewrite

        out = rewrite(result, facts, out, links, llm)
    return out
