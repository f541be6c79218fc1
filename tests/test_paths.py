"""Settings across calls (miner.analysis.paths): the conditions of the callers
of a raising function, on a small repository of our own."""

from __future__ import annotations

import pytest
from test_analysis_config import DATACLASS_REPO

from miner import pipeline
from miner.analysis.callers import Caller
from miner.analysis.code import SourceIndex
from miner.analysis.paths import call_reaches, referenced

WORKER = """\
from pkg.loader import load_weights


class Pool:
    def __init__(self, server_args):
        self.server_args = server_args

    def start(self):
        if self.server_args.disable_radix_cache:
            self._build_plain()

    def _build_plain(self):
        raise RuntimeError("plain pool cannot be built")


def launch(server_args):
    if server_args.disable_radix_cache:
        check_plain(server_args)


def check_plain(server_args):
    raise ValueError("plain launches are not supported")


def open_one(server_args):
    if server_args.cache_strategy == "extra":
        verify(server_args)


def open_two(server_args):
    verify(server_args)


def verify(server_args):
    raise ValueError("verify failed")


class Store:
    def fetch_blob(self):
        raise KeyError("blob missing")


def use(store, server_args):
    if server_args.disable_radix_cache:
        store.fetch_blob()


def boot(server_args):
    if not server_args.model_path:
        return None
    return load_weights(server_args.model_path)


def register(table):
    table["hook"] = on_hook


def on_hook(server_args):
    raise RuntimeError("hook failed")


def fire(server_args):
    if server_args.disable_radix_cache:
        on_hook(server_args)
"""

LOADER = """\
def load_weights(path):
    raise FileNotFoundError(f"no weights at {path}")
"""

FILES = {**DATACLASS_REPO, "pkg/worker.py": WORKER, "pkg/loader.py": LOADER}


@pytest.fixture(scope="module")
def mined(tmp_path_factory: pytest.TempPathFactory):
    import git
    from conftest import commit_all, write_files

    root = tmp_path_factory.mktemp("paths")
    write_files(root, FILES)
    commit_all(git.Repo.init(root, initial_branch="main"), "fixture", "v1")
    return pipeline.mine_and_analyze(str(root), "v1", slug="acme/paths")


def analysis(mined, message: str):
    error = next(e for e in mined.result.errors if e.message == message)
    return mined.analyses[error.error_id]


def test_helper_reached_only_under_a_flag_says_so(mined):
    found = analysis(mined, "plain launches are not supported")
    assert found.trigger.split("\n\n")[1] == (
        "Reached only through `launch` (`pkg/worker.py:18`): every call of `check_plain` in "
        "the commit runs only when `--disable-radix-cache` is on, as tested at `pkg/worker.py:17`."
    )
    # the one caller and its condition are said above: no "Common situations" line repeats them
    assert found.situations == ()
    from miner.publish.cards import render_card

    error = next(e for e in mined.result.errors if e.message == "plain launches are not supported")
    card = render_card(error, mined.result.commit, found)
    when = card.split("## When it happens\n\n")[1].split("\n## ")[0]
    assert "Common situations" not in when
    assert found.trigger in when
    # The flag the only caller tests is a way out, with the flag's help text.
    assert found.solutions[0] == (
        'Drop `--disable-radix-cache`: it is off by default. Dropping it gives up: "Disable '
        'the radix cache." Every call of `check_plain` in the commit needs it (tested at '
        "`pkg/worker.py:17`)."
    )
    assert any("`server_args.disable_radix_cache` reads the setting" in e for e in found.evidence)


def test_method_called_on_self_in_its_class(mined):
    found = analysis(mined, "plain pool cannot be built")
    assert found.trigger.split("\n\n")[1] == (
        "Reached only through `Pool.start` (`pkg/worker.py:10`): every call of `_build_plain` "
        "in the commit runs only when `--disable-radix-cache` is on, as tested at "
        "`pkg/worker.py:9`."
    )


def test_call_on_another_object_is_matched_by_name(mined):
    found = analysis(mined, "blob missing")
    assert found.trigger.split("\n\n")[1] == (
        "Reached only through `use` (`pkg/worker.py:45`, matched by name): every call of "
        "`fetch_blob` in the commit runs only when `--disable-radix-cache` is on, as tested at "
        "`pkg/worker.py:44`."
    )
    assert found.situations == ()


