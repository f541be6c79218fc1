"""Evidence for the why, on small fixtures: comments where a setting is resolved,
the docstring of the predicate a guard variable is assigned from, what a
setting left out resolves to, and the other sites of a message told in the
same words as the first (exact sentences)."""

from __future__ import annotations

import textwrap

from test_analysis_config import DATACLASS_REPO
from test_analysis_prose import analyses

from miner.analysis.code import SourceIndex
from miner.analysis.facts import LocalValue, header_lines, local_values
from miner.analysis.resolvers import (
    Requirement,
    _function_ranges,
    guard_names,
    local_calls,
    setting_code,
)
from miner.analysis.sections import whether_clause
from miner.checks import Card, cites_evidence
from miner.extract.runner import extract_file

BUILDER = '''
from pkg.context import get_disagg


def uses_ssm_state(model_config) -> bool:
    """Whether the model keeps recurrent state next to its KV pages.

    More text that is never quoted.
    """
    return model_config.ssm is not None


def resolve_backup(worker):
    """Pick the retraction backup."""
    disagg = get_disagg()
    fields = {}
    backend = disagg.retraction_backup
    if backend is None:
        # Host-pool backups move full-attention pages only, so a model with
        # recurrent state stays on cpu_tensor.
        supports_host_pool = not uses_ssm_state(worker.model_config) and worker.pages > 0
        # Only decode servers back up to the host.
        backend = "host_pool" if disagg.mode == "decode" and supports_host_pool else "cpu_tensor"
        fields["retraction_backup"] = backend
    # The log line names the backend for the operator.
    log(backend)
    return backend


def build_pool(worker):
    is_hybrid_ssm = uses_ssm_state(worker.model_config)
    return is_hybrid_ssm
'''

REGISTRY = '''
from pkg.context import get_disagg
from pkg.server_args import get_server_args


def make_cache(ctx):
    """Build the cache."""
    if get_disagg().retraction_backup == "host_pool":
        if ctx.is_hybrid_ssm:
            raise ValueError("Host-pool retraction does not support recurrent models.")
    return ctx


def load_adapter(name):
    if not get_server_args().disable_radix_cache:
        raise ValueError("Adapters need the radix cache off: pass --disable-radix-cache.")
    return name


def unload_adapter(name):
    if not get_server_args().disable_radix_cache:
        raise ValueError("Adapters need the radix cache off: pass --disable-radix-cache.")
    return name
'''

FILES = {**DATACLASS_REPO, "pkg/builder.py": BUILDER, "pkg/registry.py": REGISTRY}


def cards():
    return analyses(FILES)


def test_comment_where_the_setting_is_resolved_is_quoted() -> None:
    meaning = cards()["Host-pool retraction does not support recurrent models."].what_it_means
    assert (
        "Where `--retraction-backup` is resolved, in `resolve_backup` (`pkg/builder.py:18`), "
        'a comment says: "Host-pool backups move full-attention pages only, so a model with '
        'recurrent state stays on cpu_tensor."'
    ) in (meaning or "")
    # a comment above a statement that uses none of the guards' names is not evidence
    assert "operator" not in (meaning or "")
    assert "Only decode servers" not in (meaning or "")


def test_guard_variable_told_by_its_predicate_docstring() -> None:
    meaning = cards()["Host-pool retraction does not support recurrent models."].what_it_means
    assert (meaning or "").startswith(
        "You get this with `--retraction-backup host_pool` when `ctx.is_hybrid_ssm` is true "
        "(the model keeps recurrent state next to its KV pages), in `make_cache`."
    )
    assert (
        "`is_hybrid_ssm` is set as `uses_ssm_state(worker.model_config)` "
        '(`pkg/builder.py:30`), and `uses_ssm_state()` is documented as "Whether the model '
        'keeps recurrent state next to its KV pages." (`pkg/builder.py:4`)'
    ) in (meaning or "")
    assert "never quoted" not in (meaning or "")


def test_default_resolves_to_the_other_value_for_such_inputs() -> None:
    first = cards()["Host-pool retraction does not support recurrent models."].solutions[0]
    assert first.startswith(
        "Set `--retraction-backup` to `cpu_tensor`; or leave `--retraction-backup` out: "
        "its default is `None`."
    )
    assert first.endswith(
        "Left out, it is resolved in `resolve_backup` (`pkg/builder.py:23`): `host_pool` "
        "needs `not uses_ssm_state(worker.model_config)` (through `supports_host_pool`, "
        "line 20), so where `ctx.is_hybrid_ssm` is true it becomes `cpu_tensor`."
    )


def test_other_sites_use_the_same_condition_words() -> None:
    card = cards()["Adapters need the radix cache off: pass --disable-radix-cache."]
    trigger = card.trigger or ""
    assert "- `--disable-radix-cache` is off (not given) (line 14)" in trigger
    assert (
        "It is also raised at:\n\n- `pkg/registry.py:21` in `unload_adapter` (module "
        "`pkg.registry`), when `--disable-radix-cache` is off (not given)"
    ) in trigger
    assert "when `not get_server_args().disable_radix_cache`" not in trigger
    assert (card.what_it_means or "").startswith(
        "You get this without `--disable-radix-cache`, in `load_adapter`."
    )


def test_header_lines_found_outside_the_excerpt() -> None:
    body = "\n".join(f"    x{i} = {i}" for i in range(60))
    text = (
        "class Pool:\n"
        '    """A pool."""\n\n'
        "    def grow(self, n):\n"
        '        """Grow it."""\n'
        + textwrap.indent(body, "    ")
        + "\n        raise ValueError('too big')\n"
    )
    data = {"pkg/pool.py": text.encode()}
    (site,) = extract_file("pkg/pool.py", "0" * 40, data["pkg/pool.py"]).sites
    assert site.excerpt.start_line > 4  # the def is not in the excerpt
    assert header_lines(data, [site]) == {("pkg/pool.py", site.line): (4, 1)}


