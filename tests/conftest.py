"""Shared fixtures: small git repositories built in temporary folders."""

from __future__ import annotations

import os
import signal
import warnings
from collections.abc import Callable, Mapping
from pathlib import Path

import git
import pytest

_GIT_ENV = {
    "GIT_AUTHOR_NAME": "Fixture",
    "GIT_AUTHOR_EMAIL": "fixture@example.invalid",
    "GIT_COMMITTER_NAME": "Fixture",
    "GIT_COMMITTER_EMAIL": "fixture@example.invalid",
    "GIT_AUTHOR_DATE": "2026-01-02T03:04:05+00:00",
    "GIT_COMMITTER_DATE": "2026-01-02T03:04:05+00:00",
}

Files = Mapping[str, "str | bytes"]


def write_files(root: Path, files: Files) -> None:
    """Write ``files`` (path -> text or bytes) under ``root``; text is written
    byte for byte (no newline translation)."""
    for rel, content in files.items():
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        data = content.encode("utf-8") if isinstance(content, str) else content
        target.write_bytes(data)


def commit_all(repo: git.Repo, message: str, tag: str | None = None, *, stage: bool = True) -> str:
    """Stage everything in the work tree (deletions too; not with ``stage=False``),
    commit, optionally tag."""
    if stage:
        repo.git.add("-A")
    with repo.git.custom_environment(**_GIT_ENV):
        repo.git.commit("-q", "--allow-empty", "-m", message)
    if tag:
        repo.create_tag(tag)
    return repo.head.commit.hexsha


def pytest_configure(config: pytest.Config) -> None:
    """Ctrl-C reaches the tests as it reaches a user at a terminal. A shell
    that starts the suite in the background (``make test &``, a CI step run
    by a non-interactive shell) starts it with ``SIGINT`` ignored, and every
    process it starts inherits that: the tests that press Ctrl-C, in this
    process or in a ``miner`` they start, would see nothing happen. A
    handler (unlike ``SIG_IGN``) is not inherited across ``exec``: the
    children start with the default, as from a terminal."""
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


