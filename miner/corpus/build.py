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

Only the standard library and GitPython are used: urllib for the PEP 691 JSON index,
zipfile for wheels, hashlib for sha256 checks.
"""

from __future__ import annotations

import calendar
import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
import zipfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import git
from packaging.version import InvalidVersion, Version

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

DEFAULT_INDEX_URL = "https://pypi.org/simple"
"""PyPI's simple index; it answers in JSON (PEP 691) when asked to."""

IDENTITY_NAME = "raise-miner corpus"
IDENTITY_EMAIL = "corpus@raise-miner.invalid"

_SIMPLE_JSON = "application/vnd.pypi.simple.v1+json"
_USER_AGENT = "raise-miner-corpus/1 (+python urllib)"
_TIMEOUT_S = 60.0
# Pauses before the second and third attempt of a request; tests set this to zeros.
_RETRY_DELAYS_S: tuple[float, ...] = (1.0, 4.0)
_CHUNK = 1 << 20
_NUL_PROBE = 8192
_BINARY_SUFFIXES = (".so", ".pyd", ".dylib", ".pyc")
_SONAME_RE = re.compile(r"\.so(\.\d+)+$")
_MARKER_KEY = "raise-miner.corpus"
_PACKAGE_KEY = "raise-miner.package"
_MARKER_VALUE = "1"
_BRANCH = "main"
# Passed as `git -c` to every command: nothing from the user's setup may alter bytes or sign.
_GIT_C_OPTIONS = (
    "core.autocrlf=false",
    "core.eol=lf",
    "core.safecrlf=false",
    "core.symlinks=true",
    "core.fsmonitor=false",
    "core.hooksPath=" + os.devnull,
    "commit.gpgSign=false",
    "tag.gpgSign=false",
    "gc.auto=0",
    "init.defaultBranch=" + _BRANCH,
    "advice.detachedHead=false",
)
# Written to the corpus's own .git/config, so later commands by people behave the same.
_LOCAL_CONFIG = (
    ("core.autocrlf", "false"),
    ("core.eol", "lf"),
    ("commit.gpgSign", "false"),
    ("gc.auto", "0"),
)


@dataclass(frozen=True)
class ReleaseWheel:
    """One wheel file of one release, as the package index lists it.

    Attributes:
        version: the release's version, normalised (PEP 440), e.g. ``"0.5.19"``.
        filename: the wheel's file name, e.g. ``"sglang-0.5.19-py3-none-any.whl"``.
        url: absolute URL to download it from (``https://`` or ``file://``).
        sha256: the index's sha256 of the file, 64 lowercase hex digits.
        size: file size in bytes, or ``None`` when the index does not give it.
        upload_time: when it was uploaded, ISO 8601 in UTC as the index gave it (PEP 700),
            e.g. ``"2026-09-04T23:10:25.580351Z"``.
    """

    version: str
    filename: str
    url: str
    sha256: str
    size: int | None
    upload_time: str

    @property
    def upload_epoch(self) -> int:
        """``upload_time`` as whole seconds since 1970-01-01 UTC (fraction dropped)."""
        return _parse_upload_time(self.upload_time)


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


def default_cache_dir() -> Path:
    """Where downloaded wheels are kept between builds (under ``wheels/`` inside it).

    Returns ``$RAISE_MINER_CACHE`` if set, else ``$XDG_CACHE_HOME/raise-miner``, else
    ``~/.cache/raise-miner``. The folder is not created here.
    """
    explicit = os.environ.get("RAISE_MINER_CACHE")
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    if xdg:
        return Path(xdg).expanduser() / "raise-miner"
    return Path.home() / ".cache" / "raise-miner"


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
    listing = _list_files(package, index_url)
    return _choose_wheel(listing, wanted, package, index_url)


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

    existing = _inspect_dest(dest, package)
    if existing is not None and all(v in existing for v in wanted):
        say(f"reusing {dest}: {_span(wanted)} already built")
        return CorpusBuild(
            path=dest,
            tags=tuple(_tag(v) for v in wanted),
            commits=tuple(existing[v].commit for v in wanted),
            reused=True,
        )

    say(f"listing {package} wheels on {index_url}")
    listing = _list_files(package, index_url)
    wheels = {v: _choose_wheel(listing, v, package, index_url) for v in wanted}

    if existing is not None and _can_append(existing, wanted, wheels):
        missing = [v for v in wanted if v not in existing]
        paths = [_fetch_wheel(wheels[v], cache, say) for v in missing]
        tip = existing[max(existing, key=_version_key)].commit
        _append(dest, package, [wheels[v] for v in missing], paths, tip, say)
        shas = _resolve_tags(dest, wanted)
        return CorpusBuild(
            path=dest, tags=tuple(_tag(v) for v in wanted), commits=shas, reused=False
        )

    paths = [_fetch_wheel(wheels[v], cache, say) for v in wanted]
    _build_fresh(dest, package, [wheels[v] for v in wanted], paths, say)
    shas = _resolve_tags(dest, wanted)
    return CorpusBuild(path=dest, tags=tuple(_tag(v) for v in wanted), commits=shas, reused=False)


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


