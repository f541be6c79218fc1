"""Files and folders written whole or not at all: the one place that writes
bytes to disk.

* :func:`write_bytes` / :func:`write_text`: one file, atomically (a temporary
  file in the same folder, then ``rename``), and only when its content changed.
  Used by the commit store (:mod:`miner.mining.store`) and every writer of
  :mod:`miner.publish`.
* :class:`Staging`: a whole folder. A run writes into a staging folder beside
  its destination (``DEST.parent/.DEST.staging-<random>``, so on the same file
  system), seeded from the current folder by hard links (an unchanged file
  costs nothing; a writer replaces a file by ``rename``, which breaks the link
  and never touches the old tree), then swaps it in: on Linux atomically with
  ``renameat2(RENAME_EXCHANGE)``, elsewhere with two renames, and removes the
  old tree. A run killed at any point leaves the old folder or the new one,
  complete, and leftovers that the next run into the same folder removes.
* :func:`locked`: one run per destination (``fcntl.flock`` on a lock file in
  the cache folder keyed by the destination's real path, removed when
  released); a second run stops at once with one line.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import fcntl
import filecmp
import hashlib
import logging
import os
import re
import secrets
import stat
import tempfile
from collections.abc import Collection, Iterable, Iterator
from pathlib import Path

from miner.errors import OutputError
from miner.lifecycle import check_stop, signals_held
from miner.trees import carry, give, remove_tree, retire, seed

log = logging.getLogger(__name__)


def write_text(path: Path, text: str) -> bool:
    """Write ``text`` to ``path`` atomically unless it already holds it.

    Returns True when the file was (re)written.
    """
    return write_bytes(path, text.encode("utf-8", "surrogateescape"))


def write_bytes(path: Path, data: bytes) -> bool:
    """Write ``data`` to ``path`` atomically unless it already holds it.

    Returns True when the file was (re)written.
    """
    try:
        if path.read_bytes() == data:
            return False
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        Path(tmp).chmod(0o644)
        Path(tmp).replace(path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return True


#: Flags of a file that :func:`rewrite_bytes` creates: a new file (never
#: through a symbolic link), closed in the processes it forks.
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


def rewrite_bytes(path: str, data: bytes) -> bool:
    """Write ``data`` to the file ``path`` of a staging folder (mode 0644)
    unless it already holds it; True when it was (re)written.

    Not atomic, and faster than :func:`write_bytes` (no temporary file): for a
    staging folder only (:class:`Staging`), which no one reads before it is
    swapped in whole and which a failed run discards. A file there may be a
    hard link to the published one, so it is unlinked first, never written
    through; the published file keeps its bytes.

    Raises:
        OSError: it cannot be read, removed or written (its folder must exist).
    """
    try:
        # os, not pathlib: a site writes tens of thousands of files
        with open(path, "rb") as handle:  # noqa: PTH123
            if handle.read() == data:
                return False
        os.unlink(path)  # noqa: PTH108
    except FileNotFoundError:
        pass
    fd = os.open(path, _CREATE, 0o644)
    with os.fdopen(fd, "wb") as handle:
        os.fchmod(fd, 0o644)  # whatever the umask, as write_bytes
        handle.write(data)
    return True


def write_chunks(path: Path, chunks: Iterable[str]) -> tuple[bool, int]:
    """Write the text of ``chunks`` to ``path`` atomically, one chunk at a
    time (a file of many megabytes is never held whole), unless it already
    holds those bytes. Returns (whether the file was (re)written, its size
    in bytes)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    size = 0
    try:
        with os.fdopen(fd, "wb") as handle:
            for chunk in chunks:
                data = chunk.encode("utf-8", "surrogateescape")
                handle.write(data)
                size += len(data)
        try:
            same = path.stat().st_size == size and filecmp.cmp(tmp, path, shallow=False)
        except (FileNotFoundError, NotADirectoryError):
            same = False
        if same:
            Path(tmp).unlink()
            return False, size
        Path(tmp).chmod(0o644)
        Path(tmp).replace(path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return True, size


def _names(dest: Path) -> tuple[Path, str]:
    """The folder holding ``dest`` and ``dest``'s name, symbolic links resolved
    (the staging goes where the files are)."""
    real = Path(os.path.realpath(dest))
    return real.parent, real.name


def default_cache_dir() -> Path:
    """The cache folder: ``$RAISE_MINER_CACHE``, else
    ``$XDG_CACHE_HOME/raise-miner``, else ``~/.cache/raise-miner`` (not
    created here). Clones, the blob cache, the commit store, downloaded
    wheels and the lock files live there."""
    explicit = os.environ.get("RAISE_MINER_CACHE")
    if explicit:
        return Path(explicit).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base).expanduser() / "raise-miner"


