"""The values a message gives its flags, switches of ``Optional[bool]`` fields,
``default=Cls.field`` defaults, and ``startswith`` in words.

Each case is a defect the golden set found on SGLang v0.5.19 cards
(``--disable-radix-cache because``, ``--speculative-eagle-topk 1.``,
``--enable-lora VALUE``, a default printed as ``ServerArgs.nnodes``,
"startss with"), rebuilt on a small fixture.
"""

from __future__ import annotations

import ast
from dataclasses import replace

import pytest

from miner.analysis.code import SourceIndex
from miner.analysis.config import Option, mine_config
from miner.analysis.remedy import Phrases, Remedies, flag_value
from miner.analysis.wording import atom_words
from miner.model import Condition

ARGS = """\
import argparse
import dataclasses
from typing import Annotated, Optional

A = Annotated


def add_cli_args_from_dataclass(parser, cls):
    pass


@dataclasses.dataclass
class ServerArgs:
    enable_lora: A[Optional[bool], "Enable LoRA."] = None
    disable_radix_cache: A[bool, "Disable the radix cache."] = False
    eagle_topk: A[int, "Top-k of EAGLE."] = 4
    nnodes: int = 1

    @staticmethod
    def add_cli_args(parser):
        add_cli_args_from_dataclass(parser, ServerArgs)
        parser.add_argument("--nnodes", type=int, default=ServerArgs.nnodes, help="Nodes.")
"""


def config():
    index = SourceIndex({"pkg/__init__.py": b"", "pkg/server_args.py": ARGS.encode()})
    return mine_config(index)


def test_optional_bool_field_is_a_switch() -> None:
    lora = config().option("enable_lora")
    assert lora is not None and lora.flags == ("--enable-lora",)
    assert lora.is_bool and lora.action == "store_true"


def test_default_naming_a_class_field_is_that_fields_default() -> None:
    nnodes = next(o for o in config().options if o.flags == ("--nnodes",))
    assert nnodes.source == "argparse"
    assert nnodes.default == "1"


def test_word_after_a_switch_is_not_its_value() -> None:
    remedies = Remedies(config(), "python -m pkg.launch_server")
    out = remedies.remedies(
        "--prefill-only requires --disable-radix-cache because the cache indexes freed slots."
    )
    texts = [r.text for r in out]
    assert "Pass `--disable-radix-cache`: the message says it is required." in texts
    assert not any("because`" in t for t in texts)
    fix = out[0].example
    assert fix is not None and fix.after == "python -m pkg.launch_server ... --disable-radix-cache"


def test_sentence_end_is_not_part_of_a_value() -> None:
    remedies = Remedies(config(), "python -m pkg.launch_server")
    texts = [r.text for r in remedies.remedies("EAGLE with a tree requires --eagle-topk 1.")]
    assert "Pass `--eagle-topk 1`: the message says it is required." in texts


@pytest.mark.parametrize(
    ("sep", "token", "value"),
    [
        (" ", "because", None),
        (" ", "so", None),
        (" ", "1.", "1"),
        (" ", "-1", "-1"),
        (" ", "/tmp/x", "/tmp/x"),
        ("=", "fast", "fast"),
        ("=", "fast.", "fast"),
        (" ", "to", None),
    ],
)
def test_flag_value(sep: str, token: str, value: str | None) -> None:
    opt = Option(name="x", flags=("--x",), owner="A", path="a.py", line=1, source="argparse")
    assert flag_value(opt, sep, token) == value


def test_flag_value_of_a_switch_and_of_choices() -> None:
    switch = Option(
        name="x",
        flags=("--x",),
        owner="A",
        path="a.py",
        line=1,
        source="argparse",
        action="store_true",
    )
    assert flag_value(switch, "=", "1") is None
    assert flag_value(switch, " ", "false") is None
    # SGLang's diffusion ``action=StoreBoolean, default=False`` takes true/false
    custom = replace(switch, action="StoreBoolean", default="False")
    assert custom.is_bool
    assert flag_value(custom, " ", "false.") == "false"
    assert flag_value(custom, " ", "because") is None
    mode = Option(
        name="m",
        flags=("--m",),
        owner="A",
        path="a.py",
        line=1,
        source="argparse",
        choices=("fast", "safe"),
    )
    assert flag_value(mode, " ", "safe") == "safe"
    assert flag_value(mode, " ", "when") is None


