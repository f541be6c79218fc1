"""Only what the tool wrote is ever deleted or replaced (issue 36, items 1, 2
and 7): files that are not regular files, files written into the output while
a run writes it, names beside the output that the tool did not make, a
``miner diff`` through a link into a mined folder, the owner and mode of the
folder, a mined folder on a read-only mount, ``miner corpus``'s lock."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import add_commit
from test_publish_faults import files_under, listed

from miner import files
from miner.cli import main
from miner.files import Staging, lock_path, locked

SOURCE = "def f(x):\n    raise ValueError(f'mode {x} is not supported')\n"
NEW = {"pkg/b.py": "def g(y):\n    raise KeyError(f'no model {y}')\n"}


def mine(repo: Path, rev: str, out: Path, *extra: str) -> int:
    return main(["mine", "--repo", str(repo), "--commit", rev, "--out", str(out), "-q", *extra])


def commit_of(out: Path) -> str:
    return json.loads((out / "manifest.json").read_text(encoding="utf-8"))["commit"]["sha"]


def beside(out: Path) -> list[str]:
    return sorted(p.name for p in out.parent.iterdir() if p.name != out.name)


@contextlib.contextmanager
def unix_socket(path: Path) -> Iterator[None]:
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind(str(path))
        yield
    finally:
        sock.close()


# -- files that are not regular files ----------------------------------------------------


def test_a_fifo_and_a_socket_in_out_survive_every_run(make_repo, tmp_path: Path) -> None:
    repo = make_repo({"pkg/a.py": SOURCE})
    add_commit(repo, NEW, tag="v2")
    out = tmp_path / "out"
    assert mine(repo, "v1", out, "--site") == 0
    os.mkfifo(out / "pipe")
    (out / "site" / "sub").mkdir()
    os.mkfifo(out / "site" / "sub" / "pipe")
    with unix_socket(out / "sock"):
        assert mine(repo, "v2", out, "--site") == 0
        assert main(["site", "--out", str(out), "-j", "1"]) == 0
        assert mine(repo, "v1", out) == 0
        assert stat.S_ISFIFO((out / "pipe").lstat().st_mode)
        assert stat.S_ISFIFO((out / "site" / "sub" / "pipe").lstat().st_mode)
        assert stat.S_ISSOCK((out / "sock").lstat().st_mode)
    assert listed(out) == files_under(out)


def test_a_readers_file_named_like_a_lock_inside_out_is_kept(make_repo, tmp_path: Path) -> None:
    repo = make_repo({"pkg/a.py": SOURCE})
    out = tmp_path / "out"
    assert mine(repo, "v1", out) == 0
    (out / ".notes.lock").write_text("my notes\n")
    (out / "errors" / ".todo.lock").write_text("")
    assert mine(repo, "v1", out, "--no-cache", "--site") == 0
    assert (out / ".notes.lock").read_text() == "my notes\n"
    assert (out / "errors" / ".todo.lock").read_text() == ""


# -- files written while a run writes ------------------------------------------------------

#: Written into OUT after the run seeded its staging folder: a reader's notes,
#: a file among the cards, a new folder, a page in the site, a diff report.
LATE = {
    "notes.txt": "mine\n",
    "errors/HOWTO.md": "how to\n",
    "mine/deep/x.txt": "x\n",
    "site/custom.html": "<p>mine</p>\n",
    "diffs/v1-v2.md": "# diff\n",
}


def write_late(out: Path) -> None:
    for rel, text in LATE.items():
        path = out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


@pytest.mark.parametrize("when", ["before-the-swap", "in-the-swap", "in-the-fallback-swap"])
def test_a_file_written_while_a_run_writes_is_kept(
    make_repo, tmp_path: Path, monkeypatch, when: str
) -> None:
    """Files that appear in OUT after the run seeded its staging folder: just
    before the swap, or while it runs (between its last look at OUT and the
    rename, with ``renameat2`` and with the two renames of the fallback)."""
    repo = make_repo({"pkg/a.py": SOURCE})
    new = add_commit(repo, NEW, tag="v2")
    out = tmp_path / "out"
    assert mine(repo, "v1", out, "--site") == 0
    if when == "before-the-swap":
        real_swap = Staging.swap

        def late_swap(self: Staging, *args: object, **kwargs: object) -> None:
            write_late(self.real)
            real_swap(self, *args, **kwargs)

        monkeypatch.setattr(Staging, "swap", late_swap)
    else:
        real_exchange = files.exchange

        def late_exchange(a: Path, b: Path) -> bool:
            write_late(b)
            return real_exchange(a, b) if when == "in-the-swap" else False

        monkeypatch.setattr(files, "exchange", late_exchange)
    assert mine(repo, "v2", out, "--site") == 0
    assert commit_of(out) == new
    assert {rel: (out / rel).read_text() for rel in LATE} == LATE
    assert listed(out) | set(LATE) == files_under(out)
    assert beside(out) == ["repo1"]


def test_a_late_file_the_run_writes_too_refuses_the_swap(
    make_repo, tmp_path: Path, monkeypatch, capsys
) -> None:
    """A file written into OUT while the run writes it, at a path the run
    writes too: nothing published, one line; OUT keeps the previous output
    and that file, the new output is kept beside it."""
    repo = make_repo({"pkg/a.py": SOURCE})
    old = add_commit(repo, {"pkg/c.py": "x = 1\n"}, tag="v1.1")
    add_commit(repo, NEW, tag="v2")
    out = tmp_path / "out"
    assert mine(repo, "v1.1", out) == 0
    before = {rel: (out / rel).read_bytes() for rel in files_under(out)}
    real_swap = Staging.swap
    clash = ""

    def late_swap(self: Staging, *args: object, **kwargs: object) -> None:
        assert self.root is not None
        nonlocal clash
        clash = min(set(files_under(self.root)) - set(before))  # a file new in v2
        (self.real / clash).write_text("mine\n")
        real_swap(self, *args, **kwargs)

    monkeypatch.setattr(Staging, "swap", late_swap)
    capsys.readouterr()
    assert mine(repo, "v2", out) == 2
    kept = [name for name in beside(out) if name.startswith("out.new-")]
    assert len(kept) == 1
    assert capsys.readouterr().err.splitlines() == [
        f"miner: error: {out}: {clash} was written into it while this run wrote it, and the "
        f"run writes that file too; nothing published: the previous output and that file "
        f"are kept, the new output is in {tmp_path / kept[0]}; move the file and run again"
    ]
    assert commit_of(out) == old
    assert {rel: (out / rel).read_bytes() for rel in before} == before
    assert (out / clash).read_text() == "mine\n"
    assert files_under(out) == set(before) | {clash}
    assert commit_of(tmp_path / kept[0]) != old
    assert not lock_path(out).exists()
    # the kept tree is the reader's now: a later run leaves it alone
    monkeypatch.undo()
    (out / clash).unlink()
    assert mine(repo, "v2", out) == 0
    assert (tmp_path / kept[0] / "manifest.json").is_file()


# -- names beside OUT -----------------------------------------------------------------------


def test_names_beside_out_that_the_tool_did_not_make_are_kept(make_repo, tmp_path: Path) -> None:
    repo = make_repo({"pkg/a.py": SOURCE})
    out = tmp_path / "out"
    theirs = [tmp_path / ".out.old-mine", tmp_path / ".out.staging-mine", tmp_path / ".out.lock"]
    theirs[0].mkdir()
    (theirs[0] / "notes.txt").write_text("old notes\n")
    theirs[1].mkdir()
    (theirs[1] / "manifest.json").write_text("{}")
    theirs[2].write_text("not a lock\n")
    # OUT does not exist: a lone .out.old-* is not taken for it
    assert mine(repo, "v1", out) == 0
    assert (out / "manifest.json").is_file() and not (out / "notes.txt").exists()
    assert mine(repo, "v1", out, "--no-cache", "--site") == 0
    assert (theirs[0] / "notes.txt").read_text() == "old notes\n"
    assert (theirs[1] / "manifest.json").read_text() == "{}"
    assert theirs[2].read_text() == "not a lock\n"
    assert beside(out) == sorted(p.name for p in theirs) + ["repo1"]


def test_what_a_killed_run_left_beside_out_is_removed_by_the_next(
    make_repo, tmp_path: Path
) -> None:
    """A run killed after it made its staging folder (and one killed between
    the two renames of the fallback swap): the next run removes the first and
    puts the second back in OUT's place."""
    repo = make_repo({"pkg/a.py": SOURCE})
    out = tmp_path / "out"
    assert mine(repo, "v1", out) == 0
    sha = commit_of(out)
    with locked(out):
        abandoned = Staging(out).open()  # a kill here leaves it, recorded
    assert abandoned.is_dir()
    staging = Staging(out)
    aside = staging.reserve(staging.old_prefix)
    out.rename(aside)
    assert mine(repo, "v1", out) == 0
    assert commit_of(out) == sha and beside(out) == ["repo1"]


