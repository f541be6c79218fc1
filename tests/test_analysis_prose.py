"""The card prose, construct by construct, on small fixtures (exact sentences).

Each test mines a few files in memory (no git), gathers the facts and runs
the analysis, then checks the sentences one construct produces: an OR
conjunct, an early exit, plain words without double negation, a flag the
message names, a help text and a comment quoted as evidence with ``path:line``.
"""

from __future__ import annotations

import textwrap

from test_analysis_config import DATACLASS_REPO, SUPPRESSING_WRAPPER

from miner import pipeline
from miner.analysis import analyze
from miner.analysis.callers import Caller
from miner.analysis.facts import boolean_names, collect
from miner.analysis.sections import _callers_at
from miner.analysis.wording import atom_words, negated
from miner.extract.runner import extract_file
from miner.model import Analysis, CommitInfo, Condition, SolutionKind

INFO = CommitInfo("repo", "acme/pkg", "v1", "a" * 40, "2026-01-01T00:00:00+00:00")


def analyses(files: dict[str, str]) -> dict[str, Analysis]:
    """Message (or scope for a message-less site) -> the analysis of its error."""
    data = {p: textwrap.dedent(t).lstrip("\n").encode() for p, t in files.items()}
    mined = [extract_file(p, "0" * 40, d) for p, d in sorted(data.items())]
    result = pipeline.assemble(INFO, mined)
    facts = collect(data, result.sites)
    out = analyze(result, facts)
    return {(e.message or e.primary.scope): out[e.error_id] for e in result.errors}


MODULE = """
import os

from pkg.context import get_disagg
from pkg.server_args import ServerArgs


def load(path, cache, mode):
    if cache is None or mode == "fast":
        raise ValueError("no cache for this load")
    return path


def teacache_step(batch):
    enable_teacache = batch.enable_teacache
    if not enable_teacache:
        return False
    raise NotImplementedError("teacache is not supported yet for this model")


def pick(x):
    if x is not None and not x.ready:
        raise RuntimeError("the picked item is not ready")


def check_pages(server_args, pages):
    if pages < 2:
        raise ValueError("Too few pages: --cache-strategy must be extra or extra_lazy")
    return pages


def build(ctx):
    # Host-pool backups keep only full-attention pages,
    # so recurrent state would be lost on retraction.
    if get_disagg().retraction_backup == "host_pool":
        if ctx.is_hybrid_ssm:
            raise ValueError("Host-pool retraction does not support hybrid models.")
    return ctx


def workers():
    if os.environ.get("PKG_THREADS") == "0":
        raise RuntimeError("no workers: try increasing PKG_THREADS or set PKG_THREADS=4")
"""

FILES = {**DATACLASS_REPO, "pkg/ops.py": MODULE}


def cards() -> dict[str, Analysis]:
    return analyses(FILES)


def test_or_conjunct_is_told_as_any_of() -> None:
    card = cards()["no cache for this load"]
    assert '- any of: `cache` is `None`; `mode == "fast"` (line 8)' in card.trigger
    assert card.what_it_means is not None
    assert 'this is raised when any of: `cache` is `None`; `mode == "fast"`.' in (
        card.what_it_means
    )
    # its only way out is the condition negated: no solution, no example fix
    assert (card.solutions, card.solution_kinds, card.example_fix) == ((), (), None)
    assert card.condition_text == 'cache is None or mode == "fast"'
    assert card.condition is not None and card.condition.to_json()["op"] == "or"


def test_early_exit_is_said_as_such() -> None:
    card = cards()["teacache is not supported yet for this model"]
    assert card.trigger == (
        "Raised at `pkg/ops.py:17` in `teacache_step`, when:\n\n"
        "- `enable_teacache` is true: the code returns early at line 16 otherwise "
        "(`if not enable_teacache: return False`)"
    )
    assert card.what_it_means is not None
    assert card.what_it_means.startswith(
        "In `teacache_step`, this is raised only when `enable_teacache` is true."
    )
    assert (
        "The values it tests are set in the function: "
        "`enable_teacache = batch.enable_teacache` at line 14." in card.what_it_means
    )
    assert "every time" not in card.trigger


def test_plain_words_never_negate_twice() -> None:
    card = cards()["the picked item is not ready"]
    assert "- `x` is not `None` (line 21)" in card.trigger
    assert "- `x.ready` is false (line 21)" in card.trigger
    text = " ".join([card.trigger, card.what_it_means or "", *card.solutions])
    assert "not (not" not in text and "does not hold" not in text
    # the negated condition is no solution and no example fix
    assert (card.solutions, card.example_fix) == ((), None)
    assert card.condition_text == "x is not None and not x.ready"


