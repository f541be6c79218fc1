"""Guard links and card sections on a small repository shaped like SGLang (our own code)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from test_analysis_config import DATACLASS_REPO

from miner import pipeline
from miner.analysis import analyze
from miner.analysis.code import SourceIndex
from miner.analysis.config import mine_config
from miner.analysis.links import Linker
from miner.model import Guard
from miner.publish.cards import grouped, render_card

COMPONENT = '''\
from pkg.context import extra_buffer_enabled, get_disagg
from pkg.environ import envs


class AuxComponent:
    """Radix component for auxiliary state snapshots."""

    def __init__(self, cache, params):
        if params.enable_extra_buffer:
            raise NotImplementedError("aux state does not support enable_extra_buffer yet.")
        self.cache = cache


def build_cache(ctx, params):
    """Build the unified cache."""
    if get_disagg().retraction_backup == "host_pool":
        if ctx.is_hybrid_ssm:
            raise ValueError("Host-pool retraction does not support hybrid models.")
    if envs.PKG_DEBUG.get():
        raise RuntimeError("debug caches are not built")
    if extra_buffer_enabled():
        raise NotImplementedError("extra buffer in build_cache")
    return AuxComponent(ctx, params)


def check(batch):
    assert len(batch) > 0, "empty batch"


def start(server_args, ctx, params):
    return build_cache(ctx, params)
'''

FILES = {**DATACLASS_REPO, "pkg/component.py": COMPONENT}
#: The sections of a card, in the sample cards' order; Solutions and Example
#: fix only when there is one (:data:`OPTIONAL`).
HEADINGS = (
    "## Error message",
    "## What it means",
    "## Source",
    "## Solutions",
    "## Example fix",
    "## When it happens",
    "## Related errors",
)
OPTIONAL = ("## Solutions", "## Example fix")


def mine_fixture(tmp_path_factory: pytest.TempPathFactory):
    """Mine :data:`FILES` committed as ``v1`` in a new repository."""
    import git
    from conftest import commit_all, write_files

    root = tmp_path_factory.mktemp("sglike")
    write_files(root, FILES)
    commit_all(git.Repo.init(root, initial_branch="main"), "fixture", "v1")
    return pipeline.mine_and_analyze(str(root), "v1", slug="acme/sglike")


@pytest.fixture(scope="module")
def mined(tmp_path_factory: pytest.TempPathFactory):
    done = mine_fixture(tmp_path_factory)
    out = tmp_path_factory.mktemp("out")
    pipeline.publish(done, out)
    published = {p.stem: p.read_text() for p in (out / "errors").glob("*.md")}
    # The prose of every error as its card shows it: an internal check's card
    # is not published (its entry is on the page of its module), the analysis is.
    by_id = {e.error_id: e for e in done.result.errors}
    cards = {
        e.error_id: published.get(e.error_id)
        or render_card(e, done.result.commit, done.analyses[e.error_id], by_id)
        for e in done.result.errors
    }
    assert set(published) == {
        e.error_id for e in done.result.errors if not grouped(done.analyses[e.error_id].audience)
    }
    return done, out, cards


def card_for(mined, message_start: str) -> str:
    result, _, cards = mined[0].result, mined[1], mined[2]
    error = next(e for e in result.errors if (e.message or "").startswith(message_start))
    return cards[error.error_id]


def section(card: str, heading: str) -> str:
    start = card.index(heading)
    nxt = card.find("\n## ", start + 1)
    return card[start : nxt if nxt != -1 else len(card)]


def test_by_name_link_through_derived_setting(mined):
    card = card_for(mined, "aux state")
    trigger = section(card, "## When it happens")
    assert "`params.enable_extra_buffer` is true; it carries the name of the derived setting" in (
        trigger
    )
    assert "`ServerArgs.enable_extra_buffer()`" in trigger
    assert "`--disable-radix-cache` is off (not given)" in trigger
    assert "`--cache-strategy` is one of `extra` or `extra_lazy`" in trigger
    assert "(by name only; guard at line 9)" in trigger
    meaning = section(card, "## What it means")
    assert (
        "When `AuxComponent` is constructed, this is raised when `params.enable_extra_buffer` "
        "is true. By its name, `params.enable_extra_buffer` is the derived setting "
        "`ServerArgs.enable_extra_buffer()`, true when `--disable-radix-cache` is off (not "
        "given) and `--cache-strategy` is one of `extra` or `extra_lazy`."
    ) in meaning
    solutions = section(card, "## Solutions")
    # `auto` is never proposed: without resolution facts it may become `extra`
    assert (
        "1. If `params.enable_extra_buffer` holds the command-line value: set "
        "`--cache-strategy` to `none` (the deprecated alias `--cache-policy` sets the same "
        "value). Leaving the flag out keeps its default `auto`, which is resolved at "
        "start-up and may become `extra` or `extra_lazy`."
    ) in solutions
    assert (
        "2. If `params.enable_extra_buffer` holds the command-line value: pass "
        '`--disable-radix-cache`. Its help says: "Disable the radix cache."' in solutions
    )
    assert "`auto`;" not in solutions and "to `auto`" not in solutions
    assert "--enable-extra-buffer" not in card


def test_exact_link_through_accessor_with_choices(mined):
    card = card_for(mined, "Host-pool")
    trigger = section(card, "## When it happens")
    assert "- `--retraction-backup` is `host_pool` (line 16)" in trigger
    assert "- `ctx.is_hybrid_ssm` is true (line 17)" in trigger
    assert "(exact; guard at line 16)" in trigger
    meaning = section(card, "## What it means")
    assert (
        "You get this with `--retraction-backup host_pool` when `ctx.is_hybrid_ssm` is true, "
        "in `build_cache`."
    ) in meaning
    solutions = section(card, "## Solutions")
    assert (
        "1. Set `--retraction-backup` to `cpu_tensor`; or leave `--retraction-backup` out: "
        "its default is `None`." in solutions
    )
    # "It is not raised when `ctx.is_hybrid_ssm` is false" is no solution: left out
    assert "2. " not in solutions and "not raised" not in card
    fix = section(card, "## Example fix")
    assert "python -m pkg.launch_server ... --retraction-backup host_pool" in fix
    assert "python -m pkg.launch_server ... --retraction-backup cpu_tensor" in fix


def test_environment_registry_link(mined):
    card = card_for(mined, "debug caches")
    assert "the environment variable `PKG_DEBUG` is set to a true value (default `False`)" in card
    assert "You get this with `PKG_DEBUG=1`, in `build_cache`." in card
    assert (
        "Unset `PKG_DEBUG` or set it to a false value, `PKG_DEBUG=0` "
        "(declared at `pkg/environ.py:25`, default `False`)." in card
    )
    assert "PKG_DEBUG=1 python -m pkg.launch_server ..." in card


def test_predicate_function_link(mined):
    card = card_for(mined, "extra buffer in build_cache")
    assert "`extra_buffer_enabled()` is true: the derived setting `extra_buffer_enabled()`" in card
    assert "`--cache-strategy` is one of `extra` or `extra_lazy`" in card
    # the exit before it raises another error: not a way out, not what leads here
    trigger = section(card, "## When it happens")
    assert (
        "- the environment variable `PKG_DEBUG` is unset or false (default `False`): the code "
        "raises another error at line 20 otherwise" in trigger
    )
    assert "PKG_DEBUG=1" not in section(card, "## Solutions")
    assert "PKG_DEBUG" not in section(card, "## What it means")


def test_card_without_settings_says_what_the_code_checks(mined):
    done, out, _ = mined
    error = next(e for e in done.result.errors if e.message == "empty batch")
    assert done.analyses[error.error_id].audience == "internal"
    assert not (out / "errors" / f"{error.error_id}.md").exists()
    entries = (out / "internal" / "pkg.component.md").read_text()
    assert f'<a id="{error.error_id}"></a>\n### `AssertionError`: `empty batch`' in entries
    assert "- Test: `assert len(batch) > 0`" in entries
    card = card_for(mined, "empty batch")
    trigger = section(card, "## When it happens")
    assert "- `len(batch) <= 0`: the assertion at line 27 fails" in trigger
    assert "No flag or environment variable is involved" not in card
    # the rule writer's words (the default); the report finding is in the record
    assert "In `check`, this is raised when `len(batch) <= 0`." in card
    findings = done.analyses[error.error_id].findings
    assert [(f.kind, f.rule) for f in findings] == [("report", "report")]
    solutions = section(card, "## Solutions")
    # the assertion's negation is no solution: only the bug report is left
    assert "1. If your settings and inputs are valid, report it as a bug" in solutions
    assert "2. " not in solutions and "--" not in solutions
    assert "## Example fix" not in card
    assert "not (not" not in card


def test_situations_from_callers(mined):
    card = card_for(mined, "Host-pool")
    assert "`start` calls `build_cache` at `pkg/component.py:" in card
    aux = card_for(mined, "aux state")
    assert "`build_cache` calls `AuxComponent` at `pkg/component.py:23`" in aux
    assert "reached from `start`" in aux


def test_every_card_has_every_section_and_real_flags(mined):
    done, out, cards = mined
    result, config = done.result, done.facts.config
    flags = config.flag_names()
    assert len(cards) == len(result.errors) == 5
    for card in cards.values():
        shown = [h for h in HEADINGS if f"\n{h}\n" in card]
        assert [h for h in HEADINGS if h not in OPTIONAL] == [h for h in shown if h not in OPTIONAL]
        assert sorted(shown, key=card.index) == shown  # in the sample cards' order
        for heading in shown:
            body = section(card, heading)[len(heading) :].strip()
            assert body, heading
        for flag in re.findall(r"(?<![\w-])--[a-z][\w-]*", card):
            assert flag in flags, flag
        assert "Analysis generated from the source at " in card
    assert (out / "config.json").is_file()


def test_related_errors_deterministic_and_exclude_self(mined):
    done, _, _ = mined
    result = done.result
    first = analyze(result, done.facts)
    second = analyze(result, done.facts)
    assert first == second
    for eid, analysis in first.items():
        assert eid not in analysis.related
        assert 0 < len(analysis.related) <= 5
    host = next(e for e in result.errors if (e.message or "").startswith("Host-pool"))
    card = card_for(mined, "Host-pool")
    related = section(card, "## Related errors")
    other = first[host.error_id].related[0]
    title = next(e.title for e in result.errors if e.error_id == other)
    assert f"- [{title}]({other}.md)" in related


def test_negated_guard_flips_the_condition():
    index = SourceIndex({p: t.encode() for p, t in FILES.items()})
    linker = Linker(mine_config(index))
    link = linker.link_guard(0, Guard("if", 'server_args.cache_strategy == "auto"', True, 3))
    clause = link.clauses[0]
    assert clause.read is not None and clause.read.exact
    assert (clause.condition.name, clause.condition.op, clause.condition.values) == (
        "server_args.cache_strategy",
        "!=",
        ("auto",),
    )
    both = linker.link_guard(
        1, Guard("if", "not args.disable_radix_cache and args.cache_strategy in ('x',)", True, 5)
    )
    assert both.mode == "any"
    assert [c.condition.op for c in both.clauses] == ["truthy", "not in"]


def test_write_output_is_stable(mined, tmp_path: Path):
    done, out, _ = mined
    counts = pipeline.publish(done, out)["output"]
    assert counts["written"] == 0


def _count_pools(monkeypatch) -> list[int]:
    """The worker count of every pool :func:`miner.lifecycle.worker_pool`
    starts from now on (each must start)."""
    from miner import lifecycle

    started: list[int] = []
    real_pool = lifecycle.worker_pool

    def counted(jobs, initializer, *args):
        pool = real_pool(jobs, initializer, *args)
        assert pool is not None
        started.append(jobs)
        return pool

    monkeypatch.setattr(lifecycle, "worker_pool", counted)
    return started


def test_facts_and_analyses_in_worker_processes_are_the_same(tmp_path: Path, monkeypatch):
    """``jobs`` > 1: the call facts beside, the files around the settings and
    the errors spread over forked processes (one item per task here); the
    facts and every analysis equal one process's."""
    import git
    from conftest import commit_all, write_files

    from miner import analysis
    from miner.analysis import resolvers

    resolving = {
        "pkg/hybrid.py": (
            "def check(server_args, ctx):\n"
            "    if server_args.cache_strategy == 'host' and ctx.is_hybrid:\n"
            "        raise ValueError('host cache strategy does not support hybrid models')\n"
        ),
        "pkg/resolve.py": (
            "def resolve(server_args, ctx):\n"
            "    # A hybrid model keeps recurrent state, so it stays on the cpu strategy.\n"
            "    server_args.cache_strategy = 'cpu' if ctx.is_hybrid else 'host'\n"
        ),
    }
    write_files(tmp_path, {**FILES, **resolving})
    commit_all(git.Repo.init(tmp_path, initial_branch="main"), "fixture", "v1")
    mining = pipeline.start_mining(str(tmp_path), "v1", slug="acme/sglike")
    serial = pipeline.gather_facts(mining.repo, mining.entries, mining.result)
    # something from each part to compare
    assert serial.notes["cache_strategy"][0].line == 2
    assert serial.choices["cache_strategy"][0].path == "pkg/resolve.py"
    assert serial.call_reach and serial.config.options
    started = _count_pools(monkeypatch)
    monkeypatch.setattr(analysis, "PARALLEL_MIN", 1)
    monkeypatch.setattr(analysis, "CHUNK", 1)
    monkeypatch.setattr(resolvers, "FILES_PER_TASK", 1)
    forked = pipeline.gather_facts(mining.repo, mining.entries, mining.result, jobs=2)
    assert started == [1, 2]  # the call facts beside; the files around the settings
    assert forked == serial
    together = analyze(mining.result, serial)
    apart = analyze(mining.result, forked, jobs=2)
    assert started == [1, 2, 2]
    assert list(apart) == list(together) and apart == together


def test_cards_rendered_in_worker_processes_are_the_same(make_repo, monkeypatch):
    """``jobs`` > 1: the error records, cards and grouped pages rendered by
    forked processes (one item per task here) are the files of one process,
    in the same order."""
    from miner.publish import cards

    repo = make_repo({**FILES, "pkg/check.py": "def f(x):\n    assert x > 0\n"})
    mined = pipeline.mine_and_analyze(str(repo), "v1", slug="acme/sglike")

    def texts(files):
        return [(rel, t if isinstance(t, str) else "".join(t)) for rel, t in files]

    serial = texts(cards.output_files(mined.result, mined.analyses))
    assert any(rel.startswith("errors/") for rel, _ in serial)
    assert any(rel.startswith("internal/") for rel, _ in serial)
    assert len({rel for rel, _ in serial}) == len(serial)  # each path once
    started = _count_pools(monkeypatch)
    monkeypatch.setattr(cards, "PARALLEL_MIN", 1)
    monkeypatch.setattr(cards, "CHUNK", 1)
    forked = texts(cards.output_files(mined.result, mined.analyses, jobs=2))
    assert started == [2]
    assert forked == serial
