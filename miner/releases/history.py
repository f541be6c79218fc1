"""Histories: the life of every error over releases mined in order.

Releases are fed oldest first to a :class:`HistoryBuilder`. Each new release is
diffed against the one before (:mod:`miner.releases.diff`), and every pair continues
one *lineage*: an error that is reworded, changes type or guards, or moves
keeps one history with all the ids it had. An error that is removed closes its
lineage; if a later release raises the same error id again, the lineage
reopens with a new ``added`` event. A lineage never spans a gap by similarity
alone: only consecutive releases are compared.

The result (:class:`HistoryBook`) holds one :class:`~miner.model.History` per
lineage, indexed by every id it had, and the last record of every id the
newest release no longer raises (for retired cards).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from miner.errors import ReleaseError
from miner.model import CommitInfo, Error, History, HistoryEvent, MineResult
from miner.releases.diff import ChangeKind, Diff, diff


@dataclass
class _Lineage:
    ids: list[str]
    first_seen: str
    seen: list[str] = field(default_factory=list)
    events: list[HistoryEvent] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Retired:
    """The last record of an error id the newest release no longer raises."""

    error: Error
    commit: CommitInfo
    """The commit of the last release that raised it."""
    release: str


@dataclass(frozen=True, slots=True)
class HistoryBook:
    """What :meth:`HistoryBuilder.finish` gives."""

    releases: tuple[str, ...]
    """The releases mined, oldest first."""
    histories: dict[str, History]
    """Every error id ever seen -> the history of its lineage."""
    retired: tuple[Retired, ...]
    """Ids seen in some release but not raised by the newest, in id order."""

    def lineages(self) -> list[History]:
        """One history per lineage, in current-id order."""
        unique = {h.error_id: h for h in self.histories.values()}
        return [unique[k] for k in sorted(unique)]


class HistoryBuilder:
    """Feed releases oldest first with :meth:`add`; then :meth:`finish`.

    Memory holds the previous release and the last record of each id, not
    every release.
    """

    def __init__(self) -> None:
        self._releases: list[str] = []
        self._previous: MineResult | None = None
        self._lineages: list[_Lineage] = []
        self._open: dict[str, int] = {}
        """id in the previous release -> lineage index."""
        self._closed: dict[str, int] = {}
        """last id of a removed lineage -> lineage index (for reopening)."""
        self._last: dict[str, Retired] = {}

    def add(self, tag: str, result: MineResult) -> Diff | None:
        """Add the next release; returns its diff against the previous one
        (None for the first).

        Raises:
            ReleaseError: ``tag`` was already added.
        """
        if tag in self._releases:
            raise ReleaseError(f"{tag}: release added twice; give each tag once")
        self._releases.append(tag)
        previous, self._previous = self._previous, result
        for error in result.errors:
            self._last[error.error_id] = Retired(error, result.commit, tag)
        if previous is None:
            for error in result.errors:
                self._start(tag, error)
            return None
        changes = diff(previous.commit, previous.errors, result.commit, result.errors)
        still_open: dict[str, int] = {}
        for change in changes.changes:
            if change.kind == ChangeKind.ADDED:
                assert change.new is not None
                still_open[change.new.error_id] = self._start(tag, change.new)
                continue
            assert change.old is not None
            index = self._open[change.old.error_id]
            lineage = self._lineages[index]
            if change.kind == ChangeKind.REMOVED:
                lineage.events.append(HistoryEvent(tag, "removed", (), change.old.error_id))
                self._closed[change.old.error_id] = index
                continue
            assert change.new is not None
            new_id = change.new.error_id
            if new_id != lineage.ids[-1]:
                lineage.ids.append(new_id)
            lineage.seen.append(tag)
            if change.kind != ChangeKind.UNCHANGED:
                aspects = tuple(a.key for a in change.aspects)
                if change.kind == ChangeKind.CHANGED:
                    event = HistoryEvent(tag, "changed", aspects, new_id)
                else:
                    event = HistoryEvent(tag, "moved", aspects, new_id)
                lineage.events.append(event)
            still_open[new_id] = index
        self._open = still_open
        return changes

    def _start(self, tag: str, error: Error) -> int:
        """Open a lineage for ``error`` (or reopen the closed one that had its id)."""
        index = self._closed.pop(error.error_id, None)
        if index is None:
            self._lineages.append(_Lineage(ids=[error.error_id], first_seen=tag))
            index = len(self._lineages) - 1
        lineage = self._lineages[index]
        lineage.seen.append(tag)
        lineage.events.append(HistoryEvent(tag, "added", (), error.error_id))
        self._open[error.error_id] = index
        return index

    def finish(self) -> HistoryBook:
        """The histories of every lineage so far.

        Raises:
            ReleaseError: no release was added.
        """
        if not self._releases:
            raise ReleaseError("no release to document; check --tags")
        oldest, newest = self._releases[0], self._releases[-1]
        histories: dict[str, History] = {}
        for lineage in self._lineages:
            history = History(
                error_id=lineage.ids[-1],
                ids=tuple(lineage.ids),
                first_seen=lineage.first_seen,
                last_seen=lineage.seen[-1],
                newest=newest,
                oldest=oldest,
                seen=tuple(lineage.seen),
                events=tuple(lineage.events),
            )
            for error_id in lineage.ids:
                histories[error_id] = history
        current = set(self._open)
        retired = tuple(self._last[i] for i in sorted(self._last) if i not in current)
        return HistoryBook(releases=tuple(self._releases), histories=histories, retired=retired)


def build_history(releases: Iterable[tuple[str, MineResult]]) -> tuple[HistoryBook, list[Diff]]:
    """Histories of ``(tag, result)`` pairs given oldest first, and the diff of
    each consecutive pair (holds every release's errors: for small inputs)."""
    builder = HistoryBuilder()
    diffs = []
    for tag, result in releases:
        changes = builder.add(tag, result)
        if changes is not None:
            diffs.append(changes)
    return builder.finish(), diffs