def test_setting_code_finds_notes_and_choices() -> None:
    data = {p: textwrap.dedent(t).lstrip("\n").encode() for p, t in FILES.items()}
    notes, choices = setting_code(
        SourceIndex(data), {"retraction_backup"}, {"is_hybrid_ssm", "uses_ssm_state"}
    )
    found = notes["retraction_backup"]
    assert [(n.function, n.path, n.line, n.writes) for n in found] == [
        ("resolve_backup", "pkg/builder.py", 18, True)
    ]
    assert "uses_ssm_state" in found[0].uses
    (choice,) = choices["retraction_backup"]
    assert (choice.function, choice.line, choice.value, choice.other, choice.unset_only) == (
        "resolve_backup",
        23,
        "host_pool",
        "cpu_tensor",
        True,
    )
    assert choice.requires[-1] == Requirement(
        "not uses_ssm_state(worker.model_config)",
        "uses_ssm_state",
        True,
        20,
        "supports_host_pool",
        20,
    )
    assert choice.conflicts("uses_ssm_state", False) == choice.requires[-1]
    assert choice.conflicts("uses_ssm_state", True) is None


def test_guard_names_and_local_calls() -> None:
    assert guard_names(['get_disagg().retraction_backup == "host_pool"', "ctx.is_hybrid_ssm"]) == {
        "retraction_backup",
        "is_hybrid_ssm",
    }
    assert guard_names(["not is_hip() and self.x"]) == {"is_hip"}
    assert guard_names(["(("]) == set()
    text = "    is_ssm = mod.uses_ssm_state(cfg)\n    other = 3\n"
    assert local_calls(text, ["is_ssm", "other"]) == {"is_ssm": "uses_ssm_state"}


def test_function_ranges_by_indentation() -> None:
    lines = [
        "def a():",
        "    x = f(",
        "        1,",
        ")",
        "    # note",
        "    return x",
        "",
        "class C:",
        "    def b(self):",
        "        return 1",
        "y = 2",
    ]
    assert _function_ranges(lines) == [(0, 5, "a"), (8, 9, "b")]


def test_whether_clause_of_predicate_docstrings() -> None:
    assert whether_clause("Whether the model keeps recurrent state.") == (
        "the model keeps recurrent state"
    )
    assert whether_clause("Return True if the pool is shared with HiCache.") == (
        "the pool is shared with HiCache"
    )
    assert whether_clause("Build the cache.") is None
    assert whether_clause("Whether x.") is None


def test_cites_evidence_leaves_out_the_site_and_its_guards() -> None:
    record = {
        "sites": [
            {
                "path": "pkg/a.py",
                "line": 10,
                "guards": [{"line": 9, "kind": "if", "test": "x", "negated": False}],
                "exits": [],
            }
        ]
    }

    def card(meaning: str) -> Card:
        return Card("e", "t", {"What it means": meaning}, record)

    assert not cites_evidence(card("Raised at `pkg/a.py:10` when `x` (`pkg/a.py:9`)."))
    assert not cites_evidence(card('The class `C` is documented as "C." (`pkg/a.py`).'))
    assert cites_evidence(card('The comment above the raise (`pkg/a.py:8`) says: "why."'))
    assert cites_evidence(card('`--x` is described as "X." (`pkg/args.py:10`).'))


def test_a_sentence_does_not_end_at_an_abbreviation_or_inside_parentheses() -> None:
    from miner.analysis.evidence import first_sentence

    text = (
        "Validate the effective ratio: model branches may declare a reset (e.g. Step3p "
        "forces 1.0 under hierarchical cache) that supersedes the user input. Then clamp it."
    )
    assert first_sentence(text) == (
        "Validate the effective ratio: model branches may declare a reset (e.g. Step3p "
        "forces 1.0 under hierarchical cache) that supersedes the user input."
    )
    assert first_sentence("Keep it (see the note. It is long) short. Next.") == (
        "Keep it (see the note. It is long) short."
    )
    assert first_sentence("Pick one, i.e. The first. Next.") == "Pick one, i.e. The first."


def test_the_comment_above_is_its_nearest_paragraph_from_a_whole_sentence() -> None:
    from miner.analysis.evidence import comment_above

    lines = {
        10: "    # the radix path resets the cursor) -- so the old requirement",
        11: "    # is dropped. The radix cache works now.",
        12: "    #",
        13: "    # Only the no_buffer strategy is wired. For now require it.",
        14: "    if strategy != 'no_buffer':",
    }
    assert comment_above(lines, 14) == (
        "Only the no_buffer strategy is wired. For now require it.",
        13,
    )
    cut = {n - 1: lines[n] for n in (10, 11)}  # cut off at the top of the excerpt
    cut[11] = lines[14]
    assert comment_above(cut, 11) == ("The radix cache works now.", 9)


def test_a_comment_indented_deeper_than_the_line_closes_the_block_above() -> None:
    """mamba_hook.py (v0.5.19) ends an ``if`` block with a comment about that
    block; the ``if`` below it is not what the comment speaks of."""
    from miner.analysis.evidence import comment_above

    lines = {
        10: "    if strategy == 'extra_buffer_lazy':",
        11: "        assert mode == 'null', 'lazy slots are not wired'",
        12: "        # eagle and ngram all verify through the lazy plan wired",
        13: "        # in prepare_for_verify.",
        14: "    if draft_tokens is not None:",
    }
    assert comment_above(lines, 14) is None
    lines[13] = "    # Only drafts need the track interval to cover them."
    assert comment_above(lines, 14) == ("Only drafts need the track interval to cover them.", 13)


def test_a_comment_cut_at_the_top_is_not_quoted_from_a_parenthesis() -> None:
    from miner.analysis.evidence import comment_above

    cut = {
        20: "    # (arg_groups/overrides.py: _gemma2_gemma3_overrides).",
        21: "    elif model_arch in ('Gemma4ForCausalLM',):",
    }
    assert comment_above(cut, 21) is None


def test_message_sentences_keep_an_example_in_parentheses_whole() -> None:
    """pplx.py:203 (v0.5.19): the reason was cut at "(e.g" before."""
    from miner.analysis.remedy import sentences

    message = (
        "pplx-kernels is not installed. Please build and install it from "
        "https://github.com/perplexityai/pplx-kernels (e.g. `TORCH_CUDA_ARCH_LIST=9.0a+PTX "
        "python3 setup.py bdist_wheel && pip install dist/*.whl`) to run SGLang with the "
        "pplx MoE A2A backend."
    )
    assert sentences(message) == [
        "pplx-kernels is not installed.",
        message[len("pplx-kernels is not installed. ") :],
    ]
    assert sentences("Bad value {}. --tp-size must divide it.\nSee the docs") == [
        "Bad value {}.",
        "--tp-size must divide it.",
        "See the docs",
    ]


