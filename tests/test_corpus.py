"""Tests for miner.corpus: a git repository of a package's releases built from its wheels.

All tests but the one marked ``integration`` run offline: they make small wheels with
zipfile and serve them from a PEP 691 JSON index on 127.0.0.1.
"""

from __future__ import annotations

import hashlib
import http.server
import json
import os
import re
import socket
import threading
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import git
import pytest

from miner.corpus import build as corpus
from miner.corpus import pypi
from miner.corpus.build import (
    DEFAULT_VERSIONS,
    CorpusBuild,
    CorpusError,
    ReleaseWheel,
    build_corpus,
    default_cache_dir,
    find_release_wheel,
)

IDENT = "raise-miner corpus <corpus@raise-miner.invalid>"
TIME_1 = "2024-01-02T03:04:05.678901Z"  # 1704164645 in whole seconds
TIME_2 = "2024-02-03T04:05:06Z"  # 1706933106
EPOCH_1 = 1704164645
EPOCH_2 = 1706933106

INIT_1 = b'"""fake sglang 0.0.1"""\n__version__ = "0.0.1"\n'
X_PY = b'def f(x):\n    if x < 0:\n        raise ValueError("negative")\n    return x\n'
CRLF_PY = b"def g():\r\n    assert False, 'crlf'\r\n"
GONE_PY = b"# removed in 0.0.2\n"
SCRIPT_SH = b"#!/bin/sh\necho hi\n"
BINARY_SO = b"\x7fELF\x02\x01\x01\x00" + b"\x00" * 64
NUL_TXT = b"looks like text" + b"\x00" + b"but is not"
PYC = b"\x42\x0d\x0d\x0a" + b"\x00" * 12

RELEASE_1: dict[str, bytes | tuple[bytes, int]] = {
    "sglang/__init__.py": INIT_1,
    "sglang/srt/x.py": X_PY,
    "sglang/srt/crlf.py": CRLF_PY,
    "sglang/srt/gone.py": GONE_PY,
    "sglang/tools/run.sh": (SCRIPT_SH, 0o100755),
    "sglang/_C.so": BINARY_SO,
    "sglang/srt/_ext.cpython-311-x86_64-linux-gnu.so": BINARY_SO,
    "sglang/srt/__pycache__/x.cpython-311.pyc": PYC,
    "sglang/srt/blob.dat": NUL_TXT,
    "sglang-0.0.1.dist-info/METADATA": b"Metadata-Version: 2.1\nName: sglang\nVersion: 0.0.1\n",
    "sglang-0.0.1.dist-info/RECORD": b"",
    "sgl_other/mod.py": b"x = 1\n",
}
RELEASE_2: dict[str, bytes | tuple[bytes, int]] = {
    "sglang/__init__.py": b'"""fake sglang 0.0.2"""\n__version__ = "0.0.2"\n',
    "sglang/srt/x.py": X_PY + b"\n\ndef h():\n    raise KeyError('h')\n",
    "sglang/srt/crlf.py": CRLF_PY,
    "sglang/srt/new.py": b"NEW = True\n",
    "sglang/tools/run.sh": (SCRIPT_SH, 0o100755),
    "sglang/_C.so": BINARY_SO,
    "sglang-0.0.2.dist-info/METADATA": b"Metadata-Version: 2.1\nName: sglang\nVersion: 0.0.2\n",
}
# What the repository must hold for each release: path -> (mode, bytes).
EXPECTED_1 = {
    "python/sglang/__init__.py": ("100644", INIT_1),
    "python/sglang/srt/x.py": ("100644", X_PY),
    "python/sglang/srt/crlf.py": ("100644", CRLF_PY),
    "python/sglang/srt/gone.py": ("100644", GONE_PY),
    "python/sglang/tools/run.sh": ("100755", SCRIPT_SH),
}
EXPECTED_2 = {
    "python/sglang/__init__.py": ("100644", b'"""fake sglang 0.0.2"""\n__version__ = "0.0.2"\n'),
    "python/sglang/srt/x.py": ("100644", X_PY + b"\n\ndef h():\n    raise KeyError('h')\n"),
    "python/sglang/srt/crlf.py": ("100644", CRLF_PY),
    "python/sglang/srt/new.py": ("100644", b"NEW = True\n"),
    "python/sglang/tools/run.sh": ("100755", SCRIPT_SH),
}


