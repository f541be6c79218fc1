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


def bind_list(tp):
    omp = os.environ.get("PKG_OMP_BIND", "all")
    if omp != "all" and tp != 2:
        raise ValueError("the bind list must match tp")
    return omp


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


def test_unset_is_the_fix_when_unset_reads_a_passing_value() -> None:
    """``omp != "all"``: unset, the variable reads ``all``, which passes;
    "Set it to `all`" after a command line that leaves it unset showed a
    run that cannot raise (SGLang's ``CPUWorker.init_cpu_threads_binding``)."""
    a = found()["the bind list must match tp"]
    assert a.solutions[0] == (
        "Unset `PKG_OMP_BIND` or set it to `all`: unset, it reads `all` "
        "(read at `pkg/work.py:8`, default `all`)."
    )
    assert a.example_fix is not None
    assert a.example_fix.before == "PKG_OMP_BIND=... python -m pkg.launch_server ..."
    assert a.example_fix.after == "unset PKG_OMP_BIND\npython -m pkg.launch_server ..."


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


SWITCHES = """
import argparse


def build_parser():
    p = argparse.ArgumentParser()
    p.add_argument("--enable-sparse", action="store_true", help="Enable sparse attention.")
    p.add_argument(
        "--allow-truncate",
        action="store_true",
        help="Truncate long inputs instead of returning an error.",
    )
    p.add_argument("--enable-lora", action="store_true", help="Enable LoRA.")
    p.add_argument("--disable-cache", action="store_true", help="Disable the cache.")
    return p


def check_leak(args, leaked):
    if not args.enable_sparse and leaked:
        raise RuntimeError("memory leak detected")


def check_length(args, n, limit):
    if not args.allow_truncate and n > limit:
        raise ValueError("the input is longer than the context")


def load_adapter(args):
    if not args.enable_lora and not args.disable_cache:
        raise ValueError("adapters need lora enabled")


def main():
    args = build_parser().parse_args()
    check_leak(args, 1)
    check_length(args, 5, 4)
    load_adapter(args)


if __name__ == "__main__":
    main()
"""


def test_no_fix_turns_on_a_feature_the_message_does_not_speak_of() -> None:
    """A check skipped while a feature runs (SGLang's leak check under
    ``not self.enable_hisparse``) is not fixed by turning that feature on;
    a message that speaks of the feature, a help that offers the switch
    "instead of returning an error", and a ``disable_*`` switch keep it."""
    found = analyses({"app/__init__.py": "", "app/cli.py": SWITCHES})
    leak = found["memory leak detected"]
    assert not any("--enable-sparse" in s for s in leak.solutions)
    length = found["the input is longer than the context"]
    assert any(s.startswith("Pass `--allow-truncate`.") for s in length.solutions)
    lora = found["adapters need lora enabled"]
    assert any(s.startswith("Pass `--enable-lora`.") for s in lora.solutions)
    assert any(s.startswith("Pass `--disable-cache`.") for s in lora.solutions)


HOOK = """
def handle_backup(cfg):
    if cfg.model_path.endswith("-pd"):
        cfg.retraction_backup = "cpu_tensor"
"""

NEEDS_BACKUP = """
from pkg.context import get_disagg


def start_retraction():
    assert get_disagg().retraction_backup is not None, "retraction needs a backup"
"""


def test_not_given_is_not_enough_when_start_up_may_set_it() -> None:
    """SGLang's ``speculative_hook.py`` stores 48 into
    ``max_running_requests`` when it is not given: a card must not say the
    error comes from leaving the flag out, as if nothing else set it."""
    found = analyses(
        {
            **DATACLASS_REPO,
            "pkg/arg_groups/__init__.py": "",
            "pkg/arg_groups/backup_hook.py": HOOK,
            "pkg/retract.py": NEEDS_BACKUP,
        }
    )
    a = found["retraction needs a backup"]
    assert any(
        s.startswith("Launches where")
        and "`--retraction-backup` is `None` (not given, and not set by the "
        "argument handling, which stores `cpu_tensor` in some cases: "
        "`pkg/arg_groups/backup_hook.py:3`)"
        in s
        for s in a.situations
    ), a.situations


