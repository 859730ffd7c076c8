"""A generator that the user drives: run, pause, step N, resume, at a chosen speed.

:class:`SteppedGenerator` owns an event generator (a trainer) and pulls it on a worker, one
pull job at a time, so the generator is never run by two threads at once. *Pausing is not
blocking*: a paused generator simply is not pulled (no thread waits on it); ``step`` and
``resume`` start a new pull job on the same generator. Which events count as a step (a BPE
merge, an EM sub-iteration, a pruning round) is the caller's predicate.

Events reach the GUI in batches (at most every :data:`BATCH_SECONDS`, and at every step when
a speed limit is set), so thousands of events per second never flood the event loop.
QtCore only.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Generator, Iterator
from contextlib import contextmanager
from typing import Any

from PySide6.QtCore import QObject, Signal

from explorer.workers.latest import LatestRunner

BATCH_SECONDS = 0.05
"""Events are sent to the GUI in batches at most this often while running at full speed."""
SLEEP_SLICE = 0.01
"""A speed-limited pull sleeps in slices this long, so pause/resume answer at once."""

HOLD_SLICE = 0.001
MAX_HOLD = 0.1
"""A redraw holds the pull job at most this long."""

Predicate = Callable[[Any], bool]


class _Control:
    """What the pull job reads between events (set from the GUI thread, under a lock)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.budget: int | None = 0
        """Steps still to pull: None runs on, 0 pauses."""
        self.is_step: Predicate = lambda _e: False
        self.rate: float | None = None
        """Steps per second, or None for as fast as possible."""
        self.held = False
        """True while the GUI redraws: the job waits (GIL free) so the redraw is not slowed
        by the trainer's Python code."""

    def take_step(self) -> None:
        with self.lock:
            if self.budget is not None and self.budget > 0:
                self.budget -= 1

    def paused(self) -> bool:
        with self.lock:
            return self.budget == 0


def pull_job(events: Iterator[Any], control: _Control, is_last: Predicate
             ) -> Generator[list[Any], None, tuple[str, Any]]:
    """Worker job: pull ``events`` while ``control`` allows; yield them in batches.

    Returns ``("paused", None)`` when the budget ran out, ``("done", last)`` when the
    ``is_last`` event came, ``("ended", None)`` when the generator stopped without it.
    """
    batch: list[Any] = []
    flushed = time.perf_counter()
    next_slot = flushed
    while True:
        if control.paused():
            if batch:
                yield batch
            return "paused", None
        if control.held:
            held = time.perf_counter()
            while control.held and time.perf_counter() - held < MAX_HOLD:
                time.sleep(HOLD_SLICE)
        try:
            event = next(events)
        except StopIteration:
            if batch:
                yield batch
            return "ended", None
        if is_last(event):
            if batch:
                yield batch
            return "done", event
        batch.append(event)
        now = time.perf_counter()
        if control.is_step(event):
            control.take_step()
            rate = control.rate
            if rate:
                yield batch
                batch, flushed = [], now
                next_slot = max(next_slot + 1.0 / rate, now)
                while not control.paused() and time.perf_counter() < next_slot:
                    time.sleep(min(SLEEP_SLICE, max(0.0, next_slot - time.perf_counter())))
                continue
        if now - flushed >= BATCH_SECONDS:
            yield batch
            batch, flushed = [], now


class SteppedGenerator(QObject):
    """Run, pause, step and resume one event generator on a worker.

    Signals: ``events(list)`` batches of events in order; ``paused()`` when it stopped
    pulling; ``done(object)`` with the last event; ``failed(object)`` with an exception;
    ``ended()`` when the generator stopped without a last event.
    """

    events = Signal(object)
    paused = Signal()
    done = Signal(object)
    failed = Signal(object)
    ended = Signal()

    def __init__(self, generator: Iterator[Any], is_last: Predicate,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._generator = generator
        self._is_last = is_last
        self._control = _Control()
        self._runner = LatestRunner(owner=self)
        self._finished = False
        self._live = False  # a pull job owns the generator (from submit to its result)

    @property
    def pulling(self) -> bool:
        """True while a pull job runs (the generator is advancing)."""
        return self._live

    @property
    def full_speed(self) -> bool:
        """True while running on without a step budget or speed limit (read from any
        thread: a viewer skips costly details then)."""
        control = self._control
        return control.budget is None and control.rate is None

    @property
    def finished(self) -> bool:
        """True once the generator gave its last event, failed, or was aborted."""
        return self._finished

    def set_rate(self, rate: float | None) -> None:
        """Steps per second (None: as fast as possible); applies to a running pull too."""
        with self._control.lock:
            self._control.rate = rate

    def resume(self, is_step: Predicate | None = None) -> None:
        """Pull until the end (or :meth:`pause`)."""
        self._go(None, is_step)

    def step(self, n: int, is_step: Predicate) -> None:
        """Pull until ``n`` more events satisfy ``is_step``, then pause."""
        self._go(max(1, n), is_step)

    @contextmanager
    def held(self) -> Iterator[None]:
        """Hold the pull job for a block of GUI work (a redraw): it waits between events,
        holding no GIL, so the event loop gets the interpreter to itself meanwhile."""
        self._control.held = True
        try:
            yield
        finally:
            self._control.held = False

    def pause(self) -> None:
        """Stop pulling after the current event (``paused`` follows)."""
        with self._control.lock:
            self._control.budget = 0

    def abort(self) -> None:
        """Stop for good; no more signals from this generator's jobs."""
        self.pause()
        self._finished = True
        self._live = False
        self._runner.cancel()

    def _go(self, budget: int | None, is_step: Predicate | None) -> None:
        if self._finished:
            return
        with self._control.lock:
            self._control.budget = budget
            if is_step is not None:
                self._control.is_step = is_step
        if not self._live:
            self._live = True
            self._runner.cancel()  # a finished job may still be reporting ``finished``
            self._runner.submit(pull_job, self._generator, self._control, self._is_last,
                                on_yield=self.events.emit, on_return=self._on_return,
                                on_error=self._on_error)

    def _on_return(self, result: tuple[str, Any]) -> None:
        self._live = False
        outcome, last = result
        if outcome == "paused":
            if not self._control.paused():  # resumed or stepped while the job was stopping
                self._go(self._control.budget, None)
                return
            self.paused.emit()
        elif outcome == "done":
            self._finished = True
            self.done.emit(last)
        else:
            self._finished = True
            self.ended.emit()

    def _on_error(self, error: object) -> None:
        self._live = False
        self._finished = True
        self.failed.emit(error)
