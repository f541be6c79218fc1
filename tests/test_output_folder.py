"""Where a run may write and what it leaves: the folder's own README, and the
lock files (kept in the cache folder, keyed by the output's real path, gone
when the run ends)."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

import pytest

from miner import TEMPLATES
from miner.cli import main
from miner.errors import OutputError
from miner.files import BusyError, default_cache_dir, lock_path, locked
from miner.publish.output import README, check_folder, readme_text

PROJECT = Path(__file__).resolve().parents[1]
SOURCE = (
    "def f(mode):\n    if mode == 'x':\n        raise ValueError(f'mode {mode} is not supported')\n"
)

#: A card by its words: the toy code has no options class an origin could reach.
MINE = ["mine", "--no-origins", "-j", "0", "--commit", "v1", "--repo"]


def test_the_projects_output_readme_is_the_one_every_run_writes() -> None:
    tracked = PROJECT / "output" / "README.md"
    assert tracked.read_bytes() == (TEMPLATES / "output-README.md").read_bytes()
    assert readme_text() == tracked.read_text(encoding="utf-8")


def test_a_folder_holding_only_the_tools_readme_is_mined_into(make_repo, tmp_path: Path) -> None:
    repo = make_repo({"pkg/a.py": SOURCE})
    out = tmp_path / "output"
    out.mkdir()
    (out / README).write_text(readme_text(), encoding="utf-8")
    assert main([*MINE, str(repo), "--out", str(out)]) == 0
    assert (out / README).read_text(encoding="utf-8") == readme_text()
    assert (out / "manifest.json").is_file()
    assert list((out / "errors").glob("*.md"))
    # a second run owns the README it wrote (listed in the manifest)
    assert main([*MINE, str(repo), "--out", str(out)]) == 0


def test_a_folder_with_another_readme_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "output"
    out.mkdir()
    (out / README).write_text(readme_text() + "my notes\n", encoding="utf-8")
    with pytest.raises(OutputError, match="not written by raise-miner .* it holds README.md"):
        check_folder(out, "records")


def test_the_lock_lives_in_the_cache_keyed_by_the_real_path(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    link = tmp_path / "link"
    link.symlink_to(out)
    path = lock_path(out)
    assert path.parent == default_cache_dir() / "locks"
    assert path.name.startswith("out-") and path.suffix == ".lock"
    assert lock_path(link) == path  # two paths to one folder: one lock
    assert lock_path(tmp_path / "other") != path
    with locked(out):
        assert path.read_text() == f"{os.getpid()}\n"
        assert not any(p.name.endswith(".lock") for p in tmp_path.iterdir())
    assert not path.exists()  # removed when released


def test_a_lock_held_by_another_process_stops_the_run_naming_its_pid(tmp_path: Path) -> None:
    out = tmp_path / "out"
    path = lock_path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        os.write(fd, b"4242\x1b[31m\n")  # what is read back is never printed raw
        with pytest.raises(BusyError) as caught, locked(link := out):
            pass
        assert str(caught.value) == (
            f"{link}: another miner run (pid 4242) is writing this folder; "
            "wait for it to end or pass another --out"
        )
    finally:
        os.close(fd)


def test_a_symlinked_lock_file_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "out"
    path = lock_path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    target = tmp_path / "precious"
    target.write_text("keep me")
    path.symlink_to(target)
    try:
        with pytest.raises(OutputError, match="cannot create the lock file"), locked(out):
            pass
        assert target.read_text() == "keep me"
    finally:
        path.unlink()
