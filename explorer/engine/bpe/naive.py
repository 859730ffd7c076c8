"""The naive reference encoder: minbpe's recount loop, kept simple on purpose.

Each round recomputes the rank of every adjacent pair, merges the single best one (lowest
rank of the concatenation, leftmost on ties) and starts again: O(n^2) per pre-token, but
obviously right. Tests check the fast encoders against it; nothing else should call it.
"""

from __future__ import annotations

from collections.abc import Mapping


def naive_merge(piece: bytes, ranks: Mapping[bytes, int]) -> list[bytes]:
    """Split ``piece`` into the tokens tiktoken-semantics BPE produces, the slow way."""
    parts = [bytes([b]) for b in piece]
    while len(parts) > 1:
        best_rank: int | None = None
        best_at = -1
        for i in range(len(parts) - 1):
            rank = ranks.get(parts[i] + parts[i + 1])
            if rank is not None and (best_rank is None or rank < best_rank):
                best_rank, best_at = rank, i
        if best_rank is None:
            break
        parts[best_at : best_at + 2] = [parts[best_at] + parts[best_at + 1]]
    return parts


def naive_encode(piece: bytes, ranks: Mapping[bytes, int]) -> list[int]:
    """Token ids of ``piece`` (every single byte must be in ``ranks``)."""
    return [ranks[p] for p in naive_merge(piece, ranks)]
