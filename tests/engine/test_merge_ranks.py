"""An HF BPE model's merge ranks in a compact table (explorer.engine.hf.merge_ranks)."""

from __future__ import annotations

import pickle

import numpy as np

from explorer.engine.hf.merge_ranks import MergeRanks


def test_ranks_as_a_dict_of_the_merges_would_hold_them() -> None:
    """Merges with both parts in the vocabulary are kept, a later duplicate wins, strings
    split at the first space after the first character (a merge of a space piece)."""
    vocab = {"a": 0, "b": 1, "ab": 2, " ": 3, " a": 4, "c": 5}
    merges = ["a b", "  a", "a c", "x b", "a b", "nospace"]
    ranks = MergeRanks.from_merges(vocab, merges, stride=6)
    expected = {0 * 6 + 1: 4, 3 * 6 + 0: 1, 0 * 6 + 5: 2}
    assert len(ranks) == len(expected)
    for key in range(36):
        assert ranks.get(key) == expected.get(key)
        assert (key in ranks) == (key in expected)
    keys, values = ranks.arrays()
    assert list(zip(keys.tolist(), values.tolist(), strict=True)) == sorted(
        expected.items(), key=lambda kv: kv[1])
    pairs = MergeRanks.from_merges(vocab, [("a", "b"), (" ", "a")], stride=6)
    assert pairs.get(1) == 0 and pairs.get(18) == 1 and pairs.get(2) is None


def test_a_big_table_pickles_and_answers_as_a_dict() -> None:
    rng = np.random.default_rng(3)
    keys = rng.choice(262_144 ** 2, 50_000, replace=False).astype(np.int64)
    ranks = rng.permutation(50_000)
    table = pickle.loads(pickle.dumps(MergeRanks(keys, ranks)))
    expected = dict(zip(keys.tolist(), ranks.tolist(), strict=True))
    for key in [*keys[:2000].tolist(), *rng.integers(0, 262_144 ** 2, 2000).tolist()]:
        assert table.get(key) == expected.get(key)


def test_a_vocabulary_id_past_the_table_s_keys_is_a_clear_error() -> None:
    """Ids are HF's u32; one past 2**31 - 1 (or negative) would not key the int64 table,
    and is refused by name instead of failing deep in the load (OverflowError)."""
    import pytest

    from explorer.engine.errors import VocabFormatError
    from explorer.engine.hf.models import BPEModel

    for bad in (2**31, 10**30, -1):
        with pytest.raises(VocabFormatError, match=f"id {bad} is out of range"):
            BPEModel({"a": 0, "b": bad, "ab": 2}, ["a b"])
    assert BPEModel({"a": 0, "b": 2**31 - 1, "ab": 2}, ["a b"]).rank("a", "b") == 0
