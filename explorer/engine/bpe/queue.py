"""The BPE merge loop: llama.cpp's ranked bigram priority queue, generic over symbol type.

Algorithm (llama.cpp ``llm_tokenizer_bpe``; see /shared/seeds): the pre-token's initial
symbols sit in a doubly linked list (``prev``/``nxt`` index arrays); every adjacent pair with
a rank goes on a min-heap keyed by ``(rank, left index)``. Pop the smallest; skip it when
stale (one side already merged away, or grown since the entry was pushed: the two lengths no
longer add up); otherwise merge the right symbol into the left, unlink the right, and push
the new pairs with the left and right neighbours. Stop when the heap is empty.

The result is the tiktoken rule -- repeatedly merge the adjacent pair of lowest rank, the
leftmost on ties -- because every current adjacent pair is in the heap and the heap orders
equal ranks by position.

Reuse. :func:`merge_with_queue` knows nothing about vocabularies. Give it the initial symbols
(``bytes`` for byte-level BPE, ``str`` for merges-list or SentencePiece BPE; merging is ``+``)
and ``rank_of(left, right)`` returning the pair's priority (smaller merges first) or ``None``
when the pair never merges:

- tiktoken ranks: ``lambda a, b: ranks.get(a + b)`` (rank of the merged token);
- HF ``merges`` list: ``lambda a, b: merge_rank.get((a, b))`` then look ``a + b`` up in vocab;
- SentencePiece BPE: ``lambda a, b: -score[a + b] if a + b in score else None`` (highest
  score first; equal scores leftmost, as sentencepiece does).

Ranks may be ints or floats. The traced variant lives in :mod:`explorer.engine.bpe.trace`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from heapq import heappop, heappush
from itertools import repeat
from typing import TypeVar

S = TypeVar("S", bytes, str)
Rank = int | float
RankFn = Callable[[S, S], Rank | None]

NO_RANK = 1 << 62
"""Stand-in rank for "never merges" in the scan (larger than any real rank)."""


def merge_with_queue(symbols: Sequence[S], rank_of: Callable[[S, S], Rank | None]) -> list[S]:
    """Merge ``symbols`` by priority until no adjacent pair has a rank; return the parts."""
    n = len(symbols)
    if n < 2:
        return list(symbols)
    sym = list(symbols)
    size = [len(s) for s in sym]  # 0 = merged away
    nxt = list(range(1, n + 1))  # n = end of list
    prev = list(range(-1, n - 1))
    heap: list[tuple[Rank, int, int, int]] = []  # (rank, left, right, merged length)
    for i in range(n - 1):
        r = rank_of(sym[i], sym[i + 1])
        if r is not None:
            heap.append((r, i, i + 1, size[i] + size[i + 1]))
    heap.sort()  # a sorted list is a valid heap and cheaper than n pushes
    while heap:
        _, left, right, merged_len = heappop(heap)
        ls, rs = size[left], size[right]
        if not ls or not rs or ls + rs != merged_len:
            continue  # stale: a side was merged away or has grown since
        sym[left] = sym[left] + sym[right]
        size[left] = merged_len
        size[right] = 0
        after = nxt[right]
        nxt[left] = after
        if after < n:
            prev[after] = left
        before = prev[left]
        if before >= 0:
            r = rank_of(sym[before], sym[left])
            if r is not None:
                heappush(heap, (r, before, left, size[before] + merged_len))
        if after < n:
            r = rank_of(sym[left], sym[after])
            if r is not None:
                heappush(heap, (r, left, after, merged_len + size[after]))
    out: list[S] = []
    i = 0
    while i < n:
        out.append(sym[i])
        i = nxt[i]
    return out


def merge_by_scan(symbols: Sequence[bytes], ranks: dict[bytes, int]) -> list[bytes]:
    """The same merges for short byte pieces with a min-scan (C builtins beat the heap there).

    Keeps the rank of every adjacent pair in a list; ``min`` finds the best and ``index`` the
    leftmost occurrence; after a merge only the two neighbouring ranks change.
    """
    parts = list(symbols)
    get = ranks.get
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
    return parts

