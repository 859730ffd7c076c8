"""llama.cpp's Unigram pass word by word (``explorer.engine.unigram.llama_words``) against
the same pass over the whole text: ties, re-runs far from score 0, resumption, shares."""

from __future__ import annotations

import math
import pickle
import random
from functools import cache

import pytest
from references import require
from sp_support import multilingual_lines

from explorer.engine.formats import load_tokenizer
from explorer.engine.formats.gguf_ugm import LlamaUgmModel
from explorer.engine.sentencepiece.tokenizer import SentencePieceTokenizer
from explorer.engine.unigram.llama_words import LlamaWords

SP = "\u2581"


def tie_model() -> LlamaUgmModel:
    """Pieces whose float scores tie exactly in many ways (``a`` + ``a`` = ``aa``, ...),
    one USER_DEFINED and one UNUSED piece, and ``c`` covered by no piece (``<unk>``)."""
    pieces = ["<unk>", "a", "aa", "aaa", "b", "ab", "ba", f"{SP}a", f"{SP}", f"{SP}ab",
              "bb", "abba", "x"]
    scores = [0.0, -1.0, -2.0, -3.0, -1.5, -2.5, -2.5, -1.0, -0.5, -3.0, -3.0, -5.5, -7.0]
    types = [2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 4, 5]
    return LlamaUgmModel(pieces, scores, types, unk_id=0)


def whole(model: LlamaUgmModel, text: str, base: float = 0.0) -> list[tuple[int, int]]:
    """One pass over the whole text (what llama.cpp does)."""
    return model._llama.pass_over(text, base)[0]


def random_texts(seed: int, count: int) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(f"aab{SP}{SP}cx") for _ in range(rng.randint(1, 60)))
            for _ in range(count)]


def test_words_decide_as_one_pass_with_ties_everywhere() -> None:
    model = tie_model()
    texts = random_texts(1, 400)
    for text in texts:
        assert model.segments(text) == whole(model, text), text
    assert model.encode_ids_many(texts) == [[i for _, i in whole(model, t)] for t in texts]
    assert model._cache  # the words were cached, and cached words were reused above


def test_user_defined_pieces_score_zero_and_unused_pieces_match() -> None:
    model = tie_model()
    assert model.segments("abba") == [(4, 11)]  # USER_DEFINED: 0, not -5.5
    assert model.segments("x") == [(1, 12)]  # UNUSED matches with its score
    assert model.segments("c") == [(1, 0)]


def test_llama_cpp_rules_share_the_unigram_trie_with_unused_pieces_on_the_side() -> None:
    model = tie_model()
    assert model._llama.entries is model.trie.entries
    assert model._llama.overrides == {"x": (12, -7.0, False)}
    assert model.trie.entries["x"] is None  # (sentencepiece does not match it)
    plain = LlamaUgmModel(["<unk>", "a", "x", "x"], [0.0, -1.0, -2.0, -3.0], [2, 1, 1, 5],
                          unk_id=0)
    assert plain._llama.overrides == {"x": (3, -3.0, False)}  # the last id of a text
    assert plain.segments("xa") == [(1, 3), (1, 1)]
    assert LlamaUgmModel(["<unk>", "a"], [0.0, -1.0], [2, 1], unk_id=0)._llama.overrides == {}


@pytest.mark.parametrize("batch", [False, True])
@pytest.mark.parametrize("base", [-3.0, -1e6, -123456789.123, -3e15, -1e17])
def test_resumed_from_a_far_score_words_decide_as_one_pass_from_it(base: float,
                                                                   batch: bool) -> None:
    """Far from 0, double sums round (from -1e17 on, a one-letter piece's -1 vanishes):
    a word whose margin the rounding could beat is re-run from its exact score (its words
    solved one by one, or first in a numpy batch)."""
    model = tie_model()
    if batch:
        words = [w for t in random_texts(2, 200) for w in model._llama.words(t)]
        assert model._llama.solve_many(words)
    for text in random_texts(2, 200):
        resumed = model.encode_from(text, 0, base)
        assert resumed is not None
        expected = whole(model, text, base)
        assert list(zip(resumed.lengths.tolist(), resumed.ids.tolist(), strict=True)) == expected
        # each word's reported score is the one pass's path score at its start (no piece
        # crosses a word start: the pass over the text before it ends there with it)
        for start, score in zip(resumed.word_starts.tolist(), resumed.word_scores.tolist(),
                                strict=True):
            assert score == model._llama.pass_over(text[:start], base)[1]


def test_far_from_zero_rounding_decides_and_the_word_is_run_again() -> None:
    """From 0, ``▁a a`` (-2) beats ``▁ aa`` (-2.5). From -1e17 every sum rounds to the
    base, so all candidates tie and the first start wins: ``▁ aa``. The cached answer is
    wrong there: the word's limit sends it to a re-run from the exact score."""
    model = tie_model()
    word = f"{SP}aa"
    assert model.segments(word) == [(2, 7), (1, 1)]
    resumed = model.encode_from(word, 0, -1e17)
    assert resumed is not None
    got = list(zip(resumed.lengths.tolist(), resumed.ids.tolist(), strict=True))
    assert got == whole(model, word, -1e17) == [(1, 8), (2, 2)]
    near = model.encode_from(word, 0, -1e6)  # well within the limit: the cached answer
    assert near is not None
    assert near.ids.tolist() == [7, 1]


