"""Mined commits kept for reuse, one file per commit under the cache folder.

A diff, a history or a release run mines the same releases again and again.
Each mined commit's per-file results (the extractor's output, before ids are
assigned) are kept at ``<cache>/commits/<sha>-<extractor>.jsonl.gz``: gzip'd
JSON lines, a header line (``schema_version``, ``sha``, ``extractor``) then one
:class:`~miner.model.FileResult` per line in path order. Ids and errors are
cheap to recompute (:func:`miner.mining.ids.assign_ids`), so they are not stored,
and the same file serves any ``--slug`` or ``--link-ref``.

The key is the commit SHA plus an *extractor fingerprint*: the tool version,
the record schema version (:data:`miner.model.SCHEMA_VERSION`, bumped when the
record format changes), the parse mode and a hash of the source files of
:mod:`miner.extract`. Changing the extractor therefore misses the old entries instead
of serving stale records; nothing needs purging by hand (old files can be
deleted at any time). A per-file blob cache (if one is configured) sits below
this one and makes the cold path faster; this store makes the warm path skip
git and parsing altogether.

A missing, truncated or foreign entry is a miss (logged), never an error.
"""

from __future__ import annotations

import gzip
import json
import logging
import zlib
from pathlib import Path

from miner.files import write_bytes
from miner.mining.cache import extractor_version
from miner.model import SCHEMA_VERSION, FileResult

log = logging.getLogger("miner")


def entry_path(cache_dir: Path, sha: str, *, partial: bool = True) -> Path:
    """Where the results of commit ``sha`` are kept."""
    mode = "" if partial else "-full"
    return cache_dir / "commits" / f"{sha}-{extractor_version()[:16]}{mode}.jsonl.gz"


def load_files(cache_dir: Path, sha: str, *, partial: bool = True) -> list[FileResult] | None:
    """The stored per-file results of ``sha``, or None when there are none
    (or the entry cannot be read; the reason is logged)."""
    path = entry_path(cache_dir, sha, partial=partial)
    try:
        with gzip.open(path, "rt", encoding="utf-8", errors="surrogateescape") as handle:
            header = json.loads(handle.readline())
            if header.get("sha") != sha or header.get("extractor") != extractor_version():
                log.warning("%s: stored results are for another commit or extractor", path)
                return None
            files = [FileResult.from_json(json.loads(line)) for line in handle]
    except FileNotFoundError:
        return None
    except (OSError, EOFError, zlib.error, ValueError, KeyError, TypeError) as exc:
        log.warning("%s: unreadable stored results (%s); mining again", path, exc)
        return None
    if len(files) != header.get("files"):
        log.warning("%s: truncated stored results; mining again", path)
        return None
    return files


def save_files(cache_dir: Path, sha: str, files: list[FileResult], *, partial: bool = True) -> Path:
    """Store the per-file results of ``sha`` atomically; returns the path.

    The bytes are deterministic (gzip header without name or time).

    Raises:
        OSError: the cache folder cannot be written.
    """
    path = entry_path(cache_dir, sha, partial=partial)
    header = {
        "schema_version": SCHEMA_VERSION,
        "sha": sha,
        "extractor": extractor_version(),
        "files": len(files),
    }
    lines = [json.dumps(header, sort_keys=True)]
    lines += [json.dumps(f.to_json(), sort_keys=True, ensure_ascii=False) for f in files]
    text = "\n".join(lines) + "\n"
    data = gzip.compress(text.encode("utf-8", "surrogateescape"), compresslevel=6, mtime=0)
    write_bytes(path, data)
    return path
