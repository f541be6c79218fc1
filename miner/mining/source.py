"""Pin the source: open or clone a repository, resolve a revision, list and read blobs.

Everything is read from the git object database (GitPython); the user's work
tree, index and HEAD are never touched. A URL is cloned once into the cache
folder as a blobless partial clone (``--filter=blob:none``: commits and trees
up front, each blob fetched the first time it is read) and fetched again only
when the revision is missing.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
from dataclasses import dataclass
from datetime import timezone
from pathlib import Path

import git

from miner.errors import SourceError
from miner.files import default_cache_dir
from miner.model import CommitInfo

#: git tree entry modes (see git's ``tree.h``).
MODE_FILE = 0o100644
MODE_EXEC = 0o100755
MODE_SYMLINK = 0o120000
MODE_GITLINK = 0o160000

_GITHUB = re.compile(r"github\.com[/:]([^/]+)/([^/]+?)(?:\.git)?/?$")


@dataclass(frozen=True, slots=True)
class BlobRef:
    """One ``.py`` entry of the commit's tree."""

    path: str
    blob: str
    """The blob id, 40 hex digits."""
    size: int
    """Size in bytes."""
    mode: int
    """git mode: a regular file, an executable, a symlink or a gitlink (submodule)."""


def is_url(repo: str) -> bool:
    return "://" in repo or bool(re.match(r"^[\w.-]+@[\w.-]+:", repo))


def slug_for(repo: str, git_repo: git.Repo | None = None) -> str:
    """``owner/name`` for headers and links: from a GitHub URL, else the
    ``origin`` remote of a local clone, else the folder's name."""
    match = _GITHUB.search(repo)
    if match:
        return f"{match.group(1)}/{match.group(2)}"
    if git_repo is not None:
        try:
            for url in git_repo.remote("origin").urls:
                match = _GITHUB.search(url)
                if match:
                    return f"{match.group(1)}/{match.group(2)}"
        except (ValueError, git.GitCommandError):
            pass
    return Path(repo).resolve().name


def open_repo(repo: str, rev: str, cache_dir: Path | None = None) -> git.Repo:
    """The repository to read: a local path as it is, a URL through the cache.

    Raises:
        SourceError: the path is missing or not a git repository, or the URL
            cannot be cloned.
    """
    if is_url(repo):
        return _cached_clone(repo, rev, cache_dir or default_cache_dir())
    path = Path(repo).expanduser()
    if not path.exists():
        raise SourceError(f"{repo}: no such folder; pass a git repository path or URL")
    try:
        return git.Repo(path, search_parent_directories=False)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        raise SourceError(
            f"{repo}: not a git repository; pass the top folder of a clone or a URL"
        ) from None


def _cached_clone(url: str, rev: str, cache_dir: Path) -> git.Repo:
    name = re.sub(r"[^\w.-]+", "_", url.split("://")[-1]).strip("_")
    digest = hashlib.sha256(url.encode()).hexdigest()[:8]
    path = cache_dir / "repos" / f"{name}-{digest}.git"
    try:
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(path.name + ".partial")
            if tmp.exists():
                shutil.rmtree(tmp)
            git.Repo.clone_from(url, tmp, bare=True, multi_options=["--filter=blob:none"])
            tmp.rename(path)
        repo = git.Repo(path)
        if _try_resolve(repo, rev) is None:
            repo.git.fetch("origin", "+refs/heads/*:refs/heads/*", "+refs/tags/*:refs/tags/*")
            if _try_resolve(repo, rev) is None and re.fullmatch(r"[0-9a-fA-F]{7,40}", rev):
                repo.git.fetch("origin", rev)
        return repo
    except git.GitCommandError as exc:
        raise SourceError(_clone_failure(url, str(exc.stderr or exc))) from None
    except (git.exc.UnsafeProtocolError, git.exc.UnsafeOptionError):
        scheme = url.split("::", 1)[0] if "::" in url else url.split("://", 1)[0]
        raise SourceError(
            f"{url}: git's {scheme}:: transport is refused (it runs commands or reads "
            "descriptors of this process); pass an https://, ssh:// or file:// URL or a "
            "local path"
        ) from None