def test_words_of_single_atoms() -> None:
    def atom(text: str, negated_: bool = False, shown: str | None = None) -> Condition:
        return Condition("atom", atom=text, negated=negated_, shown=shown or text)

    assert atom_words(atom("x is None")) == "`x` is `None`"
    assert atom_words(atom("x is None", True, "x is not None")) == "`x` is not `None`"
    enable = atom("self.enable_x", True, "not self.enable_x")
    assert atom_words(enable) == "`self.enable_x` is false"
    assert atom_words(atom("isinstance(x, int)", True, "not isinstance(x, int)")) == (
        "`x` is not an instance of `int`"
    )
    assert atom_words(atom("a < b", True, "a >= b")) == "`a >= b`"
    assert atom_words(atom("a < b", True, "not (a < b)")) == "`a >= b`"
    assert atom_words(atom("os.path.exists(p)", True, "not os.path.exists(p)")) == (
        "the path `p` does not exist"
    )
    assert negated(atom("x is None")).shown == "x is not None"
    assert negated(atom("x", True, "not x")).shown == "x"


def test_message_named_flag_is_linked_and_used() -> None:
    card = cards()["Too few pages: --cache-strategy must be extra or extra_lazy"]
    assert card.trigger.endswith(
        "- `pages < 2` (line 26)\n\n"
        "The message names `--cache-strategy`: takes `auto`, `none`, `extra` or `extra_lazy`; "
        "default `auto` (defined at `pkg/server_args.py:23`)."
    )
    assert card.solutions[0] == (
        "Give `--cache-strategy` a value that is extra or extra_lazy, as the message asks."
    )
    assert "No flag or environment variable is involved" not in card.trigger


def test_message_named_variable_and_its_advice() -> None:
    card = cards()["no workers: try increasing PKG_THREADS or set PKG_THREADS=4"]
    assert "the environment variable `PKG_THREADS` is `0`" in card.trigger
    assert 'Do what the message advises: "set `PKG_THREADS=4`".' in card.solutions or any(
        "`PKG_THREADS=4`" in s for s in card.solutions
    )
    assert card.example_fix is not None


def test_help_text_and_comment_quoted_with_path_and_line() -> None:
    card = cards()["Host-pool retraction does not support hybrid models."]
    meaning = card.what_it_means or ""
    assert meaning.startswith(
        "You get this with `--retraction-backup host_pool` when `ctx.is_hybrid_ssm` is true, "
        "in `build`."
    )
    assert (
        'The comment above the check at line 34 (`pkg/ops.py:32`) says: "Host-pool backups '
        'keep only full-attention pages, so recurrent state would be lost on retraction."'
    ) in meaning
    assert '`--retraction-backup` is described as "Backup." (`pkg/server_args.py:' in meaning
    assert card.solutions[0].startswith("Set `--retraction-backup` to `cpu_tensor`")
    # "It is not raised when `ctx.is_hybrid_ssm` is false" is no solution: left out
    assert len(card.solutions) == 1 and card.solution_kinds == (SolutionKind.FIX,)


def test_names_declared_bool_are_true_or_false() -> None:
    """SGLang v0.5.19: ``runner_config.no_combine`` (``no_combine: bool =
    False`` in the runner configs) is a flag; ``unsupported`` (a list) is not."""
    files = {
        "cfg.py": (
            b"@dataclass\nclass RunnerConfig:\n    no_combine: bool = False\n"
            b"    encoder_only: A[\n        bool, 'help', NS('x')\n    ] = False\n"
            b"def f(x, quiet: bool = True, maybe: Optional[bool] = None):\n"
            b"    convert = False\n    self.done = True\n    unsupported = [1]\n"
            b"    either = False\n    either = None\n"
            b"    d = {key: bool}\n"
        ),
    }
    names = {"no_combine", "encoder_only", "quiet", "maybe", "convert", "done", "unsupported"}
    names |= {"either", "key"}
    found = boolean_names(files, names)
    assert found == {"no_combine", "encoder_only", "quiet", "convert", "done"}

    atom = Condition(
        "atom", atom="runner_config.no_combine", negated=True, shown="not runner_config.no_combine"
    )
    assert atom_words(atom) == "`runner_config.no_combine` is falsy (`None`, empty or zero)"
    assert atom_words(atom, found) == "`runner_config.no_combine` is false"
    listed = Condition("atom", atom="unsupported", shown="unsupported")
    assert atom_words(listed, found) == "`unsupported` is truthy"


def test_callers_above_are_named_once_with_their_calls() -> None:
    """SGLang v0.5.19, streaming_refiner.py: ``refine_block`` calls
    ``_capture_block_kv`` twice; the card had named it twice."""
    path = "sana_wm/streaming_refiner.py"
    callers = [
        Caller("_capture_block_kv", "RefinerChunkRunner.refine_block", path, 521),
        Caller("_capture_block_kv", "RefinerChunkRunner.refine_block", path, 588),
        Caller("_capture_block_kv", "Other.run", "other.py", 12),
        Caller("_capture_block_kv", "Third.go", "third.py", 3),
    ]
    assert _callers_at(callers) == (
        f"`RefinerChunkRunner.refine_block` (`{path}:521`, `{path}:588`), "
        "`Other.run` (`other.py:12`)"
    )


