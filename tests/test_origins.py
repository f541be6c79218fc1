"""Origins: what a site's condition and message read, traced to what decides it
(miner.analysis.origins), on small sources, one resolution kind per test."""

from __future__ import annotations

import textwrap

import pytest

from miner import pipeline
from miner.analysis.audience import AudienceDecision, Settings, classify_by_origins
from miner.analysis.facts import collect
from miner.analysis.origins import Traced, kind_counts, trace_origins
from miner.extract.runner import extract_file
from miner.model import (
    Caught,
    CommitInfo,
    Constraint,
    Error,
    Hop,
    Origin,
    OriginKind,
    Unreachable,
)

BLOB = "0" * 40
INFO = CommitInfo("repo", "acme/pkg", "v1", "1" * 40, "2026-01-01T00:00:00+00:00")


def traced(files: dict[str, str]) -> tuple[list[Error], Traced]:
    """The errors of ``files`` (path -> source) and their origins."""
    data = {p: textwrap.dedent(t).encode() for p, t in files.items()}
    results = [extract_file(p, BLOB, d) for p, d in data.items()]
    result = pipeline.assemble(INFO, results)
    facts = collect(data, result.sites)
    return list(result.errors), trace_origins(data, result.errors, facts)


def origins_at(files: dict[str, str], path: str, line: int) -> tuple[Origin, ...]:
    errors, found = traced(files)
    error = next(e for e in errors if (e.primary.path, e.primary.line) == (path, line))
    return found.origins[error.error_id]


def brief(origins: tuple[Origin, ...]) -> list[tuple[str, str, str, tuple[str, ...]]]:
    return [(o.kind.value, o.name, o.constraint.op, o.constraint.values) for o in origins]


ARGS = """
import argparse
from dataclasses import dataclass

@dataclass
class ServerArgs:
    moe_runner_backend: str = "auto"
    enable_thing: bool = False

    @staticmethod
    def add_cli_args(parser):
        parser.add_argument("--moe-runner-backend", type=str, default="auto",
                            choices=["auto", "marlin", "triton"])
        parser.add_argument("--enable-thing", action="store_true")
"""


def test_self_attribute_is_traced_to_the_flag_through_an_enum_test() -> None:
    layer = """
    from pkg.utils import get_backend

    class Method:
        def __init__(self):
            self.use_marlin = get_backend().is_marlin()

        def apply(self):
            if self.use_marlin:
                raise RuntimeError("Marlin needs SM90+")
    """
    utils = """
    STATE = {}

    class Backend:
        def __init__(self, value):
            self.value = value
        def is_marlin(self):
            return self.value == "marlin"

    def init(server_args):
        moe.runner_backend = Backend(server_args.moe_runner_backend)

    def get_backend():
        return moe.runner_backend
    """
    files = {"pkg/server_args.py": ARGS, "pkg/layer.py": layer, "pkg/utils.py": utils}
    found = origins_at(files, "pkg/layer.py", 10)
    assert brief(found) == [("flag", "--moe-runner-backend", "==", ("marlin",))]
    origin = found[0]
    assert origin.owner == "ServerArgs"
    assert origin.read == "self.use_marlin"
    assert [(h.path, h.line) for h in origin.chain] == [
        ("pkg/layer.py", 9),
        ("pkg/layer.py", 6),
        ("pkg/utils.py", 14),
        ("pkg/utils.py", 11),
    ]
    assert origin.chain[1] == Hop("pkg/layer.py", 6, "self.use_marlin = get_backend().is_marlin()")


def test_a_try_import_flag_is_the_package_it_imports_missing() -> None:
    source = """
    try:
        if FAST:
            from zbal.buffer import Buffer
        else:
            from deep_ep import Buffer
        use_deepep = True
    except ImportError:
        use_deepep = False

    FAST = False

    def make():
        if not use_deepep:
            raise ImportError("DeepEP is not installed.")
    """
    found = origins_at({"pkg/__init__.py": "", "pkg/d.py": source}, "pkg/d.py", 15)
    assert brief(found) == [
        ("package", "zbal", "missing", ()),
        ("package", "deep_ep", "missing", ()),
    ]
    assert found[1].owner == "deep_ep"
    assert found[1].defined == "pkg/d.py:2"
    assert found[1].chain[-1] == Hop("pkg/d.py", 6, "from deep_ep import Buffer")


def test_an_import_error_handler_names_the_distribution_the_code_says() -> None:
    source = """
    # Import to use torch.ops.attentions, install package with sgl_kernel_npu
    try:
        import attentions
    except ImportError as e:
        raise ImportError("Install it from sgl-project/sgl-kernel-npu.") from e
    """
    found = origins_at({"pkg/laser.py": source}, "pkg/laser.py", 6)
    assert brief(found) == [("package", "attentions", "missing", ())]
    assert found[0].owner == "sgl-kernel-npu"


def test_a_local_is_traced_to_the_model_config_field_and_the_list_it_must_be_in() -> None:
    source = """
    def check(server_args):
        is_deepseek = False
        try:
            hf_config = load(server_args).hf_config
            arch = hf_config.architectures[0]
            is_deepseek = arch in ["DeepseekV3ForCausalLM", "GlmMoeDsaForCausalLM"]
        except Exception:
            pass
        if is_deepseek:
            raise ValueError("not supported with absorbed MLA")
    """
    found = origins_at({"pkg/hook.py": source}, "pkg/hook.py", 11)
    assert brief(found) == [
        (
            "model-config",
            "architectures",
            "in",
            ("DeepseekV3ForCausalLM", "GlmMoeDsaForCausalLM"),
        )
    ]
    assert found[0].owner == "config.json"
    assert [h.line for h in found[0].chain] == [10, 7, 6]


def test_self_field_of_an_options_class_is_its_own_flag_not_another_class_of_the_name() -> None:
    server = """
    from dataclasses import dataclass

    @dataclass
    class ServerArgs:
        boundary_ratio: float | None = None

        @staticmethod
        def add_cli_args(parser):
            parser.add_argument("--boundary-ratio", type=float, default=None)
    """
    sampling = """
    from dataclasses import dataclass

    @dataclass
    class SamplingParams:
        boundary_ratio: float | None = None

        @staticmethod
        def add_cli_args(parser):
            parser.add_argument("--boundary-ratio", type=float, default=None)

        def check(self):
            if self.boundary_ratio is not None and self.boundary_ratio > 1.0:
                raise ValueError(f"boundary_ratio must be within [0, 1], got {self.boundary_ratio}")
    """
    files = {"gen/server_args.py": server, "gen/sampling_params.py": sampling}
    found = origins_at(files, "gen/sampling_params.py", 14)
    assert {(o.owner, o.defined.split(":")[0]) for o in found} == {
        ("SamplingParams", "gen/sampling_params.py")
    }
    assert brief(found) == [
        ("flag", "--boundary-ratio", "is not None", ()),
        ("flag", "--boundary-ratio", ">", ("1.0",)),
        ("flag", "--boundary-ratio", "any", ()),
    ]
    assert [o.role for o in found] == ["condition", "condition", "message"]


def test_env_reads_keep_their_default_and_set_or_unset() -> None:
    source = """
    import os

    def start():
        if "SGLANG_FAST" in os.environ:
            raise RuntimeError("SGLANG_FAST is not supported")
        if not os.getenv("SGLANG_HOME"):
            raise RuntimeError("set SGLANG_HOME")
    """
    errors, found = traced({"pkg/e.py": source})
    by_line = {e.primary.line: found.origins[e.error_id] for e in errors}
    assert brief(by_line[6]) == [("env", "SGLANG_FAST", "set", ())]
    assert brief(by_line[8]) == [
        ("env", "SGLANG_FAST", "unset", ()),
        ("env", "SGLANG_HOME", "false", ()),
    ]