EITHER = """
import argparse


def build_parser():
    p = argparse.ArgumentParser()
    p.add_argument("--enable-unified", action="store_true", help="One shared pool.")
    p.add_argument("--enable-draft", action="store_true", help="Draft worker.")
    return p


def init_pools(args, pool, is_draft):
    if args.enable_unified and pool is None:
        return pool
    if is_draft:
        raise ValueError("draft sizing needs the unified pool")
    return pool


def init_draft(args, pool):
    if args.enable_unified or args.enable_draft:
        raise ValueError("one of the two")
    return pool


def main():
    args = build_parser().parse_args()
    init_pools(args, None, True)
    init_draft(args, None)


if __name__ == "__main__":
    main()
"""


def test_one_disjunct_of_an_any_of_is_no_situation() -> None:
    """SGLang's ``_init_pools`` returns early when unified memory is on and
    no pool is given: the raise needs "the flag off OR a pool", and a card
    said "Launches where `--enable-unified-memory` is off", which the raise
    does not need (it happens with the flag on)."""
    found = analyses({"app/__init__.py": "", "app/cli.py": EITHER})
    pools = found["draft sizing needs the unified pool"]
    assert not any("Launches where" in s for s in pools.situations), pools.situations
    both = found["one of the two"]
    assert (
        "Launches where either `--enable-unified` is on or `--enable-draft` is on."
        in both.situations
    ), both.situations


DEFAULT_NEEDED = """
from pkg.context import get_disagg, get_exec


def only_cpu_backup():
    if get_disagg().retraction_backup not in (None, "cpu_tensor"):
        raise ValueError("only the cpu backup")


def only_auto():
    if get_exec().cache.cache_strategy != "auto":
        raise ValueError("only the auto strategy")
"""


def test_the_value_it_needs_is_the_default() -> None:
    """No command line gives a flag ``None`` (a card said "Set
    `--speculative-algorithm` to `None`"); a needed value that is the
    default is passed explicitly, after a command line that gives another."""
    found = analyses(
        {
            **DATACLASS_REPO,
            "pkg/arg_groups/__init__.py": "",
            "pkg/arg_groups/backup_hook.py": HOOK,
            "pkg/checks.py": DEFAULT_NEEDED,
        }
    )
    cpu = found["only the cpu backup"]
    # the argument handling stores cpu_tensor, a value that passes: no warning
    assert cpu.solutions[0] == (
        "Leave `--retraction-backup` out (its default is `None`) or set it to `cpu_tensor`."
    )
    auto = found["only the auto strategy"]
    assert auto.solutions[0] == (
        "Set `--cache-strategy` to `auto` (the deprecated alias `--cache-policy` sets the "
        "same value); `auto` is its default."
    )
    assert cpu.example_fix is not None
    assert cpu.example_fix.before == "python -m pkg.launch_server ... --retraction-backup host_pool"
    assert cpu.example_fix.after == "python -m pkg.launch_server ..."
    assert auto.example_fix is not None
    assert auto.example_fix.before == "python -m pkg.launch_server ... --cache-strategy none"
    assert auto.example_fix.after == "python -m pkg.launch_server ... --cache-strategy auto"


ARMS = """
def adjust(model_arch, backend):
    if model_arch in ["DeepseekV3ForCausalLM", "KimiK25"]:
        return 1
    elif model_arch in ["DeepseekV4ForCausalLM"]:
        return 2
    elif model_arch == "GptOssForCausalLM":
        if backend not in ("triton", "fa3"):
            raise ValueError("GPT-OSS needs the triton or fa3 backend")
    return 0


ARCH = None


def adjust_global(backend):
    if ARCH == "DeepseekV3ForCausalLM":
        return 1
    refresh(backend)
    if ARCH == "GptOssForCausalLM":
        raise ValueError("a global tested twice")
    return 0
"""


def test_earlier_arms_are_implied_by_the_raising_arm() -> None:
    """Under ``elif model_arch == "GptOssForCausalLM"``, the earlier arms'
    "`model_arch` is not ..." hold by themselves: listed, they made a
    Solution of "run a DeepSeek model" (SGLang's ``model_hook.py:380``)."""
    found = analyses({"pkg/__init__.py": "", "pkg/arms.py": ARMS})
    a = found["GPT-OSS needs the triton or fa3 backend"]
    # the negated condition is no solution: none is left, and no "run a DeepSeek model"
    assert (a.solutions, a.example_fix) == ((), None)
    # a global, which a call in between may change: both stay (in the condition)
    shared = found["a global tested twice"]
    assert 'ARCH != "DeepseekV3ForCausalLM"' in shared.condition_text


