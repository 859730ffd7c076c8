"""Collections paused around bulk work, and never held across a generator's yields."""

from __future__ import annotations

import gc
from collections.abc import Generator

import pytest

from explorer.engine.gc_pause import collection_held, paused_steps
from explorer.engine.trainers.bpe_trainer import BpeConfig, train_bpe
from explorer.engine.trainers.unigram_trainer import UnigramConfig, train_unigram


def _steps(seen: list[bool]) -> Generator[int, str | None, str]:
    got = []
    for i in range(3):
        seen.append(collection_held())
        try:
            reply = yield i
        except KeyError:
            reply = "thrown"
        got.append(str(reply))
    return ",".join(got)


def test_held_during_each_step_and_released_between():
    seen: list[bool] = []
    gen = paused_steps(_steps(seen))
    assert next(gen) == 0
    assert not collection_held()
    assert gen.send("a") == 1
    assert not collection_held()
    assert gen.throw(KeyError()) == 2
    with pytest.raises(StopIteration) as done:
        gen.send("c")
    assert done.value.value == "a,thrown,c"
    assert seen == [True, True, True]
    assert not collection_held()


def test_gc_state_is_restored_between_steps():
    was = gc.isenabled()
    gc.enable()
    try:
        gen = paused_steps(_steps([]))
        next(gen)
        assert gc.isenabled()
        gen.close()
    finally:
        if not was:
            gc.disable()


def test_closing_closes_the_inner_generator():
    closed: list[bool] = []

    def inner() -> Generator[int, None, None]:
        try:
            yield 1
            yield 2
        finally:
            closed.append(True)

    gen = paused_steps(inner())
    next(gen)
    gen.close()
    assert closed == [True]


@pytest.mark.parametrize("train", ["bpe", "unigram"])
def test_an_abandoned_training_holds_no_pause(train):
    """A training dropped mid-way (window closed, dialog cancelled) must not keep the
    window's collector waiting: the hold is released at every yield."""
    texts = ["the quick brown fox jumps over the lazy dog " * 20, "pack my box with jugs " * 20]
    gen = (train_bpe(texts, BpeConfig(vocab_size=300)) if train == "bpe" else
           train_unigram(texts, UnigramConfig(vocab_size=60)))
    for _, _event in zip(range(8), gen, strict=False):
        assert not collection_held()
    assert not collection_held()  # gen still alive, not closed
    del gen
    assert not collection_held()
