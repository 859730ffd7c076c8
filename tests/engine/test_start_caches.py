"""What a first encode builds once per vocabulary is kept in the vocabulary cache: read back,
it is the same as built (the lock-step pair table of a ranks BPE, a Unigram model's trie
arrays, the nmt_nfkc lookup tables), and an entry that is not what it should be is built
again instead of breaking the encode."""

from __future__ import annotations

import marshal
from pathlib import Path

import numpy as np
import pytest
from sp_support import multilingual_lines, reference_model

from explorer.engine.formats import load_tokenizer, vocab_cache


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    d = tmp_path / "cache"
    monkeypatch.setenv("EXPLORER_CACHE_DIR", str(d))
    monkeypatch.delenv("EXPLORER_NO_VOCAB_CACHE", raising=False)
    return d


def spoil(entries: set[Path], value: object) -> None:
    """Overwrite cache ``entries`` with a valid marshal of ``value`` (the wrong shape)."""
    assert entries
    for entry in entries:
        entry.write_bytes(vocab_cache._MAGIC + marshal.dumps(value))


def test_unigram_trie_arrays_from_the_cache_are_the_built_ones(cache_dir: Path) -> None:
    path = reference_model("sentencepiece", "kyoto_ja_unigram_8000.model")
    text = "\n".join(multilingual_lines()[:200])
    fresh = load_tokenizer(path)
    before = set(cache_dir.glob("*.marshal"))
    fresh_batch = fresh.model._words.batch_viterbi()  # builds, and stores
    stored = set(cache_dir.glob("*.marshal")) - before
    assert len(stored) == 1
    again = load_tokenizer(path)
    cached_batch = again.model._words.batch_viterbi()  # reads
    for name in ("char_index", "piece", "score", "has_child", "root_child"):
        assert np.array_equal(getattr(cached_batch, name), getattr(fresh_batch, name)), name
    assert (cached_batch.nchars, cached_batch.max_len) == (fresh_batch.nchars,
                                                            fresh_batch.max_len)
    # the (node, character) -> child table is read as its slots, not placed again
    assert np.array_equal(cached_batch._table._keys, fresh_batch._table._keys)
    assert np.array_equal(cached_batch._table._values, fresh_batch._table._values)
    assert not cached_batch._table._keys.flags.writeable  # (a view of the entry's bytes)
    expected = fresh.encode(text)
    assert again.encode(text) == expected
    spoil(stored, (b"", 1, b"\0", b"\0", b"", b""))
    assert load_tokenizer(path).encode(text) == expected
    # an entry whose child table is another one (of the wrong size) is built again
    state = marshal.loads((next(iter(stored)).read_bytes())[len(vocab_cache._MAGIC):])
    from explorer.engine.int_table import IntTable

    other = IntTable(np.arange(5, dtype=np.int64), np.arange(5, dtype=np.int32)).state()
    spoil(stored, (*state[:6], other))
    rebuilt = load_tokenizer(path)
    assert rebuilt.encode(text) == expected
    assert len(rebuilt.model._words.batch_viterbi()._table) == len(fresh_batch._table)


def test_nfkc_lookup_tables_from_the_cache_are_the_built_ones(cache_dir: Path) -> None:
    path = reference_model("sentencepiece", "botchan_en_unigram_1000.model")
    normalizer = load_tokenizer(path).normalizer
    assert normalizer.charsmap is not None and normalizer.charsmap.digest
    built = normalizer._build_lookup_tables()
    before = set(cache_dir.glob("*.marshal"))
    mapping, roles = normalizer._lookup_tables()  # (built, then stored)
    stored = set(cache_dir.glob("*.marshal")) - before
    again = load_tokenizer(path).normalizer._lookup_tables()  # (read)
    assert mapping.tobytes() == again[0].tobytes() == built[0]
    assert roles.tobytes() == again[1].tobytes() == built[1]
    spoil(stored, (b"ab", b"c"))
    spoilt = load_tokenizer(path).normalizer._lookup_tables()
    assert (spoilt[0].tobytes(), spoilt[1].tobytes()) == built


