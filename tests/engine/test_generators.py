"""run_to_end: the engine's jobs driven outside the window."""

from __future__ import annotations

from explorer.engine.generators import run_to_end


def _job(n: int):
    yield from range(n)
    return n * 10


def test_every_yield_is_handed_on_and_the_return_value_comes_back():
    seen: list[int] = []
    assert run_to_end(_job(3), seen.append) == 30
    assert seen == [0, 1, 2]
    assert run_to_end(_job(0)) == 0
