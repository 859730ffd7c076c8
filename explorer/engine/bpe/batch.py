"""Merge many pre-tokens in one pass: the cold-cache path of :class:`BytePairModel`.

Every unseen piece of a call is merged here, together: the pieces are joined with a
*separator* byte (one that occurs in no token of two or more bytes, e.g. ``0xFF``, which
UTF-8 never produces), and the first-pass pair ranks and the initial symbols of all of them
are computed by a few C-level passes over the joined bytes instead of per piece. Each piece
then takes its slice of both, with the separators on either side as sentinels: a pair with
the separator never merges (its rank is forced to "never"; ``separator + symbol`` is no
token), so the min-scan needs no bounds checks. Measured on cl100k (cold memo, CPU time):
the distinct pre-tokens of the all-language UDHR 1.85 -> 1.52 s, of the English corpus 0.30
-> 0.25 s (docs/benchmarks.md). The merge rule is the model's: lowest rank first, leftmost
on ties; pieces with a cut or longer than ``SHORT_PIECE`` go to :meth:`BytePairModel.merge`.

A call with at least :data:`LOCKSTEP_MIN_PIECES` pieces merges its short ones in lock step
with numpy instead (:mod:`explorer.engine.bpe.lockstep`: the same ids; the all-language
UDHR's distinct pre-tokens in one call 1.7-1.9 s -> 0.6-0.7 s of CPU; the last pieces of a
batch finish one by one).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from itertools import compress, pairwise

from explorer.engine.bpe.lockstep import PairRanks, merge_lockstep
from explorer.engine.bpe.queue import NO_RANK

LOCKSTEP_MIN_PIECES = 150
"""Calls with fewer pieces merge them one by one."""
LOCKSTEP_MAX_PIECE = 256
"""Pieces of up to this many bytes merge in lock step, longer ones one by one (each round
merges one pair of each piece: a piece of 100k bytes, a long line of Chinese with o200k,
would make the rounds run on; up to 256 bytes, a long run of letters in Thai, Chinese or
Japanese, the rounds beat the queue: o200k on 4M characters of the UDHR, cold, alternating
in one process, 1.60-2.01 s with 28 bytes, 1.49-1.62 s with 256)."""
LOCKSTEP_FINISH_BELOW = 128
"""Lock-step rounds stop when fewer pieces than this still merge; the rest finish one by one
(a round costs ~0.1-0.2 ms whatever the batch: on text in many scripts, 150 pieces then merge
1.2x faster than one by one, 400 pieces 1.65x, 200k pieces 2.5x)."""

SEPARATOR_CANDIDATES = (0xFF, 0xFE, 0xFD, 0xFC, 0xFB, 0xFA, 0xF9, 0xF8, 0xF7, 0xF6, 0xF5,
                        0xC1, 0xC0)
"""Bytes that valid UTF-8 never contains, tried in order as the separator."""


def separator_byte(ranks: dict[bytes, int]) -> int | None:
    """A byte that no token of two or more bytes contains, or None (then no batching)."""
    joined = b"\x00".join(ranks)
    for byte in SEPARATOR_CANDIDATES:
        if joined.count(bytes([byte])) == (1 if bytes([byte]) in ranks else 0):
            return byte
    return None


def _pair_key(a: int, b: int) -> int:
    """The byte pair ``a b`` read as a native uint16 (the pair table's index)."""
    return int.from_bytes(bytes([a, b]), sys.byteorder)


class BatchMerger:
    """Merges lists of pieces (UTF-8 bytes, none of them a whole token) into token ids."""

    __slots__ = ("_cut", "_lockstep", "_merge", "_pair_rank", "_rank_get", "_rank_item",
                 "_ranks", "_sep", "_short", "_single")

    def __init__(self, ranks: dict[bytes, int], pair_table: list[int],
                 merge: Callable[[bytes, list[int]], list[bytes]], *, cut: int,
                 short_piece: int) -> None:
        """``pair_table``: :func:`~explorer.engine.bpe.model.byte_pair_table`; ``merge``:
        the model's merge of one piece given its pair ranks; ``cut``: the table's cut
        marker; pieces longer than ``short_piece`` bytes go to ``merge``."""
        self._sep = separator_byte(ranks)
        table = pair_table[:]
        if self._sep is not None:
            for b in range(256):
                table[_pair_key(b, self._sep)] = NO_RANK
                table[_pair_key(self._sep, b)] = NO_RANK
        self._pair_rank = table.__getitem__
        self._single = [bytes([b]) for b in range(256)].__getitem__
        self._rank_get = ranks.get
        self._rank_item = ranks.__getitem__
        self._merge = merge
        self._cut = cut
        self._short = short_piece
        self._ranks = ranks
        self._lockstep: PairRanks | None = None

    def encode(self, pieces: list[bytes]) -> list[tuple[int, ...]]:
        """The token ids of every piece, one tuple each (no memo)."""
        if len(pieces) >= LOCKSTEP_MIN_PIECES:
            return self._encode_lockstep(pieces)
        return self._encode_each(pieces)

    def _encode_lockstep(self, pieces: list[bytes]) -> list[tuple[int, ...]]:
        """Pieces of up to :data:`LOCKSTEP_MAX_PIECE` bytes merged in lock step, longer ones
        one by one (their merges would make as many rounds)."""
        if self._lockstep is None:
            self._lockstep = PairRanks(self._ranks)
        is_short = [len(p) <= LOCKSTEP_MAX_PIECE for p in pieces]
        if all(is_short):
            return merge_lockstep(self._lockstep, pieces, LOCKSTEP_FINISH_BELOW)
        fast = iter(merge_lockstep(self._lockstep, list(compress(pieces, is_short)),
                                   LOCKSTEP_FINISH_BELOW))
        slow = iter(self._encode_each([p for p, s in zip(pieces, is_short, strict=True)
                                       if not s]))
        return [next(fast) if s else next(slow) for s in is_short]

    def _encode_each(self, pieces: list[bytes]) -> list[tuple[int, ...]]:
        """The per-piece merge loop of :meth:`encode`."""
        rank_item = self._rank_item
        merge = self._merge
        sep = self._sep
        if sep is None or not pieces:
            pair_rank = self._pair_rank
            return [tuple(map(rank_item, merge(p, list(map(pair_rank, _pairs(p))))))
                    for p in pieces]
        sep_bytes = bytes([sep])
        joined = sep_bytes + sep_bytes.join(pieces) + sep_bytes
        m = len(joined) - 1
        pair_rank = self._pair_rank
        pair_all = [NO_RANK] * m
        pair_all[0::2] = map(pair_rank, memoryview(joined[: ((m + 1) // 2) * 2]).cast("H"))
        pair_all[1::2] = map(pair_rank, memoryview(joined[1 : 1 + (m // 2) * 2]).cast("H"))
        parts_all = list(map(self._single, joined))
        rank_get = self._rank_get
        inf = NO_RANK
        cut = self._cut
        short = self._short
        out: list[tuple[int, ...]] = []
        append = out.append
        start = 1  # of the current piece in joined
        for piece in pieces:
            end = start + len(piece)
            # pair_ranks[k] is the rank of parts[k] + parts[k + 1]; both ends are sentinels.
            pair_ranks = pair_all[start - 1 : end]
            if end - start > short or cut in pair_ranks:
                append(tuple(map(rank_item, merge(piece, pair_ranks[1:-1]))))
            else:
                parts = parts_all[start - 1 : end + 1]
                while True:
                    best = min(pair_ranks)
                    if best == inf:
                        break
                    i = pair_ranks.index(best)  # leftmost of the lowest rank
                    merged = parts[i] + parts[i + 1]
                    parts[i] = merged
                    del parts[i + 1]
                    del pair_ranks[i]
                    pair_ranks[i - 1] = rank_get(parts[i - 1] + merged, inf)
                    pair_ranks[i] = rank_get(merged + parts[i + 1], inf)
                del parts[0], parts[-1]
                append(tuple(map(rank_item, parts)))
            start = end + 1
        return out


def _pairs(piece: bytes) -> list[int]:
    """Every adjacent byte pair of ``piece`` as a native uint16 (the slow, unbatched way)."""
    return [_pair_key(a, b) for a, b in pairwise(piece)]


__all__ = ["SEPARATOR_CANDIDATES", "BatchMerger", "separator_byte"]
