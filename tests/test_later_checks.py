"""The checks that follow a passing one in the same block ("Once it passes,
the later checks ... also need"), and a flag whose ``None`` means left out:
the Solutions sentences they produce (exact text)."""

from __future__ import annotations

from test_analysis_config import DATACLASS_REPO
from test_analysis_prose import analyses

CHECKS = """
from pkg.server_args import ServerArgs


def check(server_args: ServerArgs):
    if server_args.dtype == "half":
        raise ValueError("half precision is not supported here")
    assert server_args.disable_radix_cache, "this mode needs the radix cache off"
    assert server_args.cache_strategy == "extra", "this mode needs the extra cache"
    if server_args.plain > 3:
        return
    assert server_args.model_path, "a model path is needed"


def check_nested(server_args: ServerArgs):
    if server_args.dtype == "half":
        assert server_args.disable_radix_cache, "half precision needs the radix cache off"
    assert server_args.cache_strategy == "none", "this path needs no cache"


def check_mixed(server_args: ServerArgs):
    assert server_args.disable_radix_cache, "mixed mode needs the radix cache off"
    assert server_args.dtype == "auto" or server_args.plain > 1, "mixed mode needs auto or plain"
    assert server_args.cache_strategy == "extra", "mixed mode needs the extra cache"


def need_pool(server_args: ServerArgs):
    if server_args.retraction_backup != "host_pool":
        raise ValueError("this path needs the host pool backup")


def backup(server_args: ServerArgs):
    if server_args.retraction_backup in (None, "host_pool"):
        raise ValueError("this backup cannot hold the pool")


def other_backup(server_args: ServerArgs):
    if server_args.retraction_backup not in (None, "cpu_tensor"):
        raise ValueError("only the cpu tensor backup works here")
"""


def found() -> dict:
    return analyses({**DATACLASS_REPO, "pkg/checks.py": CHECKS})


def test_the_later_checks_of_the_block_are_named_with_their_settings():
    cards = found()
    assert cards["half precision is not supported here"].solutions[-1] == (
        "Once it passes, later checks of `check` in the same block also need: "
        "`--disable-radix-cache` is on (line 7); `--cache-strategy` is `extra` (line 8)."
    )
    assert cards["this mode needs the radix cache off"].solutions == (
        'Pass `--disable-radix-cache`. Its help says: "Disable the radix cache."',
        "Once it passes, later checks of `check` in the same block also need: "
        "`--cache-strategy` is `extra` (line 8).",
    )


def test_a_later_check_of_several_values_is_left_out_and_said_to_be():
    cards = found()
    assert cards["mixed mode needs the radix cache off"].solutions[-1] == (
        "Once it passes, later checks of `check_mixed` in the same block also need, among "
        "others: `--cache-strategy` is `extra` (line 23)."
    )


def test_a_flag_that_defaults_to_none_differs_from_a_value_when_left_out():
    card = found()["this path needs the host pool backup"]
    assert card.what_it_means.startswith(
        "You get this with `--retraction-backup` set to `cpu_tensor` or not given, in `need_pool`."
    )
    assert card.trigger.endswith(
        "- `--retraction-backup` is not `host_pool` (so it is `cpu_tensor` or not given) (line 27)"
    )


def test_a_check_after_an_early_return_or_in_another_block_is_not_named():
    cards = found()
    # the model path is checked only when ``plain <= 3`` (a ``return`` first)
    last = cards["this mode needs the extra cache"].solutions
    assert not any("later checks" in s for s in last)
    # the nested assert is not in the block of the one after it, nor the
    # other way round
    for message in ("half precision needs the radix cache off", "this path needs no cache"):
        assert not any("later checks" in s for s in cards[message].solutions), message


def test_none_of_a_flag_that_defaults_to_none_is_the_flag_left_out():
    cards = found()
    held = cards["this backup cannot hold the pool"]
    assert held.what_it_means.startswith(
        "You get this with `--retraction-backup` set to `host_pool` (or not given), in `backup`."
    )
    assert held.trigger.endswith("- `--retraction-backup` is `host_pool` (or not given) (line 32)")
    assert held.example_fix is not None
    # never ``--retraction-backup None`` on a command line
    assert (
        held.example_fix.before == "python -m pkg.launch_server ... --retraction-backup host_pool"
    )
    only = cards["only the cpu tensor backup works here"]
    assert only.trigger.endswith(
        "- `--retraction-backup` is given and is not `cpu_tensor` (so it is `host_pool`) (line 37)"
    )
    assert only.solutions[0] == (
        "Leave `--retraction-backup` out (its default is `None`) or set it to `cpu_tensor`."
    )


def test_a_field_without_a_flag_is_none_not_left_out():
    from test_analysis_config import ARGS_MODULE

    args = ARGS_MODULE.replace(
        "    plain: int = 3\n",
        "    plain: int = 3\n"
        '    worker_threads: A[Optional[int], Arg(help="Threads.", no_cli=True)] = None\n',
    )
    assert args != ARGS_MODULE
    code = """
from pkg.server_args import ServerArgs


def threads(server_args: ServerArgs):
    if server_args.worker_threads is None:
        raise ValueError("the worker threads were never set")
    if server_args.worker_threads is not None and server_args.dtype == "half":
        raise ValueError("worker threads cannot run in half precision")
"""
    cards = analyses({**DATACLASS_REPO, "pkg/server_args.py": args, "pkg/threads.py": code})
    unset = cards["the worker threads were never set"]
    assert unset.trigger.endswith("- `ServerArgs.worker_threads` is `None` (its default) (line 5)")
    both = cards["worker threads cannot run in half precision"]
    assert "- `ServerArgs.worker_threads` is not `None`" in both.trigger
