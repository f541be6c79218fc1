"""Writing the release repository with ``git fast-import``.

Every git command runs with a fixed environment and fixed ``-c`` options
(:func:`git_env`), so nothing from the user's git setup or an inherited ``GIT_DIR`` can
change the bytes written or the repository written to. Each release becomes one commit on
``main`` (tree ``python/<package>/...`` from :func:`~miner.corpus.wheels.wheel_entries`,
author and committer ``raise-miner corpus``, dated the wheel's upload time, message
``<package> <version> from <wheel filename>\\n\\nsha256 <hex>\\n``) and a lightweight tag
``v<version>`` (:func:`tag_name`).

* :func:`inspect_dest` reads what an existing destination already holds, and refuses a
  folder this module did not build (it is marked in ``.git/config``);
* :func:`build_fresh` builds in a sibling temporary folder and swaps it in when complete;
* :func:`append` adds newer releases on top of an existing corpus;
* :func:`resolve_tags` gives the commit SHA of each release's tag.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import git

from miner.corpus.pypi import ReleaseWheel
from miner.corpus.wheels import import_dir, wheel_entries
from miner.errors import CorpusError

__all__ = [
    "IDENTITY_EMAIL",
    "IDENTITY_NAME",
    "Say",
    "ExistingRelease",
    "append",
    "build_fresh",
    "inspect_dest",
    "resolve_tags",
    "tag_name",
]

IDENTITY_NAME = "raise-miner corpus"
IDENTITY_EMAIL = "corpus@raise-miner.invalid"

_MARKER_KEY = "raise-miner.corpus"
_PACKAGE_KEY = "raise-miner.package"
_MARKER_VALUE = "1"
_BRANCH = "main"
# Passed as `git -c` to every command: nothing from the user's setup may alter bytes or sign.
_GIT_C_OPTIONS = (
    "core.autocrlf=false",
    "core.eol=lf",
    "core.safecrlf=false",
    "core.symlinks=true",
    "core.fsmonitor=false",
    "core.hooksPath=" + os.devnull,
    "commit.gpgSign=false",
    "tag.gpgSign=false",
    "gc.auto=0",
    "init.defaultBranch=" + _BRANCH,
    "advice.detachedHead=false",
)
# Written to the corpus's own .git/config, so later commands by people behave the same.
_LOCAL_CONFIG = (
    ("core.autocrlf", "false"),
    ("core.eol", "lf"),
    ("commit.gpgSign", "false"),
    ("gc.auto", "0"),
)

Say = Callable[[str], None]
"""Called with one short progress line, e.g. ``"committed v0.5.19 (4,367 files)"``."""


def tag_name(version: str) -> str:
    """The tag of a release: ``"0.5.19"`` -> ``"v0.5.19"``."""
    return f"v{version}"


# ---------------------------------------------------------------------------- commands


def _git_env(root: Path) -> dict[str, str]:
    """Environment for git commands on the corpus at ``root``.

    Inherited ``GIT_DIR``/``GIT_INDEX_FILE``/... (as set inside git hooks) and the user's
    system and global config are overridden; GitPython cannot unset variables, so each one
    that could redirect git gets an explicit value. ``GIT_WORK_TREE`` is the parent of
    ``GIT_DIR``, so ``git init`` records no ``core.worktree`` (the corpus can be moved).
    """
    git_dir = root / ".git"
    return {
        "GIT_DIR": str(git_dir),
        "GIT_WORK_TREE": str(root),
        "GIT_INDEX_FILE": str(git_dir / "index"),
        "GIT_OBJECT_DIRECTORY": str(git_dir / "objects"),
        "GIT_ALTERNATE_OBJECT_DIRECTORIES": "",
        "GIT_NAMESPACE": "",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_PARAMETERS": "",
        "GIT_CONFIG_COUNT": "0",
        "GIT_NO_REPLACE_OBJECTS": "1",
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_AUTHOR_NAME": IDENTITY_NAME,
        "GIT_AUTHOR_EMAIL": IDENTITY_EMAIL,
        "GIT_COMMITTER_NAME": IDENTITY_NAME,
        "GIT_COMMITTER_EMAIL": IDENTITY_EMAIL,
        "TZ": "UTC",
    }


def _git_cmd(root: Path) -> git.Git:
    cmd = git.Git(str(root))
    cmd.update_environment(**_git_env(root))
    return cmd


def _git_argv(cmd: git.Git, *args: str) -> list[str]:
    argv = [str(cmd.GIT_PYTHON_GIT_EXECUTABLE or "git")]
    for option in _GIT_C_OPTIONS:
        argv += ["-c", option]
    return argv + list(args)


def _run(cmd: git.Git, *args: str) -> str:
    """Run ``git <args>`` with the corpus's fixed options; raise CorpusError on failure."""
    try:
        out: str = cmd.execute(_git_argv(cmd, *args))
    except git.GitCommandError as exc:
        stderr = " ".join(str(exc.stderr).split())
        raise CorpusError(f"git {args[0]} failed in {cmd.working_dir}: {stderr}") from None
    except git.GitCommandNotFound:
        raise CorpusError("git is not installed or not on PATH; install git") from None
    return out