def test_an_assignment_elsewhere_binds_only_what_the_guard_can_read() -> None:
    """mxfp4.py (v0.5.19) tests ``self.use_marlin``; ``use_marlin = ...`` is a
    local of another class's method in moe_wna16.py and says nothing of it;
    kv_cache_hook.py tests ``uses_mla``, a local of the same function set
    40 lines above the raise."""
    from miner.analysis.facts import predicate_assignments

    files = {
        "pkg/mxfp4.py": b"class M:\n    def __init__(self):\n"
        b"        self.use_marlin = should_use_marlin()\n\n"
        b"class N:\n    def run(self):\n        pass\n",
        "pkg/wna16.py": b"def pick(cfg):\n    use_marlin = is_marlin_compatible(cfg)\n",
        "pkg/ctx.py": b"is_fast = is_fast_path()\n",
    }
    found = predicate_assignments(files, {"use_marlin", "is_fast"})
    own, local = sorted(found["use_marlin"], key=lambda a: a.path)
    assert (own.attribute, own.scope, local.attribute, local.scope) == (
        True,
        "M.__init__",
        False,
        "pick",
    )
    assert own.may_bind("self.use_marlin", "pkg/mxfp4.py", "M.apply")
    assert not own.may_bind("self.use_marlin", "pkg/mxfp4.py", "N.run")  # another class
    assert not local.may_bind("self.use_marlin", "pkg/mxfp4.py", "M.apply")
    assert not own.may_bind("self.use_marlin", "pkg/other.py", "M.apply")
    assert local.may_bind("ctx.use_marlin", "pkg/other.py", "f")  # a local passed to a constructor
    assert local.may_bind("use_marlin", "pkg/wna16.py", "pick")  # the same file
    assert not local.may_bind("use_marlin", "pkg/mxfp4.py", "M.apply")
    (module,) = found["is_fast"]
    assert module.may_bind("is_fast", "pkg/ctx.py", "f")
    assert not module.may_bind("is_fast", "pkg/x.py", "f")


def test_an_early_exit_is_placed_at_its_leaving_statement() -> None:
    """runtime.py:42 (v0.5.19): the ``if`` spans three lines and raises at 45;
    mxfp4.py:1517 runs statements and then returns."""
    from miner.analysis.sections import _excerpt_exit

    lines = {
        42: "    if not _is_stable_series(",
        43: "        torch_version, _SUPPORTED_TORCH_SERIES",
        44: "    ) or not _is_stable_at_least(mlx_version, _MIN_MLX_VERSION):",
        45: "        raise RuntimeError(",
        46: '            "SGLANG_USE_MLX requires stable Torch"',
        47: "        )",
        48: "",
        49: "    mps_backend = getattr(torch.backends, 'mps', None)",
    }
    assert _excerpt_exit(lines, 42) == ("raise", "", 45, (), True)
    assert _excerpt_exit(lines, 41) == ("", "", 0, (), False)
    block = {
        10: "    if x:",
        11: "        # done",
        12: "        log(x)",
        13: "        if y:",
        14: "            z()",
        15: "        return",
        16: "    go()",
    }
    assert _excerpt_exit(block, 10) == ("return", "", 15, (), False)  # after other statements
    assert _excerpt_exit({10: "    if x:", 11: "        return 1"}, 10) == (
        "return",
        "if x: return 1",
        11,
        (),
        True,
    )
    handler = {
        422: "        except RuntimeError as e:",
        423: "            if self.prefill_backend_name != Backend.TC_PIECEWISE:",
        424: "                raise  # not ours",
        425: "            raise RuntimeError(",
        426: '                f"Capture prefill CUDA graph failed: {e}"',
        427: "            ) from e",
    }
    found = _excerpt_exit(handler, 422)
    assert found == ("raise", "", 425, (424,), False) and not found.reraises
    assert _excerpt_exit({7: "    except E:", 8: "        close()", 9: "        raise"}, 7) == (
        "raise",
        "",
        9,
        (9,),
        False,
    )


SPLIT = """
from pkg.server_args import get_server_args


def check_split(model):
    if get_server_args().disable_radix_cache and not model.is_dsa:
        # Only DSA models keep split caches.
        raise ValueError("The split needs a DSA model.")
    if model.is_dsa:
        if get_server_args().disable_radix_cache and get_server_args().cache_strategy != "auto":
            # A missing cache cannot hold split layers.
            if get_server_args().cache_strategy == "none":
                raise ValueError("The split is not supported without a cache.")

            raise ValueError("The split runs only with extra caches.")
    return model
"""

PROBE = """
import json


def probe(text, expected):
    try:
        payload = json.loads(text)
    except ValueError as exc:
        detail = str(exc)
        raise RuntimeError(f"the probe returned invalid JSON: {detail}") from exc
    if payload.get("rate") != expected:
        raise RuntimeError("the probe reports another rate")
    return payload
"""


def test_a_conjunct_is_placed_at_the_guard_that_requires_it() -> None:
    """model_hook.py:235 (v0.5.19): the flag is required by the ``if`` at
    line 9, not by the exit at line 5 (``flag and not dsa``), which the
    enclosing ``if model.is_dsa`` makes pass; the two values the other
    branches rule out are both left out of "What it means"."""
    card = analyses({**DATACLASS_REPO, "pkg/split.py": SPLIT})[
        "The split runs only with extra caches."
    ]
    assert card.trigger.split("\n")[2:5] == [
        "- `--disable-radix-cache` is on (line 9)",
        "- `model.is_dsa` is true (line 8)",
        "- `--cache-strategy` is not `auto` (so it is `none`, `extra` or `extra_lazy`) (line 9)",
    ]
    assert "line 5" not in card.trigger
    assert (card.what_it_means or "").startswith(
        "You get this with `--disable-radix-cache` and `--cache-strategy` set to `extra` or "
        "`extra_lazy` when `model.is_dsa` is true, in `check_split`."
    )
    # the comment above the exit that raises the other error is about that error
    assert "split layers" not in (card.what_it_means or "")
    # ... unless that check and this raise are one paragraph of checks
    together = SPLIT.replace('a cache.")\n\n', 'a cache.")\n')
    card = analyses({**DATACLASS_REPO, "pkg/split.py": together})[
        "The split runs only with extra caches."
    ]
    assert (
        'The comment above the early exit at line 11 (`pkg/split.py:10`) says: "A missing '
        'cache cannot hold split layers."'
    ) in (card.what_it_means or "")


