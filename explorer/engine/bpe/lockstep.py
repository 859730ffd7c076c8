"""Byte-pair merging of many pieces at once, in lock step, with numpy.

:class:`~explorer.engine.bpe.batch.BatchMerger` merges each piece in a Python loop: about a
microsecond per merge, and a cold pass over text in many scripts makes millions of merges
(the all-language UDHR: 235k distinct pre-tokens, 2.5 MB, ~2/3 of a cold encode). Here all
pieces advance together: every round, each piece still able to merge merges its lowest-rank
pair (the leftmost on ties), exactly the rule of the per-piece loop, by a few array
operations over all their symbols. A piece with nothing left to merge leaves the round.

Pair ranks: with ranks-based BPE (``.tiktoken``-style) two adjacent symbols merge with the
rank of their concatenation, if it is a token. :class:`PairRanks` holds every such pair
``(a, b) -> rank(a + b)`` of the vocabulary in an :class:`~explorer.engine.int_table.IntTable`
(cl100k: 233k pairs), found once per vocabulary by splitting every token in two.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from explorer.engine.int_table import IntTable

NEVER = (1 << 31) - 1
"""Rank of a pair that never merges (above every rank; ``NEVER << 32`` fits an int64)."""


class PairRanks:
    """Every mergeable pair of a vocabulary: ``(id a, id b) -> rank(a + b)`` (= its id)."""

    __slots__ = ("_ranks", "_token_bytes", "byte_ids", "first", "stride", "table")

    def __init__(self, ranks: dict[bytes, int]) -> None:
        """``ranks``: token bytes -> rank (= id), all 256 single bytes included.

        Finding the pairs takes ~0.3 s for a 100k vocabulary (a dict lookup per way of
        cutting each token in two) and placing them in the table ~0.1 s more (o200k: 446k
        pairs); the placed table is kept in the vocabulary cache
        (:func:`~explorer.engine.formats.vocab_cache.cached_and_built`: its slot arrays are
        read back as they are, ~10 ms; this is on the path to a big text's first paint)."""
        from explorer.engine.formats.vocab_cache import cached_and_built

        self._ranks = ranks
        self._token_bytes: list[bytes] | None = None
        self.stride = max(ranks.values(), default=0) + 1
        self.byte_ids = np.array([ranks[bytes([b])] for b in range(256)], np.int64)
        lengths = np.fromiter(map(len, ranks), np.int64, len(ranks))
        values = np.fromiter(ranks.values(), np.int64, len(ranks))
        key = lengths.tobytes() + values.tobytes() + b"".join(ranks)
        self.table = cached_and_built(key, "bpe-mergeable-pair-table-v1",
                                      lambda: _pair_table(ranks, self.stride),
                                      IntTable.from_state)
        grid = np.arange(65536, dtype=np.int64)
        self.first = self.of(self.byte_ids[grid >> 8], self.byte_ids[grid & 255])
        """Rank of each byte pair ``a b`` at index ``a * 256 + b`` (the first round)."""

    def token_bytes(self) -> list[bytes]:
        """Each id's token bytes (``b""`` for an id that is no token; for the per-piece
        finish, which looks pairs up in ``ranks``)."""
        if self._token_bytes is None:
            out = [b""] * self.stride
            for token, rank in self._ranks.items():
                out[rank] = token
            self._token_bytes = out
        return self._token_bytes

    def of(self, left: np.ndarray, right: np.ndarray) -> np.ndarray:
        """Rank of merging ``left[i]`` with ``right[i]`` (int64), :data:`NEVER` if none."""
        found = self.table.get(left * self.stride + right).astype(np.int64)
        found[found < 0] = NEVER
        return found


def _pair_table(ranks: dict[bytes, int], stride: int) -> tuple[int, int, int, bytes, bytes]:
    """The :meth:`~IntTable.state` of the table of :func:`_mergeable_pairs` (room 4: most
    lookups are of pairs that never merge, which probe to an empty slot)."""
    keys, values = _mergeable_pairs(ranks, stride)
    return IntTable(np.array(keys, np.int64), np.array(values, np.int64), room=4).state()


def _mergeable_pairs(ranks: dict[bytes, int], stride: int) -> tuple[list[int], list[int]]:
    """``(a * stride + b, rank(a + b))`` for every two tokens whose concatenation is one."""
    keys: list[int] = []
    values: list[int] = []
    get = ranks.get
    for token, rank in ranks.items():
        for k in range(1, len(token)):
            a = get(token[:k])
            if a is not None:
                b = get(token[k:])
                if b is not None:
                    keys.append(a * stride + b)
                    values.append(rank)
    return keys, values


def merge_lockstep(pairs: PairRanks, pieces: list[bytes],
                   finish_below: int = 0) -> list[tuple[int, ...]]:
    """The token ids of every piece (non-empty UTF-8 bytes), merged by lowest rank first,
    leftmost on ties: the same ids as merging each piece on its own.

    Once fewer than ``finish_below`` pieces still merge, they are finished one by one in
    Python from where they are (a round costs ~0.2 ms however few pieces it moves).

    The active pieces' symbols lie end to end in ``sym``; ``rank[i]`` is the rank of the
    pair ``sym[i] sym[i + 1]`` (:data:`NEVER` at a piece's last symbol). A round finds each
    piece's leftmost lowest pair with one segmented minimum over ``rank * 2**32 + i``,
    merges it, looks up only the two pairs that merge changed, and sets aside the pieces
    with nothing left to merge.
    """
    if not pieces:
        return []
    counts = np.fromiter(map(len, pieces), np.int64, len(pieces))
    raw = np.frombuffer(b"".join(pieces), np.uint8).astype(np.int64)
    sym = pairs.byte_ids[raw]
    rank = np.empty(sym.size, np.int64)
    rank[:-1] = pairs.first[(raw[:-1] << 8) | raw[1:]]
    rank[np.cumsum(counts) - 1] = NEVER
    return lockstep_rounds(pairs.of, None, sym, rank, counts,
                           lambda *state: _finish(pairs, *state), finish_below)


def lockstep_rounds(
    of: Callable[[np.ndarray, np.ndarray], np.ndarray],
    merged_of: Callable[[np.ndarray], np.ndarray] | None,
    sym: np.ndarray, rank: np.ndarray, counts: np.ndarray,
    finish: Callable[..., None] | None = None, finish_below: int = 0,
) -> list[tuple[int, ...]]:
    """The rounds of :func:`merge_lockstep` from the pieces' first symbols: ``sym`` (ids,
    the pieces end to end, ``counts`` each) and ``rank`` (each pair's, :data:`NEVER` at a
    piece's last symbol). ``of(left, right)``: pairs' ranks; ``merged_of(ranks)``: the ids
    those merges make (None: a merge's rank is its id, as in ranks-based BPE); ``finish``
    (when given): called with the state once fewer than ``finish_below`` pieces still
    merge."""
    ends = np.cumsum(counts)
    which = np.arange(len(counts), dtype=np.int64)  # the piece of each active segment
    index = np.arange(sym.size, dtype=np.int64)
    out_ids: list[np.ndarray] = []
    out_counts: list[np.ndarray] = []
    out_which: list[np.ndarray] = []
    take, where = np.take, np.flatnonzero  # (a mask's indices, then gathers: boolean
    # indexing with a mask of mixed values is several times slower on big arrays)
    while which.size:
        if finish is not None and which.size < finish_below:
            finish(sym, rank, counts, which, out_ids, out_counts, out_which)
            break
        n = sym.size
        starts = ends - counts
        best = np.minimum.reduceat((rank << 32) | index[:n], starts)
        merging = (best >> 32) != NEVER
        going = where(merging)
        if going.size < len(merging):
            done = ~merging
            leaving = np.repeat(done, counts)
            out_ids.append(sym[leaving])
            out_counts.append(counts[done])
            out_which.append(which[done])
        else:
            leaving = None
        at = take(best, going) & 0xFFFFFFFF
        if at.size:
            first, last = take(starts, going), take(ends, going) - 1
            merged = take(rank, at)
            sym[at] = merged if merged_of is None else merged_of(merged)
            left = take(at, where(at > first))
            right = take(at, where(at + 1 < last))  # (at + 1 is deleted: the pair after
            found = of(np.concatenate((take(sym, left - 1), take(sym, right))),  # is at + 2's)
                       np.concatenate((take(sym, left), take(sym, right + 2))))  # one lookup
            rank[at] = NEVER
            rank[left - 1] = found[:left.size]
            rank[right] = found[left.size:]
        keep = np.ones(n, bool) if leaving is None else ~leaving
        keep[at + 1] = False
        kept = where(keep)
        sym, rank = take(sym, kept), take(rank, kept)
        counts = take(counts, going) - 1
        which = take(which, going)
        ends = np.cumsum(counts)
    return _in_piece_order(out_ids, out_counts, out_which)


def _in_piece_order(out_ids: list[np.ndarray], out_counts: list[np.ndarray],
                    out_which: list[np.ndarray]) -> list[tuple[int, ...]]:
    """The pieces' ids, one tuple each in piece order, from the parts set aside round by
    round (``out_which``: the piece of each part's segments)."""
    ids = np.concatenate(out_ids).tolist()
    counts = np.concatenate(out_counts)
    ends = np.cumsum(counts)
    order = np.argsort(np.concatenate(out_which), kind="stable")
    stops = ends[order]
    return list(map(tuple, map(ids.__getitem__, map(slice, (stops - counts[order]).tolist(),
                                                       stops.tolist()))))


def _finish(pairs: PairRanks, sym: np.ndarray, rank: np.ndarray, counts: np.ndarray,
            which: np.ndarray, out_ids: list[np.ndarray], out_counts: list[np.ndarray],
            out_which: list[np.ndarray]) -> None:
    """The pieces still merging, merged one by one in Python from where they are.

    A pair's rank is its concatenation's rank in ``ranks`` (what the table holds: no dict of
    the table's pairs is built, ~0.15 s for o200k's 446k on a first encode's path)."""
    get, token_bytes = pairs._ranks.get, pairs.token_bytes()
    flat_sym, flat_rank = sym.tolist(), rank.tolist()
    ids: list[int] = []
    lengths: list[int] = []
    start = 0
    for count in counts.tolist():
        syms = flat_sym[start:start + count]
        ranks = flat_rank[start:start + count]
        parts = list(map(token_bytes.__getitem__, syms))
        start += count
        while True:
            best = min(ranks)
            if best == NEVER:
                break
            i = ranks.index(best)
            syms[i] = best
            merged = parts[i] = parts[i] + parts[i + 1]
            del syms[i + 1], ranks[i + 1], parts[i + 1]
            if i + 1 < len(syms):
                ranks[i] = get(merged + parts[i + 1], NEVER)
            else:
                ranks[i] = NEVER
            if i:
                ranks[i - 1] = get(parts[i - 1] + merged, NEVER)
        ids += syms
        lengths.append(len(syms))
    out_ids.append(np.array(ids, np.int64))
    out_counts.append(np.array(lengths, np.int64))
    out_which.append(which)
