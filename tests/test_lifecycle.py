"""Forked worker processes of the facts and the analysis (miner.lifecycle)."""

from __future__ import annotations

import os

from miner.lifecycle import beside, fork_map

PARENT = os.getpid()


def square_elsewhere(x: int) -> tuple[int, bool]:
    return x * x, os.getpid() != PARENT


def die_in_a_worker(x: int) -> int:
    if os.getpid() != PARENT:
        os._exit(3)  # a worker killed mid-task
    return x + 1


def test_fork_map_keeps_the_order_and_works_in_other_processes() -> None:
    out = fork_map(2, square_elsewhere, list(range(50)), 3)
    assert [v for v, _ in out] == [x * x for x in range(50)]
    assert all(elsewhere for _, elsewhere in out)
    # one process: few items, or one job
    assert fork_map(2, square_elsewhere, [1, 2], 3) == [(1, False), (4, False)]
    assert fork_map(1, square_elsewhere, list(range(9)), 1)[8] == (64, False)


def test_a_worker_that_dies_costs_time_not_the_result(caplog) -> None:
    assert fork_map(2, die_in_a_worker, list(range(10)), 2) == list(range(1, 11))
    assert "a worker process died" in caplog.text
    with beside(2, die_in_a_worker, 41) as result:
        pass
    assert result() == 42


def die_after_the_first_part(x: int) -> int:
    if os.getpid() != PARENT and x >= 4:
        os._exit(3)  # the first parts came back, then a worker died
    return x + 1


def test_fork_imap_streams_in_order_and_redoes_only_what_it_has_not_yielded(caplog) -> None:
    from miner.lifecycle import fork_imap

    stream = fork_imap(2, square_elsewhere, list(range(20)), 4)
    first = next(stream)
    assert first == (0, True)
    assert [v for v, _ in stream] == [x * x for x in range(1, 20)]
    assert list(fork_imap(2, die_after_the_first_part, list(range(12)), 2)) == list(range(1, 13))
    assert "a worker process died" in caplog.text
    # closed early: the workers are stopped, nothing hangs
    early = fork_imap(2, square_elsewhere, list(range(40)), 2)
    assert next(early) == (0, True)
    early.close()


def logged(x: int) -> int:
    with open(os.environ["LOGGED_TO"], "a") as handle:  # noqa: PTH123
        handle.write(f"{x}\n")
    return x


def test_a_slow_reader_holds_a_bounded_number_of_results(tmp_path, monkeypatch) -> None:
    import time

    from miner.lifecycle import IN_FLIGHT, fork_imap

    log = tmp_path / "done"
    monkeypatch.setenv("LOGGED_TO", str(log))
    stream = fork_imap(2, logged, list(range(200)), 2)
    assert next(stream) == 0
    time.sleep(1.5)  # the reader is slow: the workers wait for it
    done = len(log.read_text().split())
    assert done <= (2 * IN_FLIGHT + 1) * 2, done
    assert list(stream) == list(range(1, 200))
    assert len(log.read_text().split()) == 200


def frozen_here(x: int) -> int:
    import gc

    return gc.get_freeze_count()


def test_the_parent_objects_stay_frozen_while_workers_share_them() -> None:
    import gc

    from miner.lifecycle import fork_imap

    gc.unfreeze()
    kept = [object() for _ in range(10)]  # the parent's objects, tracked by the collector
    assert gc.get_freeze_count() == 0
    with beside(2, frozen_here, 0) as worker:
        assert gc.get_freeze_count() > 0  # frozen here while the fork runs
        stream = fork_imap(2, frozen_here, list(range(8)), 2)
        assert next(stream) > 0  # the worker inherits them frozen
        list(stream)
        assert gc.get_freeze_count() > 0  # the outer fork still runs
    assert worker() > 0
    assert gc.get_freeze_count() == 0  # put back once no fork runs
    early = fork_imap(2, frozen_here, list(range(8)), 2)
    next(early)
    early.close()
    assert gc.get_freeze_count() == 0
    assert len(kept) == 10


def test_write_chunks_writes_as_it_goes_and_keeps_an_equal_file(tmp_path) -> None:
    """The JSON Lines records of a release site (88 MB of analyses for
    v0.5.23) are written line by line: never held whole."""
    from miner.files import write_chunks

    path = tmp_path / "a" / "analyses.jsonl"
    lines = ['{"id": "é"}\n', '{"id": "b"}\n']
    assert write_chunks(path, iter(lines)) == (True, 25)
    assert path.read_text(encoding="utf-8") == "".join(lines)
    before = path.stat().st_mtime_ns
    assert write_chunks(path, iter(lines)) == (False, 25)  # equal bytes: left alone
    assert path.stat().st_mtime_ns == before
    assert write_chunks(path, iter(lines[1:])) == (True, 12)
    assert path.read_text(encoding="utf-8") == lines[1]
    assert [p.name for p in path.parent.iterdir()] == ["analyses.jsonl"]  # no temp file left
