"""Build a local git repository of a package's release history from its PyPI wheels.

This machine (and CI) reaches package registries but not GitHub, so the repository that
raise-miner mines is rebuilt from what PyPI serves: one commit per release, whose tree is
the Python package inside that release's wheel, placed where it lives in the upstream
repository (``python/sglang/...`` for SGLang).

The result is byte-for-byte reproducible: the same versions and the same wheels give the
same commit SHAs on any machine, whatever the local git configuration, because every
input of a commit object is fixed:

* tree: exactly the package's text files from the wheel, bytes untouched, mode 100755 when
  the zip entry has an executable bit and 100644 otherwise;
* author and committer: ``raise-miner corpus <corpus@raise-miner.invalid>``, both dated
  the wheel's upload-time from the index (whole seconds, ``+0000``);
* message: ``<package> <version> from <wheel filename>\\n\\nsha256 <hex>\\n``;
* parent: the previous release's commit (the oldest release has none).

The repository is written with ``git fast-import`` (through GitPython) and is a normal,
non-bare repository: branch ``main`` holds the releases oldest first, each commit has a
lightweight tag ``v<version>``, and the work tree is checked out at the newest release.
Mining reads git objects, so the work tree is a convenience for people only.

Typical use::

    build = build_corpus(Path(".corpus/sglang"))
    build.tags[-1], build.commits[-1]   # ('v0.5.23', '<40 hex digits>')

This module decides what to do (reuse, append or build fresh) and orders the versions;
the work is done by :mod:`miner.corpus.pypi` (the index and the download cache),
:mod:`miner.corpus.wheels` (what a wheel contributes) and :mod:`miner.corpus.gitimport`
(the repository). Versions follow PEP 440 through :mod:`packaging.version`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from packaging.version import InvalidVersion, Version

from miner.corpus import gitimport
from miner.corpus.gitimport import ExistingRelease, tag_name
from miner.corpus.pypi import (
    DEFAULT_INDEX_URL,
    ReleaseWheel,
    choose_wheel,
    default_cache_dir,
    fetch_wheel,
    list_files,
)
from miner.errors import CorpusError

__all__ = [
    "DEFAULT_INDEX_URL",
    "DEFAULT_VERSIONS",
    "CorpusBuild",
    "CorpusError",
    "ReleaseWheel",
    "build_corpus",
    "default_cache_dir",
    "find_release_wheel",
]

DEFAULT_VERSIONS: tuple[str, ...] = (
    "0.5.16",
    "0.5.17",
    "0.5.18",
    "0.5.19",
    "0.5.20",
    "0.5.21",
    "0.5.22",
    "0.5.23",
)
"""The SGLang releases raise-miner mines by default, oldest first."""


@dataclass(frozen=True)
class CorpusBuild:
    """The outcome of :func:`build_corpus`.

    Attributes:
        path: the repository's work tree (its git directory is ``path / ".git"``).
        tags: ``"v<version>"`` for each requested version, oldest first.
        commits: the full 40-hex commit SHA of each tag, in the same order as ``tags``.
        reused: ``True`` when ``path`` already held every requested release and nothing
            was fetched or written.
    """

    path: Path
    tags: tuple[str, ...]
    commits: tuple[str, ...]
    reused: bool


Log = Callable[[str], None]
"""Called with one short progress line, e.g. ``"committed v0.5.19 (4,367 files)"``."""


def find_release_wheel(
    version: str, *, package: str = "sglang", index_url: str = DEFAULT_INDEX_URL
) -> ReleaseWheel:
    """Ask the index which wheel stands for ``package`` ``version`` (one HTTP request).

    The version must match exactly (``0.5.19`` never matches ``0.5.19.post1`` or
    ``0.5.19rc0``); sdists are never chosen. Among that version's wheels, a pure one
    (``*-none-any.whl``) wins; otherwise the lexicographically first file name, so the choice
    does not depend on the local Python or platform (SGLang's per-CPython wheels carry the
    same Python source).

    Args:
        version: a PEP 440 version such as ``"0.5.19"``.
        package: the project name on the index.
        index_url: a PEP 691 simple index root: ``https://...``, ``http://...``, or
            ``file:///dir`` whose ``<package>/`` folder holds an ``index.json``.

    Raises:
        CorpusError: the version is not PEP 440, the index cannot be reached or does not
            answer in PEP 691 JSON, the package is unknown, or the version has no wheel (the
            message lists nearby versions that have one).
    """
    wanted = _canonical_version(version)
    listing = list_files(package, index_url)
    return choose_wheel(listing, wanted, package, index_url)


def build_corpus(
    dest: Path,
    versions: Sequence[str] = DEFAULT_VERSIONS,
    *,
    package: str = "sglang",
    index_url: str = DEFAULT_INDEX_URL,
    cache_dir: Path | None = None,
    log: Log | None = None,
) -> CorpusBuild:
    """Build (or reuse, or extend) the release repository of ``package`` at ``dest``.

    Versions are sorted by PEP 440 order and deduplicated; each becomes one commit on
    ``main`` tagged ``v<version>`` whose tree is ``python/<package>/...`` from that
    release's wheel (every entry of the top-level package folder except ``.so``, ``.pyd``,
    ``.dylib``, ``.pyc`` and files with a NUL byte in their first 8 KiB; no ``.dist-info``).

    What happens depends on ``dest``:

    * absent or an empty folder: built from scratch in a sibling temporary folder that is
      renamed to ``dest`` only when complete, so an interrupted build leaves nothing there;
    * a corpus this function built for ``package`` that already tags every requested
      version (commit messages in the expected form, on ``main``): returned with
      ``reused=True``, without any network access;
    * such a corpus whose missing versions all come after its newest release, and whose
      existing releases were built from the wheels the index still picks: the missing
      releases are appended on ``main`` (refs move only once ``git fast-import`` succeeds);
    * any other corpus built by this function: rebuilt from scratch, then swapped in;
    * anything else (a user's folder or file): :class:`CorpusError`, and it is left alone.

    Args:
        dest: the repository's work tree path; its parent is created if needed.
        versions: PEP 440 versions, in any order.
        package: the project name on the index; its import folder is the name in lower
            case with ``-`` and ``.`` turned into ``_``.
        index_url: a PEP 691 simple index root (see :func:`find_release_wheel`).
        cache_dir: where wheels are kept (``<cache_dir>/wheels/<filename>``); default
            :func:`default_cache_dir`. A cached wheel whose sha256 matches the index is
            used without downloading it again.
        log: called with short progress lines, e.g. ``"committed v0.5.19 (4,367 files)"``.

    Returns:
        The :class:`CorpusBuild` for the requested versions.

    Raises:
        CorpusError: no versions or a non-PEP 440 one; ``dest`` is not a corpus; the index
            or a download cannot be reached; a version has no wheel; a download's size or
            sha256 differs from the index (the file is deleted); a wheel is not a valid zip
            or has unsafe paths; git fails.
    """
    say: Log = log if log is not None else _ignore
    wanted = _requested_versions(versions)
    dest = Path(dest).expanduser().absolute()
    cache = Path(cache_dir).expanduser().absolute() if cache_dir else default_cache_dir()

    existing = gitimport.inspect_dest(dest, package)
    if existing is not None and all(v in existing for v in wanted):
        say(f"reusing {dest}: {_span(wanted)} already built")
        return CorpusBuild(
            path=dest,
            tags=tuple(tag_name(v) for v in wanted),
            commits=tuple(existing[v].commit for v in wanted),
            reused=True,
        )

    say(f"listing {package} wheels on {index_url}")
    listing = list_files(package, index_url)
    wheels = {v: choose_wheel(listing, v, package, index_url) for v in wanted}

    if existing is not None and _can_append(existing, wanted, wheels):
        missing = [v for v in wanted if v not in existing]
        paths = [fetch_wheel(wheels[v], cache, say) for v in missing]
        tip = existing[max(existing, key=_version_key)].commit
        gitimport.append(dest, package, [wheels[v] for v in missing], paths, tip, say)
        say(f"appended {_span(missing)} to {dest}")
        shas = gitimport.resolve_tags(dest, wanted)
        return CorpusBuild(
            path=dest, tags=tuple(tag_name(v) for v in wanted), commits=shas, reused=False
        )

    paths = [fetch_wheel(wheels[v], cache, say) for v in wanted]
    gitimport.build_fresh(dest, package, [wheels[v] for v in wanted], paths, say)
    say(f"built {dest} at {tag_name(wanted[-1])}")
    shas = gitimport.resolve_tags(dest, wanted)
    return CorpusBuild(
        path=dest, tags=tuple(tag_name(v) for v in wanted), commits=shas, reused=False
    )


# ----------------------------------------------------------------------------- versions


def _canonical_version(version: str) -> str:
    """PEP 440 normal form of ``version`` (``0.5.2-RC1`` -> ``0.5.2rc1``), by
    :mod:`packaging.version`.

    Raises:
        CorpusError: ``version`` is not a PEP 440 version.
    """
    return str(_parsed(version))


def _version_key(version: str) -> Version:
    """A sort key following PEP 440 order: 1.0.dev0 < 1.0a1 < 1.0rc1 < 1.0 < 1.0.post1.

    Raises:
        CorpusError: ``version`` is not a PEP 440 version.
    """
    return _parsed(version)


def _parsed(version: str) -> Version:
    try:
        return Version(version)
    except (InvalidVersion, TypeError):
        raise CorpusError(
            f"invalid version {version!r}: expected a PEP 440 version such as 0.5.19"
        ) from None


def _requested_versions(versions: Sequence[str]) -> list[str]:
    if isinstance(versions, str):
        versions = [versions]
    canon = {_canonical_version(v) for v in versions}
    if not canon:
        raise CorpusError("no versions requested: pass at least one version such as 0.5.19")
    return sorted(canon, key=_version_key)


def _span(versions: Sequence[str]) -> str:
    first, last = tag_name(versions[0]), tag_name(versions[-1])
    return first if len(versions) == 1 else f"{first}..{last}"


# ------------------------------------------------------------------------------ decision


def _can_append(
    existing: dict[str, ExistingRelease], wanted: list[str], wheels: dict[str, ReleaseWheel]
) -> bool:
    """Whether the missing releases of ``wanted`` can go on top of ``existing``: every one
    is newer than its newest release, and each release it has was built from the wheel the
    index picks now."""
    if not existing:
        return False
    newest = max(_version_key(v) for v in existing)
    for version in wanted:
        have = existing.get(version)
        if have is None:
            if _version_key(version) <= newest:
                return False
        elif (have.filename, have.sha256) != (wheels[version].filename, wheels[version].sha256):
            return False
    return True


def _ignore(_line: str) -> None:
    return None
