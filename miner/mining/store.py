"""Mined commits kept for reuse, one file per commit under the cache folder.

A diff, a history or a release run mines the same releases again and again,
and ``miner mine`` of a commit mined before only needs its records to learn
that its output is up to date. Each mined commit is kept, assembled (the
per-file results, the sites with their ids, the errors), at
``<cache>/commits/<sha>-<key>.pickle.gz``: a gzip'd pickle of a header
(``schema_version``, ``sha``, ``key``, the number of files) and the three
tuples. Reading it back takes a fraction of a second where parsing JSON lines
and assigning the ids again took about four on SGLang (18,500 sites). The
commit's metadata (:class:`~miner.model.CommitInfo`) is not stored: the same
entry serves any ``--slug`` or ``--link-ref``.

The key is the commit SHA plus a fingerprint of the code that made the entry,
:func:`miner.mining.digest.code_version` (every source file of the package:
the extractor, the record classes that are pickled, the ids and the grouping).
Changing any of it misses the old entries instead of serving stale records or
classes of another shape; nothing needs purging by hand (old files can be
deleted at any time). The per-file blob cache below this one, keyed by the
extractor alone, keeps a code change outside the extractor from parsing
anything again.

A missing, truncated or foreign entry is a miss (logged), never an error.
Like the rest of the cache folder, the entries are trusted as the code is
(unpickling runs code): a cache folder is not to be shared with users one does
not trust.
"""

from __future__ import annotations

import gzip
import logging
import pickle
from pathlib import Path

from miner.files import write_bytes
from miner.mining.digest import UNREADABLE, code_version, unpickle
from miner.model import SCHEMA_VERSION, CommitInfo, MineResult

log = logging.getLogger("miner")

#: Bumped when the layout of an entry changes.
FORMAT = 2


def entry_key() -> str:
    """The code fingerprint in the entries' names: 16 hex digits."""
    return code_version()[:16]


def entry_path(cache_dir: Path, sha: str, *, partial: bool = True) -> Path:
    """Where the mined records of commit ``sha`` are kept."""
    mode = "" if partial else "-full"
    return cache_dir / "commits" / f"{sha}-{entry_key()}{mode}.pickle.gz"


def _header(sha: str, files: int) -> dict[str, object]:
    return {
        "format": FORMAT,
        "schema_version": SCHEMA_VERSION,
        "sha": sha,
        "key": code_version(),
        "files": files,
    }


def load_result(
    cache_dir: Path, sha: str, info: CommitInfo, *, partial: bool = True
) -> MineResult | None:
    """The stored records of ``sha`` with ``info`` as their commit (no
    extraction statistics), or None when there are none (or the entry cannot
    be read, is for another commit or code, or is incomplete; the reason is
    logged)."""
    path = entry_path(cache_dir, sha, partial=partial)
    try:
        with gzip.open(path, "rb") as handle:
            header, files, sites, errors = unpickle(handle)
    except FileNotFoundError:
        return None
    except UNREADABLE as exc:
        log.warning("%s: unreadable stored results (%s); mining again", path, exc)
        return None
    if not isinstance(header, dict) or {**header, "files": 0} != _header(sha, 0):
        log.warning("%s: stored results are for another commit or code", path)
        return None
    if not isinstance(files, tuple) or len(files) != header.get("files"):
        log.warning("%s: incomplete stored results; mining again", path)
        return None
    return MineResult(commit=info, files=files, sites=sites, errors=errors)


def save_result(cache_dir: Path, result: MineResult, *, partial: bool = True) -> Path:
    """Store the records of ``result`` (files, sites, errors; not its commit
    metadata or statistics) atomically; returns the path.

    Raises:
        OSError: the cache folder cannot be written.
    """
    sha = result.commit.sha
    path = entry_path(cache_dir, sha, partial=partial)
    value = (_header(sha, len(result.files)), result.files, result.sites, result.errors)
    data = gzip.compress(pickle.dumps(value, protocol=5), compresslevel=1, mtime=0)
    write_bytes(path, data)
    return path