# --------------------------------------------------------------------------- fixtures


def make_wheel(path: Path, files: dict[str, bytes | tuple[bytes, int]]) -> bytes:
    """Write a deterministic (stored, fixed-date) wheel and return its bytes."""
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_STORED) as zf:
        for name, spec in files.items():
            data, mode = spec if isinstance(spec, tuple) else (spec, 0o100644)
            info = zipfile.ZipInfo(name, date_time=(2024, 1, 1, 0, 0, 0))
            info.external_attr = mode << 16
            zf.writestr(info, data)
    return path.read_bytes()


@dataclass
class FakeIndex:
    """A PEP 691 JSON simple index with PEP 700 fields, served on 127.0.0.1."""

    root: Path
    url: str = ""
    files: list[dict[str, object]] = field(default_factory=list)
    blobs: dict[str, bytes] = field(default_factory=dict)
    requests: list[str] = field(default_factory=list)

    def add(
        self,
        filename: str,
        files: dict[str, bytes | tuple[bytes, int]] | None = None,
        *,
        upload_time: str = TIME_1,
        sha256: str | None = None,
        data: bytes | None = None,
    ) -> bytes:
        if data is None:
            data = make_wheel(self.root / filename, files or {"sglang/__init__.py": b""})
        self.blobs[filename] = data
        self.files.append(
            {
                "filename": filename,
                "url": f"../../files/{filename}",  # relative, as PEP 691 allows
                "hashes": {"sha256": sha256 or hashlib.sha256(data).hexdigest()},
                "size": len(data),
                "upload-time": upload_time,
                "requires-python": ">=3.10",
                "yanked": False,
            }
        )
        return data

    def add_releases(self) -> None:
        self.add("sglang-0.0.1-py3-none-any.whl", RELEASE_1, upload_time=TIME_1)
        self.add("sglang-0.0.1.tar.gz", data=b"sdist")
        self.add("sglang-0.0.2-py3-none-any.whl", RELEASE_2, upload_time=TIME_2)

    def file_requests(self) -> list[str]:
        return [r for r in self.requests if r.startswith("/files/")]


@pytest.fixture
def index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeIndex]:
    monkeypatch.setattr(pypi, "_RETRY_DELAYS_S", (0.0, 0.0))
    (tmp_path / "wheels-src").mkdir()
    fake = FakeIndex(root=tmp_path / "wheels-src")

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            fake.requests.append(self.path)
            if self.path == "/simple/sglang/":
                if "application/vnd.pypi.simple.v1+json" not in self.headers.get("Accept", ""):
                    self.send_error(406)
                    return
                body = json.dumps(
                    {"meta": {"api-version": "1.1"}, "name": "sglang", "files": fake.files}
                ).encode()
                ctype = "application/vnd.pypi.simple.v1+json"
            elif self.path.startswith("/files/") and self.path[7:] in fake.blobs:
                body = fake.blobs[self.path[7:]]
                ctype = "application/octet-stream"
            else:
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    fake.url = f"http://127.0.0.1:{server.server_address[1]}/simple"
    try:
        yield fake
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def build(index: FakeIndex, dest: Path, versions: list[str], **kw: object) -> CorpusBuild:
    kw.setdefault("cache_dir", dest.parent / "cache")
    return build_corpus(dest, versions, index_url=index.url, **kw)  # type: ignore[arg-type]


