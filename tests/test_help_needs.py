"""What a flag's help says it needs ("Requires --grpc-port."), quoted with a
fix that gives the flag and never with one that drops it; and a flag the
error needs not given, which has no value to check (exact text)."""

from __future__ import annotations

from test_analysis_prose import analyses

from miner.analysis.config import ConfigModel, Option
from miner.analysis.evidence import help_requirement
from miner.model import FixKind

CLI = """
import argparse


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--sidecar", default=None, help="Start a sidecar module. Requires --grpc-port."
    )
    parser.add_argument("--sidecar-args", default=None, help="Arguments of the sidecar.")
    parser.add_argument("--grpc-port", type=int, default=None, help="The gRPC port.")
    parser.add_argument(
        "--enable-cache", action="store_true", help="Keep a cache. Only used with --grpc-port."
    )
    parser.add_argument(
        "--enable-fast", action="store_true", help="Go fast. Requires a GPU; it is unsafe."
    )
    args = parser.parse_args()
    check(args)


def check(cfg):
    if cfg.sidecar_args is not None:
        if cfg.sidecar is None:
            raise ValueError("--sidecar-args requires --sidecar.")
    if not cfg.enable_cache:
        raise ValueError("this mode needs --enable-cache")


def fast(args):
    if args.enable_fast:
        raise ValueError("this mode cannot go fast")


if __name__ == "__main__":
    main()
"""


def found() -> dict:
    return analyses({"tool/__init__.py": "", "tool/cli.py": CLI})


def option(text: str) -> Option:
    return Option("x", ("--x",), "", "", 0, "argparse", help=text)


def test_the_requirement_is_a_later_sentence_that_says_what_is_needed():
    assert help_requirement(option("Start a sidecar. Requires --grpc-port.")) == (
        "Requires --grpc-port."
    )
    assert help_requirement(option("Logprobs. Only used with --return-logprob.")) == (
        "Only used with --return-logprob."
    )
    # the first sentence is quoted anyway; a requirement inside a sentence is not one
    assert help_requirement(option("Requires a GPU. Fast.")) is None
    assert help_requirement(option("Fast. When set, admin endpoints require this key.")) is None
    assert help_requirement(option("")) is None


def test_a_flag_the_error_needs_not_given_is_to_be_given_with_what_it_needs():
    card = found()["--sidecar-args requires --sidecar."]
    assert card.solutions[1] == (
        "Give `--sidecar`, which the message names: this error needs it not given "
        '(`cfg.sidecar is None`). Its help says: "Start a sidecar module." and: '
        '"Requires --grpc-port."'
    )


def test_a_fix_that_passes_the_flag_quotes_its_requirement_and_one_that_drops_it_does_not():
    cards = found()
    assert cards["this mode needs --enable-cache"].solutions == (
        "If `cfg.enable_cache` holds the command-line value: pass `--enable-cache`. Its help "
        'says: "Keep a cache." and: "Only used with --grpc-port."',
    )
    dropped = cards["this mode cannot go fast"].solutions[0]
    assert dropped == (
        'Drop `--enable-fast`: it is off by default. Dropping it gives up: "Go fast."'
    )


NEGATABLE = """
import argparse


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--replicate-q", action=argparse.BooleanOptionalAction, default=None,
        help="Replicate the Q projection. Use --no-replicate-q to disable the model default.",
    )
    parser.add_argument("--dcp-size", type=int, default=1, help="The DCP size.")
    args = parser.parse_args()
    check(args)


def check(cfg):
    if cfg.replicate_q:
        if cfg.dcp_size <= 1:
            raise ValueError("--replicate-q requires --dcp-size > 1.")


if __name__ == "__main__":
    main()
"""


def test_a_boolean_optional_flag_is_turned_off_by_its_no_switch_and_never_given_a_value():
    option = Option("x", ("--x",), "", "", 0, "argparse", action="argparse.BooleanOptionalAction")
    assert option.is_bool and option.negation == "--no-x"
    assert Option("x", ("--x",), "", "", 0, "argparse", action="store_true").negation is None
    assert ConfigModel(options=(option,)).flag_names() == {"--x", "--no-x"}
    (card,) = analyses({"tool/__init__.py": "", "tool/cli.py": NEGATABLE}).values()
    # ``cfg`` is linked by name (a parameter of ``check``): the fix says so
    assert card.solutions[0] == (
        "If `cfg.replicate_q` holds the command-line value: pass `--no-replicate-q` to turn "
        '`--replicate-q` off. Its help says: "Replicate the Q projection."'
    )
    fix = card.example_fix
    assert fix is not None and fix.after.endswith("--no-replicate-q")
    assert "VALUE" not in fix.before + fix.after


SWITCHES = """
import argparse


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--replicate-q", action=argparse.BooleanOptionalAction, default=None,
        help="Replicate the Q projection.",
    )
    parser.add_argument("--enable-x", action="store_true", help="Turn x on.")
    args = parser.parse_args()
    check(args)
    other(args)


def check(cfg):
    if cfg.replicate_q is not None:
        raise ValueError("--replicate-q cannot be set with this model")


def other(cfg):
    if cfg.enable_x == True:
        raise ValueError("--enable-x is not supported here")


if __name__ == "__main__":
    main()
"""


def test_a_switch_on_the_example_command_line_is_never_given_a_value():
    cards = analyses({"tool/__init__.py": "", "tool/cli.py": SWITCHES})
    set_q = cards["--replicate-q cannot be set with this model"].example_fix
    assert set_q is not None and set_q.kind is FixKind.FLAG
    # ``is not None`` of a BooleanOptionalAction: given at all, not ``--replicate-q VALUE``
    assert set_q.before.endswith(" ... --replicate-q") and set_q.after.endswith(" ...")
    on = cards["--enable-x is not supported here"].example_fix
    assert on is not None and on.kind is FixKind.FLAG
    # ``== True`` of a store_true switch: the flag alone, not ``--enable-x True``
    assert on.before.endswith(" ... --enable-x") and on.after.endswith(" ...")
