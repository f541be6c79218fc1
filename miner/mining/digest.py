"""Digests of what a run reads, so that a run can skip work whose result it has.

A mined folder is a pure function of its inputs: the commit (its metadata and
the blobs of its tree), the per-file records mined from them, the options of
the run, and the code of raise-miner that turns them into facts, analyses and
files. :func:`run_inputs` hashes all of these into one digest:

* :func:`code_version` hashes every source file of the ``miner`` package
  (the analysis, the renderers and their templates included) and the versions
  of the libraries that shape the output. It is computed from the files
  themselves, never bumped by hand: a change anywhere in the package (the
  analysis rewritten, a template edited) gives a new version, and every digest
  built on it misses the entries made before.
* :func:`records_digest` hashes what the per-file records hold beyond what
  their blobs and the code decide (statuses, notes), in path order.
* :func:`entries_digest` hashes the tree: path, blob id, mode and size of each
  ``.py`` entry, which is all the facts read from the commit besides the
  records.

Two uses (:mod:`miner.pipeline`):

* the digest is written into ``manifest.json`` (``inputs``); a run into the
  same folder whose digest is equal skips the facts, the analysis and the
  rendering altogether, and writes nothing;
* :func:`analysis_cache` keeps the facts and analyses of a digest under
  ``<cache>/analyses/``, so a run skips the facts and the analysis of a
  commit already analysed by the same code;
* :func:`rendered_cache` keeps the files a publication wrote under
  ``<cache>/rendered/``, so a run from the same inputs into a new folder
  writes them without rendering.

A digest is a sha256 hex string; equal digests mean equal inputs (up to hash
collisions), unequal digests only that something may have changed.
"""

from __future__ import annotations

import contextlib
import gc
import gzip
import hashlib
import importlib.metadata
import json
import logging
import os
import pickle
import sys
import tempfile
import zlib
from collections.abc import Iterable, Sequence
from functools import cache
from pathlib import Path
from typing import Any

from miner import TEMPLATES

log = logging.getLogger("miner")

_PACKAGE = Path(__file__).resolve().parent.parent
_TEMPLATES = TEMPLATES
#: Libraries whose version changes the records, facts, analyses or files.
LIBRARIES = ("libcst", "Jinja2", "Pygments", "markdown-it-py", "boolean.py", "rapidfuzz", "orjson")
#: Bumped when the layout of :class:`DigestCache` entries changes.
FORMAT = 1


def _version(name: str) -> str:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return "-"


def _code_files() -> list[tuple[str, Path]]:
    """Every file of the ``miner`` package and of its templates, as
    ``(name, path)`` sorted by name; a template is named ``templates/...``
    whether the templates ship inside the package (a wheel) or beside it (a
    checkout: :data:`miner.TEMPLATES`)."""
    roots = [(_PACKAGE, "")]
    if not _TEMPLATES.is_relative_to(_PACKAGE):
        roots.append((_TEMPLATES, "templates/"))
    return sorted(
        (prefix + p.relative_to(root).as_posix(), p)
        for root, prefix in roots
        for p in root.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and p.suffix not in {".pyc", ".pyo"}
    )


