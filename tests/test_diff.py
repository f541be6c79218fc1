"""The diff of two versions: one fixture repository per table row, old and new code."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import add_commit

from miner import pipeline
from miner.releases import diff
from miner.releases.diff import Aspect, ChangeKind, MatchRule

F_POSITIVE = """\
def check(x):
    if x < 0:
        raise ValueError("x must be a positive number")
    return x
"""

G_STRING = """\
def name(y):
    if not isinstance(y, str):
        raise TypeError("y must be a string, got something else")
    return y
"""

# (row id, old files, new files, expected [(kind, aspects, rule)] of listed changes, unchanged)
ROWS = [
    (
        "added",
        {"pkg/a.py": F_POSITIVE},
        {"pkg/a.py": F_POSITIVE + "\n\n" + G_STRING},
        [(ChangeKind.ADDED, (), None)],
        1,
    ),
    (
        "removed",
        {"pkg/a.py": F_POSITIVE + "\n\n" + G_STRING},
        {"pkg/a.py": F_POSITIVE},
        [(ChangeKind.REMOVED, (), None)],
        1,
    ),
    (
        "reworded message",
        {"pkg/a.py": F_POSITIVE},
        {"pkg/a.py": F_POSITIVE.replace("a positive number", "a positive integer")},
        [(ChangeKind.CHANGED, (Aspect.MESSAGE,), MatchRule.SAME_SCOPE)],
        0,
    ),
    (
        "changed type",
        {"pkg/a.py": F_POSITIVE},
        {"pkg/a.py": F_POSITIVE.replace("ValueError", "TypeError")},
        [(ChangeKind.CHANGED, (Aspect.EXCEPTION,), MatchRule.SIMILAR)],
        0,
    ),
    (
        "changed guard",
        {"pkg/a.py": F_POSITIVE},
        {"pkg/a.py": F_POSITIVE.replace("x < 0", "x <= 0")},
        [(ChangeKind.CHANGED, (Aspect.GUARDS,), MatchRule.SAME_ID)],
        0,
    ),
    (
        "moved file",
        {"pkg/a.py": F_POSITIVE},
        {"pkg/b.py": "import os\n\n\n" + F_POSITIVE},
        [(ChangeKind.MOVED, (Aspect.FILE,), MatchRule.SAME_ID)],
        0,
    ),
    (
        "moved scope",
        {"pkg/a.py": F_POSITIVE},
        {"pkg/a.py": F_POSITIVE.replace("def check", "def validate")},
        [(ChangeKind.MOVED, (Aspect.SCOPE,), MatchRule.SAME_ID)],
        0,
    ),
    (
        "moved file and reworded",
        {"pkg/a.py": F_POSITIVE},
        {"pkg/b.py": F_POSITIVE.replace("a positive number", "a positive number!")},
        [(ChangeKind.CHANGED, (Aspect.MESSAGE, Aspect.FILE), MatchRule.SIMILAR)],
        0,
    ),
    (
        "one old error, two new look-alikes",
        {"pkg/a.py": F_POSITIVE},
        {
            "pkg/a.py": F_POSITIVE.replace("a positive number", "a positive integer")
            + "\n\ndef other(x):\n    if x < 0:\n"
            + '        raise ValueError("x must be a positive float")\n'
        },
        [
            (ChangeKind.ADDED, (), None),
            (ChangeKind.CHANGED, (Aspect.MESSAGE,), MatchRule.SAME_SCOPE),
        ],
        0,
    ),
    (
        "dynamic message, moved scope",
        {"pkg/a.py": "def f(x):\n    if x:\n        raise RuntimeError(build_message(x))\n"},
        {"pkg/a.py": "def g(x):\n    if x:\n        raise RuntimeError(build_message(x))\n"},
        [(ChangeKind.MOVED, (Aspect.SCOPE,), MatchRule.SIMILAR)],
        0,
    ),
    (
        "dynamic message, new guard in the same scope",
        {"pkg/a.py": "def f(x):\n    raise RuntimeError(build_message(x))\n"},
        {"pkg/a.py": "def f(x):\n    if x:\n        raise RuntimeError(build_message(x))\n"},
        [(ChangeKind.CHANGED, (Aspect.GUARDS,), MatchRule.SAME_ID)],
        0,
    ),
    (
        "no message, renamed scope: too little to pair",
        {"pkg/a.py": "class A:\n    def f(self):\n        raise NotImplementedError\n"},
        {"pkg/a.py": "class A:\n    def g(self):\n        raise NotImplementedError\n"},
        [(ChangeKind.REMOVED, (), None), (ChangeKind.ADDED, (), None)],
        0,
    ),
    (
        "bare assert, look-alike test in another file: not paired",
        {"pkg/a.py": "def f(x):\n    assert x.hash is not None\n"},
        {"pkg/b.py": "def f(x):\n    assert x.shape is not None\n"},
        [(ChangeKind.REMOVED, (), None), (ChangeKind.ADDED, (), None)],
        0,
    ),
    (
        "bare assert, same test in another file",
        {"pkg/a.py": "def f(x):\n    assert x.hash is not None\n"},
        {"pkg/b.py": "def f(x):\n    assert x.hash is not None\n"},
        [(ChangeKind.MOVED, (Aspect.FILE,), MatchRule.SIMILAR)],
        0,
    ),
    (
        "bare assert, look-alike test in the same scope",
        {"pkg/a.py": "def f(x):\n    assert x.hash is not None\n"},
        {"pkg/a.py": "def f(x):\n    assert x.hash_value is not None\n"},
        [(ChangeKind.CHANGED, (Aspect.GUARDS,), MatchRule.SAME_SCOPE)],
        0,
    ),
    (
        "second site of the same message",
        {"pkg/a.py": F_POSITIVE},
        {"pkg/a.py": F_POSITIVE + "\n\n" + F_POSITIVE.replace("def check", "def check2")},
        [(ChangeKind.CHANGED, (Aspect.SITES,), MatchRule.SAME_ID)],
        0,
    ),
    (
        "only lines shifted",
        {"pkg/a.py": F_POSITIVE},
        {"pkg/a.py": "import os\nimport sys\n\n\n" + F_POSITIVE},
        [],
        1,
    ),
]


def mine_two(make_repo: Callable[..., Path], tmp_path: Path, old: dict, new: dict):
    root = make_repo(old, tag="v1")
    removed = tuple(path for path in old if path not in new)
    add_commit(root, new, tag="v2", remove=removed)
    cache = tmp_path / "cache"
    before = pipeline.mine(str(root), "v1", cache_dir=cache, reuse=True)
    after = pipeline.mine(str(root), "v2", cache_dir=cache, reuse=True)
    return before, after


@pytest.mark.parametrize(
    ("old", "new", "expected", "unchanged"),
    [row[1:] for row in ROWS],
    ids=[row[0] for row in ROWS],
)
def test_change_kinds(make_repo, tmp_path, old, new, expected, unchanged):
    before, after = mine_two(make_repo, tmp_path, old, new)
    result = diff.diff(before.commit, before.errors, after.commit, after.errors)
    listed = [(c.kind, c.aspects, c.rule) for c in result.changes if c.kind != ChangeKind.UNCHANGED]
    assert listed == expected
    assert result.counts()["unchanged"] == unchanged
    # every error of each side appears in exactly one change
    assert sorted(c.old.error_id for c in result.changes if c.old) == sorted(
        e.error_id for e in before.errors
    )
    assert sorted(c.new.error_id for c in result.changes if c.new) == sorted(
        e.error_id for e in after.errors
    )


def test_look_alikes_pair_the_closest(make_repo, tmp_path):
    old = {"pkg/a.py": F_POSITIVE}
    new = {
        "pkg/a.py": F_POSITIVE.replace("a positive number", "a positive integer")
        + "\n\ndef other(x):\n    if x < 0:\n"
        + '        raise ValueError("x must be a positive float")\n'
    }
    before, after = mine_two(make_repo, tmp_path, old, new)
    result = diff.diff(before.commit, before.errors, after.commit, after.errors)
    (changed,) = result.of_kind(ChangeKind.CHANGED)
    (added,) = result.of_kind(ChangeKind.ADDED)
    assert changed.old is not None and changed.new is not None and added.new is not None
    assert changed.old.message == "x must be a positive number"
    assert changed.new.message == "x must be a positive integer"
    assert changed.new.primary.scope == "check"
    assert added.new.message == "x must be a positive float"
    assert changed.similarity == pytest.approx(
        diff.similarity("x must be a positive number", "x must be a positive integer")
    )


def test_exact_copy_wins_over_look_alike(make_repo, tmp_path):
    old = {"pkg/a.py": F_POSITIVE}
    new = {"pkg/a.py": F_POSITIVE, "pkg/b.py": F_POSITIVE.replace("number", "number!")}
    before, after = mine_two(make_repo, tmp_path, old, new)
    result = diff.diff(before.commit, before.errors, after.commit, after.errors)
    assert result.counts() == {
        "removed": 0,
        "added": 1,
        "changed": 0,
        "moved": 0,
        "unchanged": 1,
    }
    (added,) = result.of_kind(ChangeKind.ADDED)
    assert added.new is not None and added.new.message == "x must be a positive number!"


def test_moved_sites_keep_their_lines(make_repo, tmp_path):
    old = {"pkg/a.py": F_POSITIVE}
    new = {"pkg/a.py": "import os\nimport sys\n\n\n" + F_POSITIVE}
    before, after = mine_two(make_repo, tmp_path, old, new)
    result = diff.diff(before.commit, before.errors, after.commit, after.errors)
    (change,) = result.changes
    (pair,) = change.sites
    assert change.kind == ChangeKind.UNCHANGED and change.rule == MatchRule.SAME_ID
    assert (pair.old.line, pair.new.line) == (3, 7)


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ("", "", 1.0),
        ("abcd", "abcd", 1.0),
        ("abcd", "wxyz", 0.0),
        ("x must be a positive number", "x must be a positive integer", 48 / 55),
        ("cache size must be positive", "batch size must be even", 2 * 19 / 50),
    ],
)
def test_similarity(a, b, expected):
    assert diff.similarity(a, b) == pytest.approx(expected, abs=0.005)


def test_message_text_normalises_placeholders_and_spaces(make_repo, tmp_path):
    old = {"pkg/a.py": 'def f(x):\n    raise ValueError(f"bad   value {x!r:>4}")\n'}
    new = {"pkg/a.py": 'def f(x):\n    raise ValueError("bad value %s" % (x,))\n'}
    before, after = mine_two(make_repo, tmp_path, old, new)
    assert diff.message_text(before.errors[0]) == "bad value {}"
    assert diff.message_text(after.errors[0]) == "bad value {}"
    result = diff.diff(before.commit, before.errors, after.commit, after.errors)
    (change,) = result.changes
    assert change.rule == MatchRule.SAME_SCOPE and change.aspects == (Aspect.MESSAGE,)


def test_kind_values_are_sentences():
    assert ChangeKind.ADDED.value == "Error was added"
    assert ChangeKind.ADDED.key == "added"
    assert Aspect.MESSAGE.key == "message"
    assert [k.key for k in diff.KIND_ORDER] == [
        "removed",
        "added",
        "changed",
        "moved",
        "unchanged",
    ]
