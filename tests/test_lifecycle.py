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
