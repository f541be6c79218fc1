"""The configuration miner on small repositories: plain argparse, and dataclasses of arguments."""

from __future__ import annotations

from dataclasses import replace

from miner.analysis.code import SourceIndex
from miner.analysis.config import Condition, ConfigModel, Option, mine_config, predicate_function

ARGPARSE_CLI = """\
import argparse
import os

MODES = ["fast", "safe", "off"]


def build_parser():
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", choices=MODES, default="fast", help="How to run.")
    parser.add_argument("--cache-dir", dest="cache_dir", type=str, default=None)
    parser.add_argument("--verbose", "-v", action="store_true", help="Talk "
                        "more.")
    parser.add_argument("--level", type=int, choices=[1, 2, 3], default=2)
    parser.add_argument("--old-mode", dest="mode", help="Deprecated: use --mode instead.")
    parser.add_argument("input", help="a positional argument is not a flag")
    return parser


def main():
    args = build_parser().parse_args()
    if os.environ.get("APP_STRICT", "0") == "1" and args.cache_dir is None:
        raise RuntimeError("strict mode needs a cache dir")
    if os.getenv("APP_HOME") is None:
        raise RuntimeError("APP_HOME is not set")


if __name__ == "__main__":
    main()
"""


def config_of(files: dict[str, str]):
    index = SourceIndex({p: t.encode() for p, t in files.items()})
    return index, mine_config(index)


def test_plain_argparse_flags_choices_defaults_aliases():
    _, config = config_of({"app/__init__.py": "", "app/cli.py": ARGPARSE_CLI})
    mode = config.option("mode")
    assert mode is not None
    assert mode.flags == ("--mode",)
    assert mode.choices == ("fast", "safe", "off")
    assert mode.default == "'fast'"
    assert mode.help == "How to run."
    assert mode.owner == "build_parser"
    assert (mode.path, mode.line) == ("app/cli.py", 9)
    assert config.aliases_of("mode") == ("--old-mode",)
    alias = [o for o in config.options_named("mode") if o.deprecated_for]
    assert alias[0].deprecated_for == "--mode"
    verbose = config.option("verbose")
    assert verbose is not None
    assert verbose.flags == ("--verbose", "-v")
    assert verbose.action == "store_true" and verbose.is_bool
    assert verbose.help == "Talk more."
    level = config.option("level")
    assert level is not None and level.choices == ("1", "2", "3") and level.type == "int"
    cache = config.option("cache_dir")
    assert cache is not None and cache.default == "None" and cache.flags == ("--cache-dir",)
    assert config.option("input") is None
    assert config.entry_point == "app.cli"
    assert config.classes == ()


def test_plain_argparse_environment_reads():
    _, config = config_of({"app/cli.py": ARGPARSE_CLI})
    strict = config.env_var("APP_STRICT")
    assert strict is not None
    assert (strict.default, strict.path, strict.line, strict.reads) == ("'0'", "app/cli.py", 21, 1)
    home = config.env_var("APP_HOME")
    assert home is not None and home.default is None and home.line == 23


ARGS_MODULE = """\
import dataclasses
from typing import Annotated, Literal, Optional

from pkg.helpers import add_cli_args_from_dataclass, extra_buffer_of, resolving_view

A = Annotated


class Arg:
    def __init__(self, help="", choices=None, no_cli=False, aliases=None):
        pass


class NS:
    def __init__(self, path):
        self.path = path


@dataclasses.dataclass
class ServerArgs:
    model_path: A[str, Arg(help="Path to weights.", aliases=["--model"])] = ""
    disable_radix_cache: A[bool, "Disable the radix cache.", NS("memory")] = False
    cache_strategy: A[
        str,
        Arg(help="Cache strategy.", choices=["auto", "none", "extra", "extra_lazy"]),
        NS("exec.cache"),
    ] = "auto"
    retraction_backup: A[
        Optional[str], Arg(help="Backup.", choices=["cpu_tensor", "host_pool"]), NS("disagg")
    ] = None
    dtype: A[Literal["auto", "half"], "Data type."] = "auto"
    internal_only: A[bool, Arg(help="Set by code.", no_cli=True)] = False
    plain: int = 3

    @staticmethod
    def add_cli_args(parser):
        add_cli_args_from_dataclass(parser, ServerArgs)
        parser.add_argument(
            "--cache-policy",
            dest="cache_strategy",
            new_flag="--cache-strategy",
            help="Deprecated alias for --cache-strategy.",
        )

    def enable_extra_buffer(self) -> bool:
        return extra_buffer_of(resolving_view(self))

    @property
    def is_half(self) -> bool:
        cfg = resolving_view(self)
        return cfg.dtype == "half"

    def describe(self, verbose):
        return self.model_path


def get_server_args() -> ServerArgs:
    return _ARGS
"""

