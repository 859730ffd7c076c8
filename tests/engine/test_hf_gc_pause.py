"""A long text's HF pipeline encode runs with the cyclic collector paused (its pieces,
tuples and cache entries hold no cycles; the collections were half the time), a short one
without (a keystroke's window)."""

from __future__ import annotations

import gc

import pytest

from explorer.bundled import resource_path
from explorer.engine.bpe.layout import GC_PAUSE_CHARS
from explorer.engine.formats import load_tokenizer
from explorer.engine.gc_pause import collection_held
from explorer.engine.hf.compact_fast import ByteLevelCompact
from explorer.engine.hf.pipeline import PipelineTokenizer


def test_a_long_encode_holds_the_collector_and_a_short_one_does_not(
        monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[bool] = []
    for cls, name in ((PipelineTokenizer, "_run"), (ByteLevelCompact, "encode")):
        original = getattr(cls, name)

        def spy(*args, _original=original, **kwargs):  # (where the encode does its work)
            seen.append(collection_held())
            return _original(*args, **kwargs)

        monkeypatch.setattr(cls, name, spy)
    tok = load_tokenizer(resource_path("vocab", "corpus_bpe_4k.json"))
    enabled = gc.isenabled()  # (off in a process where the window ran: it collects itself)
    long_text = "a new line of words, " * (GC_PAUSE_CHARS // 10)
    for encode in (tok.encode, tok.encode_compact):
        seen.clear()
        encode(long_text)
        assert seen and all(seen)
        seen.clear()
        encode("short text")
        assert seen and not any(seen)
    assert gc.isenabled() == enabled  # (as it was: the pause is undone)
