"""Malformed tokenizer.json content never escapes as a traceback: loading (and encoding with
what loads) either works or raises a TokenizerError with a message."""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from explorer.engine.errors import TokenizerError
from explorer.engine.formats.hf_json import from_dict

BASE = {
    "version": "1.0",
    "added_tokens": [{"id": 5, "content": "<s>", "single_word": False, "lstrip": False,
                      "rstrip": False, "normalized": False, "special": True}],
    "normalizer": {"type": "Sequence", "normalizers": [
        {"type": "NFKC"}, {"type": "Replace", "pattern": {"String": "x"}, "content": "y"},
        {"type": "Strip", "strip_left": True, "strip_right": False},
        {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
         "strip_accents": None, "lowercase": True}]},
    "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
        {"type": "Split", "pattern": {"Regex": "\\s+"}, "behavior": "Isolated",
         "invert": False},
        {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": True},
        {"type": "Digits", "individual_digits": True},
        {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
         "use_regex": True}]},
    "decoder": {"type": "Sequence", "decoders": [
        {"type": "Replace", "pattern": {"String": "▁"}, "content": " "},
        {"type": "ByteFallback"}, {"type": "Fuse"},
        {"type": "Strip", "content": " ", "start": 1, "stop": 0}]},
    "model": {"type": "BPE", "unk_token": "<unk>", "continuing_subword_prefix": None,
              "end_of_word_suffix": None, "fuse_unk": True, "byte_fallback": True,
              "vocab": {"<unk>": 0, "a": 1, "b": 2, "ab": 3, "<0x41>": 4, "<s>": 5},
              "merges": [["a", "b"]]},
}

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 300) | st.floats(allow_nan=False)
    | st.text(max_size=4),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner,
                                                                 max_size=3),
    max_leaves=5,
)


def _paths(obj: object, prefix: tuple = ()) -> list[tuple]:
    out = [prefix]
    if isinstance(obj, dict):
        for k, v in obj.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            out += _paths(v, (*prefix, i))
    return out


UNIGRAM = {**BASE, "model": {"type": "Unigram", "unk_id": 0, "byte_fallback": True,
                             "vocab": [["<unk>", 0.0], ["a", -1.0], ["b", -2.5], ["ab", -1.5],
                                       ["<0x41>", -9.0], ["<s>", 0.0]]}}
WORDPIECE = {**BASE, "pre_tokenizer": {"type": "BertPreTokenizer"},
             "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": True},
             "model": {"type": "WordPiece", "unk_token": "[UNK]",
                       "continuing_subword_prefix": "##", "max_input_chars_per_word": 100,
                       "vocab": {"[UNK]": 0, "a": 1, "##b": 2, "ab": 3, "<s>": 5}}}
DOCS = {"bpe": BASE, "unigram": UNIGRAM, "wordpiece": WORDPIECE}
PATHS = [(name, p) for name, doc in DOCS.items() for p in _paths(doc) if p]


def _mutate(where: tuple, value: object, delete: bool) -> dict:
    name, path = where
    doc = copy.deepcopy(DOCS[name])
    node = doc
    for k in path[:-1]:
        node = node[k]
    if delete and isinstance(node, dict):
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return doc


@settings(max_examples=int(os.environ.get("EXPLORER_HYPOTHESIS_EXAMPLES", "40")) * 8,
          deadline=None)
@given(path=st.sampled_from(PATHS), value=JSON_VALUES, delete=st.booleans())
def test_mutated_files_fail_cleanly(path: tuple, value: object, delete: bool) -> None:
    doc = _mutate(path, value, delete)
    try:
        tok = from_dict(doc)
        for text in ("ab AB 12 x<s>", "", "é東"):
            enc = tok.encode(text)
            tok.decode(enc.ids)
            tok.stages(text)
    except TokenizerError as e:
        assert str(e) and "\n" not in str(e)


@pytest.mark.parametrize("name", list(DOCS))
def test_base_documents_are_valid(tmp_path: Path, name: str) -> None:
    from tokenizers import Tokenizer as HFTokenizer

    p = tmp_path / "t.json"
    p.write_text(json.dumps(DOCS[name]), encoding="utf-8")
    ref = HFTokenizer.from_file(str(p))
    tok = from_dict(copy.deepcopy(DOCS[name]))
    for text in ("ab AB 12 x<s>", "ba  b", "é東"):
        assert tok.encode(text).ids == ref.encode(text, add_special_tokens=False).ids