def test_startswith_in_words() -> None:
    test = 'cfg.device.startswith("cuda")'
    assert ast.parse(test, mode="eval")
    starts = Condition("atom", atom=test, negated=False, shown=test)
    assert atom_words(starts) == '`cfg.device` starts with `"cuda"`'
    not_starts = Condition("atom", atom=test, negated=True, shown="not " + test)
    assert atom_words(not_starts) == '`cfg.device` does not start with `"cuda"`'


def test_decimal_point_does_not_end_the_requirement() -> None:
    remedies = Remedies(config(), "python -m pkg.launch_server")
    texts = [r.text for r in remedies.remedies("--eagle-topk should be in range (0, 1.0].")]
    assert texts == ["Give `--eagle-topk` a value that is in range (0, 1.0], as the message asks."]


GEN_ARGS = """\
import argparse
import dataclasses


@dataclasses.dataclass
class ServerArgs:
    num_gpus: int = 1

    @staticmethod
    def add_cli_args(parser):
        parser.add_argument("--num-gpus", type=int, default=ServerArgs.num_gpus)


def prepare_server_args(argv) -> ServerArgs:
    parser = argparse.ArgumentParser()
    ServerArgs.add_cli_args(parser)
    return ServerArgs(**vars(parser.parse_args(argv)))
"""

LAUNCH = """\
import sys

from pkg.server_args import ServerArgs

if __name__ == "__main__":
    ServerArgs()
"""

GEN_LAUNCH = """\
import sys

from pkg.gen.server_args import ServerArgs, prepare_server_args

if __name__ == "__main__":
    prepare_server_args(sys.argv[1:])
"""


def test_second_class_of_the_same_name_has_its_own_command() -> None:
    files = {
        "pkg/__init__.py": "",
        "pkg/server_args.py": ARGS,
        "pkg/launch_server.py": LAUNCH,
        "pkg/gen/__init__.py": "",
        "pkg/gen/server_args/__init__.py": "from .server_args import ServerArgs\n",
        "pkg/gen/server_args/server_args.py": GEN_ARGS.replace(
            "ServerArgs.add_cli_args(parser)\n",
            "ServerArgs.add_cli_args(parser)\n    PipelineConfig.add_cli_args(parser)\n",
        ),
        "pkg/gen/pipeline.py": PIPELINE,
        "pkg/gen/launch_server.py": GEN_LAUNCH,
    }
    model = mine_config(SourceIndex({p: t.encode() for p, t in files.items()}))
    assert model.entry_point == "pkg.launch_server"
    gpus = next(o for o in model.options if o.flags == ("--num-gpus",))
    assert gpus.path == "pkg/gen/server_args/server_args.py" and gpus.default == "1"
    assert model.command_of(gpus) == "pkg.gen.launch_server"
    # a class whose flags the diffusion parser adds shares its command
    tiling = next(o for o in model.options if o.flags == ("--vae-tiling",))
    assert model.command_of(tiling) == "pkg.gen.launch_server"
    lora = model.option("enable_lora")
    assert lora is not None and model.command_of(lora) == "pkg.launch_server"
    assert model.to_json()["entry_points"] == [
        {
            "class": "ServerArgs",
            "path": "pkg/gen/server_args/server_args.py",
            "module": "pkg.gen.launch_server",
        },
        {
            "class": "PipelineConfig",
            "path": "pkg/gen/pipeline.py",
            "module": "pkg.gen.launch_server",
        },
    ]


OPS = """
from pkg.context import get_server_args


def check_strategy():
    if get_server_args().cache_strategy == "legacy":
        raise ValueError("--cache-strategy=legacy is deprecated. Use --cache-strategy=extra.")
    if get_server_args().cache_strategy == "none":
        raise ValueError("--cache-strategy=none is gone. Use --cache-strategy=extra_lazy.")
"""


def test_message_advice_with_a_value_leads_and_gives_the_example() -> None:
    from test_analysis_config import DATACLASS_REPO
    from test_analysis_prose import analyses

    cards = analyses({**DATACLASS_REPO, "pkg/ops.py": OPS})
    gone = cards["--cache-strategy=none is gone. Use --cache-strategy=extra_lazy."]
    assert gone.solutions[0] == (
        'Do what the message advises: "Use `--cache-strategy=extra_lazy`".'
    )
    assert gone.example_fix is not None
    assert gone.example_fix.before.endswith("--cache-strategy none")
    assert gone.example_fix.after.endswith("--cache-strategy extra_lazy")
    # ``legacy`` is not among the flag's choices: no command line can pass it
    legacy = cards["--cache-strategy=legacy is deprecated. Use --cache-strategy=extra."]
    assert any(
        "The command line does not accept `legacy` for `--cache-strategy`" in s
        for s in legacy.solutions
    )
    assert legacy.example_fix is not None
    assert "legacy" not in legacy.example_fix.before


