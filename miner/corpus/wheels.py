"""Reading a wheel: which of its files the release repository keeps, and where.

A wheel is a zip file. The repository keeps every file under the package's top-level
import folder (:func:`import_dir`, ``sglang/`` for SGLang), placed under ``python/`` as in
the upstream repository, bytes untouched; it skips ``.so``, ``.pyd``, ``.dylib`` and
``.pyc`` files, versioned shared objects (``.so.1``), and files with a NUL byte in their
first 8 KiB. ``.dist-info`` and other top-level folders are never taken. An entry whose
path has an empty, ``.`` or ``..`` part or a backslash makes the whole wheel refused.
"""

from __future__ import annotations

import re
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from miner.errors import CorpusError

__all__ = ["Entry", "import_dir", "wheel_entries"]

_NUL_PROBE = 8192
_BINARY_SUFFIXES = (".so", ".pyd", ".dylib", ".pyc")
_SONAME_RE = re.compile(r"\.so(\.\d+)+$")


def import_dir(package: str) -> str:
    """The top-level import folder of ``package`` inside its wheel: the name in lower case
    with ``-`` and ``.`` turned into ``_`` (``"SGLang"`` -> ``"sglang"``,
    ``"my-pkg.x"`` -> ``"my_pkg_x"``)."""
    return re.sub(r"[-.]+", "_", package).lower()


@dataclass(frozen=True)
class Entry:
    """One file the release repository keeps from a wheel.

    Attributes:
        path: its path in the repository, UTF-8, e.g. ``b"python/sglang/__init__.py"``.
        mode: ``b"100755"`` when the zip entry has an executable bit, else ``b"100644"``.
        data: the file's bytes exactly as stored in the wheel (line endings untouched).
    """

    path: bytes
    mode: bytes
    data: bytes


def _is_binary_name(name: str) -> bool:
    lower = name.lower()
    return lower.endswith(_BINARY_SUFFIXES) or _SONAME_RE.search(lower) is not None


def wheel_entries(path: Path, package: str) -> Iterator[Entry]:
    """Yield the files the repository keeps from the wheel at ``path``, sorted by path.

    Only entries under ``<import_dir(package)>/`` are taken, placed at ``python/<entry>``;
    binaries (``.so``, ``.pyd``, ``.dylib``, ``.pyc``, ``.so.<n>``) and files with a NUL
    byte in their first 8 KiB are skipped. When a name occurs twice, the last entry wins,
    as when unpacking. Error messages name the wheel by ``path.name``.

    Args:
        path: the wheel file, e.g. ``<cache>/wheels/sglang-0.5.19-py3-none-any.whl``.
        package: the project name (see :func:`import_dir`).

    Raises:
        CorpusError: the file is not a readable zip; an entry under the package folder has
            an unsafe path (an empty, ``.`` or ``..`` part, or a backslash), checked before
            anything is yielded; an entry cannot be read.
    """
    filename = path.name
    top = import_dir(package)
    prefix = top + "/"
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise CorpusError(
            f"{filename} ({path}) is not a readable wheel: {exc}; delete it and retry"
        ) from None
    with archive:
        infos: dict[str, zipfile.ZipInfo] = {}
        for info in archive.infolist():
            name = info.filename
            if not name.startswith(prefix) or name.endswith("/"):
                continue
            parts = name.split("/")
            if any(p in ("", ".", "..") or "\\" in p for p in parts):
                raise CorpusError(f"{filename} has an unsafe entry {name!r}; refusing to import it")
            infos[name] = info  # a duplicate name: the last entry wins, as when unpacking
        for name in sorted(infos):
            if _is_binary_name(name):
                continue
            info = infos[name]
            try:
                data = archive.read(info)
            except (zipfile.BadZipFile, OSError, RuntimeError, ValueError) as exc:
                raise CorpusError(
                    f"{filename} ({path}): cannot read {name}: {exc}; delete it and retry"
                ) from None
            if b"\0" in data[:_NUL_PROBE]:
                continue
            executable = (info.external_attr >> 16) & 0o111
            yield Entry(
                path=f"python/{name}".encode(),
                mode=b"100755" if executable else b"100644",
                data=data,
            )