def _valid_version(text: str) -> str | None:
    """The canonical form of ``text``, or None when it is not a PEP 440 version."""
    try:
        return str(Version(text))
    except InvalidVersion:
        return None


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


def _tag(version: str) -> str:
    return f"v{version}"


def _span(versions: Sequence[str]) -> str:
    return _tag(versions[0]) if len(versions) == 1 else f"{_tag(versions[0])}..{_tag(versions[-1])}"


# -------------------------------------------------------------------------------- index


def _normalize_project(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _import_dir(package: str) -> str:
    return re.sub(r"[-.]+", "_", package).lower()


@dataclass(frozen=True)
class _Listing:
    wheels: dict[str, list[ReleaseWheel]]  # canonical version -> its wheels
    sdist_versions: frozenset[str]
    page_url: str


class _FetchError(Exception):
    def __init__(self, reason: str, status: int | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.status = status


def _retrying(action: Callable[[], Any]) -> Any:
    """Run ``action``; retry on network errors, timeouts, HTTP 429 and 5xx."""
    attempt = 0
    while True:
        try:
            return action()
        except _FetchError as exc:
            retryable = exc.status is None or exc.status == 429 or exc.status >= 500
            if not retryable or attempt >= len(_RETRY_DELAYS_S):
                raise
            time.sleep(_RETRY_DELAYS_S[attempt])
            attempt += 1


def _open(url: str, accept: str | None) -> IO[bytes]:
    """Open ``url`` for reading; errors become :class:`_FetchError`."""
    headers = {"User-Agent": _USER_AGENT}
    if accept:
        headers["Accept"] = accept
    try:
        response: IO[bytes] = urllib.request.urlopen(
            urllib.request.Request(url, headers=headers), timeout=_TIMEOUT_S
        )
    except urllib.error.HTTPError as exc:
        raise _FetchError(f"HTTP {exc.code} {exc.reason}", exc.code) from None
    except urllib.error.URLError as exc:
        reason = exc.reason
        if isinstance(reason, OSError) and reason.strerror:
            text = reason.strerror
        else:
            text = str(reason)
        status = 404 if isinstance(reason, FileNotFoundError) else None
        raise _FetchError(text, status) from None
    except (OSError, ValueError) as exc:
        raise _FetchError(str(exc) or type(exc).__name__) from None
    return response


def _read_url(url: str, accept: str | None) -> bytes:
    def once() -> bytes:
        parsed = urllib.parse.urlsplit(url)
        if parsed.scheme == "file":
            path = Path(urllib.request.url2pathname(parsed.path))
            if path.is_dir():
                path = path / "index.json"
            try:
                return path.read_bytes()
            except OSError as exc:
                raise _FetchError(exc.strerror or str(exc), 404) from None
        try:
            with _open(url, accept) as response:
                return response.read()
        except _FetchError:
            raise
        except OSError as exc:  # connection reset or timeout while reading the body
            raise _FetchError(str(exc) or type(exc).__name__) from None

    data: bytes = _retrying(once)
    return data


def _list_files(package: str, index_url: str) -> _Listing:
    """Fetch and parse ``{index_url}/{package}/`` (PEP 691 JSON, PEP 700 fields)."""
    project = _normalize_project(package)
    page_url = index_url.rstrip("/") + f"/{project}/"
    try:
        body = _read_url(page_url, _SIMPLE_JSON)
    except _FetchError as exc:
        if exc.status == 404:
            raise CorpusError(
                f"{index_url} has no project {package!r} ({exc.reason}); "
                "check the package name or pass --index-url"
            ) from None
        raise CorpusError(
            f"cannot reach {index_url} to list {package} wheels: {exc.reason}; "
            "check network access to the package index or pass --index-url"
        ) from None
    try:
        doc = json.loads(body)
        files = doc["files"]
        if not isinstance(files, list):
            raise TypeError("'files' is not a list")
    except (ValueError, KeyError, TypeError) as exc:
        raise CorpusError(
            f"{page_url} did not answer in PEP 691 JSON ({type(exc).__name__}: {exc}); "
            f"pass a PEP 691 simple index such as {DEFAULT_INDEX_URL}"
        ) from None

    wheels: dict[str, list[ReleaseWheel]] = {}
    sdists: set[str] = set()
    for entry in files:
        if not isinstance(entry, dict):
            continue
        filename = entry.get("filename")
        if not isinstance(filename, str):
            continue
        if not filename.endswith(".whl"):
            sdist = _sdist_version(filename, project)
            if sdist:
                sdists.add(sdist)
            continue
        version = _wheel_version(filename, project)
        if version is None:
            continue
        wheels.setdefault(version, []).append(_release_wheel(entry, version, page_url))
    return _Listing(wheels=wheels, sdist_versions=frozenset(sdists), page_url=page_url)


def _wheel_version(filename: str, project: str) -> str | None:
    """Canonical version of a wheel file of ``project``, or None if it is not one."""
    parts = filename[: -len(".whl")].split("-")
    if len(parts) not in (5, 6) or _normalize_project(parts[0]) != project:
        return None
    return _valid_version(parts[1])


def _sdist_version(filename: str, project: str) -> str | None:
    m = re.match(r"^(.+)-([^-]+)\.(?:tar\.gz|zip|tar\.bz2|tgz)$", filename)
    if not m or _normalize_project(m[1]) != project:
        return None
    return _valid_version(m[2])


def _release_wheel(entry: dict[str, Any], version: str, page_url: str) -> ReleaseWheel:
    filename = entry["filename"]
    url = entry.get("url")
    hashes = entry.get("hashes")
    sha256 = hashes.get("sha256") if isinstance(hashes, dict) else None
    if not isinstance(url, str) or not url:
        raise CorpusError(f"{page_url} lists {filename} without a url; the index is broken")
    if not isinstance(sha256, str) or not re.fullmatch(r"[0-9a-fA-F]{64}", sha256):
        raise CorpusError(
            f"{page_url} gives no sha256 for {filename}; use an index that publishes sha256 hashes"
        )
    upload_time = entry.get("upload-time")
    if not isinstance(upload_time, str) or _try_parse_upload_time(upload_time) is None:
        raise CorpusError(
            f"{page_url} gives no valid upload-time for {filename} (PEP 700); use an index "
            f"that serves it, such as {DEFAULT_INDEX_URL}"
        )
    size = entry.get("size")
    return ReleaseWheel(
        version=version,
        filename=filename,
        url=urllib.parse.urljoin(page_url, url.split("#", 1)[0]),
        sha256=sha256.lower(),
        size=size if isinstance(size, int) and not isinstance(size, bool) else None,
        upload_time=upload_time,
    )


_UPLOAD_TIME_RE = re.compile(
    r"^(\d{4})-(\d\d)-(\d\d)[T ](\d\d):(\d\d):(\d\d)(?:\.\d+)?(Z|[+-]\d\d:?\d\d)$"
)


def _try_parse_upload_time(text: str) -> int | None:
    m = _UPLOAD_TIME_RE.match(text.strip())
    if not m:
        return None
    year, month, day, hour, minute, second = (int(g) for g in m.groups()[:6])
    try:
        epoch = calendar.timegm((year, month, day, hour, minute, second, 0, 0, 0))
    except (ValueError, OverflowError):
        return None
    zone = m[7]
    if zone != "Z":
        sign = 1 if zone[0] == "+" else -1
        digits = zone[1:].replace(":", "")
        epoch -= sign * (int(digits[:2]) * 3600 + int(digits[2:]) * 60)
    return epoch


def _parse_upload_time(text: str) -> int:
    epoch = _try_parse_upload_time(text)
    if epoch is None:
        raise CorpusError(
            f"invalid upload-time {text!r}: expected ISO 8601 such as 2026-09-04T23:10:25Z"
        )
    return epoch


def _choose_wheel(listing: _Listing, version: str, package: str, index_url: str) -> ReleaseWheel:
    candidates = listing.wheels.get(version, [])
    if not candidates:
        raise CorpusError(_no_wheel_message(listing, version, package, index_url))
    pure = [w for w in candidates if w.filename.endswith("-none-any.whl")]
    return min(pure or candidates, key=lambda w: w.filename)


def _no_wheel_message(listing: _Listing, version: str, package: str, index_url: str) -> str:
    available = sorted(listing.wheels, key=_version_key)
    if version in listing.sdist_versions:
        head = f"{package} {version} has only an sdist, no wheel, on {index_url}"
    else:
        head = f"{package} {version} has no wheel on {index_url}"
    if not available:
        return f"{head}, and no other version has one either; check the package name"
    key = _version_key(version)
    below = [v for v in available if _version_key(v) < key][-3:]
    above = [v for v in available if _version_key(v) > key][:3]
    nearby = ", ".join(below + above)
    return f"{head}; nearby versions with wheels: {nearby}; request one of those instead"


# ---------------------------------------------------------------------------- downloads


def _human_size(size: int | None) -> str:
    return "size unknown" if size is None else f"{size / 1e6:.1f} MB"


def _sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(_CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _fetch_wheel(wheel: ReleaseWheel, cache_dir: Path, say: Log) -> Path:
    """Return the path of ``wheel`` in ``cache_dir/wheels``, downloading it if needed."""
    name = wheel.filename
    if "/" in name or "\\" in name or name.startswith(".") or name in ("", ".."):
        raise CorpusError(f"refusing wheel file name {name!r} from the index: not a plain name")
    wheels_dir = cache_dir / "wheels"
    target = wheels_dir / name
    if target.is_file():
        if _sha256_file(target) == wheel.sha256 and (
            wheel.size is None or target.stat().st_size == wheel.size
        ):
            say(f"using cached {name} ({_human_size(wheel.size)})")
            return target
        say(f"cached {name} does not match the index; downloading it again")
        target.unlink()
    try:
        wheels_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CorpusError(
            f"cannot create wheel cache {wheels_dir}: {exc.strerror or exc}; "
            "pass another cache_dir or set RAISE_MINER_CACHE"
        ) from None

    say(f"downloading {name} ({_human_size(wheel.size)})")
    fd, tmp_name = tempfile.mkstemp(prefix=f".{name}.", suffix=".part", dir=wheels_dir)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as out:

            def once() -> tuple[str, int]:
                out.seek(0)
                out.truncate()
                digest = hashlib.sha256()
                size = 0
                try:
                    with _open(wheel.url, None) as response:
                        for chunk in iter(lambda: response.read(_CHUNK), b""):
                            digest.update(chunk)
                            out.write(chunk)
                            size += len(chunk)
                except _FetchError:
                    raise
                except OSError as exc:
                    raise _FetchError(str(exc) or type(exc).__name__) from None
                return digest.hexdigest(), size

            try:
                got_sha, got_size = _retrying(once)
            except _FetchError as exc:
                raise CorpusError(
                    f"cannot download {name} from {wheel.url}: {exc.reason}; "
                    "check network access to the package index and retry"
                ) from None
        if got_sha != wheel.sha256 or (wheel.size is not None and got_size != wheel.size):
            raise CorpusError(
                f"{name} failed its check: index says sha256 {wheel.sha256} "
                f"({wheel.size} bytes), download has sha256 {got_sha} ({got_size} bytes); "
                "the file was deleted, retry later or check the index"
            )
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    return target


# ------------------------------------------------------------------------------ wheels


@dataclass(frozen=True)
class _Entry:
    path: bytes  # repository path, UTF-8
    mode: bytes  # b"100644" or b"100755"
    data: bytes


def _is_binary_name(name: str) -> bool:
    lower = name.lower()
    return lower.endswith(_BINARY_SUFFIXES) or _SONAME_RE.search(lower) is not None


def _wheel_entries(wheel: ReleaseWheel, path: Path, package: str) -> Iterator[_Entry]:
    """Yield the files the repository keeps from ``path``, sorted by repository path."""
    top = _import_dir(package)
    prefix = top + "/"
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise CorpusError(
            f"{wheel.filename} ({path}) is not a readable wheel: {exc}; delete it and retry"
        ) from None
    with archive:
        infos: dict[str, zipfile.ZipInfo] = {}
        for info in archive.infolist():
            name = info.filename
            if not name.startswith(prefix) or name.endswith("/"):
                continue
            parts = name.split("/")
            if any(p in ("", ".", "..") or "\\" in p for p in parts):
                raise CorpusError(
                    f"{wheel.filename} has an unsafe entry {name!r}; refusing to import it"
                )
            infos[name] = info  # a duplicate name: the last entry wins, as when unpacking
        for name in sorted(infos):
            if _is_binary_name(name):
                continue
            info = infos[name]
            try:
                data = archive.read(info)
            except (zipfile.BadZipFile, OSError, RuntimeError, ValueError) as exc:
                raise CorpusError(
                    f"{wheel.filename} ({path}): cannot read {name}: {exc}; delete it and retry"
                ) from None
            if b"\0" in data[:_NUL_PROBE]:
                continue
            executable = (info.external_attr >> 16) & 0o111
            yield _Entry(
                path=f"python/{name}".encode(),
                mode=b"100755" if executable else b"100644",
                data=data,
            )


# --------------------------------------------------------------------------------- git


def _git_env(root: Path) -> dict[str, str]:
    """Environment for git commands on the corpus at ``root``.

    Inherited ``GIT_DIR``/``GIT_INDEX_FILE``/... (as set inside git hooks) and the user's
    system and global config are overridden; GitPython cannot unset variables, so each one
    that could redirect git gets an explicit value. ``GIT_WORK_TREE`` is the parent of
    ``GIT_DIR``, so ``git init`` records no ``core.worktree`` (the corpus can be moved).
    """
    git_dir = root / ".git"
    return {
        "GIT_DIR": str(git_dir),
        "GIT_WORK_TREE": str(root),
        "GIT_INDEX_FILE": str(git_dir / "index"),
        "GIT_OBJECT_DIRECTORY": str(git_dir / "objects"),
        "GIT_ALTERNATE_OBJECT_DIRECTORIES": "",
        "GIT_NAMESPACE": "",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_PARAMETERS": "",
        "GIT_CONFIG_COUNT": "0",
        "GIT_NO_REPLACE_OBJECTS": "1",
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_AUTHOR_NAME": IDENTITY_NAME,
        "GIT_AUTHOR_EMAIL": IDENTITY_EMAIL,
        "GIT_COMMITTER_NAME": IDENTITY_NAME,
        "GIT_COMMITTER_EMAIL": IDENTITY_EMAIL,
        "TZ": "UTC",
    }


def _git_cmd(root: Path) -> git.Git:
    cmd = git.Git(str(root))
    cmd.update_environment(**_git_env(root))
    return cmd


def _git_argv(cmd: git.Git, *args: str) -> list[str]:
    argv = [str(cmd.GIT_PYTHON_GIT_EXECUTABLE or "git")]
    for option in _GIT_C_OPTIONS:
        argv += ["-c", option]
    return argv + list(args)


def _run(cmd: git.Git, *args: str) -> str:
    """Run ``git <args>`` with the corpus's fixed options; raise CorpusError on failure."""
    try:
        out: str = cmd.execute(_git_argv(cmd, *args))
    except git.GitCommandError as exc:
        stderr = " ".join(str(exc.stderr).split())
        raise CorpusError(f"git {args[0]} failed in {cmd.working_dir}: {stderr}") from None
    except git.GitCommandNotFound:
        raise CorpusError("git is not installed or not on PATH; install git") from None
    return out


@dataclass(frozen=True)
class _Existing:
    commit: str
    filename: str
    sha256: str


_MESSAGE_RE = re.compile(r"\A(\S+) (\S+) from (\S+\.whl)\n\nsha256 ([0-9a-f]{64})\n?\Z")


def _message(package: str, wheel: ReleaseWheel) -> bytes:
    return f"{package} {wheel.version} from {wheel.filename}\n\nsha256 {wheel.sha256}\n".encode()


def _is_empty_dir(path: Path) -> bool:
    return path.is_dir() and not path.is_symlink() and not any(path.iterdir())


def _inspect_dest(dest: Path, package: str) -> dict[str, _Existing] | None:
    """Releases already in the corpus at ``dest`` (version -> commit), None if none.

    Raises CorpusError when ``dest`` exists and is not a corpus built by this module.
    """
    if not dest.exists() and not dest.is_symlink():
        return None
    if _is_empty_dir(dest):
        return None
    marker = None
    if dest.is_dir() and not dest.is_symlink() and (dest / ".git" / "config").is_file():
        try:
            marker = _config_get(dest, _MARKER_KEY)
        except CorpusError:
            marker = None
    if marker != _MARKER_VALUE:
        raise CorpusError(
            f"{dest} exists and is not a corpus built by raise-miner (no {_MARKER_KEY} "
            "marker in its .git/config); pass another destination or move that folder away"
        )
    if _config_get(dest, _PACKAGE_KEY) != package:
        return {}  # ours, but for another package: rebuild
    cmd = _git_cmd(dest)
    try:
        refs = _run(cmd, "for-each-ref", "--format=%(refname:strip=2) %(objectname)", "refs/tags/")
        history = _run(cmd, "log", "--format=%x1e%H%x1f%B", f"refs/heads/{_BRANCH}", "--")
    except CorpusError:
        return {}  # e.g. no main branch: rebuild
    messages: dict[str, str] = {}
    for record in history.split("\x1e"):
        if "\x1f" in record:
            sha, body = record.split("\x1f", 1)
            messages[sha.strip()] = body.strip("\n") + "\n"
    found: dict[str, _Existing] = {}
    for line in refs.splitlines():
        tag, _, sha = line.partition(" ")
        m = _MESSAGE_RE.match(messages.get(sha, ""))
        if not tag.startswith("v") or m is None:
            continue
        if m[1] == package and m[2] == tag[1:]:
            found[tag[1:]] = _Existing(commit=sha, filename=m[3], sha256=m[4])
    return found


def _config_get(root: Path, key: str) -> str | None:
    cmd = _git_cmd(root)
    try:
        value: str = cmd.execute(_git_argv(cmd, "config", "--local", "--get", key))
    except git.GitCommandError:
        return None
    except git.GitCommandNotFound:
        raise CorpusError("git is not installed or not on PATH; install git") from None
    return value.strip()


def _can_append(
    existing: dict[str, _Existing], wanted: list[str], wheels: dict[str, ReleaseWheel]
) -> bool:
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


def _quote_path(path: bytes) -> bytes:
    """C-style quote a path for fast-import (always quoted, so any byte is safe)."""
    out = bytearray(b'"')
    for byte in path:
        if byte in (0x22, 0x5C):
            out += b"\\" + bytes([byte])
        elif byte == 0x0A:
            out += b"\\n"
        elif byte < 0x20 or byte == 0x7F:
            out += b"\\%03o" % byte
        else:
            out.append(byte)
    return bytes(out + b'"')


def _fast_import(
    root: Path,
    package: str,
    wheels: list[ReleaseWheel],
    paths: list[Path],
    parent: str | None,
    say: Log,
) -> None:
    """Stream one commit per wheel onto ``main`` (after ``parent``) plus its tag."""
    cmd = _git_cmd(root)
    argv = _git_argv(cmd, "fast-import", "--quiet", "--done", "--date-format=raw")
    # Keep the AutoInterrupt referenced: GitPython kills the process when it is collected.
    handle = cmd.execute(argv, istream=subprocess.PIPE, as_process=True)
    proc = handle.proc
    assert proc is not None and proc.stdin is not None
    stdin = proc.stdin
    ident = f"{IDENTITY_NAME} <{IDENTITY_EMAIL}>".encode()
    ref = f"refs/heads/{_BRANCH}".encode()
    try:
        for mark, (wheel, path) in enumerate(zip(wheels, paths, strict=True), start=1):
            when = f"{wheel.upload_epoch} +0000".encode()
            message = _message(package, wheel)
            stdin.write(b"commit %s\nmark :%d\n" % (ref, mark))
            stdin.write(b"author %s %s\ncommitter %s %s\n" % (ident, when, ident, when))
            stdin.write(b"data %d\n%s\n" % (len(message), message))
            if mark > 1:
                stdin.write(b"from :%d\n" % (mark - 1))
            elif parent is not None:
                stdin.write(b"from %s\n" % parent.encode())
            stdin.write(b"deleteall\n")
            count = 0
            for entry in _wheel_entries(wheel, path, package):
                stdin.write(b"M %s inline %s\n" % (entry.mode, _quote_path(entry.path)))
                stdin.write(b"data %d\n" % len(entry.data))
                stdin.write(entry.data)
                stdin.write(b"\n")
                count += 1
            if count == 0:
                raise CorpusError(
                    f"{wheel.filename} has no text files under {_import_dir(package)}/; "
                    "check the package name"
                )
            stdin.write(
                b"\nreset refs/tags/%s\nfrom :%d\n\n" % (_tag(wheel.version).encode(), mark)
            )
            say(f"committed {_tag(wheel.version)} ({count:,} files)")
        stdin.write(b"done\n")
        stdin.flush()
    except BrokenPipeError:
        pass  # fast-import died; its stderr says why
    except BaseException:
        proc.kill()
        proc.communicate()
        raise
    _out, err = proc.communicate()
    if proc.returncode != 0:
        text = " ".join(err.decode("utf-8", "replace").split())
        raise CorpusError(f"git fast-import failed in {root}: {text or 'no message'}")


def _checkout(root: Path) -> None:
    cmd = _git_cmd(root)
    _run(cmd, "symbolic-ref", "HEAD", f"refs/heads/{_BRANCH}")
    _run(cmd, "reset", "--quiet", "--hard", f"refs/heads/{_BRANCH}")


def _init(root: Path, package: str) -> None:
    cmd = _git_cmd(root)
    _run(cmd, "init", "--quiet", "--template=", f"--initial-branch={_BRANCH}")
    for key, value in (*_LOCAL_CONFIG, (_PACKAGE_KEY, package), (_MARKER_KEY, _MARKER_VALUE)):
        _run(cmd, "config", "--local", key, value)


def _build_fresh(
    dest: Path, package: str, wheels: list[ReleaseWheel], paths: list[Path], say: Log
) -> None:
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}.building-", dir=dest.parent))
    except OSError as exc:
        raise CorpusError(
            f"cannot create a folder next to {dest}: {exc.strerror or exc}; "
            "pass a destination in a writable folder"
        ) from None
    try:
        _init(tmp, package)
        _fast_import(tmp, package, wheels, paths, None, say)
        _checkout(tmp)
        _swap_into(tmp, dest)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    say(f"built {dest} at {_tag(wheels[-1].version)}")


def _swap_into(tmp: Path, dest: Path) -> None:
    """Move the finished repository ``tmp`` to ``dest`` (empty folder or old corpus)."""
    old: Path | None = None
    try:
        if _is_empty_dir(dest):
            dest.rmdir()
        elif dest.exists():
            # Only reached for a corpus this module built (checked by _inspect_dest).
            old = Path(tempfile.mkdtemp(prefix=f".{dest.name}.old-", dir=dest.parent))
            os.replace(dest, old / "corpus")
        os.replace(tmp, dest)
    except OSError as exc:
        raise CorpusError(
            f"cannot move the new corpus into {dest}: {exc.strerror or exc}; "
            "check that nothing else is using that path"
        ) from None
    finally:
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)


def _append(
    dest: Path,
    package: str,
    wheels: list[ReleaseWheel],
    paths: list[Path],
    tip: str,
    say: Log,
) -> None:
    _fast_import(dest, package, wheels, paths, tip, say)
    _checkout(dest)
    say(f"appended {_span([w.version for w in wheels])} to {dest}")


def _resolve_tags(root: Path, versions: list[str]) -> tuple[str, ...]:
    out = _run(_git_cmd(root), "rev-parse", *(f"refs/tags/{_tag(v)}^{{commit}}" for v in versions))
    shas = tuple(out.split())
    if len(shas) != len(versions):
        raise CorpusError(f"git rev-parse gave {len(shas)} SHAs for {len(versions)} tags in {root}")
    return shas


def _ignore(_line: str) -> None:
    return None
