"""A child's part of a big document encoded from its end back, one chunk at a time.

The window's thread encodes a big document from its start; a child process encodes the
rest (:mod:`~explorer.workers.tail_encode`). Where the two should meet depends on both
paces, on how long the window takes to start and on how many tokens the child must send
back, none of which is known when the child starts: on the 10 MB English document the
best place was three tenths in, on the all-language UDHR text of the same size ~0.44 (cl100k
there: 2.1-2.2 s from 0.3, 1.7-1.9 s from 0.42). So the child encodes its part in chunks from
the last one back (:func:`encode_backward`), sends each when it is done, and stops when the
thread, which reports its place, has reached the chunk it would do next: the two meet
wherever their paces put them. The thread takes the chunks it has (:func:`joined_chunks`) at
its first window boundary past the lowest one's start, as it took one whole answer before.

Each chunk is encoded as one text from its start (a line start) to a little past the next
chunk's start, and *joined* to the next chunk only when both give the same tokens over a
stretch of :data:`JOIN_CHARS` past the next chunk's first :data:`JOIN_CHARS` (from and to
places where a token of both starts and none crosses): the chunk's tokens are kept up to
that stretch, the next one's from there on (a text's first tokens depend on its start: a
SentencePiece text starts with a dummy-prefix piece): the rule the
document's windows follow (:func:`~explorer.workers.docstore.agrees`). A chunk that does not
join ends the child's work; the thread then goes on alone up to the chunks already joined.

Pure Python (no Qt).
"""

from __future__ import annotations

import time
from array import array
from bisect import bisect_left
from collections.abc import Callable, Iterator, Sequence
from itertools import pairwise

import numpy as np

from explorer.engine.compact import CompactTokens, clean_cut, tokens_before
from explorer.engine.encoding import Token
from explorer.engine.soft_cuts import SOFT_REACH, end_after, start_before
from explorer.workers.docstore import same_tokens

__all__ = ["CHUNK_LIMITS", "CHUNK_SECONDS", "FIRST_CHUNK", "JOIN_CHARS", "Chunk",
           "encode_backward", "join_arrays", "joined_chunks"]

FIRST_CHUNK = 131_072
"""Code points of the first chunk (to a line start); later ones are sized by the pace the
last one was encoded at (:data:`CHUNK_SECONDS`)."""
CHUNK_SECONDS = 0.1
"""A chunk is about this much of the child's CPU: where the two meet, the thread waits for
at most about one (a slow tokenizer's fixed-size chunk, all-MiniLM's 262k characters, took
0.65 s), and each costs a join of a few thousand characters encoded twice."""
CHUNK_LIMITS = (32_768, 1_048_576)
"""The least and the most code points of a chunk."""
JOIN_CHARS = 2_048
"""At least this much of the next chunk (to a token start) must come out the same."""


Chunk = tuple[int, int, CompactTokens]
"""``(start, end, tokens)``: the tokens of ``text[start:end]`` (offsets from ``start``); the
next chunk's tokens count from ``end`` on (it starts before it)."""