ARCH = """
def _get_device_arch():
    return 90


def forward(q, _arch=None):
    arch = _get_device_arch() if _arch is None else _arch
    host = lookup(arch)
    assert arch // 10 in [8, 9, 10, 11] or host is not None, "Unsupported compute capability."
    if arch // 10 == 8:
        return run_sm80(q)
    elif arch // 10 == 9:
        return run_sm90(q)
    elif arch // 10 in [10, 11]:
        return run_sm100(q)
    elif host is not None:
        return host(q)
    else:
        raise ValueError(f"Unsupported compute capability: {arch}.")
"""


def test_a_raise_the_values_tested_before_rule_out() -> None:
    """interface.py:1554 (v0.5.19, ``_flash_attn_fwd``): the assert at line
    579 allows ``arch // 10`` in 8..11 only (``arch_forward_host`` being
    ``None``), and the ``if`` chain takes each of them elsewhere: the
    ``else: raise`` is reached only with asserts stripped."""
    message = "Unsupported compute capability: {arch}."
    found = analyses({"pkg/__init__.py": "", "pkg/fa.py": ARCH})[message]
    assert (found.what_it_means or "").startswith(
        "In `forward`, this raise cannot be reached as written: no value of `arch // 10` "
        "meets `arch // 10 in [8, 9, 10, 11]` (asserted at line 8), `arch // 10 != 8` "
        "(line 9), `arch // 10 != 9` (line 11) and `arch // 10 not in [10, 11]` (line 13) "
        "together, and the function does not assign `arch` in between. With asserts on, "
        "the `assert` at line 8 fails before the code gets here, with its own error: this "
        "raise is reached only when Python runs with `-O`, which strips asserts."
    )
    assert found.trigger.startswith(
        "Raised at `pkg/fa.py:18` in `forward`, when all of these hold as written; no value "
        "of `arch // 10` meets them all (see What it means):"
    )
    assert found.solutions == (
        "If you see this message, Python runs with `-O` (asserts stripped) and the "
        "`assert` at line 8 did not run: its test, `arch // 10 in [8, 9, 10, 11]` here, "
        "is what failed.",
    )
    # Assigned again between the assert and the raise: the values may differ.
    again = ARCH.replace(
        "    if arch // 10 == 8:\n", "    arch = remap(arch)\n    if arch // 10 == 8:\n"
    )
    found = analyses({"pkg/__init__.py": "", "pkg/fa.py": again})[message]
    assert "cannot be reached" not in (found.what_it_means or "")
    # An attribute may give another value each time it is read.
    attr = ARCH.replace("arch // 10", "self.arch // 10")
    found = analyses({"pkg/__init__.py": "", "pkg/fa.py": attr})[message]
    assert "cannot be reached" not in (found.what_it_means or "")


def _args_module(fields: str) -> str:
    return f"""
import dataclasses
from typing import Annotated, Optional


@dataclasses.dataclass
class ServerArgs:
{fields}

    @staticmethod
    def add_cli_args(parser):
        for f in dataclasses.fields(ServerArgs):
            parser.add_argument("--" + f.name.replace("_", "-"))
"""


#: Two package parts, each with a ``ServerArgs`` of its own (SGLang's
#: ``sglang.srt`` and its diffusion server ``sglang.multimodal_gen``).
PARTS = {
    "pkg/__init__.py": "",
    "pkg/srt/__init__.py": "",
    "pkg/gen/__init__.py": "",
    "pkg/srt/server_args.py": _args_module(
        '    quantization: Annotated[Optional[str], "Quantization of the LLM weights."] = None\n'
        '    ssl_keyfile: Annotated[Optional[str], "The SSL key file."] = None\n'
        '    ssl_certfile: Annotated[Optional[str], "The SSL certificate file."] = None'
    ),
    "pkg/gen/server_args.py": _args_module(
        '    quantization: Annotated[Optional[str], "Diffusion quantization."] = None\n'
        '    frames_per_clip: Annotated[Optional[int], "Frames in each clip."] = None'
    ),
    "pkg/srt/video.py": """
        def prepare(video):
            if video.frames_per_clip is None:
                raise ValueError("Video sampling strategy not specified")
            return video
        """,
    "pkg/launch.py": """
        def run(cfg):
            if cfg.ssl_certfile is None:
                raise ValueError("A certificate is required to serve")
        """,
    "pkg/gen/loader.py": """
        def load(server_args):
            if server_args.quantization is not None:
                raise ValueError("Quantized diffusion weights are not supported here")
        """,
    "pkg/srt/ssl.py": """
        import os


        def check_ssl(server_args):
            if server_args.ssl_keyfile and not server_args.ssl_certfile:
                raise ValueError("--ssl-keyfile requires --ssl-certfile to be specified as well.")
            if server_args.ssl_certfile and not server_args.ssl_keyfile:
                raise ValueError("--ssl-certfile requires --ssl-keyfile to be specified as well.")
            if server_args.ssl_certfile and not os.path.isfile(server_args.ssl_certfile):
                raise ValueError("SSL certificate not found. Please check the --ssl-certfile path.")
        """,
}


