"""A local that holds a setting's value, and what an environment variable
reads as when unset: the Solutions sentences they produce (exact text)."""

from __future__ import annotations

from test_analysis_config import DATACLASS_REPO
from test_analysis_prose import analyses

WORK = """
import os

from pkg.context import get_disagg
from pkg.environ import envs


def bind_threads(world_size, nodes):
    omp_cpuids = os.environ.get("PKG_OMP_BIND", "all")
    if omp_cpuids == "all" and world_size > nodes:
        raise ValueError("more ranks than numa nodes: set the CPU cores explicitly")
    return omp_cpuids


def pick_backup():
    backup = get_disagg().retraction_backup
    if backup != "host_pool":
        raise ValueError("this path needs the host pool backup")
    return backup


def pick_twice():
    backup = get_disagg().retraction_backup
    if backup == "cpu_tensor":
        return 1
    if backup != "host_pool":
        raise ValueError("neither backup")
    return backup


def fast_path(x):
    if envs.PKG_FAST.get():
        raise RuntimeError("the fast path cannot take this input")
    return x


def many_workers(x):
    if envs.PKG_WORKERS.get():
        raise RuntimeError("workers cannot take this input")
    return x
"""


def found() -> dict:
    return analyses({**DATACLASS_REPO, "pkg/work.py": WORK})


def test_a_local_read_from_an_environment_variable_is_that_variable() -> None:
    """``omp_cpuids = os.environ.get("PKG_OMP_BIND", "all")`` then
    ``omp_cpuids == "all"``: a test of the variable; unset, it reads ``all``,
    so "unset it" is no fix (SGLang's ``init_threads_binding``)."""
    a = found()["more ranks than numa nodes: set the CPU cores explicitly"]
    assert a.solutions[0] == (
        "Set `PKG_OMP_BIND` to another value than `all`: unset, it reads `all` "
        "(read at `pkg/work.py:8`, default `all`)."
    )


def test_a_local_read_from_a_flag_is_that_flag() -> None:
    a = found()["this path needs the host pool backup"]
    assert a.solutions[0].startswith("Set `--retraction-backup` to `host_pool`.")
    # a local tested twice stays the code's own words
    twice = found()["neither backup"]
    assert not any("Set `--retraction-backup`" in s for s in twice.solutions)


def test_unset_is_no_fix_for_a_variable_on_by_default() -> None:
    """``PKG_FAST = EnvBool(True)``: unset, it is on; ``PKG_WORKERS =
    EnvInt(4)``: unset, it is 4, true."""
    fast = found()["the fast path cannot take this input"]
    assert fast.solutions[0] == (
        "Set `PKG_FAST` to a false value, `PKG_FAST=0`: it is on by default "
        "(declared at `pkg/environ.py:27`, default `True`)."
    )
    workers = found()["workers cannot take this input"]
    assert workers.solutions[0] == (
        "Set `PKG_WORKERS` to an empty value: unset, it reads `4` "
        "(declared at `pkg/environ.py:26`, default `4`)."
    )
