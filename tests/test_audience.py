"""The audience of an error: each rule, its reason text, and the priority order."""

from __future__ import annotations

import re

import pytest

from miner.analysis.audience import (
    USER_FACING,
    Audience,
    AudienceDecision,
    Settings,
    classify,
    classify_all,
    message_text,
    path_kind,
    terse,
)
from miner.analysis.config import ConfigModel, EnvVar, Option
from miner.model import Error, Excerpt, Guard, MessagePart, Site

CONFIG = ConfigModel(
    options=(
        Option(
            "enable_x",
            ("--enable-x",),
            "ServerArgs",
            "pkg/server_args.py",
            10,
            "dataclass",
            type="bool",
            action="store_true",
        ),
        Option("tp_size", ("--tp-size",), "ServerArgs", "pkg/server_args.py", 11, "dataclass"),
        Option(
            "chunked_prefill_size",
            ("--chunked-prefill-size",),
            "ServerArgs",
            "pkg/server_args.py",
            12,
            "dataclass",
        ),
        Option("model_impl", (), "ServerArgs", "pkg/server_args.py", 13, "dataclass"),
    ),
    env=(EnvVar("PKG_DEBUG", "bool", "False", "pkg/environ.py", 3, 0, None, "Envs"),),
    classes=("ServerArgs",),
)
SETTINGS = Settings.from_config(CONFIG)


def parts_of(template: str) -> tuple[MessagePart, ...]:
    """``"a {x} b"`` -> literal ``a ``, placeholder ``x``, literal `` b``."""
    out = []
    for i, piece in enumerate(re.split(r"\{([^{}]*)\}", template)):
        if i % 2:
            out.append(MessagePart(expr=piece))
        elif piece:
            out.append(MessagePart(text=piece))
    return tuple(out)


def site(
    message: str | None = None,
    *,
    path: str = "pkg/core/engine.py",
    kind: str = "raise",
    exception: str | None = "ValueError",
    scope: str = "Engine.run",
    guards: tuple[Guard, ...] = (),
    exits: tuple[Guard, ...] = (),
    body_only: bool = False,
    abstract: bool = False,
    source: str | None = None,
) -> Site:
    if kind == "assert":
        exception = "AssertionError"
    parts = parts_of(message) if message is not None else ()
    if message is None:
        message_kind = "dynamic" if source else "none"
    else:
        message_kind = "template" if any(p.expr for p in parts) else "literal"
    return Site(
        path=path,
        line=5,
        end_line=5,
        kind=kind,  # type: ignore[arg-type]
        exception=exception,
        message=message,
        message_parts=parts,
        message_kind=message_kind,  # type: ignore[arg-type]
        message_style="literal" if message is not None else "none",
        message_source=source if source is not None else (repr(message) if message else None),
        cause=None,
        reraise=False,
        reraised=(),
        scope=scope,
        guards=guards,
        excerpt=Excerpt(5, 5, "raise X"),
        parser="libcst",
        exits=exits,
        body_only=body_only,
        abstract=abstract,
        error_id="e1",
    )


def error(*sites: Site) -> Error:
    first = sites[0]
    return Error(
        error_id="e1",
        exception=first.exception,
        message=first.message,
        message_parts=first.message_parts,
        message_kind=first.message_kind,
        sites=sites,
    )


def if_(test: str, negated: bool = False) -> Guard:
    return Guard("if", test, negated, 4)


def assert_(test: str) -> Guard:
    return Guard("assert", test, True, 5)


S, IN, D, U = (
    Audience.USER_SETTING,
    Audience.USER_INPUT,
    Audience.DEPENDENCY,
    Audience.UNSUPPORTED,
)
A, N, T, C = Audience.ABSTRACT, Audience.INTERNAL, Audience.TEST, Audience.SCRIPT