def test_a_setting_is_the_one_of_the_sites_package_part() -> None:
    """A read by name links only to a setting of the site's own package part,
    and an exact read to the options of that part first: the diffusion
    server's ``--quantization``, not the LLM server's."""
    out = analyses(PARTS)
    video = out["Video sampling strategy not specified"]
    assert video.evidence == ()
    assert "frames_per_clip` is the setting" not in video.what_it_means
    gen = out["Quantized diffusion weights are not supported here"]
    assert gen.evidence == (
        "`server_args.quantization` reads the setting `ServerArgs.quantization`"
        " (exact; guard at line 2)",
    )
    assert "Diffusion quantization." in gen.what_it_means
    # a module right in the top package names the primary class's settings
    top = out["A certificate is required to serve"]
    assert top.evidence == (
        "`cfg.ssl_certfile` has the name of the setting `ServerArgs.ssl_certfile`"
        " (by name only; guard at line 2)",
    )
    assert "Quantization of the LLM weights." not in gen.what_it_means


def test_a_fix_that_raises_an_earlier_error_is_not_offered() -> None:
    """Leaving ``--ssl-certfile`` unset while ``--ssl-keyfile`` is set raises
    the first check's error: the card does not offer it."""
    out = analyses(PARTS)
    ssl = out["SSL certificate not found. Please check the --ssl-certfile path."]
    assert ssl.solutions == (
        'Do what the message advises: "Please check the `--ssl-certfile` path".',
    )
    assert ssl.example_fix is None  # only the condition restated: left out
    assert "--ssl-keyfile` is set" in ssl.trigger


def test_the_next_check_is_named_once_this_one_passes() -> None:
    """``duration > 0`` is not enough: the range check after it raises next."""
    out = analyses(
        {
            "pkg/__init__.py": "",
            "pkg/request.py": """
                MIN_SECONDS = 4.0
                MAX_SECONDS = 15.0


                def validate(target):
                    if "duration" in target:
                        duration = target["duration"]
                        if duration <= 0:
                            raise ValueError("duration must be positive")
                        if not (MIN_SECONDS <= duration <= MAX_SECONDS):
                            raise ValueError(f"duration must be in [{MIN_SECONDS}, {MAX_SECONDS}]")
                    return target


                def validate_sampling(temperature, top_p):
                    if temperature < 0:
                        raise ValueError("temperature must be non-negative")
                    if not 0 < top_p <= 1:
                        raise ValueError("top_p must be in (0, 1]")


                def validate_steps(steps):
                    if steps <= 0:
                        raise ValueError("steps must be positive")
                    if steps == 3:
                        raise ValueError()
                    if steps > 99:
                        raise ValueError("steps must be at most 99")
                """,
        }
    )
    first = out["duration must be positive"]
    # its only way past is the condition negated, which is no solution: what the
    # next check needs, said only after a fix, is left out with it
    assert (first.solutions, first.example_fix) == ((), None)
    last = out["duration must be in [{MIN_SECONDS}, {MAX_SECONDS}]"]
    assert not any(s.startswith("Once it passes") for s in last.solutions)
    # the next check has no message to quote: nothing is said of it, nor of the one after
    steps = out["steps must be positive"]
    assert not any(s.startswith("Once it passes") for s in steps.solutions)
    # the next check tests another value: it is not this one's business
    temperature = out["temperature must be non-negative"]
    assert not any(s.startswith("Once it passes") for s in temperature.solutions)


def test_what_runs_a_function_no_call_names() -> None:
    """A pydantic validator runs when its model is created; a route's
    decorator is named; a wrapper (``@staticmethod``) says nothing."""
    out = analyses(
        {
            "pkg/__init__.py": "",
            "pkg/api.py": """
                from fastapi import APIRouter
                from pydantic import BaseModel, model_validator

                router = APIRouter()


                @router.post(
                    "/v1/generate",
                    response_model=None,
                )
                async def generate_request(req):
                    if req.stream_options_x:
                        raise ValueError("stream options need stream")


                class ThinkingConfig(BaseModel):
                    budget: int = 0

                    @model_validator(mode="after")
                    def _validate_thinking(self):
                        if self.budget < 1024:
                            raise ValueError("budget must be >= 1024")
                        return self


                class Helper:
                    @staticmethod
                    def unused_helper_x(a):
                        if a:
                            raise ValueError("a must be empty")
                """,
        }
    )
    validator = out["budget must be >= 1024"]
    assert (
        "`_validate_thinking` is a pydantic model validator "
        '(`@model_validator(mode="after")`, line 19): pydantic runs it whenever a '
        "`ThinkingConfig` is created, on the values it is created from; no call names it."
    ) in validator.situations
    route = out["stream options need stream"]
    assert (
        "No call of `generate_request` by name was found in the commit; its decorator "
        '`@router.post("/v1/generate", response_model=None)` (line 7) may register it '
        "(for a route, a registry or a callback), or users' code calls it."
    ) in route.situations
    helper = out["a must be empty"]
    assert any("reached through a registry" in s for s in helper.situations)


