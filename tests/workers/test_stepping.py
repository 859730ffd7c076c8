"""SteppedGenerator: stepping, pausing and resuming pull the same events as one run."""

from __future__ import annotations

from collections.abc import Iterator

from explorer.workers.stepping import SteppedGenerator


def _numbers(n: int) -> Iterator[object]:
    yield from range(n)
    yield "end"


def _is_last(e: object) -> bool:
    return e == "end"


def _even(e: object) -> bool:
    return isinstance(e, int) and e % 2 == 0


def test_step_pause_resume_equal_one_run(qtbot):
    run = SteppedGenerator(_numbers(500), _is_last)
    seen: list[object] = []
    run.events.connect(seen.extend)
    with qtbot.waitSignal(run.paused, timeout=5000):
        run.step(3, _even)
    assert seen == [0, 1, 2, 3, 4]  # three even numbers: 0, 2, 4
    with qtbot.waitSignal(run.paused, timeout=5000):
        run.step(1, lambda e: True)
    assert seen[-1] == 5
    run.set_rate(200.0)
    with qtbot.waitSignal(run.paused, timeout=5000):
        run.resume(lambda e: True)
        qtbot.wait(30)
        run.pause()
    assert 5 < len(seen) < 500 and not run.finished
    run.set_rate(None)
    with qtbot.waitSignal(run.done, timeout=5000) as blocker:
        run.resume()
    assert blocker.args == ["end"] and seen == list(range(500)) and run.finished


def test_errors_are_reported(qtbot):
    def broken() -> Iterator[object]:
        yield 1
        raise ValueError("boom")

    run = SteppedGenerator(broken(), _is_last)
    with qtbot.waitSignal(run.failed, timeout=5000) as blocker:
        run.resume(lambda e: True)
    assert isinstance(blocker.args[0], ValueError) and run.finished
