"""Keystroke updates at word granularity, for tokenizers with exact resume points.

A SentencePiece Unigram document's segments can be long: a segment ends only at a line start
no token crosses, and SentencePiece's ``▁`` joins each line's first word to the newline before
it (a 1 MB document: 787 segments, up to 48k characters). Re-encoding whole segments around a
keystroke then costs up to ~100 ms. Here the re-encoded window runs from the last word start
before the edit whose state is known (the float32 running path score there, one of the
segments' resume points) to a word start after the edit where the new tokens meet the old ones
again; the segments holding the window get the old tokens before it, the window's tokens and
the old tokens after it (shifted by the edit's length change), and are cut into segments again.

Why that is the whole-text encode (up to near ties after the window): a word start is a node
every segmentation passes through (no piece crosses a ``▁`` after its first character), so
the tokens before it depend only on the text before it, and the tokens after it only on the
text after it and the score there. Before the window nothing changed; inside it the tokens are
decided from the exact score; after it the text is the old one, decided from the old score:
exact when the score at the meeting point is the old one, otherwise exact up to the meeting
point (:attr:`~explorer.workers.docstore.DocTokens.exact_until`), as a segment update that
stops growing is.
"""

from __future__ import annotations

from bisect import bisect_left

import numpy as np

from explorer.engine.compact import (
    CompactTokens,
    ResumePoints,
    float_array,
    int32_array,
)
from explorer.engine.encoding import Token
from explorer.engine.soft_cuts import start_before
from explorer.workers.docstore import (
    Change,
    DocTokens,
    changed_lines_of,
    cut_segments,
    spliced_totals,
)

MAX_WORD_WINDOW = 8192
"""A window longer than this (a long line without word starts, a big paste) is left to the
segment update."""
TAIL_CHARS = 64
"""The window reaches at least this far past the edit (then to the end of that line, when it
is near), so that a word start after the edit lies inside it."""