def test_a_handler_that_raises_is_not_a_way_out() -> None:
    """video_adapter.py:457 (v0.5.19): ``except ValueError`` raises another
    error, so "the `try` raised ValueError" is no fix and no "after"."""
    card = analyses({"pkg/__init__.py": "", "pkg/probe.py": PROBE})[
        "the probe reports another rate"
    ]
    assert (
        "- the `try` block did not raise `ValueError` (the handler at line 7 leaves): "
        "that handler raises another error at line 9"
    ) in card.trigger
    assert not any("ValueError" in s for s in card.solutions)
    # the example would only restate the condition: left out
    assert card.example_fix is None
    assert "ValueError" not in (card.what_it_means or "")


def test_a_short_help_text_is_quoted_whole() -> None:
    from miner.analysis.evidence import lead_sentences

    help_text = (
        "Enabling data parallelism for attention and tensor parallelism for FFN. The dp size "
        "should be equal to the tp size. Currently DeepSeek-V2 and Qwen 2/3 MoE models are "
        "supported."
    )
    assert lead_sentences(help_text) == help_text  # 179 characters
    assert lead_sentences(help_text, 150) == (
        "Enabling data parallelism for attention and tensor parallelism for FFN. The dp size "
        "should be equal to the tp size."
    )
    assert lead_sentences("One. Two.") == "One. Two."
    assert lead_sentences("x" * 200 + ". Two.") == "x" * 179 + "…"


def test_a_quote_ends_with_one_full_stop() -> None:
    """server_args.py (v0.5.19) help texts end in "....'" or are cut with "…":
    neither gets another full stop."""
    from miner.analysis.sections import _closed

    assert _closed("Disable the radix cache") == "Disable the radix cache."
    assert _closed("Disable the radix cache.") == "Disable the radix cache."
    assert _closed("buffer_only requires…") == "buffer_only requires…"
    assert _closed("Options include: {choices}.'") == "Options include: {choices}.'"
    assert _closed("the 'auto' value") == "the 'auto' value."


REGISTRY_OPS = '''
class KernelRegistry:
    def get_backend(self, op):
        """The spec for ``op`` provided by ``backend``."""
        return op
'''

ALLREDUCE = """
import torch.distributed._symmetric_memory as symm_mem

from pkg.registry_ops import KernelRegistry


def setup(group):
    if symm_mem.get_backend(group) != "NVSHMEM":
        raise RuntimeError("symmetric memory needs the NVSHMEM backend")
    return group


def pick(registry: KernelRegistry, op):
    if registry.get_backend(op) is None:
        raise RuntimeError("no backend for this op")
    return op
"""


def test_a_call_on_a_module_from_outside_the_repository_gets_no_docstring() -> None:
    """mnnvl_cutedsl_ar.py:137 (v0.5.19) calls ``symm_mem.get_backend``, torch's
    function, not the repository's ``KernelRegistry.get_backend``."""
    found = analyses(
        {
            "pkg/__init__.py": "",
            "pkg/registry_ops.py": REGISTRY_OPS,
            "pkg/allreduce.py": ALLREDUCE,
        }
    )
    assert "documented as" not in (
        found["symmetric memory needs the NVSHMEM backend"].what_it_means or ""
    )
    assert (
        '`get_backend()` is documented as "The spec for ``op`` provided by ``backend``." '
        "(`pkg/registry_ops.py:2`)"
    ) in (found["no backend for this op"].what_it_means or "")


HEALTH = """
import time


def launch_server_process(p, session, base_url):
    timeout = 300.0
    start_time = time.perf_counter()
    with session:
        while time.perf_counter() - start_time < timeout:
            response = session.get(f"{base_url}/health_generate")
            if response.status_code == 200:
                return p
            if not p.is_alive():
                raise Exception("Server process terminated unexpectedly.")
            time.sleep(2)
    p.terminate()
    raise TimeoutError("Server failed to start within the timeout period.")
"""


def test_a_loop_whose_end_raises_is_not_a_way_out() -> None:
    """http_server_engine.py:46 (v0.5.19): the ``while`` test failing ends the
    loop, and the code after it raises ``TimeoutError``: no fix says "when
    the time is over", and the bullet says what happens instead."""
    card = analyses({"pkg/__init__.py": "", "pkg/health.py": HEALTH})[
        "Server process terminated unexpectedly."
    ]
    assert (
        "- `time.perf_counter() - start_time < timeout` (line 8): when the loop ends, "
        "the code raises another error at line 16"
    ) in card.trigger
    assert not any("timeout" in s for s in card.solutions)
    # the example would only restate the condition: left out
    assert card.example_fix is None


def test_a_loop_that_falls_off_the_function_is_a_way_out() -> None:
    """Without the ``raise`` after it, the loop's end is a way out."""
    source = HEALTH.replace(
        '    raise TimeoutError("Server failed to start within the timeout period.")\n', ""
    )
    card = analyses({"pkg/__init__.py": "", "pkg/health.py": source})[
        "Server process terminated unexpectedly."
    ]
    assert "- `time.perf_counter() - start_time < timeout` (line 8)\n" in card.trigger + "\n"


