"""Byte-level BPE model with tiktoken semantics: bytes of one pre-token -> token ids.

Per pre-token: (1) look the whole pre-token up in the ranks (tiktoken does this; it is also
Llama 3's ``ignore_merges``); (2) otherwise merge its bytes by rank -- lowest rank of the
concatenation first, leftmost on ties -- with a min-scan for short pieces and the llama.cpp
priority queue (:mod:`explorer.engine.bpe.queue`) for long ones, where the queue's
O(n log n) beats the scan's O(n^2). Before merging, the piece is cut between two bytes that
are adjacent inside no token (no symbol can ever span them, so each side merges exactly as it
would in the whole piece); the sides are memoised. Results are memoised per pre-token string
in a plain dict (cleared when it grows past ``cache_limit``), as tuples: the cyclic GC
untracks tuples of ints/bytes, so its full collections no longer rescan the growing memos.

Thread safety: ranks and the byte-pair table never change after construction; the only
shared mutable state is the two memo dicts (pre-tokens, cut sides), whose single get/set
operations are atomic in CPython and whose values are deterministic and never mutated, so
concurrent callers at worst recompute an entry. All merge state is local
to a call. This model does not split text or handle special tokens (see ``tokenizer``).
"""

from __future__ import annotations

import gc
import sys
from collections.abc import Iterator, Mapping
from itertools import chain, compress, count, repeat
from operator import is_
from typing import Any

from explorer.engine.bpe.batch import BatchMerger
from explorer.engine.bpe.queue import NO_RANK, merge_with_queue
from explorer.engine.bpe.trace import MergeStep, trace_merges
from explorer.engine.errors import VocabFormatError

SHORT_PIECE = 28
"""Pieces up to this many bytes merge with the min-scan; longer ones with the queue
(measured on cl100k: the scan wins below ~24-32 bytes, the queue above)."""

GC_PAUSE_CHUNKS = 256
"""Calls with at least this many pre-tokens run with the cyclic GC paused (see
:meth:`BytePairModel.encode_chunks`)."""

_SINGLE_BYTES = [bytes([b]) for b in range(256)]

CUT = NO_RANK + 1
"""Pair marker: these two bytes are adjacent inside no token, so no merge ever crosses them."""