def update_words(base: DocTokens, text: str, p: int, s: int,
                 max_window: int = MAX_WORD_WINDOW) -> tuple[DocTokens, Change] | None:
    """The update of ``base`` to ``text`` (which differs from ``base.text`` only between
    the first ``p`` and last ``s`` code points) re-encoding the words around the edit, in a
    window of at most ``max_window`` code points.

    None when this does not apply: no exact state before the edit near enough, no meeting
    point after it, or the window's tokens do not meet the old ones (then the caller's
    segment update decides).
    """
    old = base.text
    if not base.segments or base.segments[0].points is None or not old or not text:
        return None
    delta = len(text) - len(old)
    e_new = len(text) - s
    start = _point_before(base, p)
    if start is None:
        return None
    pt, state = start
    ws = 0 if pt == 0 else start_before(old, max(0, pt - 1))
    we = _window_end(text, e_new)
    if we - ws > max_window:
        return None
    tokenizer = base.tokenizer
    window = text[ws:we]
    toks = tokenizer.encode_compact_resumed(window, None if state is None else (pt - ws, state))
    if toks.resume is None:
        return None
    # The region: the old segments holding [ws, we) (old coordinates [ws, we - delta)).
    ka = base.segment_of_offset(ws)
    kb = base.segment_of_offset(max(ws, we - delta - 1))
    r0, r1 = base.cp_starts[ka], base.cp_starts[kb + 1]
    old_ids, old_starts, old_ends = _region_tokens(base, ka, kb + 1)
    old_points, old_states = _region_points(base, ka, kb + 1)
    if old_points is None:
        return None
    win_points = np.frombuffer(toks.resume.offsets, np.int32).astype(np.int64) + ws
    win_states = np.frombuffer(toks.resume.states, np.float64)
    meet = ((len(text), len(text)) if we == len(text)
            else _meeting_point(win_points, old_points, e_new, delta))
    if meet is None:
        return None
    t, u = meet
    win_ids = np.frombuffer(toks.ids, np.int32)
    win_starts = np.frombuffer(toks.starts, np.int32).astype(np.int64) + ws
    win_ends = np.frombuffer(toks.ends, np.int32).astype(np.int64) + ws
    # The window's tokens in [t, u) must be the old ones there, shifted.
    a, b = np.searchsorted(win_starts, [t, u])
    c, d = np.searchsorted(old_starts, [t - delta, u - delta])
    if (b - a != d - c or not np.array_equal(win_ids[a:b], old_ids[c:d])
            or not np.array_equal(win_starts[a:b], old_starts[c:d] + delta)
            or not np.array_equal(win_ends[a:b], old_ends[c:d] + delta)):
        return None
    h = int(np.searchsorted(old_starts, pt))  # old tokens before the window's exact part
    w0 = int(np.searchsorted(win_starts, pt))
    if (h and old_ends[h - 1] > pt) or (w0 and win_ends[w0 - 1] > pt):
        return None  # (pt is a word start: nothing crosses it)
    ids = np.concatenate([old_ids[:h], win_ids[w0:a], old_ids[c:]])
    starts = np.concatenate([old_starts[:h], win_starts[w0:a], old_starts[c:] + delta]) - r0
    ends = np.concatenate([old_ends[:h], win_ends[w0:a], old_ends[c:] + delta]) - r0
    irregular = _region_irregular(base, ka, kb + 1, h, c, a - w0)
    for i, tok in toks.irregular.items():
        if w0 <= i < a:
            irregular[h + i - w0] = tok
    head = np.searchsorted(old_points, pt)
    tail = np.searchsorted(old_points, t - delta)
    wa, wb = np.searchsorted(win_points, [pt, t])
    points = ResumePoints(
        int32_array(np.concatenate([old_points[:head], win_points[wa:wb],
                                     old_points[tail:] + delta]) - r0),
        float_array(np.concatenate([old_states[:head], win_states[wa:wb], old_states[tail:]])),
    )
    region_text = text[r0:r1 + delta]
    unknown = region_unknown_ids(base, ka, kb + 1, toks, ids)
    compact = CompactTokens(int32_array(ids), int32_array(starts), int32_array(ends),
                            irregular, unknown, points)
    new = cut_segments(region_text, compact, len(region_text))
    old_segs = base.segments[ka:kb + 1]
    totals = spliced_totals(base, old_segs, new)
    segments = base.segments[:ka] + new + base.segments[kb + 1:]
    doc = DocTokens(tokenizer, text, segments, totals, (base, ka, kb + 1, len(new)))
    # The score at the meeting point is the old one: everything after it is decided as before.
    converged = (wb < len(win_states) and tail < len(old_states)
                 and t - delta < base.exact_until and win_states[wb] == old_states[tail])
    if state is not None and pt >= base.exact_until:  # the start was not exact
        doc.exact_until = min(base.exact_until, pt)
    elif converged:
        doc.exact_until = base.exact_until + delta
    else:
        doc.exact_until = t
    change = Change(
        first_segment=ka,
        old_segments=kb + 1 - ka,
        new_segments=len(new),
        first_token=base.tok_starts[ka],
        old_tokens=base.tok_starts[kb + 1] - base.tok_starts[ka],
        new_tokens=len(ids),
        lines=None if not new else changed_lines_of(
            doc, (old_ids, old_starts, old_ends), (ids, starts + r0, ends + r0), delta,
            (p, e_new), doc.cp_starts[ka + len(new)]),
    )
    return doc, change


def _point_before(base: DocTokens, p: int) -> tuple[int, float | None] | None:
    """The last resume point strictly before ``p`` (document offset, state), at most
    ``MAX_WORD_WINDOW`` back; ``(0, None)`` for the document start; None when none."""
    k = base.segment_of_offset(p)
    while k >= 0 and base.cp_starts[k + 1] > p - MAX_WORD_WINDOW:
        seg = base.segments[k]
        if seg.points is None:
            return None
        shift = base.cp_starts[k] - seg.origin
        i = bisect_left(seg.points.offsets, p - shift) - 1
        if i >= 0:
            return seg.points.offsets[i] + shift, seg.points.states[i]
        k -= 1
    if k < 0:
        return 0, None
    return None