KV_DIM = """
from pkg.server_args import get_server_args
from pkg.platforms import is_hip

_is_hip = is_hip()


class Configurator:
    def build(self):
        is_dsa_model = is_deepseek_dsa(self.model_config.hf_config)
        return calculate_dim(model_config=self.model_config, cache_strategy=None)


def calculate_dim(*, model_config, cache_strategy):
    is_dsa_model = is_deepseek_dsa(model_config.hf_config)
    kv_lora_rank = model_config.kv_lora_rank
    dim = kv_lora_rank + model_config.qk_rope_head_dim

    # For non-DSA models the dim is simply the sum
    if not is_dsa_model:
        return dim

    # The backends below keep the plain layout.
    if _is_hip and get_server_args().disable_radix_cache:
        return dim
    scale_bytes = model_config.scale_bytes
    rope_bytes = model_config.rope_bytes
    head_bytes = model_config.head_bytes
    page_bytes = model_config.page_bytes
    block_bytes = model_config.block_bytes
    slot_bytes = model_config.slot_bytes
    row_bytes = model_config.row_bytes
    col_bytes = model_config.col_bytes
    quant_block_size = model_config.quant_block_size
    if cache_strategy == "extra":
        assert (
            kv_lora_rank % quant_block_size == 0
        ), f"kv_lora_rank {kv_lora_rank} must be multiple of quant_block_size {quant_block_size}"
    return dim
"""


def test_the_function_own_assignment_wins_over_one_elsewhere() -> None:
    """kv_cache_configurator.py:2417 (v0.5.19): ``calculate_mla_kv_cache_dim``
    sets ``is_dsa_model`` itself at line 2382, above the excerpt; the
    assignment of a local of the same name in a method at line 543 is not
    its value. A local set other than by a predicate call is told by no
    assignment of another function either."""
    message = "kv_lora_rank {kv_lora_rank} must be multiple of quant_block_size {quant_block_size}"
    meaning = analyses({**DATACLASS_REPO, "pkg/kv.py": KV_DIM})[message].what_it_means or ""
    assert (
        "The values it tests are set in the function: `is_dsa_model = "
        "is_deepseek_dsa(model_config.hf_config)` at line 14; `kv_lora_rank = "
        "model_config.kv_lora_rank` at line 15; `quant_block_size = "
        "model_config.quant_block_size` at line 33."
    ) in meaning
    assert "Elsewhere" not in meaning and "pkg/kv.py:9" not in meaning
    other = KV_DIM.replace(
        "    is_dsa_model = is_deepseek_dsa(model_config.hf_config)\n",
        "    is_dsa_model = model_config.is_dsa and kv_lora_rank > 0\n",
    )
    meaning = analyses({**DATACLASS_REPO, "pkg/kv.py": other})[message].what_it_means or ""
    assert "Elsewhere" not in meaning and "is_deepseek_dsa" not in meaning
    assert (
        "The values it tests are set in the function: `is_dsa_model = "
        "model_config.is_dsa and kv_lora_rank > 0` at line 14; `kv_lora_rank = "
        "model_config.kv_lora_rank` at line 15; `quant_block_size = "
        "model_config.quant_block_size` at line 33."
    ) in meaning


RUNNER = """
class Runner:
    def __init__(self, model, backend_name):
        self.backend_name = backend_name
        try:
            self.backend = resolve_backend(self)
        except RuntimeError as e:
            if self.backend_name != "piecewise":
                raise
            raise RuntimeError(f"Capture failed: {e}") from e

        if isinstance(self.backend, GraphBackend):
            try:
                self.layer_model = resolve_layer_model(model)
            except RuntimeError as exc:
                raise RuntimeError(
                    f"{type(self.backend).__name__} {exc} This backend is unsupported."
                ) from exc


def check(batch):
    try:
        payload = batch.load()
    except ValueError:
        batch.close()
        raise
    if payload.size > batch.limit:
        raise ValueError("the batch is too large")
"""


def test_a_handler_that_raises_the_caught_exception_again_says_so() -> None:
    """prefill_cuda_graph_runner.py:564 (v0.5.19): the handler at line 422
    raises the caught ``RuntimeError`` again at 424 (a bare ``raise``) or
    another error at 425; a handler that ends in a bare ``raise`` raises
    no other error."""
    cards = analyses({"pkg/__init__.py": "", "pkg/runner.py": RUNNER})
    trigger = cards["{type(self.backend).__name__} {exc} This backend is unsupported."].trigger
    assert (
        "- the `try` block did not raise `RuntimeError` (the handler at line 6 leaves): "
        "that handler raises the caught exception again at line 8 or another error at line 9"
    ) in trigger
    trigger = cards["the batch is too large"].trigger
    assert (
        "- the `try` block did not raise `ValueError` (the handler at line 23 leaves): "
        "that handler raises the caught exception again at line 25"
    ) in trigger
    assert "another error" not in trigger


SPARK = """
def handle_spark(cfg):
    _is_npu = cfg.device.startswith("npu")
    if not cfg.device.startswith(("cuda", "npu")):
        raise ValueError("Spark decoding only supports CUDA or NPU device.")

    # a degenerate flag: skip the checks for one rank
    if cfg.enable_dp_attention and cfg.dp_size > 1:
        if not cfg.enable_dp_lm_head:
            raise ValueError("Spark with dp attention requires the dp lm head.")
        if not _is_npu and cfg.moe_backend != "none":
            from pkg.verify import VerifyMode, read_verify_mode

            if read_verify_mode() is not VerifyMode.STATIC:
                raise ValueError("Spark with dp attention requires static verify mode.")
        if cfg.attn_cp_size > 1:
            raise ValueError("Spark with dp attention does not support context parallel.")
    elif cfg.dp_size > 1:
        if cfg.pp_size > 2:
            return None
    for layer in cfg.layers:
        if layer.width > cfg.limit:
            raise ValueError("Spark layers must fit the limit.")
    if cfg.rank > 0:
        cfg.rank = 0
        if cfg.width > 1:
            raise ValueError("Spark ranks must be small.")

    if cfg.pp_size != 1:
        raise ValueError("Currently Spark decoding only supports pp_size == 1.")
    return cfg
"""


