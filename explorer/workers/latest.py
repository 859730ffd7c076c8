"""Latest request wins, and keystroke throttling.

:class:`LatestRunner` runs one job at a time per purpose: submitting a new request cancels the
previous worker; a queued signal of an older request that is still delivered afterwards is
recognised by its sender and dropped, never applied.

:class:`Throttle`: the first call runs at once; calls within ``delay_ms`` collapse into one
trailing call (typing re-encodes immediately, then at most once per interval).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QThreadPool, QTimer, Signal, Slot
from shiboken6 import Shiboken

from explorer.workers.worker import GeneratorWorker, Job, start_worker

Callback = Callable[[Any], None]


class LatestRunner(QObject):
    """Runs jobs so that only the newest request's signals reach the callbacks.

    Worker signals arrive at this object's own slots (it lives on the GUI thread, so they are
    queued there); ``sender()`` tells which worker sent them and anything but the newest
    request's is dropped. No object is created or deleted per request.

    ``owner``: for widgets that may be destroyed while a request runs (panels, dialogs). The
    runner is then deliberately *not* a Qt child of the owner: a queued signal can still
    arrive after the owner's C++ object is gone (PySide routes bound-method slots through its
    own receiver), so the runner outlives it, drops such signals, and cancels its request.
    (A child runner deleted with its panel crashed in teardown about one run in two.)
    """

    busy_changed = Signal(bool)
    """True while the newest request runs."""

    def __init__(self, parent: QObject | None = None, pool: QThreadPool | None = None, *,
                 owner: QObject | None = None) -> None:
        if owner is not None and parent is not None:
            raise ValueError("give a parent or an owner, not both")
        super().__init__(parent)
        self._owner = owner
        self._pool = pool
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
        return start_worker(worker, self._pool)

    def cancel(self) -> None:
        """Cancel the running request; nothing more of it reaches the callbacks."""
        old, self._current = self._current, None
        self._callbacks = (None, None, None)
        if old is not None:
            old.quit()
            self.busy_changed.emit(False)

    def _is_current(self) -> bool:
        if self._owner is not None and not Shiboken.isValid(self._owner):
            self.cancel()
            return False
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


class Throttle(QObject):
    """Calls ``func`` at once, then at most once per ``delay_ms`` while calls keep coming."""

    def __init__(self, func: Callable[[], None], delay_ms: int,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._func = func
        self._pending = False
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(delay_ms)
        self._timer.timeout.connect(self._on_timeout)

    def __call__(self) -> None:
        """Request a call."""
        if self._timer.isActive():
            self._pending = True
            return
        self._pending = False
        self._timer.start()
        self._func()

    def flush(self) -> None:
        """Run a pending call now (e.g. before saving)."""
        if self._pending:
            self._timer.stop()
            self._pending = False
            self._func()

    def _on_timeout(self) -> None:
        if self._pending:
            self._pending = False
            self._timer.start()
            self._func()


class Debounce(QObject):
    """Calls ``func`` once ``delay_ms`` after the last request (autosave, big documents)."""

    def __init__(self, func: Callable[[], None], delay_ms: int,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(delay_ms)
        self._timer.timeout.connect(func)

    def __call__(self) -> None:
        """(Re)start the delay."""
        self._timer.start()

    def pending(self) -> bool:
        """True while a call is scheduled."""
        return self._timer.isActive()

    def cancel(self) -> None:
        """Drop a scheduled call."""
        self._timer.stop()

    def flush(self) -> None:
        """Run a scheduled call now."""
        if self._timer.isActive():
            self._timer.stop()
            self._timer.timeout.emit()
