"""The BERT WordPiece pipelines' fast document path (:mod:`explorer.engine.hf.
wordpiece_compact`) gives the general path's tokens: ids, spans, whole tokens (irregular
ones, the first and the last), unknown ids, on English, code and text with accents, CJK,
Hangul, full-width letters, control characters, added tokens and words past the WordPiece
length limit, for a ``tokenizer.json`` (HF ``BertNormalizer`` + ``BertPreTokenizer``) and a
GGUF ``bert`` vocabulary (llama.cpp's WPM preprocessing)."""

from __future__ import annotations

import pytest
from references import require

from explorer.bundled import resource_path
from explorer.engine.compact import token_table, tokens_of
from explorer.engine.formats import load_tokenizer
from explorer.engine.hf import wordpiece_compact
from explorer.engine.hf.wordpiece_compact import WordPieceCompact

FILES = [("minilm", "tokenizer.json"), ("llama-cpp", "ggml-vocab-bert-bge.gguf")]
ODD = ("Café NAÏVE über 日本語のテキスト x\x01y\x7fz Ｈｅｌｌｏ 한국어 [CLS] [SEP] "
       "e\u0301 \u00a0nbsp\u2003em \ufeffbom tab\there\r\nCRLF " + "a" * 120 + " "
       + "don't, (x)=[y]{z}; #1 $2.50 ~/path_to/file.py @user ^_^ |pipe| \\back `tick`\n")


def _texts() -> list[str]:
    english = resource_path("corpus", "botchan.txt").read_text(encoding="utf-8")[:60_000]
    udhr = resource_path("corpus", "udhr_sample.txt").read_text(encoding="utf-8")[:30_000]
    code = resource_path("samples", "code.txt").read_text(encoding="utf-8")
    return [english, english[:20_000] + ODD * 3 + english[20_000:40_000], udhr, code, ODD,
            "Hello", "  ", "", "ü", "[CLS]", "word" + "x" * 200,
            "plain ASCII x\x01y and\x0bvt\x0cff\x00nul end" + " filler" * 60]


@pytest.mark.parametrize(("pkg", "name"), FILES, ids=[n for _, n in FILES])
def test_fast_path_equals_the_general_path_and_encode(pkg, name, monkeypatch):
    tok = load_tokenizer(require(pkg, name))
    table = token_table(tok)
    texts = _texts()
    fast = [tok.encode_compact(text) for text in texts]
    assert isinstance(tok._compact_fast, WordPieceCompact)
    monkeypatch.setattr(WordPieceCompact, "fits", staticmethod(lambda _tok: False))
    tok._compact_fast = None
    for text, got in zip(texts, fast, strict=True):
        want = tok.encode_compact(text)
        assert got.ids == want.ids and got.starts == want.starts and got.ends == want.ends
        assert tokens_of(got, table, text) == tokens_of(want, table, text)
        assert tokens_of(got, table, text) == tok.encode(text).tokens
        assert got.unknown_ids == want.unknown_ids
    assert tok._compact_fast is None  # (the general path ran)


def test_other_characters_are_taken_in_few_general_stretches():
    """The general path takes everything but runs of clean ASCII at least ``CLEAN_GAP``
    long, cut back to whitespace where a word crosses their ends (a text in another script
    is not a general-path call per word)."""
    gap = wordpiece_compact.CLEAN_GAP
    part = "plain words here café and 日本 x  " + "y " * gap + "naïve end"
    got = wordpiece_compact._other_stretches(part)
    assert [part[a:b] for a, b in got] == ["plain words here café and 日本", "naïve end"]
    part = "é" + "word " * gap + "ü"
    assert [part[a:b] for a, b in wordpiece_compact._other_stretches(part)] == [
        "éword", "ü"]
    assert wordpiece_compact._other_stretches("clean " * gap) == []
    assert wordpiece_compact._other_stretches("short, clean") == []
    part = "日本 " + "ab" * gap + " x"  # (a long run from a space: the rest is clean)
    assert [part[a:b] for a, b in wordpiece_compact._other_stretches(part)] == ["日本"]
    part = "日本" + "ab" * gap + " x"  # (a word crosses its start: too short once cut)
    assert [part[a:b] for a, b in wordpiece_compact._other_stretches(part)] == [part]
