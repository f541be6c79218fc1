"""Progress a person can follow: each stage of a run says when it starts and
when it ends, with its wall time.

One :class:`Reporter` is made by the command line and passed down to the
stages (never a global). It writes to one stream (stderr) in one of three
forms:

* a terminal: a live line for the running stage (a bar, counts, rate and ETA
  where the stage counts its items), replaced by the stage's end line;
* not a terminal (CI, ``| tee``): exactly one line per stage, when it ends;
* quiet: nothing.

End lines read ``extraction: 3,510 files (3,200 from cache, 310 parsed at
45.2 file/s) done in 31.9 s``.

Rates count only the items that cost work (:meth:`Stage.advance`): items
done at once (cache hits, :meth:`Stage.free`) shorten what is left but do not
inflate the rate, and the rate's clock starts when the first worked item is
under way (after the free ones). The ETA is what is left over a smoothed
rate, shown only once the rate has been measured over :data:`ETA_AFTER`
seconds and :data:`ETA_MIN_ITEMS` items. Time comes from an injected clock,
so the arithmetic is tested with a fake one.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import TextIO

Clock = Callable[[], float]

#: Seconds of measured work before an ETA is shown.
ETA_AFTER = 2.0
#: Worked items before an ETA is shown.
ETA_MIN_ITEMS = 5
#: Weight of the newest window in the smoothed rate (exponential average).
SMOOTHING = 0.3
#: Shortest window (seconds) the smoothed rate is sampled over.
WINDOW = 1.0
#: Least seconds between two redraws of the live line.
REDRAW_EVERY = 0.1
#: Width of the bar itself, in characters.
BAR_WIDTH = 20


def duration(seconds: float) -> str:
    """``31.9 s`` under a minute, ``2 min 05 s`` under an hour, else ``1 h 02 min``."""
    if seconds < 59.95:
        return f"{max(0.0, seconds):.1f} s"
    whole = round(seconds)
    if whole < 3600:
        return f"{whole // 60} min {whole % 60:02d} s"
    return f"{whole // 3600} h {whole % 3600 // 60:02d} min"


def printable(text: str) -> str:
    """``text`` with every character a terminal would act on (controls,
    escapes, bidirectional overrides) written as ``\\x..``/``\\u....``."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else ascii(c)[1:-1] for c in text)


class Meter:
    """The counts, rate and ETA of one stage (pure arithmetic over ``clock``).

    ``total`` is the number of items (None: unknown, no ETA); ``worked``
    items cost work, ``free`` items were done at once (cache hits).
    """

    def __init__(self, clock: Clock, total: int | None = None) -> None:
        self.clock = clock
        self.total = total
        self.started = clock()
        self.worked = 0
        self.free = 0
        self.work_started: float | None = None
        """When the worked items began: the stage's start, or the last free
        items delivered before the first worked one."""
        self.first: float | None = None
        """When the first worked item was done: the smoothed rate and the
        ETA are measured from there, so the start-up (a pool of workers
        starting) costs the ETA nothing it would not cost again."""
        self._smoothed: float | None = None
        self._window: tuple[float, int] | None = None

    @property
    def done(self) -> int:
        return self.worked + self.free

    def add_free(self, count: int) -> None:
        """``count`` items done without work (their time is not the rate's)."""
        self.free += count
        if self.worked == 0:
            self.work_started = self.clock()

    def add_worked(self, count: int) -> None:
        """``count`` items done by work."""
        now = self.clock()
        if self.work_started is None:
            self.work_started = self.started
        self.worked += count
        if self._window is None:
            self.first = now
            self._window = (now, self.worked)
            return
        since, before = self._window
        if now - since >= WINDOW:
            recent = (self.worked - before) / (now - since)
            old = self._smoothed
            self._smoothed = recent if old is None else SMOOTHING * recent + (1 - SMOOTHING) * old
            self._window = (now, self.worked)

    def work_seconds(self) -> float:
        """Seconds since the worked items began (0 before any)."""
        if self.work_started is None or self.worked == 0:
            return 0.0
        return max(0.0, self.clock() - self.work_started)

    def rate(self) -> float | None:
        """Worked items per second over the whole stage so far, or None
        before any was measured."""
        seconds = self.work_seconds()
        return self.worked / seconds if self.worked and seconds > 0 else None

    def smoothed_rate(self) -> float | None:
        """The exponential average of the rates over windows of at least
        :data:`WINDOW` seconds from the first worked item on (until one has
        closed: the rate since that item, else the overall rate)."""
        if self._smoothed is not None:
            return self._smoothed
        if self.first is not None and self._window is not None:
            seconds = self.clock() - self.first
            if seconds > 0 and self.worked > self._window[1]:
                return (self.worked - self._window[1]) / seconds
        return self.rate()

    def eta(self) -> float | None:
        """Seconds left at the smoothed rate; None with no total, or before
        :data:`ETA_AFTER` seconds since the first worked item and
        :data:`ETA_MIN_ITEMS` worked items."""
        if self.total is None or self.worked < ETA_MIN_ITEMS or self.first is None:
            return None
        if self.clock() - self.first < ETA_AFTER:
            return None
        rate = self.smoothed_rate()
        if not rate:
            return None
        return max(0, self.total - self.done) / rate

    def elapsed(self) -> float:
        return max(0.0, self.clock() - self.started)