HELPERS_MODULE = '''\
def add_cli_args_from_dataclass(parser, cls):
    pass


def resolving_view(obj):
    return obj


def extra_buffer_of(cfg):
    """The one definition of the predicate."""
    return cfg.disable_radix_cache is False and cfg.cache_strategy in (
        "extra",
        "extra_lazy",
    )
'''

CONTEXT_MODULE = """\
def get_memory():
    return _CONTEXT.config_bag("memory")


def get_disagg():
    return _CONTEXT.config_bag("disagg")


def extra_buffer_enabled() -> bool:
    return (
        get_memory().disable_radix_cache is False
        and get_exec().cache.cache_strategy in ("extra", "extra_lazy")
    )


def get_exec():
    return _CONTEXT.config_bag("exec")
"""

ENV_MODULE = """\
import os


class EnvField:
    def __init__(self, default, deprecated_name=None):
        self.default = default

    def get(self):
        return os.getenv(self.name)


class EnvBool(EnvField):
    pass


class EnvInt(EnvField):
    pass


class EnvBoolWithAlias(EnvBool):
    pass


class Envs:
    PKG_DEBUG = EnvBool(False)
    PKG_WORKERS = EnvInt(4)
    PKG_FAST = EnvBoolWithAlias(True, deprecated_name="PKG_QUICK")


envs = Envs()
"""

LAUNCH_MODULE = """\
from pkg.server_args import ServerArgs


def main():
    ServerArgs()


if __name__ == "__main__":
    main()
"""

DATACLASS_REPO = {
    "pkg/__init__.py": "",
    "pkg/server_args.py": ARGS_MODULE,
    "pkg/helpers.py": HELPERS_MODULE,
    "pkg/context.py": CONTEXT_MODULE,
    "pkg/environ.py": ENV_MODULE,
    "pkg/launch_server.py": LAUNCH_MODULE,
}


def test_dataclass_fields_become_flags():
    _, config = config_of(DATACLASS_REPO)
    assert config.classes == ("ServerArgs",)
    strategy = config.option("cache_strategy")
    assert strategy is not None
    assert strategy.flags == ("--cache-strategy",)
    assert strategy.choices == ("auto", "none", "extra", "extra_lazy")
    assert strategy.default == "'auto'"
    assert strategy.namespace == "exec.cache"
    assert strategy.source == "dataclass"
    assert config.aliases_of("cache_strategy") == ("--cache-policy",)
    model = config.option("model_path")
    assert model is not None and model.flags == ("--model-path", "--model")
    radix = config.option("disable_radix_cache")
    assert radix is not None and radix.is_bool and radix.help == "Disable the radix cache."
    dtype = config.option("dtype")
    assert dtype is not None and dtype.choices == ("auto", "half")
    internal = config.option("internal_only")
    assert internal is not None and internal.flags == ()
    plain = config.option("plain")
    assert plain is not None and plain.flags == () and plain.default == "3"
    backup = config.option("retraction_backup")
    assert backup is not None and backup.default == "None" and backup.namespace == "disagg"
    assert config.entry_point == "pkg.launch_server"
    assert ("get_disagg", "disagg") in config.accessors
    assert ("get_server_args", "") in config.accessors


def test_an_accessor_named_for_a_namespace_returning_a_class_that_answers_attributes():
    """SGLang's ``get_parallel() -> ParallelContext``, whose ``__getattr__``
    serves the ``parallel`` leaves (``get_parallel().tp_size``)."""
    args = ARGS_MODULE.replace(
        "    plain: int = 3\n",
        '    plain: int = 3\n    tp_size: A[int, "Tensor parallel size.", NS("parallel")] = 1\n'
        '    lora_rank: A[int, "LoRA rank.", NS("lora")] = 8\n',
    )
    context = CONTEXT_MODULE + (
        "\n\nclass ParallelContext:\n"
        "    def __getattr__(self, name):\n"
        "        return getattr(self._config, name)\n"
        "\n\n_PARALLEL = ParallelContext()\n"
        "\n\ndef get_parallel() -> ParallelContext:\n"
        "    return _PARALLEL\n"
        "\n\nclass LoraState:\n"
        "    rank = 0\n"
        "\n\ndef get_lora() -> LoraState:\n"
        "    return LoraState()\n"
    )
    _, config = config_of({**DATACLASS_REPO, "pkg/server_args.py": args, "pkg/context.py": context})
    assert ("get_parallel", "parallel") in config.accessors
    assert config.option("lora_rank") is not None  # a namespace root, but no __getattr__
    assert not any(call == "get_lora" for call, _ in config.accessors)