CASES = [
    # ---- 1. test paths
    (
        "test-folder",
        error(site("boom", path="python/pkg/test/runner.py")),
        T,
        "path: python/pkg/test/ (test folder)",
        "path-test",
    ),
    (
        "tests-folder",
        error(site(path="pkg/layers/ops/tests/check.py", kind="assert")),
        T,
        "path: pkg/layers/ops/tests/ (test folder)",
        "path-test",
    ),
    (
        "test-file",
        error(site("boom", path="pkg/core/test_engine.py")),
        T,
        "path: test_engine.py (test file)",
        "path-test",
    ),
    (
        "test-suffix",
        error(site("boom", path="pkg/x_test.py")),
        T,
        "path: x_test.py (test file)",
        "path-test",
    ),
    (
        "conftest",
        error(site("boom", path="conftest.py")),
        T,
        "path: conftest.py (test file)",
        "path-test",
    ),
    (
        "test-beats-setting",
        error(site("boom", path="tests/test_a.py", guards=(if_("server_args.enable_x"),))),
        T,
        "path: tests/ (test folder)",
        "path-test",
    ),
    # ---- 2. scripts, dev tools, vendored code
    (
        "benchmark-folder",
        error(site("boom", path="benchmark/hicache/bench_serving.py")),
        C,
        "path: benchmark/ (benchmark folder)",
        "path-script",
    ),
    (
        "bench-file",
        error(site("boom", path="pkg/bench_one_batch.py")),
        C,
        "path: bench_one_batch.py (benchmark file)",
        "path-script",
    ),
    (
        "examples",
        error(site("boom", path="examples/runtime/engine/offline.py")),
        C,
        "path: examples/ (examples folder)",
        "path-script",
    ),
    (
        "setup",
        error(site("boom", path="pkg/csrc/setup.py")),
        C,
        "path: setup.py (build script)",
        "path-script",
    ),
    (
        "dev-tools",
        error(site("boom", path="pkg/srt/debug_utils/dumper.py")),
        C,
        "path: pkg/srt/debug_utils/ (dev tools)",
        "path-script",
    ),
    (
        "dot-folder",
        error(site("boom", path="pkg/.claude/skills/run.py")),
        C,
        "path: pkg/.claude/ (dot folder)",
        "path-script",
    ),
    (
        "test-and-script",
        error(site("boom", path="test/a.py"), site("boom", path="scripts/b.py")),
        C,
        "path: scripts/ (scripts folder)",
        "path-script",
    ),
    (
        "vendored",
        error(site("NVML failed", path="pkg/third_party/pynvml.py", exception="NVMLError")),
        D,
        "path: pkg/third_party/ (vendored third-party code)",
        "path-vendored",
    ),
    (
        "test-and-product-code",
        error(site(path="test/a.py", kind="assert"), site(path="pkg/a.py", kind="assert")),
        N,
        "assert with no message: an invariant of the code",
        "bare-assert",
    ),
    # ---- 3. abstract stubs
    (
        "body-only",
        error(site(exception="NotImplementedError", scope="Base.run", body_only=True)),
        A,
        "NotImplementedError is the whole body of Base.run",
        "abstract",
    ),
    (
        "abstract-method",
        error(
            site(
                "Subclasses implement run()",
                exception="NotImplementedError",
                scope="Base.run",
                abstract=True,
            )
        ),
        A,
        "NotImplementedError in abstract method Base.run",
        "abstract",
    ),
    (
        "stub-that-explains",
        error(
            site(
                "FP8 is not supported by this backend",
                exception="NotImplementedError",
                body_only=True,
            )
        ),
        U,
        "message says 'not supported'",
        "message-unsupported",
    ),
    (
        "stub-without-body-flag",
        error(site(exception="NotImplementedError")),
        N,
        "NotImplementedError with no message",
        "bare-raise",
    ),
    # ---- 4. settings
    (
        "guard-flag",
        error(site("x is on", guards=(if_("server_args.enable_x"),))),
        S,
        "guard 'server_args.enable_x' reads setting --enable-x",
        "guard-setting",
    ),
    (
        "assert-guard",
        error(site(kind="assert", guards=(assert_("not server_args.enable_x"),))),
        S,
        "guard 'server_args.enable_x' reads setting --enable-x",
        "guard-setting",
    ),
    (
        "exit-condition",
        error(site("boom", exits=(if_("server_args.enable_x", negated=True),))),
        S,
        "exit condition 'server_args.enable_x' reads setting --enable-x",
        "exit-setting",
    ),
    (
        "guard-env",
        error(site("debug", guards=(if_("envs.PKG_DEBUG.get()"),))),
        S,
        "guard 'envs.PKG_DEBUG.get()' reads env var PKG_DEBUG",
        "guard-setting",
    ),
    (
        "guard-field-without-flag",
        error(site("impl", guards=(if_('self.server_args.model_impl == "x"'),))),
        S,
        "guard 'self.server_args.model_impl' reads setting ServerArgs.model_impl",
        "guard-setting",
    ),
    (
        "by-name-through-args-object",
        error(site("too big", guards=(if_("model_runner.server_args.chunked_prefill_size > 4"),))),
        S,
        "guard 'model_runner.server_args.chunked_prefill_size' reads setting "
        "--chunked-prefill-size",
        "guard-setting",
    ),
    (
        "by-name-in-arguments-folder",
        error(site("x needs y", path="pkg/arg_groups/hooks.py", guards=(if_("cfg.enable_x"),))),
        S,
        "guard 'cfg.enable_x' reads setting --enable-x",
        "guard-setting",
    ),
    (
        "by-name-elsewhere-is-not-a-setting",
        error(site(kind="assert", guards=(if_("cfg.enable_x"), assert_("cfg.ok")))),
        N,
        "assert with no message: an invariant of the code",
        "bare-assert",
    ),
    (
        "message-flag",
        error(site("Pass a smaller value with --tp-size {n}.")),
        S,
        "message names --flag '--tp-size'",
        "message-flag",
    ),
    (
        "message-unknown-flag",
        error(site("Provide --image-path for this model.")),
        S,
        "message names --flag '--image-path' (not in the configuration model)",
        "message-flag",
    ),
    (
        "message-env",
        error(site("PKG_DEBUG must be 0 or 1, got {v}")),
        S,
        "message names env var 'PKG_DEBUG'",
        "message-env",
    ),
    (
        "message-setting-field",
        error(site("num_heads ({h}) must be divisible by tp_size ({t})", kind="assert")),
        S,
        "message names setting 'tp_size' (--tp-size)",
        "message-setting",
    ),
    (
        "message-asks",
        error(site("Set the environment variable to the cache folder.")),
        S,
        "message says 'set the environment variable'",
        "message-asks",
    ),
    (
        "scope-args",
        error(site("ports overlap", path="pkg/server_args.py", scope="ServerArgs.__post_init__")),
        S,
        "scope ServerArgs.__post_init__ is a method of the arguments class ServerArgs",
        "scope-args",
    ),
    (
        "path-args",
        error(site("bad bucket rule", path="pkg/arg_groups/hooks.py", scope="check_buckets")),
        S,
        "path: pkg/arg_groups/ (argument handling)",
        "path-args",
    ),
    (
        "setting-beats-dependency",
        error(site("X requires CUDA", guards=(if_("server_args.enable_x"),))),
        S,
        "guard 'server_args.enable_x' reads setting --enable-x",
        "guard-setting",
    ),
    # ---- 5. dependencies
    (
        "import-error",
        error(site("yaml is missing", exception="ImportError")),
        D,
        "exception ImportError (a missing package)",
        "import-error",
    ),
    (
        "arguments-file-yields-to-dependency",
        error(site("install PyYAML", path="pkg/arg_groups/load.py", exception="ImportError")),
        D,
        "exception ImportError (a missing package)",
        "import-error",
    ),
    (
        "except-import-error",
        error(
            site(
                "loader missing",
                exception="RuntimeError",
                guards=(Guard("except", "ImportError", False, 3),),
            )
        ),
        D,
        "guard 'except ImportError' (a missing package)",
        "guard-import",
    ),
    (
        "pip-install-is-not-a-flag",
        error(site("Try: pip install --upgrade diffusers")),
        D,
        "message says 'pip install'",
        "message-dependency",
    ),
    (
        "requires-device",
        error(site("FlashInfer GDN backend requires CUDA")),
        D,
        "message says 'requires cuda'",
        "message-dependency",
    ),
    (
        "sm90",
        error(site("dsv3 gemm needs SM90 or later", exception="RuntimeError")),
        D,
        "message says 'needs sm90'",
        "message-dependency",
    ),
    (
        "dependency-beats-unsupported",
        error(site("FP4 is not supported on NPU yet.", kind="assert")),
        D,
        "message says 'on npu'",
        "message-dependency",
    ),
    (
        "platform-guard",
        error(
            site(
                "flash path unavailable",
                exception="Exception",
                guards=(if_("_is_cuda", negated=True),),
            )
        ),
        D,
        "guard 'not (_is_cuda)' tests the platform (_is_cuda)",
        "guard-platform",
    ),
    (
        "platform-call-guard",
        error(
            site(
                "no device",
                exception="RuntimeError",
                guards=(if_("not torch.cuda.is_available()"),),
            )
        ),
        D,
        "guard 'not torch.cuda.is_available()' tests the platform (is_available())",
        "guard-platform",
    ),
    (
        "tensor-is-cuda-is-not-platform",
        error(site("probs must live on the device", guards=(if_("not probs.is_cuda"),))),
        N,
        "message names no setting, input or dependency",
        "default",
    ),
    (
        "cuda-tensor-is-not-a-dependency",
        error(site("renorm kernel requires a CUDA tensor")),
        N,
        "message names no setting, input or dependency",
        "default",
    ),
    (
        "bare-assert-under-platform-guard",
        error(site(kind="assert", guards=(if_("_is_hip"), assert_("x.ok")))),
        N,
        "assert with no message: an invariant of the code",
        "bare-assert",
    ),
    # ---- 6. unsupported
    (
        "not-supported",
        error(site("Cascade attention is not supported with MLA", kind="assert")),
        U,
        "message says 'not supported'",
        "message-unsupported",
    ),
    (
        "only-x-is-supported",
        error(site("Only huggingface.co weight URLs are supported; use a local path")),
        U,
        "message says 'only huggingface.co weight urls are supported'",
        "message-unsupported",
    ),
    (
        "not-implemented-with-message",
        error(site("cannot encode material chains {c}", exception="NotImplementedError")),
        U,
        "NotImplementedError with a message",
        "not-implemented",
    ),
    (
        "terse-unsupported-is-internal",
        error(site("unsupported mma_n={tactic.mma_n}")),
        N,
        "message names no setting, input or dependency",
        "default",
    ),
    (
        "unsupported-beats-input",
        error(site("This image format is not supported", path="pkg/multimodal/load.py")),
        U,
        "message says 'not supported'",
        "message-unsupported",
    ),
    # ---- 7. user input
    (
        "sampling-word",
        error(site("min_p must be in [0, 1], got {self.min_p}.", path="pkg/sampling/params.py")),
        IN,
        "message says 'min_p'",
        "message-input",
    ),
    (
        "request-word",
        error(site("Duplicate request ID detected: {rid}", path="pkg/managers/tokenizer.py")),
        IN,
        "message says 'request'",
        "message-input",
    ),
    (
        "input-word-in-engine-internals",
        error(site("expected one token per request, got {n}", path="pkg/layers/attn.py")),
        N,
        "message names no setting, input or dependency",
        "default",
    ),
    (
        "request-handling-path",
        error(
            site("Function tools must include a name.", path="pkg/entrypoints/openai/protocol.py")
        ),
        IN,
        "path: entrypoints/ (request handling) with message",
        "path-input",
    ),
    (
        "assert-in-request-handling",
        error(site("unexpected state", kind="assert", path="pkg/entrypoints/http.py")),
        N,
        "assert whose message names no setting, input or dependency",
        "assert",
    ),
    (
        "validator",
        error(site("entries must be unique", path="pkg/utils/fields.py", scope="validate_ids")),
        IN,
        "scope validate_ids validates inputs",
        "validator",
    ),
    (
        "validator-in-engine-internals",
        error(
            site("gamma must be contiguous", path="pkg/layers/moe.py", scope="F._validate_gamma")
        ),
        N,
        "message names no setting, input or dependency",
        "default",
    ),
    (
        "dynamic-message-literals",
        error(site(source='fmt("bad request", x)', path="pkg/managers/io.py")),
        IN,
        "message says 'request'",
        "message-input",
    ),
    # ---- 8. internal
    (
        "bare-assert",
        error(site(kind="assert", guards=(assert_("x is not None"),))),
        N,
        "assert with no message: an invariant of the code",
        "bare-assert",
    ),
    (
        "assert-with-message",
        error(site("x must be contiguous", kind="assert")),
        N,
        "assert whose message names no setting, input or dependency",
        "assert",
    ),
    (
        "bare-raise",
        error(site(exception="ValueError")),
        N,
        "ValueError with no message",
        "bare-raise",
    ),
    (
        "default",
        error(site("state machine broke", exception="RuntimeError")),
        N,
        "message names no setting, input or dependency",
        "default",
    ),
    (
        "dynamic-without-words",
        error(site(source="str(exc)", exception="RuntimeError")),
        N,
        "message names no setting, input or dependency",
        "default",
    ),
]


