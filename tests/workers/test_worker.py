"""The worker shape: signal order, cancellation at yields, latest request wins."""

from __future__ import annotations

import time

import pytest

from explorer.workers.latest import Debounce, LatestRunner, Throttle
from explorer.workers.worker import GeneratorWorker, active_workers, start_worker


def counting(n: int, delay: float = 0.0):
    total = 0
    for i in range(n):
        time.sleep(delay)
        total += i
        yield i
    return total


def failing():
    yield 1
    raise ValueError("bad vocabulary")


def test_signals_in_strict_order(qtbot):
    w = GeneratorWorker(counting, 3)
    got, returned = [], []
    w.signals.yielded.connect(got.append)
    w.signals.returned.connect(returned.append)
    sig = w.signals
    with qtbot.waitSignals([sig.started, sig.yielded, sig.yielded, sig.yielded, sig.returned,
                            sig.finished], order="strict", timeout=5000):
        start_worker(w)
    assert got == [0, 1, 2]
    assert returned == [3]


def test_error_is_reported_not_raised(qtbot):
    w = GeneratorWorker(failing)
    sig = w.signals
    errors = []
    sig.errored.connect(errors.append)
    with qtbot.waitSignals([sig.started, sig.yielded, sig.errored, sig.finished],
                           order="strict", timeout=5000):
        start_worker(w)
    err = errors[0]
    assert isinstance(err, ValueError) and str(err) == "bad vocabulary"


def test_quit_stops_at_next_yield(qtbot):
    w = GeneratorWorker(counting, 10_000, 0.001)
    sig = w.signals
    returned = []
    sig.returned.connect(returned.append)
    with qtbot.waitSignals([sig.aborted, sig.finished], order="strict", timeout=5000):
        start_worker(w)
        time.sleep(0.02)
        w.quit()
    assert returned == []
    qtbot.waitUntil(lambda: w not in active_workers(), timeout=2000)


def test_latest_request_wins(qtbot):
    runner = LatestRunner()
    results, progress = [], []
    for n in (2000, 2000, 5):
        runner.submit(counting, n, 0.001, on_return=results.append, on_yield=progress.append)
    with qtbot.waitSignal(runner.busy_changed, timeout=5000) as blocker:
        pass
    assert blocker.args == [False]
    qtbot.wait(50)  # let any stale queued signal arrive: it must be dropped
    assert results == [sum(range(5))]
    assert progress == list(range(5))


def test_cancel_drops_result(qtbot):
    runner = LatestRunner()
    results = []
    w = runner.submit(counting, 50, 0.001, on_return=results.append)
    runner.cancel()
    assert w.wait(5)
    qtbot.wait(50)
    assert results == []
    assert runner.current is None


@pytest.mark.parametrize("cls", [Throttle, Debounce])
def test_throttle_and_debounce_collapse_calls(qtbot, cls):
    calls = []
    t = cls(lambda: calls.append(1), 30)
    for _ in range(10):
        t()
    first = len(calls)
    qtbot.waitUntil(lambda: len(calls) == first + 1, timeout=2000)
    qtbot.wait(60)
    assert (first, len(calls)) == ((1, 2) if cls is Throttle else (0, 1))


class _Payload:
    """Stands for a job's arguments (a document's text and tokens)."""


def _echo(payload: _Payload):
    yield "working"
    return None


def test_finished_workers_release_their_arguments(qtbot):
    """QThreadPool.start gives the runnable's ownership to C++, which with autoDelete off
    kept every worker and its arguments alive forever (2-3 MB per keystroke in a 1 MB
    document): once a run ended its arguments must become garbage."""
    import gc
    import weakref

    refs = []
    runner = LatestRunner()
    for _ in range(3):  # through the runner, as the window submits its encodes
        payload = _Payload()
        refs.append(weakref.ref(payload))
        runner.submit(_echo, payload)
        del payload
        qtbot.waitUntil(lambda: runner.current is None, timeout=5000)
    payload = _Payload()
    refs.append(weakref.ref(payload))
    w = start_worker(GeneratorWorker(_echo, payload))
    del payload
    assert w.wait(5)
    del w

    def released() -> bool:
        gc.collect()
        return all(r() is None for r in refs)

    qtbot.waitUntil(released, timeout=3000)