def tree_files(dest: Path, rev: str) -> dict[str, tuple[str, bytes]]:
    repo = git.Repo(dest)
    out: dict[str, tuple[str, bytes]] = {}
    for item in repo.commit(rev).tree.traverse():
        if isinstance(item, git.Blob):
            out[item.path] = (f"{item.mode:o}", item.data_stream.read())
    return out


# Independent recomputation of git object ids, to prove the SHAs are a pure function of
# the wheels and the index metadata (and so the same on any machine).


def _obj(kind: bytes, body: bytes) -> bytes:
    return hashlib.sha1(kind + b" %d\0" % len(body) + body).digest()


def _tree(files: dict[str, tuple[str, bytes]]) -> bytes:
    direct: dict[str, tuple[str, bytes]] = {}
    subdirs: dict[str, dict[str, tuple[str, bytes]]] = {}
    for path, spec in files.items():
        head, _, rest = path.partition("/")
        if rest:
            subdirs.setdefault(head, {})[rest] = spec
        else:
            direct[head] = spec
    entries = [(n.encode(), m.encode(), _obj(b"blob", d)) for n, (m, d) in direct.items()]
    entries += [(n.encode(), b"40000", _tree(sub)) for n, sub in subdirs.items()]
    entries.sort(key=lambda e: e[0] + (b"/" if e[1] == b"40000" else b""))
    return _obj(b"tree", b"".join(m + b" " + n + b"\0" + sha for n, m, sha in entries))


def expected_commit(
    files: dict[str, tuple[str, bytes]], epoch: int, message: str, parent: str | None
) -> str:
    body = b"tree %s\n" % _tree(files).hex().encode()
    if parent:
        body += b"parent %s\n" % parent.encode()
    body += b"author %s %d +0000\ncommitter %s %d +0000\n\n" % (
        IDENT.encode(),
        epoch,
        IDENT.encode(),
        epoch,
    )
    return _obj(b"commit", body + message.encode()).hex()


# ------------------------------------------------------------------------------ tests


def test_two_releases_have_exact_trees_dates_and_messages(index: FakeIndex, tmp_path: Path):
    index.add_releases()
    lines: list[str] = []
    dest = tmp_path / "corpus"
    result = build(index, dest, ["0.0.1", "0.0.2"], log=lines.append)

    assert result.path == dest
    assert result.tags == ("v0.0.1", "v0.0.2")
    assert result.reused is False
    assert all(re.fullmatch(r"[0-9a-f]{40}", sha) for sha in result.commits)

    # Trees: exactly the package's text files, bytes as in the wheel (CRLF kept),
    # no .so / .pyc / NUL file / dist-info / other top-level package; gone.py only in v0.0.1.
    assert tree_files(dest, "v0.0.1") == EXPECTED_1
    assert tree_files(dest, "v0.0.2") == EXPECTED_2

    repo = git.Repo(dest)
    assert not repo.bare
    assert repo.active_branch.name == "main"
    assert repo.head.commit.hexsha == result.commits[1]
    assert sorted(t.name for t in repo.tags) == ["v0.0.1", "v0.0.2"]
    assert [t.tag for t in repo.tags] == [None, None]  # lightweight
    c1, c2 = (repo.commit(sha) for sha in result.commits)
    assert c1.parents == () and c2.parents == (c1,)
    for commit, epoch in ((c1, EPOCH_1), (c2, EPOCH_2)):
        assert commit.authored_date == commit.committed_date == epoch
        assert commit.author_tz_offset == commit.committer_tz_offset == 0
        assert f"{commit.author.name} <{commit.author.email}>" == IDENT
        assert f"{commit.committer.name} <{commit.committer.email}>" == IDENT
    sha_1 = index.files[0]["hashes"]["sha256"]  # type: ignore[index]
    assert c1.message == (f"sglang 0.0.1 from sglang-0.0.1-py3-none-any.whl\n\nsha256 {sha_1}\n")
    assert c2.message.startswith("sglang 0.0.2 from sglang-0.0.2-py3-none-any.whl\n\nsha256 ")

    # The work tree is checked out at the newest release, bytes untouched.
    assert (dest / "python/sglang/srt/crlf.py").read_bytes() == CRLF_PY
    assert not (dest / "python/sglang/srt/gone.py").exists()
    assert os.access(dest / "python/sglang/tools/run.sh", os.X_OK)
    assert repo.git.status("--porcelain") == ""
    assert repo.git.config("--local", "--get", "raise-miner.corpus") == "1"

    assert "downloading sglang-0.0.1-py3-none-any.whl (0.0 MB)" in lines
    assert "committed v0.0.1 (5 files)" in lines
    assert "committed v0.0.2 (5 files)" in lines
    # Nothing but the corpus is left next to it.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cache", "corpus", "wheels-src"]