def test_exits_nested_in_earlier_branches_are_conditions_too() -> None:
    """speculative_hook.py:385 (v0.5.19): the checks under ``if
    cfg.enable_dp_attention and cfg.dp_size > 1:`` raise before the
    ``pp_size`` check, and the mined exits (only what holds whatever branch
    ran) leave them out. Each is a condition of the site, with its branch:
    an exit two branches deep keeps both tests; an exit under a loop, and
    one whose branch first changes what it tests, add nothing."""
    import ast

    from miner.analysis.nested import nested_exits

    text = textwrap.dedent(SPARK).lstrip("\n")
    function = ast.parse(text).body[0]
    assert isinstance(function, ast.FunctionDef)
    found = nested_exits(function.body, text.split("\n"), 29)
    assert [(g.kind, g.test, g.negated, g.line) for g in found] == [
        (
            "exit",
            "(cfg.enable_dp_attention and cfg.dp_size > 1) and (not cfg.enable_dp_lm_head)",
            True,
            8,
        ),
        (
            "exit",
            "(cfg.enable_dp_attention and cfg.dp_size > 1) and ((not _is_npu and "
            'cfg.moe_backend != "none") and (read_verify_mode() is not VerifyMode.STATIC))',
            True,
            13,
        ),
        (
            "exit",
            "(cfg.enable_dp_attention and cfg.dp_size > 1) and (cfg.attn_cp_size > 1)",
            True,
            15,
        ),
        (
            "exit",
            "not (cfg.enable_dp_attention and cfg.dp_size > 1) and (cfg.dp_size > 1) "
            "and (cfg.pp_size > 2)",
            True,
            18,
        ),
    ]
    # interface.py:643 (v0.5.19): the other branch rebinds ``out``, so past
    # the chain ``out is None`` no longer says which branch ran
    out = textwrap.dedent(
        """
        def fwd(q, out=None):
            if out is None:
                out = make(q)
            else:
                if out.requires_grad:
                    raise ValueError("out must not require gradients")
            if q.ndim != 3:
                raise ValueError("q must be 3-d")
        """
    ).lstrip("\n")
    function = ast.parse(out).body[0]
    assert isinstance(function, ast.FunctionDef)
    assert nested_exits(function.body, out.split("\n"), 8) == ()
    kept = out.replace("out = make(q)", "log(q)")
    function = ast.parse(kept).body[0]
    assert isinstance(function, ast.FunctionDef)
    assert [g.test for g in nested_exits(function.body, kept.split("\n"), 8)] == [
        "not (out is None) and (out.requires_grad)"
    ]
    card = analyses({"pkg/__init__.py": "", "pkg/spark.py": SPARK})[
        "Currently Spark decoding only supports pp_size == 1."
    ]
    assert card.trigger.split("\n")[2:] == [
        '- `cfg.device` starts with `("cuda", "npu")`: the code raises another error at '
        "line 4 otherwise",
        "- any of: `cfg.enable_dp_attention` is true; `cfg.dp_size <= 1`; `cfg.pp_size <= 2`: "
        "the code returns early at line 19 otherwise (`if cfg.pp_size > 2: return None`)",
        "- any of: `cfg.enable_dp_attention` is false; `cfg.dp_size <= 1`; "
        "`cfg.enable_dp_lm_head` is true: the code raises another error at line 9 otherwise "
        '(`if not cfg.enable_dp_lm_head: raise ValueError("Spark with dp attention requires '
        'the dp lm head.")`)',
        "- any of: `cfg.enable_dp_attention` is false; `cfg.dp_size <= 1`; `_is_npu` is true; "
        '`cfg.moe_backend == "none"`; `read_verify_mode() is VerifyMode.STATIC`: the code '
        "raises another error at line 14 otherwise",
        "- any of: `cfg.enable_dp_attention` is false; `cfg.dp_size <= 1`; "
        "`cfg.attn_cp_size <= 1`: the code raises another error at line 16 otherwise "
        '(`if cfg.attn_cp_size > 1: raise ValueError("Spark with dp attention does not '
        'support context parallel.")`)',
        "- `cfg.pp_size != 1` (line 28)",
    ]
    # the ways out only negate the condition: no solution is left
    assert (card.solutions, card.example_fix) == ((), None)


def test_a_branch_that_leaves_after_one_that_goes_on_is_a_condition() -> None:
    """``if a: x() elif b: raise`` (two branches go on: ``a`` and the
    absent ``else``): past the chain, ``not (not a and b)``; the mined
    exits record only the leaving branches before the first that goes on.
    With one branch going on the mined exits say it all: nothing is added."""
    import ast

    from miner.analysis.nested import nested_exits

    text = textwrap.dedent(
        """
        def pick(mode, size):
            if mode == "fast":
                log(mode)
            elif size > 8:
                raise ValueError("size too large")
            if size < 0:
                raise ValueError("size must be positive")
        """
    ).lstrip("\n")
    function = ast.parse(text).body[0]
    assert isinstance(function, ast.FunctionDef)
    found = nested_exits(function.body, text.split("\n"), 7)
    assert [(g.kind, g.test, g.negated, g.line) for g in found] == [
        ("exit", 'not (mode == "fast") and (size > 8)', True, 4)
    ]
    # an ``else`` that leaves after two branches that go on
    other = text.replace("elif size > 8:", "elif size > 8:\n        pass\n    else:")
    function = ast.parse(other).body[0]
    assert isinstance(function, ast.FunctionDef)
    assert [g.test for g in nested_exits(function.body, other.split("\n"), 9)] == [
        'not (mode == "fast") and not (size > 8)'
    ]
    one = text.replace("elif size > 8:", "else:")
    function = ast.parse(one).body[0]
    assert isinstance(function, ast.FunctionDef)
    assert nested_exits(function.body, one.split("\n"), 7) == ()


DCP = """
def handle(cfg):
    if cfg.mode == "decode" and cfg.dcp_size > 1:
        if cfg.backend not in ("mooncake", "nixl"):
            raise ValueError("DCP needs the mooncake or nixl backend.")
        if cfg.radix:
            raise ValueError("DCP needs the chunk cache.")
    if cfg.mode == "decode":
        if cfg.radix:
            if cfg.spec is not None:
                raise ValueError("The radix cache is incompatible with speculative decoding.")
    return cfg
"""


