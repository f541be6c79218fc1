"""Scoring, step 2: what a traceback's frames say about each error.

A frame (file, line, function, the source line printed under it) *pins* a
site: by its line inside the site's statement in the same file, or, when the
lines moved (another release), by its source line in the site's function;
when the file itself moved to another folder, by its source line in the
site's function in a file of the same name. Frames are evidence that
survives shifted lines and moved folders.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass, field

from miner.lookup.cards import SiteRef, SiteTable
from miner.lookup.rules import CODE_HEAD, MAX_CODE, SIMILAR_CODE, normalize
from miner.lookup.traceback import Frame


@dataclass
class Evidence:
    """What the frames of one exception say (:func:`frame_evidence`)."""

    pinned: dict[int, tuple[SiteRef, float, str]] = field(default_factory=dict)
    """Error index -> (site, strength, reason), the strongest pin of each."""
    same_scope: set[int] = field(default_factory=set)
    same_file: set[int] = field(default_factory=set)
    raised_here: bool = False
    """The innermost frame runs in a file of the repository."""

    def pin(self, index: int, site: SiteRef, strength: float, reason: str) -> None:
        current = self.pinned.get(index)
        if current is None or strength > current[1]:
            self.pinned[index] = (site, strength, reason)


def code_similarity(shown: str, own: str) -> float:
    """How alike a frame's source line and a site's first line are: 1.0 when
    equal (white space aside), else, when both start the same way (``raise
    ValueError``, ``assert``, ``name(``), the share of matching characters
    (``difflib``), else 0. Each line is cut at :data:`MAX_CODE` characters."""
    a, b = normalize(shown)[:MAX_CODE], normalize(own)[:MAX_CODE]
    if a == b:
        return 1.0
    head = CODE_HEAD.match(a)
    if head is None or not b.startswith(head.group()):
        return 0.0
    return difflib.SequenceMatcher(None, a, b, autojunk=False).ratio()


def scope_name(scope: str) -> str:
    """The name a traceback frame shows for a scope (``A.f`` -> ``f``)."""
    return scope.rsplit(".", 1)[-1]


def _same_file(
    table: SiteTable, evidence: Evidence, frame: Frame, path: str, innermost: bool
) -> list[tuple[float, int, SiteRef]]:
    """Pins of one frame in its own repository file (by line: 0.9), and the
    sites of its function whose first source line is like the one shown
    (returned, for :func:`_pin_alike`)."""
    code = normalize(frame.code)[:MAX_CODE] if frame.code else None
    alike: list[tuple[float, int, SiteRef]] = []
    for index, site in table.by_path[path]:
        evidence.same_file.add(index)
        scoped = frame.function is None or scope_name(site.scope) == frame.function
        if scoped and frame.function is not None:
            evidence.same_scope.add(index)
        kind, own = table.detail(site)
        if not innermost and kind != "call":
            continue
        similar = code_similarity(code, own) if code is not None and own else 0.0
        inside = site.line <= frame.line <= site.end_line
        if inside and (similar >= SIMILAR_CODE or (code is None and scoped)):
            evidence.pin(index, site, 0.9, f"a traceback frame points at {site.path}:{site.line}")
        elif similar >= SIMILAR_CODE and scoped and frame.function is not None:
            alike.append((similar, index, site))
    return alike


def _folders(path: str) -> set[str]:
    return set(path.replace("\\", "/").split("/")[:-1]) - {""}


def _moved_file(
    table: SiteTable, frame: Frame, innermost: bool
) -> list[tuple[float, int, SiteRef]]:
    """The sites of a frame's function, in files named as the frame's file
    whose folders share at least two names with the frame's (the file moved
    within the package: ``unified_cache_components/`` to
    ``unified_cache/components/``), whose first source line is like the one
    shown: the source line and the function are the evidence, the line
    number is not. A source line that is only the opening of a statement
    (``raise ValueError(``) says too little to pin a file elsewhere."""
    if frame.code is None or frame.function is None:
        return []
    code = normalize(frame.code)[:MAX_CODE]
    if code.endswith(("(", "[", "{", "\\")):
        return []
    folders = _folders(frame.path)
    alike: list[tuple[float, int, SiteRef]] = []
    for path in table.named(frame.path):
        if len(folders & _folders(path)) < 2:
            continue
        for index, site in table.by_path[path]:
            if scope_name(site.scope) != frame.function:
                continue
            kind, own = table.detail(site)
            if (innermost or kind == "call") and own:
                similar = code_similarity(code, own)
                if similar >= SIMILAR_CODE:
                    alike.append((similar, index, site))
    return alike


def _pin_alike(
    evidence: Evidence, alike: Sequence[tuple[float, int, SiteRef]], moved: bool
) -> None:
    """Pin the sites whose source line is like a frame's: the one most alike,
    when it stands alone, 0.85 for the same line and 0.8 to 0.84 for a
    reworded one; the others, and ties, 0.6."""
    if not alike:
        return
    top = max(similar for similar, _, _ in alike)
    leaders = {index for similar, index, _ in alike if similar == top}
    note = "; the file moved" if moved else ""
    for similar, index, site in alike:
        where = f"{site.path} in {site.scope}{note}"
        if similar == top and len(leaders) == 1:
            strength = 0.85 if similar == 1.0 else 0.8 + 0.16 * (similar - SIMILAR_CODE)
            shows = "its line" if similar == 1.0 else "a line like its own"
            evidence.pin(index, site, strength, f"a traceback frame shows {shows} ({where})")
        else:
            evidence.pin(index, site, 0.6, f"a traceback frame shows a line like its own ({where})")


def frame_evidence(table: SiteTable, frames: Sequence[Frame]) -> Evidence:
    """What the frames of one exception say about each error.

    A frame *pins* a site when it names the site's file and function and
    either its line falls in the site's statement (and the source line it
    shows, if any, is the statement's) or the source line it shows is the
    statement's first line (another release: the lines moved, the code did
    not). A frame whose file is in no folder of the repository pins by its
    source line the sites of its function in the files of the same name (the
    folder moved). A site that raises (``raise``, ``assert``) is pinned only
    by the innermost frame, where the exception was raised; a ``call`` site
    by any frame. A line alone in an unrelated frame pins nothing.
    """
    evidence = Evidence()
    last = len(frames) - 1
    for position in range(last, -1, -1):
        frame = frames[position]
        path = table.repo_path(frame.path)
        if path is None:
            _pin_alike(evidence, _moved_file(table, frame, position == last), True)
            continue
        evidence.raised_here = evidence.raised_here or position == last
        _pin_alike(evidence, _same_file(table, evidence, frame, path, position == last), False)
    return evidence