def test_commit_shas_are_a_pure_function_of_the_wheels(index: FakeIndex, tmp_path: Path):
    index.add_releases()
    first = build(index, tmp_path / "a" / "corpus", ["0.0.1", "0.0.2"])
    second = build_corpus(
        tmp_path / "b" / "corpus",
        ["0.0.2", "0.0.1"],
        index_url=index.url,
        cache_dir=tmp_path / "other-cache",
    )
    assert first.commits == second.commits

    sha_1 = index.files[0]["hashes"]["sha256"]  # type: ignore[index]
    sha_2 = index.files[2]["hashes"]["sha256"]  # type: ignore[index]
    want_1 = expected_commit(
        EXPECTED_1,
        EPOCH_1,
        f"sglang 0.0.1 from sglang-0.0.1-py3-none-any.whl\n\nsha256 {sha_1}\n",
        None,
    )
    want_2 = expected_commit(
        EXPECTED_2,
        EPOCH_2,
        f"sglang 0.0.2 from sglang-0.0.2-py3-none-any.whl\n\nsha256 {sha_2}\n",
        want_1,
    )
    assert first.commits == (want_1, want_2)


def test_user_git_config_and_git_env_do_not_leak_in(
    index: FakeIndex, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    index.add_releases()
    reference = build(index, tmp_path / "ref" / "corpus", ["0.0.1", "0.0.2"])

    home = tmp_path / "home"
    home.mkdir()
    (home / ".gitconfig").write_text(
        "[core]\n\tautocrlf = true\n\teol = crlf\n[init]\n\tdefaultBranch = trunk\n"
        "[commit]\n\tgpgSign = true\n[user]\n\tname = Someone Else\n\temail = x@example.com\n"
    )
    elsewhere = tmp_path / "elsewhere"
    git.Repo.init(elsewhere)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home))
    monkeypatch.setenv("GIT_DIR", str(elsewhere / ".git"))
    monkeypatch.setenv("GIT_WORK_TREE", str(elsewhere))
    monkeypatch.setenv("GIT_INDEX_FILE", str(elsewhere / ".git" / "index"))
    monkeypatch.setenv("GIT_CONFIG_PARAMETERS", "'core.autocrlf'='true'")
    monkeypatch.setenv("GIT_AUTHOR_DATE", "2000-01-01T00:00:00Z")
    dest = tmp_path / "iso" / "corpus"
    result = build(index, dest, ["0.0.1", "0.0.2"])
    assert result.commits == reference.commits
    assert (dest / "python/sglang/srt/crlf.py").read_bytes() == CRLF_PY
    assert (dest / "python/sglang/srt/x.py").read_bytes() == EXPECTED_2["python/sglang/srt/x.py"][1]
    assert (dest / ".git/HEAD").read_text() == "ref: refs/heads/main\n"
    assert not (elsewhere / ".git" / "refs" / "tags" / "v0.0.1").exists()
    assert not (elsewhere / ".git" / "index").exists()
    assert "worktree" not in (dest / ".git/config").read_text()