@dataclass(frozen=True)
class ExistingRelease:
    """One release already in a corpus, read back from its tag and commit message.

    Attributes:
        commit: the tag's commit SHA, 40 hex digits.
        filename: the wheel it was built from, e.g. ``"sglang-0.5.19-py3-none-any.whl"``.
        sha256: that wheel's sha256 as recorded in the message, 64 lowercase hex digits.
    """

    commit: str
    filename: str
    sha256: str


_MESSAGE_RE = re.compile(r"\A(\S+) (\S+) from (\S+\.whl)\n\nsha256 ([0-9a-f]{64})\n?\Z")


def _message(package: str, wheel: ReleaseWheel) -> bytes:
    return f"{package} {wheel.version} from {wheel.filename}\n\nsha256 {wheel.sha256}\n".encode()


def _is_empty_dir(path: Path) -> bool:
    return path.is_dir() and not path.is_symlink() and not any(path.iterdir())


def inspect_dest(dest: Path, package: str) -> dict[str, ExistingRelease] | None:
    """Releases already in the corpus at ``dest``, read without any network access.

    Returns:
        ``None`` when ``dest`` does not exist or is an empty folder (build there);
        otherwise version (``"0.5.19"``) -> :class:`ExistingRelease` for every ``v<version>``
        tag whose commit is on ``main`` with a message in the expected form for
        ``package``. An empty dict means a corpus this module built that must be rebuilt
        (built for another package, or without a ``main`` branch).

    Raises:
        CorpusError: ``dest`` exists and is not a corpus built by this module (no
            ``raise-miner.corpus`` marker in its ``.git/config``), or git is missing.
    """
    if not dest.exists() and not dest.is_symlink():
        return None
    if _is_empty_dir(dest):
        return None
    marker = None
    if dest.is_dir() and not dest.is_symlink() and (dest / ".git" / "config").is_file():
        try:
            marker = _config_get(dest, _MARKER_KEY)
        except CorpusError:
            marker = None
    if marker != _MARKER_VALUE:
        raise CorpusError(
            f"{dest} exists and is not a corpus built by raise-miner (no {_MARKER_KEY} "
            "marker in its .git/config); pass another destination or move that folder away"
        )
    if _config_get(dest, _PACKAGE_KEY) != package:
        return {}  # ours, but for another package: rebuild
    cmd = _git_cmd(dest)
    try:
        refs = _run(cmd, "for-each-ref", "--format=%(refname:strip=2) %(objectname)", "refs/tags/")
        history = _run(cmd, "log", "--format=%x1e%H%x1f%B", f"refs/heads/{_BRANCH}", "--")
    except CorpusError:
        return {}  # e.g. no main branch: rebuild
    messages: dict[str, str] = {}
    for record in history.split("\x1e"):
        if "\x1f" in record:
            sha, body = record.split("\x1f", 1)
            messages[sha.strip()] = body.strip("\n") + "\n"
    found: dict[str, ExistingRelease] = {}
    for line in refs.splitlines():
        tag, _, sha = line.partition(" ")
        m = _MESSAGE_RE.match(messages.get(sha, ""))
        if not tag.startswith("v") or m is None:
            continue
        if m[1] == package and m[2] == tag[1:]:
            found[tag[1:]] = ExistingRelease(commit=sha, filename=m[3], sha256=m[4])
    return found


