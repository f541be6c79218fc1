"""The sites of a unit, kept across files and commits by the unit's own text.

A release changes a file here and there; most of the units of a changed file
(:class:`~miner.extract.runner.Unit`: the statement or function that holds
sites) are the same text as in the file's previous blob, only moved. A unit's
sites depend on nothing but its text and its context (the enclosing scope,
its docstrings, the exits of the statements before it in its block), so they
are keyed by :func:`unit_key` and stored with their lines relative to the
unit (:func:`relative`); :func:`placed` puts them back at the unit's new
lines, with the excerpt read from the new file. The records are the same as
a parse would give (tests compare both).
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Iterable
from typing import Protocol

from miner.extract.rules import UnitContext
from miner.extract.text import excerpt_for
from miner.model import Excerpt, Guard, Site

#: The excerpt of a stored site: read again from the file it is placed in.
_NO_EXCERPT = Excerpt(start_line=0, end_line=0, text="")


class UnitMemo(Protocol):
    """Stored sites of units by :func:`unit_key` (the blob cache's ``units``
    table, or a dict in tests)."""

    def get(self, key: str) -> tuple[Site, ...] | None:
        """The sites stored under ``key`` (relative, see :func:`relative`), or None."""

    def put(self, key: str, sites: tuple[Site, ...]) -> None:
        """Store the relative ``sites`` of a unit just parsed."""


class DictMemo:
    """A :class:`UnitMemo` in memory; ``hits`` counts the units it served."""

    def __init__(self) -> None:
        self.entries: dict[str, tuple[Site, ...]] = {}
        self.hits = 0

    def get(self, key: str) -> tuple[Site, ...] | None:
        found = self.entries.get(key)
        if found is not None:
            self.hits += 1
        return found

    def put(self, key: str, sites: tuple[Site, ...]) -> None:
        self.entries[key] = sites


def unit_key(text: str, context: UnitContext, offset: int) -> str:
    """The digest of what a unit's sites are made from: its ``text`` (the
    file's lines ``offset + 1`` .. on) and its ``context``, with the lines of
    the context's exits taken relative to ``offset``. 64 hex digits."""
    exits = tuple(dataclasses.replace(g, line=g.line - offset) for g in context.exits)
    shape = repr(dataclasses.replace(context, exits=exits))
    digest = hashlib.sha256()
    digest.update(text.encode("utf-8", "surrogatepass"))
    digest.update(b"\0")
    digest.update(shape.encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


def _moved(guards: Iterable[Guard], delta: int) -> tuple[Guard, ...]:
    return tuple(dataclasses.replace(g, line=g.line + delta) for g in guards)


def relative(sites: Iterable[Site], offset: int) -> tuple[Site, ...]:
    """``sites`` of a unit at ``offset`` (lines after the unit's first line
    - 1) as stored: lines relative to the unit, no path, no excerpt."""
    return tuple(
        dataclasses.replace(
            site,
            path="",
            line=site.line - offset,
            end_line=site.end_line - offset,
            guards=_moved(site.guards, -offset),
            exits=_moved(site.exits, -offset),
            excerpt=_NO_EXCERPT,
        )
        for site in sites
    )


def placed(sites: Iterable[Site], path: str, offset: int, lines: list[str]) -> list[Site]:
    """Stored ``sites`` (:func:`relative`) put back in the file at ``path``
    whose ``lines`` hold the unit after line ``offset``."""
    out = []
    for site in sites:
        line = site.line + offset
        out.append(
            dataclasses.replace(
                site,
                path=path,
                line=line,
                end_line=site.end_line + offset,
                guards=_moved(site.guards, offset),
                exits=_moved(site.exits, offset),
                excerpt=excerpt_for(lines, line),
            )
        )
    return out
