"""Where a file sits: test code, a tool script, vendored code, or the library.

The audience of an error raised in test, script or vendored code follows
from its path alone (:func:`miner.analysis.audience.classify`); the
configuration model and the linker skip options defined there. The folder
and file names are those of Python projects in general (``tests/``,
``benchmarks/``, ``third_party/``, ``conftest.py``, ``bench_*.py``).
"""

from __future__ import annotations

import re

__all__ = ["path_kind"]

_TEST_DIRS = frozenset(
    {"test", "tests", "testing", "unittest", "unittests", "unit_tests", "test_utils", "conftest"}
)
_TEST_FILE = re.compile(r"^(?:test_.*|.*_tests?|tests?|conftest)\.py$")
_SCRIPT_DIRS = frozenset(
    {
        "benchmark",
        "benchmarks",
        "bench",
        "example",
        "examples",
        "script",
        "scripts",
        "tools",
        "3rdparty",
        "docs",
        "doc",
        "playground",
        "debug_utils",
    }
)
_VENDORED_DIRS = frozenset({"third_party", "vendor", "_vendor", "vendored"})
_SCRIPT_FILE = re.compile(r"^(?:bench_.*|benchmark_.*|.*_benchmark|setup|check_env)\.py$")


def path_kind(path: str) -> tuple[str, str] | None:
    """``("test" | "script" | "vendored", rule text)`` for a path in test, tool or
    vendored code, else None.

    The rule text names what matched: ``python/sglang/test/ (test folder)``,
    ``bench_serving.py (benchmark file)``.
    """
    parts = path.split("/")
    folders, name = parts[:-1], parts[-1]
    for i, folder in enumerate(folders):
        if folder in _VENDORED_DIRS:
            return "vendored", "/".join(parts[: i + 1]) + "/ (vendored third-party code)"
    for i, folder in enumerate(folders):
        if folder in _TEST_DIRS:
            return "test", "/".join(parts[: i + 1]) + "/ (test folder)"
    if _TEST_FILE.match(name):
        return "test", f"{name} (test file)"
    for i, folder in enumerate(folders):
        if folder in _SCRIPT_DIRS:
            what = "dev tools" if folder == "debug_utils" else f"{folder} folder"
            return "script", "/".join(parts[: i + 1]) + f"/ ({what})"
        if folder.startswith(".") and folder not in (".", ".."):
            return "script", "/".join(parts[: i + 1]) + "/ (dot folder)"
    if _SCRIPT_FILE.match(name):
        what = "build script" if name == "setup.py" else "tool script"
        if name.startswith("bench"):
            what = "benchmark file"
        return "script", f"{name} ({what})"
    return None