def test_a_setting_that_skips_a_check_of_input_is_no_fix_of_it() -> None:
    """A bad request is fixed in the request: switching the server's
    ``--reasoning-parser`` (no choices: a parser's name, tied to the model)
    to the one value that returns before the check changes what runs, so it
    is not offered (it was, after the input's fix, until a review of the
    v0.5.19 cards found it would break the model's output)."""
    out = analyses(
        {
            **{p: t for p, t in PARTS.items() if p.endswith(("__init__.py", "server_args.py"))},
            "pkg/srt/server_args.py": _args_module(
                '    reasoning_parser: Annotated[Optional[str], "The reasoning parser."] = None'
            ),
            "pkg/srt/entrypoints/__init__.py": "",
            "pkg/srt/entrypoints/chat.py": """
                class Chat:
                    def apply_thinking(self, request, enabled):
                        if self.reasoning_parser == "hunyuan":
                            return request
                        if not enabled:
                            raise ValueError("thinking cannot be disabled in this request")
                        return request
                """,
        }
    )
    card = out["thinking cannot be disabled in this request"]
    assert card.audience == "user-input"
    # "The input passes this check when `enabled` is true" is no solution: left out
    assert (card.solutions, card.example_fix) == ((), None)


def test_a_switch_the_message_names_and_an_import_error_of_a_format() -> None:
    """A switch named in the message has no value to check; an ImportError
    raised for a format the code refuses installs nothing."""
    out = analyses(
        {
            "pkg/__init__.py": "",
            "pkg/srt/__init__.py": "",
            "pkg/srt/server_args.py": _args_module(
                '    enable_fast_head: Annotated[bool, "Use the fast head."] = False'
            ),
            "pkg/srt/layers/__init__.py": "",
            "pkg/srt/layers/head.py": """
                def build_head(comm, scheme):
                    if comm is None:
                        raise RuntimeError("--enable-fast-head requires a communicator.")
                    if scheme == "2:4":
                        raise ImportError("Sparse24 is not supported now")
                    return comm
                """,
        }
    )
    switch = out["--enable-fast-head requires a communicator."]
    assert switch.solutions[0] == (
        "Check that you need `--enable-fast-head`, which the message names: a switch, off "
        'unless given. Its help says: "Use the fast head."'
    )
    sparse = out["Sparse24 is not supported now"]
    assert not any("Install" in s for s in sparse.solutions)


def test_a_parameter_is_what_the_calls_give_it() -> None:
    """``enabled`` is a parameter: the card says what its one call passes,
    and the local that call passes, followed to its assignment."""
    out = analyses(
        {
            "pkg/__init__.py": "",
            "pkg/entrypoints/__init__.py": "",
            "pkg/entrypoints/chat.py": """
                class Chat:
                    def apply_reasoning_enabled(self, request, enabled):
                        if not enabled:
                            raise ValueError("reasoning cannot be disabled for this parser")
                        return request
                """,
            "pkg/anthropic.py": """
                from pkg.entrypoints.chat import Chat


                class Serving:
                    def convert(self, anthropic_request, chat_request):
                        chat = Chat()
                        enabled = anthropic_request.thinking.type != "disabled"
                        chat.apply_reasoning_enabled(chat_request, enabled)
                        return chat_request
                """,
            "pkg/steps.py": """
                def check_steps(steps, *, limit):
                    if steps > limit:
                        raise ValueError("too many steps")


                def run(req):
                    check_steps(req.steps, limit=64)


                def run_fast(req, **extra):
                    check_steps(**extra)
                """,
        }
    )
    card = out["reasoning cannot be disabled for this parser"]
    assert (
        "`enabled` is a parameter of `Chat.apply_reasoning_enabled`: the call at "
        "`pkg/anthropic.py:8` gives `enabled`, set there as "
        '`anthropic_request.thinking.type != "disabled"` (line 7).'
    ) in card.what_it_means
    # a test's call is told apart; an assignment over several lines is joined
    fed = analyses(
        {
            "pkg/__init__.py": "",
            "pkg/entrypoints/__init__.py": "",
            "pkg/entrypoints/frames.py": """
                def check_frames(frames):
                    if frames > 64:
                        raise ValueError("too many frames in the request")


                def serve(req):
                    check_frames(req.num_frames)


                def relay(req):
                    count = (
                        req.n
                    )
                    check_frames(count)
                """,
            "pkg/tests/test_frames.py": """
                from pkg.entrypoints.frames import check_frames


                def test_limit():
                    check_frames(65)
                """,
        }
    )["too many frames in the request"]
    assert (
        "`frames` is a parameter of `check_frames`: the call at `pkg/entrypoints/frames.py:7` "
        "gives `req.num_frames`; the call at `pkg/entrypoints/frames.py:14` gives `count`, "
        "set there as `(req.n)` (line 11); "
        "the call at `pkg/tests/test_frames.py:5` (a test) gives `65`."
    ) in fed.what_it_means
    # a call that passes **extra may give anything: nothing is said of it
    steps = out["too many steps"]
    assert "is a parameter of" not in steps.what_it_means


