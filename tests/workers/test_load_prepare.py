"""The load job prepares the tokenizer it loads (``Tokenizer.prepare``: what a first encode
builds on its way), and a warm-up that fails does not fail the load: the first encode then
meets the same error and reports it about the text."""

from __future__ import annotations

from explorer.bundled import resource_path
from explorer.engine.generators import run_to_end
from explorer.engine.tokenizer import Tokenizer
from explorer.workers import jobs


def test_a_loaded_tokenizer_is_prepared(monkeypatch) -> None:
    prepared: list[Tokenizer] = []
    real = Tokenizer.prepare
    monkeypatch.setattr(Tokenizer, "prepare", lambda self: (prepared.append(self), real(self)))
    loaded = run_to_end(jobs.load_job(resource_path("vocab", "o200k_base.tiktoken")))
    assert prepared == [loaded.tokenizer]
    assert loaded.tokenizer._sizes is not None  # (built by the warm-up)


def test_a_failing_warm_up_does_not_fail_the_load(monkeypatch) -> None:
    def broken(self: Tokenizer) -> None:
        raise RuntimeError("warm-up broke")

    monkeypatch.setattr(Tokenizer, "prepare", broken)
    loaded = run_to_end(jobs.load_job(resource_path("vocab", "corpus_unigram_4k.model")))
    assert loaded.tokenizer.encode("hello world").ids


def test_the_warm_up_maps_its_big_temporaries(monkeypatch) -> None:
    """The warm-up holds glibc's mmap threshold low (``malloc.mapped_temporaries``): its
    arrays of a megabyte and more are mapped and given back when freed, not left as free
    heap in the load thread's malloc arena, which the encode's thread (another arena) does
    not reuse (the 250k-piece model's window on the UDHR text: 622-631 MB in about one run
    in three, 581-587 MB in eight runs so held)."""
    from contextlib import contextmanager

    held: list[bool] = []
    during: list[bool] = []

    @contextmanager
    def watched(active: bool):  # type: ignore[no-untyped-def]
        held.append(active)
        yield
        held.append(False)

    monkeypatch.setattr(jobs, "mapped_temporaries", watched)
    real = Tokenizer.prepare
    monkeypatch.setattr(Tokenizer, "prepare",
                        lambda self: (during.append(held[-1] if held else False), real(self)))
    run_to_end(jobs.load_job(resource_path("vocab", "corpus_unigram_4k.model")))
    assert during == [True] and held == [True, False]