def lock_path(dest: Path) -> Path:
    """The lock file of ``dest``: ``<cache>/locks/<name>-<hash>.lock``, keyed
    by the real path of ``dest`` (symbolic links resolved), so two paths to
    one folder share one lock and nothing is left beside the output."""
    real = os.path.realpath(dest)
    key = hashlib.sha256(os.fsencode(real)).hexdigest()[:24]
    name = re.sub(r"[^A-Za-z0-9._-]", "_", Path(real).name)[:40] or "root"
    return default_cache_dir() / "locks" / f"{name}-{key}.lock"


class BusyError(OutputError):
    """Another run holds the destination's lock."""


#: Locks held by this process: lock file -> (descriptor, depth).
_HELD: dict[str, tuple[int, int]] = {}
#: Flags of a lock file: never through a symbolic link, closed in children.
_LOCK_FLAGS = os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW


def _open_lock(dest: Path, path: Path, option: str) -> int:
    """A descriptor holding the lock of ``path`` (the file still at that
    path: a run that released and removed it meanwhile makes us try again).

    Raises:
        BusyError: another process holds it.
        OutputError: the lock file cannot be created or locked.
    """
    for _ in range(100):
        try:
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd = os.open(path, _LOCK_FLAGS, 0o600)
        except OSError as exc:
            raise OutputError(
                f"{dest}: cannot create the lock file {path} ({exc.strerror or exc}); "
                "set RAISE_MINER_CACHE to a writable folder"
            ) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            pid = re.match(rb"\d{1,10}", os.pread(fd, 32, 0))  # never printed raw
            holder = pid.group().decode() if pid else ""
            os.close(fd)
            if exc.errno in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                raise BusyError(
                    f"{dest}: another miner run (pid {holder or '?'}) is writing this folder; "
                    f"wait for it to end or pass another {option}"
                ) from None
            raise OutputError(f"{dest}: cannot lock {path} ({exc.strerror or exc})") from None
        if _same_file(fd, path):
            return fd
        os.close(fd)  # released and removed by its holder while we waited: again
    raise OutputError(f"{dest}: cannot lock {path} (it keeps being replaced)")


def _same_file(fd: int, path: Path) -> bool:
    """Whether ``path`` still names the file open as ``fd``."""
    try:
        named = path.lstat()
    except OSError:
        return False
    held = os.fstat(fd)
    return (named.st_dev, named.st_ino) == (held.st_dev, held.st_ino)


@contextlib.contextmanager
def locked(dest: Path, option: str = "--out") -> Iterator[None]:
    """Hold the lock of ``dest`` (re-entrant within a process); the lock file
    (:func:`lock_path`) is removed when it is released. ``option``: the
    command-line option that named ``dest`` (for the message).

    Raises:
        BusyError: another process holds it.
        OutputError: the lock file cannot be created.
    """
    path = lock_path(dest)
    key = str(path)
    if key in _HELD:
        fd, depth = _HELD[key]
        _HELD[key] = (fd, depth + 1)
        try:
            yield
        finally:
            fd, depth = _HELD[key]
            _HELD[key] = (fd, depth - 1)
        return
    fd = -1
    try:
        with signals_held():  # taken and recorded, or not taken: never a lock file left
            fd = _open_lock(dest, path, option)
            _HELD[key] = (fd, 1)
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        yield
    finally:
        if fd >= 0:
            with signals_held():  # nor between its removal and its release
                del _HELD[key]
                with contextlib.suppress(OSError):
                    path.unlink()  # still locked: a waiter that opened it tries again
                os.close(fd)  # releases the lock


