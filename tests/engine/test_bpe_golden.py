"""The Wikipedia/minbpe example ``aaabdaaabac`` traced step by step through the merge queue.

Vocabulary: the 256 single bytes (ranks 0-255) then the merges ``aa`` (256), ``ab`` (257) and
``aaab`` (258) -- Wikipedia's Z = aa, Y = ab, X = ZY. Expected result: ``XdXac``.
"""

from __future__ import annotations

from explorer.engine.bpe import BytePairModel, naive_encode
from explorer.engine.bpe.trace import AppliedMerge

RANKS = {bytes([b]): b for b in range(256)} | {b"aa": 256, b"ab": 257, b"aaab": 258}


def test_encode_golden():
    model = BytePairModel(RANKS)
    assert model.merge(b"aaabdaaabac") == [b"aaab", b"d", b"aaab", b"a", b"c"]
    assert model.encode_piece(b"aaabdaaabac") == [258, 100, 258, 97, 99]
    assert naive_encode(b"aaabdaaabac", RANKS) == [258, 100, 258, 97, 99]


def test_trace_golden_step_by_step():
    steps = list(BytePairModel(RANKS).encode_trace("aaabdaaabac"))
    start = steps[0]
    assert start.kind == "start"
    assert start.symbols == tuple(bytes([c]) for c in b"aaabdaaabac")
    # Initial queue in pop order: the four "aa" pairs, then the two "ab" pairs.
    assert [(e.rank, e.left, e.right, e.merged, e.live) for e in start.queue] == [
        (256, 0, 1, b"aa", True), (256, 1, 2, b"aa", True), (256, 5, 6, b"aa", True),
        (256, 6, 7, b"aa", True), (257, 2, 3, b"ab", True), (257, 7, 8, b"ab", True),
    ]
    pops = [(s.popped.left, s.popped.right, s.popped.merged, s.popped.live) for s in steps
            if s.kind == "pop"]
    assert pops == [
        (0, 1, b"aa", True),     # Z at 0: Z a b d a a a b a c
        (1, 2, b"aa", False),    # stale: node 1 was merged into 0
        (5, 6, b"aa", True),     # Z at 5
        (6, 7, b"aa", False),    # stale
        (2, 3, b"ab", True),     # Y at 2: Z Y d Z a b a c
        (7, 8, b"ab", True),     # Y at 7: Z Y d Z Y a c
        (0, 2, b"aaab", True),   # X = ZY at 0
        (5, 7, b"aaab", True),   # X at 5: X d X a c
    ]
    merges = [s.merge for s in steps if s.merge is not None]
    assert merges[0] == AppliedMerge(256, 0, 1, b"a", b"a", b"aa")
    assert merges[-1] == AppliedMerge(258, 5, 7, b"aa", b"ab", b"aaab")
    assert [s.symbols for s in steps if s.merge is not None] == [
        (b"aa", b"a", b"b", b"d", b"a", b"a", b"a", b"b", b"a", b"c"),
        (b"aa", b"a", b"b", b"d", b"aa", b"a", b"b", b"a", b"c"),
        (b"aa", b"ab", b"d", b"aa", b"a", b"b", b"a", b"c"),
        (b"aa", b"ab", b"d", b"aa", b"ab", b"a", b"c"),
        (b"aaab", b"d", b"aa", b"ab", b"a", b"c"),
        (b"aaab", b"d", b"aaab", b"a", b"c"),
    ]
    done = steps[-1]
    assert done.kind == "done" and not done.queue and not done.whole_token
    assert done.symbols == (b"aaab", b"d", b"aaab", b"a", b"c")
    assert done.nodes == (0, 4, 5, 9, 10)
    # Stale entries are shown as such while still queued.
    after_first = steps[1]
    assert (256, 1, 2, b"aa", False) in [(e.rank, e.left, e.right, e.merged, e.live)
                                         for e in after_first.queue]


def test_trace_whole_token_lookup_is_reported():
    ranks = RANKS | {b"aaabdaaabac": 259}
    done = list(BytePairModel(ranks).encode_trace(b"aaabdaaabac"))[-1]
    assert done.whole_token and done.symbols == (b"aaabdaaabac",)


def test_trace_of_empty_and_single_byte():
    model = BytePairModel(RANKS)
    assert [s.kind for s in model.encode_trace(b"")] == ["start", "done"]
    steps = list(model.encode_trace(b"a"))
    assert [s.kind for s in steps] == ["start", "done"] and steps[-1].symbols == (b"a",)
