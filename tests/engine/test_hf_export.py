"""Export round trips: our tokenizer.json / .tiktoken / .model load in the reference libraries
(HF tokenizers, tiktoken, sentencepiece) and give the same ids as the tokenizer we exported."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import pytest
from hf_support import hf_reference, load_cached, parity_texts, trained_files
from references import require
from tokenizers import Tokenizer as HFTokenizer

from explorer.engine.errors import UnsupportedComponentError
from explorer.engine.formats import load_tokenizer
from explorer.engine.hf.export import (
    merges_from_ranks,
    save_sentencepiece_file,
    save_tiktoken_file,
    save_tokenizer_json,
    to_tokenizer_json,
)

TEXTS = [*parity_texts(), "2000000 12345678 3.14159"]


@pytest.fixture(scope="session")
def trained() -> dict:
    return trained_files()


def assert_same_ids(ours, exported: HFTokenizer, texts: list[str]) -> None:
    bad = [t for t in texts
           if exported.encode(t, add_special_tokens=False).ids != ours.encode(t).ids]
    assert bad == []


@pytest.mark.parametrize("name", ["bytelevel_bpe", "llama_style_bpe", "prefix_suffix_bpe",
                                  "unigram", "wordpiece", "wordlevel"])
def test_tokenizer_json_round_trip_trained(trained: dict, name: str, tmp_path: Path) -> None:
    ours = load_tokenizer(trained[name])
    out = save_tokenizer_json(ours, tmp_path / "export.json")
    assert_same_ids(ours, HFTokenizer.from_file(str(out)), TEXTS)
    again = load_tokenizer(out)  # and our own loader reads our export
    assert [again.encode(t).ids for t in TEXTS] == [ours.encode(t).ids for t in TEXTS]
    # the export is equivalent to the original file, component by component
    assert_same_ids(ours, hf_reference(trained[name]), TEXTS)


@pytest.mark.parametrize("name", ["gpt-2", "llama-bpe", "qwen35", "deepseek-llm", "gemma-4"])
def test_gguf_exports_to_tokenizer_json(name: str) -> None:
    ours = load_cached(require("llama-cpp", f"ggml-vocab-{name}.gguf"))
    exported = HFTokenizer.from_str(json.dumps(to_tokenizer_json(ours), ensure_ascii=False))
    assert_same_ids(ours, exported, TEXTS)


def _llama_wpm_specific(text: str) -> bool:
    """Text where llama.cpp's WPM preprocessing and HF's BertNormalizer differ: Hangul
    syllables (llama.cpp keeps the leading jamo), spacing marks (llama.cpp drops them), form
    feed and other White_Space controls (llama.cpp splits, HF drops)."""
    return any("\uac00" <= c <= "\ud7a3" or unicodedata.category(c) == "Mc"
               or c in "\x0b\x0c\x85" for c in text)


def test_bert_gguf_exports_hf_bert_nearest_equivalent() -> None:
    """A GGUF ``bert`` vocabulary follows llama.cpp's WPM preprocessing, which HF cannot
    express: the export uses HF's BERT normalizer and pre-tokenizer, and gives our ids on
    every text except those where the two preprocessings differ."""
    ours = load_cached(require("llama-cpp", "ggml-vocab-bert-bge.gguf"))
    doc = to_tokenizer_json(ours)
    assert doc["normalizer"]["type"] == "BertNormalizer"
    assert doc["pre_tokenizer"] == {"type": "BertPreTokenizer"}
    exported = HFTokenizer.from_str(json.dumps(doc, ensure_ascii=False))
    assert_same_ids(ours, exported, [t for t in TEXTS if not _llama_wpm_specific(t)])
    assert any(_llama_wpm_specific(t) for t in TEXTS)


@pytest.mark.parametrize(("key", "name"), [("gpt-tokenizer", "cl100k_base.tiktoken"),
                                           ("gpt-tokenizer", "r50k_base.tiktoken")])
def test_tiktoken_ranks_export_to_tokenizer_json(key: str, name: str) -> None:
    ours = load_tokenizer(require(key, name))
    doc = to_tokenizer_json(ours)
    exported = HFTokenizer.from_str(json.dumps(doc, ensure_ascii=False))
    assert_same_ids(ours, exported, TEXTS)
    # cl100k's \p{N}{1,3}+ is possessive in tiktoken: the export keeps that meaning.
    assert exported.encode("2000000", add_special_tokens=False).ids == ours.encode("2000000").ids


def test_merges_from_ranks_small() -> None:
    ranks = {b"a": 0, b"b": 1, b"c": 2, b"ab": 3, b"bc": 4, b"abc": 5}
    assert merges_from_ranks(ranks) == [(b"a", b"b"), (b"b", b"c"), (b"a", b"bc"),
                                        (b"ab", b"c")]


@pytest.mark.parametrize(("key", "name"), [
    ("sentencepiece", "botchan_en_unigram_1000.model"),
    ("sentencepiece", "kyoto_ja_unigram_8000.model"),
    ("sentencepiece", "botchan_en_bpe_1000.model"),
    ("mistral-common", "tokenizer.model.v1"),
    ("llama-cpp", "ggml-vocab-llama-spm.gguf"),
])
def test_sentencepiece_models_export_to_tokenizer_json(key: str, name: str) -> None:
    ours = load_tokenizer(require(key, name))
    exported = HFTokenizer.from_str(json.dumps(to_tokenizer_json(ours), ensure_ascii=False))
    assert_same_ids(ours, exported, TEXTS)


def test_unigram_gguf_export_matches_everywhere() -> None:
    """HF sums Unigram scores in float64 as llama.cpp does (a GGUF ``t5`` vocabulary follows
    llama.cpp), so even the exact ties on runs of one letter break the same way."""
    ours = load_cached(require("llama-cpp", "ggml-vocab-nomic-bert-moe.gguf"))
    exported = HFTokenizer.from_str(json.dumps(to_tokenizer_json(ours), ensure_ascii=False))
    assert any("aaaaaaaaaa" in t for t in TEXTS)
    assert_same_ids(ours, exported, TEXTS)


@pytest.mark.parametrize("name", ["gpt-2", "llama-bpe"])
def test_byte_level_gguf_to_tiktoken(name: str, tmp_path: Path) -> None:
    import tiktoken
    from tiktoken.load import load_tiktoken_bpe

    from explorer.engine.pretokenizers.patterns import GPT2, LLAMA3

    ours = load_cached(require("llama-cpp", f"ggml-vocab-{name}.gguf"))
    out = save_tiktoken_file(ours, tmp_path / "x.tiktoken")
    enc = tiktoken.Encoding(name, pat_str=GPT2 if name == "gpt-2" else LLAMA3,
                            mergeable_ranks=load_tiktoken_bpe(str(out)), special_tokens={})
    for t in TEXTS:
        if "<|" not in t:
            assert enc.encode_ordinary(t) == ours.encode(t).ids, t


def test_non_byte_level_refuses_tiktoken(tmp_path: Path) -> None:
    ours = load_tokenizer(require("llama-cpp", "ggml-vocab-gemma-4.gguf"))
    with pytest.raises(UnsupportedComponentError):
        save_tiktoken_file(ours, tmp_path / "x.tiktoken")


def test_hf_unigram_to_sentencepiece_model(tmp_path: Path) -> None:
    import sentencepiece as spm

    ours = load_tokenizer(require("mon-tokenizer", "mon_tokenizer.json"))
    out = save_sentencepiece_file(ours, tmp_path / "mon.model")
    sp = spm.SentencePieceProcessor(model_file=str(out))
    # mon-tokenizer normalizes (NFC, zero-width removal) before the model; feed spm the
    # normalized single-spaced text so both see the same input.
    for t in TEXTS:
        norm = " ".join(ours.stages(t).normalized.split())
        if not norm or "<" in norm:
            continue
        assert sp.encode(norm) == ours.encode(norm).ids, norm