def test_bpe_pair_table_from_the_cache_is_the_built_one(cache_dir: Path) -> None:
    from explorer.bundled import resource_path
    from explorer.engine.bpe.lockstep import PairRanks

    ranks = load_tokenizer(resource_path("vocab", "cl100k_base.tiktoken")).model.ranks
    before = set(cache_dir.glob("*.marshal"))
    built = PairRanks(ranks)  # (stores)
    stored = set(cache_dir.glob("*.marshal")) - before
    read = PairRanks(ranks)
    keys = built.table.keys()
    probe = np.concatenate((keys, keys + 1))
    assert np.array_equal(read.table.get(probe), built.table.get(probe))
    assert np.array_equal(read.first, built.first)
    spoil(stored, (4, 1, 0, b"12345678", b"1234"))
    assert np.array_equal(PairRanks(ranks).table.get(probe), built.table.get(probe))


def test_charsmap_rules_are_read_on_first_use(cache_dir: Path) -> None:
    """A load with the charsmap's entries cached reads its key parts and one-character
    rules only; the 225k rules are read when a rule is looked up, and are the same."""
    path = reference_model("sentencepiece", "botchan_en_unigram_1000.model")
    english = "Plain English text… twice, ﬅ and ´ too. " * 400  # (one-character rules
    parsed = load_tokenizer(path)
    parsed.encode(english)  # (parsed, tables built: every entry stored)
    first = parsed.normalizer.charsmap
    assert first is not None
    rules = dict(first.rules)
    again = load_tokenizer(path)
    charsmap = again.normalizer.charsmap
    assert charsmap is not None and "_rules" not in charsmap.__dict__
    assert again.encode(english).ids == parsed.encode(english).ids  # (the array path)
    assert "_rules" not in charsmap.__dict__  # that change the length: no longer key here)
    assert charsmap.single_rules() == {k: v for k, v in rules.items() if len(k) == 1}
    assert charsmap.key_parts() == first.key_parts()
    assert again.encode("ｶﾞ ﬁ ① e\u0301").ids == load_tokenizer(path).encode("ｶﾞ ﬁ ① e\u0301").ids
    assert charsmap.rules == rules
    spoil(set(cache_dir.glob("*.marshal")), (b"ab", b"c"))  # (every entry the wrong shape)
    spoilt = load_tokenizer(path)
    assert spoilt.normalizer.charsmap.rules == rules
    assert spoilt.encode("ｶﾞ ﬁ ① e\u0301").ids == again.encode("ｶﾞ ﬁ ① e\u0301").ids


def test_a_big_models_columns_from_the_cache_are_the_parsed_ones(
    cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A model with many pieces keeps its validated pieces, scores and types in the cache:
    a second load reads them instead of the message (and does not validate again), and is
    the same tokenizer; an entry of another shape is parsed again."""
    import hashlib

    from explorer.engine.formats import sentencepiece_model

    monkeypatch.setattr(sentencepiece_model, "_CACHE_MIN_PIECES", 1000)  # (an 8k-piece model)
    reads: list[int] = []
    read_columns = sentencepiece_model.piece_columns
    monkeypatch.setattr(sentencepiece_model, "piece_columns",
                        lambda proto: reads.append(1) or read_columns(proto))
    path = reference_model("sentencepiece", "kyoto_ja_unigram_8000.model")
    entry = vocab_cache._key_entry(hashlib.sha256(path.read_bytes()).digest(),
                                   "sentencepiece-columns-1")
    text = "\n".join(multilingual_lines()[:200])
    parsed = load_tokenizer(path)
    assert len(reads) == 1 and entry.exists()
    again = load_tokenizer(path)
    assert len(reads) == 1  # (read from the cache)
    for name in ("pieces", "scores", "types"):
        assert getattr(again.model, name) == getattr(parsed.model, name), name
    expected = parsed.encode(text)
    assert again.encode(text) == expected
    spoil({entry}, (["a"], [0.0], [1]))
    assert load_tokenizer(path).encode(text) == expected
    assert len(reads) == 2


def test_a_big_model_that_does_not_validate_is_not_cached(
    cache_dir: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from explorer.engine.errors import VocabFormatError
    from explorer.engine.formats import sentencepiece_model
    from explorer.engine.formats.sentencepiece_schema import ModelProto

    monkeypatch.setattr(sentencepiece_model, "_CACHE_MIN_PIECES", 1000)
    proto = ModelProto.FromString(
        reference_model("sentencepiece", "kyoto_ja_unigram_8000.model").read_bytes())
    proto.pieces[5].piece = proto.pieces[6].piece
    bad = tmp_path / "twice.model"
    bad.write_bytes(proto.SerializeToString())
    for _ in range(2):
        with pytest.raises(VocabFormatError, match="defined twice"):
            load_tokenizer(bad)
    assert not list(cache_dir.glob("*.marshal"))
