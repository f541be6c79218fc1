"""The blob cache: per-file results keyed by git blob id and extractor version.

A file's records depend only on its bytes (named by the git blob id) and on
the code that extracts them, so a result computed once serves every later
commit, and every other path, holding the same blob. The extractor's version
is a hash of its own source (:func:`extractor_version`), so changing the code
can never serve records it would no longer produce.

Storage is one SQLite database (the standard library's ``sqlite3``) in the
cache folder, ``extract.sqlite3``, in WAL mode: readers never wait, and one
writer at a time holds the lock for one short transaction per batch of
results, so several ``miner mine`` processes can share it. Each row of
``results`` is a :class:`~miner.model.FileResult` as zlib-compressed JSON; each
row of ``units`` the sites of one unit (:mod:`miner.extract.units`) by the
digest of its text and context, so that a changed file re-parses only the
units that changed. The workers read ``units`` (read-only connections) and
hand the units they parse to the parent, which writes them with the results.
Each row of ``helpers`` holds the raising helpers a blob's own sites make of
its functions (:mod:`miner.mining.calls`), so that a new commit parses with
``ast`` only the changed files among the helper candidates. Each row of
``facts`` holds what the analysis reads from the blob alone, made by the
workers beside its sites (:mod:`miner.analysis.filefacts`): bytes this module
neither reads nor writes itself, tagged inside with the version of the code
that made them, which the reader checks.

Nothing in it is trusted blindly:

* a file that is not a SQLite database, or not one of ours (another
  ``application_id`` or format version), is moved aside and rebuilt, with a
  warning;
* damage found while reading (a malformed page, a row that does not
  decompress or decode, a row for another blob) turns the cache off for the
  rest of the run, and the file is rebuilt on the next;
* rows written by another extractor version are never served (the version is
  part of the key); versions not used recently are pruned;
* a write lock that another process holds past ``lock_timeout`` seconds makes
  this run stop writing (it still reads), with a warning.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import importlib.metadata
import json
import logging
import os
import sqlite3
import sys
import time
import zlib
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from miner.extract.helpers import Helper
from miner.model import FileResult, Site

_T = TypeVar("_T")

log = logging.getLogger("miner")

#: Marks the database as ours (``PRAGMA application_id``): "RMc1".
APPLICATION_ID = 0x524D6331
#: Layout of the tables (``PRAGMA user_version``); bump when it changes.
#: Formats 1 (no ``units`` table), 2 (no ``helpers`` table) and 3 (no
#: ``facts`` table) are upgraded in place.
FORMAT = 4
FILENAME = "extract.sqlite3"
#: Extractor versions whose rows are kept (most recently used first).
KEEP_VERSIONS = 4

_PACKAGE = Path(__file__).resolve().parent.parent
#: The code that shapes per-file records. Anything here changes the version.
RECORD_SOURCES = ("extract/**/*.py", "mining/calls.py", "model.py")


def extractor_version() -> str:
    """A hash of everything that decides a file's records: the source of
    :data:`RECORD_SOURCES`, libcst's version, Python's ``major.minor`` (the
    ``ast`` planner's grammar) and the cache format. 64 hex digits."""
    digest = hashlib.sha256()
    files = sorted({p for pattern in RECORD_SOURCES for p in _PACKAGE.glob(pattern)})
    for path in files:
        digest.update(path.relative_to(_PACKAGE).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    digest.update(f"libcst {importlib.metadata.version('libcst')}\0".encode())
    digest.update(f"python {sys.version_info[0]}.{sys.version_info[1]}\0".encode())
    digest.update(f"format {FORMAT}".encode())
    return digest.hexdigest()


def repath(result: FileResult, path: str) -> FileResult:
    """``result`` as mined at ``path``: the same records with every site's path replaced."""
    if result.path == path:
        return result
    sites = tuple(dataclasses.replace(site, path=path) for site in result.sites)
    return dataclasses.replace(result, path=path, sites=sites)


def encode(result: FileResult) -> bytes:
    """A result as stored: compact JSON, zlib-compressed."""
    text = json.dumps(result.to_json(), separators=(",", ":"), ensure_ascii=False)
    # Level 1: 79 MB of JSON for SGLang 0.5.19 become 13 MB (level 6: 11 MB at
    # twice the time).
    return zlib.compress(text.encode("utf-8", "surrogatepass"), 1)


def decode(blob: str, data: bytes) -> FileResult:
    """Inverse of :func:`encode`.

    Raises:
        ValueError: the row is damaged or holds another blob's result.
    """
    try:
        raw = json.loads(zlib.decompress(data).decode("utf-8", "surrogatepass"))
        result = FileResult.from_json(raw)
    except (zlib.error, UnicodeDecodeError, ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"damaged row for blob {blob}: {type(exc).__name__}") from None
    if result.blob != blob:
        raise ValueError(f"row for blob {blob} holds blob {result.blob}")
    return result


def _pack(items: Iterable[Site] | Iterable[Helper]) -> bytes:
    """Records as stored: a compact JSON list, zlib-compressed."""
    text = json.dumps([i.to_json() for i in items], separators=(",", ":"), ensure_ascii=False)
    return zlib.compress(text.encode("utf-8", "surrogatepass"), 1)


def _unpack(data: bytes, read: Callable[[Any], _T], what: str) -> tuple[_T, ...]:
    """Inverse of :func:`_pack`, each item by ``read``.

    Raises:
        ValueError: the row (``what``, for the message) is damaged.
    """
    try:
        raw = json.loads(zlib.decompress(data).decode("utf-8", "surrogatepass"))
        return tuple(read(item) for item in raw)
    except (zlib.error, UnicodeDecodeError, ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"damaged {what}: {type(exc).__name__}") from None


def encode_sites(sites: tuple[Site, ...]) -> bytes:
    """A unit's relative sites (:func:`miner.extract.units.relative`) as
    stored: compact JSON, zlib-compressed."""
    return _pack(sites)


def decode_sites(data: bytes) -> tuple[Site, ...]:
    """Inverse of :func:`encode_sites`.

    Raises:
        ValueError: the row is damaged.
    """
    return _unpack(data, Site.from_json, "unit row")


def encode_helpers(helpers: tuple[Helper, ...]) -> bytes:
    """The raising helpers a blob's own sites make of its functions
    (:func:`miner.mining.calls.find_helpers`) as stored: compact JSON,
    zlib-compressed."""
    return _pack(helpers)


def decode_helpers(blob: str, data: bytes) -> tuple[Helper, ...]:
    """Inverse of :func:`encode_helpers`.

    Raises:
        ValueError: the row is damaged.
    """
    return _unpack(data, Helper.from_json, f"helpers row for blob {blob}")


class UnitReader:
    """The ``units`` table as a :class:`~miner.extract.units.UnitMemo`, for
    one process (a worker opens its own): reads go to the database,
    read-only; the units parsed are kept in :attr:`new` for the parent to
    store (:meth:`BlobCache.put_units`), as (key, encoded sites). A read that
    fails turns reading off for this reader (the parse then runs); never
    raises."""

    def __init__(self, path: str | Path, version: str) -> None:
        self.path = str(path)
        self.version = version
        self.new: list[tuple[str, bytes]] = []
        self._conn: sqlite3.Connection | None = None
        self._off = False

    def get(self, key: str) -> tuple[Site, ...] | None:
        if self._off:
            return None
        try:
            if self._conn is None:
                uri = Path(self.path).resolve().as_uri() + "?mode=ro"
                # one thread at a time, but not always the same one: a deep
                # file is mined again on a thread with a larger stack
                self._conn = sqlite3.connect(
                    uri, uri=True, timeout=5.0, isolation_level=None, check_same_thread=False
                )
            row = self._conn.execute(
                "SELECT data FROM units WHERE version = ? AND key = ?", (self.version, key)
            ).fetchone()
            return None if row is None else decode_sites(row[0])
        except (sqlite3.Error, ValueError, OSError):
            self.close()
            self._off = True
            return None

    def put(self, key: str, sites: tuple[Site, ...]) -> None:
        self.new.append((key, encode_sites(sites)))

    def take(self) -> list[tuple[str, bytes]]:
        """The units parsed since the last call (and forget them)."""
        out, self.new = self.new, []
        return out

    def close(self) -> None:
        """Close the connection (idempotent, never raises)."""
        conn, self._conn = self._conn, None
        if conn is not None:
            with contextlib.suppress(sqlite3.Error):
                conn.close()


_SCHEMA = """
CREATE TABLE IF NOT EXISTS results (
    version TEXT NOT NULL,
    blob TEXT NOT NULL,
    data BLOB NOT NULL,
    PRIMARY KEY (version, blob)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS units (
    version TEXT NOT NULL,
    key TEXT NOT NULL,
    data BLOB NOT NULL,
    PRIMARY KEY (version, key)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS helpers (
    version TEXT NOT NULL,
    blob TEXT NOT NULL,
    data BLOB NOT NULL,
    PRIMARY KEY (version, blob)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS facts (
    version TEXT NOT NULL,
    blob TEXT NOT NULL,
    data BLOB NOT NULL,
    PRIMARY KEY (version, blob)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS versions (
    version TEXT PRIMARY KEY,
    last_used REAL NOT NULL
) WITHOUT ROWID;
"""


class BlobCache:
    """Results by blob id for one extractor version; see the module doc.

    Use :meth:`open`; methods never raise for the cache's sake: a cache that
    stops working logs one warning and behaves as empty (reads) or full
    (writes) from then on.
    """

    def __init__(self, conn: sqlite3.Connection | None, path: Path, version: str) -> None:
        self._conn = conn
        self.path = path
        self.version = version
        self.writable = conn is not None
        self.state = "used" if conn is not None else "off"
        """``used``, ``rebuilt`` (a bad file was replaced), ``read-only`` (the
        write lock was busy), ``off`` (bypassed, with a warning logged)."""

    @classmethod
    def open(
        cls, cache_dir: Path, version: str | None = None, *, lock_timeout: float = 30.0
    ) -> BlobCache:
        """The cache in ``cache_dir`` for ``version`` (default: :func:`extractor_version`).

        A corrupt or foreign file is moved aside (``*.bad``) and rebuilt; a
        cache that cannot be opened at all (a lock held past ``lock_timeout``
        seconds, no permission) is bypassed. Both log a warning.
        """
        version = version or extractor_version()
        path = cache_dir / FILENAME
        for attempt in (1, 2):
            try:
                conn = _connect(path, lock_timeout)
                _check_or_create(conn, version)
            except sqlite3.OperationalError as exc:  # locked, unreadable, read-only
                log.warning("%s: cannot use the cache (%s); mining without it", path, exc)
                return cls(None, path, version)
            except OSError as exc:
                log.warning("%s: cannot use the cache (%s); mining without it", path, exc)
                return cls(None, path, version)
            except (_ForeignError, sqlite3.DatabaseError) as exc:
                if attempt == 2 or not _move_aside(path):
                    log.warning("%s: cannot rebuild the cache (%s); mining without it", path, exc)
                    return cls(None, path, version)
                log.warning("%s: cache unusable (%s); moved it to *.bad and rebuilt it", path, exc)
                continue
            cache = cls(conn, path, version)
            cache.state = "rebuilt" if attempt == 2 else "used"
            return cache
        raise AssertionError("unreachable")  # pragma: no cover

    @classmethod
    def disabled(cls) -> BlobCache:
        """A cache that holds nothing and keeps nothing (``--no-cache``)."""
        return cls(None, Path(os.devnull), "")

    # -- reading -------------------------------------------------------------
    def get_many(self, blobs: Iterable[str]) -> dict[str, FileResult]:
        """Stored results for those of ``blobs`` that have one."""
        return self._get("results", blobs, decode)

    def get_helpers(self, blobs: Iterable[str]) -> dict[str, tuple[Helper, ...]]:
        """Stored raising helpers (:func:`encode_helpers`) for those of
        ``blobs`` that have them."""
        return self._get("helpers", blobs, decode_helpers)

    def _get(
        self, table: str, blobs: Iterable[str], read: Callable[[str, bytes], _T]
    ) -> dict[str, _T]:
        """The rows of ``table`` for those of ``blobs`` that have one, by
        ``read(blob, data)``; damage rebuilds the cache (never raises)."""
        found: dict[str, _T] = {}
        if self._conn is None:
            return found
        wanted = sorted(set(blobs))
        try:
            for chunk in _chunks(wanted, 500):
                marks = ",".join("?" * len(chunk))
                rows = self._conn.execute(
                    f"SELECT blob, data FROM {table} WHERE version = ? AND blob IN ({marks})",
                    (self.version, *chunk),
                ).fetchall()
                for blob, data in rows:
                    found[blob] = read(blob, data)
        except ValueError as exc:
            self._broken(str(exc))
            return {}
        except sqlite3.OperationalError as exc:
            if _is_locked(exc):
                log.warning("%s: cache busy (%s); mining without it", self.path, exc)
                self._off()
                return {}
            self._broken(str(exc))
            return {}
        except sqlite3.DatabaseError as exc:
            self._broken(str(exc))
            return {}
        return found

    def get_facts(self, blobs: Iterable[str]) -> dict[str, bytes]:
        """The stored per-file facts of those of ``blobs`` that have them, as
        stored (their reader decodes and checks them:
        :func:`miner.analysis.filefacts.decode`)."""
        return self._get("facts", blobs, lambda blob, data: bytes(data))

    # -- writing -------------------------------------------------------------
    def put_many(self, results: Iterable[FileResult]) -> None:
        """Store ``results`` (one transaction) unless the cache is read-only or off."""
        self._put("results", "blob", ((r.blob, encode(r)) for r in results))

    def put_units(self, rows: Iterable[tuple[str, bytes]]) -> None:
        """Store the units' sites ``rows`` ((key, :func:`encode_sites`), one
        transaction) unless the cache is read-only or off."""
        self._put("units", "key", rows)

    def put_helpers(self, rows: Iterable[tuple[str, tuple[Helper, ...]]]) -> None:
        """Store the raising helpers of blobs ((blob, helpers), one
        transaction) unless the cache is read-only or off."""
        self._put("helpers", "blob", ((blob, encode_helpers(found)) for blob, found in rows))

    def put_facts(self, rows: Iterable[tuple[str, bytes]]) -> None:
        """Store the per-file facts of blobs ((blob, bytes), one transaction)
        unless the cache is read-only or off."""
        self._put("facts", "blob", rows)

    def _put(self, table: str, column: str, rows: Iterable[tuple[str, bytes]]) -> None:
        """Insert (``column`` value, data) ``rows`` into ``table`` for this
        version in one transaction; a busy write lock makes the cache
        read-only, damage rebuilds it (never raises)."""
        if self._conn is None or not self.writable:
            return
        values = [(self.version, key, data) for key, data in rows]
        if not values:
            return
        try:
            with self._transaction():
                self._conn.executemany(
                    f"INSERT OR REPLACE INTO {table} (version, {column}, data) VALUES (?, ?, ?)",
                    values,
                )
        except sqlite3.OperationalError as exc:
            if _is_locked(exc):
                log.warning(
                    "%s: cache write lock busy (%s); results of this run are not cached",
                    self.path,
                    exc,
                )
                self.writable = False
                self.state = "read-only"
                return
            self._broken(str(exc))
        except sqlite3.DatabaseError as exc:
            self._broken(str(exc))

    def unit_reader(self) -> UnitReader | None:
        """A reader of the ``units`` table for this version, or None when the cache is off."""
        if self._conn is None:
            return None
        return UnitReader(self.path, self.version)

    def close(self) -> None:
        """Close the connection (idempotent)."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def __enter__(self) -> BlobCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _transaction(self) -> _Transaction:
        assert self._conn is not None
        return _Transaction(self._conn)

    def _off(self) -> None:
        self.close()
        self.writable = False
        self.state = "off"

    def _broken(self, reason: str) -> None:
        """Damage found while in use: move the file aside and start an empty one."""
        log.warning("%s: cache damaged (%s); moved it to *.bad and rebuilt it", self.path, reason)
        self._off()
        if not _move_aside(self.path):
            return
        try:
            conn = _connect(self.path, 5.0)
            _check_or_create(conn, self.version)
        except (_ForeignError, sqlite3.Error, OSError):
            return
        self._conn, self.writable, self.state = conn, True, "rebuilt"


class _ForeignError(Exception):
    """A SQLite file that is not this cache (another application or format)."""


class _Transaction:
    """``BEGIN IMMEDIATE`` .. ``COMMIT`` (rollback on error): takes the write lock up front."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def __enter__(self) -> sqlite3.Connection:
        self.conn.execute("BEGIN IMMEDIATE")
        return self.conn

    def __exit__(self, exc_type: object, *rest: object) -> None:
        if exc_type is None:
            self.conn.execute("COMMIT")
        elif self.conn.in_transaction:
            self.conn.execute("ROLLBACK")


def _connect(path: Path, lock_timeout: float) -> sqlite3.Connection:
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, timeout=lock_timeout, isolation_level=None)
    try:
        mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        if str(mode).lower() != "wal":
            raise sqlite3.OperationalError(f"cannot switch to WAL (journal mode {mode})")
        conn.execute("PRAGMA synchronous = NORMAL")
    except BaseException:
        conn.close()
        raise
    return conn


def _check_or_create(conn: sqlite3.Connection, version: str) -> None:
    """Create the tables in a new file; reject a file that is not ours."""
    try:
        app_id = conn.execute("PRAGMA application_id").fetchone()[0]
        fmt = conn.execute("PRAGMA user_version").fetchone()[0]
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
        if app_id == 0 and fmt == 0 and not tables:
            with _Transaction(conn):
                if conn.execute("PRAGMA application_id").fetchone()[0] == 0:
                    for statement in _SCHEMA.split(";"):
                        if statement.strip():
                            conn.execute(statement)
                    conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
                    conn.execute(f"PRAGMA user_version = {FORMAT}")
            app_id = conn.execute("PRAGMA application_id").fetchone()[0]
            fmt = conn.execute("PRAGMA user_version").fetchone()[0]
        if app_id != APPLICATION_ID:
            raise _ForeignError(f"not a raise-miner cache (application_id {app_id:#x})")
        if fmt in (1, 2, 3):  # 1 had no units table, 2 no helpers, 3 no facts: add them
            with _Transaction(conn):
                for statement in _SCHEMA.split(";"):
                    if statement.strip():
                        conn.execute(statement)
                conn.execute(f"PRAGMA user_version = {FORMAT}")
            fmt = conn.execute("PRAGMA user_version").fetchone()[0]
        if fmt != FORMAT:
            raise _ForeignError(f"cache format {fmt}, this miner reads format {FORMAT}")
        _touch_version(conn, version)
    except BaseException:
        conn.close()
        raise


def _touch_version(conn: sqlite3.Connection, version: str) -> None:
    """Record that ``version`` is in use; drop rows of versions long unused."""
    try:
        with _Transaction(conn):
            conn.execute(
                "INSERT OR REPLACE INTO versions (version, last_used) VALUES (?, ?)",
                (version, time.time()),
            )
            stale = [
                row[0]
                for row in conn.execute(
                    "SELECT version FROM versions ORDER BY last_used DESC LIMIT -1 OFFSET ?",
                    (KEEP_VERSIONS,),
                )
            ]
            for old in stale:
                conn.execute("DELETE FROM results WHERE version = ?", (old,))
                conn.execute("DELETE FROM units WHERE version = ?", (old,))
                conn.execute("DELETE FROM helpers WHERE version = ?", (old,))
                conn.execute("DELETE FROM facts WHERE version = ?", (old,))
                conn.execute("DELETE FROM versions WHERE version = ?", (old,))
    except sqlite3.OperationalError as exc:
        if not _is_locked(exc):
            raise
        # Another process is writing; housekeeping can wait for the next run.


def _move_aside(path: Path) -> bool:
    """Rename a bad cache file (and its WAL files) to ``*.bad``; False if impossible."""
    try:
        for suffix in ("", "-wal", "-shm"):
            part = Path(str(path) + suffix)
            if part.exists():
                part.replace(Path(str(part) + ".bad"))
    except OSError:
        return False
    return True


def _is_locked(exc: sqlite3.OperationalError) -> bool:
    text = str(exc).lower()
    return "locked" in text or "busy" in text


def _is_corruption(exc: sqlite3.Error) -> bool:
    text = str(exc).lower()
    return "malformed" in text or "not a database" in text or "corrupt" in text


def _chunks(items: list[str], size: int) -> Iterator[list[str]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]
