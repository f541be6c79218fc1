"""Paste scanning, step 1: the lines of a paste without what log writers and
log collectors put before each message.

Three kinds of text go: a log prefix at the start of a line (timestamps,
``[... TP0]`` rank tags, levels, logger names, ``(Scheduler pid=7)``, glog,
docker compose, journald: :data:`miner.publish.patterns.PREFIX_PATTERNS`),
a prefix every line of the paste carries (Kubernetes' ``pod container``),
and the indentation every line shares (a paste copied from an indented
block). Each is linear in the paste's length: a prefix pattern reads at most
:data:`~miner.lookup.rules.MAX_PREFIX` characters of a line.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from miner.lookup.rules import (
    COLLECTOR_MARK,
    FRAME,
    LINE_BREAK,
    MAX_MESSAGE,
    MAX_PREFIX,
    PREFIXES,
    TRACEBACK_HEAD,
)


def strip_prefixes(line: str) -> str:
    """``line`` without its log prefixes (timestamps, ``[... TP0]`` tags,
    levels), stripped again and again (at most 8 times). Each pattern reads
    only the first :data:`MAX_PREFIX` characters: a longer line costs the same
    as one that long, whatever the patterns (the text after them is kept)."""
    for _ in range(8):
        head, tail = line[:MAX_PREFIX], line[MAX_PREFIX:]
        for pattern in PREFIXES:
            stripped = pattern.sub("", head, count=1)
            if stripped != head:
                line = stripped + tail
                break
        else:
            return line
    return line


def strip_common_prefix(lines: Sequence[str]) -> list[str]:
    """``lines`` without the prefix every one of them carries: a log
    collector's (``pod-name container ``, ``service-1  | ``).

    Taken only when at least two lines are not blank, the shared text ends
    at white space, and its first word holds a character that words of a
    message rarely start with (a digit, ``-``, ``_``, ``|``, ``[``, ``:``,
    ``/``): a message's own words are never taken. O(total length).
    """
    shown = [line for line in lines if line.strip()]
    if len(shown) < 2:
        return list(lines)
    prefix = os.path.commonprefix(shown)
    cut = max(prefix.rfind(" "), prefix.rfind("\t"))
    if cut < 0:
        return list(lines)
    prefix = prefix[: cut + 1]
    words = prefix.split()
    if (
        not words
        or len(prefix.strip()) < 3
        or not COLLECTOR_MARK.search(words[0])
        or TRACEBACK_HEAD in prefix
        or FRAME.match(prefix)
    ):
        return list(lines)
    return [line[len(prefix) :] if line.startswith(prefix) else line for line in lines]


def indent(line: str) -> int:
    """Number of leading blank characters (spaces and tabs) of ``line``."""
    return len(line) - len(line.lstrip(" \t"))


def dedent(lines: Sequence[str]) -> list[str]:
    """``lines`` without the indentation every non-blank one shares (spaces
    and tabs, counted as characters): the relative indentation that tells a
    traceback's source lines and a wrapped message's continuation lines stays."""
    shown = [indent(line) for line in lines if line.strip()]
    common = min(shown, default=0)
    if not common:
        return list(lines)
    return [line[common:] if line.strip() else "" for line in lines]


def read_lines(text: str) -> list[str]:
    """The lines of a paste as the scanner reads them: split at ``\\r\\n``,
    ``\\r`` or ``\\n``, collectors' shared prefix stripped, each line's log
    prefixes stripped, a shared prefix again (what remains when every line
    had the same log prefix and a collector's), each line cut at
    :data:`MAX_MESSAGE` characters (no message read is longer), the shared
    indentation removed."""
    lines = strip_common_prefix(LINE_BREAK.split(text))
    lines = strip_common_prefix([strip_prefixes(line) for line in lines])
    return dedent([line[:MAX_MESSAGE] for line in lines])
