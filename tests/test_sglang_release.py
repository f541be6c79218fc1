"""Integration: the real SGLang v0.5.19 release, built from PyPI wheels.

The expected values below were read off the release's files. The excerpts are
golden files, ``tests/golden/sglang-v0.5.19/*.excerpt.txt``: the lines of the
file at the tag (``git show v0.5.19:<path>``), 18 either side of the site with
blank edge lines trimmed, each file ending with one line break.
"""

from __future__ import annotations

import ast
from pathlib import Path

import git
import pytest

from miner.extract.text import decode_source

pytestmark = pytest.mark.integration

TAG = "v0.5.19"
GOLDEN = Path(__file__).resolve().parent / "golden" / "sglang-v0.5.19"


def card_for(out: Path, title: str) -> str:
    for card in sorted((out / "errors").glob("*.md")):
        text = card.read_text()
        if f"\n# {title}\n" in text:
            return text
    raise AssertionError(f"no card titled {title!r}")


def golden_excerpt(name: str) -> str:
    """A golden excerpt: the text of the lines, without the final line break."""
    text = (GOLDEN / f"{name}.excerpt.txt").read_text("utf-8")
    assert text.endswith("\n") and not text.endswith("\n\n")
    return text[:-1]


@pytest.mark.parametrize(
    ("name", "path", "start", "end"),
    [
        ("host-pool-retraction", "python/sglang/srt/mem_cache/registry.py", 137, 172),
        (
            "mlx-auxiliary-state",
            "python/sglang/srt/hardware_backend/mlx/kv_cache/auxiliary_state.py",
            316,
            352,
        ),
    ],
)
def test_golden_excerpts_are_the_release_lines(
    corpus: Path, name: str, path: str, start: int, end: int
) -> None:
    """The golden files hold the release's own lines (read without the miner)."""
    text = git.Repo(corpus).git.show(f"{TAG}:{path}", strip_newline_in_stdout=False)
    assert golden_excerpt(name) == "\n".join(text.split("\n")[start - 1 : end])


def test_host_pool_card(mined_release) -> None:
    result, out = mined_release(TAG)
    (site,) = [
        s
        for s in result.sites
        if s.message == "Host-pool retraction does not support Mamba models."
    ]
    assert (site.path, site.line, site.exception) == (
        "python/sglang/srt/mem_cache/registry.py",
        154,
        "ValueError",
    )
    assert site.scope == "_create_unified_radix_cache"
    assert [(g.kind, g.test, g.negated) for g in site.guards] == [
        ("if", 'get_disagg().disaggregation_decode_retraction_backup == "host_pool"', False),
        ("if", "ctx.is_hybrid_ssm", False),
    ]
    # 136..172, the blank line 136 trimmed.
    assert (site.excerpt.start_line, site.excerpt.end_line) == (137, 172)
    assert site.excerpt.text == golden_excerpt("host-pool-retraction")
    excerpt = site.excerpt.text.splitlines()
    assert excerpt[0].strip().startswith("# Honor a CLI --flexkv-config-file")
    assert excerpt[-1].strip() == "tree_components.append(ComponentType.C128)"
    card = card_for(out, "Host-pool retraction does not support Mamba models.")
    assert "Thrown at `python/sglang/srt/mem_cache/registry.py:154`" in card
    assert site.excerpt.text in card


def test_mlx_card(mined_release) -> None:
    result, out = mined_release(TAG)
    message = "MLX auxiliary-state radix cache does not support enable_mamba_extra_buffer yet."
    (site,) = [s for s in result.sites if s.message == message]
    assert site.path == "python/sglang/srt/hardware_backend/mlx/kv_cache/auxiliary_state.py"
    assert (site.line, site.exception, site.scope) == (
        334,
        "NotImplementedError",
        "MlxAuxiliaryStateComponent.__init__",
    )
    assert [(g.kind, g.test, g.negated) for g in site.guards] == [
        ("if", "params.enable_mamba_extra_buffer", False)
    ]
    assert (site.excerpt.start_line, site.excerpt.end_line) == (316, 352)
    assert site.excerpt.text == golden_excerpt("mlx-auxiliary-state")
    excerpt = [line.strip() for line in site.excerpt.text.splitlines()]
    assert excerpt[0] == "# auxiliary slot, so return it with the request row. Keyed on"
    assert excerpt[-1] == "if track_buffer is not None and track_len is not None:"
    # The wheel's code, not a GitHub commit's: its ``req.kv.`` accessors on
    # lines 317, 350 and 351 (a card made from a GitHub commit near the
    # release's had ``req.`` and ``getattr(req, ...)`` there, same bounds).
    assert [n for n, line in enumerate(excerpt, 316) if "req.kv." in line] == [317, 350, 351]
    card = card_for(out, "MLX auxiliary-state radix cache does not support…")  # cut at a word
    assert (
        "Thrown at `python/sglang/srt/hardware_backend/mlx/kv_cache/auxiliary_state.py:334`" in card
    )
    assert "`params.enable_mamba_extra_buffer` is true" in card


def test_site_counts_match_the_standard_library(mined_release, corpus: Path) -> None:
    """Every file the standard library parses is mined, with as many raise and
    assert sites as ``ast`` finds."""
    result, _ = mined_release(TAG)
    repo = git.Repo(corpus)
    by_path = {f.path: f for f in result.files}
    expected_raises = expected_asserts = 0
    for blob in repo.commit(TAG).tree.traverse():
        if not isinstance(blob, git.Blob) or not blob.path.endswith(".py"):
            continue
        text = decode_source(blob.data_stream.read()).text
        tree = ast.parse(text)
        raises = sum(isinstance(n, ast.Raise) for n in ast.walk(tree))
        asserts = sum(isinstance(n, ast.Assert) for n in ast.walk(tree))
        expected_raises += raises
        expected_asserts += asserts
        mined = by_path[blob.path]
        assert mined.status == "mined", (blob.path, mined.reason)
        got = [s.kind for s in mined.sites]
        assert (got.count("raise"), got.count("assert")) == (raises, asserts), blob.path
    counts = [s.kind for s in result.sites]
    assert (counts.count("raise"), counts.count("assert")) == (expected_raises, expected_asserts)
    assert (expected_raises, expected_asserts) == (8960, 9579)
