"""A local that holds a view of the arguments object (``cfg =
resolving_view(server_args)``): what the configuration model finds, and the
card sentences its reads then produce (exact text)."""

from __future__ import annotations

from test_analysis_config import DATACLASS_REPO, config_of
from test_analysis_prose import analyses

from miner.checks import config_from_json

VIEWS = """
class ResolvingConfig:
    __slots__ = ("_server_args",)

    def __init__(self, server_args):
        object.__setattr__(self, "_server_args", server_args)

    def __getattr__(self, name):
        server_args = object.__getattribute__(self, "_server_args")
        return getattr(server_args, name)


class Snapshot:
    def __init__(self, server_args, overlay=None):
        self._args = server_args
        self._overlay = overlay or {}

    def __getattr__(self, name):
        if name in self._overlay:
            return self._overlay[name]
        return getattr(self._args, name)


class Elsewhere:
    def __init__(self, server_args):
        self.server_args = server_args
        self.model = object()

    def __getattr__(self, name):
        return getattr(self.model, name)


def resolving_view(server_args):
    return ResolvingConfig(server_args)


def elsewhere_view(server_args):
    return Elsewhere(server_args)
"""

HOOK = """
from pkg.views import Snapshot, elsewhere_view, resolving_view


def handle_dtype(server_args):
    cfg = resolving_view(server_args)
    if cfg.dtype == "half":
        raise ValueError("the hook cannot run in half precision")


def handle_snapshot(server_args):
    snap = Snapshot(server_args)
    if snap.dtype == "half":
        raise ValueError("the snapshot cannot run in half precision")


def handle_elsewhere(server_args):
    other = elsewhere_view(server_args)
    if other.dtype == "half":
        raise ValueError("elsewhere cannot run in half precision")


def handle_internal(server_args):
    cfg = resolving_view(server_args)
    if cfg.internal_only:
        raise ValueError("the hook cannot run internal only")


def handle_internal_directly(server_args):
    if server_args.internal_only:
        raise ValueError("the direct hook cannot run internal only")
"""

SHADOWED = """
from pkg.views import resolving_view


def helper(cfg):
    return cfg


def handle_beside(server_args):
    cfg = resolving_view(server_args)
    if cfg.dtype == "half":
        raise ValueError("the hook beside a helper cannot run in half precision")


def handle_shadowed(server_args, other):
    cfg = resolving_view(server_args)
    if other:
        cfg = other
    if cfg.dtype == "half":
        raise ValueError("the shadowed hook cannot run in half precision")
"""

REPO = {**DATACLASS_REPO, "pkg/views.py": VIEWS, "pkg/hook.py": HOOK, "pkg/shadowed.py": SHADOWED}


def test_views_are_the_locals_bound_only_to_a_view_of_the_arguments():
    _, config = config_of(REPO)
    # ``other`` holds an ``Elsewhere``, which answers from ``self.model``, not
    # from the object it was built around; in ``handle_shadowed`` ``cfg`` is
    # also bound to a parameter. A parameter ``cfg`` of another function
    # (``helper``) does not matter.
    assert config.views == (
        ("pkg/hook.py", 5, 8, ("cfg",)),
        ("pkg/hook.py", 11, 14, ("snap",)),
        ("pkg/hook.py", 23, 26, ("cfg",)),
        ("pkg/shadowed.py", 9, 12, ("cfg",)),
    )
    assert config.views_in("pkg/hook.py", 7) == frozenset({"cfg"})
    assert config.views_in("pkg/hook.py", 13) == frozenset({"snap"})
    assert config.views_in("pkg/hook.py", 18) == frozenset()
    assert config.views_in("pkg/shadowed.py", 18) == frozenset()
    assert config.views_in(None, 7) == frozenset()
    assert config_from_json(config.to_json()).views == config.views
    assert config.to_json()["views"][0] == {
        "path": "pkg/hook.py",
        "start": 5,
        "end": 8,
        "names": ["cfg"],
    }


def test_a_read_through_a_view_names_the_flag():
    found = analyses(REPO)
    hook = found["the hook cannot run in half precision"]
    assert hook.what_it_means == (
        "You get this with `--dtype half`, in `handle_dtype`. `--dtype` is described as "
        '"Data type." (`pkg/server_args.py:31`).'
    )
    assert hook.solutions == (
        "Leaving the flag out keeps its default `auto`, which is resolved at start-up "
        "and may become `half`.",
    )
    assert hook.audience == "user-setting"
    snap = found["the snapshot cannot run in half precision"]
    assert snap.what_it_means.startswith("You get this with `--dtype half`, in `handle_snapshot`.")
    assert snap.solutions == hook.solutions


def test_a_name_also_bound_otherwise_in_its_function_or_another_proxy_links_nothing():
    found = analyses(REPO)
    beside = found["the hook beside a helper cannot run in half precision"]
    assert beside.what_it_means.startswith("You get this with `--dtype half`, in `handle_beside`.")
    shadowed = found["the shadowed hook cannot run in half precision"]
    assert (
        shadowed.what_it_means == 'In `handle_shadowed`, this is raised when `cfg.dtype == "half"`.'
    )
    assert shadowed.audience == "internal"
    elsewhere = found["elsewhere cannot run in half precision"]
    assert elsewhere.what_it_means == (
        'In `handle_elsewhere`, this is raised when `other.dtype == "half"`.'
    )


def test_a_field_without_a_flag_read_through_a_view_gets_no_constructor_fix():
    found = analyses(REPO)
    # start-up may declare what a view reads: ``ServerArgs(internal_only=False)``
    # is no sure way out there, only where the object itself is read
    assert not any("Construct" in s for s in found["the hook cannot run internal only"].solutions)
    assert found["the direct hook cannot run internal only"].solutions[0] == (
        "Construct `ServerArgs` with `internal_only=False`."
    )