def test_a_conjunct_is_placed_at_the_exit_that_makes_it_necessary() -> None:
    """pd_disaggregation_hook.py:90 (v0.5.19): with ``mode == "decode"``
    and ``radix`` required, ``dcp_size <= 1`` is necessary because of the
    check at line 5 (the radix cache), not of the one at line 3 (the
    backend), which also names ``dcp_size``."""
    card = analyses({"pkg/__init__.py": "", "pkg/dcp.py": DCP})[
        "The radix cache is incompatible with speculative decoding."
    ]
    assert (
        "- `cfg.dcp_size <= 1`: the code raises another error at line 6 otherwise "
        '(`if cfg.radix: raise ValueError("DCP needs the chunk cache.")`)'
    ) in card.trigger.split("\n")
    assert "line 4" not in card.trigger


LOCALS = """
from pkg.server_args import get_server_args


def encoder_config(component):
    cache_strategy = component.read_strategy()
    if cache_strategy is None:
        raise ValueError("the component has no cache_strategy value")


def given(cache_strategy):
    if cache_strategy is None:
        raise ValueError("no cache_strategy value was given")


def from_settings():
    cache_strategy = get_server_args().cache_strategy
    if cache_strategy is None:
        raise ValueError("the cache_strategy setting is not set")
"""


def test_a_local_the_function_binds_is_no_setting_of_that_name() -> None:
    """text_encoder_loader.py:369 (v0.5.19): ``quant_config =
    _get_encoder_quant_config(...)`` is a local; "by its name, `quant_config`
    is the setting `DiTConfig.quant_config`" was false. A parameter keeps the
    hedged link by name, and an assignment from the setting itself keeps it
    (as the value of the setting)."""
    cards = analyses({**DATACLASS_REPO, "pkg/locals.py": LOCALS})
    local = cards["the component has no cache_strategy value"]
    assert local.trigger.endswith("- `cache_strategy` is `None` (line 6)")
    assert local.what_it_means == (
        "In `encoder_config`, this is raised when `cache_strategy` is `None`. The values it "
        "tests are set in the function: `cache_strategy = component.read_strategy()` at line 5."
    )
    by_name = "(by its name, `cache_strategy` is the flag `--cache-strategy`)"
    assert by_name in cards["no cache_strategy value was given"].trigger
    setting = cards["the cache_strategy setting is not set"]
    assert by_name in setting.trigger
    assert "`cache_strategy = get_server_args().cache_strategy` at line 16, the value of " in (
        setting.what_it_means or ""
    )


KWARG = """
def prepare(batch, build):
    page_size = batch.allocator.page_size
    rows = build(
        batch,
        page_size=page_size,
    )
    if page_size > 1 and rows > 8:
        raise ValueError("rows do not fit the page: pass --disable-radix-cache")
"""


def test_a_keyword_argument_is_no_assignment() -> None:
    """eagle_utils.py:960 (v0.5.19) said "`page_size = page_size` at line 944":
    that line is ``page_size=page_size,`` in a call's arguments."""
    card = analyses({**DATACLASS_REPO, "pkg/prep.py": KWARG})[
        "rows do not fit the page: pass --disable-radix-cache"
    ]
    assert "`page_size = batch.allocator.page_size` at line 2" in (card.what_it_means or "")
    assert "page_size = page_size" not in (card.what_it_means or "")


SAME_CLASS = """
class Exa:
    def _post(self, path):
        if not path:
            raise ValueError("an empty path was posted: pass --disable-radix-cache")
        return path

    def search(self, query):
        return self._post("/search")

    def contents(self, urls):
        # self._post("/old") is not a call
        def inner():
            return self._post("/inner")
        return self._post("/contents")


class Other:
    def _post(self, path):
        return path

    def send(self):
        return self._post("/x")
"""


def test_a_method_defined_twice_is_called_by_its_own_class() -> None:
    """exa_client.py:98 (v0.5.19): ``_post`` is defined in several classes,
    so its callers are not resolved by name; ``self._post(`` in the methods
    of the same class still calls it."""
    card = analyses({**DATACLASS_REPO, "pkg/exa.py": SAME_CLASS})[
        "an empty path was posted: pass --disable-radix-cache"
    ]
    assert card.situations == (
        "`Exa.search`, in the same class, calls `self._post()` at `pkg/exa.py:8`.",
        "`Exa.contents`, in the same class, calls `self._post()` at `pkg/exa.py:14`.",
        "`_post` is defined 2 times in the commit, so its callers from elsewhere are not "
        "resolved by name; the traceback shows which one ran.",
    )


ELASTIC = """
from pkg.server_args import get_server_args


def handle_elastic(cfg, server_args):
    if cfg.max_ep_size is not None:
        assert cfg.max_ep_size > 0, "--max-ep-size must be a positive integer."

    scaling_active = (
        cfg.elastic_ep_backend is not None
        and cfg.max_ep_size is not None
        and cfg.max_ep_size > cfg.tp_size
    )
    launch(
        scaling_active=False,
    )
    first = cfg.a
    second = cfg.b
    third = cfg.c
    fourth = cfg.d
    fifth = cfg.e
    sixth = cfg.f
    seventh = cfg.g
    eighth = cfg.h
    ninth = cfg.i
    tenth = cfg.j
    eleventh = cfg.k
    twelfth = cfg.l
    thirteenth = cfg.m
    fourteenth = cfg.n
    fifteenth = cfg.o
    sixteenth = cfg.p
    seventeenth = cfg.q
    eighteenth = cfg.r
    nineteenth = cfg.s
    twentieth = cfg.t
    if cfg.elastic_ep_initial_size is not None:
        assert scaling_active, (
            "--elastic-ep-initial-size is only valid for an Elastic EP deployment."
        )
    if scaling_active:
        assert cfg.dtype == "auto", "Elastic EP scale-up needs the auto dtype."
"""