def batch_against_one_by_one(model: LlamaUgmModel, words: list[str]) -> int:
    """Solve ``words`` in a batch, then one by one: the same pieces, and a limit no
    larger (the batch's margin is the smallest gap anywhere, not on the path only)."""
    llama = model._llama
    llama.cache.clear()
    solved = llama.solve_many(words)
    batch = {w: llama.cache[w] for w in solved}
    llama.cache.clear()
    for word in solved:
        one = llama.solve(word)
        assert batch[word][1:] == one[1:], word
        assert batch[word][0] <= one[0] or batch[word][0] == one[0] == float("inf"), word
    return len(solved)


def test_a_batch_solves_words_as_one_by_one_with_safe_limits() -> None:
    model = tie_model()
    words = [w for t in random_texts(5, 400) for w in model._llama.words(t)]
    assert batch_against_one_by_one(model, words) > 100
    ties = [w for w in model._cache if model._cache[w][0] < 0]
    assert ties  # (words whose path holds a tie: only reused from 0)


def test_encode_from_reports_none_off_a_word_start() -> None:
    model = tie_model()
    assert model.encode_from(f"{SP}ab{SP}a", 1, -2.0) is None
    assert model.encode_from(f"{SP}ab{SP}a", 3, -2.0) is not None


def test_a_share_carries_solved_words_to_another_copy() -> None:
    solver, taker = tie_model(), tie_model()
    texts = random_texts(3, 100)
    share = pickle.loads(pickle.dumps(solver.share_rows(texts)))
    assert taker.take_rows(share) == len(solver._cache)
    assert taker._cache == solver._cache
    # one float object per limit, as in the copy that solved them (not one per word)
    assert all(taker._cache[w][0] is solver._cache[w][0] for w in solver._cache)
    assert taker.take_rows(object()) == 0
    for text in texts:
        assert taker.segments(text) == whole(taker, text)


@cache
def nomic() -> SentencePieceTokenizer:
    tok = load_tokenizer(require("llama-cpp", "ggml-vocab-nomic-bert-moe.gguf"))
    assert isinstance(tok, SentencePieceTokenizer)
    return tok


def test_nomic_words_decide_as_one_pass_on_multilingual_text() -> None:
    tok = nomic()
    model = tok.model
    assert isinstance(model, LlamaUgmModel)
    lines = multilingual_lines()
    normalized = [tok.normalizer.normalize(line).text for line in lines]
    normalized.append(" ".join(normalized))
    words = [w for text in normalized for w in model._llama.words(text)]
    assert batch_against_one_by_one(model, words) > 1000
    for text in normalized:
        assert model.segments(text) == whole(model, text)
        resumed = model.encode_from(text, None, 0.0)
        if resumed is not None:
            assert resumed.ids.tolist() == [i for _, i in whole(model, text)]


def test_llama_words_without_a_pattern_pass_over_the_whole_text() -> None:
    model = tie_model()
    llama = LlamaWords(model._llama.entries, None, unk_id=0, unk_score=model._llama.unk_score,
                       size=len(model.pieces), overrides=model._llama.overrides)
    assert llama.words("") == []
    for text in random_texts(4, 50):
        assert llama.segments(text) == whole(model, text)


def test_limits_are_rounded_down_to_shared_powers_of_two() -> None:
    from explorer.engine.unigram.llama_words import shared_limit

    assert shared_limit(3.0e10) == 2.0**34 <= 3.0e10
    assert shared_limit(3.0e10) is shared_limit(2.5e10)
    assert shared_limit(1.5) == shared_limit(1.0) == 1.0
    assert shared_limit(float("inf")) == float("inf")
    assert shared_limit(0.0) == shared_limit(-5.0) == shared_limit(float("nan")) == -1.0
    model = tie_model()
    model.segments(f"{SP}ab{SP}aa{SP}b")
    limits = [entry[0] for entry in model._cache.values()]
    assert all(x in (-1.0, float("inf")) or math.frexp(x)[0] == 0.5 for x in limits)


@pytest.mark.parametrize("span", [3, 64, 4096])
@pytest.mark.parametrize("base", [0.0, -1e16, -3e16])
def test_a_long_text_summed_in_blocks_decides_as_one_pass(monkeypatch, span: int,
                                                          base: float) -> None:
    """:meth:`LlamaWords.pass_arrays` sums a block of words' path scores at once and
    re-runs those past their limits: over thousands of tie-prone words, far from 0 (where
    re-runs come out different and the next block starts after them) and in blocks of
    every size, the pieces and each word's starting score are the one pass's."""
    from explorer.engine.unigram import llama_words

    monkeypatch.setattr(llama_words, "_SPECULATE_WORDS", span)
    monkeypatch.setattr(llama_words, "_SPECULATE_MIN", min(span, 2))
    model = tie_model()
    text = "".join(random_texts(11, 400))
    words = model._llama.words(text)
    assert len(words) > 2000
    ids, after, starts = model._llama.pass_arrays(words, base)
    pieces, end, _ = model._llama.pass_over(text, base)
    assert ids.tolist() == [i for _, i in pieces]
    assert after == end
    at = 0
    for word, start in zip(words[:300], starts[:300].tolist(), strict=True):
        assert start == model._llama.pass_over(text[:at], base)[1] if at else start == base
        at += len(word)