#: Session fixtures that mine real releases -> the group of the tests using
#: them: under pytest-xdist (``make test`` runs ``-n auto --dist loadgroup``)
#: each group runs in one worker, so each release is mined once per session.
RELEASE_GROUPS = {
    "history_site": "release-site",
    "analysed_release": "v0.5.19",
    "mined_release": "v0.5.19",
}


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the marks
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test joins one ``xdist_group``: that of the release fixture it
    uses (:data:`RELEASE_GROUPS`), else its module's (module fixtures are
    then built once too). Without pytest-xdist the marks do nothing."""
    for item in items:
        names = getattr(item, "fixturenames", ())
        module = item.nodeid.split("::")[0]
        group = next((g for f, g in RELEASE_GROUPS.items() if f in names), module)
        item.add_marker(pytest.mark.xdist_group(group))


def _built_once(tmp_path_factory: pytest.TempPathFactory, name: str) -> None:
    """Note that this worker builds the release fixture ``name``; warn when
    another worker of the same run built it already (its tests were not kept
    in one worker: pytest 9.2 drops the ``xdist_group`` marks, pytest-xdist
    issue 1386, hence the pin ``pytest<9.2``)."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return
    mark = tmp_path_factory.getbasetemp().parent / f"built-{name}"
    try:
        os.close(os.open(mark, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        warnings.warn(f"{name} was built by two workers: run with --dist loadgroup", stacklevel=2)


@pytest.fixture(autouse=True, scope="session")
def _private_cache(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Tests never read or write the user's cache (clones, blob cache). The
    workers of one pytest-xdist run share one (the blob cache is safe for
    several processes): a release one worker extracted is not extracted
    again by another."""
    if "RAISE_MINER_CACHE" not in os.environ:
        base = tmp_path_factory.getbasetemp()
        shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
        cache = shared / "miner-cache"
        cache.mkdir(exist_ok=True)
        os.environ["RAISE_MINER_CACHE"] = str(cache)


@pytest.fixture
def make_repo(tmp_path: Path) -> Callable[..., Path]:
    """``make_repo({"pkg/a.py": "..."}, tag="v1")`` -> path of a new git repository.

    Call the returned repository's ``commit_files`` via :func:`add_commit`
    for more history.
    """
    counter = {"n": 0}

    def factory(files: Files, *, tag: str | None = "v1", name: str | None = None) -> Path:
        counter["n"] += 1
        root = tmp_path / (name or f"repo{counter['n']}")
        root.mkdir()
        repo = git.Repo.init(root, initial_branch="main")
        with repo.config_writer() as cfg:
            cfg.set_value("core", "autocrlf", "false")
            cfg.set_value("commit", "gpgsign", "false")
        write_files(root, files)
        commit_all(repo, "fixture", tag)
        return root

    return factory


def add_commit(
    root: Path,
    files: Files,
    *,
    tag: str | None = None,
    remove: tuple[str, ...] = (),
    stage: bool = True,
) -> str:
    """Change files of a fixture repository and commit; returns the new SHA."""
    repo = git.Repo(root)
    for rel in remove:
        (root / rel).unlink()
    write_files(root, files)
    return commit_all(repo, "change", tag, stage=stage)


@pytest.fixture(scope="session")
def corpus() -> Path:
    """The SGLang release repository built from PyPI (``make corpus``)."""
    value = os.environ.get("RAISE_MINER_CORPUS")
    if not value:
        pytest.skip("RAISE_MINER_CORPUS is not set (make test sets it after make corpus)")
    path = Path(value)
    if not (path / ".git").exists():
        pytest.skip(f"{path}: no release repository there; run make corpus")
    return path


@pytest.fixture(scope="session")
def analysed_release(corpus: Path, tmp_path_factory: pytest.TempPathFactory):
    """``analysed_release("v0.5.19")`` -> (Mined, output folder): the release
    mined, analysed and published with its HTML site ONCE per session; every
    integration test of a release shares it (none mines it again)."""
    from miner import pipeline
    from miner.mining.extraction import MineOptions

    done: dict[str, tuple[pipeline.Mined, Path]] = {}

    def get(tag: str) -> tuple[pipeline.Mined, Path]:
        if tag not in done:
            _built_once(tmp_path_factory, f"analysed-{tag}")
            # with origins, as `miner mine` and `make demo` run (the findings need them)
            mined = pipeline.mine_and_analyze(
                str(corpus),
                tag,
                slug="sgl-project/sglang",
                link_ref=tag,
                options=MineOptions(origins=True),
            )
            out = tmp_path_factory.mktemp(f"out-{tag}")
            pipeline.publish(mined, out, site=True)
            done[tag] = (mined, out)
        return done[tag]

    return get


@pytest.fixture(scope="session")
def mined_release(analysed_release):
    """``mined_release("v0.5.19")`` -> (MineResult, output folder), of :func:`analysed_release`."""
    from miner.model import MineResult

    def get(tag: str) -> tuple[MineResult, Path]:
        mined, out = analysed_release(tag)
        return mined.result, out

    return get


#: The releases of the session's release site (:func:`history_site`).
HISTORY_SITE_TAGS = ("v0.5.16", "v0.5.17", "v0.5.18", "v0.5.19")


@pytest.fixture(scope="session")
def history_site(corpus: Path, tmp_path_factory: pytest.TempPathFactory):
    """(folder, run) of the release site of :data:`HISTORY_SITE_TAGS`
    (``miner history``'s output: records, histories, diffs and the HTML site
    of every release; the run is what ``document_releases`` returned),
    written ONCE per session and shared by the release-site and lookup tests."""
    from miner import pipeline

    _built_once(tmp_path_factory, "history-site")
    out = tmp_path_factory.mktemp("history") / "site"
    tags = list(HISTORY_SITE_TAGS)
    run = pipeline.document_releases(str(corpus), tags, out, slug="sgl-project/sglang")
    return out, run