def test_derived_settings_follow_delegation():
    _, config = config_of(DATACLASS_REPO)
    extra = config.derived_setting("enable_extra_buffer")
    assert extra is not None
    assert extra.via == ("ServerArgs.enable_extra_buffer", "extra_buffer_of")
    assert extra.path == "pkg/server_args.py"
    assert extra.mode == "all"
    assert [(c.name, c.op, c.values) for c in extra.conditions] == [
        ("disable_radix_cache", "falsy", ()),
        ("cache_strategy", "in", ("extra", "extra_lazy")),
    ]
    half = config.derived_setting("is_half")
    assert half is not None
    assert [(c.name, c.op, c.values) for c in half.conditions] == [("dtype", "==", ("half",))]
    assert config.derived_setting("describe") is None


def test_predicate_function_over_accessors():
    index, config = config_of(DATACLASS_REPO)
    found = predicate_function(index, "extra_buffer_enabled", config)
    assert found is not None
    assert found.path == "pkg/context.py"
    assert found.conditions[1] == Condition(
        "cache_strategy",
        "in",
        ("extra", "extra_lazy"),
        "get_exec().cache.cache_strategy in ('extra', 'extra_lazy')",
    )


def test_environment_registry():
    _, config = config_of(DATACLASS_REPO)
    debug = config.env_var("PKG_DEBUG")
    assert debug is not None
    assert (debug.kind, debug.default, debug.registry) == ("bool", "False", "Envs")
    workers = config.env_var("PKG_WORKERS")
    assert workers is not None and workers.kind == "int" and workers.default == "4"
    quick = config.env_var("PKG_QUICK")
    assert quick is not None and quick.deprecated_for == "PKG_FAST"


FIELDS_LOOP = """\
import argparse
from dataclasses import dataclass, field, fields


@dataclass
class BenchArgs:
    batch_size: int = 8
    backend: str = field(
        default="torch", metadata={"help": "Backend.", "choices": ["torch", "jax"]}
    )

    @staticmethod
    def add_cli_args(parser):
        for f in fields(BenchArgs):
            parser.add_argument("--" + f.name.replace("_", "-"), default=f.default)
"""


def test_dataclass_turned_into_flags_by_a_loop():
    _, config = config_of({"bench.py": FIELDS_LOOP})
    assert config.classes == ("BenchArgs",)
    batch = config.option("batch_size")
    assert batch is not None and batch.flags == ("--batch-size",) and batch.default == "8"
    backend = config.option("backend")
    assert backend is not None
    assert backend.choices == ("torch", "jax") and backend.help == "Backend."
    assert backend.default == "'torch'"


def test_environment_writes_are_not_reads():
    """``os.environ["X"] = v`` (multimodal_gen's set_cuda_arch) sets a variable
    for a library to read; a card must not say the code reads it there."""
    source = (
        "import os\n"
        "def setup():\n"
        '    os.environ["TORCH_CUDA_ARCH_LIST"] = "9.0"\n'
        '    os.environ["NCCL_DEBUG"] += ",INIT"\n'
        '    del os.environ["OLD_FLAG"]\n'
        '    os.environ.pop("GONE", None)\n'
        '    if os.environ["APP_MODE"] == "fast":\n'
        "        return 1\n"
    )
    _, config = config_of({"app/env.py": source})
    assert [v.name for v in config.env] == ["APP_MODE"]
    mode = config.env_var("APP_MODE")
    assert mode is not None and (mode.path, mode.line) == ("app/env.py", 7)


def test_a_flag_with_a_boolean_default_is_a_switch():
    def flag(action, default, type_=None):
        return Option("x", ("--x",), "f", "p.py", 1, "argparse", type_, default, action=action)

    # SGLang's diffusion server: ``action=StoreBoolean, default=ServerArgs.x`` (False)
    assert flag("StoreBoolean", "False").is_bool
    assert not flag("StoreBoolean", "True").is_bool  # turned off by a value: --vae-tiling false
    assert flag("store_true", "False").is_bool
    assert not flag("store_false", "True").is_bool
    assert not flag(None, "'auto'").is_bool
    assert not flag(None, "False", "int").is_bool


def test_an_option_is_near_the_files_of_its_package_part():
    srt = Option("q", ("--q",), "ServerArgs", "python/pkg/srt/args.py", 1, "dataclass")
    srt = replace(srt, module="pkg.srt.args")
    assert srt.defined_near("python/pkg/srt/layers/x.py")
    assert not srt.defined_near("python/pkg/gen/x.py")
    assert not srt.defined_near("python/pkg/launch.py")
    config = ConfigModel(options=(srt,), classes=("ServerArgs",))
    assert config.top_level("python/pkg/launch.py")
    assert config.near(srt, "python/pkg/launch.py")
    assert not config.top_level("python/pkg/gen/x.py")
    top = replace(srt, path="python/pkg/profiler.py", module="pkg.profiler")
    assert top.defined_near("python/pkg/gen/x.py")  # a module right in the top package
    assert replace(srt, module=None).defined_near("anywhere.py")  # no module: not known