#: What git prints when the host cannot be reached (no network, no DNS, a proxy).
_NETWORK = re.compile(
    r"Could not resolve host|Failed to connect|Connection (?:timed out|refused)|"
    r"Network is unreachable|unable to access"
)


def _clone_failure(url: str, stderr: str) -> str:
    """The one line for a clone or fetch of ``url`` that git refused: git's
    own ``fatal:`` reason, and for an unreachable host the way out (a local
    clone: ``--repo PATH``, ``make mine REPO=PATH``)."""
    lines = [" ".join(line.split()) for line in stderr.splitlines()]
    lines = [line for line in lines if line.strip("'\" ")]  # GitPython's closing quote
    detail = "; ".join(_fatal(lines)) or (lines or ["git failed"])[-1]
    if not url.startswith("file:") and _NETWORK.search(stderr):
        return (
            f"{url}: cannot reach it over the network ({detail}); mine a local clone "
            "instead: --repo PATH (make mine COMMIT=... REPO=PATH; make corpus builds "
            "SGLang's releases from PyPI into .corpus/sglang)"
        )
    return f"{url}: cannot clone or fetch ({detail}); check the URL"


def _fatal(lines: list[str]) -> list[str]:
    """git's ``fatal:`` reasons among ``lines``: the words after ``fatal:``
    (which may come after others on its line, as git:// prints it), with the
    next line when the reason ends with a colon."""
    found = []
    for index, line in enumerate(lines):
        if "fatal: " not in line:
            continue
        reason = line.split("fatal: ", 1)[1]
        if reason.endswith(":") and index + 1 < len(lines):
            reason = f"{reason} {lines[index + 1]}"
        found.append(reason)
    return found


def _try_resolve(repo: git.Repo, rev: str) -> git.Commit | None:
    try:
        obj = repo.rev_parse(rev)
    except (git.BadName, git.BadObject, ValueError, git.GitCommandError):
        return None
    except (IndexError, NotImplementedError):  # reflog forms: @{-1}, HEAD@{yesterday}
        return None
    while isinstance(obj, git.TagObject):
        obj = obj.object
    return obj if isinstance(obj, git.Commit) else None


def resolve_commit(repo: git.Repo, rev: str) -> git.Commit:
    """The commit for a full or abbreviated SHA, a tag or a branch.

    Raises:
        SourceError: no commit has that name, or it is a reflog form
            (``@{-1}``, ``HEAD@{yesterday}``: local state, not a pinned commit).
    """
    commit = _try_resolve(repo, rev)
    if commit is None:
        where = repo.working_tree_dir or repo.git_dir
        if "@{" in rev:
            raise SourceError(
                f"{rev}: cannot resolve this reflog form in {where}; give a commit "
                "SHA, tag or branch instead (git rev-parse prints the SHA of a reflog form)"
            )
        raise SourceError(
            f"{rev}: unknown revision in {where}; "
            "give a commit SHA, tag or branch that exists there"
        )
    return commit


def commit_info(
    repo_arg: str, repo: git.Repo, rev: str, commit: git.Commit, *, slug: str | None, link_ref: str
) -> CommitInfo:
    """Describe a resolved commit (committer date in ISO 8601, UTC offset kept)."""
    date = commit.committed_datetime
    if date.tzinfo is None:
        date = date.replace(tzinfo=timezone.utc)
    return CommitInfo(
        repo=repo_arg,
        slug=slug or slug_for(repo_arg, repo),
        rev=rev,
        sha=commit.hexsha,
        date=date.isoformat(),
        link_ref=link_ref or commit.hexsha,
    )