@pytest.mark.parametrize(
    ("err", "audience", "reason", "rule"),
    [c[1:] for c in CASES],
    ids=[c[0] for c in CASES],
)
def test_classify(err: Error, audience: Audience, reason: str, rule: str) -> None:
    assert classify(err, SETTINGS) == AudienceDecision(audience, reason, rule)


def test_every_audience_and_rule_is_covered() -> None:
    assert {c[2] for c in CASES} == set(Audience)
    rules = {c[4] for c in CASES}
    assert rules >= {
        "path-test",
        "path-script",
        "path-vendored",
        "abstract",
        "guard-setting",
        "exit-setting",
        "message-flag",
        "message-env",
        "message-setting",
        "message-asks",
        "scope-args",
        "path-args",
        "import-error",
        "guard-import",
        "message-dependency",
        "guard-platform",
        "message-unsupported",
        "not-implemented",
        "message-input",
        "path-input",
        "validator",
        "bare-assert",
        "assert",
        "bare-raise",
        "default",
    }


def test_without_a_configuration_model() -> None:
    """No model: guards link to nothing, and every ``--flag`` is an unknown one."""
    guarded = error(site("x is on", guards=(if_("server_args.enable_x"),)))
    assert classify(guarded) == AudienceDecision(
        N, "message names no setting, input or dependency", "default"
    )
    assert classify(error(site("use --tp-size 2"))) == AudienceDecision(
        S, "message names --flag '--tp-size' (not in the configuration model)", "message-flag"
    )