def holds_lock(dest: Path) -> bool:
    """Whether this process holds the lock of ``dest``."""
    return str(lock_path(dest)) in _HELD


def free_bytes(path: Path) -> int:
    """Bytes an unprivileged process may still write on ``path``'s file system
    (of its nearest existing ancestor)."""
    probe = Path(path).absolute()
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    stats = os.statvfs(probe)
    return stats.f_bavail * stats.f_frsize


def tree_size(root: Path, rels: Iterator[str] | list[str] | set[str]) -> int:
    """Total bytes of the files ``rels`` under ``root`` (missing ones count 0)."""
    total = 0
    for rel in rels:
        with contextlib.suppress(OSError):
            total += (root / rel).stat().st_size
    return total


# -- swapping a whole folder ----------------------------------------------------

_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def exchange(a: Path, b: Path) -> bool:
    """Swap the folders ``a`` and ``b`` in one step (``renameat2`` with
    ``RENAME_EXCHANGE``); False when the system or file system cannot."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p]
    renameat2.argtypes += [ctypes.c_uint]
    done = renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE)
    if done == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EOPNOTSUPP):
        return False
    raise OSError(code, os.strerror(code), str(b))


def made_path(dest: Path) -> Path:
    """The record of the folders runs made beside ``dest`` and have not
    removed yet (``<cache>/locks/<name>-<hash>.made``, beside its lock file,
    one name a line): what a run killed before it cleaned up left, and
    nothing else, is what the next run removes."""
    return lock_path(dest).with_suffix(".made")


#: Folders this process has published (swapped in), in order: what a stop
#: signal's message names.
PUBLISHED: list[Path] = []
#: Characters of the random part of a name a run makes beside its destination.
RANDOM_CHARS = 8


class LateFileError(OutputError):
    """A file appeared in the destination while a run wrote it, at a path the
    run writes too: nothing was published."""


class Staging:
    """The staging folder of one destination folder (module docstring). Call
    its methods with the destination's lock held (:func:`locked`)."""

    def __init__(self, dest: Path) -> None:
        self.dest = Path(dest).absolute()
        self.parent, self.name = _names(dest)
        self.real = self.parent / self.name
        self.root: Path | None = None
        self.journal = made_path(self.real)
        self.seeded: dict[str, int] = {}
        """Folder-relative path -> inode of every entry seeded (not folders)."""
        self.owner: tuple[int, int] | None = None
        """(uid, gid) of the folder replaced (None: there was none)."""

    @property
    def prefix(self) -> str:
        return f".{self.name}.staging-"

    @property
    def old_prefix(self) -> str:
        return f".{self.name}.old-"

    def made(self) -> list[str]:
        """Names beside the destination that runs made and did not remove
        (:func:`made_path`; never a name without this destination's staging
        or old prefix)."""
        try:
            text = self.journal.read_text(encoding="utf-8", errors="surrogateescape")
        except OSError:
            return []
        ours = (self.prefix, self.old_prefix)
        return [name for name in text.splitlines() if name.startswith(ours) and "/" not in name]

    def _note(self, *, add: str | None = None, drop: str | None = None) -> None:
        """Record ``add`` as made, ``drop`` as gone (the record is removed
        when it lists nothing)."""
        with signals_held():  # a short write: the record is never left half-updated
            names = [name for name in self.made() if name != drop]
            if add is not None and add not in names:
                names.append(add)
            if names:
                write_text(self.journal, "".join(f"{name}\n" for name in names))
            else:
                self.journal.unlink(missing_ok=True)

    def reserve(self, prefix: str) -> Path:
        """A new name beside the destination, ``prefix`` and
        :data:`RANDOM_CHARS` random characters, recorded as made before
        anything is made there (so a kill at any point leaves nothing
        unrecorded)."""
        path = _free_name(self.parent, prefix)
        self._note(add=path.name)
        return path

    def leftovers(self) -> list[Path]:
        """What killed runs left beside the destination: the recorded names
        that exist (a user's ``.OUT.staging-x`` is not one)."""
        return [self.parent / n for n in self.made() if os.path.lexists(self.parent / n)]

    def recover(self) -> None:
        """Put back an old folder that a run killed between the two renames
        of the fallback swap left aside, and remove every other leftover;
        finished even when a stop signal cuts it (raised once it is done), so
        a stopped run never leaves the record of what it was removing."""
        try:
            self._recover()
        except BaseException:
            with signals_held():
                self._recover()
            raise

    def _recover(self) -> None:
        """:meth:`recover`'s work; running it twice does it once."""
        names = self.made()
        olds = [p for p in self.leftovers() if p.name.startswith(self.old_prefix)]
        if not os.path.lexists(self.real) and len(olds) == 1:
            olds[0].rename(self.real)
        for name in names:
            remove_tree(self.parent / name)
        if names:
            self.journal.unlink(missing_ok=True)

    def open(self) -> Path:
        """Create the staging folder, seeded with hard links of every entry of
        the destination (but temporary files); returns it.

        Raises:
            OutputError: it cannot be created.
        """
        try:
            self.parent.mkdir(parents=True, exist_ok=True)
            self.recover()
            with signals_held():  # no stop between the folder's record and its creation
                root = self.reserve(self.prefix)
                root.mkdir(mode=0o700)
                self.root = root
            mode = 0o777 & ~_umask()
            if self.real.is_dir():
                info = self.real.stat()
                mode, self.owner = stat.S_IMODE(info.st_mode), (info.st_uid, info.st_gid)
                seed(str(self.real), str(root), self.seeded)
            root.chmod(mode)
        except OSError as exc:
            self.discard()
            raise OutputError(
                f"{self.dest}: cannot prepare the new output beside it in {self.parent} "
                f"({exc.strerror or exc}); pass --out inside a writable folder with free space"
            ) from None
        except BaseException:  # a stop signal while seeding: leave nothing behind
            self.discard()
            raise
        return root

    def swap(self, owned: Collection[str] = ()) -> None:
        """Put the staging folder in the destination's place and remove the
        old tree: of it, only the entries of ``owned`` (folder-relative paths
        the tool wrote there), the seeded ones and the ones carried over.
        An entry that appeared in the destination since it was seeded is
        carried into the new tree first (a hard link); one at a path the run
        wrote too stops the swap (:class:`LateFileError`).

        Raises:
            LateFileError: see above; the new tree is kept beside, renamed.
            OutputError: the rename failed (the old folder is left as it was).
        """
        assert self.root is not None, "swap before open"
        old: Path | None = None
        swapped = False
        try:
            # a stop signal held here is raised when the block ends: the old
            # tree put aside is removed all the same (the finally below)
            with signals_held():
                check_stop()  # a stop signal swallowed earlier: never published
                self._prepare(owned)
                old = self._exchange()
                self.root = None
                swapped = True
                PUBLISHED.append(self.dest)
        except OSError as exc:
            if old is not None and not os.path.lexists(self.real):
                with contextlib.suppress(OSError):
                    old.rename(self.real)  # the fallback's first rename, undone
            self.discard()
            raise OutputError(
                f"{self.dest}: cannot put the new output in place ({exc.strerror or exc}); "
                "the previous output is kept"
            ) from None
        except BaseException:  # a stop signal before the swap: nothing published
            if not swapped:
                self.discard()
            raise
        finally:
            if swapped and old is not None:
                self._retire_to_the_end(old, owned)

    def _prepare(self, owned: Collection[str]) -> None:
        """Before the swap: carry what appeared in the destination since it
        was seeded into the new tree, and give the new tree the replaced
        folder's owner.

        Raises:
            LateFileError: a late file is at a path the run wrote.
        """
        assert self.root is not None
        if self.real.is_dir() and not self.real.is_symlink():
            clash = carry(str(self.real), str(self.root), self.seeded, frozenset(owned), "")
            if clash is not None:
                self._refuse(clash)
        if self.owner is not None:
            give(self.root, self.owner)

    def _refuse(self, clash: str) -> None:
        """Keep the new tree beside the destination under a name of its own
        (no later run removes it) and raise :class:`LateFileError`."""
        assert self.root is not None
        kept = _free_name(self.parent, f"{self.name}.new-")
        self.root.rename(kept)
        self._note(drop=self.root.name)
        self.root = None
        raise LateFileError(
            f"{self.dest}: {clash} was written into it while this run wrote it, and the run "
            "writes that file too; nothing published: the previous output and that file are "
            f"kept, the new output is in {kept}; move the file and run again"
        )

    def _exchange(self) -> Path | None:
        """The swap itself; returns where the old tree now is (None: there
        was none)."""
        assert self.root is not None
        if not os.path.lexists(self.real):
            self.root.rename(self.real)
            self._note(drop=self.root.name)
            return None
        if exchange(self.root, self.real):
            return self.root
        old = self.reserve(self.old_prefix)
        self.real.rename(old)
        self.root.rename(self.real)
        self._note(drop=self.root.name)
        return old

    def _retire_to_the_end(self, old: Path, owned: Collection[str]) -> None:
        """Remove the old tree (:func:`_retire`), finished even when a stop
        signal cuts it (raised once it is done); what it keeps (files that
        appeared during the swap at paths the new tree has too) goes to a
        name of its own beside the destination, with a warning. One it
        cannot remove stays recorded: the next run removes it."""
        mine = frozenset(owned)
        try:
            try:
                kept = retire(str(old), str(self.real), self.seeded, mine, "")
            except BaseException:
                with signals_held():
                    kept = retire(str(old), str(self.real), self.seeded, mine, "")
                    self._keep_late(old, kept)
                raise
            with signals_held():  # a stop here would leave the old tree recorded
                self._keep_late(old, kept)
        except OSError as exc:
            log.warning("%s: the previous output is left in %s (%s)", self.dest, old, exc)

    def _keep_late(self, old: Path, kept: bool) -> None:
        """Drop the emptied old tree, or keep what it holds under a name of
        its own (no later run removes it)."""
        if kept:
            aside = _free_name(self.parent, f"{self.name}.late-")
            old.rename(aside)
            log.warning(
                "%s: files written into it during the swap, at paths the new output has "
                "too, are kept in %s",
                self.dest,
                aside,
            )
        else:
            remove_tree(old)  # empty but for what could not be deleted
        self._note(drop=old.name)

    def discard(self) -> None:
        """Remove the staging folder (after a failure or an interruption); a
        stop signal while removing it lets the removal finish first."""
        if self.root is not None:
            root, self.root = self.root, None
            try:
                _remove_to_the_end(root)
            finally:
                self._note(drop=root.name)


