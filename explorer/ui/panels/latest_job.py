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
GUI thread, so its last reference is never dropped on a pool thread. The runner is *not* a Qt
child of its panel: a queued signal can still arrive after the panel was destroyed (PySide
routes bound-method slots through its own receiver), so the runner must outlive it and drop
such signals; it checks that its owner is still alive before any callback.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, Slot
from shiboken6 import Shiboken

from explorer.workers.worker import GeneratorWorker, Job, start_worker

Callback = Callable[[Any], None]


class LatestJob(QObject):
    """One running request at a time for ``owner``; superseded results never land."""

    def __init__(self, owner: QObject) -> None:
        super().__init__(None)  # deliberately parentless: see the module docstring
        self._owner = owner
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
        return start_worker(worker)

    def cancel(self) -> None:
        """Cancel the running request; nothing more of it reaches the callbacks."""
        old, self._current = self._current, None
        self._callbacks = (None, None, None)
        if old is not None:
            old.quit()

    def _callback(self, which: int) -> Callback | None:
        if not Shiboken.isValid(self._owner):
            self.cancel()
            return None
        if self._current is None or self.sender() is not self._current.signals:
            return None
        return self._callbacks[which]

    @Slot(object)
    def _on_yielded(self, value: Any) -> None:
        cb = self._callback(0)
        if cb is not None:
            cb(value)

    @Slot(object)
    def _on_returned(self, value: Any) -> None:
        cb = self._callback(1)
        if cb is not None:
            cb(value)

    @Slot(object)
    def _on_errored(self, value: Any) -> None:
        cb = self._callback(2)
        if cb is not None:
            cb(value)

    @Slot()
    def _on_finished(self) -> None:
        sender = self.sender()
        if self._current is not None and sender is self._current.signals:
            self._current = None
            self._callbacks = (None, None, None)
        self._running.pop(id(sender), None)
