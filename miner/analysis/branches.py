"""How the block of an ``if`` branch or ``except`` clause leaves, read from
the lines of its file: whether its first (or last) statement is a
``raise``, ``return``, ``continue`` or ``break``, and where a bare ``raise``
re-raises. The facts keep it for every early exit of a site; the reach of a
call (:mod:`miner.analysis.paths`) reads it for the guards of calls."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import NamedTuple

from miner.model import Site

_LEAVES = ("raise", "return", "continue", "break")


#: A one-line string literal, and a comment (what :func:`line_depth` drops).
_QUOTED = re.compile(r"(['\"]).*?\1")
_COMMENT = re.compile(r"#.*$")


def line_depth(text: str) -> int:
    """Brackets opened minus closed on a line (strings and comments aside, roughly)."""
    code = _COMMENT.sub("", _QUOTED.sub("", text))
    return sum(code.count(c) for c in "([{") - sum(code.count(c) for c in ")]}")


#: The exits whose branch is a block that leaves: an ``if`` (``exit``) or an
#: ``except`` clause (``exit-except``); :func:`exit_branch` reads either.
LEAVING_KINDS = ("exit", "exit-except")


class Branch(NamedTuple):
    """How the block of an ``if`` branch or ``except`` clause leaves
    (:func:`exit_branch`)."""

    kind: str
    """``raise``, ``return``, ``continue`` or ``break``: its first statement,
    or else its last one at the branch's level; ``""`` when neither leaves."""
    one: str
    """The ``if`` and that statement on one line when the branch is that one
    short statement, else ``""``."""
    at: int
    """The line of that statement, 0 when not known."""
    reraised: tuple[int, ...] = ()
    """The lines of the bare ``raise`` statements anywhere in the block:
    there the exception being handled is raised again."""
    first: bool = False
    """The leaving statement is the block's first: the block always leaves
    that way (a last one may follow an earlier ``return``)."""

    @property
    def reraises(self) -> bool:
        """The leaving statement is a bare ``raise``."""
        return self.kind == "raise" and self.at in self.reraised


NO_BRANCH = Branch("", "", 0)
_BARE_RAISE = re.compile(r"raise[ \t]*(?:;[ \t]*)?(?:#.*)?$")


def exit_branch(lines: list[str], line: int) -> Branch:
    """How the ``if`` branch at ``line`` (1-based) of ``lines`` leaves: its
    first statement, or else its last one at the branch's level, is a
    ``raise`` / ``return`` / ``continue`` / ``break`` (:class:`Branch`,
    with the bare ``raise`` lines of the block); :data:`NO_BRANCH` when
    neither leaves or the branch is not in ``lines``."""
    if not 0 < line <= len(lines):
        return NO_BRANCH
    head = lines[line - 1]
    indent = len(head) - len(head.lstrip())
    start = line
    depth = line_depth(head)
    while depth > 0 and start < min(len(lines), line + 20):  # a header over several lines
        depth += line_depth(lines[start])
        start += 1
    body: int | None = None
    statements: list[tuple[int, str]] = []  # (line, text) at the branch's level
    reraised: list[int] = []  # bare ``raise`` at any level of the block
    continued = False  # the first statement goes on over several lines
    for number, text in enumerate(lines[start : start + 200], start + 1):
        stripped = text.strip()
        if not stripped or stripped.startswith("#"):
            continue
        level = len(text) - len(text.lstrip())
        closing = stripped.startswith((")", "]", "}"))
        if level <= indent and not closing:
            break
        if body is None:
            body = level
        if _BARE_RAISE.match(stripped):
            reraised.append(number)
        if level <= body and not closing:
            statements.append((number, stripped))
        elif len(statements) == 1:
            continued = True
    if not statements:
        return NO_BRANCH

    def leaves(text: str) -> str:
        return next((k for k in _LEAVES if re.match(rf"{k}\b", text)), "")

    first_line, first = statements[0]
    kind, at = leaves(first), first_line
    if not kind:
        at, last = statements[-1]
        kind = leaves(last)
    if not kind:
        return NO_BRANCH
    one = f"{head.strip()} {first}"
    simple = (
        len(statements) == 1
        and not continued
        and start == line
        and head.strip().endswith(":")
        and len(one) <= 110
    )
    return Branch(kind, one if simple else "", at, tuple(reraised), at == first_line)


def exit_branches(
    files: Mapping[str, bytes], sites: Iterable[Site]
) -> dict[tuple[str, int], Branch]:
    """:func:`exit_branch` of every ``exit`` and ``exit-except`` guard of
    ``sites`` (an ``except`` clause's block reads like an ``if`` branch)."""
    wanted: dict[str, set[int]] = {}
    for site in sites:
        for guard in site.exits:
            if guard.kind in LEAVING_KINDS:
                wanted.setdefault(site.path, set()).add(guard.line)
    out: dict[tuple[str, int], Branch] = {}
    for path, numbers in sorted(wanted.items()):
        data = files.get(path)
        if data is None:
            continue
        lines = data.decode("utf-8", "replace").split("\n")
        for number in sorted(numbers):
            found = exit_branch(lines, number)
            if found[0]:
                out[(path, number)] = found
    return out
