"""Turning one pre-token's ids into tokens with spans, fast enough for whole documents.

A *layout* is the per-chunk tuple of ``(id, piece, token_bytes, rel_start, rel_end)``:
code-point spans relative to the chunk, where a token holding part of a character's UTF-8
bytes spans every character its bytes touch. Layouts are memoised per chunk string by the
tokenizer, so a repeated word costs one dict lookup plus its Token objects.

``make_token`` is :func:`explorer.engine.encoding.ranked_token` (a Token built without the
dataclass constructor's argument handling). :func:`gc_paused` keeps the
cyclic GC from rescanning the token list while a large document is encoded.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from explorer.engine.encoding import ranked_token
from explorer.engine.gc_pause import gc_paused

__all__ = ["GC_PAUSE_CHARS", "Layout", "chunk_layout", "gc_paused"]

Layout = tuple[tuple[int, str, bytes, int, int], ...]

GC_PAUSE_CHARS = 4096
"""Texts at least this long are encoded with the cyclic GC paused (see :func:`gc_paused`)."""


def chunk_layout(chunk: str, ids: Sequence[int], id_bytes: Sequence[bytes | None],
                 piece: Callable[[int], str]) -> Layout:
    """The layout of ``chunk`` encoded as ``ids`` (ordinary tokens only)."""
    if len(ids) == 1:
        tid = ids[0]
        return ((tid, piece(tid), id_bytes[tid], 0, len(chunk)),)  # type: ignore[return-value]
    out: list[tuple[int, str, bytes, int, int]] = []
    if chunk.isascii():
        pos = 0
        for tid in ids:
            b: bytes = id_bytes[tid]  # type: ignore[assignment]
            out.append((tid, piece(tid), b, pos, pos + len(b)))
            pos += len(b)
        return tuple(out)
    char_of: list[int] = []
    for i, ch in enumerate(chunk):
        char_of.extend([i] * len(ch.encode("utf-8")))
    bpos = 0
    for tid in ids:
        b = id_bytes[tid]  # type: ignore[assignment]
        n = len(b)
        out.append((tid, piece(tid), b, char_of[bpos], char_of[bpos + n - 1] + 1))
        bpos += n
    return tuple(out)


make_token = ranked_token
"""``make_token(id, piece, token_bytes, start, end)``: an ordinary ranked token."""
