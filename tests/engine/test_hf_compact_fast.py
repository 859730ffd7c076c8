"""The byte-level document path (:mod:`explorer.engine.hf.compact_fast`) gives exactly the
general path's compact tokens: ids, spans, irregular tokens, unknown ids.

The general path is :meth:`TokenTable.compact` of ``encode``'s Tokens (every token built and
compared with its vocabulary entry). Texts are taken one by one so that every kind of first
and last token (an added token, a word, a general-path piece) meets the edge check.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from hf_support import load_cached, parity_texts, trained_files
from hypothesis import given, settings
from hypothesis import strategies as st
from references import require

from explorer.bundled import resource_path
from explorer.engine.compact import token_table
from explorer.engine.formats import load_tokenizer
from explorer.engine.hf.compact_fast import ByteLevelCompact
from explorer.engine.hf.wordpiece_compact import WordPieceCompact

BYTE_LEVEL = {
    "corpus_bpe_4k": lambda: resource_path("vocab", "corpus_bpe_4k.json"),
    "bytelevel_bpe": lambda: Path(trained_files()["bytelevel_bpe"]),
    "llama3-gguf": lambda: require("llama-cpp", "ggml-vocab-llama-bpe.gguf"),
    "qwen2-gguf": lambda: require("llama-cpp", "ggml-vocab-qwen2.gguf"),
    "gpt2-gguf": lambda: require("llama-cpp", "ggml-vocab-gpt-2.gguf"),
}
EDGE_TEXTS = ["", "a", " ", "  \n", "\n\n  ", "<|endoftext|>", "<|endoftext|>x",
              "x<|endoftext|>", " <|endoftext|> ", "<s>hello</s>", "\U0001f600", "é\u0301",
              "trailing spaces   ", "   leading", "\u00a0nbsp\u00a0", "a\r\nb\r\n",
              "<|endoftext|><|endoftext|>", "12345678 3.14159"]


def _texts() -> list[str]:
    return [*EDGE_TEXTS, *parity_texts(), "\n".join(parity_texts())]


def _general(tok, text):
    return token_table(tok).compact(tok.encode(text).tokens)


@pytest.mark.parametrize("name", list(BYTE_LEVEL))
def test_fast_path_equals_the_general_path(name):
    tok = load_cached(BYTE_LEVEL[name]())
    assert ByteLevelCompact.fits(tok)
    for text in _texts():
        fast = tok.encode_compact(text)
        assert fast == _general(tok, text), repr(text[:80])
        assert tok.encode_compact(text) == fast  # from the word memo
    assert tok._compact_fast is not None


@pytest.mark.parametrize("name", ["minilm", "mon"])
def test_other_pipelines_keep_the_general_path(name):
    """Not byte-level: the general path, or WordPiece's own (test_wordpiece_compact)."""
    path = (require("minilm", "tokenizer.json") if name == "minilm"
            else require("mon-tokenizer", "mon_tokenizer.json"))
    assert not ByteLevelCompact.fits(load_cached(path))
    assert WordPieceCompact.fits(load_cached(path)) == (name == "minilm")


def test_a_full_word_memo_starts_again_between_texts(monkeypatch):
    """Past ``WORDS_LIMIT`` laid-out pre-tokens the memo starts again (before a text's
    words are looked up: a text's rows are all in one memo), with the same tokens."""
    from explorer.engine.hf import compact_fast

    tok = load_tokenizer(resource_path("vocab", "corpus_bpe_4k.json"))
    monkeypatch.setattr(compact_fast, "WORDS_LIMIT", 7)
    texts = [" ".join(f"w{k}x{j}" for j in range(12)) for k in range(4)] + _texts()[:30]
    for text in texts:
        assert tok.encode_compact(text) == _general(tok, text), repr(text[:80])
    assert len(tok._compact_fast._rows.row_of) < 200


def _edited(tmp_path: Path, edit) -> object:
    spec = json.loads(resource_path("vocab", "corpus_bpe_4k.json").read_text("utf-8"))
    edit(spec)
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(spec), encoding="utf-8")
    return load_tokenizer(path)


def test_first_and_last_tokens_are_checked_as_such(tmp_path):
    # A WordPiece decoder before ByteLevel puts a space before every token but the first
    # (and none before a "##" piece): the first token is not its entry, the middle ones are.
    def first_apart(spec):
        spec["decoder"] = {"type": "Sequence", "decoders": [
            {"type": "WordPiece", "prefix": "##", "cleanup": False}, spec["decoder"]]}

    tok = _edited(tmp_path, first_apart)
    assert ByteLevelCompact.fits(tok)
    for text in [" a b ", " hello world ", " x", "x ", " ", "  ", *parity_texts()]:
        fast = tok.encode_compact(text)
        assert fast == _general(tok, text), repr(text)
    one = tok.encode_compact("hello world, hello world")
    assert 0 in one.irregular and len(one.irregular) == 1


def test_added_tokens_normalized_or_not_and_trimming_post_processors(tmp_path):
    def added(spec):
        spec["added_tokens"] += [
            {"id": 4000, "content": "<x>", "single_word": False, "lstrip": True,
             "rstrip": False, "normalized": True, "special": False},
            {"id": 4001, "content": "[Y]", "single_word": False, "lstrip": False,
             "rstrip": True, "normalized": False, "special": True}]
        spec["post_processor"] = {"type": "ByteLevel", "add_prefix_space": False,
                                  "trim_offsets": False, "use_regex": False}

    tok = _edited(tmp_path, added)
    assert ByteLevelCompact.fits(tok)
    for text in ["a <x> b [Y]  c", "<x>", "[Y]", " <x>[Y] ", *EDGE_TEXTS]:
        assert tok.encode_compact(text) == _general(tok, text), repr(text)

    def trimming(spec):
        spec["post_processor"] = {"type": "ByteLevel", "add_prefix_space": False,
                                  "trim_offsets": True, "use_regex": False}

    assert not ByteLevelCompact.fits(_edited(tmp_path, trimming))  # spans would move


@settings(max_examples=60, deadline=None)
@given(st.text(st.characters(codec="utf-8"), max_size=40))
def test_any_text(text):
    tok = load_cached(BYTE_LEVEL["llama3-gguf"]())
    assert tok.encode_compact(text) == _general(tok, text)


def test_threads_sharing_a_tokenizer_get_its_tokens(monkeypatch):
    """A tokenizer is shared between threads (the document, the panels, a pool): its word
    memo is added to under a lock and each text's rows are read from the memo it was laid
    out in, also while another thread starts the memo again."""
    from concurrent.futures import ThreadPoolExecutor

    from explorer.engine.hf import compact_fast

    tok = load_tokenizer(resource_path("vocab", "corpus_bpe_4k.json"))
    monkeypatch.setattr(compact_fast, "WORDS_LIMIT", 50)
    texts = [f"{text} {k} word{k} w{k}x" for k in range(8) for text in parity_texts()[:12]]
    want = [_general(tok, text) for text in texts]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # (threads switch as often as they can)
    try:
        with ThreadPoolExecutor(4) as pool:
            got = list(pool.map(tok.encode_compact, texts))
    finally:
        sys.setswitchinterval(interval)
    assert got == want
