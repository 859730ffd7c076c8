"""HF models keep one string per piece and merges keyed by their parts' ids
(explorer.engine.hf.models, explorer.engine.hf.unigram_model): what they cache for a word
shares the vocabulary's strings, so a big document's caches do not hold a copy of every
piece per word (a 262k-piece GGUF model's window went over 800 MB on 10 MB of text)."""

from __future__ import annotations

import pytest

from explorer.engine.errors import VocabFormatError
from explorer.engine.hf.models import BPEModel, WordPieceModel
from explorer.engine.hf.serialize import bpe_merges
from explorer.engine.hf.unigram_model import HFUnigramModel


def _bpe(merges: list, strict: bool = True) -> BPEModel:
    pieces = ["l", "o", "w", "e", "r", "lo", "low", "er", "lower", "▁", "▁low"]
    return BPEModel({p: i for i, p in enumerate(pieces)}, merges, strict=strict)


@pytest.mark.parametrize("merges", [["l o", "lo w", "e r", "low er"],
                                    [("l", "o"), ("lo", "w"), ("e", "r"), ("low", "er")]])
def test_bpe_tokens_hold_the_vocabulary_strings(merges):
    model = _bpe(merges)
    tokens = model.tokenize("lowerlow")
    assert [(t[0], t[1], t[2], t[3]) for t in tokens] == [(8, "lower", 0, 5), (6, "low", 5, 8)]
    for tid, piece, _, _ in tokens:
        assert piece is model.id_to_piece[tid]  # (not a string made for this word)
    for left, right in model._pair_memo:
        assert left is model.id_to_piece[model.vocab[left]]
        assert right is model.id_to_piece[model.vocab[right]]


def test_merges_are_keyed_by_ids_and_come_back_in_rank_order():
    model = _bpe(["l o", "lo w", "e r", "low er", "e r"])  # (a later duplicate wins)
    keys, ranks = model.ranks.arrays()  # (one entry a pair of ids: the later "e r" won)
    assert len(model.ranks) == 4 and ranks.tolist() == [0, 1, 3, 4]
    assert keys.tolist() == [model.vocab[a] * model.stride + model.vocab[b]
                             for a, b in (("l", "o"), ("lo", "w"), ("low", "er"), ("e", "r"))]
    assert model.merge_pairs() == [("l", "o", 0), ("lo", "w", 1), ("low", "er", 3),
                                   ("e", "r", 4)]
    assert bpe_merges(model) == [["l", "o"], ["lo", "w"], ["low", "er"], ["e", "r"]]
    assert model.rank("lo", "w") == 1 and model.rank("w", "lo") is None


def test_a_merge_string_splits_after_its_first_character():
    """As llama.cpp splits GGUF merges: a piece may start with a space."""
    pieces = [" ", "a", " a", "b", " ab"]
    model = BPEModel({p: i for i, p in enumerate(pieces)}, ["  a", " a b"])
    assert model.merge_pairs() == [(" ", "a", 0), (" a", "b", 1)]
    assert [t[1] for t in model.tokenize(" ab")] == [" ab"]


def test_a_merge_without_a_space():
    with pytest.raises(VocabFormatError, match="no space"):
        _bpe(["lo"])  # (strict: as HF refuses it)
    model = _bpe(["lo", "l o", "x y"], strict=False)  # (GGUF: such merges never apply)
    assert model.merge_pairs() == [("l", "o", 1)]
    assert [t[1] for t in model.tokenize("lo")] == ["lo"]


def test_wordpiece_and_unigram_tokens_hold_the_vocabulary_strings():
    wordpiece = WordPieceModel({"[UNK]": 0, "un": 1, "##aff": 2, "##able": 3}, unk_token="[UNK]")
    tokens = wordpiece.tokenize("unaffable")
    assert [t[1] for t in tokens] == ["un", "##aff", "##able"]
    assert all(piece is wordpiece.id_to_piece[tid] for tid, piece, _, _ in tokens)
    unigram = HFUnigramModel([("<unk>", 0.0), ("▁un", -1.0), ("aff", -2.0), ("able", -2.0),
                              ("a", -5.0)], unk_id=0)
    tokens = unigram.tokenize("▁unaffable")
    assert [t[1] for t in tokens] == ["▁un", "aff", "able"]
    assert all(piece is unigram.pieces[tid][0] for tid, piece, _, _ in tokens)
