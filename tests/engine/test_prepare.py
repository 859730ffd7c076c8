"""``Tokenizer.prepare``: a loaded tokenizer builds what its first encode would build on the
way (the window calls it right after a load, while Qt lays the text out), and its encodes
are unchanged by it."""

from __future__ import annotations

import pytest

from explorer.bundled import resource_path
from explorer.engine.formats import load_tokenizer
from explorer.engine.tokenizer import warm_up_texts


def _fresh(name: str):  # type: ignore[no-untyped-def]
    return load_tokenizer(resource_path("vocab", name))


def test_warm_up_texts_reach_the_batch_paths() -> None:
    """The made-up words are mostly no whole token and plenty: byte-level BPE merges them
    in lock step (at least ``LOCKSTEP_MIN_PIECES`` misses), a Unigram model solves them in
    a batch (``BATCH_MIN_CHARS``); one text is ASCII (its fast paths), one is not."""
    from explorer.engine.bpe.batch import LOCKSTEP_MIN_PIECES
    from explorer.engine.unigram.solve import BATCH_MIN_CHARS

    ascii_text, mixed = warm_up_texts()
    assert ascii_text.isascii() and not mixed.isascii()
    assert len({ch for ch in mixed if ord(ch) > 0x3000}) > 50  # (CJK, kana)
    tok = _fresh("cl100k_base.tiktoken")
    for text in warm_up_texts():
        chunks = set(tok.splitter.split(text))
        misses = [c for c in chunks if c.encode() not in tok.model.ranks]
        assert len(misses) >= 2 * LOCKSTEP_MIN_PIECES
        assert sum(map(len, chunks)) >= 2 * BATCH_MIN_CHARS


def test_prepare_builds_the_byte_level_bpe_tables() -> None:
    tok = _fresh("o200k_base.tiktoken")
    assert tok._sizes is None and tok.model._batch._lockstep is None
    tok.prepare()
    assert tok._sizes is not None and tok.model._batch._lockstep is not None


def test_prepare_builds_the_unigram_tables_and_forgets_its_words() -> None:
    """The tables stay; the made-up words do not (a Unigram model's word rows grow by
    doubling: the warm-up's rows could cost a big document one more doubling)."""
    tok = _fresh("corpus_unigram_4k.model")
    words = tok.model._words
    assert words._batch is None and tok.normalizer._tables is None
    tok.prepare()
    assert words._batch is not None and tok.normalizer._tables is not None
    assert words.cache.rows.size == 0 and not words.cache.at_binade


@pytest.mark.parametrize("name", ["cl100k_base.tiktoken", "corpus_unigram_4k.model",
                                  "corpus_bpe_4k.json"])
def test_prepare_changes_no_encode(name: str) -> None:
    text = "Héllo wörld 123, 日本語 😀\n  x = f(y)  # ok\n" * 40 + warm_up_texts()[1][:500]
    cold = _fresh(name).encode_compact(text)
    tok = _fresh(name)
    tok.prepare()
    warm = tok.encode_compact(text)
    assert warm.ids.tolist() == cold.ids.tolist()
    assert warm.starts.tolist() == cold.starts.tolist()
    assert warm.ends.tolist() == cold.ends.tolist()
