"""Analysis over mined records: the prose sections of the cards, from the facts.

``analyze(result)`` is the one entry point the renderers call; it returns one
:class:`~miner.model.Analysis` per error.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from miner.analysis.trigger import trigger_sentence
from miner.model import Analysis

if TYPE_CHECKING:
    from miner.pipeline import MineResult


def analyze(result: MineResult) -> dict[str, Analysis]:
    """One :class:`Analysis` per error id of ``result``."""
    return {
        error.error_id: Analysis(error_id=error.error_id, trigger=trigger_sentence(error.primary))
        for error in result.errors
    }