def test_a_call_whose_literal_arguments_make_the_condition_false_never_raises() -> None:
    """A call that gives a parameter a literal for which the site's condition
    is false (here or through an earlier raise) is said never to raise the
    error, in "What it means" and in "Common situations"; a call whose literal
    leaves the condition open, or a parameter the function binds again, is
    not."""
    out = analyses(
        {
            "pkg/__init__.py": "",
            "pkg/shapes.py": """
                def read_tensor(sources, shard_dim, size):
                    if size < 1:
                        raise ValueError("size must be positive")
                    if shard_dim is None and sources.empty:
                        raise NotImplementedError("no sources: not supported")
                    return sources


                def load(sources, dims):
                    read_tensor(sources, dims["w"], 4)
                    read_tensor(sources, 0, 4)
                    read_tensor(sources, None, 0)


                def pad(width, mode):
                    mode = mode or "edge"
                    if mode == "edge":
                        raise NotImplementedError("edge padding is not written yet")
                    return width


                def run(width):
                    pad(width, "zero")
                """,
        }
    )
    card = out["no sources: not supported"]
    assert (
        "`shard_dim` is a parameter of `read_tensor`: the call at `pkg/shapes.py:10` gives "
        '`dims["w"]`; the call at `pkg/shapes.py:11` gives `0`, so that call never raises '
        "this error; the call at `pkg/shapes.py:12` gives `None`."
    ) in card.what_it_means
    assert card.situations[0] == "`load` calls `read_tensor` at `pkg/shapes.py:10`."
    assert card.situations[1:] == (
        "`load` calls `read_tensor` at `pkg/shapes.py:11` with `0` for `shard_dim`, so that "
        "call never raises this error (the condition above is false for those values).",
        # `size` 0 raises the check above first
        "`load` calls `read_tensor` at `pkg/shapes.py:12` with `0` for `size`, so that call "
        "never raises this error (the condition above is false for those values).",
    )
    # the first check: the call giving 0 raises it, the others (4) do not
    first = out["size must be positive"]
    assert sum("never raises this error" in s for s in first.situations) == 2
    # `mode` is bound again before the test: its argument says nothing
    padded = out["edge padding is not written yet"]
    assert not any("never raises" in s for s in padded.situations)


def test_a_flag_whose_command_is_not_found_gets_no_command_line() -> None:
    """The flags a module that does not run as a command defines (a
    subcommand's parser: multimodal_gen's ``sglang generate`` flags) are
    named, but no ``python -m <that module>`` is written: it would do nothing."""
    check = """
    def validate(self):
        if self.image_path:
            raise ValueError("image inputs are not supported by this pipeline")
"""
    out = analyses({"gen/__init__.py": "", "gen/sampling.py": SUPPRESSING_WRAPPER + check})
    card = out["image inputs are not supported by this pipeline"]
    assert card.what_it_means.startswith(
        "You get this with `--image-path` set, in `SamplingParams.validate`."
    )
    assert card.solutions == ("Leave `--image-path` unset (default `None`).",)
    # no command line; the only other example restated the condition: none is shown
    assert card.example_fix is None


def test_a_check_every_choice_of_the_flag_passes_is_not_fixed_on_the_command_line() -> None:
    """``not in`` a set of values that holds every choice of the flag: the
    command line cannot give a failing value, so the fix says where the value
    comes from instead of a command line that changes nothing."""
    out = analyses(
        {
            "app/__init__.py": "",
            "app/cli.py": """
                import argparse


                def build_parser():
                    parser = argparse.ArgumentParser()
                    parser.add_argument("--mode", choices=["fast", "safe"], default="fast")
                    return parser


                def run(args):
                    if args.mode not in ("fast", "safe", "debug"):
                        raise ValueError(f"unknown mode {args.mode}")


                if __name__ == "__main__":
                    run(build_parser().parse_args())
                """,
        }
    )
    card = out["unknown mode {args.mode}"]
    assert card.solutions == (
        "The command line accepts only `fast` or `safe` for `--mode`, and each passes this "
        "check: the failing value comes from the Python API or from code that sets `mode`; "
        "give it one of those values there.",
    )
    # no command line; the only other example restated the condition: none is shown
    assert card.example_fix is None


