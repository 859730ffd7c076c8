"""Property tests: on random text, ids and original-text offsets equal sentencepiece's."""

from __future__ import annotations

import functools

import sentencepiece as spm
from hypothesis import given, settings
from hypothesis import strategies as st
from sp_support import check_offsets, reference_model, sp_offsets, trained_model

from explorer.engine.formats import load_tokenizer

ALPHABET = list(
    " \t\n\u3000\u00a0\u200b¨ﬁ½①ｶﾞ㍱e\u0301\u0308ab▁日本語ภา👍🏽\U0002a6b2\ue000<s>xyz.!0123"
)
MODELS = [
    ("sentencepiece", "botchan_en_unigram_1000.model"),
    ("mistral-common", "tokenizer.model.v1"),
    "uni_identity_bytes",
    "uni_nfkc_bytes_user",
    "bpe_suffix",
]


@functools.cache
def _pair(model) -> tuple:
    path = trained_model(model) if isinstance(model, str) else reference_model(*model)
    return spm.SentencePieceProcessor(model_file=str(path)), load_tokenizer(path)


@settings(max_examples=120, deadline=None)
@given(text=st.text(alphabet=st.sampled_from(ALPHABET), max_size=30))
def test_offsets_point_into_the_original_text_like_sentencepiece(text: str) -> None:
    for model in MODELS:
        sp, tok = _pair(model)
        enc = tok.encode(text, allowed_special=())
        assert enc.ids == sp.encode(text), (model, text)
        check_offsets(enc, sp_offsets(sp, text), text)
        previous_end = 0
        for t in enc.tokens:
            assert 0 <= t.start <= t.end <= len(text)
            assert t.start >= previous_end or t.is_partial_utf8 or t.start == previous_end
            previous_end = max(previous_end, t.start)
        assert tok.decode(enc.ids) == sp.decode(enc.ids)