def _config_get(root: Path, key: str) -> str | None:
    cmd = _git_cmd(root)
    try:
        value: str = cmd.execute(_git_argv(cmd, "config", "--local", "--get", key))
    except git.GitCommandError:
        return None
    except git.GitCommandNotFound:
        raise CorpusError("git is not installed or not on PATH; install git") from None
    return value.strip()


def _quote_path(path: bytes) -> bytes:
    """C-style quote a path for fast-import (always quoted, so any byte is safe)."""
    out = bytearray(b'"')
    for byte in path:
        if byte in (0x22, 0x5C):
            out += b"\\" + bytes([byte])
        elif byte == 0x0A:
            out += b"\\n"
        elif byte < 0x20 or byte == 0x7F:
            out += b"\\%03o" % byte
        else:
            out.append(byte)
    return bytes(out + b'"')


def _fast_import(
    root: Path,
    package: str,
    wheels: list[ReleaseWheel],
    paths: list[Path],
    parent: str | None,
    say: Say,
) -> None:
    """Stream one commit per wheel onto ``main`` (after ``parent``) plus its tag."""
    cmd = _git_cmd(root)
    argv = _git_argv(cmd, "fast-import", "--quiet", "--done", "--date-format=raw")
    # Keep the AutoInterrupt referenced: GitPython kills the process when it is collected.
    handle = cmd.execute(argv, istream=subprocess.PIPE, as_process=True)
    proc = handle.proc
    assert proc is not None and proc.stdin is not None
    stdin = proc.stdin
    ident = f"{IDENTITY_NAME} <{IDENTITY_EMAIL}>".encode()
    ref = f"refs/heads/{_BRANCH}".encode()
    try:
        for mark, (wheel, path) in enumerate(zip(wheels, paths, strict=True), start=1):
            when = f"{wheel.upload_epoch} +0000".encode()
            message = _message(package, wheel)
            stdin.write(b"commit %s\nmark :%d\n" % (ref, mark))
            stdin.write(b"author %s %s\ncommitter %s %s\n" % (ident, when, ident, when))
            stdin.write(b"data %d\n%s\n" % (len(message), message))
            if mark > 1:
                stdin.write(b"from :%d\n" % (mark - 1))
            elif parent is not None:
                stdin.write(b"from %s\n" % parent.encode())
            stdin.write(b"deleteall\n")
            count = 0
            for entry in wheel_entries(path, package):
                stdin.write(b"M %s inline %s\n" % (entry.mode, _quote_path(entry.path)))
                stdin.write(b"data %d\n" % len(entry.data))
                stdin.write(entry.data)
                stdin.write(b"\n")
                count += 1
            if count == 0:
                raise CorpusError(
                    f"{wheel.filename} has no text files under {import_dir(package)}/; "
                    "check the package name"
                )
            stdin.write(
                b"\nreset refs/tags/%s\nfrom :%d\n\n" % (tag_name(wheel.version).encode(), mark)
            )
            say(f"committed {tag_name(wheel.version)} ({count:,} files)")
        stdin.write(b"done\n")
        stdin.flush()
    except BrokenPipeError:
        pass  # fast-import died; its stderr says why
    except BaseException:
        proc.kill()
        proc.communicate()
        raise
    _out, err = proc.communicate()
    if proc.returncode != 0:
        text = " ".join(err.decode("utf-8", "replace").split())
        raise CorpusError(f"git fast-import failed in {root}: {text or 'no message'}")


def _checkout(root: Path) -> None:
    cmd = _git_cmd(root)
    _run(cmd, "symbolic-ref", "HEAD", f"refs/heads/{_BRANCH}")
    _run(cmd, "reset", "--quiet", "--hard", f"refs/heads/{_BRANCH}")


