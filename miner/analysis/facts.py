"""Facts of one commit beyond the raise sites, gathered once after mining.

:func:`collect` reads the commit's files (path -> bytes, given by the
pipeline) and keeps only what the card writers need: the configuration model,
the predicate functions guards call, the callers of the functions that raise,
and the repository's own exception classes. :func:`miner.analysis.analyze`
is then a pure function of the mined records and these facts.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from miner.analysis.callers import Caller, crowded, find_callers, target_name
from miner.analysis.code import SourceIndex, call_name, parse_expr
from miner.analysis.config import (
    ConfigModel,
    Derived,
    Resolved,
    mine_config,
    mine_resolutions,
    predicate_function,
)
from miner.analysis.exceptions import ExceptionInfo, repo_exceptions
from miner.model import Site


@dataclass(frozen=True, slots=True)
class RepoFacts:
    """What the analysis knows about the commit besides its sites."""

    config: ConfigModel = field(default_factory=ConfigModel)
    predicates: Mapping[str, Derived] = field(default_factory=dict)
    """Module-level predicate functions called with no arguments in guards, by name."""
    callers: Mapping[str, tuple[Caller, ...]] = field(default_factory=dict)
    """Callers of each raising function's name (and of their callers: two levels)."""
    crowded: Mapping[str, int] = field(default_factory=dict)
    """Names called from too many files to list -> how many files."""
    exceptions: Mapping[str, ExceptionInfo] = field(default_factory=dict)
    """The repository's own exception classes used by the errors, by short name."""
    definitions: Mapping[str, int] = field(default_factory=dict)
    """How many times each raising function's name is defined in the commit."""
    resolved: Mapping[str, tuple[Resolved, ...]] = field(default_factory=dict)
    """Literal values the argument-handling code stores into each setting
    (:func:`miner.analysis.config.mine_resolutions`)."""

    def to_json(self) -> dict[str, Any]:
        return self.config.to_json()


def guard_calls(sites: Iterable[Site]) -> set[str]:
    """Names of functions called with no arguments in the sites' guard tests."""
    names: set[str] = set()
    seen: set[str] = set()
    for site in sites:
        for guard in site.guards:
            if guard.kind not in ("if", "while", "assert") or guard.test in seen:
                continue
            seen.add(guard.test)
            if "()" not in guard.test:
                continue
            tree = parse_expr(guard.test)
            if tree is None:
                continue
            for node in ast.walk(tree):
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.args:
                    name = call_name(node)
                    if name:
                        names.add(name)
    return names


def collect(files: Mapping[str, bytes], sites: Iterable[Site]) -> RepoFacts:
    """Gather the facts of a commit from its ``.py`` files (path -> bytes) and mined sites."""
    sites = list(sites)
    index = SourceIndex(files)
    config = mine_config(index)
    predicates: dict[str, Derived] = {}
    for name in sorted(guard_calls(sites)):
        found = predicate_function(index, name, config)
        if found is not None:
            predicates[name] = found
    targets = {t for t in (target_name(s.scope) for s in sites if not s.reraise) if t}
    level1 = find_callers(index, targets)
    second = {t for callers in level1.values() for c in callers if (t := target_name(c.scope))}
    level2 = find_callers(index, second - set(level1))
    callers = {**level2, **level1}
    busy = crowded(index, targets | second)
    exceptions = repo_exceptions(index, {s.exception for s in sites if s.exception})
    definitions = {t: len(index.definitions(t)) for t in sorted(targets)}
    resolved = mine_resolutions(index, config)
    return RepoFacts(
        config=config,
        predicates=predicates,
        callers=callers,
        crowded=busy,
        exceptions=exceptions,
        definitions=definitions,
        resolved=resolved,
    )