def test_imported_function_behind_an_early_return(mined):
    found = analysis(mined, "no weights at {path}")
    assert found.trigger.split("\n\n")[1] == (
        "Reached only through `boot` (`pkg/worker.py:51`): every call of `load_weights` in the "
        "commit runs only when `--model-path` is set (a non-empty value), as tested at "
        "`pkg/worker.py:49`."
    )


def test_two_callers_one_guarded_claims_nothing_common(mined):
    found = analysis(mined, "verify failed")
    assert "Reached only" not in found.trigger
    assert found.situations == (
        "`open_one` calls `verify` at `pkg/worker.py:27` when `--cache-strategy` is `extra`.",
        "`open_two` calls `verify` at `pkg/worker.py:31`.",
    )
    assert not any("Every call" in s for s in found.solutions)


def test_function_used_as_a_value_claims_nothing_common(mined):
    # ``on_hook`` is stored in a table: its calls found by name may not be all.
    assert "on_hook" in mined.facts.referenced
    found = analysis(mined, "hook failed")
    assert "Reached only" not in found.trigger
    assert found.situations == (
        "`fire` calls `on_hook` at `pkg/worker.py:64` when `--disable-radix-cache` is on.",
    )
    assert not any("Every call" in s for s in found.solutions)


def test_call_reaches_read_guards_and_exits_of_the_call_statement():
    source = """\
def outer(args, items):
    if args.fast:
        return
    for item in items:
        if item is None:
            continue
        try:
            helper(item)
        except ValueError:
            pass


def helper(item):
    raise ValueError(item)
"""
    index = SourceIndex({"m.py": source.encode()})
    found = call_reaches(index, {"helper": (Caller("helper", "outer", "m.py", 8),)}, ["helper"])
    reach = found[("helper", "m.py", 8)]
    assert reach.form == "local"
    assert [(g.kind, g.test, g.negated, g.line) for g in reach.guards] == [
        ("for", "item in items", False, 4),
        ("try", "", False, 7),
    ]
    assert [(g.kind, g.test, g.negated, g.line) for g in reach.exits] == [
        ("exit", "args.fast", True, 2),
        ("exit", "item is None", True, 5),
    ]


def test_an_assignment_after_an_exit_cancels_it():
    source = """\
def outer(args):
    if not args.ready:
        return
    args = reload()
    helper(args)
"""
    index = SourceIndex({"m.py": source.encode()})
    found = call_reaches(index, {"helper": (Caller("helper", "outer", "m.py", 5),)}, ["helper"])
    assert found[("helper", "m.py", 5)].exits == ()


def test_referenced_ignores_calls_imports_and_comments():
    index = SourceIndex(
        {
            "a.py": b"from b import (\n    job,\n)\n# job runs later\njob()\n",
            "b.py": b"def job():\n    pass\n\n\ndef cb():\n    pass\n\n\nrun(cb)\n",
        }
    )
    assert referenced(index, ["job", "cb"]) == frozenset({"cb"})


@pytest.mark.integration
def test_release_constructor_reached_only_under_its_flag(mined_release):
    """At v0.5.19 ``EmbeddingCacheController`` is built only by
    ``MMEncoder.__init__`` (``disaggregation/encoder/server.py:556``), inside
    ``if get_mm().enable_mm_global_cache:`` (line 547); nothing else in the
    release names the class but that call and its import."""
    result, out = mined_release("v0.5.19")
    path = "python/sglang/srt/mem_cache/embedding_cache_controller.py"
    error = next(e for e in result.errors if (e.primary.path, e.primary.line) == (path, 407))
    assert error.message == "tp_group must be provided when tp_size > 1"
    card = (out / "errors" / f"{error.error_id}.md").read_text()
    server = "python/sglang/srt/disaggregation/encoder/server.py"
    assert (
        f"Reached only through `MMEncoder.__init__` (`{server}:556`): every call of "
        "`EmbeddingCacheController` in the commit runs only when `--enable-mm-global-cache` "
        f"is on, as tested at `{server}:547`."
    ) in card
    assert (
        f"`MMEncoder.__init__` calls `EmbeddingCacheController` at `{server}:556` when "
        "`--enable-mm-global-cache` is on, reached from"
    ) in card
    assert (
        "Drop `--enable-mm-global-cache`: it is off by default. Dropping it gives up: "
        '"Enable global multimodal embedding cache to skip redundant ViT inference." Every '
        "call of `EmbeddingCacheController` in the commit needs it (tested at "
        f"`{server}:547`)."
    ) in card


