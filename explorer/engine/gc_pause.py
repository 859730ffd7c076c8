"""Pausing the cyclic garbage collector around bulk work that creates no reference cycles."""

from __future__ import annotations

import gc
import threading
from collections.abc import Generator, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

T = TypeVar("T")
R = TypeVar("R")

_lock = threading.Lock()
_holders = 0


def collection_held() -> bool:
    """True while some thread is inside :func:`gc_paused` (an encode, a BPE merge loop).

    A collector driven from elsewhere (the GUI thread's timer, :mod:`explorer.ui.gui_gc`)
    waits then: a collection would walk the hundreds of thousands of containers that work
    just made, tens of milliseconds of the GUI thread for nothing.
    """
    return _holders > 0


@contextmanager
def gc_paused(active: bool = True) -> Iterator[None]:
    """Pause the cyclic garbage collector while millions of small objects are created.

    Tokens, id tuples and cache entries hold no reference cycles, yet every 700 allocations
    trigger a collection that walks the growing containers: on a large document that doubles
    the encode time. Only pauses when ``active`` and turns the GC back on afterwards if it
    was on; a concurrent caller at worst sees the GC running during its own encode. While
    inside, :func:`collection_held` is True.
    """
    global _holders
    if not active:
        yield
        return
    with _lock:
        _holders += 1
    try:
        if not gc.isenabled():
            yield
            return
        gc.disable()
        try:
            yield
        finally:
            gc.enable()
    finally:
        with _lock:
            _holders -= 1


def paused_steps(steps: Generator[T, Any, R]) -> Generator[T, Any, R]:
    """Run the generator ``steps`` with collections paused during each step, not across yields.

    A ``with gc_paused():`` around yields keeps :func:`collection_held` True while the
    consumer holds the generator between steps, and for ever if it drops the generator
    unclosed (the window's collector would then wait out ``MAX_HELD_S`` on every check).
    Values sent in and exceptions thrown in are passed on; closing this closes ``steps``.
    """
    sent: Any = None
    thrown: BaseException | None = None
    try:
        while True:
            with gc_paused():
                try:
                    event = steps.send(sent) if thrown is None else steps.throw(thrown)
                except StopIteration as done:
                    return done.value
            thrown = None
            try:
                sent = yield event
            except GeneratorExit:
                raise
            except BaseException as exc:  # thrown in: delivered to ``steps`` next
                sent, thrown = None, exc
    finally:
        steps.close()