# -- the lock of the real path ---------------------------------------------------------------


@contextlib.contextmanager
def held_elsewhere(folder: Path) -> Iterator[int]:
    """The lock of ``folder`` held by another process; yields its pid."""
    lock = lock_path(folder)
    lock.parent.mkdir(parents=True, exist_ok=True)
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import fcntl, os, sys\n"
            f"fd = os.open({str(lock)!r}, os.O_RDWR | os.O_CREAT)\n"
            "fcntl.flock(fd, fcntl.LOCK_EX)\n"
            "os.write(fd, f'{os.getpid()}\\n'.encode())\n"
            "print('held', flush=True)\n"
            "sys.stdin.read()\n"
            f"os.unlink({str(lock)!r})\n",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        yield holder.pid
    finally:
        holder.communicate("", timeout=30)


def test_diff_through_a_link_into_a_mined_folder_takes_its_lock(
    make_repo, tmp_path: Path, capsys
) -> None:
    repo = make_repo({"pkg/a.py": SOURCE})
    add_commit(repo, NEW, tag="v2")
    out = tmp_path / "out"
    assert mine(repo, "v1", out) == 0
    (out / "diffs").mkdir()
    link = tmp_path / "reports"
    link.symlink_to(out / "diffs")
    capsys.readouterr()
    with held_elsewhere(out) as pid:
        code = main(["diff", "--repo", str(repo), "v1", "v2", "--out", str(link)])
    assert code == 2
    assert capsys.readouterr().err.splitlines() == [
        f"miner: error: {out}: another miner run (pid {pid}) is writing this folder; "
        "wait for it to end or pass another --out"
    ]
    assert list((out / "diffs").iterdir()) == []
    assert main(["diff", "--repo", str(repo), "v1", "v2", "--out", str(link)]) == 0
    assert sorted(p.name for p in (out / "diffs").iterdir()) == ["v1..v2.json", "v1..v2.md"]


