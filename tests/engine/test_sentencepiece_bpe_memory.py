"""SentencePiece BPE words leave no cyclic garbage and share one tuple per piece
(explorer.engine.sentencepiece.bpe): a document encode pauses the collector, and a 10 MB
document with Baichuan's 125k-piece model held ~0.5 kB of cycles per new word (its window
reached 606 MB)."""

from __future__ import annotations

import gc

from sp_support import reference_model, trained_model

from explorer.engine.formats import load_tokenizer

WORDS = ["Tokenizers", "split", "words", "into", "pieces;", "naïve", "café", "résumé", "über",
         "straße", "東京", "😀", "unbelievably", "internationalization"]


def _models():
    yield load_tokenizer(trained_model("bpe_nfkc")).model
    yield load_tokenizer(reference_model("mistral-common", "tokenizer.model.v1")).model


def test_new_words_leave_no_cycles_and_share_their_pieces():
    for model in _models():
        model._cache.clear()
        gc.collect()
        gc.disable()
        try:
            model.segments("▁" + "▁".join(WORDS))
            found = gc.collect()
        finally:
            gc.enable()
        assert found == 0, f"{found} objects in reference cycles"
        seen: dict[int, tuple[int, int]] = {}
        for segments in model._cache.values():
            for segment in segments:
                if segment[1] != model.unk_id:
                    assert seen.setdefault(segment[1], segment) is segment