def test_a_local_of_the_same_name_is_no_caller() -> None:
    """modelopt_quant.py (v0.5.19): ``fp4_gemm, backend = _get_fp4_gemm_op()``
    in another file calls that value, not ``fp4_gemm`` of the quantization
    module; a file that neither defines nor imports the name calls nothing."""
    from miner.analysis.callers import find_callers

    index = SourceIndex(
        {
            "pkg/quant.py": b"def fp4_gemm(a):\n    raise ValueError(a)\n\n\n"
            b"def apply(x):\n    return fp4_gemm(x)\n",
            "pkg/uses.py": b"from pkg.quant import (  # noqa: E402\n"
            b"    other,\n    fp4_gemm,\n)\n\n\n"
            b"def run(x):\n    return fp4_gemm(x)\n\n\n"
            b"def shadowed(fp4_gemm, x):\n    return fp4_gemm(x)\n",
            "pkg/gen.py": b"def op():\n    fp4_gemm, backend = get_op()\n"
            b"    return fp4_gemm(1)\n\n\n"
            b"def bare(x):\n    return fp4_gemm(x)\n",
            "pkg/mod.py": b"import pkg.quant as q\n\n\ndef via(x):\n    return q.fp4_gemm(x)\n",
            # a lazy import of the class through its getter is a call of it
            "pkg/worker.py": b"def _get_kv_helper():\n    from pkg.kv import KVHelper\n"
            b"    return KVHelper\n\n\ndef init(self):\n    KVHelper = _get_kv_helper()\n"
            b"    self.helper = KVHelper(layers=3)\n",
            "pkg/kv.py": b"class KVHelper:\n    pass\n",
        }
    )
    assert find_callers(index, ["KVHelper"])["KVHelper"] == (
        Caller("KVHelper", "init", "pkg/worker.py", 8),
    )
    assert find_callers(index, ["fp4_gemm"])["fp4_gemm"] == (
        Caller("fp4_gemm", "via", "pkg/mod.py", 5),
        Caller("fp4_gemm", "apply", "pkg/quant.py", 6),
        Caller("fp4_gemm", "run", "pkg/uses.py", 8),
    )


def test_import_statements_are_read_with_their_continuations() -> None:
    """One reader of import lines serves the callers' index (the names a
    file binds) and the call paths (the module a name comes from)."""
    from miner.analysis.callers import _imported_names
    from miner.extract.imports import import_statements

    data = (
        b"from .x import a, b as c  # note\n"
        b"import os.path, json as j\n"
        b"from m import (\n    d,  # why\n    e as e,\n)\n"
        b"from n import \\\n    f, g\n"
        b"    from . import h\n"
    )
    assert import_statements(data) == [
        (".x", (("a", "a"), ("b", "c"))),
        (None, (("os.path", "os"), ("json", "j"))),
        ("m", (("d", "d"), ("e", "e"))),
        ("n", (("f", "f"), ("g", "g"))),
        (".", (("h", "h"),)),
    ]
    assert _imported_names(data) == {b"a", b"c", b"os", b"j", b"d", b"e", b"f", b"g", b"h"}
    assert _imported_names(data + b"from p import *\n") is None


def test_a_name_no_call_names_is_found_where_it_is_used_as_a_value() -> None:
    """interface.py:1484 (v0.5.19): ``FlashAttentionForwardSm100`` is called
    through ``... else FlashAttentionForwardSm100``; a parameter, a string or
    another binding of the same name is no such use."""
    from miner.analysis.code import SourceIndex
    from miner.analysis.paths import first_uses

    files = {
        "a.py": b"def Foo(x):\n    raise E\n",
        "b.py": b'def f(Foo: int = 1):\n    raise Exception("Foo is bad")\n    Foo = 3\n',
        "c.py": b"import a\n\nif isinstance(y, Foo):\n    cls = a.Bar if x else Foo\n",
    }
    assert first_uses(SourceIndex(files), ["Foo"]) == {"Foo": ("c.py", 4)}
    del files["c.py"]
    assert first_uses(SourceIndex(files), ["Foo"]) == {}