def test_corpus_takes_the_lock_of_its_destination(tmp_path: Path, capsys) -> None:
    dest = tmp_path / "corpus"
    with held_elsewhere(dest) as pid:
        argv = ["corpus", "--dest", str(dest), "--versions", "0.0.1", "-q"]
        code = main([*argv, "--index-url", "http://127.0.0.1:9/simple"])  # never reached
    assert code == 2
    assert capsys.readouterr().err.splitlines() == [
        f"miner: error: {dest}: another miner run (pid {pid}) is writing this folder; "
        "wait for it to end or pass another --dest"
    ]
    assert not dest.exists()


# -- owner and mode ---------------------------------------------------------------------------

OWNER = (4321, 4322)


def owners(folder: Path) -> set[tuple[int, int]]:
    found = {(folder.lstat().st_uid, folder.lstat().st_gid)}
    for path in folder.rglob("*"):
        info = path.lstat()
        found.add((info.st_uid, info.st_gid))
    return found


def test_the_output_keeps_the_owner_and_mode_of_the_folder_it_replaces(
    make_repo, tmp_path: Path
) -> None:
    if os.geteuid() != 0:
        pytest.skip("giving a folder to another user needs root")
    repo = make_repo({"pkg/a.py": SOURCE})
    add_commit(repo, NEW, tag="v2")
    out = tmp_path / "out"
    assert mine(repo, "v1", out, "--site") == 0
    for path in [out, *out.rglob("*")]:
        os.lchown(path, *OWNER)
    out.chmod(0o750)
    (out / "errors").chmod(0o700)
    assert mine(repo, "v2", out, "--site") == 0
    assert stat.S_IMODE(out.stat().st_mode) == 0o750
    assert stat.S_IMODE((out / "errors").stat().st_mode) == 0o700
    assert owners(out) == {OWNER}  # the folder and every file and folder the run made
    assert main(["site", "--out", str(out), "-j", "1"]) == 0
    assert owners(out) == {OWNER}