def test_probes_are_hardware_and_availability_checks_are_packages() -> None:
    source = """
    import torch

    def run():
        if not is_cuda():
            raise RuntimeError("CUDA only")
        if torch.cuda.get_device_capability()[0] < 9:
            raise RuntimeError("needs SM90")
        if not is_flashinfer_available():
            raise ImportError("flashinfer")
    """
    errors, found = traced({"pkg/h.py": source})
    last = next(e for e in errors if e.primary.line == 10)
    assert brief(found.origins[last.error_id]) == [
        ("hardware", "is_cuda", "true", ()),
        ("hardware", "torch.cuda.get_device_capability", ">=", ("9",)),
        ("package", "flashinfer", "false", ()),
    ]
    assert found.origins[last.error_id][2].owner == "flashinfer-python"


def test_a_parameter_is_traced_to_the_argument_of_each_call() -> None:
    source = """
    def validate(tp_size):
        if tp_size > 8:
            raise ValueError("too many ranks")

    def main(server_args):
        validate(server_args.tp_size)
    """
    args = """
    from dataclasses import dataclass

    @dataclass
    class ServerArgs:
        tp_size: int = 1

        @staticmethod
        def add_cli_args(parser):
            parser.add_argument("--tp-size", type=int, default=1)
    """
    found = origins_at({"pkg/v.py": source, "pkg/server_args.py": args}, "pkg/v.py", 4)
    assert brief(found) == [("flag", "--tp-size", ">", ("8",))]
    assert found[0].chain[-1] == Hop("pkg/v.py", 7, "tp_size=server_args.tp_size")


def test_the_condition_around_the_call_of_the_function_is_a_caller_origin() -> None:
    source = """
    def check_paged(is_paged):
        if not is_paged:
            raise NotImplementedError("only paged")

    def run(server_args):
        if server_args.enable_thing:
            check_paged(True)
    """
    files = {"pkg/server_args.py": ARGS, "pkg/r.py": source}
    found = origins_at(files, "pkg/r.py", 4)
    # every call passes True: no constant meets "is_paged is false"
    assert [(o.role, *b) for o, b in zip(found, brief(found), strict=True)] == [
        ("caller", "flag", "--enable-thing", "true", ()),
    ]
    assert [(h.path, h.line) for h in found[0].chain] == [("pkg/r.py", 4), ("pkg/r.py", 7)]


UNREACHABLE = """
class Compressor:
    def forward_compress(self, x, ratio, is_paged: bool = False):
        if ratio not in (4, 128):
            raise ValueError("bad ratio")
        if not is_paged:
            raise NotImplementedError("expects paged metadata")
        return x

def first(backend, x):
    return backend.forward_compress(x, 4, is_paged=True)

def second(backend, x):
    return backend.forward_compress(x, 128, is_paged=True)
"""


UNCALLED = """
import abc


class Base(abc.ABC):
    pass


class Kernel(Base):
    def fused(self, x):
        if x.ndim != 2:
            raise NotImplementedError("this kernel is not implemented yet")


class Layer(Module):
    def extra_repr(self, x):
        if x:
            raise ValueError("framework hook")


def stub(*args):
    raise NotImplementedError("seam: not implemented yet")


@register
def registered(x):
    if x:
        raise ValueError("registered by its decorator")


def mentioned(x):
    if x:
        raise ValueError("named in a table")


def called(x):
    if x:
        raise ValueError("called below")


def _missing_(x):
    raise ValueError("called by Python")


TABLE = {"m": mentioned}
called(1)
"""


def test_a_function_no_file_calls_or_names_is_unreachable() -> None:
    files = {"pkg/k.py": UNCALLED, "pkg/__init__.py": "from pkg.k import Kernel as K\n"}
    stub = unreachable_at(files, "pkg/k.py", 22)
    assert stub == Unreachable("pkg/k.py", 21, "stub", (), uncalled=True)
    assert Unreachable.from_json(stub.to_json()) == stub
    # a method of a class whose bases are the file's own or abc.ABC; none once
    # a package's __init__ names the class (its users call its methods)
    fused = unreachable_at({"pkg/k.py": UNCALLED}, "pkg/k.py", 12)
    assert fused == Unreachable("pkg/k.py", 10, "fused", (), uncalled=True)
    assert unreachable_at(files, "pkg/k.py", 12) is None
    # a base from elsewhere may call it by name; a decorator may register it;
    # a table names it; a call calls it; Python calls a special method
    for line in (18, 28, 33, 38, 42):
        assert unreachable_at(files, "pkg/k.py", line) is None, line
    # a comment or a docstring that names it calls nothing; a string in code may
    noted = {**files, "pkg/doc.py": '"""See :func:`stub`."""\n# stub() is kept\n'}
    assert unreachable_at(noted, "pkg/k.py", 22) == stub
    named = {**files, "pkg/doc.py": 'import pkg.k\nfn = getattr(pkg.k, "stub")\n'}
    assert unreachable_at(named, "pkg/k.py", 22) is None


GUARDED = """
from pkg.platform import is_cuda

_is_cuda = is_cuda()


def graph_forward(x, mode):
    assert _is_cuda, "Internal error: graph dispatch is only supported on CUDA"
    if mode != "graph":
        raise ValueError(mode)
    return x


def run(x, mode):
    if is_cuda():
        return graph_forward(x, mode)
    return x
"""


def test_every_call_made_only_where_the_condition_cannot_hold_makes_it_unreachable() -> None:
    files = {"pkg/g.py": GUARDED, "pkg/platform.py": "def is_cuda():\n    return True\n"}
    fact = unreachable_at(files, "pkg/g.py", 8)
    assert fact is not None
    assert (fact.path, fact.line, fact.condition, fact.guard) == (
        "pkg/g.py",
        15,
        "is_cuda()",
        "not _is_cuda",
    )
    assert [(v.kind.value, v.name, v.constraint.op) for v in fact.values] == [
        ("hardware", "is_cuda", "true")
    ]
    assert Unreachable.from_json(fact.to_json()) == fact
    from miner.analysis.audience import classify_by_origins

    errors, _ = traced(files)
    error = next(e for e in errors if e.primary.line == 8)
    decision = classify_by_origins(error, (), unreachable=fact)
    assert (decision.audience.value, decision.reason) == (
        "internal",
        "every call is made only when is_cuda() (pkg/g.py:15), which rules out not _is_cuda",
    )
    # the mode check reads what the call passes on: reachable
    assert unreachable_at(files, "pkg/g.py", 10) is None
    # a second call that is not under the guard reaches the assert
    more = GUARDED + "\n\ndef warm(x):\n    return graph_forward(x, 'graph')\n"
    assert unreachable_at({**files, "pkg/g.py": more}, "pkg/g.py", 8) is None


def test_vendored_code_no_file_calls_is_internal_and_a_test_stays_a_test() -> None:
    from miner.analysis.audience import classify_by_origins

    nvml = "def nvmlDeviceGetSamples(d):\n    if d < 0:\n        raise ValueError(d)\n"
    files = {"pkg/third_party/nvml.py": nvml, "test/test_nvml.py": nvml}
    errors, found = traced(files)
    for error in errors:
        fact = found.unreachable[error.error_id]
        assert (fact.condition, fact.uncalled) == ("nvmlDeviceGetSamples", True)
    decided = {
        e.primary.path: classify_by_origins(e, (), unreachable=found.unreachable[e.error_id])
        for e in errors
    }
    assert [(p, d.audience.value, d.rule, d.reason) for p, d in sorted(decided.items())] == [
        (
            "pkg/third_party/nvml.py",
            "internal",
            "origin-unreachable",
            "no file of the commit calls or names nvmlDeviceGetSamples (pkg/third_party/nvml.py:1)",
        ),
        ("test/test_nvml.py", "test", "path-test", "path: test/ (test folder)"),
    ]


def unreachable_at(files: dict[str, str], path: str, line: int) -> Unreachable | None:
    errors, found = traced(files)
    error = next(e for e in errors if (e.primary.path, e.primary.line) == (path, line))
    return found.unreachable.get(error.error_id)


