"""Property test: on random multilingual text our tokenizer.json pipelines give HF's ids,
tokens and offsets, and the stages stay consistent."""

from __future__ import annotations

import os

import pytest
from hf_support import hf_reference, load_cached, mismatches, trained_files
from hypothesis import given, settings
from hypothesis import strategies as st
from references import require

EXAMPLES = int(os.environ.get("EXPLORER_HYPOTHESIS_EXAMPLES", "40"))

# Characters that stress normalizers and splitters: ASCII, accents and combining marks,
# CJK, Myanmar, emoji with ZWJ, whitespace variants, digits of other scripts, ligatures.
ALPHABET = st.sampled_from(list(
    "aAzZ09 '!.,-_\t\n\r  　\u00a0\u200b\u00adéÉñçøß\u0301\u0308\u0327ﬁＡ①½"
    "東京語ကော်င်းнетاعيदि😀👍🏽\u200d🦙٣߂"
    "ΣςΑ\u1100\u1161\u11a8각\u0b47\u0b3e\u0345İǅẞﬀ℃㍿\u0323\u103a\u0650\u093f"
))
TEXT = st.text(alphabet=ALPHABET, max_size=40)


@pytest.mark.parametrize("name", ["bytelevel_bpe", "llama_style_bpe", "prefix_suffix_bpe",
                                  "unigram", "wordpiece", "wordlevel"])
@settings(max_examples=EXAMPLES, deadline=None)
@given(text=TEXT)
def test_random_text_matches_hf(name: str, text: str) -> None:
    path = trained_files()[name]
    assert mismatches(load_cached(path), hf_reference_cached(path), [text]) == []


@pytest.mark.parametrize(("key", "file"), [("mon-tokenizer", "mon_tokenizer.json"),
                                           ("minilm", "tokenizer.json")])
@settings(max_examples=EXAMPLES, deadline=None)
@given(text=TEXT)
def test_random_text_matches_hf_real_files(key: str, file: str, text: str) -> None:
    path = require(key, file)
    assert mismatches(load_cached(path), hf_reference_cached(path), [text]) == []


_REFS: dict = {}


def hf_reference_cached(path):
    if path not in _REFS:
        _REFS[path] = hf_reference(path)
    return _REFS[path]