def test_a_local_bool_set_above_the_excerpt_is_true_or_false() -> None:
    """parallel_hook.py:398-405 (v0.5.19): ``scaling_active`` is set from a
    comparison chain 26 lines above the assert, outside the excerpt. The card
    says where it is set and reads it as false, not "falsy (None, empty or
    zero)"; the keyword argument ``scaling_active=False`` in a call binds
    nothing."""
    files = {**DATACLASS_REPO, "pkg/hook.py": ELASTIC}
    found = analyses(files)["--elastic-ep-initial-size is only valid for an Elastic EP deployment."]
    meaning = found.what_it_means or ""
    assert (
        "The values it tests are set in the function: `scaling_active = "
        "cfg.elastic_ep_backend is not None and cfg.max_ep_size is not None and "
        "(cfg.max_ep_size > cfg.tp_size)` at line 8."
    ) in meaning
    assert "`scaling_active` is false" in found.trigger
    # "It is not raised when `scaling_active` is true" (the negation) is left out
    assert "falsy" not in found.trigger + meaning + " ".join(found.solutions)
    assert not any("scaling_active" in s for s in found.solutions)
    found = analyses(files)["Elastic EP scale-up needs the auto dtype."]
    assert "- `scaling_active` is true (line 40)" in found.trigger
    assert "falsy" not in found.trigger + " ".join(found.solutions)
    assert not any("scaling_active" in s for s in found.solutions)


def test_local_values_reads_the_bindings_of_the_function() -> None:
    """:func:`local_values`: the parameter and each binding of a tested name
    above the excerpt, with the value of a plain assignment and whether it
    is a ``bool``; a keyword argument on its own line and a docstring's text
    bind nothing; a property's getter and setter are told apart by their
    ``def`` line."""
    source = textwrap.dedent(
        '''
        class Box:
            @property
            def size(self):
                return self._size

            @size.setter
            def size(self, value, strict=None):
                """Set the size.

                ready = the text of a docstring
                """
                ready = value is not None and value > 0
                call(
                    ready=False,
                )
                count = len(value)
                a = 1
                b = 2
                c = 3
                d = 4
                e = 5
                f = 6
                g = 7
                h = 8
                i = 9
                j = 10
                k = 11
                l = 12
                m = 13
                n = 14
                o = 15
                if strict and not ready:
                    raise ValueError("bad size")
                if count > 3:
                    raise ValueError("too many")
        '''
    ).lstrip("\n")
    data = {"pkg/box.py": source.encode()}
    sites = extract_file("pkg/box.py", "0" * 40, data["pkg/box.py"]).sites
    values = local_values(data, sites)
    assert values[("pkg/box.py", "Box.size", "ready")] == (
        LocalValue(7, 12, "value is not None and value > 0", True),
    )
    assert values[("pkg/box.py", "Box.size", "strict")] == (LocalValue(7, 7, "", False),)
    assert values[("pkg/box.py", "Box.size", "count")] == (LocalValue(7, 16, "len(value)", False),)


PAGED = """
def paged(q, page_table=None, cu=None):
    limit = q.limit
    if page_table is not None:
        seqlen_k = q.pages * q.page_size
    else:
        seqlen_k = q.shape[-3]
    if cu is None:
        total_q = q.batch * q.seq
    else:
        total_q = q.shape[0]
    first = q.a
    second = q.b
    third = q.c
    fourth = q.d
    fifth = q.e
    sixth = q.f
    seventh = q.g
    eighth = q.h
    ninth = q.i
    tenth = q.j
    eleventh = q.k
    twelfth = q.l
    thirteenth = q.m
    fourteenth = q.n
    fifteenth = q.o
    sixteenth = q.p
    seventeenth = q.q
    eighteenth = q.r
    nineteenth = q.s
    twentieth = q.t
    if page_table is not None and seqlen_k > limit and total_q > 0:
        raise ValueError("the prompt is too long for the paged kernel")
"""


def test_an_assignment_in_a_branch_is_not_the_value() -> None:
    """interface.py:453-459 (v0.5.19): ``seqlen_k`` is set in both branches of
    an ``if``/``else`` above the excerpt; the ``else`` one (nearest above)
    is not the value on the paged path, nor is either ``total_q``. The
    function's top-level ``limit`` is."""
    found = analyses({"pkg/__init__.py": "", "pkg/paged.py": PAGED})[
        "the prompt is too long for the paged kernel"
    ]
    meaning = found.what_it_means or ""
    assert "The values it tests are set in the function: `limit = q.limit` at line 2." in meaning
    assert "seqlen_k =" not in meaning and "total_q =" not in meaning
    data = {"pkg/paged.py": textwrap.dedent(PAGED).lstrip("\n").encode()}
    sites = extract_file("pkg/paged.py", "0" * 40, data["pkg/paged.py"]).sites
    values = local_values(data, sites)
    assert values[("pkg/paged.py", "paged", "seqlen_k")] == (
        LocalValue(1, 4, "q.pages * q.page_size", False, 5),
        LocalValue(1, 6, "q.shape[-3]", False, 7),
    )
    assert values[("pkg/paged.py", "paged", "limit")] == (LocalValue(1, 2, "q.limit", False, 0),)


PLAIN_LAYOUT = """
def check_layout(server_args, request):
    plain = server_args.disable_radix_cache and server_args.tp > 1
    first = request.a
    second = request.b
    third = request.c
    fourth = request.d
    fifth = request.e
    sixth = request.f
    seventh = request.g
    eighth = request.h
    ninth = request.i
    tenth = request.j
    eleventh = request.k
    twelfth = request.l
    thirteenth = request.m
    fourteenth = request.n
    fifteenth = request.o
    sixteenth = request.p
    seventeenth = request.q
    eighteenth = request.r
    nineteenth = request.s
    twentieth = request.t
    if plain:
        raise ValueError("the request cannot use the plain layout")
"""


def test_a_value_is_said_to_read_every_name_it_tests() -> None:
    """parallel_hook.py:398 (v0.5.19): ``scaling_active`` reads
    ``--elastic-ep-backend`` and ``--max-ep-size`` by name, and ``cfg.tp_size``,
    too short a name to link by name alone: the card names it as written
    rather than leave it out (setting ``--max-ep-size`` alone is no fix)."""
    found = analyses({**DATACLASS_REPO, "pkg/layout.py": PLAIN_LAYOUT})[
        "the request cannot use the plain layout"
    ]
    assert (
        "The values it tests are set in the function: `plain = "
        "server_args.disable_radix_cache and server_args.tp > 1` at line 2, which reads "
        "`--disable-radix-cache` and `server_args.tp`."
    ) in (found.what_it_means or "")
    # where ``plain`` comes from was said with its negation in Solutions, left
    # out now: What it means says it (above)
    assert found.solutions == ()