# -- a read-only mined folder -----------------------------------------------------------------


@contextlib.contextmanager
def read_only(folder: Path) -> Iterator[Path]:
    """``folder`` seen through a read-only mount (root: a read-only bind
    mount, since root ignores file modes), or with its modes made read-only."""
    if os.geteuid() != 0:
        for path in [folder, *folder.rglob("*")]:
            path.chmod(path.stat().st_mode & ~0o222)
        try:
            yield folder
        finally:
            for path in [folder, *folder.rglob("*")]:
                path.chmod(path.stat().st_mode | 0o200)
        return
    view = folder.with_name(folder.name + "-ro")
    view.mkdir()
    done = subprocess.run(["mount", "--bind", str(folder), str(view)], capture_output=True)
    if done.returncode != 0:
        view.rmdir()
        pytest.skip(f"bind mount not permitted here: {done.stderr.decode().strip()}")
    try:
        subprocess.run(["mount", "-o", "remount,ro,bind", str(view)], check=True)
        yield view
    finally:
        subprocess.run(["umount", "-l", str(view)], check=False)
        view.rmdir()


def test_site_reads_a_mined_folder_on_a_read_only_mount(make_repo, tmp_path: Path, capsys) -> None:
    repo = make_repo({"pkg/a.py": SOURCE})
    out = tmp_path / "out"
    assert mine(repo, "v1", out) == 0
    before = {rel: (out / rel).read_bytes() for rel in files_under(out)}
    www = tmp_path / "www"
    with read_only(out) as view:
        assert main(["site", "--out", str(view), "--dest", str(www), "-j", "1"]) == 0
        assert (www / "index.html").is_file()
        assert main(["lookup", "--out", str(view), "mode 3 is not supported"]) == 0
        capsys.readouterr()
        assert main(["site", "--out", str(view), "-j", "1"]) == 2
        why = "read-only file system" if os.geteuid() == 0 else "permission denied"
        assert capsys.readouterr().err.splitlines() == [
            f"miner: error: {view / 'site'}: cannot write the site into the mined folder "
            f"{view} ({why}); pass --dest with a writable folder outside it"
        ]
    assert {rel: (out / rel).read_bytes() for rel in files_under(out)} == before


@pytest.mark.parametrize("where", ["retire", "recover"])
def test_a_stop_while_the_old_tree_is_removed_leaves_no_record(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    """Ctrl-C while a run removes the replaced tree after the swap, or the
    leftovers of a killed run before it starts: the removal and the record's
    update finish first, then the stop is raised; nothing is left recorded
    (``.made``) and nothing is left beside OUT."""
    import signal

    from miner import files

    out = tmp_path / "out"
    out.mkdir()
    (out / "old.txt").write_text("old\n")
    real_remove = files.remove_tree
    calls: list[str] = []

    def stopped_remove(path: Path | str) -> None:
        calls.append(Path(path).name)
        if len(calls) == 1:
            signal.raise_signal(signal.SIGINT)  # its handler runs between the next bytecodes
        real_remove(path)

    with locked(out):
        if where == "recover":
            Staging(out).reserve(Staging(out).prefix).mkdir()  # a killed run's staging folder
        staging = Staging(out)
        monkeypatch.setattr(files, "remove_tree", stopped_remove)
        with pytest.raises(KeyboardInterrupt):
            root = staging.open()
            (root / "new.txt").write_text("new\n")
            staging.swap({"new.txt"})
        monkeypatch.undo()
        assert calls, "the removal was never reached"
        assert not files.made_path(out).exists()
        assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
