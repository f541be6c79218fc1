"""The built wheel is the whole program: every module and every template,
static file and JSON Schema ships in it, and ``miner mine --site`` runs from a
fresh virtual environment holding only the wheel, away from the source tree.

How the pieces are made, to stay fast and need as little network as can be:

- The wheel is built from a copy of the project (top-level files,
  ``miner/`` and ``templates/``), so nothing of the build lands in the source
  tree. ``pip wheel --no-build-isolation`` is used when this interpreter has
  the build backend, hatchling (the test extra installs it); otherwise pip
  builds in isolation and fetches it from the package index.
- The virtual environment is plain (no ``--system-site-packages``, no pip of
  its own); this interpreter's pip installs the wheel into it with
  ``--no-deps --no-index``. The dependencies (libcst, GitPython, Jinja2, ...)
  are made importable by a ``.pth`` file listing this interpreter's
  ``site-packages`` folders. Folders listed in a ``.pth`` file are added to
  ``sys.path`` but their own ``.pth`` files are not run, so an editable
  install of the project there (its ``__editable__`` finder) stays inert; the
  venv's own site-packages comes first on ``sys.path``. The test then checks
  that every ``miner`` module imports from the venv, not the source.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path

import pytest
from packaging.version import Version
from sample_repo import FILES

pytestmark = pytest.mark.slow

PROJECT = Path(__file__).resolve().parents[1]
SOURCE_PACKAGE = PROJECT / "miner"
TEMPLATES = PROJECT / "templates"
BIN = "Scripts" if os.name == "nt" else "bin"


def package_files(root: Path) -> list[str]:
    """Files of the source package, relative to the project (``miner/...``),
    without byte code."""
    return sorted(
        p.relative_to(root.parent).as_posix()
        for p in root.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and p.suffix not in {".pyc", ".pyo"}
    )


def clean_env(**extra: str) -> dict[str, str]:
    """This process's environment without what would put the source tree on
    ``sys.path`` (``PYTHONPATH``) or change how Python starts."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in {"PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "PYTHONSAFEPATH", "VIRTUAL_ENV"}
    }
    env.update(PYTHONNOUSERSITE="1", PYTHONDONTWRITEBYTECODE="1", **extra)
    return env


def run(cmd: list[str], cwd: Path, **extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(c) for c in cmd],
        cwd=cwd,
        env=clean_env(**extra),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def _can_build_without_isolation() -> bool:
    try:
        return Version(metadata.version("hatchling")) >= Version("1.21")
    except metadata.PackageNotFoundError:
        return False


