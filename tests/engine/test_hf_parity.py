"""Ids, tokens and offsets identical to HF ``tokenizers`` on real and freshly trained files."""

from __future__ import annotations

import pytest
from hf_support import hf_reference, mismatches, parity_texts, trained_files
from references import require

from explorer.engine.formats import load_tokenizer


@pytest.fixture(scope="session")
def trained() -> dict:
    return trained_files()


@pytest.mark.parametrize("name", ["bytelevel_bpe", "llama_style_bpe", "prefix_suffix_bpe",
                                  "unigram", "wordpiece", "wordlevel"])
def test_trained_tokenizers_match_hf(trained: dict, name: str) -> None:
    path = trained[name]
    ours = load_tokenizer(path)
    assert mismatches(ours, hf_reference(path), parity_texts()) == []


@pytest.mark.parametrize("name", ["bytelevel_bpe", "llama_style_bpe", "unigram", "wordpiece"])
def test_trained_decode_matches_hf(trained: dict, name: str) -> None:
    path = trained[name]
    ours, ref = load_tokenizer(path), hf_reference(path)
    for t in parity_texts():
        ids = ref.encode(t, add_special_tokens=False).ids
        if name == "bytelevel_bpe" or all(i not in (0, 1, 2) for i in ids):
            assert ours.decode(ids) == ref.decode(ids, skip_special_tokens=False), t


def test_mon_tokenizer_unigram_matches_hf() -> None:
    path = require("mon-tokenizer", "mon_tokenizer.json")
    ours = load_tokenizer(path)
    assert ours.info.model_type == "unigram"
    assert mismatches(ours, hf_reference(path), parity_texts()) == []


def test_minilm_wordpiece_matches_hf_without_padding() -> None:
    path = require("minilm", "tokenizer.json")
    ours = load_tokenizer(path)
    assert ours.info.model_type == "wordpiece"
    texts = [*parity_texts(), "word " * 300]  # longer than its truncation length
    assert mismatches(ours, hf_reference(path), texts) == []
    assert len(ours.encode("word " * 300)) == 300  # no truncation, no padding


def test_mon_decode_matches_hf() -> None:
    path = require("mon-tokenizer", "mon_tokenizer.json")
    ours, ref = load_tokenizer(path), hf_reference(path)
    for t in parity_texts():
        ids = ref.encode(t, add_special_tokens=False).ids
        assert ours.decode(ids) == ref.decode(ids, skip_special_tokens=False), t


def test_decode_of_partial_byte_runs_matches_hf() -> None:
    """Every slice of a byte-fallback encoding (runs cut mid-character) decodes like HF."""
    path = require("mon-tokenizer", "mon_tokenizer.json")
    ours, ref = load_tokenizer(path), hf_reference(path)
    ids = ref.encode("a 𝕍𝕠 b ʬ 𓀀 x", add_special_tokens=False).ids
    assert len(ids) > 15
    for a in range(len(ids)):
        for b in range(a, len(ids) + 1):
            assert ours.decode(ids[a:b]) == ref.decode(ids[a:b], skip_special_tokens=False)