def test_a_parameter_every_call_sets_against_the_condition_makes_the_raise_unreachable() -> None:
    fact = unreachable_at({"pkg/c.py": UNREACHABLE}, "pkg/c.py", 7)
    assert fact is not None
    assert (fact.path, fact.line, fact.condition) == ("pkg/c.py", 6, "not is_paged")
    assert [(v.kind.value, v.name, v.constraint.op) for v in fact.values] == [
        ("constant", "True", "false"),
        ("constant", "True", "false"),
    ]
    assert [v.chain[-1] for v in fact.values] == [
        Hop("pkg/c.py", 11, "is_paged=True"),
        Hop("pkg/c.py", 14, "is_paged=True"),
    ]
    # the ratio check: both calls pass a ratio it accepts (4, 128): unreachable
    # too; once one call passes a value from elsewhere, reachable
    ratio = unreachable_at({"pkg/c.py": UNREACHABLE}, "pkg/c.py", 5)
    assert ratio is not None and [v.name for v in ratio.values] == ["4", "128"]
    source = UNREACHABLE.replace("def first(backend, x):", "def first(backend, x, r):")
    source = source.replace("(x, 4, is_paged=True)", "(x, r, is_paged=True)")
    assert unreachable_at({"pkg/c.py": source}, "pkg/c.py", 5) is None
    assert unreachable_at({"pkg/c.py": source}, "pkg/c.py", 7) is not None
    assert Unreachable.from_json(fact.to_json()) == fact


def test_one_call_that_can_meet_the_condition_keeps_the_raise_reachable() -> None:
    source = UNREACHABLE.replace("x, 128, is_paged=True", "x, 128, is_paged=False")
    assert unreachable_at({"pkg/c.py": source}, "pkg/c.py", 7) is None
    # a call that leaves it out gets the default, False: reachable too
    source = UNREACHABLE.replace("x, 128, is_paged=True", "x, 128")
    assert unreachable_at({"pkg/c.py": source}, "pkg/c.py", 7) is None


def test_a_default_every_call_keeps_can_make_the_raise_unreachable() -> None:
    source = UNREACHABLE.replace("is_paged: bool = False", "is_paged: bool = True")
    source = source.replace(", is_paged=True)", ")")
    fact = unreachable_at({"pkg/c.py": source}, "pkg/c.py", 7)
    assert fact is not None
    assert {v.chain[-1].text for v in fact.values} == {"is_paged=True (default)"}


PLANNED = """
def make_plan(mode):
    if mode == "verify":
        raise NotImplementedError("target verify mode to be implemented")
    return mode

class Compressor:
    def forward_compress(self, x, mode, is_paged: bool = False):
        if is_paged:
            plan = None
        else:
            plan = make_plan(mode)
        return x, plan

def run(backend, x, mode):
    return backend.forward_compress(x, mode, is_paged=True)
"""


def test_a_function_called_only_where_the_call_cannot_be_reached_is_unreachable() -> None:
    fact = unreachable_at({"pkg/p.py": PLANNED}, "pkg/p.py", 4)
    assert fact is not None
    assert (fact.path, fact.line, fact.condition) == ("pkg/p.py", 9, "not is_paged")
    assert [v.chain[-1] for v in fact.values] == [Hop("pkg/p.py", 16, "is_paged=True")]
    reachable = PLANNED.replace("mode, is_paged=True)", "mode)")
    assert unreachable_at({"pkg/p.py": reachable}, "pkg/p.py", 4) is None


def test_a_call_unpacking_arguments_may_give_any_parameter_a_value() -> None:
    # the default (True) cannot meet the condition, but **options may hold is_paged
    source = UNREACHABLE.replace("is_paged: bool = False", "is_paged: bool = True")
    source = source.replace("x, 4, is_paged=True", "x, 4")
    assert unreachable_at({"pkg/c.py": source}, "pkg/c.py", 7) is not None
    source = source.replace("x, 128, is_paged=True", "x, 128, **options")
    source = source.replace("def second(backend, x):", "def second(backend, x, options):")
    assert unreachable_at({"pkg/c.py": source}, "pkg/c.py", 7) is None


def test_an_argument_that_is_not_a_constant_proves_nothing() -> None:
    # a config value read with a default: the config may hold any value
    source = UNREACHABLE.replace(
        "x, 128, is_paged=True", 'x, 128, is_paged=getattr(arch, "paged", True)'
    )
    source = source.replace("def second(backend, x):", "def second(backend, x, arch):")
    assert unreachable_at({"pkg/c.py": source}, "pkg/c.py", 7) is None
    # a local of the caller: its bindings may not all be seen (a loop reassigns it)
    source = UNREACHABLE.replace(
        "return backend.forward_compress(x, 128, is_paged=True)",
        ("paged = True\n    return backend.forward_compress(x, 128, is_paged=paged)"),
    )
    assert unreachable_at({"pkg/c.py": source}, "pkg/c.py", 7) is None


def test_a_function_used_other_than_by_calls_is_never_called_unreachable() -> None:
    source = UNREACHABLE + "\nHOOKS = {'compress': Compressor.forward_compress}\n"
    assert unreachable_at({"pkg/c.py": source}, "pkg/c.py", 7) is None


def test_request_fields_and_runtime_state() -> None:
    protocol = """
    from pydantic import BaseModel

    class ChatCompletionRequest(BaseModel):
        max_tokens: int | None = None
    """
    serving = """
    def handle(request, queue):
        if request.max_tokens is not None and len(queue.items) > request.max_tokens:
            raise ValueError("too long")
    """
    files = {"pkg/openai/protocol.py": protocol, "pkg/serving.py": serving}
    found = origins_at(files, "pkg/serving.py", 4)
    assert brief(found)[0] == ("request", "max_tokens", "is not None", ())
    assert found[0].owner == "ChatCompletionRequest"
    assert ("unknown", "queue", "any", ()) in brief(found)
    assert next(o for o in found if o.name == "queue").reason == "no-callers"


def test_the_trace_stops_at_the_depth_limit_and_says_so() -> None:
    chain = "\n".join(f"    v{i} = v{i - 1} + 1" for i in range(1, 12))
    head = "def f(server_args):\n    v0 = server_args.x\n"
    source = f"{head}{chain}\n    if v11:\n        raise ValueError('deep')\n"
    found = origins_at({"pkg/deep.py": source}, "pkg/deep.py", 15)
    assert [(o.kind, o.reason) for o in found] == [(OriginKind.UNKNOWN, "depth-limit")]


def test_a_raise_caught_by_a_handler_that_logs_is_logged() -> None:
    source = """
    import logging
    logger = logging.getLogger(__name__)

    def parse(text):
        try:
            if not text:
                raise ValueError("empty")
            return text
        except Exception as e:
            logger.error(f"parse error: {e}")
            return None

    def strict(text):
        try:
            if not text:
                raise KeyError("empty")
        except KeyError:
            raise
    """
    errors, found = traced({"pkg/p.py": source})
    by_line = {e.primary.line: e.error_id for e in errors}
    assert found.logged[by_line[8]] == Caught("pkg/p.py", 10, "Exception", "same", True)
    assert by_line[17] not in found.logged


def test_a_handler_that_returns_the_errors_text_does_not_hide_it() -> None:
    """``return create_error_response(str(e))``: the client gets the message
    (serving_rerank.py:126 of v0.5.19); a handler that returns something else
    after logging hides it."""
    source = """
    import logging
    logger = logging.getLogger(__name__)

    def rerank(request):
        try:
            if request.query is None:
                raise ValueError("no query")
        except ValueError as e:
            return create_error_response(str(e))

    def warmup(request):
        try:
            if request.query is None:
                raise ValueError("no warm-up query")
        except ValueError as e:
            logger.warning(f"warm-up skipped: {e}")
            return None
    """
    errors, found = traced({"pkg/r.py": source})
    by_line = {e.primary.line: e.error_id for e in errors}
    assert by_line[8] not in found.logged
    assert found.logged[by_line[15]] == Caught("pkg/r.py", 16, "ValueError", "same", True)