def test_the_literal_values_a_membership_test_allows_are_shown() -> None:
    """``variant not in _valid`` with ``_valid = (...)`` a few lines above:
    the tuple lists what passes, so it is shown (a literal start value such
    as ``count = 0`` is not)."""
    out = analyses(
        {
            "app/__init__.py": "",
            "app/ops.py": """
                import os


                def prep(x, variant="auto"):
                    env = os.environ.get("APP_VARIANT", "auto")
                    if variant == "auto" and env != "auto":
                        variant = env
                    _valid = ("auto", "cuda", "loop")
                    if variant not in _valid:
                        raise ValueError(f"unknown variant {variant!r} (APP_VARIANT)")
                    return x
                """,
        }
    )
    card = out["unknown variant {variant!r} (APP_VARIANT)"]
    assert card.what_it_means == (
        "In `prep`, this is raised when `variant not in _valid`. The values it tests are set "
        'in the function: `_valid = ("auto", "cuda", "loop")` at line 8.'
    )


def test_solutions_offer_no_branch_that_raises_no_loop_test_and_no_empty_loop() -> None:
    """From a review of v0.5.19 cards: an earlier ``elif`` whose branch raises
    is no way out (loader.py:471, the DUMMY branch); a ``while`` test found
    false after the loop cannot be made true there (server_args.py:2910);
    "the loop has no item" is no fix next to a real one; a condition too
    nested to list term by term is negated whole, not called unavoidable
    (io_struct.py:425)."""
    out = analyses(
        {
            "app/__init__.py": "",
            "app/load.py": """
    import random


    def patterns(load_format):
        if load_format == "safetensors":
            return ["*.safetensors"]
        elif load_format == "dummy":
            raise ValueError("the dummy format loads no weights")
        else:
            raise ValueError(f"Unknown load_format: {load_format}")


    def settle_port(port, max_attempts=100):
        attempts = 0
        while attempts < max_attempts:
            if port_free(port):
                return port
            attempts += 1
            port = 5000 + random.randint(0, 1000)
        raise RuntimeError(f"Failed to find an available port after {max_attempts} attempts")


    def port_free(port):
        return port > 0


    def validate_inputs(text, ids, embeds):
        if (text is None and ids is None and embeds is None) or (
            text is not None and ids is not None and embeds is not None
        ):
            raise ValueError("Either text, input_ids or input_embeds should be provided")


    def check_rows(rows, k):
        for row in rows:
            if row is None or len(row) != k:
                raise ValueError(f"Invalid request: every row needs {k} entries")
    """,
        }
    )
    # each only negates its condition (a value, a loop's end, a nested test):
    # no solution and no example fix, never a filler
    for message in (
        "Unknown load_format: {load_format}",
        "Failed to find an available port after {max_attempts} attempts",
        "Either text, input_ids or input_embeds should be provided",
        "Invalid request: every row needs {k} entries",
    ):
        assert (out[message].solutions, out[message].example_fix) == ((), None), message


def test_a_local_read_from_a_request_dict_is_not_a_flag_by_name() -> None:
    """A bare local assigned from a request's dict (``options.get("num_frames")``,
    multimodal_gen's action/cosmos3.py:147) is not the flag of that name; one
    read from a mapping of arguments (``kwargs.get("model_path")``,
    ``PipelineConfig.from_kwargs``) or by ``getattr`` still is."""
    from miner.analysis.sections import _names_it

    assert not _names_it('options.get("num_frames")', "num_frames")
    assert not _names_it('payload["num_frames"]', "num_frames")
    assert _names_it(
        "kwargs.get(prefix + 'model_path', None) or kwargs.get('model_path')", "model_path"
    )
    assert _names_it('server_cfg["model_path"]', "model_path")
    assert _names_it('getattr(args, "model_path", None)', "model_path")
    assert _names_it("int(model_path)", "model_path")
    assert _names_it("server_args.model_path", "model_path")
    assert not _names_it("getattr(args)", "model_path")


def test_a_property_no_call_names_is_reached_by_reading_it() -> None:
    """deepseek_v4_compress_state.py:192 (v0.5.19): a property raises; no call
    names it, and it is reached by reading the attribute, not through a
    registry or a callback."""
    out = analyses(
        {
            "pkg/__init__.py": "",
            "pkg/pool.py": """
                class StatePool:
                    def __init__(self, page_size):
                        self.page_size = page_size

                    @property
                    def paged_view(self):
                        if self.page_size <= 1:
                            raise ValueError("paged_view is not supported with page_size=1")
                        return self
                """,
        }
    )
    card = out["paged_view is not supported with page_size=1"]
    assert card.situations == (
        "`paged_view` is a property of `StatePool` (`@property`, line 5): it runs whenever "
        "code reads `.paged_view` of one, which no search for a call by name finds.",
    )