def test_reuse_needs_no_network(index: FakeIndex, tmp_path: Path):
    index.add_releases()
    dest = tmp_path / "corpus"
    first = build(index, dest, ["0.0.1", "0.0.2"])
    index.requests.clear()

    again = build(index, dest, ["0.0.2", "0.0.1"])
    assert again == CorpusBuild(path=dest, tags=first.tags, commits=first.commits, reused=True)
    subset = build(index, dest, ["0.0.1"])
    assert subset == CorpusBuild(
        path=dest, tags=("v0.0.1",), commits=first.commits[:1], reused=True
    )
    assert index.requests == []

    # It stays reusable when the index is unreachable.
    offline = build_corpus(dest, ["0.0.1", "0.0.2"], index_url="http://127.0.0.1:9/simple")
    assert offline.reused and offline.commits == first.commits


def test_newer_version_is_appended_without_rebuilding(index: FakeIndex, tmp_path: Path):
    index.add_releases()
    dest = tmp_path / "corpus"
    one = build(index, dest, ["0.0.1"])
    inode = (dest / ".git").stat().st_ino
    index.requests.clear()

    both = build(index, dest, ["0.0.1", "0.0.2"])
    assert both.reused is False
    assert both.tags == ("v0.0.1", "v0.0.2")
    assert both.commits[0] == one.commits[0]
    assert (dest / ".git").stat().st_ino == inode  # same repository, not a new one
    assert index.file_requests() == ["/files/sglang-0.0.2-py3-none-any.whl"]
    assert tree_files(dest, "v0.0.2") == EXPECTED_2
    assert git.Repo(dest).head.commit.hexsha == both.commits[1]
    assert not (dest / "python/sglang/srt/gone.py").exists()

    fresh = build(index, tmp_path / "fresh" / "corpus", ["0.0.1", "0.0.2"])
    assert fresh.commits == both.commits


def test_older_version_forces_a_rebuild(index: FakeIndex, tmp_path: Path):
    index.add_releases()
    dest = tmp_path / "corpus"
    build(index, dest, ["0.0.2"])
    result = build(index, dest, ["0.0.1", "0.0.2"])
    fresh = build(index, tmp_path / "fresh" / "corpus", ["0.0.1", "0.0.2"])
    assert result.reused is False
    assert result.commits == fresh.commits
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cache", "corpus", "fresh", "wheels-src"]


def test_changed_wheel_choice_forces_a_rebuild(index: FakeIndex, tmp_path: Path):
    index.add("sglang-0.0.1-cp311-cp311-manylinux_2_34_x86_64.whl", RELEASE_1, upload_time=TIME_1)
    index.add("sglang-0.0.2-py3-none-any.whl", RELEASE_2, upload_time=TIME_2)
    dest = tmp_path / "corpus"
    old = build(index, dest, ["0.0.1"])
    index.add("sglang-0.0.1-py3-none-any.whl", RELEASE_1, upload_time=TIME_1)
    new = build(index, dest, ["0.0.1", "0.0.2"])
    assert new.commits[0] != old.commits[0]
    assert (
        git.Repo(dest)
        .commit("v0.0.1")
        .message.startswith("sglang 0.0.1 from sglang-0.0.1-py3-none-any.whl\n")
    )


def test_cached_wheels_are_not_downloaded_again(index: FakeIndex, tmp_path: Path):
    index.add_releases()
    cache = tmp_path / "cache"
    build(index, tmp_path / "a", ["0.0.1", "0.0.2"], cache_dir=cache)
    assert sorted(p.name for p in (cache / "wheels").iterdir()) == [
        "sglang-0.0.1-py3-none-any.whl",
        "sglang-0.0.2-py3-none-any.whl",
    ]
    index.requests.clear()
    lines: list[str] = []
    build(index, tmp_path / "b", ["0.0.1", "0.0.2"], cache_dir=cache, log=lines.append)
    assert index.requests == ["/simple/sglang/"]
    assert "using cached sglang-0.0.1-py3-none-any.whl (0.0 MB)" in lines

    # A damaged cached wheel is fetched again.
    (cache / "wheels" / "sglang-0.0.1-py3-none-any.whl").write_bytes(b"damaged")
    index.requests.clear()
    build(index, tmp_path / "c", ["0.0.1"], cache_dir=cache)
    assert index.file_requests() == ["/files/sglang-0.0.1-py3-none-any.whl"]


