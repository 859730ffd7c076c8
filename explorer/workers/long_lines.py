"""Texts with very long lines (minified JSON, a one-line paste) encoded in bounded pieces.

The document's encoders cut a text at line starts: a window ends at one, a context starts at
one, a child's chunk starts at one. A line of megabytes then made one encode of megabytes
(a 9 MB minified JSON line: one cl100k encode holding ~500 MB of temporaries; a Unigram
model's window re-encoded from the start at each doubling, 10 s). Here such places may
fall inside a line (the document's segments still end only at line starts, so a one-line
text gives the child process nothing to take over):

- :func:`~explorer.engine.soft_cuts.start_before` and
  :func:`~explorer.engine.soft_cuts.end_after` give the line start or end near a place
  when there is one within reach, else a *soft cut* (the start of a word after a space);
- :func:`encode_joined` encodes a long text in chunks from its end back
  (:func:`~explorer.workers.tail_chunks.encode_backward`) and joins them only where two
  encodes agree (the rule every window follows), else encodes it whole;
- :func:`encode_long` encodes a long text with a tokenizer that has exact resume
  points (a SentencePiece Unigram model) a chunk at a time, each going on from the exact
  state at the last one's last word start: the whole-text encode by construction.

A soft cut is only ever a context's start or end, or a join place that two encodes agree
on: the tokens are the whole-text encode's either way; soft cuts only make the agreement
likely.

Pure Python (no Qt).
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections.abc import Callable

from explorer.engine.compact import CompactTokens, ResumePoints, int_array, shifted_array
from explorer.engine.soft_cuts import SOFT_REACH, end_after, start_before
from explorer.engine.tokenizer import Tokenizer
from explorer.workers.tail_chunks import encode_backward, join_arrays, joined_chunks

__all__ = ["LONG_CHUNK", "LONG_TEXT", "encode_joined", "encode_long", "has_exact_points"]

LONG_TEXT = 1 << 20
"""A window longer than this (code points) is encoded in chunks of :data:`LONG_CHUNK`."""
LONG_CHUNK = 1 << 18
"""Code points per chunk of a long window."""
PROBE = "a b"
"""Encoded to ask whether a tokenizer has exact resume points."""
CONTEXT_CHARS = 64
"""Text before a resume point a resumed chunk is encoded with (at least: from a line start
or soft cut before it), for the normalizer's context."""


def encode_joined(encode: Callable[[str], CompactTokens], text: str,
                  chunk: int | None = None) -> CompactTokens:
    """``encode(text)``, computed in chunks of about ``chunk`` code points joined where two
    encodes agree (:func:`~explorer.workers.tail_chunks.encode_backward`); one encode of the
    whole text when a join does not agree (a pre-token longer than the join's stretch)."""
    chunk = chunk or LONG_CHUNK
    if len(text) <= max(LONG_TEXT, chunk):
        return encode(text)
    chunks = list(encode_backward(encode, text, chunk=chunk, seconds=None))
    if not chunks or min(c[0] for c in chunks) != 0:
        return encode(text)
    return joined_chunks(chunks)[2]


def encode_long(tokenizer: Tokenizer, text: str, resume: tuple[int, float] | None,
                chunk: int | None = None) -> CompactTokens:
    """``tokenizer.encode_compact_resumed(text, resume)``, in chunks when ``text`` is longer
    than :data:`LONG_TEXT`. With exact resume points (a SentencePiece Unigram model) each
    next chunk is encoded from a cut before the last one's last resume point well before
    its end (context), resumed there with the exact state, and its tokens taken from
    there on: the whole-text encode by construction.
    Without (every other tokenizer, or the point was not found), the chunks are joined by
    agreement (:func:`encode_joined`)."""
    chunk = chunk or LONG_CHUNK
    if len(text) <= max(LONG_TEXT, chunk):
        return tokenizer.encode_compact_resumed(text, resume)
    if not has_exact_points(tokenizer):
        return encode_joined(tokenizer.encode_compact, text, chunk)
    end = end_after(text, chunk + (resume[0] if resume is not None else 0))
    toks = tokenizer.encode_compact_resumed(text[:end], resume)
    if toks.resume is None:  # (the point was not found: the encode is not exact)
        return encode_joined(tokenizer.encode_compact, text, chunk)
    parts: list[_Part] = []
    shift, first, last = 0, 0, -1
    while end < len(text):
        assert toks.resume is not None
        offsets = toks.resume.offsets  # (from `shift`)
        # the last point well before the chunk's end (its last words may change with more
        # text), and past the last join
        k = bisect_left(offsets, end - shift - SOFT_REACH // 2) - 1
        if k < 0 or offsets[k] + shift <= last:
            return tokenizer.encode_compact_resumed(text, resume)
        at, state = offsets[k] + shift, toks.resume.states[k]
        parts.append((toks, shift, first, at))
        begin = start_before(text, max(0, at - CONTEXT_CHARS))
        end = end_after(text, min(len(text), at + chunk))
        toks = tokenizer.encode_compact_resumed(text[begin:end], (at - begin, state))
        if toks.resume is None:
            return tokenizer.encode_compact_resumed(text, resume)
        shift, first, last = begin, at, at
    parts.append((toks, shift, first, len(text) + 1))
    return _joined(parts)


def has_exact_points(tokenizer: Tokenizer) -> bool:
    """The tokenizer has exact resume points (a SentencePiece Unigram model: see
    :meth:`~explorer.engine.tokenizer.Tokenizer.encode_compact_resumed`)."""
    return tokenizer.encode_compact_resumed(PROBE, None).resume is not None


_Part = tuple[CompactTokens, int, int, int]
"""``(tokens, shift, first, stop)``: an encode of the text from ``shift`` (its offsets count
from there) whose tokens starting in ``[first, stop)`` (text offsets) are the text's."""


def _joined(parts: list[_Part]) -> CompactTokens:
    """One :class:`CompactTokens` of the ``parts`` of :func:`encode_long`, joined once (a
    join per chunk copied everything before it again: ~1 s of a 9 MB line's 12 s)."""
    pieces, irregulars, shifts = [], [], []
    offsets, states = int_array(), array("d")
    unknown: frozenset[int] = frozenset()
    for toks, shift, first, stop in parts:
        n0, n1 = bisect_left(toks.starts, first - shift), bisect_left(toks.starts, stop - shift)
        pieces.append((toks.ids[n0:n1], toks.starts[n0:n1], toks.ends[n0:n1]))
        irregulars.append({j - n0: tok for j, tok in toks.irregular.items() if n0 <= j < n1})
        shifts.append(shift)
        unknown |= toks.unknown_ids
        assert toks.resume is not None
        p0 = bisect_left(toks.resume.offsets, first - shift)
        p1 = bisect_left(toks.resume.offsets, stop - shift)
        offsets.extend(shifted_array(toks.resume.offsets[p0:p1], shift))
        states.extend(toks.resume.states[p0:p1])
    out = join_arrays(shifts, pieces, irregulars)
    out.unknown_ids = unknown
    out.resume = ResumePoints(offsets, states)
    return out
