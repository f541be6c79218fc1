"""Progress on stderr (:mod:`miner.progress`): the rate and ETA arithmetic on a
fake clock, the end lines, the live line on a fake terminal, and ``miner
mine`` / ``miner history`` printing one line per stage, or none with ``-q``."""

from __future__ import annotations

import io
import logging
import re
from pathlib import Path

import pytest
from conftest import add_commit

from miner import pipeline
from miner.analysis import analyze
from miner.analysis.facts import RepoFacts
from miner.cli import main
from miner.mining.extraction import MineOptions
from miner.progress import ETA_AFTER, Meter, Reporter, duration, printable

FILES = {
    "pkg/a.py": "def f(x):\n    if not x:\n        raise ValueError(f'bad {x!r}')\n",
    "pkg/b.py": "class C:\n    def g(self, n):\n        assert n > 0, 'n must be positive'\n",
    "pkg/c.py": "x = 1\n",
}

#: An end line: ``name: ... done in 1.2 s``.
END = re.compile(r"^(?P<name>[a-z0-9. ]+?): .*done in \d+\.\d s$")


class Clock:
    """A clock that moves only when told."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now

    def tick(self, seconds: float) -> None:
        self.now += seconds


class FakeTty(io.StringIO):
    def isatty(self) -> bool:
        return True


# --- arithmetic -------------------------------------------------------------


def test_cache_hits_at_once_do_not_inflate_the_rate_or_shorten_the_eta() -> None:
    clock = Clock()
    meter = Meter(clock, total=1000)
    clock.tick(0.5)  # reading the cache
    meter.add_free(900)  # 900 hits, all at once
    for _ in range(50):  # then 10 files parsed per second
        clock.tick(0.1)
        meter.add_worked(1)
    assert meter.done == 950
    assert meter.rate() == pytest.approx(10.0)
    assert meter.smoothed_rate() == pytest.approx(10.0)
    assert meter.eta() == pytest.approx(5.0)  # 50 left at 10 file/s, not 950 "done" in 5.5 s


def test_no_eta_until_measured_over_a_while_and_a_few_items() -> None:
    clock = Clock()
    meter = Meter(clock, total=3510)
    clock.tick(0.01)
    meter.add_worked(1)  # one file after 10 ms: 2 hours at 0.9 s/file was the old first ETA
    assert meter.eta() is None
    for _ in range(10):
        clock.tick(0.1)
        meter.add_worked(1)
    assert meter.work_seconds() < ETA_AFTER and meter.eta() is None
    clock.tick(ETA_AFTER)
    meter.add_worked(1)
    assert meter.eta() is not None
    assert Meter(clock).eta() is None  # no total, no ETA


def test_pool_start_slows_the_rate_but_not_the_eta() -> None:
    clock = Clock()
    meter = Meter(clock, total=200)
    clock.tick(1.0)
    meter.add_free(100)  # t=1: hits delivered
    clock.tick(4.0)  # t=5: the first parsed files, once the workers have started
    meter.add_worked(20)
    assert meter.eta() is None  # nothing measured since the first yet
    for _ in range(2):  # then 10 file/s
        clock.tick(1.0)
        meter.add_worked(10)
    assert meter.work_seconds() == pytest.approx(6.0)
    assert meter.rate() == pytest.approx(40 / 6)  # the end line's rate: start-up included
    assert meter.smoothed_rate() == pytest.approx(10.0)
    assert meter.eta() == pytest.approx(60 / 10.0)  # the 60 left at the pace now


def test_smoothed_rate_follows_a_change_of_speed_by_steps() -> None:
    clock = Clock()
    meter = Meter(clock, total=10_000)
    for _ in range(10):  # 10 file/s for 10 s
        clock.tick(1.0)
        meter.add_worked(10)
    assert meter.smoothed_rate() == pytest.approx(10.0)
    clock.tick(1.0)  # then 20 file/s: one window moves it 30 % of the way
    meter.add_worked(20)
    assert meter.smoothed_rate() == pytest.approx(13.0)
    assert meter.rate() == pytest.approx(120 / 11)
    assert meter.eta() == pytest.approx((10_000 - 120) / 13.0)


def test_durations_read_as_a_person_would() -> None:
    assert [duration(s) for s in (0.04, 31.94, 59.96, 125.4, 3600, 3725)] == [
        "0.0 s",
        "31.9 s",
        "1 min 00 s",
        "2 min 05 s",
        "1 h 00 min",
        "1 h 02 min",
    ]


def test_terminal_controls_in_names_are_escaped() -> None:
    assert printable("v1\x1b[2J\u202e") == "v1\\x1b[2J\\u202e"
    assert printable("v0.5.19 extraction") == "v0.5.19 extraction"


# --- the three forms --------------------------------------------------------


def run_extraction_like(reporter: Reporter, clock: Clock) -> None:
    with reporter.stage("extraction", total=10) as stage:
        stage.worked_label = "parsed"
        clock.tick(0.5)
        stage.free(6)
        for _ in range(4):
            clock.tick(1.0)
            stage.advance()
            stage.count("sites", 3)
    with reporter.stage("calls") as stage:
        clock.tick(2.25)
        stage.summary = "12 sites in 9 errors"


def test_not_a_terminal_prints_one_line_per_stage_when_it_ends() -> None:
    clock, stream = Clock(), io.StringIO()
    run_extraction_like(Reporter(stream, clock=clock), clock)
    assert stream.getvalue().splitlines() == [
        "extraction: 10 files (6 from cache, 4 parsed at 1.0 file/s, 12 sites) done in 4.5 s",
        "calls: 12 sites in 9 errors done in 2.2 s",
    ]


def test_quiet_prints_nothing_even_on_a_terminal() -> None:
    clock, stream = Clock(), FakeTty()
    reporter = Reporter(stream, quiet=True, clock=clock)
    run_extraction_like(reporter, clock)
    reporter.line("skipped")
    assert stream.getvalue() == ""


def test_terminal_shows_a_live_line_then_the_end_line_in_its_place() -> None:
    clock, stream = Clock(), FakeTty()
    reporter = Reporter(stream, clock=clock, columns=200)
    with reporter.stage("analysis", total=100, unit="error") as stage:
        assert stream.getvalue() == "\ranalysis: [....................] 0/100 errors 0.0 s\x1b[K"
        for _ in range(50):
            clock.tick(0.25)
            stage.advance()
        live = stream.getvalue().rsplit("\r", 1)[-1]
        assert live == "analysis: [##########..........] 50/100 errors 4.0 error/s ETA 12.5 s\x1b[K"
    assert stream.getvalue().endswith(
        live + "\r\x1b[Kanalysis: 50 errors (4.0 error/s) done in 12.5 s\n"
    )


def test_terminal_line_is_cut_to_the_width_and_log_records_print_above_it() -> None:
    clock, stream = Clock(), FakeTty()
    handler = logging.StreamHandler(stream)
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        reporter = Reporter(stream, clock=clock, columns=20)
        with reporter.stage("extraction", total=3):
            logging.getLogger("miner").error("pkg/bad.py: cannot parse")
        assert root.handlers.count(handler) == 1  # put back
    finally:
        root.removeHandler(handler)
    assert stream.getvalue().split("\r") == [
        "",
        "extraction: [......\x1b[K",
        "\x1b[Kpkg/bad.py: cannot parse\n",
        "extraction: [......\x1b[K",
        "\x1b[Kextraction: 0 files done in 0.0 s\n",
    ]


def test_a_stage_that_raises_clears_its_line_and_leaves_the_error_alone() -> None:
    clock, piped, tty = Clock(), io.StringIO(), FakeTty()
    for stream in (piped, tty):
        with pytest.raises(KeyboardInterrupt), Reporter(stream, clock=clock).stage("facts"):
            clock.tick(3.0)
            raise KeyboardInterrupt
    assert piped.getvalue() == ""
    assert tty.getvalue() == "\rfacts: 0.0 s\x1b[K\r\x1b[K"


# --- the pipeline's stages --------------------------------------------------


def test_extraction_counts_cache_hits_parsed_files_sites_and_failures(make_repo, tmp_path) -> None:
    root = make_repo({**FILES, "pkg/bad.py": "def f(:\n    raise X\n"})
    options = MineOptions(jobs=1, cache_dir=tmp_path / "cache")
    cold, warm = io.StringIO(), io.StringIO()
    pipeline.mine(str(root), "v1", options=options, reporter=Reporter(cold))
    pipeline.mine(str(root), "v1", options=options, reporter=Reporter(warm))
    first = cold.getvalue().splitlines()[0]
    assert re.fullmatch(
        r"extraction: 4 files \(\d[\d,.]* file/s, 2 sites, 1 failed\) done in \d+\.\d s", first
    ), first
    # a file that does not parse fails the same way again: its result is cached too
    assert warm.getvalue().splitlines()[0] == (
        "extraction: 4 files (4 from cache, 2 sites, 1 failed) done in "
        + re.findall(r"done in (\d+\.\d s)", warm.getvalue())[0]
    )
    add_commit(root, {"pkg/d.py": "raise KeyError('new')\n"}, tag="v2")
    newer = io.StringIO()
    pipeline.mine(str(root), "v2", options=options, reporter=Reporter(newer))
    line = newer.getvalue().splitlines()[0]
    assert re.fullmatch(
        r"extraction: 5 files \(4 from cache, 1 parsed at [\d,.]+ file/s, 3 sites, 1 failed\) "
        r"done in \d+\.\d s",
        line,
    ), line


def test_facts_show_each_part_of_the_collection_as_a_step(make_repo, monkeypatch) -> None:
    mining = pipeline.start_mining(str(make_repo(FILES)), "v1", options=MineOptions(jobs=0))
    clock, stream = Clock(), FakeTty()
    reporter = Reporter(stream, clock=clock, columns=200)
    seen: list[str] = []  # every live line asked for (the redraws are throttled on this clock)
    monkeypatch.setattr(reporter, "changed", lambda stage: seen.append(stage.live()))
    with reporter.stage("facts", unit="step") as stage:
        stage.measured = False
        pipeline.gather_facts(mining.repo, mining.entries, mining.result, stage=stage)
    assert seen == [
        "facts: [....................] 0/5 steps 0.0 s reading 3 files",
        "facts: [####................] 1/5 steps 0.0 s the sites' exits, names and values",
        "facts: [########............] 2/5 steps 0.0 s the callers and the configuration model",
        "facts: [############........] 3/5 steps 0.0 s the code around the settings",
        "facts: [################....] 4/5 steps 0.0 s the arguments of the calls",
        "facts: [####################] 5/5 steps 0.0 s",
    ]
    assert stream.getvalue().endswith("\r\x1b[Kfacts: 3 files read done in 0.0 s\n")


def test_analysis_calls_back_once_per_error(make_repo) -> None:
    result = pipeline.mine(str(make_repo(FILES)), "v1", options=MineOptions(jobs=0, cache=False))
    calls: list[None] = []
    analyses = analyze(result, RepoFacts(), progress=lambda: calls.append(None))
    assert len(calls) == len(analyses) == len(result.errors) == 2


def mine_cli(root: Path, out: Path, *extra: str) -> int:
    return main(["mine", "--repo", str(root), "--commit", "v1", "--out", str(out), *extra])


def test_mine_not_on_a_terminal_prints_each_stage_once_in_order(make_repo, tmp_path, capsys):
    root = make_repo(FILES)
    assert mine_cli(root, tmp_path / "out", "--no-cache") == 0
    lines = capsys.readouterr().err.splitlines()
    assert [END.match(line)["name"] for line in lines] == [  # type: ignore[index]
        "extraction",
        "calls",
        "facts",
        "origins",
        "analysis",
        "writing",
    ]
    assert re.fullmatch(r"facts: 3 files read done in \d+\.\d s", lines[2])
    assert re.fullmatch(r"origins: 2 errors traced done in \d+\.\d s", lines[3])
    assert lines[4].startswith("analysis: 2 errors (")
    assert re.match(r"writing: \d+ files \(.*, (\d+) written, 0 unchanged, 0 removed, ", lines[5])


def test_mine_again_says_which_stages_it_skipped(make_repo, tmp_path, capsys):
    root = make_repo(FILES)
    out = tmp_path / "out"
    assert mine_cli(root, out) == 0
    capsys.readouterr()
    assert mine_cli(root, out) == 0
    assert capsys.readouterr().err.splitlines()[1:] == [
        f"facts, analysis, rendering, writing: skipped ({out} was published from the same inputs)"
    ]


def test_mine_quiet_prints_no_progress(make_repo, tmp_path, capsys):
    assert mine_cli(make_repo(FILES), tmp_path / "out", "-q", "--no-cache") == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    assert "mined " in captured.out


def test_history_prints_each_release_stage_and_quiet_none(make_repo, tmp_path, capsys):
    root = make_repo(FILES, tag="v1.0")
    add_commit(root, {"pkg/c.py": "raise OSError('gone away')\n"}, tag="v1.1")

    def history(out: str, *extra: str) -> int:
        args = ["history", "--repo", str(root), "--out", str(tmp_path / out), "-j", "1"]
        return main([*args, "--cache-dir", str(tmp_path / "cache"), *extra])

    assert history("site") == 0
    lines = capsys.readouterr().err.splitlines()
    names = [m["name"] for m in map(END.match, lines) if m]
    # a release's calls run beside the next release's extraction
    assert sorted(names[:4]) == ["v1.0 calls", "v1.0 extraction", "v1.1 calls", "v1.1 extraction"]
    assert names.index("v1.0 extraction") < names.index("v1.0 calls")
    assert names[4:] == ["v1.1 facts", "v1.1 analysis", "retired analysis", "writing"]
    assert len(lines) == len(names) + 2  # and the per-release lines
    assert "v1.0: 2 errors" in lines and "v1.1: 3 errors" in lines
    assert history("quiet", "-q") == 0
    assert capsys.readouterr().err.splitlines() == ["v1.0: 2 errors", "v1.1: 3 errors"]