def _free_name(parent: Path, prefix: str) -> Path:
    """``parent / (prefix + random characters)`` where nothing is yet."""
    while True:
        path = parent / f"{prefix}{secrets.token_hex(RANDOM_CHARS // 2)}"
        if not os.path.lexists(path):
            return path


def _remove_to_the_end(path: Path) -> None:
    """:func:`remove_tree`, finished even when a stop signal cuts it: the
    signal's exception is raised once the folder is gone."""
    try:
        remove_tree(path)
    except BaseException:
        with signals_held():
            remove_tree(path)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def inside(root: Path, rel: str) -> Path:
    """``root / rel`` when ``rel`` is a plain relative path that stays under
    ``root`` (no ``..``, not absolute, no symbolic link on the way).

    Raises:
        ValueError: it is not.
    """
    parts = rel.split("/")
    if not rel or rel.startswith("/") or any(p in ("", ".", "..") for p in parts):
        raise ValueError(f"not a relative path: {rel!r}")
    path = root.joinpath(*parts)
    probe = root
    for part in parts[:-1]:
        probe = probe / part
        if probe.is_symlink():
            raise ValueError(f"{rel!r}: {probe} is a symbolic link")
    return path


def remove_listed(root: Path, rels: set[str] | list[str]) -> int:
    """Delete the files ``rels`` under ``root`` (paths that leave ``root`` or
    run through a symbolic link are left alone), then the folders this left
    empty; returns how many files were deleted."""
    removed = 0
    folders: set[Path] = set()
    for rel in sorted(rels):
        try:
            path = inside(root, rel)
        except ValueError:
            continue
        if path.is_file() or path.is_symlink():
            path.unlink()
            removed += 1
            folders.update(p for p in path.parents if p != root and root in p.parents)
    for folder in sorted(folders, key=lambda p: len(p.parts), reverse=True):
        with contextlib.suppress(OSError):
            folder.rmdir()  # only when empty
    return removed
