"""Publishing an output folder as a whole, and owning only what was written.

Every writer of a mined folder (``miner mine``, ``history``, ``release``) and
of a site (``miner site``, ``mine --site``) goes through :func:`publication`:

1. **Lock.** One run per folder (:func:`miner.files.locked`); a second run
   stops at once: ``another miner run (pid N) is writing this folder``, exit 2.
2. **Ownership.** The folder must be new, empty, or one raise-miner wrote: its
   ``manifest.json`` says ``"tool": {"name": "raise-miner"}``. A mined folder's
   manifest lists, under ``written``, every file the run wrote there (folder-
   relative, itself included); a site's own ``manifest.json`` (``"kind":
   "site"``) does the same for the site. Files a previous run wrote that the
   new run does not write are deleted; nothing else ever is (a reader's notes,
   ``diffs/`` of ``miner diff``, a site published in a subfolder).
3. **Staging and swap.** The run writes into a staging folder seeded from the
   current one by hard links, then swaps it in whole
   (:class:`miner.files.Staging`): a kill at any point leaves the old output
   or the new one, complete; an error or an interruption removes the staging.

Outputs written before the file list existed (a manifest without
``written``) are read as owning the files a run of that version wrote: cards
and records named by error id, the module pages of the audiences, the fixed
record names (:func:`legacy_owned`).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from miner import TEMPLATES, __version__
from miner.errors import OutputError
from miner.files import (
    RANDOM_CHARS,
    Staging,
    free_bytes,
    inside,
    locked,
    remove_listed,
    rewrite_bytes,
    tree_size,
    write_chunks,
)
from miner.trees import STAGING_DIR, TEMP_FILE

MANIFEST = "manifest.json"
#: Written into every published folder: GitHub Pages then serves the files as
#: they are (no Jekyll, so no Liquid reads ``{{`` in a message, and pages whose
#: name starts with ``_`` are served).
NOJEKYLL = ".nojekyll"
#: The README of a mined folder, written by every run (what the folder holds).
README = "README.md"
#: Folder kinds: a mined folder (records, cards) and an HTML site.
RECORDS = "records"
SITE = "site"
#: Free space wanted beyond the estimate of the new output's size (bytes).
SPACE_MARGIN = 1 << 20

_ID = r"[0-9a-f]{16}"
_AUDIENCES = "(?:internal|abstract|test|script)"
#: What a run of a version without the file list wrote, per folder kind.
_LEGACY = {
    RECORDS: re.compile(
        rf"^(?:errors/{_ID}\.md|api/errors/{_ID}\.json|{_AUDIENCES}/[^/]+\.md"
        r"|schema/[^/]+-v\d+\.json|manifest\.json|sites\.jsonl|analyses\.jsonl|config\.json"
        r"|index\.md|history\.json|releases\.json|releases\.md)$"
    ),
    SITE: re.compile(
        rf"^(?:errors/{_ID}\.html|api/errors/{_ID}\.json|{_AUDIENCES}/[^/]+\.html"
        r"|api/schema/[^/]+-v\d+\.json|api/index\.json|index\.html|search-data\.js"
        r"|static/.+)$"
    ),
}
#: Diff pages of a legacy folder, owned when their JSON is there too.
_LEGACY_DIFFS = {
    RECORDS: (re.compile(r"^diffs/([^/]+)\.(?:md|json)$"), "releases.json"),
    SITE: (re.compile(r"^diffs/([^/]+)\.html$|^api/diffs/([^/]+)\.json$"), "api/index.json"),
}


def read_manifest(folder: Path) -> dict[str, Any] | None:
    """``folder/manifest.json`` when raise-miner wrote it, else None."""
    try:
        data = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    tool = data.get("tool")
    if not isinstance(tool, dict) or tool.get("name") != "raise-miner":
        return None
    return data


def kind_of(manifest: dict[str, Any]) -> str:
    """``site`` for a site's manifest, ``records`` for a mined folder's."""
    return SITE if manifest.get("kind") == SITE else RECORDS


def _files(folder: Path) -> Iterator[str]:
    for path in sorted(folder.rglob("*")):
        if path.is_file() and not path.is_symlink():
            yield path.relative_to(folder).as_posix()


def legacy_owned(folder: Path, kind: str) -> set[str]:
    """The files a run of a version without the file list wrote in ``folder``
    (module docstring)."""
    pattern = _LEGACY[kind]
    diffs, marker = _LEGACY_DIFFS[kind]
    present = set(_files(folder)) if folder.is_dir() else set()
    owned = {rel for rel in present if pattern.match(rel)}
    if marker in present:
        owned |= {rel for rel in present if diffs.match(rel)}
    return owned


def owned_by(folder: Path, manifest: dict[str, Any] | None, kind: str) -> set[str]:
    """The files ``manifest`` (``folder``'s) says raise-miner wrote there."""
    if manifest is None:
        return set()
    listed = manifest.get("written")
    if isinstance(listed, list) and all(isinstance(rel, str) for rel in listed):
        return set(listed)
    return legacy_owned(folder, kind)


def readme_text() -> str:
    """The ``README.md`` every mined folder gets, from
    ``templates/output-README.md``; the project's own ``output/README.md`` is
    this text, so a fresh clone's ``output/`` is a folder the tool may write."""
    return (TEMPLATES / "output-README.md").read_text(encoding="utf-8")


def holds_only_readme(folder: Path) -> bool:
    """Whether ``folder`` holds nothing but the README a run would write
    there (:func:`readme_text`), byte for byte."""
    entries = list(folder.iterdir())
    if [e.name for e in entries] != [README] or not entries[0].is_file():
        return False
    if entries[0].is_symlink():
        return False
    return entries[0].read_bytes() == readme_text().encode("utf-8")


def _example(folder: Path) -> str:
    for rel in _files(folder):
        return rel
    return next(iter(sorted(p.name for p in folder.iterdir())), "")


def check_folder(dest: Path, kind: str) -> dict[str, Any] | None:
    """Whether ``dest`` may be written as a folder of ``kind``: returns its
    manifest when raise-miner wrote it, None when it is new or empty.

    Raises:
        OutputError: it is not a folder, holds files raise-miner did not
            write, or is a folder of the other kind.
    """
    if not dest.exists():
        return None
    if not dest.is_dir():
        raise OutputError(
            f"{dest}: cannot write the output folder (not a folder); pass --out with a folder"
        )
    manifest = read_manifest(dest)
    if manifest is not None:
        if kind_of(manifest) != kind:
            other = "an HTML site" if kind == RECORDS else "a mined output folder"
            raise OutputError(
                f"{dest}: holds {other}, not {'a site' if kind == SITE else 'mined records'}; "
                "pass another folder"
            )
        return manifest
    if kind == RECORDS and holds_only_readme(dest):
        return None  # the tool's own README and nothing else: a new folder
    if any(dest.iterdir()):
        raise OutputError(
            f"{dest}: not empty and not written by raise-miner (no manifest.json of its own; "
            f"it holds {_example(dest)}); pass a new or empty folder, or one miner wrote"
        )
    return None


#: How many random characters follow a prefix in a name a run makes beside
#: ``OUT``: the staging folder is ``.OUT.staging-`` and these (the longest).
TEMP_RANDOM = RANDOM_CHARS


def _name_max(folder: Path) -> int | None:
    """The longest file name (bytes) the file system of ``folder`` accepts
    (``NAME_MAX``), or None when it does not say."""
    try:
        return os.pathconf(folder, "PC_NAME_MAX")
    except (OSError, ValueError):
        return None


def check_place(out: Path) -> None:
    """Check, before any work, where ``out`` is: not the current folder nor
    one holding it (publishing replaces the folder: the shell that ran the
    tool would be left in a deleted one), and no name on its path, nor the
    staging folder's name beside it (``.NAME.staging-`` and
    :data:`TEMP_RANDOM` characters), longer than its file system allows.

    Raises:
        OutputError: either fails.
    """
    out = Path(out).absolute()
    real = Path(os.path.realpath(out))
    cwd = Path(os.path.realpath(Path.cwd()))
    if real == cwd or real in cwd.parents:
        where = (
            "the current folder" if real == cwd else f"a folder holding the current folder {cwd}"
        )
        raise OutputError(
            f"{out}: is {where}, which the run would replace; pass --out with a new "
            "folder (e.g. --out ./out), or run from outside it"
        )
    _check_names(out, real)


def _exists(path: Path) -> bool:
    """Whether ``path`` exists; False for a name too long to look up."""
    try:
        return path.exists()
    except OSError:
        return False


def _check_names(out: Path, real: Path) -> None:
    """:func:`check_place`'s name lengths (``real``: ``out`` resolved)."""
    probe = real
    while not _exists(probe) and probe != probe.parent:
        probe = probe.parent
    limit = _name_max(probe if probe.is_dir() else probe.parent)
    if limit is None:
        return
    extra = len(os.fsencode(Staging(real).prefix)) + TEMP_RANDOM - len(os.fsencode(real.name))
    new = real.relative_to(probe).parts if probe != real else (real.name,)
    for index, part in enumerate(new, 1 - len(new)):
        size = len(os.fsencode(part))
        if index < 0 and size > limit:
            raise OutputError(
                f"{out}: a folder name on this path is {size} bytes long; its file system "
                f"allows {limit}; pass --out with shorter names"
            )
        if index == 0 and size + extra > limit:
            raise OutputError(
                f"{out}: the folder's name is {size} bytes long; its file system allows "
                f"{limit} bytes for a name and the staging folder beside it "
                f"(.NAME.staging-XXXXXXXX) adds {extra}, so at most {limit - extra}; "
                "pass --out with a shorter name"
            )


def unwritable(folder: Path) -> str | None:
    """Why the existing ``folder`` cannot be written: ``read-only file
    system`` (a read-only mount), ``permission denied``; None when it can."""
    with contextlib.suppress(OSError):
        if os.statvfs(folder).f_flag & os.ST_RDONLY:
            return "read-only file system"
    if not os.access(folder, os.W_OK | os.X_OK):
        return "permission denied"
    return None


def check_site_inside(out: Path, dest: Path) -> None:
    """Check that the site ``dest``, inside the mined folder ``out``, can be
    written: ``out`` is published again as a whole, so it and the folder
    holding it must be writable (``miner site`` of a mined folder on a
    read-only mount writes its site elsewhere: ``--dest``).

    A missing ``out`` is not checked here: reading its records says what is
    missing.

    Raises:
        OutputError: either is not.
    """
    real = Path(os.path.realpath(out))
    if not real.is_dir():
        return
    why = unwritable(real) or unwritable(real.parent)
    if why is not None:
        raise OutputError(
            f"{dest}: cannot write the site into the mined folder {out} ({why}); "
            "pass --dest with a writable folder outside it"
        )


def check_writable(out: Path) -> None:
    """Check, before any work and without writing anything, that ``out`` can
    be created or written: it is a folder (or does not exist yet), its nearest
    existing ancestor accepts new files, and the folder holding it accepts the
    staging folder and the lock file.

    Raises:
        OutputError: ``out`` cannot be created or written, or is not a place
            for an output folder (:func:`check_place`).
    """
    check_place(out)
    out = Path(out).absolute()
    real = Path(os.path.realpath(out))
    probe = real
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    problem = None
    if probe.exists() and not probe.is_dir():
        problem = "not a folder" if probe == real else f"{probe} is not a folder"
    elif (why := unwritable(probe)) is not None:
        problem = why if probe == real else f"{probe} is not writable ({why})"
    elif probe == real and not os.access(real.parent, os.W_OK | os.X_OK):
        problem = f"{real.parent} is not writable: the new output is prepared beside it"
    elif probe == real and real.parent.exists() and real.stat().st_dev != real.parent.stat().st_dev:
        problem = "a mount point: the new output is prepared beside it; pass a folder inside it"
    if problem is not None:
        raise OutputError(
            f"{out}: cannot write the output folder ({problem}); pass --out with a writable folder"
        )


def check_report_folder(folder: Path, names: Sequence[str], option: str = "--out") -> None:
    """Check, before any work and without writing anything, that the files
    ``names`` can be written into ``folder`` (each atomically, through a
    temporary file ``.NAME.`` and :data:`TEMP_RANDOM` characters beside it):
    ``folder`` is a folder or can be made, writable, and each temporary
    name fits its file system's ``NAME_MAX``. ``option`` names ``folder``
    on the command line.

    Raises:
        OutputError: one of them fails.
    """
    real = Path(os.path.realpath(folder))
    probe = real
    while not _exists(probe) and probe != probe.parent:
        probe = probe.parent
    problem = None
    if not probe.is_dir():
        problem = "not a folder" if probe == real else f"{probe} is not a folder"
    elif (why := unwritable(probe)) is not None:
        problem = why if probe == real else f"{probe} is not writable ({why})"
    if problem is not None:
        raise OutputError(f"{folder}: cannot write into it ({problem}); pass a writable {option}")
    limit = _name_max(probe)
    for name in names:
        size = len(os.fsencode(name)) + 2 + TEMP_RANDOM  # .NAME.XXXXXXXX
        if limit is not None and size > limit:
            raise OutputError(
                f"{folder}: the file name {name!r} is too long for its file system "
                f"({size} bytes with its temporary file's; it allows {limit}); "
                "name the revisions with shorter names (a commit id, a tag)"
            )


def check_output(out: Path, kind: str = RECORDS) -> dict[str, Any] | None:
    """Every check that can be made before the work: writable, ours (or new or
    empty), and free space for the new output (estimated as the size of the
    current one, its site included). Returns the current manifest (None: no
    output yet).

    Raises:
        OutputError: one of them fails.
    """
    check_writable(out)
    manifest = check_folder(out, kind)
    if manifest is not None:
        need = tree_size(out, owned_by(out, manifest, kind)) + SPACE_MARGIN
        site = read_manifest(out / "site")
        if kind == RECORDS and site is not None and kind_of(site) == SITE:
            need += tree_size(out / "site", owned_by(out / "site", site, SITE))
        free = free_bytes(out)
        if free < need:
            raise OutputError(
                f"{out}: {free / 2**20:.1f} MiB free on its file system; the new output needs "
                f"about {need / 2**20:.1f} MiB (the size of the current one); free some space"
            )
    return manifest


@dataclass
class Folder:
    """The files of one owned folder being written (inside a staging folder)."""

    root: Path
    owned: set[str]
    """What raise-miner wrote there before (from the folder's manifest)."""
    label: Path
    """The folder's published path, for messages."""
    written: set[str] = field(default_factory=set)
    counts: dict[str, int] = field(
        default_factory=lambda: {"written": 0, "unchanged": 0, "removed": 0, "bytes": 0}
    )
    seconds: float = 0.0
    """Wall time spent writing files (and comparing them with the old ones)."""
    record: list[tuple[str, str | bytes]] | None = None
    """When a list, every ``(path, text)`` written is appended to it, in
    order (what :func:`replay` writes again)."""
    made: set[str] = field(default_factory=set)
    """Folder-relative folders known to exist and not to be symbolic links."""
    on_write: Callable[[str], None] | None = None
    """Called with each folder-relative path once it is written (progress)."""

    def _path(self, rel: str) -> Path:
        """``root / rel`` as :func:`miner.files.inside` checks it (its folders
        made), each folder checked and made once per run.

        Raises:
            ValueError: ``rel`` leaves the folder or runs through a link.
        """
        head, _, _ = rel.rpartition("/")
        if head in self.made:
            if rel.startswith("/") or rel[len(head) + 1 :] in ("", ".", ".."):
                raise ValueError(f"not a relative path: {rel!r}")
            return self.root / rel
        path = inside(self.root, rel)
        path.parent.mkdir(parents=True, exist_ok=True)
        self.made.add(head)
        return path

    def write(self, rel: str, text: str | bytes | Iterable[str]) -> bool:
        """Write ``text`` to ``rel`` (when it changed); True when it did.
        ``text`` may be an iterable of chunks (the lines of a JSON Lines
        file), written as they come unless the folder records its files, or
        bytes (a compressed file), written as they are.

        Raises:
            OutputError: it cannot be written (the old output is kept).
        """
        start = time.perf_counter()
        if not isinstance(text, (str, bytes)) and self.record is not None:
            text = "".join(text)
        try:
            try:
                path = self._path(rel)
            except ValueError as exc:
                raise OutputError(f"{self.label}: refusing to write {exc}") from None
            if isinstance(text, (str, bytes)):
                data = text if isinstance(text, bytes) else text.encode("utf-8", "surrogateescape")
                changed, size = rewrite_bytes(str(path), data), len(data)
                del data
            else:
                changed, size = write_chunks(path, text)
        except OSError as exc:
            raise OutputError(
                f"{self.label}: cannot write {rel} ({exc.strerror or exc}); nothing was "
                "published, the previous output is kept; check permissions and free space"
            ) from None
        self.seconds += time.perf_counter() - start
        if self.record is not None:
            assert isinstance(text, (str, bytes))
            self.record.append((rel, text))
        self.written.add(rel)
        self.counts["written" if changed else "unchanged"] += 1
        self.counts["bytes"] += size
        if self.on_write is not None:
            self.on_write(rel)
        return changed

    def listing(self) -> list[str]:
        """Every file written, the manifest included, sorted."""
        return sorted(self.written | {MANIFEST})

    def finish(self, manifest: Callable[[list[str]], str]) -> dict[str, int]:
        """Write ``.nojekyll`` and the manifest (``manifest(listing)``, last),
        then delete what a previous run wrote that this one did not; returns
        the counts (``written``, ``unchanged``, ``removed``, ``bytes``)."""
        self.write(NOJEKYLL, "")
        self.write(MANIFEST, manifest(self.listing()))
        stale = self.owned - self.written
        try:
            self.counts["removed"] += remove_listed(self.root, stale)
        except OSError as exc:
            raise OutputError(
                f"{self.label}: cannot remove stale files ({exc.strerror or exc})"
            ) from None
        return dict(self.counts)


@dataclass
class Publication:
    """One folder being published: its staging root and its own files."""

    dest: Path
    kind: str
    root: Path
    previous: dict[str, Any] | None
    """The manifest of the output being replaced (None: there was none)."""
    folder: Folder
    inner: dict[str, Folder] = field(default_factory=dict)
    """The folders inside this one being written (:meth:`subfolder`), by
    relative path."""

    def subfolder(self, rel: str, kind: str = SITE) -> Folder:
        """A folder of ``kind`` inside this one (the site of a mined folder),
        with its own manifest and file list.

        Raises:
            OutputError: it holds files raise-miner did not write.
        """
        root = inside(self.root, rel)
        label = self.dest / rel
        manifest = read_manifest(root)
        if manifest is not None and kind_of(manifest) != kind:
            raise OutputError(f"{label}: holds another kind of output; pass another folder")
        if manifest is None and root.is_dir() and any(root.iterdir()):
            if self.previous is None:
                check_folder(root, kind)  # raises: not ours
            folder = Folder(root, legacy_owned(root, kind), label)
        else:
            folder = Folder(root, owned_by(root, manifest, kind), label)
        self.inner[rel] = folder
        return folder

    def owned(self) -> set[str]:
        """Every file (path relative to this folder) that the output being
        replaced says raise-miner wrote, in this folder and the folders
        inside it: what the swap may delete of the old tree."""
        found = set(self.folder.owned)
        for rel, folder in self.inner.items():
            found.update(f"{rel}/{path}" for path in folder.owned)
        return found


@contextlib.contextmanager
def publication(dest: Path, kind: str = RECORDS) -> Iterator[Publication]:
    """Publish ``dest`` as a whole (module docstring): yields the staging; the
    new folder replaces the old one when the block ends without an exception.

    Raises:
        BusyError: another run writes ``dest``.
        OutputError: ``dest`` holds files raise-miner did not write, or
            cannot be written.
    """
    check_writable(dest)
    check_folder(dest, kind)  # before the lock file is made: none in a folder not ours
    with locked(dest):
        previous = check_folder(dest, kind)
        staging = Staging(dest)
        try:
            root = staging.open()
            folder = Folder(root, owned_by(root, previous, kind), dest)
            pub = Publication(dest, kind, root, previous, folder)
            yield pub
        except BaseException:
            staging.discard()
            raise
        staging.swap(pub.owned())


def site_manifest(commit: dict[str, Any], written: list[str]) -> dict[str, Any]:
    """A site's ``manifest.json``: the tool, the commit and every file written."""
    from miner.model import SCHEMA_VERSION

    return {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "raise-miner", "version": __version__},
        "kind": SITE,
        "commit": commit,
        "written": written,
    }