ROLES = """
from pkg.context import get_server_args


def handle():
    if get_server_args().dtype == "half":
        return
    if get_server_args().dtype == "auto":
        if get_server_args().cache_strategy == "none":
            raise ValueError("An auto dtype does not support no cache")
"""


def test_implied_exit_is_dropped_and_the_innermost_check_is_fixed_first() -> None:
    from test_analysis_config import DATACLASS_REPO
    from test_analysis_prose import analyses

    card = analyses({**DATACLASS_REPO, "pkg/ops.py": ROLES})[
        "An auto dtype does not support no cache"
    ]
    assert "`--dtype` is not `half`" not in card.trigger
    assert "- `--dtype` is `auto` (line 7)" in card.trigger
    assert "- `--cache-strategy` is `none` (line 8)" in card.trigger
    assert card.solutions[0].startswith("Set `--cache-strategy` to ")
    assert card.example_fix is not None
    # the other triggering setting is on both lines, so "before" raises
    assert card.example_fix.before == (
        "python -m pkg.launch_server ... --dtype auto --cache-strategy none"
    )
    assert card.example_fix.after == (
        "python -m pkg.launch_server ... --dtype auto --cache-strategy extra"
    )


HOOK = """
from pkg.context import get_server_args


def declare_late_resolution(args, source, **fields):
    pass


def check_args(server_args):
    if server_args.model_path:
        if server_args.disable_radix_cache is None:
            declare_late_resolution(server_args, "check_args", disable_radix_cache=True)


def build():
    if get_server_args().disable_radix_cache:
        raise ValueError("radix cache needed for this build")
"""


def test_switch_turned_on_by_the_argument_handling_is_said() -> None:
    from test_analysis_config import DATACLASS_REPO
    from test_analysis_prose import analyses

    files = {**DATACLASS_REPO, "pkg/args_hook.py": HOOK}
    card = analyses(files)["radix cache needed for this build"]
    assert any(
        s.startswith("Drop `--disable-radix-cache`: it is off by default.")
        and s.endswith(
            "Leaving it out may not help: the argument handling sets it to `True` itself "
            "at start-up in some cases (`pkg/args_hook.py:11`)."
        )
        for s in card.solutions
    ), card.solutions


NEEDS = """
from pkg.context import get_server_args


def prefill_only():
    if not get_server_args().disable_radix_cache:
        raise ValueError("prefill-only mode requires --disable-radix-cache because slots are freed")
"""


def test_advice_and_guard_fix_of_the_same_flag_are_said_once() -> None:
    from test_analysis_config import DATACLASS_REPO
    from test_analysis_prose import analyses

    card = analyses({**DATACLASS_REPO, "pkg/ops.py": NEEDS})[
        "prefill-only mode requires --disable-radix-cache because slots are freed"
    ]
    passing = [s for s in card.solutions if s.startswith("Pass `--disable-radix-cache`")]
    assert passing == ['Pass `--disable-radix-cache`. Its help says: "Disable the radix cache."']
    assert card.solutions[0] == passing[0]


PIPELINE = """\
import argparse
import dataclasses


@dataclasses.dataclass
class PipelineConfig:
    vae_tiling: bool = True

    @staticmethod
    def add_cli_args(parser, prefix: str = ""):
        prefix_with_dot = f"{prefix}." if (prefix.strip() != "") else ""
        parser.add_argument(
            f"--{prefix_with_dot}vae-tiling",
            dest=f"{prefix_with_dot.replace('-', '_')}vae_tiling",
            default=PipelineConfig.vae_tiling,
            help="Enable VAE tiling",
        )
        parser.add_argument(f"--{unknown}-x")
"""


def test_option_strings_built_from_a_default_prefix() -> None:
    model = mine_config(SourceIndex({"pkg/__init__.py": b"", "pkg/pipeline.py": PIPELINE.encode()}))
    tiling = next(o for o in model.options if o.flags == ("--vae-tiling",))
    assert tiling.name == "vae_tiling"
    assert tiling.default == "True"
    assert tiling.help == "Enable VAE tiling"
    assert not any(f.endswith("-x") for o in model.options for f in o.flags)