@cache
def code_version() -> str:
    """A hash of every file of the ``miner`` package (sources, templates and
    static files; byte-compiled files left out), the versions of
    :data:`LIBRARIES` and Python's ``major.minor``. 64 hex digits."""
    digest = hashlib.sha256()
    for name, path in _code_files():
        digest.update(name.encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    for name in LIBRARIES:
        digest.update(f"{name} {_version(name)}\0".encode())
    digest.update(f"python {sys.version_info[0]}.{sys.version_info[1]}\0".encode())
    digest.update(f"format {FORMAT}".encode())
    return digest.hexdigest()


def records_digest(files: Sequence[Any]) -> str:
    """A hash of per-file records (:class:`~miner.model.FileResult`), in the
    order given: each file's path, blob id, status, note, encoding and number
    of sites.

    The sites themselves are not hashed (their JSON is tens of megabytes on a
    large repository, seconds to encode): a file's sites are a function of its
    blob, its path and the extractor's code (in :func:`code_version`), and the
    call sites linked across files of the whole tree (in
    :func:`entries_digest`); what a limit changes (a file failed, skipped or
    mined by the fallback parser) shows in its status and note.
    """
    digest = hashlib.sha256()
    for result in files:
        path = result.path.encode("utf-8", "surrogateescape")
        fields = (result.blob, result.status, result.reason, result.encoding, len(result.sites))
        digest.update(path + b"\0" + repr(fields).encode("utf-8", "surrogateescape") + b"\n")
    return digest.hexdigest()


def entries_digest(entries: Iterable[Any]) -> str:
    """A hash of tree entries (:class:`~miner.mining.source.BlobRef`: path,
    blob id, mode, size), in the order given."""
    digest = hashlib.sha256()
    for entry in entries:
        path = entry.path.encode("utf-8", "surrogateescape")
        digest.update(
            b"%s\0%s\0%s\0%d\n" % (path, entry.blob.encode(), str(entry.mode).encode(), entry.size)
        )
    return digest.hexdigest()


def combine(**parts: Any) -> str:
    """One digest of named parts (strings, numbers, booleans, None, or JSON
    values), independent of the order the names are given in."""
    text = json.dumps(parts, sort_keys=True, ensure_ascii=True, default=repr)
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def run_inputs(commit: Any, files: Sequence[Any], entries: Iterable[Any], **options: Any) -> str:
    """The digest of everything the facts and analyses of a mined commit are
    made from: :func:`code_version`, the commit's metadata
    (:class:`~miner.model.CommitInfo`: slug, link ref, sha, date),
    :func:`records_digest` of its files, :func:`entries_digest` of its tree,
    and the run's ``options`` (JSON values, e.g. the language-model settings)."""
    return combine(
        code=code_version(),
        commit=commit.to_json(),
        records=records_digest(files),
        entries=entries_digest(entries),
        options=options,
    )


#: What reading a damaged, truncated or foreign gzip'd pickle raises
#: (a value of another shape unpacked too).
UNREADABLE = (
    OSError,
    EOFError,
    zlib.error,
    pickle.UnpicklingError,
    ValueError,
    TypeError,
    AttributeError,
    ImportError,
    IndexError,
)


def unpickle(handle: Any) -> Any:
    """``pickle.load(handle)`` with the cyclic garbage collector paused: the
    records of a large commit are hundreds of thousands of new containers,
    whose allocation sets off collection after collection that can free
    nothing (1.3 s instead of 0.8 s for SGLang's). Raises what
    :func:`pickle.load` raises."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        return pickle.load(handle)
    finally:
        if was_on:
            gc.enable()


class DigestCache:
    """Values by digest: ``<cache>/<name>/<digest>.pickle.gz``.

    An entry is written whole and atomically; a missing, truncated or foreign
    entry is a miss (logged), never an error. Every digest used here includes
    :func:`code_version`, so an entry is only ever read by the code that wrote
    it (pickle then restores exactly the classes it saved). Only the ``keep``
    entries used most recently are kept (reading one counts as a use);
    deleting the folder at any time is safe. Like the rest of the cache folder,
    the entries are trusted as the code is (unpickling runs code): a cache
    folder is not to be shared with users one does not trust.
    """

    def __init__(self, cache_dir: Path, name: str, keep: int = 8) -> None:
        self.folder = Path(cache_dir) / name
        self.keep = keep

    def path(self, digest: str) -> Path:
        """Where the entry of ``digest`` lives."""
        return self.folder / f"{digest}.pickle.gz"

    def get(self, digest: str) -> Any | None:
        """The value stored for ``digest``, or None."""
        path = self.path(digest)
        try:
            with gzip.open(path, "rb") as handle:
                key, value = unpickle(handle)
        except FileNotFoundError:
            return None
        except UNREADABLE as exc:
            log.warning("%s: unreadable cache entry (%s); doing the work again", path, exc)
            return None
        if key != digest:
            log.warning("%s: cache entry of another run; doing the work again", path)
            return None
        with contextlib.suppress(OSError):
            os.utime(path)
        return value

    def put(self, digest: str, value: Any) -> None:
        """Store ``value`` for ``digest`` (pickled straight into a gzip file,
        level 1, renamed into place when complete), then drop the entries
        beyond ``keep``; a failure to write is logged, never raised."""
        tmp: Path | None = None
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            fd, name = tempfile.mkstemp(prefix=".tmp-", suffix=".pickle.gz", dir=self.folder)
            tmp = Path(name)
            with (
                os.fdopen(fd, "wb") as raw,
                gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=1, mtime=0) as handle,
            ):
                pickle.dump((digest, value), handle, protocol=5)
            tmp.replace(self.path(digest))
            tmp = None
        except (OSError, pickle.PicklingError, TypeError, AttributeError) as exc:
            log.warning("%s: cannot keep the cache entry (%s)", self.folder, exc)
            return
        finally:
            if tmp is not None:
                tmp.unlink(missing_ok=True)
        self.prune()

    def prune(self) -> None:
        """Delete all but the ``keep`` entries used most recently."""
        try:
            entries = sorted(
                (p for p in self.folder.glob("*.pickle.gz") if not p.name.startswith(".")),
                key=lambda p: p.stat().st_mtime,
                reverse=True,
            )
            for stale in entries[self.keep :]:
                stale.unlink(missing_ok=True)
        except OSError as exc:
            log.warning("%s: cannot prune the cache (%s)", self.folder, exc)


def analysis_cache(cache_dir: Path) -> DigestCache:
    """Facts and analyses by :func:`run_inputs` (``<cache>/analyses``)."""
    return DigestCache(cache_dir, "analyses", keep=16)


def rendered_cache(cache_dir: Path) -> DigestCache:
    """The files of published folders by the digest of their inputs
    (``<cache>/rendered``): each entry is the list of ``(folder, path,
    text)`` a publication wrote, so a run from the same inputs into a new
    folder writes them without analysing or rendering."""
    return DigestCache(cache_dir, "rendered", keep=4)
