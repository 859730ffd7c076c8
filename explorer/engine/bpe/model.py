"""Byte-level BPE model with tiktoken semantics: bytes of one pre-token -> token ids.

Per pre-token: (1) look the whole pre-token up in the ranks (tiktoken does this; it is also
Llama 3's ``ignore_merges``); (2) otherwise merge its bytes by rank -- lowest rank of the
concatenation first, leftmost on ties -- with a min-scan for short pieces and the llama.cpp
priority queue (:mod:`explorer.engine.bpe.queue`) for long ones, where the queue's
O(n log n) beats the scan's O(n^2). Results are memoised per pre-token string in a plain dict
(cleared when it grows past ``cache_limit``).

Thread safety: ranks never change after construction; the only shared mutable state is the
memo dict, whose single get/set operations are atomic in CPython and whose values are
deterministic, so concurrent callers at worst recompute an entry. All merge state is local
to a call. This model does not split text or handle special tokens (see ``tokenizer``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from explorer.engine.bpe.queue import NO_RANK, merge_with_queue
from explorer.engine.bpe.trace import MergeStep, trace_merges
from explorer.engine.errors import VocabFormatError

SHORT_PIECE = 28
"""Pieces up to this many bytes merge with the min-scan; longer ones with the queue
(measured on cl100k: the scan wins below ~24-32 bytes, the queue above)."""

_SINGLE_BYTES = [bytes([b]) for b in range(256)]


def _byte_pair_table(ranks: Mapping[bytes, int]) -> list[int]:
    """Rank of every two-byte token, indexed by the pair read as a native uint16."""
    table = [NO_RANK] * 65536
    for a in range(256):
        for b in range(256):
            rank = ranks.get(bytes((a, b)))
            if rank is not None:
                table[memoryview(bytes((a, b))).cast("H")[0]] = rank
    return table


class BytePairModel:
    """Ranks-based BPE (``.tiktoken``-style: rank of a merged token decides its priority)."""

    __slots__ = ("_cache", "_pair_rank", "_rank_of", "cache_limit", "ranks")

    def __init__(self, ranks: Mapping[bytes, int], *, cache_limit: int = 200_000) -> None:
        """``ranks``: token bytes -> rank (= id). All 256 single bytes must be present."""
        self.ranks: dict[bytes, int] = ranks if isinstance(ranks, dict) else dict(ranks)
        missing = [b for b in _SINGLE_BYTES if b not in self.ranks]
        if missing:
            raise VocabFormatError(
                f"byte-level BPE vocabulary lacks {len(missing)} of the 256 single-byte tokens "
                f"(first: {missing[0]!r})"
            )
        get = self.ranks.get
        self._rank_of = lambda a, b: get(a + b)
        self._pair_rank = _byte_pair_table(self.ranks).__getitem__
        self._cache: dict[str, list[int]] = {}
        self.cache_limit = cache_limit

    def merge(self, piece: bytes) -> list[bytes]:
        """The tokens (as bytes) of one pre-token, by merging only (no whole lookup)."""
        if len(piece) <= SHORT_PIECE:
            return self._scan(piece)
        return merge_with_queue([_SINGLE_BYTES[b] for b in piece], self._rank_of)

    def _scan(self, piece: bytes) -> list[bytes]:
        # queue.merge_by_scan, tuned: the initial pair ranks come from a 64k table read
        # through uint16 views of the piece (even and odd offsets), all in C.
        n = len(piece)
        if n < 2:
            return [piece] if n else []
        pair_rank = self._pair_rank
        m = n - 1
        pair_ranks = [NO_RANK] * m
        pair_ranks[0::2] = map(pair_rank, memoryview(piece[: ((m + 1) // 2) * 2]).cast("H"))
        pair_ranks[1::2] = map(pair_rank, memoryview(piece[1 : 1 + (m // 2) * 2]).cast("H"))
        parts = list(map(_SINGLE_BYTES.__getitem__, piece))
        get = self.ranks.get
        inf = NO_RANK
        last = m - 1
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

    def encode_chunk(self, chunk: str) -> list[int]:
        """Token ids of one pre-token string, memoised. Do not mutate the returned list."""
        ids = self._cache.get(chunk)
        if ids is None:
            ids = self._encode_miss(chunk)
        return ids

    def _encode_miss(self, chunk: str) -> list[int]:
        piece = chunk.encode("utf-8")
        ranks = self.ranks
        rank = ranks.get(piece)
        if rank is not None:
            ids = [rank]
        elif len(piece) <= SHORT_PIECE:
            ids = list(map(ranks.__getitem__, self._scan(piece)))
        else:
            ids = list(map(ranks.__getitem__, self.merge(piece)))
        cache = self._cache
        if len(cache) >= self.cache_limit:
            cache.clear()
        cache[chunk] = ids
        return ids

    def encode_chunks(self, chunks: list[str]) -> list[int]:
        """Token ids of many pre-tokens, concatenated (the hot loop of plain encoding)."""
        get = self._cache.get
        miss = self._encode_miss
        out: list[int] = []
        extend = out.extend
        for chunk in chunks:
            ids = get(chunk)
            if ids is None:
                ids = miss(chunk)
            extend(ids)
        return out

    def clear_cache(self) -> None:
        """Forget memoised pre-tokens (benchmarks use it for cold-cache runs)."""
        self._cache.clear()

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
