"""The one error family of the tool.

Every failure a user can cause or fix (a bad revision, an unwritable folder, a
corrupt output, an unreachable index) is a :class:`MinerError` carrying one
line that names the input and what to do. The CLI turns the family into exit
code 2 and that line, in one place (:func:`miner.cli.main`); nothing else
catches it to print. Bugs stay ordinary exceptions with their traceback.
"""

from __future__ import annotations


class MinerError(Exception):
    """Bad input or an environment the run cannot use; ``str(exc)`` is the
    one-line message shown to the user."""

    exit_code = 2


class SourceError(MinerError):
    """The repository or revision cannot be used (not a repository, unknown
    revision, clone or fetch failed)."""


class OutputError(MinerError):
    """An output folder cannot be created, written or read back."""


class RecordsError(OutputError):
    """A mined output folder lacks its records, or they cannot be read."""


class WorkerStartError(MinerError):
    """Worker processes cannot start (the run cannot mine at all)."""


class ReleaseError(MinerError):
    """No release matches the tags asked for, or a release was given twice."""


class CorpusError(MinerError):
    """The release repository cannot be built from the package index."""


class UsageError(MinerError):
    """An option value the command cannot use (checked before any work)."""