def present_files(folder: Path) -> set[str] | None:
    """Every file under ``folder`` (folder-relative), or None when the folder
    holds what a run interrupted there left: a temporary file of an atomic
    write or a staging folder (a full run cleans those up), or when it cannot
    be read."""
    found: set[str] = set()
    pending = [(folder, "")]
    try:
        while pending:
            path, prefix = pending.pop()
            with os.scandir(path) as entries:
                for entry in entries:
                    if entry.is_dir(follow_symlinks=False):
                        if STAGING_DIR.match(entry.name):
                            return None
                        pending.append((Path(entry.path), f"{prefix}{entry.name}/"))
                    elif entry.is_file(follow_symlinks=False):
                        if TEMP_FILE.match(entry.name):
                            return None
                        found.add(prefix + entry.name)
    except OSError:
        return None
    return found


def replay(folder: Folder, files: list[tuple[str, str | bytes]]) -> dict[str, int]:
    """Write into ``folder`` the files a run recorded (:attr:`Folder.record`:
    its pages and records, then ``.nojekyll`` and its manifest, last), and
    delete what a previous run wrote there that this one does not: the very
    bytes of that run, for the same inputs. Returns the counts.

    Raises:
        OutputError: a file cannot be written, or the record has no manifest.
    """
    manifest = next((text for rel, text in files if rel == MANIFEST), None)
    if not isinstance(manifest, str):
        raise OutputError(f"{folder.label}: the kept files have no {MANIFEST}; mine again")
    for rel, text in files:
        if rel not in (MANIFEST, NOJEKYLL):
            folder.write(rel, text)
    return folder.finish(lambda _listing: manifest)


