"""llama.cpp (llama-cpp-python, through the parity view's implementation) against our engine on
every ``ggml-vocab-*.gguf`` llama.cpp ships, on its test vectors and multilingual text, plus the
three llama.cpp rules our GGUF loader follows where they differ from HF/sentencepiece:
"control-looking" tokens made CONTROL (aquila), llama.cpp's WPM preprocessing (bert-bge) and
its Unigram tie-break (nomic-bert-moe).

Without llama-cpp-python the llama.cpp comparisons fail under ``CI=true`` and skip otherwise.
"""

from __future__ import annotations

import unicodedata
from functools import cache
from pathlib import Path

import pytest
from references import require, require_module
from test_gguf_vocab import WITH_VECTORS, WITHOUT_VECTORS, read_vectors

from explorer.engine.formats import load_tokenizer
from explorer.engine.formats.gguf_ugm import LlamaUgmModel
from explorer.engine.formats.gguf_wpm import LlamaWpmPre
from explorer.engine.hf.normalized import Aligned
from explorer.engine.parity.adapters import LlamaCppImplementation
from explorer.engine.tokenizer import Tokenizer

ROOT = Path(__file__).resolve().parents[2]
ALL = sorted(WITH_VECTORS + WITHOUT_VECTORS)


@cache
def multilingual() -> tuple[str, ...]:
    text = (ROOT / "tests" / "data" / "multilingual.txt").read_text(encoding="utf-8")
    return tuple(line for line in text.split("\n") if line)


def vocab(name: str) -> Path:
    return require("llama-cpp", f"ggml-vocab-{name}.gguf")


@cache
def _ours(path: Path) -> Tokenizer:
    return load_tokenizer(path)


@cache
def _llama(path: Path) -> LlamaCppImplementation:
    return LlamaCppImplementation(require_module("llama_cpp", "llama-cpp-python"), path)


def ours(name: str) -> Tokenizer:
    """Our tokenizer for ``ggml-vocab-NAME.gguf`` (loaded once)."""
    return _ours(vocab(name))


def pair(name: str) -> tuple[Path, Tokenizer, LlamaCppImplementation]:
    """Our tokenizer and llama.cpp's for ``ggml-vocab-NAME.gguf`` (each loaded once)."""
    require_module("llama_cpp", "llama-cpp-python")
    path = vocab(name)
    return path, _ours(path), _llama(path)


@pytest.mark.parametrize("name", ALL)
def test_llama_cpp_agrees_with_us_on_vectors_and_multilingual_text(name: str) -> None:
    path, ours, llama = pair(name)
    texts = [t for t, _ in read_vectors(path)] if name in WITH_VECTORS else []
    texts += multilingual()
    assert len(texts) >= 30
    differing = [t for t in texts if ours.encode(t).ids != llama.encode(t).ids]
    assert differing == []


def test_llama_cpp_spans_and_pieces_match_ours() -> None:
    """Not only ids: each token's text span, on a multilingual line with emoji."""
    _, ours, llama = pair("llama-bpe")
    text = next(t for t in multilingual() if any(ord(c) > 0xFFFF for c in t))
    a, b = ours.encode(text), llama.encode(text)
    assert a.ids == b.ids
    assert [(t.start, t.end) for t in a.tokens] == [(t.start, t.end) for t in b.tokens]


def _plain(line: str) -> bool:
    """Latin, Greek and Cyrillic letters, digits and punctuation only: where llama.cpp's
    normalized pieces are placed back on the text exactly (CJK, combining marks, emoji and
    control characters are not, yet)."""
    return all(ord(c) < 0x0530 and unicodedata.category(c)[0] in "LNPZ" for c in line)


@pytest.mark.parametrize("name", ["llama-spm", "bert-bge", "nomic-bert-moe"])
def test_llama_cpp_spans_of_normalized_pieces(name: str) -> None:
    """SentencePiece (``▁``, phantom space), WordPiece (lowercased, accents stripped) and
    Unigram (charsmap) pieces do not spell the text: their spans are found by folding both
    sides, and equal ours on plain multilingual lines."""
    _, ours_tok, llama = pair(name)
    lines = [t for t in multilingual() if _plain(t)]
    assert len(lines) >= 3
    differing = [t for t in lines if [(x.start, x.end) for x in ours_tok.encode(t).tokens]
                 != [(x.start, x.end) for x in llama.encode(t).tokens]]
    assert differing == []


def test_aquila_endoftext_in_text_is_special_as_in_llama_cpp() -> None:
    """aquila's ``<|endoftext|>`` is NORMAL in the file; llama.cpp makes it CONTROL by its
    text (an end-of-generation text), so it is one token in text."""
    tok = ours("aquila")
    ids = tok.encode("a<|endoftext|>b").ids
    assert tok.token_to_id("<|endoftext|>") in ids
    _, _, llama = pair("aquila")
    assert llama.encode("a<|endoftext|>b").ids == ids


def test_llama_wpm_preprocessing_rules() -> None:
    """llama.cpp's WPM: form feed separates words (HF drops it), "NFD" keeps the first code
    point (Hangul: the leading jamo), spacing marks (Devanagari vowel signs) are dropped."""
    def words(text: str) -> list[str]:
        return [p.text for p in LlamaWpmPre().split([Aligned.from_original(text)])]

    assert words("form\x0cfeed") == ["form", "feed"]
    assert words("한국") == ["\u1112\u1100"]
    assert words("हिंदी") == ["हद"]
    assert words("Café, 中文!") == ["cafe", ",", "中", "文", "!"]
    assert words("a\u200bb\x00c") == ["abc"]
    pieces = LlamaWpmPre().split([Aligned.from_original("x Ab")])
    assert [(p.starts, p.ends) for p in pieces] == [([0], [1]), ([2, 3], [3, 4])]


def test_bert_bge_form_feed_and_korean_as_llama_cpp() -> None:
    tok = ours("bert-bge")
    texts = ["form\x0cfeed", "안녕하세요 세계", "नमस्ते दुनिया"]
    _, _, llama = pair("bert-bge")
    assert [tok.encode(t).ids for t in texts] == [llama.encode(t).ids for t in texts]


def test_llama_ugm_breaks_exact_ties_by_the_first_best_candidate() -> None:
    """``aaa`` with ``a`` = -1 and ``aa`` = -2: three paths score -3 exactly; llama.cpp keeps,
    at each end, the first candidate reaching the best score (longest piece first)."""
    model = LlamaUgmModel(["<unk>", "a", "aa"], [0.0, -1.0, -2.0], [2, 1, 1], unk_id=0)
    assert model.segments("aaa") == [(1, 1), (2, 2)]
    assert model.encode_ids_many(["aaa", "aa", ""]) == [[1, 2], [2], []]
    assert model.encode_many(["aaa"]).segments(0) == [(1, 1), (2, 2)]
    assert model.segments("ab") == [(1, 1), (1, 0)]


def test_nomic_repeated_letters_as_llama_cpp() -> None:
    """The multilingual line where sentencepiece's float32 sums and llama.cpp's double sums
    pick different ones of exactly tied segmentations."""
    tok = ours("nomic-bert-moe")
    text = next(t for t in multilingual() if t.startswith("Repeated: aaaa"))
    pieces = tok.encode(text).pieces
    assert pieces[4:8] == ["▁a", "a", "a", "aaaaa"]
    _, _, llama = pair("nomic-bert-moe")
    assert llama.encode(text).ids == tok.encode(text).ids
