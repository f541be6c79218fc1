"""Analysis over mined records: the prose sections of the cards, from the facts.

``analyze(result)`` is the one entry point the renderers call; it returns one
:class:`~miner.model.Analysis` per error. The stages, each its own module:

* :mod:`~miner.analysis.facts` gathers, once per commit, the
  :mod:`~miner.analysis.config` model (flags, settings, derived settings,
  environment variables), the :mod:`~miner.analysis.callers` of raising
  functions and the repository's :mod:`~miner.analysis.exceptions`;
* :mod:`~miner.analysis.links` links each guard to the settings it reads;
* :mod:`~miner.analysis.sections` writes the sections by rules;
* :mod:`~miner.analysis.related` ranks related errors;
* :mod:`~miner.analysis.llm` optionally rewrites the prose with a language model.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from miner.analysis.audience import Settings, classify_all
from miner.analysis.facts import RepoFacts
from miner.analysis.links import GuardLink, Linker, settings_of
from miner.analysis.related import related_errors
from miner.analysis.sections import Writer
from miner.model import Analysis, MineResult

if TYPE_CHECKING:
    from miner.analysis.llm import LLMSettings


def evidence(links: tuple[GuardLink, ...]) -> tuple[str, ...]:
    """One Markdown line per guard-to-setting link: what matched, exact or by name."""
    lines = []
    for link in links:
        for clause in link.clauses:
            if clause.read is not None:
                how = "exact" if clause.read.exact else "by name only"
                lines.append(f"{clause.read.evidence} ({how}; guard at line {link.guard.line})")
    return tuple(dict.fromkeys(lines))


def rule_author(short_sha: str) -> str:
    return f"Analysis generated from the source at {short_sha}"


def analyze(
    result: MineResult, facts: RepoFacts, llm: LLMSettings | None = None
) -> dict[str, Analysis]:
    """One :class:`Analysis` per error id of ``result``.

    ``facts`` are the commit's facts (:func:`miner.analysis.facts.collect`);
    with empty ones (``RepoFacts()``) the sections are written from the sites
    alone. With ``llm``, the four prose sections are rewritten by the model
    where its answer validates.
    """
    linker = Linker(facts.config, dict(facts.predicates))
    writer = Writer(facts, result.commit.short_sha)
    links = {e.error_id: linker.link_site(e.primary) for e in result.errors}
    related = related_errors(result.errors, {k: settings_of(v) for k, v in links.items()})
    audiences = classify_all(result.errors, Settings.from_config(facts.config, facts.predicates))
    author = rule_author(result.commit.short_sha)
    out: dict[str, Analysis] = {}
    for error in result.errors:
        site_links = links[error.error_id]
        solutions, example = writer.solutions(error, site_links)
        out[error.error_id] = Analysis(
            error_id=error.error_id,
            trigger=writer.trigger(error.primary, site_links),
            what_it_means=writer.what_it_means(error, site_links),
            situations=writer.situations(error.primary, site_links),
            solutions=tuple(solutions),
            example_fix=example,
            related=related[error.error_id],
            author=author,
            evidence=evidence(site_links),
            audience=audiences[error.error_id].audience.value,
            audience_rule=audiences[error.error_id].rule,
            audience_reason=audiences[error.error_id].reason,
        )
    if llm is not None:
        from miner.analysis.llm import rewrite

        out = rewrite(result, facts, out, links, llm)
    return out
