"""Walks of an output folder's tree, on ``str`` paths and ``os`` calls (a
site has tens of thousands of files): what :class:`miner.files.Staging`
does to the trees it swaps.

* :func:`seed`: hard-link a folder's entries into a new one (any kind of
  file: a FIFO or a socket a reader put there too), noting each entry's
  inode;
* :func:`carry`: before the swap, bring into the new tree what appeared in
  the old one since it was seeded;
* :func:`retire`: after the swap, delete of the old tree only what the tool
  wrote there, what was seeded and what was carried, and move what is left;
* :func:`give`: give the new tree the owner of the folder it replaces.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import stat
from pathlib import Path

#: Temporary files of :func:`miner.files.write_bytes` (``.<name>.<8 random characters>``)
#: and of the old write check (``.write-test.<8>``): never carried into a new
#: output, so those a killed run of an older version left behind go away.
TEMP_FILE = re.compile(
    r"^\.(?:.+\.(?:md|json|jsonl|html|js|css|txt|svg|nojekyll)|write-test)\.[a-z0-9_]{8}$"
)
#: Leftovers of a staging of a folder inside this one (``.site.staging-x``).
STAGING_DIR = re.compile(r"^\..+\.(?:staging|old)-[A-Za-z0-9_]+$")
#: Lock files an older version left inside an output (``.site.lock``, a pid
#: and nothing else): not carried over.
LOCK_FILE = re.compile(r"^\.[^/]+\.lock$")


def remove_tree(path: Path) -> None:
    """Delete a folder and everything under it (missing: nothing to do)."""
    if path.is_symlink() or path.is_file():
        path.unlink(missing_ok=True)
    elif path.exists():
        shutil.rmtree(path, ignore_errors=True)


def is_leftover(entry: os.DirEntry[str]) -> bool:
    """Whether a file in an output folder is what a killed run left (a
    temporary file of :func:`miner.files.write_bytes`, the pid file of an older
    version's lock): never carried into a new output. A reader's file of
    such a name (``.notes.lock`` with words in it) is not one."""
    if not entry.is_file(follow_symlinks=False):
        return False
    if TEMP_FILE.match(entry.name):
        return True
    if not LOCK_FILE.match(entry.name) or entry.stat(follow_symlinks=False).st_size > 16:
        return False
    try:
        with open(entry.path, "rb") as handle:  # noqa: PTH123
            return re.fullmatch(rb"\d+\n?", handle.read(17)) is not None
    except OSError:
        return False


def link(entry: os.DirEntry[str], dst: str) -> None:
    """Put ``entry`` at ``dst``: a hard link (any kind of file: a symbolic
    link, a FIFO, a socket), else a copy (a symbolic link as a link, a FIFO
    or a socket made again with its mode)."""
    try:
        os.link(entry.path, dst, follow_symlinks=False)
    except OSError:
        info = entry.stat(follow_symlinks=False)
        if stat.S_ISLNK(info.st_mode):
            os.symlink(os.readlink(entry.path), dst)
        elif stat.S_ISREG(info.st_mode):
            shutil.copy2(entry.path, dst, follow_symlinks=False)
        else:
            os.mknod(dst, info.st_mode, info.st_rdev)


def seed(source: str, target: str, seeded: dict[str, int], prefix: str = "") -> None:
    """Hard-link every entry under ``source`` into ``target`` (the same tree
    of folders, same modes; :func:`link`), leaving out temporary files and
    staging leftovers; notes each entry's inode in ``seeded`` (path under
    ``source`` -> inode)."""
    with os.scandir(source) as entries:
        for entry in entries:
            dst = os.path.join(target, entry.name)
            if entry.is_dir(follow_symlinks=False):
                if STAGING_DIR.match(entry.name):
                    continue
                os.mkdir(dst)
                seed(entry.path, dst, seeded, f"{prefix}{entry.name}/")
                os.chmod(dst, stat.S_IMODE(entry.stat(follow_symlinks=False).st_mode))
            elif not is_leftover(entry):
                seeded[prefix + entry.name] = entry.inode()
                link(entry, dst)


def carry(
    source: str, target: str, seeded: dict[str, int], owned: frozenset[str], prefix: str
) -> str | None:
    """Carry into the new tree ``target`` each entry of the current tree
    ``source`` that appeared there since it was seeded (neither a seeded
    entry nor one of ``owned``, the tool's own); returns the first such
    entry at a path where the run wrote an entry of its own (path under
    ``source``), else None."""
    with os.scandir(source) as entries:
        for entry in entries:
            rel, dst = prefix + entry.name, os.path.join(target, entry.name)
            if entry.is_dir(follow_symlinks=False):
                if STAGING_DIR.match(entry.name):
                    continue
                clash = carry(entry.path, dst, seeded, owned, f"{rel}/")
            elif rel in owned or seeded.get(rel) == entry.inode() or is_leftover(entry):
                continue
            else:
                clash = carry_one(entry, dst, seeded, rel)
            if clash is not None:
                return clash
    return None


def carry_one(entry: os.DirEntry[str], dst: str, seeded: dict[str, int], rel: str) -> str | None:
    """:func:`carry` of one late entry (path ``rel``): None once it is at
    ``dst`` in the new tree (noted in ``seeded``, as if it had been seeded),
    or ``rel`` when the run wrote ``dst`` (an entry there that is not the
    seeded one)."""
    try:
        there: int | None = os.lstat(dst).st_ino
    except FileNotFoundError:
        there = None
    except NotADirectoryError:
        return rel
    if there is not None and there != seeded.get(rel):
        return rel
    try:
        make_folders(os.path.dirname(dst), os.path.dirname(entry.path))
    except (FileExistsError, NotADirectoryError):
        return rel
    if there is not None:
        os.unlink(dst)
    link(entry, dst)
    seeded[rel] = entry.inode()
    return None


def make_folders(target: str, source: str) -> None:
    """Make the folder ``target`` and those above it that are missing, each
    with the mode of its counterpart above ``source``."""
    if os.path.isdir(target):
        return
    make_folders(os.path.dirname(target), os.path.dirname(source))
    os.mkdir(target)
    os.chmod(target, stat.S_IMODE(os.stat(source).st_mode))


def retire(old: str, new: str, seeded: dict[str, int], owned: frozenset[str], prefix: str) -> bool:
    """Empty the old tree ``old`` after the swap: delete the entries of
    ``owned``, the seeded ones, leftovers and those that are in the new
    tree ``new`` (the same inode); move any other (written during the swap)
    to its place in ``new`` when that is free. Removes the folders it
    empties (not ``old``); True when something was kept."""
    kept = False
    with os.scandir(old) as entries:
        for entry in entries:
            rel, dst = prefix + entry.name, os.path.join(new, entry.name)
            if entry.is_dir(follow_symlinks=False):
                if STAGING_DIR.match(entry.name):
                    remove_tree(Path(entry.path))
                    continue
                inner = retire(entry.path, dst, seeded, owned, f"{rel}/")
                kept = kept or inner
                if not inner:
                    with contextlib.suppress(OSError):
                        os.rmdir(entry.path)
                continue
            if rel in owned or seeded.get(rel) == entry.inode() or is_leftover(entry):
                os.unlink(entry.path)
            elif carry_one(entry, dst, seeded, rel) is None:
                os.unlink(entry.path)  # now linked in the new tree
            else:
                kept = True
    return kept


def give(root: Path, owner: tuple[int, int]) -> None:
    """Give every entry under ``root`` (``root`` too) that this process made
    the ``owner`` (uid, gid) of the folder it replaces, when that is not
    this process's (a run as root into a user's folder): its files stay
    its owner's. Entries of other owners (seeded links) are left alone; a
    process that may not give files away changes nothing."""
    me = (os.geteuid(), os.getegid())
    if owner == me:
        return
    try:
        give_tree(str(root), owner, me[0])
    except PermissionError:
        return


def give_tree(path: str, owner: tuple[int, int], me: int) -> None:
    """:func:`give` under ``path``: each entry whose owner is the user
    ``me`` gets ``owner`` (uid, gid); symbolic links themselves, never their
    targets.

    Raises:
        PermissionError: this process may not give files away.
    """
    if os.lstat(path).st_uid == me:
        os.lchown(path, *owner)
    with os.scandir(path) as entries:
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                give_tree(entry.path, owner, me)
            elif entry.stat(follow_symlinks=False).st_uid == me:
                os.lchown(entry.path, *owner)