def _copy_project(dest: Path) -> Path:
    """The files a build reads: top-level files, the package and its
    templates, no caches."""
    dest.mkdir()
    for entry in PROJECT.iterdir():
        if entry.is_file():
            shutil.copy2(entry, dest / entry.name)
    for folder in (SOURCE_PACKAGE, TEMPLATES):
        shutil.copytree(
            folder, dest / folder.name, ignore=shutil.ignore_patterns("__pycache__", "*.py[co]")
        )
    return dest


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project's wheel, built once for this module."""
    base = tmp_path_factory.mktemp("wheel")
    src = _copy_project(base / "src")
    dist = base / "dist"
    cmd = [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", dist, src]
    if _can_build_without_isolation():
        cmd.append("--no-build-isolation")
    done = run(cmd, cwd=base)
    assert done.returncode == 0, f"building the wheel failed:\n{done.stdout}\n{done.stderr}"
    wheels = list(dist.glob("raise_miner-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


@pytest.fixture(scope="module")
def venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtual environment with the wheel installed, deps on loan."""
    root = tmp_path_factory.mktemp("venv") / "env"
    done = run([sys.executable, "-m", "venv", "--without-pip", root], cwd=root.parent)
    assert done.returncode == 0, done.stderr
    python = root / BIN / "python"
    done = run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            python,
            "install",
            "--no-deps",
            "--no-index",
            "-q",
            wheel,
        ],
        cwd=root.parent,
    )
    assert done.returncode == 0, f"installing the wheel failed:\n{done.stdout}\n{done.stderr}"
    purelib = Path(
        run(
            [python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
            cwd=root.parent,
        ).stdout.strip()
    )
    (purelib / "_borrowed_dependencies.pth").write_text(
        "".join(f"{folder}\n" for folder in dependency_folders()), encoding="utf-8"
    )
    return root


def dependency_folders() -> Iterator[str]:
    """This interpreter's site-packages folders. Should one hold a ``miner``
    package too (a non-editable install), the venv's own site-packages still
    comes first on ``sys.path``; the test checks where every module came from."""
    seen: set[str] = set()
    candidates = [*sys.path, sysconfig.get_path("purelib"), sysconfig.get_path("platlib")]
    for entry in candidates:
        path = Path(entry or ".").resolve()
        if path.name not in {"site-packages", "dist-packages"} or not path.is_dir():
            continue
        if str(path) not in seen:
            seen.add(str(path))
            yield str(path)


def test_wheel_carries_every_file_of_the_package(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
        entry_points = zf.read(
            next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
        ).decode()
    shipped = sorted(n for n in names if n.startswith("miner/"))
    # the top-level templates/ ships as miner/templates/ (force-include)
    source = package_files(SOURCE_PACKAGE) + [f"miner/{p}" for p in package_files(TEMPLATES)]
    missing = sorted(set(source) - set(shipped))
    assert not missing, f"files of miner/ or templates/ missing from the wheel: {missing}"
    extra = sorted(set(shipped) - set(source))
    assert not extra, f"files in the wheel that miner/ and templates/ do not have: {extra}"
    assert {
        "miner/templates/site/static/site.css",
        "miner/templates/site/group.html.j2",
        "miner/templates/card.md.j2",
        "miner/templates/group.md.j2",
    } <= set(shipped)
    assert "miner = miner.entry:run" in entry_points


def test_installed_wheel_mines_a_repository_with_its_site(
    venv: Path, make_repo, tmp_path: Path
) -> None:
    repo = make_repo(FILES, tag="v1", name="sglang")
    work = tmp_path / "elsewhere"  # outside the source tree
    work.mkdir()
    miner_exe = venv / BIN / "miner"
    done = run(
        [miner_exe, "mine", "--repo", repo, "--commit", "HEAD", "--out", "o", "--site"], work
    )
    assert done.returncode == 0, f"miner mine failed:\n{done.stdout}\n{done.stderr}"
    out = work / "o"
    assert (out / "site" / "index.html").is_file()
    # origins ran (the default) in the installed package: every error traced
    counts = json.loads((out / "manifest.json").read_text())["counts"]
    assert sum(counts["errors_by_audience"].values()) == counts["errors"] > 0
    assert sum(counts["origins_by_kind"].values()) > 0
    assert list((out / "site" / "internal").glob("*.html"))
    assert list((out / "site" / "api" / "schema").glob("*.json"))
    assert list((out / "api" / "errors").glob("*.json"))
    for name in ("manifest.json", "sites.jsonl", "analyses.jsonl", "config.json", "index.md"):
        assert (out / name).is_file(), name
    # The static files came out of the installed package, byte for byte.
    for rel in ("static/site.css", "static/search.js"):
        assert (out / "site" / rel).read_bytes() == (TEMPLATES / "site" / rel).read_bytes()

    # Every module imports from the venv, none from the source tree.
    modules = [
        p.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
        for p in package_files(SOURCE_PACKAGE)
        if p.endswith(".py") and p != "miner/__main__.py"
    ]
    probe = (
        "import importlib, json, sys\n"
        "print(json.dumps({m: importlib.import_module(m).__file__ for m in sys.argv[1:]}))\n"
    )
    done = run([venv / BIN / "python", "-c", probe, *modules], work)
    assert done.returncode == 0, done.stderr
    files = json.loads(done.stdout)
    venv_root = venv.resolve()
    outside = {m: f for m, f in files.items() if venv_root not in Path(f).resolve().parents}
    assert not outside, f"modules imported from outside the venv: {outside}"
    done = run([venv / BIN / "python", "-c", "import miner; print(miner.TEMPLATES)"], work)
    assert venv_root in Path(done.stdout.strip()).resolve().parents, done

    done = run([venv / BIN / "python", "-m", "miner", "--version"], work)
    assert done.returncode == 0 and done.stdout.startswith("miner "), done


# -- the oldest Python the wheel declares --------------------------------------

#: Run by the oldest supported interpreter: which stdlib imports it lacks.
_PROBE = """\
import importlib, json, sys
missing = []
for module, name, where in json.loads(sys.stdin.read()):
    try:
        mod = importlib.import_module(module)
        if name and not hasattr(mod, name):
            importlib.import_module(f"{module}.{name}")
    except ImportError as exc:
        missing.append(f"{where}: {module}{'.' + name if name else ''} ({exc})")
print(json.dumps(missing))
"""


def oldest_python() -> tuple[str, str] | None:
    """(version, interpreter) of ``requires-python``'s lower bound, if one is here."""
    text = (PROJECT / "pyproject.toml").read_text(encoding="utf-8")
    match = re.search(r'^requires-python\s*=\s*">=\s*(3\.\d+)', text, re.M)
    assert match, "pyproject.toml declares no requires-python lower bound"
    version = match.group(1)
    roots = [os.environ.get("PYENV_ROOT", ""), str(Path.home() / ".pyenv")]
    candidates = [shutil.which(f"python{version}")] + [
        str(p) for r in roots if r for p in sorted(Path(r).glob(f"versions/{version}.*/bin/python"))
    ]
    for exe in filter(None, candidates):
        done = subprocess.run(
            [exe, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode == 0 and done.stdout.strip() == version:
            return version, exe
    return None


def stdlib_imports() -> list[tuple[str, str | None, str]]:
    """``(module, name or None, file:line)`` of the package's runtime stdlib
    imports (not under ``if TYPE_CHECKING:``, version checks or ``try``)."""
    found: list[tuple[str, str | None, str]] = []

    def visit(node: ast.AST, where: str) -> None:
        if isinstance(node, ast.If) and any(
            isinstance(n, ast.Name | ast.Attribute)
            and getattr(n, "id", getattr(n, "attr", "")) in {"TYPE_CHECKING", "version_info"}
            for n in ast.walk(node.test)
        ):
            return
        if isinstance(node, ast.Try):
            return
        if isinstance(node, ast.Import):
            found.extend((a.name, None, f"{where}:{node.lineno}") for a in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            found.extend((node.module, a.name, f"{where}:{node.lineno}") for a in node.names)
        for child in ast.iter_child_nodes(node):
            visit(child, where)

    for path in sorted(SOURCE_PACKAGE.rglob("*.py")):
        where = path.relative_to(PROJECT).as_posix()
        visit(ast.parse(path.read_text(encoding="utf-8")), where)
    return [f for f in found if f[0].split(".")[0] in sys.stdlib_module_names]


def test_stdlib_imports_exist_in_the_oldest_supported_python() -> None:
    """``requires-python`` is a promise: the standard library names the
    package imports exist there (``importlib.resources.abc`` is 3.11+, say)."""
    found = oldest_python()
    if found is None:
        pytest.skip("no interpreter of requires-python's lower bound here")
    version, exe = found
    imports = stdlib_imports()
    assert len(imports) > 30
    done = subprocess.run(
        [exe, "-I", "-c", _PROBE],
        input=json.dumps(imports),
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    missing = json.loads(done.stdout)
    assert not missing, f"stdlib imports missing from Python {version}:\n" + "\n".join(missing)
