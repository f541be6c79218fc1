"""Names set to ``None``/``False`` when an import fails (``facts.optional_imports``)
and what the cards say of them."""

from __future__ import annotations

import ast

from miner import pipeline
from miner.analysis.facts import OptionalImport, module_optional_imports

LOCAL = frozenset({"pkg"})


def found(source: str) -> dict[str, OptionalImport]:
    return module_optional_imports("pkg/m.py", ast.parse(source), LOCAL)


def test_a_name_the_import_error_handler_sets_is_an_optional_import() -> None:
    source = (
        "import os\n"
        "try:\n"
        "    import torchaudio\n"
        "    from torchaudio.transforms import Mel\n"
        "    from pkg.util import helper\n"
        "    HAS_AUDIO = True\n"
        "except (ImportError, RuntimeError):  # optional\n"
        "    torchaudio = Mel = None\n"
        "    HAS_AUDIO = False\n"
    )
    out = found(source)
    assert sorted(out) == ["HAS_AUDIO", "Mel", "torchaudio"]
    assert out["Mel"] == OptionalImport(
        "Mel",
        "None",
        ("torchaudio", "torchaudio.transforms", "pkg.util"),
        ("torchaudio",),
        ("import torchaudio", "from torchaudio.transforms import Mel"),
        "pkg/m.py",
        2,
        7,
    )
    assert out["HAS_AUDIO"].value == "False"


def test_names_that_may_hold_other_values_are_not_optional_imports() -> None:
    source = (
        "try:\n"
        "    import fast\n"
        "    from pkg.local import helper\n"
        "    use_fast = fast.available()\n"  # may be False with the import working
        "except ImportError:\n"
        "    fast = None\n"
        "    helper = None\n"  # bound by a local import: nothing to install
        "    use_fast = False\n"
        "try:\n"
        "    import rare\n"
        "except Exception:\n"  # not an import error
        "    rare = None\n"
        "def run(fast):\n"  # a parameter of the same name
        "    return fast\n"
    )
    assert found(source) == {}
    assert found("try:\n    from pkg.a import b\nexcept ImportError:\n    b = None\n") == {}


CHECK = (
    "try:\n"
    "    import torchaudio\n"
    "except ImportError:\n"
    "    torchaudio = None\n"
    "\n"
    "\n"
    "def load(path):\n"
    "    if torchaudio is None:\n"
    "        raise RuntimeError('torchaudio is required for audio inputs')\n"
    "    return torchaudio.load(path)\n"
)


def test_the_card_says_which_import_failed_and_what_to_install(make_repo) -> None:
    repo = make_repo({"pkg/__init__.py": "", "pkg/audio.py": CHECK})
    mined = pipeline.mine_and_analyze(str(repo), "v1", slug="acme/audio")
    (error,) = mined.result.errors
    analysis = mined.analyses[error.error_id]
    assert mined.facts.optional_imports[("pkg/audio.py", "torchaudio")].handler_line == 3
    assert (
        "`torchaudio` is `None` when an import of the `try` at line 1 of `pkg/audio.py` failed "
        "as the module was loaded (it imports `torchaudio`; the `except ImportError` at line 3 "
        "sets it)."
    ) in analysis.what_it_means
    assert analysis.solutions[0] == (
        "Install the package that provides the `torchaudio` module in the environment that runs "
        'this code, then check that `python -c "import torchaudio"` succeeds (its error says '
        "what is missing): `torchaudio` is `None` only when that import fails "
        "(`pkg/audio.py:3`)."
    )
    # the condition is not offered again as a setup to reach
    assert not any("is not `None`" in s for s in analysis.solutions)


VALUES = (
    "import torch\n"
    "\n"
    "after_2_8 = torch.release >= (2, 8)\n"
    "LIMIT = (\n"
    "    1 << 20\n"
    ")\n"
    "REGISTRY = {}\n"
    "MODE = 'a'\n"
    "STEP = 1\n"
    "\n"
    "\n"
    "def pool():\n"
    "    assert after_2_8, 'needs torch>=2.8'\n"
    "\n"
    "\n"
    "def check(n, kind):\n"
    "    if n > LIMIT or kind not in REGISTRY:\n"
    "        raise ValueError('too big')\n"
    "    if MODE == 'b' or STEP > 2:\n"
    "        raise ValueError('bad mode')\n"
    "\n"
    "\n"
    "def configure(STEP):\n"  # a parameter: STEP may be anything in a function
    "    global MODE\n"
    "    MODE = 'b'\n"
)


def test_module_values_are_names_the_module_binds_once() -> None:
    from miner.analysis.facts import module_values

    tested = {"pkg/v.py": {"after_2_8", "LIMIT", "REGISTRY", "MODE", "STEP", "n", "kind"}}
    assert module_values({"pkg/v.py": VALUES.encode()}, tested) == {
        ("pkg/v.py", "after_2_8"): (3, "torch.release >= (2, 8)"),
        ("pkg/v.py", "LIMIT"): (4, "(1 << 20)"),
    }  # REGISTRY: a container; MODE: global elsewhere; STEP: a parameter elsewhere


def test_the_card_says_what_the_module_sets_a_tested_name_to(make_repo) -> None:
    repo = make_repo({"pkg/__init__.py": "", "pkg/v.py": VALUES})
    mined = pipeline.mine_and_analyze(str(repo), "v1", slug="acme/values")
    by_message = {e.message: mined.analyses[e.error_id] for e in mined.result.errors}
    assert (
        "- `after_2_8` is falsy (`None`, empty or zero): the assertion at line 13 fails; "
        "`after_2_8` is set at module level as `torch.release >= (2, 8)` (line 3)"
    ) in by_message["needs torch>=2.8"].trigger
    assert "`LIMIT` is set at module level as `(1 << 20)` (line 4)" in by_message["too big"].trigger
    bad_mode = by_message["bad mode"].trigger
    assert "- any of: `MODE == 'b'`; `STEP > 2` (line 19)\n" in bad_mode + "\n"
    assert "`MODE` is set" not in bad_mode and "`STEP` is set" not in bad_mode
