"""A small fixture repository laid out like SGLang, shared by the lookup, site
and browser tests: real-looking templates, a dynamic message, an assert, and
messages holding HTML and ``</script>`` that must render as text everywhere."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import git
from conftest import commit_all, write_files

from miner.model import MineResult
from miner.pipeline import Mined, mine_and_analyze
from miner.publish.bundles import read_record, site_ids
from miner.publish.cards import card_ref
from miner.publish.html import write_site
from miner.publish.records import manifest_json

REGISTRY = '''\
import os


def _create_unified_radix_cache(ctx, server_args, params):
    """Initialize a UnifiedRadixCache with proper components."""
    if get_disagg().disaggregation_decode_retraction_backup == "host_pool":
        if ctx.is_hybrid_ssm:
            raise ValueError("Host-pool retraction does not support Mamba models.")
        if ctx.is_hybrid_swa and ctx.full_tokens_per_layer == 0:
            raise ValueError("Host-pool retraction does not support pure-SWA models.")
    return build(ctx)
'''

AUXILIARY = '''\
class MlxAuxiliaryStateComponent(MambaComponent):
    """Unified radix component for MLX native auxiliary-state snapshots."""

    def __init__(self, cache, params):
        if params.enable_mamba_extra_buffer:
            raise NotImplementedError(
                "MLX auxiliary-state radix cache does not support "
                "enable_mamba_extra_buffer yet."
            )
        pool = getattr(cache.req_to_token_pool, "auxiliary_state_pool", None)
        if not isinstance(pool, MlxAuxiliaryStatePool):
            raise TypeError(
                "MlxAuxiliaryStateComponent requires MlxAuxiliaryStatePool, "
                f"got {type(pool)}"
            )
'''

SERVER_ARGS = """\
def check(args, name, msg):
    if args.tp_size <= 0:
        raise ValueError(f"Invalid tp_size {args.tp_size}: must be a positive integer")
    if args.model_path is None:
        raise ValueError(f"Model {name!r} not found in {args.model_dir}")
    assert args.page_size % 16 == 0, f"page_size must be a multiple of 16, got {args.page_size}"
    if args.dynamic:
        raise RuntimeError(msg)
    raise KeyError(f"{name}")
"""

XSS = """\
def render_tag(tag):
    if tag == "script":
        raise ValueError("Refusing tag <script>alert(1)</script> & \\"quotes\\" 'single'")
    raise TypeError(f"Cannot render <b>{tag}</b> inside </script><script>alert(2)</script>")
"""

FILES = {
    "python/sglang/srt/mem_cache/registry.py": REGISTRY,
    "python/sglang/srt/hardware_backend/mlx/kv_cache/auxiliary_state.py": AUXILIARY,
    "python/sglang/srt/server_args.py": SERVER_ARGS,
    "python/sglang/srt/utils/html_tags.py": XSS,
}

#: The host-pool error of the fixture, as an installed sglang logs it.
HOST_POOL_TRACEBACK = """\
[2026-09-10 12:00:00 TP0] Scheduler hit an exception: Traceback (most recent call last):
  File "/usr/lib/python3.11/site-packages/sglang/srt/managers/scheduler.py", line 3000, in run
    scheduler = Scheduler(server_args, port_args, gpu_id, tp_rank)
  File "/usr/lib/python3.11/site-packages/sglang/srt/mem_cache/registry.py", line 8, in _create
    raise ValueError("Host-pool retraction does not support Mamba models.")