def test_hash_mismatch_raises_and_leaves_nothing(index: FakeIndex, tmp_path: Path):
    index.add("sglang-0.0.1-py3-none-any.whl", RELEASE_1, sha256="0" * 64)
    dest = tmp_path / "out" / "corpus"
    with pytest.raises(CorpusError) as err:
        build(index, dest, ["0.0.1"])
    message = str(err.value)
    assert "sglang-0.0.1-py3-none-any.whl" in message
    assert "0" * 64 in message
    assert hashlib.sha256(index.blobs["sglang-0.0.1-py3-none-any.whl"]).hexdigest() in message
    assert "\n" not in message
    assert not dest.exists()
    assert list((tmp_path / "out" / "cache" / "wheels").iterdir()) == []


def test_failure_while_importing_leaves_nothing_at_dest(index: FakeIndex, tmp_path: Path):
    index.add_releases()
    index.add("sglang-0.0.3-py3-none-any.whl", data=b"not a zip file", upload_time=TIME_2)
    dest = tmp_path / "corpus"
    with pytest.raises(CorpusError, match=r"sglang-0\.0\.3-py3-none-any\.whl .*not a readable"):
        build(index, dest, ["0.0.1", "0.0.2", "0.0.3"])
    assert not dest.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cache", "wheels-src"]


def test_existing_non_corpus_folder_is_left_alone(index: FakeIndex, tmp_path: Path):
    index.add_releases()
    dest = tmp_path / "mine"
    dest.mkdir()
    (dest / "notes.txt").write_text("keep me")
    with pytest.raises(CorpusError, match="is not a corpus built by raise-miner") as err:
        build(index, dest, ["0.0.1"])
    assert str(dest) in str(err.value)
    assert [p.name for p in dest.iterdir()] == ["notes.txt"]
    assert (dest / "notes.txt").read_text() == "keep me"

    other_repo = tmp_path / "repo"
    git.Repo.init(other_repo)
    (other_repo / "f.py").write_text("x = 1\n")
    with pytest.raises(CorpusError, match="is not a corpus built by raise-miner"):
        build(index, other_repo, ["0.0.1"])
    assert (other_repo / "f.py").read_text() == "x = 1\n"
    assert index.requests == []  # refused before any network access


def test_empty_existing_folder_is_used(index: FakeIndex, tmp_path: Path):
    index.add_releases()
    dest = tmp_path / "corpus"
    dest.mkdir()
    assert build(index, dest, ["0.0.1"]).tags == ("v0.0.1",)


def test_missing_version_names_it_and_nearby_ones(index: FakeIndex, tmp_path: Path):
    index.add_releases()
    index.add("sglang-0.0.3.tar.gz", data=b"sdist only")
    with pytest.raises(CorpusError) as err:
        build(index, tmp_path / "corpus", ["0.0.1", "0.0.9"])
    assert str(err.value) == (
        f"sglang 0.0.9 has no wheel on {index.url}; nearby versions with wheels: "
        "0.0.1, 0.0.2; request one of those instead"
    )
    with pytest.raises(CorpusError, match=r"sglang 0\.0\.3 has only an sdist, no wheel"):
        find_release_wheel("0.0.3", index_url=index.url)
    assert not (tmp_path / "corpus").exists()