class Stage:
    """One running stage: what its code reports while it runs.

    Its code calls :meth:`advance` (items done by work), :meth:`free` (items
    done at once) and :meth:`count` (``N sites``), and may set ``total``
    (items, None when unknown), ``unit`` (the singular noun of an item),
    ``worked_label`` (``parsed``), ``summary`` (the end line's words in place
    of the items), ``notes``, ``doing`` and ``measured`` (below).
    """

    def __init__(self, reporter: Reporter, name: str, total: int | None, unit: str) -> None:
        self.reporter = reporter
        self.name = printable(name)
        self.unit = unit
        self.meter = Meter(reporter.clock, total)
        self.counts: dict[str, int] = {}
        self.summary = ""
        self.freed: dict[str, int] = {}
        """Why items were done at once (``from cache``) -> how many."""
        self.worked_label = "done"
        self.notes: list[str] = []
        """Words added to the end line's details (``rendering 9.1 s``)."""
        self.doing = ""
        """What the stage does now, shown at the end of the live line."""
        self.measured = True
        """Show a rate and an ETA (False: items of uneven size, such as steps)."""

    @property
    def total(self) -> int | None:
        return self.meter.total

    @total.setter
    def total(self, value: int | None) -> None:
        self.meter.total = value
        self.reporter.changed(self)

    def advance(self, count: int = 1) -> None:
        """``count`` items done by work (what the rate counts)."""
        self.meter.add_worked(count)
        self.reporter.changed(self)

    def free(self, count: int = 1, why: str = "from cache") -> None:
        """``count`` items done at once (``why``: a cache hit): not in the rate."""
        if count:
            self.freed[why] = self.freed.get(why, 0) + count
            self.meter.add_free(count)
            self.reporter.changed(self)

    def count(self, key: str, count: int = 1) -> None:
        """Add ``count`` to the shown number ``key`` (``sites``, ``failed``)."""
        self.counts[key] = self.counts.get(key, 0) + count

    def _items(self, count: int) -> str:
        return f"{count:,} {self.unit}{'' if count == 1 else 's'}"

    def _freed(self) -> str:
        return ", ".join(f"{n:,} {printable(why)}" for why, n in self.freed.items())

    def _extras(self) -> list[str]:
        return [f"{n:,} {printable(k)}" for k, n in self.counts.items()]

    def live(self) -> str:
        """The live line: ``name: [bar] done/total unit  rate  ETA``."""
        m = self.meter
        parts = [f"{self.name}:"]
        if m.total:
            filled = min(BAR_WIDTH, BAR_WIDTH * m.done // m.total)
            parts.append("[" + "#" * filled + "." * (BAR_WIDTH - filled) + "]")
            parts.append(f"{m.done:,}/{self._items(m.total)}")
        elif m.done:
            parts.append(self._items(m.done))
        if self.freed:
            parts.append(f"({self._freed()})")
        rate = m.smoothed_rate() if self.measured else None
        if rate is not None:
            parts.append(f"{rate:,.1f} {self.unit}/s")
        eta = m.eta() if self.measured else None
        parts.append(f"ETA {duration(eta)}" if eta is not None else duration(m.elapsed()))
        parts += self._extras()
        if self.doing:
            parts.append(printable(self.doing))
        return " ".join(parts)

    def ended(self) -> str:
        """The end line: ``name: items (free, worked at rate, counts, notes) done in T``."""
        m = self.meter
        what = self.summary or (self._items(m.done) if m.done or m.total is not None else "")
        details = [self._freed()] if self.freed else []
        rate = m.rate() if self.measured else None
        if rate is not None and m.worked != m.done:
            details.append(f"{m.worked:,} {self.worked_label} at {rate:,.1f} {self.unit}/s")
        elif rate is not None:
            details.append(f"{rate:,.1f} {self.unit}/s")
        details += self._extras() + [printable(n) for n in self.notes]
        head = f"{self.name}: {what}" if what else f"{self.name}:"
        if details:
            head += f" ({', '.join(details)})"
        return f"{head} done in {duration(m.elapsed())}"


class Reporter:
    """Where a run's progress goes (see the module doc).

    Args:
        stream: the stream written (default ``sys.stderr``).
        quiet: write nothing at all.
        tty: draw live lines (default: whether ``stream`` is a terminal).
        clock: seconds, monotonic (default :func:`time.monotonic`).
        columns: the width of the live line (default: the terminal's).
    """

    def __init__(
        self,
        stream: TextIO | None = None,
        *,
        quiet: bool = False,
        tty: bool | None = None,
        clock: Clock = time.monotonic,
        columns: int | None = None,
    ) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.quiet = quiet
        self.tty = (not quiet) and (_isatty(self.stream) if tty is None else tty)
        self.clock = clock
        self.columns = columns
        self._active: list[Stage] = []
        self._lock = threading.RLock()
        self._drawn = False
        self._last_draw = float("-inf")
        self._wrapped: list[tuple[logging.Handler, _Above]] = []

    @contextlib.contextmanager
    def stage(self, name: str, *, total: int | None = None, unit: str = "file") -> Iterator[Stage]:
        """Run a stage: its live line while the block runs (on a terminal),
        then its end line (:meth:`Stage.ended`). When the block raises, the
        live line is cleared and no end line is written: the error's own line
        (the command line's) is the one to read. Log records are printed
        above the live line."""
        stage = Stage(self, name, total, unit)
        with self._lock:
            if not self._active:
                self._logs_above(True)
            self._active.append(stage)
            self._redraw(force=True)
        try:
            yield stage
        except BaseException:
            self._end(stage, None)
            raise
        self._end(stage, stage.ended())

    def finished(self, name: str, what: str, seconds: float) -> None:
        """The end line of a stage that ran without a live line, or was
        skipped: ``name: what done in T`` (``what`` may be empty)."""
        head = f"{printable(name)}: {what}" if what else f"{printable(name)}:"
        self.line(f"{head} done in {duration(seconds)}")

    def line(self, text: str) -> None:
        """Write ``text`` as a line of its own (above any live line)."""
        if self.quiet:
            return
        with self._lock:
            self._clear()
            self.stream.write(text + "\n")
            self._redraw(force=True)

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        """The live line cleared while the block writes to the stream itself."""
        with self._lock:
            self._clear()
            try:
                yield
            finally:
                self._redraw(force=True)

    def changed(self, stage: Stage) -> None:
        """``stage``'s counts changed: redraw, at most every :data:`REDRAW_EVERY` s."""
        if self.tty:
            with self._lock:
                self._redraw(force=False)

    def _end(self, stage: Stage, text: str | None) -> None:
        with self._lock:
            if stage in self._active:
                self._active.remove(stage)
            if text is not None:
                self.line(text)
            elif not self.quiet:
                self._clear()
                self._redraw(force=True)
            if not self._active:
                self._logs_above(False)

    def _width(self) -> int:
        if self.columns is not None:
            return self.columns
        try:
            return os.get_terminal_size(self.stream.fileno()).columns
        except (AttributeError, OSError, ValueError):
            return 80

    def _clear(self) -> None:
        if self._drawn:
            self.stream.write("\r\x1b[K")
            self._drawn = False

    def _redraw(self, *, force: bool) -> None:
        if not self.tty:
            return
        now = self.clock()
        if not force and now - self._last_draw < REDRAW_EVERY:
            return
        self._last_draw = now
        text = "  |  ".join(s.live() for s in self._active)
        if not text:
            return
        self.stream.write("\r" + text[: max(1, self._width() - 1)] + "\x1b[K")
        self.stream.flush()
        self._drawn = True

    def _logs_above(self, on: bool) -> None:
        """On a terminal, while a stage runs (``on``), the root logger's
        handlers that write to this stream print above the live line."""
        if not self.tty:
            return
        root = logging.getLogger()
        if on:
            self._wrapped = [
                (h, _Above(h, self))
                for h in root.handlers
                if isinstance(h, logging.StreamHandler) and h.stream is self.stream
            ]
        for old, new in self._wrapped:
            root.removeHandler(old if on else new)
            root.addHandler(new if on else old)
        if not on:
            self._wrapped = []


class _Above(logging.Handler):
    """A stream handler's records, written with the live line cleared."""

    def __init__(self, inner: logging.Handler, reporter: Reporter) -> None:
        super().__init__(inner.level)
        self.inner = inner
        self.reporter = reporter

    def emit(self, record: logging.LogRecord) -> None:
        with self.reporter.paused():
            self.inner.handle(record)


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def silent() -> Reporter:
    """A reporter that writes nothing (what a library caller gets by default)."""
    return Reporter(quiet=True)