def test_a_raise_caught_in_every_calling_frame_is_logged_there() -> None:
    source = """
    def inner(x):
        if x < 0:
            raise ValueError("negative")

    def outer(x):
        try:
            inner(x)
        except ValueError:
            pass
    """
    errors, found = traced({"pkg/c.py": source})
    assert found.logged[errors[0].error_id] == Caught("pkg/c.py", 9, "ValueError", "caller", False)


def test_origins_round_trip_and_are_counted_per_kind() -> None:
    origin = Origin(
        OriginKind.ENV,
        "SGLANG_X",
        "envs.SGLANG_X.get()",
        owner="Envs",
        defined="a.py:3",
        default="False",
        constraint=Constraint("unset"),
        chain=(Hop("a.py", 9, "envs.SGLANG_X.get()"),),
    )
    assert Origin.from_json(origin.to_json()) == origin
    counts = kind_counts(Traced({"e1": (origin,), "e2": ()}))
    assert counts["env"] == 1 and counts["flag"] == 0 and len(counts) == len(OriginKind)


def test_audience_from_origins_is_decided_by_what_the_condition_reads() -> None:
    from miner.analysis.audience import classify_by_origins

    source = """
    def f(server_args, batch):
        if server_args.enable_thing:
            raise ValueError("thing is on")
        if batch.size > 3:
            raise ValueError("batch too big: stop")
    """
    errors, found = traced({"pkg/server_args.py": ARGS, "pkg/f.py": source})
    by_line = {e.primary.line: e for e in errors if e.primary.path == "pkg/f.py"}
    setting = classify_by_origins(by_line[4], found.origins[by_line[4].error_id])
    assert (setting.audience.value, setting.rule) == ("user-setting", "origin-user-setting")
    assert setting.reason == "flag --enable-thing (ServerArgs) via server_args.enable_thing"
    state = classify_by_origins(by_line[6], found.origins[by_line[6].error_id])
    assert (state.audience.value, state.rule) == ("internal", "origin-internal")


MINED = """\
import argparse


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--backend", default="auto", choices=["auto", "marlin"])
    check(parser.parse_args())


def check(server_args):
    if server_args.backend == "marlin":
        raise ValueError("marlin is not supported here")
"""


def test_mine_writes_origins_unless_told_not_to(make_repo, tmp_path, capsys) -> None:
    import json

    from miner.cli import main

    repo = make_repo({"tool/__init__.py": "", "tool/cli.py": MINED})
    plain, traced = tmp_path / "plain", tmp_path / "traced"
    args = ["mine", "--repo", str(repo), "--commit", "v1", "-j", "0", "-q"]
    assert main([*args, "--out", str(plain), "--no-origins"]) == 0
    assert "origins" not in capsys.readouterr().out.split("stages:")[1].splitlines()[0]
    assert main([*args, "--out", str(traced)]) == 0
    assert "origins " in capsys.readouterr().out.split("stages:")[1].splitlines()[0]

    def rows(out):
        lines = (out / "analyses.jsonl").read_text().splitlines()
        return {r["error_id"]: r["analysis"] for r in map(json.loads, lines)}

    assert all(a["origins"] == [] for a in rows(plain).values())
    (analysis,) = rows(traced).values()
    flags = [o for o in analysis["origins"] if o["kind"] == "flag"]
    assert [(o["name"], o["constraint"]) for o in flags] == [
        ("--backend", {"op": "==", "values": ["marlin"]})
    ]
    counts = json.loads((traced / "manifest.json").read_text())["counts"]
    assert counts["origins_by_kind"]["flag"] == 1
    assert counts["errors_unreachable"] == 0 and counts["errors_logged"] == 0


SAMPLING = """
from dataclasses import dataclass

@dataclass
class SamplingParams:
    num_frames: int = 1

    @staticmethod
    def add_cli_args(parser):
        parser.add_argument("--num-frames", type=int, default=1)
"""


def test_a_sampling_params_subclass_field_no_flag_sets_is_a_request_field_not_its_default() -> None:
    video = """
    from dataclasses import dataclass
    from pkg.sampling import SamplingParams

    @dataclass
    class VideoSamplingParams(SamplingParams):
        conditional_frames: int = 1

        def validate(self):
            if self.conditional_frames < 0:
                raise ValueError("conditional_frames must be >= 0")
    """
    found = origins_at({"pkg/sampling.py": SAMPLING, "pkg/video.py": video}, "pkg/video.py", 11)
    assert brief(found) == [("request", "conditional_frames", "<", ("0",))]
    assert (found[0].owner, found[0].defined, found[0].default) == (
        "VideoSamplingParams",
        "pkg/video.py:7",
        "1",
    )


PLAN = """
from dataclasses import dataclass

@dataclass
class Plan:
    stages: int = 1

    def check(self):
        if self.stages <= 0:
            raise ValueError("stages must be > 0")
"""
QUANT_ARGS = """
from dataclasses import dataclass, field
from pkg.quant import QuantArgs

@dataclass
class ServerArgs:
    quant: str = "off"
    quant_config: QuantArgs = field(default_factory=QuantArgs)

    @staticmethod
    def add_cli_args(parser):
        parser.add_argument("--quant", type=str, default="off")
"""
QUANT = """
from dataclasses import dataclass

@dataclass
class QuantArgs:
    stages: int = 1

    def validate(self):
        if self.stages <= 0:
            raise ValueError("quant-stages must be > 0")
"""


def test_a_field_of_a_plain_dataclass_is_unknown_not_the_constant_default() -> None:
    found = origins_at({"pkg/plan.py": PLAN}, "pkg/plan.py", 10)
    assert [(o.kind.value, o.name, o.reason) for o in found] == [
        ("unknown", "self.stages", "field")
    ]


ACTION_ARGS = """
import argparse
from dataclasses import dataclass

from pkg.actions import PathAction


@dataclass
class ServerArgs:
    lora_paths: list = None

    @staticmethod
    def add_cli_args(parser):
        parser.add_argument("--lora-paths", nargs="*", default=None, action=PathAction)
"""
ACTIONS = """
import argparse


class PathAction(argparse.Action):
    def __call__(self, parser, namespace, values, option_string=None):
        for path in values:
            if not path.endswith("}"):
                raise ValueError(f"bad --lora-paths entry {path!r}")
        setattr(namespace, self.dest, values)
"""


def test_the_values_an_argparse_action_is_called_with_are_its_flag() -> None:
    files = {"pkg/server_args.py": ACTION_ARGS, "pkg/actions.py": ACTIONS}
    found = origins_at(files, "pkg/actions.py", 9)
    flags = [o for o in found if o.kind is OriginKind.FLAG]
    assert [(o.name, o.owner, o.defined) for o in flags] == [
        ("--lora-paths", "ServerArgs", "pkg/server_args.py:14")
    ]
    assert [(h.path, h.line) for h in flags[0].chain][-1] == ("pkg/actions.py", 6)
    # a class no add_argument names as its action: its values stay unknown
    other = ACTION_ARGS.replace("action=PathAction", 'action="store"')
    found = origins_at({**files, "pkg/server_args.py": other}, "pkg/actions.py", 9)
    assert not [o for o in found if o.kind is OriginKind.FLAG]


RANGE_ARGS = """
from dataclasses import dataclass


@dataclass
class ServerArgs:
    dim: int = 4

    @staticmethod
    def add_cli_args(parser):
        parser.add_argument("--dim", type=int, default=4)
"""
RANGE = """
def check(server_args, limit):
    if 0 < server_args.dim <= limit:
        raise ValueError("dim in the reserved range")
    if 8 <= server_args.dim:
        raise ValueError("dim too large")
"""


