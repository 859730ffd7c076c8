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