def encode_backward(
    encode: Callable[[str], CompactTokens],
    text: str,
    floor: Callable[[], int] | None = None,
    chunk: int = FIRST_CHUNK,
    seconds: float | None = CHUNK_SECONDS,
) -> Iterator[Chunk]:
    """``text``'s tokens by ``encode`` (one whole-text encode), as :data:`Chunk` s from the
    last one back (each starts at a line start, or in a long line at a soft cut:
    :func:`~explorer.engine.soft_cuts.start_before`; the last ends at the text's end; each one's
    end is a little past the next one's start). ``floor``: asked before each chunk, the
    place the caller's own encode from the text's start has reached; a chunk whose middle
    it has passed is not encoded (nor any before it). Stops at a chunk that does not join. The
    first chunk is ``chunk`` code points (to a line start); with ``seconds``, each later one
    is what the last one's pace gives in that much CPU time (within :data:`CHUNK_LIMITS`)."""
    end = len(text)  # where the chunk before starts
    later: CompactTokens | None = None  # its tokens (offsets from `end`)
    later_size = 0  # and up to where they count
    while end > 0:
        start = 0 if end <= chunk else start_before(text, end - chunk, chunk // 2)
        if floor is not None and floor() >= start + (end - start) // 2:
            return
        began = time.process_time()
        if later is None:
            toks, cover = encode(text[start:end]), end
        else:
            cover = end + _cut_or(later, JOIN_CHARS, later_size)
            join = end + _cut_or(later, cover - end + JOIN_CHARS, later_size)
            stop = _stop_after(text, join)
            toks = encode(text[start:stop])
            if not same_tokens(toks, cover - start, later, cover - end, join - cover):
                return
            toks = tokens_before(toks, cover - start)
        if seconds is not None:
            spent = time.process_time() - began
            pace = (end - start) / spent if spent > 0 else float(CHUNK_LIMITS[1])
            chunk = int(min(max(pace * seconds, CHUNK_LIMITS[0]), CHUNK_LIMITS[1]))
        yield start, cover, toks
        later, later_size = toks, cover - start
        end = start


def _cut_or(toks: CompactTokens, least: int, size: int) -> int:
    """:func:`~explorer.engine.compact.clean_cut`, else ``size`` (the chunk's end)."""
    cut = clean_cut(toks, least)
    return size if cut is None else cut


def _stop_after(text: str, join: int) -> int:
    """Where a chunk's encode stops past its join place: two line ends on (a window's last
    two lines may change: the join is before them); in a long line
    (:mod:`~explorer.workers.long_lines`), a soft cut :data:`JOIN_CHARS` on."""
    first = text.find("\n", join, join + SOFT_REACH)
    if first == -1:
        return end_after(text, join + JOIN_CHARS)
    second = text.find("\n", first + 1, first + 1 + SOFT_REACH)
    return end_after(text, join + JOIN_CHARS) if second == -1 else second + 1


def joined_chunks(chunks: Sequence[Chunk]) -> Chunk:
    """The :data:`Chunk` the ``chunks`` of :func:`encode_backward` (in any order) make
    together: each one's tokens up to its end, the next one's from there."""
    ordered = sorted(chunks, key=lambda c: c[0])
    first = ordered[0][0]
    skip = [0] + [bisect_left(toks.starts, cover - start)  # (the next one's tokens before
                  for (_, cover, _), (start, _, toks) in pairwise(ordered)]  # `cover` go)
    out = join_arrays([start - first for start, _, _ in ordered],
                      [(t.ids, t.starts, t.ends) for _, _, t in ordered],
                      [t.irregular for _, _, t in ordered], skip)
    out.unknown_ids = frozenset().union(*(t.unknown_ids for _, _, t in ordered))
    return first, ordered[-1][1], out


def join_arrays(shifts: Sequence[int], parts: Sequence[tuple[array, array, array]],
                irregulars: Sequence[dict[int, Token]],
                skips: Sequence[int] | None = None) -> CompactTokens:
    """One :class:`CompactTokens` of parts laid end to end: part ``k``'s ``(ids, starts,
    ends)`` from its token ``skips[k]`` on (0: all), its offsets moved by ``shifts[k]``, and
    its irregular tokens re-indexed (their spans are the arrays'). One field at a time, from views
    of the parts' arrays (a joined copy of all three held ~4x a 10 MB document tail's
    tokens at once: the window's peak); one numpy pass shifts them (a 6 MB text has ~20k
    segments, and a shifted copy of each took ~8% of a child's encode)."""
    skips = skips if skips is not None else [0] * len(parts)
    counts = np.array([len(ids) - skip for (ids, _, _), skip in zip(parts, skips, strict=True)],
                      np.int64)
    out = CompactTokens()
    for k, name in enumerate(("ids", "starts", "ends")):
        joined = np.concatenate([np.frombuffer(part[k], np.int32)[skip:]
                                 for part, skip in zip(parts, skips, strict=True)]
                                or [np.zeros(0, np.int32)])
        if k:
            joined += np.repeat(np.asarray(shifts, np.int32), counts)
        getattr(out, name).frombytes(joined.tobytes())
        del joined
    firsts = (np.cumsum(counts) - counts).tolist()
    for k, irregular in enumerate(irregulars):
        if irregular:
            base, skip = firsts[k], skips[k]
            out.irregular.update((base + j - skip, tok) for j, tok in irregular.items()
                                 if j >= skip)
    return out