def test_a_comparison_with_the_constant_on_the_left_reads_the_other_way() -> None:
    files = {"pkg/server_args.py": RANGE_ARGS, "pkg/r.py": RANGE}
    # 8 <= dim is dim >= 8 (the first check, an exit on the way, reads dim too)
    found = origins_at(files, "pkg/r.py", 6)
    mine = [(o.name, o.constraint.op, o.constraint.values) for o in found if o.chain[0].line == 5]
    assert mine == [("--dim", ">=", ("8",))]


PROBES = """
from pkg.utils import has_hpc_ops


def insert(tree, key):
    if not has_hpc_ops():
        raise ImportError("hpc_ops is needed")
    if tree.has_ongoing_insert():
        raise RuntimeError("insert while an insert is running")
"""


def test_has_x_is_a_package_probe_only_as_a_bare_call_with_no_argument() -> None:
    files = {"pkg/tree.py": PROBES, "pkg/utils.py": "def has_hpc_ops():\n    return False\n"}
    found = origins_at(files, "pkg/tree.py", 7)
    assert [(o.kind.value, o.name, o.constraint.op) for o in found] == [
        ("package", "hpc_ops", "false")
    ]
    # a method of an object asks the object (the tree's own state), not the packages
    found = origins_at(files, "pkg/tree.py", 9)
    assert not [o for o in found if o.chain[0].line == 8 and o.kind is OriginKind.PACKAGE]


def test_a_tracer_never_reads_the_options_holders_of_an_earlier_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The holders table was kept by ``id(tracer)``: a tracer freed by a
    collection left its table (empty: no options class) to the next tracer
    made at the same address, whose nested options class then went
    ``unknown`` (a flaky failure of the test below in CI). Every tracer
    here has the same ``id``, as two at one address would."""
    from miner.analysis.origins import bindings

    monkeypatch.setattr(bindings, "id", lambda _: 1, raising=False)
    plain = origins_at({"pkg/plan.py": PLAN}, "pkg/plan.py", 10)
    assert [(o.kind.value, o.reason) for o in plain] == [("unknown", "field")]
    files = {"pkg/server_args.py": QUANT_ARGS, "pkg/quant.py": QUANT}
    found = origins_at(files, "pkg/quant.py", 10)
    assert [(o.kind.value, o.name, o.owner) for o in found] == [("flag", "stages", "QuantArgs")]


def test_a_dataclass_an_options_class_carries_as_a_field_type_is_a_setting() -> None:
    files = {"pkg/server_args.py": QUANT_ARGS, "pkg/quant.py": QUANT}
    found = origins_at(files, "pkg/quant.py", 10)
    assert [(o.kind.value, o.name, o.owner) for o in found] == [("flag", "stages", "QuantArgs")]


def test_a_parameter_of_a_request_handler_is_a_field_of_the_request() -> None:
    source = """
    from fastapi import FastAPI

    app = FastAPI()

    @app.post("/v1/images")
    async def create_image(prompt: str, size: int = 512):
        if not prompt:
            raise ValueError("Prompt cannot be empty")
    """
    found = origins_at({"pkg/api.py": source}, "pkg/api.py", 9)
    assert [(o.kind.value, o.name, o.owner, o.defined) for o in found] == [
        ("request", "prompt", "str", "pkg/api.py:7")
    ]


def test_audience_of_a_bare_assert_is_its_own_test_not_the_guards_around_it() -> None:
    from miner.analysis.audience import classify_by_origins

    source = """
    def f(server_args, table):
        if server_args.enable_thing:
            assert table is not None
    """
    errors, found = traced({"pkg/server_args.py": ARGS, "pkg/f.py": source})
    error = next(e for e in errors if e.primary.path == "pkg/f.py")
    decision = classify_by_origins(error, found.origins[error.error_id])
    assert (decision.audience.value, decision.rule) == ("internal", "origin-internal")
    assert decision.reason == "condition reads only program state (table is None)"


def test_audience_is_user_setting_when_the_message_names_a_flag_of_the_model() -> None:
    from miner.analysis.audience import Settings, classify_by_origins

    source = """
    def f(server_args, tokens):
        if tokens <= 0:
            raise RuntimeError(
                "Not enough memory. Please try to increase --mem-fraction-static."
            )
    """
    errors, found = traced({"pkg/server_args.py": ARGS, "pkg/f.py": source})
    error = next(e for e in errors if e.primary.path == "pkg/f.py")
    settings = Settings(program_flags=frozenset({"--mem-fraction-static"}))
    decision = classify_by_origins(error, found.origins[error.error_id], settings)
    assert (decision.audience.value, decision.rule, decision.reason) == (
        "user-setting",
        "origin-advice",
        "message names the flag '--mem-fraction-static'",
    )
    unknown = classify_by_origins(error, found.origins[error.error_id], Settings())
    assert (unknown.audience.value, unknown.rule) == ("internal", "origin-internal")


def test_audience_of_a_check_of_a_tools_own_flag_is_script() -> None:
    """``--num-layers`` of a ``parse_args`` function (not of an options
    class) is a flag of that tool's command line, in a path no path rule
    calls a script."""
    from miner.analysis.audience import classify_by_origins

    tool = """
    import argparse

    def parse_args():
        parser = argparse.ArgumentParser()
        parser.add_argument("--num-layers", type=int, default=2)
        return parser.parse_args()

    def main():
        args = parse_args()
        if args.num_layers > 64:
            raise ValueError("too many layers")
    """
    errors, found = traced({"pkg/loader/pack.py": tool})
    origins = found.origins[errors[0].error_id]
    assert [(o.kind.value, o.name, o.owner) for o in origins] == [
        ("flag", "--num-layers", "parse_args")
    ]
    decision = classify_by_origins(errors[0], origins)
    assert (decision.audience.value, decision.rule) == ("script", "origin-script")


def test_audience_an_operand_setting_does_not_decide_beside_an_untraced_value() -> None:
    """``size % page_size``: the setting is an operand of arithmetic with a
    value the trace could not follow (a parameter no call passes), so it
    does not make the error a setting's; ``page_size > 256`` narrows it and does."""
    from miner.analysis.audience import classify_by_origins

    args = ARGS.replace(
        "    enable_thing: bool = False\n",
        "    enable_thing: bool = False\n    page_size: int = 1\n",
    ).replace(
        '        parser.add_argument("--enable-thing", action="store_true")\n',
        '        parser.add_argument("--enable-thing", action="store_true")\n'
        '        parser.add_argument("--page-size", type=int, default=1)\n',
    )
    source = """
    def pool(server_args, size):
        if size % server_args.page_size != 0:
            raise ValueError("size must be a multiple of the page size")

    def pages(server_args):
        if server_args.page_size > 256:
            raise ValueError("page size too large")
    """
    errors, found = traced({"pkg/server_args.py": args, "pkg/f.py": source})
    by_line = {e.primary.line: e for e in errors if e.primary.path == "pkg/f.py"}
    operand = found.origins[by_line[4].error_id]
    assert sorted((o.kind.value, o.constraint.op) for o in operand) == [
        ("flag", "any"),
        ("unknown", "any"),
    ]
    decision = classify_by_origins(by_line[4], operand)
    assert (decision.audience.value, decision.rule) == ("internal", "origin-internal")
    narrowed = classify_by_origins(by_line[8], found.origins[by_line[8].error_id])
    assert (narrowed.audience.value, narrowed.reason) == (
        "user-setting",
        "flag --page-size (ServerArgs) via server_args.page_size > 256",
    )


def test_a_weight_loaders_loaded_weight_is_the_checkpoint() -> None:
    source = """
    def weight_loader(param, loaded_weight):
        if param.shape != loaded_weight.shape:
            raise ValueError("checkpoint shape does not match the model")
    """
    found = origins_at({"pkg/loader.py": source}, "pkg/loader.py", 4)
    assert [(o.kind.value, o.name) for o in found if o.kind is OriginKind.CHECKPOINT] == [
        ("checkpoint", "loaded_weight")
    ]