TILING = """\
import argparse
import dataclasses


class StoreBoolean(argparse.Action):
    pass


@dataclasses.dataclass
class PipelineConfig:
    vae_tiling: bool = True
    vae_sp: bool = False

    @staticmethod
    def add_cli_args(parser, prefix: str = ""):
        parser.add_argument(
            "--vae-tiling", action=StoreBoolean, default=PipelineConfig.vae_tiling, help="Tiling."
        )

    def check(self):
        if self.vae_sp and not self.vae_tiling:
            raise ValueError("vae_sp requires --vae-tiling")
"""


def test_flag_on_by_default_is_said_set_to_false() -> None:
    from test_analysis_prose import analyses

    card = analyses({"pkg/__init__.py": "", "pkg/cfg.py": TILING})["vae_sp requires --vae-tiling"]
    assert "`--vae-tiling` is set to false (its default is `True`)" in card.trigger
    assert "unset or empty" not in card.trigger
    assert any(
        s.startswith("Leave `--vae-tiling` out: its default is `True`; or pass it as true.")
        for s in card.solutions
    ), card.solutions


def test_pip_install_of_a_local_build_is_not_offered_as_a_fix() -> None:
    """pplx.py:203 (v0.5.19) describes a build ending in ``pip install
    dist/*.whl``: run alone, it installs nothing."""
    remedies = Remedies(config(), "python -m sglang.launch_server")
    texts = [
        r.text
        for r in remedies.remedies(
            "Build it (e.g. `python3 setup.py bdist_wheel && pip install dist/*.whl`). "
            "Or run pip install flashinfer-python. Then pip install -e . in the checkout."
        )
    ]
    assert "Install what is missing: `pip install flashinfer-python`." in texts
    assert not any("dist/" in t or "-e ." in t for t in texts)


def test_a_sentence_end_is_not_part_of_an_environment_value() -> None:
    """speculative_hook.py:366 (v0.5.19) ends "requires
    SGLANG_RAGGED_VERIFY_MODE=static.": the value to set is ``static``."""
    index = SourceIndex(
        {
            "pkg/__init__.py": b"",
            "pkg/server_args.py": ARGS.encode(),
            "pkg/env.py": b'import os\nMODE = os.environ.get("APP_VERIFY_MODE", "dynamic")\n',
        }
    )
    remedies = Remedies(mine_config(index), "python -m pkg.launch_server")
    (found,) = remedies.remedies("DSpark with dp attention requires APP_VERIFY_MODE=static.")
    assert found.text == "Set `APP_VERIFY_MODE=static`: the message says it is required."
    assert found.example is not None
    assert found.example.after == "APP_VERIFY_MODE=static python -m pkg.launch_server ..."


def test_a_flag_that_must_be_set_is_passed() -> None:
    """parallel_hook.py:67 (v0.5.19): "--cp-strategy must be set when
    --enable-prefill-cp is enabled" asks for the flag, not for "a value that
    is set when"."""
    remedies = Remedies(config(), "python -m pkg.launch_server")
    texts = [
        r.text for r in remedies.remedies("--nnodes must be set when --enable-lora is enabled.")
    ]
    assert texts == ["Pass `--nnodes` when `--enable-lora` is enabled, as the message asks."]
    texts = [r.text for r in remedies.remedies("--nnodes must not be given with --enable-lora.")]
    assert texts == ["Leave out `--nnodes` with `--enable-lora`, as the message asks."]
    texts = [r.text for r in remedies.remedies("--nnodes must be a power of two.")]
    assert texts == ["Give `--nnodes` a value that is a power of two, as the message asks."]