def test_settings_from_config() -> None:
    assert SETTINGS.flags == frozenset({"--enable-x", "--tp-size", "--chunked-prefill-size"})
    assert SETTINGS.env_vars == frozenset({"PKG_DEBUG"})
    assert SETTINGS.fields == {
        "chunked_prefill_size": "--chunked-prefill-size",
        "enable_x": "--enable-x",
        "tp_size": "--tp-size",
    }
    assert SETTINGS.classes == {"ServerArgs": frozenset({"pkg/server_args.py"})}
    assert SETTINGS.primary == "ServerArgs"
    assert SETTINGS.reads is not None
    plain = site("x")
    assert SETTINGS.reads(Guard("for", "x in server_args.enable_x", False, 3), plain) is None
    assert SETTINGS.reads(if_("self.enable_x"), plain) is None
    in_class = site("x", path="pkg/server_args.py", scope="ServerArgs.check")
    assert SETTINGS.reads(if_("self.enable_x"), in_class) == (
        "'self.enable_x' reads setting --enable-x"
    )


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("python/sglang/test/runners.py", ("test", "python/sglang/test/ (test folder)")),
        ("a/testing/util.py", ("test", "a/testing/ (test folder)")),
        ("a/b/tests.py", ("test", "tests.py (test file)")),
        ("a/check_env.py", ("script", "check_env.py (tool script)")),
        ("a/benchmarks/x.py", ("script", "a/benchmarks/ (benchmarks folder)")),
        ("a/tools/convert.py", ("script", "a/tools/ (tools folder)")),
        ("3rdparty/amd/tune.py", ("script", "3rdparty/ (3rdparty folder)")),
        ("docs/conf.py", ("script", "docs/ (docs folder)")),
        ("a/vendor/lib.py", ("vendored", "a/vendor/ (vendored third-party code)")),
        ("python/sglang/srt/latest.py", None),
        ("python/sglang/srt/contest.py", None),
        ("python/sglang/srt/benchmarking_utils.py", None),
    ],
)
def test_path_kind(path: str, expected: tuple[str, str] | None) -> None:
    assert path_kind(path) == expected


def test_message_text_reads_words_not_code() -> None:
    assert message_text(error(site("bad {request.rid} here"))) == "bad {} here"
    assert message_text(error(site(source="msg"))) == ""
    assert message_text(error(site(source="f'a {x}' + \"b\""))) == "a {x} b"
    assert message_text(error(site())) == ""


def test_terse() -> None:
    assert terse("unsupported {}")
    assert terse("unsupported mma_n={}")
    assert not terse("Unsupported transfer backend: {}")
    assert not terse("caching is not supported")


def test_decision_json_and_helpers() -> None:
    decision = classify(error(site("Pass --tp-size 2")), SETTINGS)
    assert decision.to_json() == {
        "audience": "user-setting",
        "reason": "message names --flag '--tp-size'",
        "rule": "message-flag",
    }
    assert str(Audience.USER_INPUT) == "user-input"
    assert Audience("abstract") is Audience.ABSTRACT
    assert {S, IN, D, U} == USER_FACING
    errors = [error(site("a")), Error("e2", "ValueError", None, (), "none", (site(),))]
    assert {k: v.rule for k, v in classify_all(errors, SETTINGS).items()} == {
        "e1": "default",
        "e2": "bare-raise",
    }