def test_audience_of_a_caught_error_or_a_hardware_check_under_a_flag() -> None:
    """A raise every call of whose function is caught without raising again
    is ``internal`` (origin-logged); a hardware probe under a guard that
    tests a flag is a combination the release refuses (``unsupported``)."""
    from miner.analysis.audience import classify_by_origins

    source = """
    import torch

    def check(x):
        if x < 0:
            raise ValueError("negative")

    def outer(x):
        try:
            check(x)
        except ValueError:
            pass

    def pick(server_args):
        if server_args.moe_runner_backend == "marlin":
            if not torch.cuda.is_available():
                raise RuntimeError("Marlin needs a GPU")
    """
    errors, found = traced({"pkg/server_args.py": ARGS, "pkg/f.py": source})
    by_line = {e.primary.line: e for e in errors if e.primary.path == "pkg/f.py"}
    caught = by_line[6].error_id
    decision = classify_by_origins(
        by_line[6], found.origins[caught], logged=found.logged.get(caught)
    )
    assert (decision.audience.value, decision.rule, decision.reason) == (
        "internal",
        "origin-logged",
        "caught by except ValueError at pkg/f.py:11 and not raised again",
    )
    gpu = by_line[17]
    combined = classify_by_origins(gpu, found.origins[gpu.error_id])
    assert (combined.audience.value, combined.rule) == ("unsupported", "origin-combination")
    assert combined.reason.endswith(
        "under flag --moe-runner-backend (ServerArgs) via server_args.moe_runner_backend == "
        '"marlin"'
    )


def decided_with_settings(
    files: dict[str, str], path: str
) -> tuple[Settings, dict[int, AudienceDecision]]:
    """The settings of ``files``' configuration model, and the audience of
    each error raised in ``path``, by line, decided with them."""
    errors, found = traced(files)
    data = {p: textwrap.dedent(t).encode() for p, t in files.items()}
    result = pipeline.assemble(INFO, [extract_file(p, BLOB, d) for p, d in data.items()])
    settings = Settings.from_config(collect(data, result.sites).config)
    decided = {
        e.primary.line: classify_by_origins(e, found.origins[e.error_id], settings)
        for e in errors
        if e.primary.path == path
    }
    return settings, decided


def test_a_tools_own_flag_named_in_a_message_is_no_advice_to_the_user() -> None:
    """The advice rule reads the flags of the options classes (``ServerArgs``
    of :data:`ARGS`), not those of a tool's own parser: ``--source`` of a
    script's ``main`` named in a message leaves a program-state check
    ``internal``, ``--moe-runner-backend`` makes it ``user-setting``."""
    tool = """
    import argparse

    def main():
        parser = argparse.ArgumentParser()
        parser.add_argument("--source", required=True)
        return parser.parse_args()
    """
    source = """
    def f(packs, names):
        if not packs:
            raise ValueError("no expert packs found under --source")
        if not names:
            raise ValueError("no experts: try another --moe-runner-backend")
    """
    files = {"pkg/server_args.py": ARGS, "pkg/tool.py": tool, "pkg/f.py": source}
    settings, decided = decided_with_settings(files, "pkg/f.py")
    assert "--source" in settings.flags and "--source" not in settings.program_flags
    assert {line: (d.audience.value, d.rule) for line, d in decided.items()} == {
        4: ("internal", "origin-internal"),
        6: ("user-setting", "origin-advice"),
    }


def test_a_values_device_and_the_programs_cuda_state_are_not_hardware() -> None:
    """``req_to_token.is_cuda`` (where a tensor lives) and
    ``torch.cuda.is_current_stream_capturing()`` (the program's own graph
    capture) read program state; ``is_cuda()`` and
    ``torch.cuda.get_device_capability()`` read the machine."""
    source = """
    import torch
    from pkg.utils import is_cuda

    def f(req_to_token):
        if not req_to_token.is_cuda:
            raise ValueError("req_to_token must be a CUDA tensor")
        if torch.cuda.is_current_stream_capturing():
            raise RuntimeError("buffers must be allocated before capture")
        if not is_cuda():
            raise RuntimeError("needs CUDA")
        if torch.cuda.get_device_capability()[0] < 9:
            raise RuntimeError("needs SM90")
    """
    errors, found = traced({"pkg/f.py": source})
    kinds = {
        e.primary.line: sorted({o.kind.value for o in found.origins[e.error_id]}) for e in errors
    }
    assert "hardware" not in kinds[7] and "hardware" not in kinds[9]
    assert "hardware" in kinds[11] and "hardware" in kinds[13]


def test_a_check_in_a_modules_main_block_is_a_script() -> None:
    """An ``if __name__ == "__main__":`` self-test of a kernel module is run
    by hand, never by the server importing it: ``script`` by the path rule
    ``path-script``, whatever its condition reads; the same check in a
    function stays with its origins."""
    from miner.analysis.audience import classify_by_origins

    source = """
    import torch

    def check(x):
        if not torch.cuda.is_available():
            raise RuntimeError("needs CUDA")

    if __name__ == "__main__":
        if not torch.cuda.is_available():
            raise RuntimeError("needs CUDA for the self-test")
    """
    errors, found = traced({"pkg/kernels/dequant.py": source})
    decided = {e.primary.line: classify_by_origins(e, found.origins[e.error_id]) for e in errors}
    assert {line: (d.audience.value, d.rule) for line, d in decided.items()} == {
        6: ("dependency", "origin-dependency"),
        10: ("script", "path-script"),
    }
    assert decided[10].reason == (
        'path: pkg/kernels/dequant.py:8 (if __name__ == "__main__" block)'
    )


def test_whether_an_imported_package_has_a_name_is_the_package() -> None:
    source = """
    import torch
    from pkg import registry

    def dtype_of(name):
        if name == "fp4" and not hasattr(torch, "float4_e2m1fn_x2"):
            raise ValueError("fp4 needs a newer PyTorch")
        if not hasattr(registry, "fp8"):
            raise ValueError("no fp8 in the registry")
    """
    errors, found = traced({"pkg/dtype.py": source})
    first, second = sorted(errors, key=lambda e: e.primary.line)
    torch = [o for o in found.origins[first.error_id] if o.kind is OriginKind.PACKAGE]
    assert [(o.name, o.owner, o.constraint.op) for o in torch] == [("torch", "torch", "false")]
    # a name imported from a module is no package: its attribute is program state
    own = [o for o in found.origins[second.error_id] if o.chain[0].line == 8]
    assert own and not [o for o in own if o.kind is OriginKind.PACKAGE]


def test_a_parameter_of_a_model_config_classs_init_is_a_key_of_config_json() -> None:
    source = """
    from transformers.configuration_utils import PretrainedConfig

    class AttentionConfig(PretrainedConfig):
        def __init__(self, kv_n_heads=1, **kwargs):
            super().__init__(**kwargs)
            if len(kwargs) != 0:
                raise ValueError(f"Found unknown {kwargs=}")

    class WideAttentionConfig(AttentionConfig):
        def __init__(self, heads=1):
            if heads < 1:
                raise ValueError("heads must be positive")

    class Plain:
        def __init__(self, heads=1):
            if heads < 1:
                raise ValueError("heads must be positive here too")
    """
    errors, found = traced({"pkg/configs/attn.py": source})
    by_line = {e.primary.line: found.origins[e.error_id] for e in errors}
    assert [(o.kind.value, o.name, o.owner) for o in by_line[8] if o.role == "condition"] == [
        ("model-config", "kwargs", "config.json (AttentionConfig)")
    ]
    assert [(o.kind.value, o.owner) for o in by_line[13] if o.role == "condition"] == [
        ("model-config", "config.json (WideAttentionConfig)")
    ]
    assert not [o for o in by_line[18] if o.kind is OriginKind.MODEL_CONFIG]