def test_wheel_choice_prefers_pure_then_first_filename(index: FakeIndex):
    for name in (
        "sglang-0.0.1-cp312-cp312-manylinux_2_34_x86_64.whl",
        "sglang-0.0.1-cp310-cp310-manylinux_2_34_x86_64.whl",
        "sglang-0.0.1-cp310-cp310-manylinux_2_34_aarch64.whl",
        "sglang-0.0.1.tar.gz",
        "sglang-0.0.2-cp311-cp311-manylinux_2_34_x86_64.whl",
        "sglang-0.0.2-py3-none-any.whl",
        "sglang-0.0.2-cp310-cp310-manylinux_2_34_aarch64.whl",
    ):
        index.add(name, data=name.encode(), upload_time=TIME_2)
    chosen = find_release_wheel("0.0.1", index_url=index.url)
    assert chosen == ReleaseWheel(
        version="0.0.1",
        filename="sglang-0.0.1-cp310-cp310-manylinux_2_34_aarch64.whl",
        url=f"{index.url[: -len('/simple')]}/files/"
        "sglang-0.0.1-cp310-cp310-manylinux_2_34_aarch64.whl",
        sha256=hashlib.sha256(b"sglang-0.0.1-cp310-cp310-manylinux_2_34_aarch64.whl").hexdigest(),
        size=len("sglang-0.0.1-cp310-cp310-manylinux_2_34_aarch64.whl"),
        upload_time=TIME_2,
    )
    assert chosen.upload_epoch == EPOCH_2
    pure = find_release_wheel("0.0.2", index_url=index.url)
    assert pure.filename == "sglang-0.0.2-py3-none-any.whl"


def test_version_match_is_exact(index: FakeIndex):
    for name in (
        "sglang-0.0.1rc0-py3-none-any.whl",
        "sglang-0.0.1-cp310-cp310-manylinux_2_34_x86_64.whl",
        "sglang-0.0.1.post1-py3-none-any.whl",
        "sglang-0.0.10-py3-none-any.whl",
        "sglang-0.0.2.post1-py3-none-any.whl",
        "sglang-0.0.2rc0-py3-none-any.whl",
        "sglang_extra-0.0.2-py3-none-any.whl",
    ):
        index.add(name, data=name.encode())
    assert find_release_wheel("0.0.1", index_url=index.url).filename == (
        "sglang-0.0.1-cp310-cp310-manylinux_2_34_x86_64.whl"
    )
    assert find_release_wheel("0.0.1.post1", index_url=index.url).version == "0.0.1.post1"
    assert find_release_wheel("0.0.1-RC0", index_url=index.url).filename == (
        "sglang-0.0.1rc0-py3-none-any.whl"
    )
    with pytest.raises(
        CorpusError,
        match=r"^sglang 0\.0\.2 has no wheel .*0\.0\.2rc0, "
        r"0\.0\.2\.post1, 0\.0\.10;",
    ):
        find_release_wheel("0.0.2", index_url=index.url)


def test_versions_are_sorted_by_release_order(index: FakeIndex, tmp_path: Path):
    for version, when in (("0.0.10", TIME_2), ("0.0.9", TIME_1), ("0.0.9.post1", TIME_2)):
        index.add(
            f"sglang-{version}-py3-none-any.whl",
            {"sglang/__init__.py": version.encode()},
            upload_time=when,
        )
    result = build(index, tmp_path / "corpus", ["0.0.10", "0.0.9.post1", "0.0.9", "0.0.9"])
    assert result.tags == ("v0.0.9", "v0.0.9.post1", "v0.0.10")
    repo = git.Repo(tmp_path / "corpus")
    assert [c.hexsha for c in repo.iter_commits("main", reverse=True)] == list(result.commits)

    ordered = [
        "0.5.9",
        "0.5.10.dev1",
        "0.5.10a1",
        "0.5.10rc0",
        "0.5.10",
        "0.5.10.post1",
        "0.5.11",
        "1!0.1",
    ]
    assert sorted(reversed(ordered), key=corpus._version_key) == ordered
    assert corpus._canonical_version("0.5.2-RC1") == "0.5.2rc1"
    with pytest.raises(CorpusError, match=r"invalid version 'latest'"):
        build(index, tmp_path / "x", ["latest"])
    with pytest.raises(CorpusError, match="no versions requested"):
        build(index, tmp_path / "x", [])


