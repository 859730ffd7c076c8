"""Expected ids from llama.cpp's vocab tests (Hugging Face reference outputs).

gpt-2 and qwen2 GGUF vocabularies hold the same ranks as r50k_base.tiktoken and qwen.tiktoken
(checked here), so our ``.tiktoken`` tokenizers must reproduce the ``.out`` ids. Llama 3
(``llama-bpe``) has no ``.tiktoken`` file among the references, so its ranks are taken from
the GGUF (id = rank) with the Llama 3 pattern: that checks ``ignore_merges`` (whole pre-token
lookup) and the pattern against HF.
"""

from __future__ import annotations

import pytest
from tiktoken_support import gguf_ranks, llama_cpp_cases, ours

from explorer.engine.bpe import ByteLevelBPETokenizer
from explorer.engine.pretokenizers import patterns


@pytest.mark.parametrize(("vocab", "name"), [("gpt-2", "r50k"), ("qwen2", "qwen")])
def test_gguf_ranks_equal_tiktoken_file(vocab: str, name: str):
    ranks, _ = gguf_ranks(vocab)
    assert ranks == ours(name).vocab.bytes_to_id


@pytest.mark.parametrize(("vocab", "name"), [("gpt-2", "r50k"), ("qwen2", "qwen")])
def test_tiktoken_file_reproduces_llama_cpp_out(vocab: str, name: str):
    tok = ours(name)
    cases = llama_cpp_cases(vocab)
    assert len(cases) == 46
    for text, expected in cases:
        assert tok.encode(text).ids == expected, text
        assert tok.encode_ids(text) == expected, text


def test_llama3_ranks_with_llama3_pattern_reproduce_llama_cpp_out():
    ranks, specials = gguf_ranks("llama-bpe")
    tok = ByteLevelBPETokenizer(ranks, patterns.LLAMA3, specials, name="llama-bpe")
    for text, expected in llama_cpp_cases("llama-bpe"):
        assert tok.encode(text).ids == expected, text
        assert tok.decode(expected) == text