def test_no_help_sentence_that_names_the_refused_value_backs_another() -> None:
    """overrides.py:1277 (v0.5.19): where ``fp8_e5m2`` raises, the help
    sentence "'fp8_e5m2' and 'fp8_e4m3' are supported for CUDA 11.8+." is no
    reason to pick ``fp8_e4m3``: it is not quoted."""
    out = analyses(
        {
            "app/__init__.py": "",
            "app/cli.py": """
                import argparse


                def build_parser():
                    parser = argparse.ArgumentParser()
                    parser.add_argument(
                        "--kv-dtype",
                        choices=["auto", "fp8_e5m2", "fp8_e4m3"],
                        default="auto",
                        help="'fp8_e5m2' and 'fp8_e4m3' are supported for CUDA 11.8+.",
                    )
                    return parser


                def check(args):
                    if args.kv_dtype == "fp8_e5m2":
                        raise ValueError("this backend does not support --kv-dtype fp8_e5m2")


                if __name__ == "__main__":
                    check(build_parser().parse_args())
                """,
        }
    )
    card = out["this backend does not support --kv-dtype fp8_e5m2"]
    assert card.solutions[0] == (
        "Set `--kv-dtype` to `fp8_e4m3`. Leaving the flag out keeps its default `auto`, which "
        "is resolved at start-up and may become `fp8_e5m2`."
    )


def test_a_call_inside_a_try_that_swallows_the_error_is_said_so() -> None:
    """lora_manager.py:854 (v0.5.19): the call sits in a ``try`` whose
    ``except Exception`` returns a failed result; the error does not leave
    that call. A handler that raises again, or one for another class, is
    not such a handler."""
    from miner.analysis.paths import swallowing_handlers

    out = analyses(
        {
            "pkg/__init__.py": "",
            "pkg/lora.py": """
                import logging

                logger = logging.getLogger(__name__)


                def validate(config):
                    if config.rank > 64:
                        raise ValueError("LoRA rank above 64 is not supported")


                def load(config):
                    try:
                        validate(config)
                    except Exception as e:
                        logger.warning("load failed: %s", e)
                        return False
                    return True


                def load_strict(config):
                    try:
                        validate(config)
                    except ValueError:
                        raise
                    except KeyError:
                        return None
                """,
        }
    )
    card = out["LoRA rank above 64 is not supported"]
    assert card.situations == (
        "`load` calls `validate` at `pkg/lora.py:13`; there it is inside a `try` whose "
        "`except Exception` (line 14) handles it without raising again: the error does not "
        "propagate from that call (it may be logged or returned instead).",
        "`load_strict` calls `validate` at `pkg/lora.py:22`.",
    )
    lines = ["try:", "    f()", "except (KeyError, ValueError) as e:  # why", "    pass", "x = 1"]
    assert swallowing_handlers(lines, 1) == (("(KeyError, ValueError)", 3),)
    assert swallowing_handlers(["try:", "    f()", "except:", "    raise"], 1) == ()
    assert swallowing_handlers(["x = 1"], 1) == ()


def test_callers_in_vendored_code_are_named_not_counted_as_tests_or_scripts() -> None:
    """Past the first callers, the others are named when they run as part of
    the program; vendored code does (``third_party/pynvml.py``), so they are
    never "all in tests or scripts"."""
    calls = "\n".join(f"def wrap{i}():\n    return check({i})\n" for i in range(8))
    source = (
        "def check(ret):\n    if ret != 0:\n        raise RuntimeError('nvml failed')\n\n" + calls
    )
    found = analyses({"pkg/third_party/nvml.py": source})["nvml failed"]
    assert not any("tests or scripts" in s for s in found.situations)
    assert any(
        s.startswith("4 more functions call `check` in the commit: `wrap4`")
        for s in found.situations
    ), found.situations


def test_an_import_of_the_repositorys_own_module_is_not_named_as_the_package_to_install() -> None:
    source = """
    def serve():
        try:
            from pkg.ray.server import launch
        except ImportError as exc:
            raise ImportError("ray mode is not available") from exc
        try:
            import deep_ep
        except ImportError:
            raise ImportError("deep_ep mode is not available")
        return launch, deep_ep
    """
    files = {
        "pkg/__init__.py": "",
        "pkg/ray/__init__.py": "",
        "pkg/ray/server.py": "import ray\n\ndef launch():\n    return ray\n",
        "pkg/server_args.py": (
            "def add_cli_args(parser):\n"
            "    parser.add_argument('--use-ray', action='store_true')\n"
        ),
        "pkg/launch.py": source,
    }
    found = analyses(files)
    own = " ".join(found["ray mode is not available"].solutions)
    assert "(an import inside `pkg.ray.server`, a module of this repository, failed)" in own
    assert "the code imports `pkg.ray.server`" not in own
    other = " ".join(found["deep_ep mode is not available"].solutions)
    assert "(the code imports `deep_ep`)" in other