SUPPRESSING_WRAPPER = """\
import argparse
from dataclasses import dataclass


@dataclass
class SamplingParams:
    num_frames: int = 1
    image_path: str | None = None

    @staticmethod
    def add_cli_args(parser):
        def add_argument(*name_or_flags, **kwargs):
            kwargs.setdefault("default", argparse.SUPPRESS)
            return parser.add_argument(*name_or_flags, **kwargs)

        add_argument("--num-frames", type=int, help="Number of frames to generate")
        add_argument("--image-path", type=str)
        add_argument("--action-mode", type=str, help="Only a subclass has this field.")
        add_argument("--seed", type=int, default=1024)
        return parser
"""


def test_a_local_wrapper_of_add_argument_defines_flags_with_the_field_defaults():
    """multimodal_gen's SamplingParams.add_cli_args calls a local
    ``add_argument`` that hands on to the parser with ``default=SUPPRESS``:
    its calls are flags; a flag not given keeps the class field's default,
    and a field the class does not declare has no known default. The module
    does not run as a command, so none is written for its flags."""
    _, config = config_of({"gen/__init__.py": "", "gen/sampling.py": SUPPRESSING_WRAPPER})
    frames = config.option("num_frames")
    assert frames is not None and frames.flags == ("--num-frames",)
    assert (frames.owner, frames.path, frames.line) == ("SamplingParams", "gen/sampling.py", 16)
    assert frames.default == "1" and frames.help == "Number of frames to generate"
    image = config.option("image_path")
    assert image is not None and image.default == "None"
    action = config.option("action_mode")
    assert action is not None and action.flags == ("--action-mode",) and action.default is None
    seed = config.option("seed")
    assert seed is not None and seed.default == "1024"
    # the wrapper's own call (``*name_or_flags``) is no flag
    assert {o.name for o in config.options} == {"num_frames", "image_path", "action_mode", "seed"}
    assert config.scripts == ()
    _, plain = config_of({"app/__init__.py": "", "app/cli.py": ARGPARSE_CLI})
    assert plain.scripts == ("app/cli.py",)


MIXIN_FLAGS = """\
import argparse
from dataclasses import dataclass
from enum import Enum


class Role(str, Enum):
    MONOLITHIC = "monolithic"
    ENCODER = "encoder"


class DisaggMixin:
    @classmethod
    def add_disagg_cli_args(cls, parser):
        role_default = cls.role.value if isinstance(cls.role, Role) else cls.role
        parser.add_argument("--role", type=str, default=role_default)
        parser.add_argument("--disagg-timeout", type=int, default=cls.disagg_timeout)
        parser.add_argument("--pool-size", type=int, default=cls.pool_size)
        limit = 8
        parser.add_argument("--max-slots", type=int, default=limit)


@dataclass
class ServerArgs(DisaggMixin):
    role: Role = Role.MONOLITHIC
    disagg_timeout: int = 3600
"""


def test_a_mixin_flag_default_is_its_subclass_field_or_unknown():
    """multimodal_gen's ``DisaggServerArgsMixin.add_disagg_cli_args``:
    ``default=cls.disagg_timeout`` is the field of the dataclass that derives
    from the mixin (3600), not the text ``cls.disagg_timeout``; a local
    computed from an expression (``role_default = ... if ... else ...``) is no
    value called ``role_default``: unknown; a local bound once to a constant
    is that constant; a field no class declares is unknown."""
    _, config = config_of({"gen/__init__.py": "", "gen/args.py": MIXIN_FLAGS})
    defaults = {o.name: o.default for o in config.options if o.source == "argparse"}
    assert defaults == {
        "role": None,
        "disagg_timeout": "3600",
        "pool_size": None,
        "max_slots": "8",
    }


def test_choices_in_a_local_the_function_grows_are_its_literals_and_every_added_one():
    source = """\
import argparse

BACKENDS = {"flashinfer", "pytorch"}


def build_parser(extra):
    parser = argparse.ArgumentParser()
    backends = set(BACKENDS)
    if extra:
        backends.add("oracle")
    parser.add_argument("--sampling-backend", choices=backends, default=None)
    modes = list(BACKENDS)
    modes.remove("pytorch")
    parser.add_argument("--mode", choices=modes)
    return parser
"""
    config = mine_config(SourceIndex({"cli.py": source.encode()}))
    backend = config.option("sampling_backend")
    assert backend is not None
    assert backend.choices == ("flashinfer", "pytorch", "oracle")
    # a local changed other than by adding a literal: its choices are not known
    mode = config.option("mode")
    assert mode is not None and mode.choices is None
