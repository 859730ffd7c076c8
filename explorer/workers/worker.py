"""The one worker shape: a generator job run on ``QThreadPool`` with a signals object.

A job is a generator function. Every ``yield`` reports progress (the yielded value is emitted
as ``yielded``) and is a cancellation point: after :meth:`GeneratorWorker.quit` the worker stops
at the next yield and emits ``aborted`` instead of ``returned``. The generator's return value is
emitted as ``returned``; an exception as ``errored``. ``finished`` always comes last.

Signal order of one run: ``started``, ``yielded``*, then one of ``returned`` / ``errored`` /
``aborted``, then ``finished``.

Workers are kept in a registry from :func:`start_worker` until their ``finished`` signal has
arrived on the thread that started them, so neither the ``QRunnable`` nor its signals object
is garbage-collected while running, and the last reference is never dropped on a pool thread
(destroying a QObject there while queued signals are pending crashes).

``QThreadPool.start`` hands the runnable's ownership to C++ (PySide keeps an extra reference
to the Python object until the C++ object is deleted), and with ``autoDelete`` off nothing
deletes it: every worker, with its job's arguments (a whole document's text and tokens), would
live forever. So once a run has ended the registry deletes the C++ object
(``shiboken6.delete``, which Qt allows for a non-auto-deleting runnable after ``run()``),
which releases that reference. QtCore only.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Generator
from typing import Any

import shiboken6
from PySide6.QtCore import QObject, QRunnable, QThreadPool, QTimer, Signal, Slot

Job = Callable[..., Generator[Any, None, Any]]

REAP_DELAY_MS = 20
"""Delay between a worker's ``finished`` arriving and its C++ object being deleted (``run()``
returns right after emitting it; the delay leaves it time to)."""



class WorkerSignals(QObject):
    """Signals of one worker; emitted from the pool thread, delivered queued to receivers."""

    started = Signal()
    yielded = Signal(object)
    returned = Signal(object)
    errored = Signal(object)
    aborted = Signal()
    finished = Signal()


class GeneratorWorker(QRunnable):
    """Runs ``job(*args, **kwargs)`` (a generator function) on a thread pool."""

    def __init__(self, job: Job, *args: Any, **kwargs: Any) -> None:
        super().__init__()
        self.setAutoDelete(False)  # the registry owns the lifetime, not C++
        self.signals = WorkerSignals()
        self._job = job
        self._args = args
        self._kwargs = kwargs
        self._abort = threading.Event()
        self._done = threading.Event()

    def quit(self) -> None:
        """Ask the job to stop at its next yield (emits ``aborted`` then)."""
        self._abort.set()

    @property
    def abort_requested(self) -> bool:
        """True once :meth:`quit` was called."""
        return self._abort.is_set()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the run finished (for tests and shutdown); True when it did."""
        return self._done.wait(timeout)

    def run(self) -> None:
        """Drive the generator; never raises (errors go to ``errored``)."""
        sig = self.signals
        try:
            sig.started.emit()
            if self._abort.is_set():
                sig.aborted.emit()
                return
            gen = self._job(*self._args, **self._kwargs)
            result: Any = None
            while True:
                try:
                    value = next(gen)
                except StopIteration as stop:
                    result = stop.value
                    break
                if self._abort.is_set():
                    gen.close()
                    sig.aborted.emit()
                    return
                sig.yielded.emit(value)
            if self._abort.is_set():
                sig.aborted.emit()
            else:
                sig.returned.emit(result)
        except RuntimeError as error:
            if "deleted" not in str(error):  # our signals object is gone: the app is exiting
                _emit_quietly(sig.errored, error)
        except Exception as error:  # report, never crash the pool thread
            _emit_quietly(sig.errored, error)
        finally:
            _emit_quietly(sig.finished)
            self._done.set()


def _emit_quietly(signal: Any, *args: Any) -> None:
    """Emit unless the signals object was already deleted (application shutdown)."""
    with contextlib.suppress(RuntimeError):
        signal.emit(*args)


class _Registry(QObject):
    """Owns running workers; lives on the starting (GUI) thread, releases on ``finished``."""

    def __init__(self) -> None:
        super().__init__()
        self.workers: dict[int, GeneratorWorker] = {}  # id(signals) -> worker
        self.ended: list[GeneratorWorker] = []
        """Finished workers whose C++ object is deleted once ``run()`` has returned."""

    def add(self, worker: GeneratorWorker) -> None:
        self.workers[id(worker.signals)] = worker
        worker.signals.finished.connect(self._release)

    @Slot()
    def _release(self) -> None:
        worker = self.workers.pop(id(self.sender()), None)
        if worker is not None:
            self.ended.append(worker)
            QTimer.singleShot(REAP_DELAY_MS, self._reap)

    @Slot()
    def _reap(self) -> None:
        """Delete the C++ side of ended workers (see the module docstring)."""
        waiting = []
        for worker in self.ended:
            if worker._done.is_set():  # set as run()'s last statement
                with contextlib.suppress(RuntimeError):  # already deleted (app exit)
                    shiboken6.delete(worker)
            else:
                waiting.append(worker)
        self.ended = waiting
        if waiting:
            QTimer.singleShot(REAP_DELAY_MS, self._reap)


_REGISTRY: _Registry | None = None


def start_worker(worker: GeneratorWorker, pool: QThreadPool | None = None) -> GeneratorWorker:
    """Register ``worker`` and start it on ``pool`` (the global pool by default)."""
    global _REGISTRY
    if _REGISTRY is None:
        _REGISTRY = _Registry()
    _REGISTRY.add(worker)
    (pool or QThreadPool.globalInstance()).start(worker)
    return worker


def active_workers() -> list[GeneratorWorker]:
    """Workers started and not yet finished."""
    return [] if _REGISTRY is None else [w for w in _REGISTRY.workers.values()
                                         if not w._done.is_set()]


def quit_all(timeout: float = 5.0) -> None:
    """Ask every running worker to stop and wait for them (application shutdown)."""
    workers = active_workers()
    for w in workers:
        w.quit()
    for w in workers:
        w.wait(timeout)
