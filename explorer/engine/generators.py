"""Driving the engine's long work: generators that yield progress and return a result."""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import Any, TypeVar

Y = TypeVar("Y")
R = TypeVar("R")


def run_to_end(gen: Generator[Y, Any, R], each: Callable[[Y], object] | None = None) -> R:
    """Drive ``gen`` to its end, handing every yielded value to ``each``; its return value.

    Outside the window (command line, tests, benchmarks) a job runs this way; in the window
    :class:`explorer.workers.worker.GeneratorWorker` drives it on a pool thread instead."""
    while True:
        try:
            value = next(gen)
        except StopIteration as stop:
            return stop.value  # type: ignore[no-any-return]
        if each is not None:
            each(value)