def python_blobs(repo: git.Repo, commit: git.Commit) -> list[BlobRef]:
    """Every ``*.py`` entry of the commit's tree, in path order: regular files,
    and also symlinks and gitlinks (submodules) so the caller can report them.

    One ``git ls-tree -r -l -z`` call lists the tree with blob sizes.
    """
    out = repo.git.ls_tree("-r", "-l", "-z", commit.hexsha, stdout_as_string=False)
    entries: list[BlobRef] = []
    for record in out.split(b"\0"):
        if not record:
            continue
        meta, _, raw_path = record.partition(b"\t")
        path = raw_path.decode("utf-8", "surrogateescape")
        if not path.endswith(".py"):
            continue
        mode, _type, sha, size = meta.split(None, 3)
        entries.append(
            BlobRef(
                path=path,
                blob=sha.decode(),
                size=int(size) if size.strip().isdigit() else 0,
                mode=int(mode, 8),
            )
        )
    entries.sort(key=lambda e: e.path)
    return entries


def is_partial_clone(repo: git.Repo) -> bool:
    """True for a clone made with ``--filter`` (blobs are fetched on demand)."""
    reader = repo.config_reader()
    return bool(reader.has_option('remote "origin"', "promisor"))


def missing_blobs(repo: git.Repo, commit: git.Commit, wanted: set[str]) -> set[str]:
    """The ids in ``wanted`` that a partial clone does not hold yet (listing them
    with ``rev-list --missing=print`` fetches nothing)."""
    listing = repo.git.rev_list("--objects", "--missing=print", commit.hexsha)
    missing = {line[1:].strip() for line in listing.splitlines() if line.startswith("?")}
    return missing & wanted


def prefetch_blobs(repo: git.Repo, commit: git.Commit, entries: list[BlobRef]) -> int:
    """Fetch, in one request, the blobs of ``entries`` that a partial clone lacks.

    Reading a missing blob would otherwise make git fetch it alone, one round
    trip per file. This is the request git itself sends for missing objects
    (object ids on the standard input of ``git fetch --stdin`` with the
    ``noop`` negotiation). Returns how many blobs were fetched.

    Raises:
        SourceError: the fetch failed.
    """
    if not is_partial_clone(repo):
        return 0
    missing = missing_blobs(repo, commit, {e.blob for e in entries if e.mode != MODE_GITLINK})
    if not missing:
        return 0
    proc = repo.git.execute(
        [
            "git",
            "-c",
            "fetch.negotiationAlgorithm=noop",
            "fetch",
            "origin",
            "--no-tags",
            "--no-write-fetch-head",
            "--recurse-submodules=no",
            "--filter=blob:none",
            "--stdin",
        ],
        as_process=True,
        istream=subprocess.PIPE,
    )
    assert proc.proc is not None and proc.proc.stdin is not None
    proc.proc.stdin.write("".join(f"{oid}\n" for oid in sorted(missing)).encode())
    proc.proc.stdin.close()
    try:
        proc.wait()
    except git.GitCommandError as exc:
        detail = " ".join(str(exc.stderr or exc).split())
        raise SourceError(f"cannot fetch {len(missing)} blobs from origin: {detail}") from None
    return len(missing)


def read_blob(repo: git.Repo, blob: str) -> bytes:
    """The bytes of one blob, from the object database."""
    return repo.odb.stream(bytes.fromhex(blob)).read()


def open_with_tags(repo_arg: str, cache_dir: Path | None = None) -> git.Repo:
    """The repository with its tags up to date (a URL's cached clone is fetched).

    Raises:
        SourceError: the repository cannot be opened or fetched.
    """
    repo = open_repo(repo_arg, "HEAD", cache_dir)
    if is_url(repo_arg):
        try:
            repo.git.fetch("origin", "+refs/tags/*:refs/tags/*", "--prune")
        except git.GitCommandError as exc:
            detail = " ".join(str(exc.stderr or exc).split())
            raise SourceError(
                f"{repo_arg}: cannot fetch tags ({detail}); check the URL and network access"
            ) from None
    return repo