def _init(root: Path, package: str) -> None:
    cmd = _git_cmd(root)
    _run(cmd, "init", "--quiet", "--template=", f"--initial-branch={_BRANCH}")
    for key, value in (*_LOCAL_CONFIG, (_PACKAGE_KEY, package), (_MARKER_KEY, _MARKER_VALUE)):
        _run(cmd, "config", "--local", key, value)


def build_fresh(
    dest: Path, package: str, wheels: list[ReleaseWheel], paths: list[Path], say: Say
) -> None:
    """Build a new corpus of ``wheels`` (oldest first) and put it at ``dest``.

    The repository is made in a sibling temporary folder (``.<name>.building-*``): git
    init with the corpus's local config and marker, one commit and tag per wheel, work
    tree checked out at the newest; only then is it renamed to ``dest``, replacing an
    empty folder or an old corpus (which the caller has checked with
    :func:`inspect_dest`). On any failure the temporary folder is removed and ``dest`` is
    left as it was.

    Args:
        dest: the corpus's work tree path, absolute; its parent is created if needed.
        package: the project name, written into each commit message and ``.git/config``.
        wheels: the releases to commit, oldest first; at least one.
        paths: the local wheel file of each entry of ``wheels``, same order and length.
        say: gets one ``"committed v<version> (<n> files)"`` line per release.

    Raises:
        CorpusError: a folder next to ``dest`` cannot be created or renamed; a wheel cannot
            be read or has no text files under the package folder; git fails.
    """
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}.building-", dir=dest.parent))
    except OSError as exc:
        raise CorpusError(
            f"cannot create a folder next to {dest}: {exc.strerror or exc}; "
            "pass a destination in a writable folder"
        ) from None
    try:
        _init(tmp, package)
        _fast_import(tmp, package, wheels, paths, None, say)
        _checkout(tmp)
        _swap_into(tmp, dest)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _swap_into(tmp: Path, dest: Path) -> None:
    """Move the finished repository ``tmp`` to ``dest`` (empty folder or old corpus)."""
    old: Path | None = None
    try:
        if _is_empty_dir(dest):
            dest.rmdir()
        elif dest.exists():
            # Only reached for a corpus this module built (checked by inspect_dest).
            old = Path(tempfile.mkdtemp(prefix=f".{dest.name}.old-", dir=dest.parent))
            dest.replace(old / "corpus")
        tmp.replace(dest)
    except OSError as exc:
        raise CorpusError(
            f"cannot move the new corpus into {dest}: {exc.strerror or exc}; "
            "check that nothing else is using that path"
        ) from None
    finally:
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)


def append(
    dest: Path,
    package: str,
    wheels: list[ReleaseWheel],
    paths: list[Path],
    tip: str,
    say: Say,
) -> None:
    """Commit ``wheels`` (oldest first) on top of ``tip`` in the corpus at ``dest``.

    ``main`` and the new tags move only once ``git fast-import`` has succeeded; then the
    work tree is checked out at the newest release. The caller checks that every wheel is
    newer than the corpus's releases.

    Args:
        dest: a corpus built by this module (see :func:`inspect_dest`).
        package: the project name, written into each commit message.
        wheels: the releases to add, oldest first; at least one.
        paths: the local wheel file of each entry of ``wheels``, same order and length.
        tip: the commit SHA of the corpus's newest release, parent of the first new one.
        say: gets one ``"committed v<version> (<n> files)"`` line per release.

    Raises:
        CorpusError: a wheel cannot be read or has no text files under the package folder;
            git fails (the corpus then keeps its previous releases).
    """
    _fast_import(dest, package, wheels, paths, tip, say)
    _checkout(dest)


def resolve_tags(root: Path, versions: list[str]) -> tuple[str, ...]:
    """The commit SHA (40 hex digits) of tag ``v<version>`` for each of ``versions``,
    in the same order.

    Raises:
        CorpusError: a tag is missing or git fails.
    """
    out = _run(
        _git_cmd(root), "rev-parse", *(f"refs/tags/{tag_name(v)}^{{commit}}" for v in versions)
    )
    shas = tuple(out.split())
    if len(shas) != len(versions):
        raise CorpusError(f"git rev-parse gave {len(shas)} SHAs for {len(versions)} tags in {root}")
    return shas