def _window_end(text: str, e_new: int) -> int:
    """Where the window ends: ``TAIL_CHARS`` past the edit, then to that line's end when it
    is near (a whole line keeps the normalizer's context), else a little further."""
    at = min(len(text), e_new + TAIL_CHARS)
    nl = text.find("\n", at, at + 1024)
    return min(len(text), at + 512) if nl == -1 else nl + 1


def _meeting_point(win_points: np.ndarray, old_points: np.ndarray, e_new: int,
                   delta: int) -> tuple[int, int] | None:
    """``(t, u)``: ``t`` the first word start after the edit in both the window and the old
    document, ``u`` the window's last one (after ``t``): tokens in ``[t, u)`` are compared.
    None when there are not two such word starts."""
    after = win_points[win_points > e_new]
    # (both ascending: a binary search per point, not isin's sort of both)
    at = np.minimum(np.searchsorted(old_points, after - delta), max(len(old_points) - 1, 0))
    common = after[old_points[at] == after - delta] if len(old_points) else after[:0]
    if len(common) < 2:
        return None
    return int(common[0]), int(after[-1])


def _region_tokens(base: DocTokens, lo: int, hi: int) -> tuple[np.ndarray, ...]:
    """Ids, starts and ends (document offsets) of the tokens of segments ``[lo, hi)``."""
    segs = base.segments[lo:hi]
    shifts = [base.cp_starts[lo + i] - seg.origin for i, seg in enumerate(segs)]
    ids = np.concatenate([np.frombuffer(seg.ids, np.int32) for seg in segs])
    starts = np.concatenate([np.frombuffer(seg.starts, np.int32).astype(np.int64) + d
                             for seg, d in zip(segs, shifts, strict=True)])
    ends = np.concatenate([np.frombuffer(seg.ends, np.int32).astype(np.int64) + d
                           for seg, d in zip(segs, shifts, strict=True)])
    return ids, starts, ends


def _region_points(base: DocTokens, lo: int,
                   hi: int) -> tuple[np.ndarray, np.ndarray] | tuple[None, None]:
    """Resume points (document offsets, states) of segments ``[lo, hi)``; None when a
    segment has none."""
    offsets, states = [], []
    for k in range(lo, hi):
        seg = base.segments[k]
        if seg.points is None:
            return None, None
        shift = base.cp_starts[k] - seg.origin
        offsets.append(np.frombuffer(seg.points.offsets, np.int32).astype(np.int64) + shift)
        states.append(np.frombuffer(seg.points.states, np.float64))
    return np.concatenate(offsets), np.concatenate(states)


def _region_irregular(base: DocTokens, lo: int, hi: int, h: int, c: int,
                      mid: int) -> dict[int, Token]:
    """The irregular tokens of segments ``[lo, hi)`` the update keeps, re-indexed (their
    spans are the arrays': :func:`~explorer.engine.compact.placed`): region indices below
    ``h`` stay, those from ``c`` on follow the ``mid`` tokens of the window."""
    out: dict[int, Token] = {}
    first = base.tok_starts[lo]
    for k in range(lo, hi):
        seg = base.segments[k]
        if seg.irregular is None:
            continue
        for j, tok in seg.irregular.items():
            i = base.tok_starts[k] - first + j
            if i < h:
                out[i] = tok
            elif i >= c:
                out[h + mid + i - c] = tok
    return out


def region_unknown_ids(base: DocTokens, lo: int, hi: int, toks: CompactTokens,
                 ids: np.ndarray) -> frozenset[int]:
    """Ids of regular tokens marked unknown among ``ids`` (to count unknown tokens): the
    window's, unless an old segment of ``[lo, hi)`` had such tokens too (a SentencePiece
    ``<unk>`` run is one, where the normalizer left its text as it was): then the ids
    themselves are looked at."""
    for seg in base.segments[lo:hi]:
        irregular = seg.irregular.values() if seg.irregular is not None else ()
        if seg.unknown > sum(1 for t in irregular if t.unknown):
            return frozenset(i for i in np.unique(ids).tolist() if base.table.flags(i)[1])
    return toks.unknown_ids
