"""Property tests: the queue, the short-piece scan, the trace and the naive encoder agree;
decode(encode(x)) == x; ids equal tiktoken's on arbitrary text; one model serves many threads.
"""

from __future__ import annotations

import itertools
from concurrent.futures import ThreadPoolExecutor

from hypothesis import given, settings
from hypothesis import strategies as st
from tiktoken_support import ours, reference

from explorer.engine.bpe import (
    BytePairModel,
    merge_by_scan,
    merge_with_queue,
    naive_merge,
    trace_merges,
)

SETTINGS = settings(max_examples=150, deadline=None)


@st.composite
def random_vocab(draw) -> dict[bytes, int]:
    """256 single bytes, then random concatenations of existing tokens over a small alphabet."""
    ranks = {bytes([b]): b for b in range(256)}
    tokens = [b"a", b"b", b"c"]
    for _ in range(draw(st.integers(0, 40))):
        left = draw(st.sampled_from(tokens))
        right = draw(st.sampled_from(tokens))
        merged = left + right
        if merged not in ranks:
            ranks[merged] = len(ranks)
            tokens.append(merged)
    return ranks


pieces = st.binary(min_size=0, max_size=80).map(lambda b: bytes(97 + x % 3 for x in b))


@SETTINGS
@given(random_vocab(), pieces)
def test_all_merge_loops_agree_on_random_vocab(ranks, piece):
    symbols = [bytes([b]) for b in piece]
    expected = naive_merge(piece, ranks)
    assert merge_with_queue(symbols, lambda a, b: ranks.get(a + b)) == expected
    assert merge_by_scan(symbols, ranks) == expected
    model = BytePairModel(ranks)
    assert model.merge(piece) == expected  # cut points + memoised sides + scan/queue
    assert model.merge(piece + b"\xff" + piece) == naive_merge(piece + b"\xff" + piece, ranks)
    steps = list(trace_merges(symbols, lambda a, b: ranks.get(a + b)))
    assert list(steps[-1].symbols) == expected
    assert b"".join(steps[-1].symbols) == piece


@SETTINGS
@given(random_vocab(), pieces)
def test_trace_steps_are_consistent(ranks, piece):
    steps = list(trace_merges([bytes([b]) for b in piece], lambda a, b: ranks.get(a + b)))
    assert steps[0].kind == "start" and steps[-1].kind == "done"
    for before, step in itertools.pairwise(steps):
        if step.kind != "pop":
            continue
        # The popped entry was the head of the previous queue.
        assert before.queue[0] == step.popped
        assert step.popped.live == (step.merge is not None)
        if step.merge is None:
            assert step.symbols == before.symbols
        else:
            assert len(step.symbols) == len(before.symbols) - 1
            assert step.merge.merged == step.merge.left_symbol + step.merge.right_symbol
        assert list(step.queue) == sorted(step.queue, key=lambda e: (e.rank, e.left,
                                                                     e.right, e.merged))
        assert b"".join(step.symbols) == piece


def test_generic_merge_on_str_symbols_with_pair_ranks():
    # HF merges-list style: rank of the (left, right) pair, symbols are strings.
    merges = {("l", "o"): 0, ("lo", "w"): 1, ("e", "r"): 2, ("low", "er"): 3}
    parts = merge_with_queue(list("lowerlow"), lambda a, b: merges.get((a, b)))
    assert parts == ["lower", "low"]
    # SentencePiece style: float scores, highest first (negated).
    scores = {"ab": -1.0, "bc": -0.5}

    def rank_of(a: str, b: str) -> float | None:
        return -scores[a + b] if a + b in scores else None

    assert merge_with_queue(list("abc"), rank_of) == ["a", "bc"]
    scores["abc"] = -2.0
    assert merge_with_queue(list("abc"), rank_of) == ["abc"]


@settings(max_examples=60, deadline=None)
@given(st.binary(max_size=300))
def test_real_vocab_fast_equals_naive(piece):
    tok = ours("cl100k")
    ranks = tok.vocab.bytes_to_id
    assert tok.model.merge(piece) == naive_merge(piece, ranks)
    symbols = [bytes([b]) for b in piece]
    assert merge_with_queue(symbols, lambda a, b: ranks.get(a + b)) == naive_merge(piece, ranks)


text_strategy = st.text(
    # Not "Cn" (unassigned in this Python's Unicode, 14.0): `regex` classifies characters
    # of newer Unicode versions by its own newer tables, tiktoken's Rust regex by older
    # ones, so e.g. U+323B0 (CJK Extension J, Unicode 17) is a letter to one and not to
    # the other (a known gap, in the issue notes).
    alphabet=st.characters(blacklist_categories=("Cs", "Cn")), max_size=200
) | st.text(alphabet=" \t\n\r\u00a0a1'éあ😀\u0301", max_size=60)


@SETTINGS
@given(text_strategy)
def test_round_trip_and_tiktoken_ids(text):
    for name in ("cl100k", "o200k", "r50k"):
        tok = ours(name)
        enc = tok.encode(text)
        assert tok.decode(enc.ids) == text
        assert tok.decode_bytes(enc.ids) == text.encode("utf-8")
        assert enc.ids == reference(name).encode(text, allowed_special="all")
        assert tok.encode_ids(text) == enc.ids
        for t in enc:
            assert 0 <= t.start < t.end <= len(text)


def test_one_model_serves_many_threads():
    tok = ours("cl100k")
    texts = [f"thread {i}: " + "日本語 text éèà 😀 " * (i + 1) + "x" * (10 * i) for i in range(32)]
    expected = [reference("cl100k").encode(t) for t in texts]
    tok.model.clear_cache()
    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(lambda t: tok.encode(t).ids, texts * 4))
    assert results == expected * 4


def test_long_piece_uses_queue_and_matches_naive():
    model = BytePairModel(ours("cl100k").vocab.bytes_to_id)
    piece = ("  " * 300 + "的" * 200).encode()
    assert model.merge(piece) == naive_merge(piece, model.ranks)
