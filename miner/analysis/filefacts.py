"""Each file's facts, read where its bytes already are and kept with its sites.

:class:`~miner.analysis.facts.FileFacts` is what the facts stage reads
from one file alone (:func:`~miner.analysis.facts.file_facts`). The
extraction's workers hold every blob's bytes and sites, so they compute it
there (:class:`WorkerFacts`, handed to the pool through
:attr:`miner.mining.extraction.MineOptions.file_facts`), and the blob
cache keeps it by blob beside the sites (its ``facts`` table): a later run
of the same blob reads neither the bytes nor the file for it.

A record is stored as ``zlib(pickle((version, record)))``; :func:`facts_version`
names the code that makes it, so a record made by other code is never
used (it is made again). The facts stage uses a record only for the same
path and the same sites (:func:`~miner.analysis.facts.sites_key`): a blob
met at another path, or a file whose sites the helper calls changed, is
read again in the parent (:func:`complete`).
"""

from __future__ import annotations

import ast
import hashlib
import logging
import pickle
import sys
import zlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from miner.analysis.facts import FileFacts, file_facts, sites_key
from miner.lifecycle import fork_map
from miner.model import Site

log = logging.getLogger("miner")

_PACKAGE = Path(__file__).resolve().parent.parent
#: The module whose code, with every ``miner`` module it imports, makes a record.
_ROOT_MODULE = "miner.analysis.facts"
#: Files per task of :func:`complete`'s processes.
FILES_PER_TASK = 32


def _module_file(name: str) -> Path | None:
    """The source file of the ``miner`` module ``name`` (a package's
    ``__init__.py``), or None when there is none."""
    base = _PACKAGE.parent.joinpath(*name.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


def _imports(path: Path) -> set[str]:
    """The ``miner`` modules ``path`` imports (at module level or in a
    function): ``from p import m`` names the module ``p.m`` when there is
    one, else ``p``. A package's ``__init__`` that merely runs first is
    not counted: its code makes no record."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_bytes())):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                inner = f"{node.module}.{alias.name}"
                found.add(inner if _module_file(inner) is not None else node.module)
    return {n for n in found if n == "miner" or n.startswith("miner.")}


def record_modules() -> dict[str, Path]:
    """Module name -> source file of :mod:`miner.analysis.facts` and of every
    ``miner`` module it imports, directly or not (read with :mod:`ast`)."""
    seen: dict[str, Path] = {}
    todo = [_ROOT_MODULE]
    while todo:
        name = todo.pop()
        path = _module_file(name)
        if name in seen or path is None:
            continue
        seen[name] = path
        todo.extend(_imports(path))
    return seen


@cache
def facts_version() -> str:
    """A hash (64 hex digits) of the source of :func:`record_modules` and of
    Python's ``major.minor``: what decides a record."""
    seen = record_modules()
    digest = hashlib.sha256()
    for name in sorted(seen):
        digest.update(name.encode() + b"\0" + seen[name].read_bytes() + b"\0")
    digest.update(f"python {sys.version_info[0]}.{sys.version_info[1]}".encode())
    return digest.hexdigest()


def encode(record: FileFacts) -> bytes:
    """A record as the blob cache stores it, tagged with :func:`facts_version`."""
    return zlib.compress(pickle.dumps((facts_version(), record), pickle.HIGHEST_PROTOCOL), 1)


def decode(data: bytes) -> FileFacts | None:
    """Inverse of :func:`encode`; None for a record of other code or a damaged row."""
    try:
        version, record = pickle.loads(zlib.decompress(data))
    except Exception:  # noqa: BLE001 - a damaged row is made again, never trusted
        return None
    if version != facts_version() or not isinstance(record, FileFacts):
        return None
    return record


@dataclass(frozen=True, slots=True)
class WorkerFacts:
    """What an extraction worker computes after a file's sites: the file's
    :class:`~miner.analysis.facts.FileFacts`, encoded (:func:`encode`).
    Pickled by reference to the workers (this class), so they import the
    analysis when they first use it."""

    def __call__(self, path: str, data: bytes, sites: Sequence[Site]) -> bytes:
        """The encoded record of ``path`` with its bytes and its sites as
        extracted (put in line order, as the mined result holds them)."""
        return encode(file_facts(path, data, sorted(sites, key=lambda s: s.line)))


def known_records(
    rows: Mapping[str, bytes], paths_of: Mapping[str, Iterable[str]]
) -> dict[str, FileFacts]:
    """Path -> record of the blob cache's ``rows`` (blob -> :func:`encode`d
    record; ``paths_of``: blob -> the paths holding it) that this code made
    for that path."""
    out: dict[str, FileFacts] = {}
    for blob, data in rows.items():
        record = decode(data)
        if record is None:
            continue
        for path in paths_of.get(blob, ()):
            if record.path == path:
                out[path] = record
    return out


def complete(
    files: Mapping[str, bytes],
    sites: Iterable[Site],
    known: Mapping[str, FileFacts],
    jobs: int = 1,
) -> tuple[dict[str, FileFacts], list[str]]:
    """Every file's record: ``known``'s when it was read with the same
    sites at the same path, else :func:`~miner.analysis.facts.file_facts`
    here (in ``jobs`` forked processes). Returns the records by path and
    the paths read here (to keep in the cache)."""
    by_path: dict[str, list[Site]] = {}
    for site in sites:
        by_path.setdefault(site.path, []).append(site)
    out: dict[str, FileFacts] = {}
    work: list[tuple[str, bytes, list[Site]]] = []
    for path, data in files.items():
        own = by_path.get(path, [])
        found = known.get(path)
        if found is not None and found.sites_key == sites_key(own):
            out[path] = found
        else:
            work.append((path, data, own))
    for record in fork_map(jobs, _read, work, FILES_PER_TASK):
        out[record.path] = record
    if work:
        log.info("facts of %d files read in the parent", len(work))
    return out, [path for path, _, _ in work]


def _read(item: tuple[str, bytes, list[Site]]) -> FileFacts:
    """:func:`~miner.analysis.facts.file_facts` of one (path, bytes, sites)."""
    return file_facts(*item)