GRAMMAR = """
import argparse


def build_parser():
    p = argparse.ArgumentParser()
    p.add_argument("--grammar-backend", choices=["xgrammar", "outlines", "llguidance", "none"])
    p.add_argument("--strict-thinking", action="store_true", help="Strict thinking.")
    return p


def create_backend(args, tokenizer_ok):
    name = args.grammar_backend
    if name == "xgrammar":
        if args.strict_thinking and not tokenizer_ok:
            raise ValueError("xgrammar failed to start under strict thinking")
        return 1
    elif name == "none":
        if args.strict_thinking:
            raise ValueError("strict thinking needs a grammar backend")
        return None
    return 2


def main():
    create_backend(build_parser().parse_args(), True)


if __name__ == "__main__":
    main()
"""


def test_no_value_that_another_raise_of_the_function_refuses() -> None:
    """Where XGrammar fails under strict thinking, ``--grammar-backend none``
    raises "strict thinking needs a grammar backend" further down the same
    function (SGLang's ``create_grammar_backend``, line 415): the card offers
    the other choices only."""
    found = analyses({"app/__init__.py": "", "app/cli.py": GRAMMAR})
    a = found["xgrammar failed to start under strict thinking"]
    assert "Set `--grammar-backend` to `outlines` or `llguidance`." in a.solutions


CALLED = """
def check(x):
    if x < 0:
        raise ValueError("x must not be negative")


def a1(x):
    check(x)


def a2(x):
    check(x)


def a3(x):
    check(x)


def a4(x):
    check(x)


def event_loop_normal(x):
    check(x)


def event_loop_overlap(x):
    check(x)
"""


def test_callers_past_the_first_four_are_named() -> None:
    """SGLang's ``on_idle``: the normal and overlap event loops, the callers
    every user runs, came after four disaggregation loops and were only
    counted ("7 more functions call `on_idle`")."""
    found = analyses({"pkg/__init__.py": "", "pkg/called.py": CALLED})
    a = found["x must not be negative"]
    assert (
        "2 more functions call `check` in the commit: `event_loop_normal` "
        "(`pkg/called.py:23`) and `event_loop_overlap` (`pkg/called.py:27`)." in a.situations
    ), a.situations


TOGETHER = """
import argparse


def build_parser():
    p = argparse.ArgumentParser()
    p.add_argument("--enable-a", action="store_true", help="Turn a on.")
    p.add_argument("--enable-b", action="store_true", help="Turn b on.")
    return p


def check(args):
    if args.enable_a and args.enable_b:
        raise ValueError("a and b cannot run together")


def main():
    check(build_parser().parse_args())


if __name__ == "__main__":
    main()
"""


def test_a_fix_that_drops_a_flag_keeps_the_other_triggering_flags() -> None:
    """The example of "Drop `--enable-a`" fails only with `--enable-b` too:
    both command lines carry it (the unified-memory draft card showed a
    "before" with `--enable-unified-memory` alone, which cannot raise)."""
    found = analyses({"app/__init__.py": "", "app/cli.py": TOGETHER})
    fix = found["a and b cannot run together"].example_fix
    assert fix is not None
    assert (fix.before, fix.after) == (
        "python -m app.cli ... --enable-b --enable-a",
        "python -m app.cli ... --enable-b",
    ), fix


TEST_CALLER = """
from pkg.called import check


def test_x():
    check(1)
"""


def test_test_callers_are_counted_not_named() -> None:
    found = analyses(
        {
            "pkg/__init__.py": "",
            "pkg/called.py": CALLED,
            "tests/test_called.py": TEST_CALLER,
        }
    )
    a = found["x must not be negative"]
    assert (
        "3 more functions call `check` in the commit: `event_loop_normal` "
        "(`pkg/called.py:23`), `event_loop_overlap` (`pkg/called.py:27`) and 1 in tests or "
        "scripts." in a.situations
    ), a.situations