def test_unreachable_index_is_one_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(pypi, "_RETRY_DELAYS_S", (0.0, 0.0))
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}/simple"
    with pytest.raises(CorpusError) as err:
        build_corpus(tmp_path / "corpus", ["0.0.1"], index_url=url, cache_dir=tmp_path)
    message = str(err.value)
    assert message.startswith(f"cannot reach {url} to list sglang wheels: ")
    assert message.endswith("; check network access to the package index or pass --index-url")
    assert "\n" not in message
    assert not (tmp_path / "corpus").exists()


def test_unknown_package_and_unsafe_wheel(index: FakeIndex, tmp_path: Path):
    with pytest.raises(CorpusError, match=r"has no project 'nonexistent'"):
        find_release_wheel("0.0.1", package="nonexistent", index_url=index.url)
    index.add("sglang-0.0.1-py3-none-any.whl", {"sglang/../evil.py": b"x"})
    with pytest.raises(CorpusError, match="unsafe entry 'sglang/../evil.py'"):
        build(index, tmp_path / "corpus", ["0.0.1"])
    assert not (tmp_path / "corpus").exists()


def test_file_index(tmp_path: Path):
    src = tmp_path / "files"
    src.mkdir()
    data = make_wheel(src / "sglang-0.0.1-py3-none-any.whl", RELEASE_1)
    page = tmp_path / "simple" / "sglang"
    page.mkdir(parents=True)
    (page / "index.json").write_text(
        json.dumps(
            {
                "meta": {"api-version": "1.1"},
                "files": [
                    {
                        "filename": "sglang-0.0.1-py3-none-any.whl",
                        "url": "../../files/sglang-0.0.1-py3-none-any.whl",
                        "hashes": {"sha256": hashlib.sha256(data).hexdigest()},
                        "size": len(data),
                        "upload-time": TIME_1,
                    }
                ],
            }
        )
    )
    result = build_corpus(
        tmp_path / "corpus",
        ["0.0.1"],
        index_url=(tmp_path / "simple").as_uri(),
        cache_dir=tmp_path / "c",
    )
    assert tree_files(tmp_path / "corpus", result.commits[0]) == EXPECTED_1


def test_default_cache_dir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    monkeypatch.setenv("RAISE_MINER_CACHE", str(tmp_path / "explicit"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_dir() == tmp_path / "explicit"
    monkeypatch.delenv("RAISE_MINER_CACHE")
    assert default_cache_dir() == tmp_path / "xdg" / "raise-miner"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_cache_dir() == tmp_path / "home" / ".cache" / "raise-miner"


# ------------------------------------------------------------------------ integration


def _line(repo: git.Repo, rev: str, path: str, number: int) -> str:
    blob = repo.commit(rev).tree / path
    text = blob.data_stream.read().decode("utf-8")
    return re.split(r"\r\n|\r|\n", text)[number - 1].strip()


@pytest.mark.integration
def test_real_sglang_release_from_pypi(tmp_path: Path):
    """Builds v0.5.19 from PyPI (about 25 MB), or reads $RAISE_MINER_CORPUS if set."""
    assert "0.5.19" in DEFAULT_VERSIONS
    prebuilt = os.environ.get("RAISE_MINER_CORPUS")
    path = Path(prebuilt) if prebuilt else build_corpus(tmp_path / "sglang", ["0.5.19"]).path
    repo = git.Repo(path)
    assert _line(repo, "v0.5.19", "python/sglang/srt/mem_cache/registry.py", 154) == (
        'raise ValueError("Host-pool retraction does not support Mamba models.")'
    )
    aux = "python/sglang/srt/hardware_backend/mlx/kv_cache/auxiliary_state.py"
    assert _line(repo, "v0.5.19", aux, 334).startswith("raise NotImplementedError(")
    assert repo.commit("v0.5.19").message.startswith(
        "sglang 0.5.19 from sglang-0.5.19-cp310-cp310-manylinux_2_34_aarch64.whl\n\nsha256 "
    )
