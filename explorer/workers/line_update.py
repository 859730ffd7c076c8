"""Keystroke updates inside one long segment, for tokenizers without exact resume points.

A segment ends only at a line start no token crosses, so a line of megabytes (minified
JSON, a one-line paste) is one segment, and the segment update re-encoded all of it at
every keystroke (a 9 MB line: ~2 s of cl100k). Here only a window around the edit is
encoded, from a soft cut :data:`MARGIN` before it to one :data:`MARGIN` after it
(:mod:`~explorer.engine.soft_cuts`), and its tokens replace the old ones between two
stretches where the window and the old tokens *agree* (the same ids and spans, no token
crossing either end, as :func:`~explorer.workers.docstore.agrees` checks a context
segment): one before the edit (the window's start no longer matters there) and one after
it (the edit no longer does). Otherwise the caller's segment update decides.

Pure Python (no Qt).
"""

from __future__ import annotations

from array import array
from bisect import bisect_left

import numpy as np

from explorer.engine.compact import CompactTokens, clean_cut, int32_array
from explorer.engine.soft_cuts import end_after, start_before
from explorer.workers.docstore import (
    Change,
    DocTokens,
    Segment,
    cut_segments,
    same_tokens,
    spliced_totals,
)
from explorer.workers.word_update import region_unknown_ids

__all__ = ["INSIDE_MIN", "MARGIN", "update_inside"]

INSIDE_MIN = 16_384
"""A segment at least this long (code points) is updated inside (a keystroke in lines of
47k characters re-encoded the five lines around it, ~100 ms with cl100k, instead of
~20k characters)."""
MARGIN = 8_192
"""Text encoded on each side of the edit."""
STRETCH = 2_048
"""How far the window and the old tokens must agree on each side (from a place where a
token of both starts, to one where one of both starts)."""


def update_inside(base: DocTokens, text: str, p: int, s: int,
                  max_window: int | None = None) -> tuple[DocTokens, Change] | None:
    """The update of ``base`` to ``text`` (which differs from ``base.text`` only between
    the first ``p`` and last ``s`` code points) re-encoding a window around the edit inside
    its segment; None when the edit is not well inside one segment of at least
    :data:`INSIDE_MIN`, the window would pass ``max_window``, or the tokens do not agree
    on both sides."""
    old = base.text
    delta = len(text) - len(old)
    e_old, e_new = len(old) - s, len(text) - s
    k = base.segment_of_offset(p)
    seg = base.segments[k]
    a, b = base.cp_starts[k], base.cp_starts[k + 1]
    if b - a < INSIDE_MIN or p < a + MARGIN or e_old > b - MARGIN:
        return None
    ws = start_before(text, p - MARGIN)
    we = end_after(text, e_new + MARGIN)
    if ws < a or we > b + delta or (max_window is not None and we - ws > max_window):
        return None
    win = base.tokenizer.encode_compact(text[ws:we])
    shift = seg.origin - a  # a document offset before the edit plus shift: a segment offset
    head = _agreeing(win, ws, seg, shift, ws + STRETCH, p)
    tail = _agreeing(win, ws, seg, shift - delta, e_new + STRETCH, we - STRETCH)
    if head is None or tail is None:
        return None
    # old tokens before `head`, the window's from `head` to `tail`, the old ones after
    old_starts = np.frombuffer(seg.starts, np.int32)
    i = int(np.searchsorted(old_starts, head + shift))
    j = int(np.searchsorted(old_starts, tail + shift - delta))
    w0, w1 = bisect_left(win.starts, head - ws), bisect_left(win.starts, tail - ws)
    origin = seg.origin  # (the old tokens' offsets minus it: offsets into the segment)

    def spliced(old: array, new: array, moved: bool) -> np.ndarray:
        """The old field before ``i``, the window's ``[w0, w1)``, the old one from ``j``;
        ``moved``: offsets, then made offsets into the new segment's text."""
        out = np.concatenate([np.frombuffer(old, np.int32)[:i],
                              np.frombuffer(new, np.int32)[w0:w1],
                              np.frombuffer(old, np.int32)[j:]])
        if moved:  # (in place: one pass per part)
            out[:i] -= origin
            out[i:i + w1 - w0] += ws - a
            out[i + w1 - w0:] += delta - origin
        return out

    ids = spliced(seg.ids, win.ids, False)
    starts, ends = spliced(seg.starts, win.starts, True), spliced(seg.ends, win.ends, True)
    irregular = {}
    for n, tok in (seg.irregular or {}).items():
        if n < i:
            irregular[n] = tok
        elif n >= j:
            irregular[i + w1 - w0 + n - j] = tok
    for n, tok in win.irregular.items():
        if w0 <= n < w1:
            irregular[i + n - w0] = tok
    seg_text = text[a:b + delta]
    toks = CompactTokens(int32_array(ids), int32_array(starts), int32_array(ends),
                         irregular, region_unknown_ids(base, k, k + 1, win, ids))
    new = cut_segments(seg_text, toks, len(seg_text))
    doc = DocTokens(base.tokenizer, text, base.segments[:k] + new + base.segments[k + 1:],
                    spliced_totals(base, [seg], new), (base, k, k + 1, len(new)))
    doc.exact_until = min(base.exact_until, ws)
    change = Change(
        first_segment=k, old_segments=1, new_segments=len(new),
        first_token=base.tok_starts[k], old_tokens=len(seg.ids), new_tokens=len(ids),
        lines=(doc.line_of(min(head, p)), doc.line_of(max(tail, e_new + 1) - 1) + 1),
    )
    return doc, change


def _agreeing(win: CompactTokens, ws: int, seg: Segment, shift: int, least: int,
              most: int) -> int | None:
    """A place in ``[least, most]`` (document offsets of the new text) where a stretch of
    :data:`STRETCH` the window (encoded from ``ws``) and the old segment's tokens (a new
    offset plus ``shift`` is a segment offset) agree on begins; None when the first
    candidate does not agree."""
    begin = clean_cut(win, least - ws)
    if begin is None:
        return None
    end = clean_cut(win, begin + STRETCH)
    if end is None or ws + end > most:
        return None
    if not same_tokens(win, begin, seg, ws + begin + shift, end - begin):
        return None
    return ws + begin