DISPATCH_ARGS = """
from dataclasses import dataclass

@dataclass
class ServerArgs:
    sampler: str = "a"

    @staticmethod
    def add_cli_args(parser):
        choices = set(SAMPLERS)
        if EXTRA:
            choices.add("c")
        parser.add_argument("--sampler", type=str, default="a", choices=choices)

SAMPLERS = {"a", "b"}
EXTRA = False
"""
DISPATCH = """
def sample(server_args):
    backend = server_args.sampler
    if backend == "a":
        return 1
    elif backend == "b":
        return 2
    else:
        raise ValueError(f"Invalid backend: {backend}")

def forward(server_args):
    if server_args.sampler == "c":
        return 0
    return sample(server_args)
"""


def test_the_else_of_a_dispatch_every_choice_reaches_elsewhere_is_unreachable() -> None:
    """``--sampler``'s choices are ``set(SAMPLERS)`` plus ``c`` added under
    a condition (a, b, c): ``sample`` handles a and b, and its only call
    (line 14) is past ``if server_args.sampler == "c": return``."""
    from miner.analysis.audience import classify_by_origins

    files = {"pkg/server_args.py": DISPATCH_ARGS, "pkg/s.py": DISPATCH}
    errors, found = traced(files)
    error = next(e for e in errors if (e.primary.path, e.primary.line) == ("pkg/s.py", 9))
    fact = found.unreachable[error.error_id]
    assert (fact.path, fact.line, fact.condition) == ("pkg/s.py", 6, "backend")
    assert (fact.subject, fact.choices) == ("--sampler", ("a", "b", "c"))
    assert [(v.kind.value, v.name, v.defined) for v in fact.values] == [
        ("flag", "--sampler", "pkg/server_args.py:13")
    ]
    assert Unreachable.from_json(fact.to_json()) == fact
    decision = classify_by_origins(error, found.origins[error.error_id], unreachable=fact)
    assert (decision.audience.value, decision.rule, decision.reason) == (
        "internal",
        "origin-unreachable",
        "every value of --sampler (a, b, c) is handled before the else (pkg/s.py:6)",
    )


def test_a_choice_or_a_none_default_that_reaches_the_else_keeps_it_reachable() -> None:
    # c reaches the else once the call no longer leaves for it
    reachable = DISPATCH.replace('if server_args.sampler == "c":', "if server_args is None:")
    assert (
        unreachable_at({"pkg/server_args.py": DISPATCH_ARGS, "pkg/s.py": reachable}, "pkg/s.py", 9)
        is None
    )
    # a default of None is a value the else receives (argparse does not check it)
    args = DISPATCH_ARGS.replace('default="a", choices', "default=None, choices")
    assert unreachable_at({"pkg/server_args.py": args, "pkg/s.py": DISPATCH}, "pkg/s.py", 9) is None
    # a second call of sample that does not leave for c: c reaches it
    called = DISPATCH + "\ndef other(server_args):\n    return sample(server_args)\n"
    assert (
        unreachable_at({"pkg/server_args.py": DISPATCH_ARGS, "pkg/s.py": called}, "pkg/s.py", 9)
        is None
    )
    # choices the function changes otherwise are not known: no proof
    args = DISPATCH_ARGS.replace('choices.add("c")', 'choices.discard("b")')
    assert unreachable_at({"pkg/server_args.py": args, "pkg/s.py": DISPATCH}, "pkg/s.py", 9) is None


MODES = """
from enum import Enum

class Mode(Enum):
    NULL = "null"
    PREFILL = "prefill"
    DECODE = "decode"
"""
QUEUE = """
from pkg.utils import Mode

class Scheduler:
    def add(self, req):
        if self.mode == Mode.NULL:
            self.waiting.append(req)
        elif self.mode == Mode.PREFILL:
            self.bootstrap.add(req)
        elif self.mode == Mode.DECODE:
            self.prealloc.add(req)
        else:
            raise ValueError(f"Invalid {self.mode=}")


def serve(scheduler, req):
    scheduler.add(req)
"""


def test_the_else_of_a_dispatch_on_every_member_of_an_enum_is_unreachable() -> None:
    fact = unreachable_at({"pkg/utils.py": MODES, "pkg/q.py": QUEUE}, "pkg/q.py", 13)
    assert fact is not None
    assert (fact.path, fact.line, fact.condition, fact.values) == ("pkg/q.py", 10, "self.mode", ())
    assert (fact.subject, fact.choices) == ("Mode", ("Mode.NULL", "Mode.PREFILL", "Mode.DECODE"))
    # a member no branch handles reaches the else; so does any value of a
    # class that is not an enum
    more = MODES + '    EXTRA = "extra"\n'
    assert unreachable_at({"pkg/utils.py": more, "pkg/q.py": QUEUE}, "pkg/q.py", 13) is None
    plain = MODES.replace("class Mode(Enum):", "class Mode:")
    assert unreachable_at({"pkg/utils.py": plain, "pkg/q.py": QUEUE}, "pkg/q.py", 13) is None


def test_an_env_read_trimmed_and_lowered_is_the_variable_not_in_the_mappings_keys() -> None:
    source = """
    import os

    def resolve():
        raw = os.environ.get("PKG_DTYPE", "").strip().lower()
        mapping = {"fp16": 1, "bf16": 2}
        if raw not in mapping:
            raise ValueError(f"bad PKG_DTYPE {raw}")
        return mapping[raw]
    """
    found = origins_at({"pkg/d.py": source}, "pkg/d.py", 8)
    assert brief(found) == [
        ("env", "PKG_DTYPE", "not in", ("fp16", "bf16")),
        ("internal", "os.environ.get('PKG_DTYPE', '').strip().lower()", "any", ()),
    ]
    assert (found[0].default, found[0].defined) == ("''", "pkg/d.py:5")
    # the message shows the value, no demand on it: runtime state, as before
    assert [o.role for o in found] == ["condition", "message"]


LOGGED_ABOVE = """
import logging
logger = logging.getLogger(__name__)

def submit(x):
    if x < 0:
        raise RuntimeError("negative")
    return x

def process(x):
    return submit(x)

def worker(queue):
    while True:
        try:
            process(queue.get())
        except Exception:
            logger.exception("worker failed")
"""


def test_a_raise_caught_two_frames_up_on_every_path_is_logged_there() -> None:
    errors, found = traced({"pkg/w.py": LOGGED_ABOVE})
    assert found.logged[errors[0].error_id] == Caught("pkg/w.py", 17, "Exception", "caller", True)
    # a second call of process with no handler around it lets the error out
    source = LOGGED_ABOVE + "\ndef direct(x):\n    return process(x)\n"
    errors, found = traced({"pkg/w.py": source})
    assert errors[0].error_id not in found.logged
    # process used other than by a call: its calls are not all known
    source = LOGGED_ABOVE + "\nHOOKS = {'process': process}\n"
    errors, found = traced({"pkg/w.py": source})
    assert errors[0].error_id not in found.logged
    # a handler two frames up that raises again lets it out
    source = LOGGED_ABOVE.replace('logger.exception("worker failed")', "raise")
    errors, found = traced({"pkg/w.py": source})
    assert errors[0].error_id not in found.logged


LEVELS = """
class RequestLogger:
    def __init__(self, server_args):
        self.sampler = server_args.sampler

    def configure(self, level):
        self.sampler = level

    def meta(self):
        if self.sampler == "a":
            return 1
        elif self.sampler in ("b", "c"):
            return 2
        else:
            raise ValueError(f"Invalid --sampler: {self.sampler}")


def log(logger):
    return logger.meta()
"""