#: A run is refused when more than this share of the files it read failed.
MAX_FAILED_SHARE = 0.5


def check_not_worse(
    previous: dict[str, Any] | None, counts: dict[str, Any], out: Path, example: str = ""
) -> None:
    """Refuse to replace a good output by a worse one: when more than half of
    the files read failed (a crash, the time or memory limit) and the previous
    output had no such share, or when nothing was found, files failed, and
    the previous output had errors.

    Raises:
        WorseOutputError: the new output would be worse; the old one is kept.
    """
    if previous is None or kind_of(previous) != RECORDS:
        return
    counted = previous.get("counts")
    old: dict[str, Any] = counted if isinstance(counted, dict) else {}

    def failed_share(c: dict[str, Any]) -> float:
        read = int(c.get("files_mined", 0) or 0) + int(c.get("files_failed", 0) or 0)
        return int(c.get("files_failed", 0) or 0) / read if read else 0.0

    failed = int(counts.get("files_failed", 0))
    read = int(counts.get("files_mined", 0)) + failed
    commit = previous.get("commit", {}).get("rev") or previous.get("commit", {}).get("sha", "?")
    kept = f"the previous output ({commit}, {old.get('errors', '?')} errors) is kept"
    if failed_share(counts) > MAX_FAILED_SHARE >= failed_share(old):
        raise WorseOutputError(
            f"{out}: not published: {failed} of {read} files failed{example}; "
            f"{kept}; check --memory-limit and --file-timeout"
        )
    if counts.get("errors") == 0 and failed and int(old.get("errors", 0) or 0) > 0:
        raise WorseOutputError(
            f"{out}: not published: no error found and {failed} files failed; {kept}"
        )


class WorseOutputError(OutputError):
    """The new output would replace a better one; nothing was published."""
