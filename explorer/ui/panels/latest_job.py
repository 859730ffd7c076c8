"""Latest-wins job runner for the panels, on the project's one worker shape.

Runs :class:`~explorer.workers.worker.GeneratorWorker` jobs (generator functions on
``QThreadPool``); starting a request cancels the previous one, and only the newest request's
``yielded``/``returned``/``errored`` values reach the callbacks. Worker signals are received
by this object's own slots (it lives on the GUI thread, so they arrive queued there) and
``sender()`` tells which worker they came from; stale ones are dropped.

Why not ``explorer.workers.latest.LatestRunner``: with it, a panel destroyed shortly after a
request finished crashed (segfault in ``QObject::~QObject`` from a ``deleteLater`` of its
per-request relay objects, about one run in two in pytest-qt). Here no object is created or
deleted per request, and every worker stays referenced until its ``finished`` arrives on the
GUI thread, so its last reference is never dropped on a pool thread.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, Signal, Slot

from explorer.workers.worker import GeneratorWorker, Job, start_worker

Callback = Callable[[Any], None]


class LatestJob(QObject):
    """One running request at a time; results of superseded requests never land."""

    busy_changed = Signal(bool)
    """True while the newest request runs."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._current: GeneratorWorker | None = None
        self._callbacks: tuple[Callback | None, Callback | None, Callback | None] = (
            None, None, None)
        self._running: dict[int, GeneratorWorker] = {}  # id(signals) -> worker, until finished

    @property
    def current(self) -> GeneratorWorker | None:
        """The worker of the newest request while it runs."""
        return self._current

    def submit(self, job: Job, *args: Any, on_yield: Callback | None = None,
               on_return: Callback | None = None, on_error: Callback | None = None,
               **kwargs: Any) -> GeneratorWorker:
        """Cancel the previous request and start ``job(*args, **kwargs)``."""
        self.cancel()
        worker = GeneratorWorker(job, *args, **kwargs)
        sig = worker.signals
        sig.yielded.connect(self._on_yielded)
        sig.returned.connect(self._on_returned)
        sig.errored.connect(self._on_errored)
        sig.finished.connect(self._on_finished)
        self._running[id(sig)] = worker
        self._current = worker
        self._callbacks = (on_yield, on_return, on_error)
        self.busy_changed.emit(True)
        return start_worker(worker)

    def cancel(self) -> None:
        """Cancel the running request; nothing more of it reaches the callbacks."""
        old, self._current = self._current, None
        self._callbacks = (None, None, None)
        if old is not None:
            old.quit()
            self.busy_changed.emit(False)

    def _is_current(self) -> bool:
        return self._current is not None and self.sender() is self._current.signals

    @Slot(object)
    def _on_yielded(self, value: Any) -> None:
        if self._is_current() and self._callbacks[0] is not None:
            self._callbacks[0](value)

    @Slot(object)
    def _on_returned(self, value: Any) -> None:
        if self._is_current() and self._callbacks[1] is not None:
            self._callbacks[1](value)

    @Slot(object)
    def _on_errored(self, value: Any) -> None:
        if self._is_current() and self._callbacks[2] is not None:
            self._callbacks[2](value)

    @Slot()
    def _on_finished(self) -> None:
        sender = self.sender()
        if self._current is not None and sender is self._current.signals:
            self._current = None
            self._callbacks = (None, None, None)
            self.busy_changed.emit(False)
        self._running.pop(id(sender), None)