def test_a_flag_several_parsers_define_means_the_nearest_one() -> None:
    """v0.5.19: `--port` is the server's in srt/ and the diffusion server's in
    multimodal_gen/ (not a benchmark script's, as the first option in the
    model's order gave); `--model-type`, defined by two tools and named by
    the CLI, means neither for sure."""
    from miner.analysis.config import ConfigModel

    def opt(flag: str, owner: str, path: str) -> Option:
        return Option(flag[2:].replace("-", "_"), (flag,), owner, path, 1, "argparse")

    server = opt("--port", "ServerArgs", "python/sglang/srt/server_args.py")
    bench = opt("--port", "<module>", "python/sglang/multimodal_gen/benchmarks/bench_serving.py")
    diffusion = opt(
        "--port", "ServerArgs", "python/sglang/multimodal_gen/runtime/server_args/server_args.py"
    )
    fp8 = opt("--model-type", "main", "python/sglang/multimodal_gen/tools/build_modelopt_fp8.py")
    repack = opt("--model-type", "main", "python/sglang/multimodal_gen/tools/wan_repack.py")
    host = opt("--host", "ServerArgs", server.path)  # the primary class's file has the most
    model = ConfigModel(
        options=(bench, diffusion, server, host, fp8, repack),
        classes=("ServerArgs",),
    )
    remedies = Remedies(model, "python -m sglang.launch_server")
    assert remedies.option("--port", "python/sglang/srt/managers/scheduler.py") is server
    assert remedies.option("--port", "python/sglang/jit_kernel/utils.py") is server
    assert (
        remedies.option("--port", "python/sglang/multimodal_gen/runtime/entrypoints/http.py")
        is diffusion
    )
    assert remedies.option("--model-type", "python/sglang/cli/serve_backends.py") is None
    assert (
        remedies.option("--model-type", "python/sglang/multimodal_gen/tools/wan_repack.py")
        is repack
    )


def test_a_value_with_placeholders_is_kept_whole() -> None:
    """daemon.py:718 (v0.5.19): "Use --dist-init-method tcp://<node0-ip>:<port>"
    gave the example `--dist-init-method tcp://` and split the flag from its
    value in the quote."""
    from miner.analysis.config import ConfigModel

    daemon = Option(
        "dist_init_method",
        ("--dist-init-method",),
        "WeightCacheDaemonArgs",
        "python/sglang/srt/weight_cache/daemon.py",
        116,
        "argparse",
        type="str",
    )
    remedies = Remedies(ConfigModel(options=(daemon,)), "python -m sglang.srt.weight_cache.daemon")
    (advice,) = remedies.remedies(
        "dist_init_method is required for multi-node weight cache daemons. Use "
        "--dist-init-method tcp://<node0-ip>:<port> to specify the rendezvous address "
        "accessible from all nodes."
    )
    assert advice.text == (
        'Do what the message advises: "Use `--dist-init-method tcp://<node0-ip>:<port>` '
        'to specify the rendezvous address accessible from all nodes".'
    )
    assert advice.example is not None
    assert advice.example.after == (
        "python -m sglang.srt.weight_cache.daemon ... --dist-init-method tcp://<node0-ip>:<port>"
    )


def test_a_flag_and_its_value_are_one_code_span() -> None:
    """A value after a flag joins its code span only when it is one (a digit,
    ``/``, ``:`` or ``<`` in a word): "--grpc-port / SGLANG_GRPC_PORT" is two names."""
    from miner.analysis.remedy import _marked

    flags = ["--grpc-port", "--tp-size", "--enable-foo", "--model-path"]
    assert _marked(
        "--grpc-port / SGLANG_GRPC_PORT (…) must be set", flags, ["SGLANG_GRPC_PORT"]
    ) == ("`--grpc-port` / `SGLANG_GRPC_PORT` (…) must be set")
    assert _marked("pass --tp-size 2 or --enable-foo to run", flags, []) == (
        "pass `--tp-size 2` or `--enable-foo` to run"
    )
    assert _marked("use --model-path /data/m now", flags, []) == "use `--model-path /data/m` now"


@pytest.mark.parametrize(
    ("message", "reason"),
    [
        # values shown are no reason (SGLang's weight loader, speculative hook)
        ("Weight dtype mismatch: target.dtype={}, loaded_weight.dtype={}", None),
        ("EAGLE needs topk 1. Got `--speculative-eagle-topk`={}", None),
        ("Request failed. Abort request obj.rid={}", None),
        ("Unknown variant: variant={} maps to {}, model_subfolder={}", None),
        (
            "Cannot offload int8 KV: the host-offload path is not int8-aware",
            "the host-offload path is not int8-aware",
        ),
        (
            "MHA host pool cannot translate indices because the MHA host pool has none",
            "because the MHA host pool has none",
        ),
    ],
)
def test_a_reason_explains_rather_than_shows_values(message: str, reason: str | None) -> None:
    assert Phrases((), ()).reason(message) == reason
