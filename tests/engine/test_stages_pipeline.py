"""The pipeline-stages API on every model family: normalized text with alignment, pre-tokens
with spans, tokens and decoded text, checked against HF tokenizers' own stage functions."""

from __future__ import annotations

import pytest
from hf_support import hf_reference, load_cached, parity_texts, trained_files
from references import require

from explorer.engine.formats import load_tokenizer
from explorer.engine.tokenizer import PipelineStages, Tokenizer

TEXTS = ["Hello, World! naïve café 2000000", "  spaced   out  ", "東京は晴れ 👩‍👩‍👧 ok",
         "e\u0301 composed", ""]


@pytest.fixture(scope="session")
def trained() -> dict:
    return trained_files()


def check_invariants(tok: Tokenizer, text: str, st: PipelineStages) -> None:
    assert st.original == text
    assert len(st.norm_to_orig) == len(st.normalized) + 1
    assert all(0 <= p <= len(text) for p in st.norm_to_orig)
    assert st.norm_to_orig[-1] <= len(text)
    for p in st.pre_tokens:
        assert 0 <= p.start <= p.end <= len(text)
    enc = tok.encode(text)
    assert st.encoding.ids == enc.ids
    assert st.encoding.offsets == enc.offsets
    assert st.decoded == tok.decode(enc.ids)


def hf_stages(path, text: str) -> tuple[str, list[tuple[str, tuple[int, int]]]]:
    ref = hf_reference(path)
    norm = ref.normalizer.normalize_str(text) if ref.normalizer else text
    pre = ref.pre_tokenizer.pre_tokenize_str(norm) if ref.pre_tokenizer else [(norm, (0, 0))]
    return norm, pre


@pytest.mark.parametrize("name", ["bytelevel_bpe", "llama_style_bpe", "prefix_suffix_bpe",
                                  "unigram", "wordpiece", "wordlevel"])
def test_stages_match_hf_components(trained: dict, name: str) -> None:
    path = trained[name]
    tok = load_tokenizer(path)
    for text in TEXTS + parity_texts()[:20]:
        st = tok.stages(text)
        check_invariants(tok, text, st)
        norm, pre = hf_stages(path, text)
        if "<s>" in text or "[CLS]" in text:
            continue  # added tokens are split out before these stages in HF
        if name == "unigram" and text != text.lstrip():
            # Metaspace prepend_scheme="first" looks at the *original* offset (2 after Strip)
            # in a real encode, but pre_tokenize_str sees a fresh string starting at 0.
            continue
        assert st.normalized == norm, text
        if norm:
            assert [p.text for p in st.pre_tokens] == [p for p, _ in pre], text


@pytest.mark.parametrize(("key", "name"), [("mon-tokenizer", "mon_tokenizer.json"),
                                           ("minilm", "tokenizer.json")])
def test_stages_real_files(key: str, name: str) -> None:
    path = require(key, name)
    tok = load_tokenizer(path)
    for text in TEXTS:
        st = tok.stages(text)
        check_invariants(tok, text, st)
        norm, pre = hf_stages(path, text)
        assert st.normalized == norm
        assert [p.text for p in st.pre_tokens] == [p for p, _ in pre]


def test_stage_alignment_points_at_original_characters() -> None:
    tok = load_tokenizer(require("minilm", "tokenizer.json"))
    text = "Café ÉCOLE"
    st = tok.stages(text)
    assert st.normalized == "cafe ecole"
    assert [text[i] for i in st.norm_to_orig[:-1]] == list("Café ÉCOLE")
    assert [(p.text, p.start, p.end) for p in st.pre_tokens] == [("cafe", 0, 4),
                                                                 ("ecole", 5, 10)]
    assert [(t.piece, t.start, t.end) for t in st.encoding] == [("cafe", 0, 4),
                                                                ("ecole", 5, 10)]


@pytest.mark.parametrize("name", ["gpt-2", "llama-bpe", "llama-spm", "bert-bge", "gemma-4",
                                  "nomic-bert-moe"])
def test_stages_gguf_families(name: str) -> None:
    tok = load_cached(require("llama-cpp", f"ggml-vocab-{name}.gguf"))
    for text in TEXTS:
        st = tok.stages(text)
        check_invariants(tok, text, st)
        if text.strip():
            assert st.pre_tokens and st.encoding.ids


def test_gpt2_gguf_pre_tokens_are_byte_level() -> None:
    tok = load_tokenizer(require("llama-cpp", "ggml-vocab-gpt-2.gguf"))
    st = tok.stages("Hi there, é")
    assert [(p.text, p.start, p.end) for p in st.pre_tokens] == [
        ("Hi", 0, 2), ("Ġthere", 2, 8), (",", 8, 9), ("ĠÃ©", 9, 11)]
    assert st.encoding.tokens[-1].token_bytes in (b" \xc3\xa9", b"\xc3\xa9", b"\xa9")


def test_unknown_and_score_flags() -> None:
    wp = load_cached(require("minilm", "tokenizer.json"))
    enc = wp.encode("hello ☃")
    assert [t.unknown for t in enc] == [False, True]
    uni = load_cached(require("mon-tokenizer", "mon_tokenizer.json"))
    enc = uni.encode("hello")
    assert all(t.score is not None and t.score < 0 for t in enc)
