"""Latest request wins, and keystroke throttling.

:class:`LatestRunner` runs one job at a time per purpose: submitting a new request cancels the
previous worker and disconnects it. Because a queued signal already posted before the
disconnect would still be delivered, every callback is also guarded by a generation number:
a result of anything but the newest request is dropped, never applied.

:class:`Throttle`: the first call runs at once; calls within ``delay_ms`` collapse into one
trailing call (typing re-encodes immediately, then at most once per interval).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QThreadPool, QTimer, Signal, Slot

from explorer.workers.worker import GeneratorWorker, Job, WorkerSignals, start_worker

Callback = Callable[[Any], None]


class LatestRunner(QObject):
    """Runs jobs so that only the newest request's signals reach the callbacks."""

    busy_changed = Signal(bool)
    """True while a request is running."""

    def __init__(self, parent: QObject | None = None, pool: QThreadPool | None = None) -> None:
        super().__init__(parent)
        self._pool = pool
        self._generation = 0
        self._worker: GeneratorWorker | None = None
        self._relays: dict[int, _Relay] = {}

    @property
    def generation(self) -> int:
        """Number of the newest request (increases with every submit and cancel)."""
        return self._generation

    @property
    def current(self) -> GeneratorWorker | None:
        """The worker of the newest request while it runs."""
        return self._worker

    def cancel(self) -> None:
        """Cancel the running request; its results will not land."""
        self._generation += 1
        old, self._worker = self._worker, None
        if old is not None:
            old.quit()
            relay = self._relays.pop(id(old), None)
            if relay is not None:
                relay.detach()
            self.busy_changed.emit(False)

    def submit(
        self,
        job: Job,
        *args: Any,
        on_yield: Callback | None = None,
        on_return: Callback | None = None,
        on_error: Callback | None = None,
        **kwargs: Any,
    ) -> GeneratorWorker:
        """Cancel the previous request and start ``job(*args, **kwargs)``."""
        self.cancel()
        generation = self._generation
        worker = GeneratorWorker(job, *args, **kwargs)

        def guard(cb: Callback | None) -> Callback:
            def call(value: Any) -> None:
                if generation == self._generation and cb is not None:
                    cb(value)
            return call

        def done() -> None:
            self._relays.pop(id(worker), None)
            if generation == self._generation:
                self._worker = None
                self.busy_changed.emit(False)

        relay = _Relay(guard(on_yield), guard(on_return), guard(on_error), done, self)
        relay.attach(worker.signals)
        self._relays[id(worker)] = relay
        self._worker = worker
        self.busy_changed.emit(True)
        return start_worker(worker, self._pool)


class _Relay(QObject):
    """Lives on the GUI thread so worker signals arrive queued there, then calls back."""

    def __init__(self, on_yield: Callback, on_return: Callback, on_error: Callback,
                 on_finished: Callable[[], None], parent: QObject) -> None:
        super().__init__(parent)
        self._on_yield = on_yield
        self._on_return = on_return
        self._on_error = on_error
        self._on_finished = on_finished

    def attach(self, sig: WorkerSignals) -> None:
        sig.yielded.connect(self.yielded)
        sig.returned.connect(self.returned)
        sig.errored.connect(self.errored)
        sig.finished.connect(self.finished)

    def detach(self) -> None:
        """Stop relaying: deleting the receiver drops its connections and queued calls."""
        self.deleteLater()

    @Slot(object)
    def yielded(self, value: Any) -> None:
        self._on_yield(value)

    @Slot(object)
    def returned(self, value: Any) -> None:
        self._on_return(value)

    @Slot(object)
    def errored(self, value: Any) -> None:
        self._on_error(value)

    @Slot()
    def finished(self) -> None:
        self._on_finished()
        self.deleteLater()


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

    def flush(self) -> None:
        """Run a scheduled call now."""
        if self._timer.isActive():
            self._timer.stop()
            self._timer.timeout.emit()