def _uint16_pairs(data: bytes) -> set[int]:
    """Every adjacent byte pair of ``data`` as a native uint16 (two C-level passes)."""
    even = memoryview(data[: len(data) // 2 * 2]).cast("H")
    odd = memoryview(data[1 : 1 + (len(data) - 1) // 2 * 2]).cast("H")
    return set(even).union(odd)


def byte_pair_table(ranks: Mapping[bytes, int]) -> list[int]:
    """For every byte pair, read as a native uint16: its rank if ``a b`` is a token, else
    NO_RANK if the two bytes are adjacent inside some token, else CUT.

    Costs ~0.1 s on o200k; loaders cache it with the parsed ranks.
    """
    # Tokens joined by 0xFF: the separator invents pairs only with 0xFF, a byte that never
    # occurs in UTF-8 text, so the extra pairs can only hide a cut, never invent one.
    inside = _uint16_pairs(b"\xff".join(ranks))
    table = [CUT] * 65536
    get = ranks.get
    for key in inside:  # every two-byte token's pair is inside it, so this finds them all
        rank = get(key.to_bytes(2, sys.byteorder))
        table[key] = NO_RANK if rank is None else rank
    return table


class BytePairModel:
    """Ranks-based BPE (``.tiktoken``-style: rank of a merged token decides its priority)."""

    __slots__ = ("_batch", "_cache", "_pair_rank", "_rank_of", "_sub_cache", "cache_limit",
                 "ranks")

    def __init__(self, ranks: Mapping[bytes, int], *, cache_limit: int = 200_000,
                 pair_table: list[int] | None = None) -> None:
        """``ranks``: token bytes -> rank (= id). All 256 single bytes must be present.

        ``pair_table``: :func:`byte_pair_table` of ``ranks`` when the caller has it cached.
        """
        self.ranks: dict[bytes, int] = ranks if isinstance(ranks, dict) else dict(ranks)
        missing = [b for b in _SINGLE_BYTES if b not in self.ranks]
        if missing:
            raise VocabFormatError(
                f"byte-level BPE vocabulary lacks {len(missing)} of the 256 single-byte tokens "
                f"(first: {missing[0]!r})"
            )
        get = self.ranks.get
        self._rank_of = lambda a, b: get(a + b)
        if pair_table is None or len(pair_table) != 65536:
            pair_table = byte_pair_table(self.ranks)
        self._pair_rank = pair_table.__getitem__
        self._batch = BatchMerger(self.ranks, pair_table, self.merge, cut=CUT,
                                  short_piece=SHORT_PIECE)
        self._cache: dict[str, tuple[int, ...]] = {}
        self._sub_cache: dict[bytes, tuple[bytes, ...]] = {}
        self.cache_limit = cache_limit

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        """Pickle the ranks and pair table (process pools); caches start empty."""
        return (_rebuild_byte_pair_model,
                (self.ranks, self.cache_limit, self._pair_rank.__self__))

    def merge(self, piece: bytes, pair_ranks: list[int] | None = None) -> list[bytes]:
        """The tokens (as bytes) of one pre-token, by merging only (no whole lookup).

        The piece is first cut where two adjacent bytes occur together in no token: no
        symbol can ever span such a cut, so each side merges on its own, exactly as in the
        whole piece, and the sides are memoised (rare scripts repeat them a lot).
        ``pair_ranks``: :meth:`_pair_ranks` of ``piece`` when the caller has it.
        """
        if pair_ranks is None:
            pair_ranks = self._pair_ranks(piece)
        if CUT not in pair_ranks:
            return self._merge_uncut(piece, pair_ranks)
        parts: list[bytes] = []
        start = 0
        sub_cache = self._sub_cache
        get = sub_cache.get
        merge_uncut = self._merge_uncut
        i = pair_ranks.index(CUT)
        while True:
            sub = piece[start : i + 1]
            sub_parts = get(sub)
            if sub_parts is None:  # a side's pair ranks are a slice of the piece's
                sub_parts = tuple(merge_uncut(sub, pair_ranks[start:i]))
                if len(sub_cache) >= self.cache_limit:
                    sub_cache.clear()
                sub_cache[sub] = sub_parts
            parts += sub_parts
            start = i + 1
            try:
                i = pair_ranks.index(CUT, start)
            except ValueError:
                break
        parts += self._merge_sub(piece[start:], sub_cache, pair_ranks[start:])
        return parts

    def _merge_sub(self, sub: bytes, sub_cache: dict[bytes, tuple[bytes, ...]],
                   pair_ranks: list[int]) -> tuple[bytes, ...]:
        parts = sub_cache.get(sub)
        if parts is None:
            parts = tuple(self._merge_uncut(sub, pair_ranks))
            if len(sub_cache) >= self.cache_limit:
                sub_cache.clear()
            sub_cache[sub] = parts
        return parts

    def _pair_ranks(self, piece: bytes) -> list[int]:
        # Rank (or NO_RANK/CUT) of every adjacent byte pair, read through uint16 views of the
        # piece at even and odd offsets: two C-level passes over a 64k table.
        m = len(piece) - 1
        if m < 1:
            return []
        pair_rank = self._pair_rank
        pair_ranks = [NO_RANK] * m
        pair_ranks[0::2] = map(pair_rank, memoryview(piece[: ((m + 1) // 2) * 2]).cast("H"))
        pair_ranks[1::2] = map(pair_rank, memoryview(piece[1 : 1 + (m // 2) * 2]).cast("H"))
        return pair_ranks

    def _merge_uncut(self, piece: bytes, pair_ranks: list[int]) -> list[bytes]:
        if len(piece) > SHORT_PIECE:
            return merge_with_queue([_SINGLE_BYTES[b] for b in piece], self._rank_of)
        # queue.merge_by_scan with precomputed first-pass ranks (no CUT inside: see merge).
        parts = list(map(_SINGLE_BYTES.__getitem__, piece))
        get = self.ranks.get
        inf = NO_RANK
        last = len(pair_ranks) - 1
        while last >= 0:
            best = min(pair_ranks)
            if best == inf:
                break
            i = pair_ranks.index(best)  # leftmost of the lowest rank
            merged = parts[i] + parts[i + 1]
            parts[i] = merged
            del parts[i + 1]
            del pair_ranks[i]
            if i < last:
                pair_ranks[i] = get(merged + parts[i + 1], inf)
            if i:
                pair_ranks[i - 1] = get(parts[i - 1] + merged, inf)
            last -= 1
        return parts

    def encode_piece(self, piece: bytes) -> list[int]:
        """Token ids of one pre-token's bytes (whole lookup, then merges). Not memoised."""
        rank = self.ranks.get(piece)
        if rank is not None:
            return [rank]
        return list(map(self.ranks.__getitem__, self.merge(piece)))

    def encode_chunk(self, chunk: str) -> tuple[int, ...]:
        """Token ids of one pre-token string, memoised."""
        ids = self._cache.get(chunk)
        if ids is None:
            ids = self._encode_miss(chunk)
        return ids

    def _encode_miss(self, chunk: str) -> tuple[int, ...]:
        # encode_piece with the common path (no cut) inlined: misses dominate non-English.
        piece = chunk.encode("utf-8")
        ranks = self.ranks
        rank = ranks.get(piece)
        if rank is not None:
            ids: tuple[int, ...] = (rank,)
        else:
            pair_ranks = self._pair_ranks(piece)
            parts = (self._merge_uncut(piece, pair_ranks) if CUT not in pair_ranks
                     else self.merge(piece, pair_ranks))
            ids = tuple(map(ranks.__getitem__, parts))
        cache = self._cache
        if len(cache) >= self.cache_limit:
            cache.clear()
        cache[chunk] = ids
        return ids

    def encode_chunks(self, chunks: list[str]) -> list[int]:
        """Token ids of many pre-tokens, concatenated (the hot loop of plain encoding)."""
        return list(chain.from_iterable(self.encode_each(chunks)))

    def encode_each(self, chunks: list[str]) -> list[tuple[int, ...]]:
        """The token ids of every pre-token, one tuple each (memoised).

        Memo hits are looked up by a C-level ``map``; the distinct misses are then encoded
        together (whole-token lookup, then :class:`~explorer.engine.bpe.batch.BatchMerger`)
        and patched in at their positions.
        """
        cache = self._cache
        found = list(map(cache.get, chunks))
        if None not in found:
            return found  # type: ignore[return-value]
        # The cold pass allocates merge-state lists by the million: pausing the cyclic GC
        # for a long call skips most of its young-generation collections (as layout does).
        paused = len(chunks) >= GC_PAUSE_CHUNKS and gc.isenabled()
        if paused:
            gc.disable()
        try:
            misses = list(compress(count(), map(is_, found, repeat(None))))
            todo = list(dict.fromkeys(map(chunks.__getitem__, misses)))
            pieces = list(map(str.encode, todo))
            whole = list(map(self.ranks.get, pieces))
            merged = iter(self._batch.encode(list(compress(pieces, map(is_, whole,
                                                                        repeat(None))))))
            fresh = dict(zip(todo, [(rank,) if rank is not None else next(merged)
                                    for rank in whole], strict=True))
            if len(cache) + len(fresh) > self.cache_limit:
                cache.clear()
            cache.update(fresh)
            # each miss's fresh ids, each hit's found ones: one C-level pass
            return list(map(fresh.get, chunks, found))
        finally:
            if paused:
                gc.enable()

    def clear_cache(self) -> None:
        """Forget memoised pre-tokens (benchmarks use it for cold-cache runs)."""
        self._cache.clear()
        self._sub_cache.clear()

    def encode_trace(self, pre_token: bytes | str) -> Iterator[MergeStep[bytes]]:
        """Yield every step of the merge queue for one pre-token (see ``bpe.trace``).

        The queue always runs, so the panel can show it; when the whole pre-token is itself a
        token the final ``done`` step has ``whole_token=True`` and that single symbol, which is
        what :meth:`encode_piece` emits.
        """
        data = pre_token.encode("utf-8") if isinstance(pre_token, str) else pre_token
        last: MergeStep[bytes] | None = None
        for step in trace_merges([_SINGLE_BYTES[b] for b in data], self._rank_of):
            if step.kind == "done":
                last = step
                break
            yield step
        assert last is not None
        if data in self.ranks:
            last = MergeStep(last.index, "done", (data,), (0,) if data else (), last.queue,
                             whole_token=True)
        yield last


def _rebuild_byte_pair_model(ranks: dict[bytes, int], cache_limit: int,
                             pair_table: list[int]) -> BytePairModel:
    """Unpickle a :class:`BytePairModel`."""
    return BytePairModel(ranks, cache_limit=cache_limit, pair_table=pair_table)
