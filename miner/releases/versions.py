"""Release tags in version order.

Tags of the form ``v<version>`` sort by PEP 440 (``v0.5.9rc1`` < ``v0.5.9`` <
``v0.5.10``) through :mod:`packaging.version`, the reference implementation the
Python packaging tools use; other tags sort after them in natural order (digit
runs compared as numbers).
"""

from __future__ import annotations

import fnmatch
import re
from typing import Any

import git
from packaging.version import InvalidVersion, Version

from miner.errors import ReleaseError


def version_key(tag: str) -> tuple[Any, ...]:
    """Sort key of a release tag (see the module docstring)."""
    try:
        return (0, Version(tag[1:] if tag[:1] in "vV" else tag))
    except InvalidVersion:
        natural = tuple(
            (1, int(chunk)) if chunk.isdigit() else (0, chunk)
            for chunk in re.split(r"(\d+)", tag)
            if chunk
        )
        return (1, natural)


def select_tags(
    repo: git.Repo,
    pattern: str | None = None,
    *,
    start: str | None = None,
    end: str | None = None,
) -> list[str]:
    """Tags of ``repo`` matching the glob ``pattern`` (all tags when None), in
    version order (:func:`version_key`), cut to ``start`` .. ``end`` inclusive.

    Raises:
        ReleaseError: ``start`` or ``end`` is not one of the matching tags.
    """
    tags = sorted(
        (t.name for t in repo.tags if pattern is None or fnmatch.fnmatchcase(t.name, pattern)),
        key=version_key,
    )
    for bound in (start, end):
        if bound is not None and bound not in tags:
            raise ReleaseError(
                f"{bound}: not a tag of the repository matching {pattern or '*'}; check --from/--to"
            )
    lo = tags.index(start) if start else 0
    hi = tags.index(end) + 1 if end else len(tags)
    return tags[lo:hi]


def release_tags(
    tags: list[str], documented: list[str], since: str | None, pattern: str | None
) -> tuple[list[str], str]:
    """The tags a release run documents, and the newest of ``tags``.

    ``tags`` are the repository's matching tags in version order (see
    :func:`select_tags`); ``documented`` the releases the site already holds.
    The list is empty when the newest tag is already documented. Otherwise it
    runs from the first documented tag (or ``since``, or, for an empty site,
    the tag before the newest) to the newest.

    Raises:
        ReleaseError: ``tags`` is empty, or ``since`` is not one of them.
    """
    if not tags:
        raise ReleaseError(f"no tag of the repository matches {pattern or '*'}; check --tags")
    newest = tags[-1]
    if newest in documented:
        return [], newest
    starts = [t for t in documented if t in tags]
    if starts:
        start = min(starts, key=tags.index)
    elif since is not None:
        if since not in tags:
            raise ReleaseError(f"{since}: not a tag matching {pattern or '*'}; check --since")
        start = since
    else:
        start = tags[max(0, len(tags) - 2)]
    return tags[tags.index(start) :], newest
