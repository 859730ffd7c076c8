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
from itertools import repeat

from explorer.engine.bpe.queue import NO_RANK, merge_by_scan, merge_with_queue
from explorer.engine.bpe.trace import MergeStep, trace_merges
from explorer.engine.errors import VocabFormatError

SHORT_PIECE = 48
"""Pieces up to this many bytes merge with the min-scan; longer ones with the queue."""

_SINGLE_BYTES = [bytes([b]) for b in range(256)]


class BytePairModel:
    """Ranks-based BPE (``.tiktoken``-style: rank of a merged token decides its priority)."""

    __slots__ = ("_cache", "_rank_of", "cache_limit", "ranks")

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
        self._cache: dict[str, list[int]] = {}
        self.cache_limit = cache_limit

    def merge(self, piece: bytes) -> list[bytes]:
        """The tokens (as bytes) of one pre-token, by merging only (no whole lookup)."""
        symbols = [_SINGLE_BYTES[b] for b in piece]
        if len(piece) <= SHORT_PIECE:
            return merge_by_scan(symbols, self.ranks)
        return merge_with_queue(symbols, self._rank_of)

    def encode_piece(self, piece: bytes) -> list[int]:
        """Token ids of one pre-token's bytes (whole lookup, then merges). Not memoised."""
        rank = self.ranks.get(piece)
        if rank is not None:
            return [rank]
        ranks = self.ranks
        return [ranks[p] for p in self.merge(piece)]

    def encode_chunk(self, chunk: str) -> list[int]:
        """Token ids of one pre-token string, memoised. Do not mutate the returned list."""
        ids = self._cache.get(chunk)
        if ids is None:
            ids = self._encode_miss(chunk)
        return ids

    def _encode_miss(self, chunk: str) -> list[int]:
        # One call per cache miss, the scan inlined: misses dominate on non-English text.
        piece = chunk.encode("utf-8")
        ranks = self.ranks
        get = ranks.get
        rank = get(piece)
        if rank is not None:
            ids = [rank]
        elif len(piece) > SHORT_PIECE:
            ids = list(map(ranks.__getitem__,
                           merge_with_queue(list(map(_SINGLE_BYTES.__getitem__, piece)),
                                            self._rank_of)))
        else:
            parts = list(map(_SINGLE_BYTES.__getitem__, piece))
            inf = NO_RANK
            pair_ranks = list(map(get, map(bytes.__add__, parts, parts[1:]), repeat(inf)))
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
            ids = list(map(ranks.__getitem__, parts))
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