def test_a_dispatch_on_self_x_counts_every_assignment_of_x_in_the_class() -> None:
    # configure() may set self.sampler to anything: the else is reachable
    files = {"pkg/server_args.py": DISPATCH_ARGS, "pkg/log.py": LEVELS}
    assert unreachable_at(files, "pkg/log.py", 15) is None
    # set only from --sampler, whose choices a, b, c the branches handle
    alone = LEVELS.replace("    def configure(self, level):\n        self.sampler = level\n", "")
    fact = unreachable_at({**files, "pkg/log.py": alone}, "pkg/log.py", 13)
    assert fact is not None and (fact.subject, fact.line) == ("--sampler", 10)


def test_a_message_that_names_a_flag_and_says_not_supported_is_unsupported() -> None:
    """The advice rule's flag is the way out when the message also says the
    combination is not supported; "does not currently support" is such words."""
    source = """
    def f(backend_ok, mode):
        if not backend_ok:
            raise ValueError(
                "XPU doesn't support speculative decoding yet, use --moe-runner-backend triton"
            )
        if mode:
            raise ValueError("no experts: try another --moe-runner-backend")
    """
    _, decided = decided_with_settings({"pkg/server_args.py": ARGS, "pkg/f.py": source}, "pkg/f.py")
    assert {line: (d.audience.value, d.rule) for line, d in decided.items()} == {
        4: ("unsupported", "origin-unsupported"),
        8: ("user-setting", "origin-advice"),
    }
    assert decided[4].reason == (
        "message says 'doesn't support'; message names the flag '--moe-runner-backend'"
    )


def test_does_not_currently_support_is_unsupported_through_the_flag() -> None:
    from miner.analysis.audience import classify_by_origins

    source = """
    def f(server_args):
        if server_args.enable_thing:
            raise ValueError("the thing mode does not currently support fp4 caches")
    """
    errors, found = traced({"pkg/server_args.py": ARGS, "pkg/f.py": source})
    error = next(e for e in errors if e.primary.path == "pkg/f.py")
    decision = classify_by_origins(error, found.origins[error.error_id])
    assert (decision.audience.value, decision.rule) == ("unsupported", "origin-unsupported")
    assert decision.reason == (
        "message says 'does not currently support'; reached through "
        "flag --enable-thing (ServerArgs) via server_args.enable_thing"
    )


def test_a_call_by_name_defined_twice_is_traced_through_the_definition_its_file_imports() -> None:
    """Two files define ``Attention``; the model file imports one by name
    and calls it with a config field, the other file calls its own with a
    flag. The parameter of each is traced only to the calls of its own
    definition (an import without ``as`` is no use that hides the calls)."""
    first = """
    class Attention:
        def __init__(self, num_heads, tp_size):
            if num_heads % tp_size != 0:
                raise ValueError("heads must divide by tp")
    """
    second = """
    class Attention:
        def __init__(self, num_heads, tp_size):
            if num_heads > tp_size:
                raise ValueError("too many heads")

    def build(server_args):
        return Attention(server_args.moe_runner_backend, 2)
    """
    model = """
    from pkg.first import Attention

    class Layer:
        def __init__(self, config, server_args):
            self.attn = Attention(config.num_attention_heads, server_args.enable_thing)
    """
    files = {"pkg/server_args.py": ARGS, "pkg/first.py": first, "pkg/second.py": second}
    files["pkg/model.py"] = model
    found = origins_at(files, "pkg/first.py", 5)
    assert brief(found) == [
        ("model-config", "num_attention_heads", "any", ()),
        ("flag", "--enable-thing", "any", ()),
    ]
    assert [(h.path, h.line) for h in found[0].chain] == [
        ("pkg/first.py", 4),
        ("pkg/model.py", 6),
    ]
    other = origins_at(files, "pkg/second.py", 5)
    assert brief(other) == [
        ("flag", "--moe-runner-backend", "any", ()),
        ("constant", "2", "any", ()),
    ]


def test_a_renamed_import_hides_the_calls_of_a_name_defined_twice() -> None:
    first = """
    class Attention:
        def __init__(self, num_heads):
            if num_heads < 0:
                raise ValueError("heads")
    """
    second = """
    class Attention:
        def __init__(self, num_heads):
            pass
    """
    model = """
    from pkg.first import Attention as Attn

    def build(config):
        return Attn(config.num_attention_heads)
    """
    files = {"pkg/first.py": first, "pkg/second.py": second, "pkg/model.py": model}
    found = origins_at(files, "pkg/first.py", 5)
    assert [(o.kind.value, o.name, o.reason) for o in found] == [
        ("unknown", "num_heads", "many-callers")
    ]


def test_the_names_of_a_zip_loop_take_their_items_from_their_own_argument() -> None:
    source = """
    def check(request, polls):
        for rid, poll in zip(request.rids, polls):
            if poll == 3:
                raise RuntimeError("transfer failed")
        for index, path in enumerate(request.paths):
            if not path:
                raise ValueError("empty path")
    """
    at_if = [o for o in origins_at({"pkg/f.py": source}, "pkg/f.py", 5) if o.chain[0].line == 4]
    assert [(o.kind.value, o.name, [h.text for h in o.chain]) for o in at_if] == [
        ("unknown", "polls", ["poll == 3", "for poll in polls", "polls"])
    ]
    at_if = [o for o in origins_at({"pkg/f.py": source}, "pkg/f.py", 8) if o.chain[0].line == 7]
    assert [(o.kind.value, o.name, [h.text for h in o.chain]) for o in at_if] == [
        ("unknown", "request", ["not path", "for path in request.paths", "request"])
    ]


def test_a_sampling_params_field_read_through_a_batch_is_that_setting() -> None:
    """``getattr(batch.sampling_params, "x")`` reads the field ``x`` of the
    sampling parameters: a flag when a command line sets it, else a request field."""
    stage = """
    def prepare(batch):
        frames = getattr(batch.sampling_params, "num_frames", 1)
        hint = batch.sampling_params.control_hint
        if frames < 1 or not hint:
            raise ValueError("bad request")
    """
    sampling = SAMPLING + "    control_hint: str = ''\n"
    found = origins_at({"pkg/sampling.py": sampling, "pkg/stage.py": stage}, "pkg/stage.py", 6)
    assert brief(found) == [
        ("flag", "--num-frames", "<", ("1",)),
        ("request", "control_hint", "false", ()),
    ]
    assert found[1].owner == "SamplingParams"


CHECKED_FIRST = """
def topk_kernel(logits, scoring_func, k):
    assert scoring_func == "sqrtsoftplus"
    if k > logits.size(1):
        raise ValueError("k too large")
    return logits

def hash_topk(logits, scoring_func, k):
    assert scoring_func == "sqrtsoftplus", scoring_func
    return topk_kernel(logits, scoring_func, k)

def route(logits, cfg):
    mode = cfg.scoring
    if mode != "sqrtsoftplus":
        raise ValueError(f"unknown scoring {mode}")
    mode = cfg.other
    return hash_topk(logits, mode, 4)
"""


def test_a_check_every_caller_makes_first_with_the_same_argument_is_unreachable() -> None:
    """``hash_topk`` asserts what ``topk_kernel`` asserts, on the argument it
    passes: the kernel's assert cannot fail through its only call. Its other
    check (``k``) is not made by the caller, and the caller's own assert is
    reachable: ``route`` checks ``mode`` and then rebinds it before the call."""
    fact = unreachable_at({"pkg/k.py": CHECKED_FIRST}, "pkg/k.py", 3)
    assert fact is not None
    assert (fact.path, fact.line, fact.way) == ("pkg/k.py", 9, "callers")
    assert (fact.condition, fact.guard) == (
        'scoring_func == "sqrtsoftplus"',
        'scoring_func != "sqrtsoftplus"',
    )
    assert fact.values == ()
    assert unreachable_at({"pkg/k.py": CHECKED_FIRST}, "pkg/k.py", 5) is None
    assert unreachable_at({"pkg/k.py": CHECKED_FIRST}, "pkg/k.py", 9) is None