ValueError: Host-pool retraction does not support Mamba models.
"""


#: The literal runtime message of the XSS fixture (what ``str(exc)`` gives).
XSS_MESSAGE = "Refusing tag <script>alert(1)</script> & \"quotes\" 'single'"


def create_sample(root: Path) -> Path:
    """The fixture repository in ``root`` (a new folder), tagged ``v1``."""
    root.mkdir(parents=True)
    repo = git.Repo.init(root, initial_branch="main")
    with repo.config_writer() as cfg:
        cfg.set_value("core", "autocrlf", "false")
        cfg.set_value("commit", "gpgsign", "false")
    write_files(root, FILES)
    commit_all(repo, "fixture", "v1")
    return root


def mine_sample(make_repo: Callable[..., Path]) -> tuple[Path, Mined]:
    """Build the fixture repository (tag ``v1``) and mine it; -> (repo, mined)."""
    repo = make_repo(FILES, tag="v1", name="sglang")
    return repo, mine_and_analyze(str(repo), "v1", slug="sgl-project/sglang", link_ref="v1")


def publish_site(
    mined: Mined, dest: Path, *, analyses: Any = None, jobs: int | None = None
) -> dict[str, int]:
    """The HTML site of ``mined`` in ``dest`` (its own analyses unless given)."""
    counts = manifest_json(mined.result)["counts"]
    return write_site(
        mined.result, dest, mined.analyses if analyses is None else analyses, counts, jobs=jobs
    )


def error_for(result: MineResult, path_tail: str, line: int) -> str:
    """The error id of the site at ``...path_tail:line``."""
    for site in result.sites:
        if site.path.endswith(path_tail) and site.line == line:
            return site.error_id
    raise AssertionError(f"no site at {path_tail}:{line}")


def documented_at(out: Path, error_id: str, suffix: str = ".md") -> str:
    """Where the mined folder (``.md``) or site (``.html``) ``out`` documents an
    error, from its JSON record: ``errors/<id>.md`` or ``<audience>/<page>.md#<id>``
    (a site's record is in its module's bundle, found through ``api/ids.json``)."""
    path = out / "api" / "errors" / f"{error_id}.json"
    if path.is_file():
        record = json.loads(path.read_text())
    else:
        record, _ = read_record(out, error_id, site_ids(out)[error_id])
    return card_ref(error_id, record["module"], record["audience"], suffix)


def md_card(out: Path, error_id: str) -> str:
    """The Markdown documenting an error in the mined folder ``out``: its card,
    or its entry on its grouped page (from its anchor to the next one)."""
    path, _, anchor = documented_at(out, error_id).partition("#")
    text = (out / path).read_text()
    if not anchor:
        return text
    start = text.index(f'<a id="{anchor}"></a>')
    end = text.find('<a id="', start + 1)
    return text[start : end if end >= 0 else len(text)]


#: Three tiny releases of ``pkg/server_args.py`` for the release-site tests:
#: v2 rewords the ``--tp-size`` error and drops the ``--think-end-token`` one
#: (retired in v2); v3 moves the ``--tp-size`` check into another function.
RELEASE_FILES = {
    "v1": """\
def check(args):
    if args.tp_size < 1:
        raise ValueError("--tp-size must be positive")
    if args.think_end_token is None:
        raise ValueError("--think-end-token must encode to exactly one token <b>here</b>")
    assert args.page_size > 0
""",
    "v2": """\
def check(args):
    if args.tp_size < 1:
        raise ValueError("--tp-size must be a positive integer")
    assert args.page_size > 0
""",
    "v3": """\
def check(args):
    validate(args)
    assert args.page_size > 0


def validate(args):
    if args.tp_size < 1:
        raise ValueError("--tp-size must be a positive integer")
""",
}
#: The message of the error v1 raises and v2 no longer does.
RETIRED_MESSAGE = "--think-end-token must encode to exactly one token <b>here</b>"


def add_releases(root: Path, add_commit: Callable[..., str]) -> list[str]:
    """Commit and tag the releases of :data:`RELEASE_FILES` after the first
    in the repository ``root`` (made with its ``v1``); returns every tag."""
    tags = list(RELEASE_FILES)
    for tag in tags[1:]:
        add_commit(root, {"pkg/server_args.py": RELEASE_FILES[tag]}, tag=tag)
    return tags


def create_releases(root: Path) -> Path:
    """The repository of :data:`RELEASE_FILES` in ``root`` (a new folder),
    tagged ``v1``, ``v2``, ``v3`` (for module-scoped fixtures)."""
    from conftest import add_commit

    root.mkdir(parents=True)
    repo = git.Repo.init(root, initial_branch="main")
    with repo.config_writer() as cfg:
        cfg.set_value("core", "autocrlf", "false")
        cfg.set_value("commit", "gpgsign", "false")
    write_files(root, {"pkg/server_args.py": RELEASE_FILES["v1"]})
    commit_all(repo, "fixture", "v1")
    add_releases(root, add_commit)
    return root
