"""The document's token store: segments of whole lines with their tokens as arrays.

:class:`DocTokens` is an immutable snapshot (text, segments, prefix sums for lookups);
:mod:`explorer.workers.doctokens` builds and updates it. Pure Python (no Qt).
"""

from __future__ import annotations

from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Generator, Iterable, Sequence
from dataclasses import dataclass
from itertools import accumulate
from typing import Protocol

import numpy as np

from explorer.engine.compact import (
    CompactTokens,
    ResumePoints,
    TokenTable,
    int_array,
    placed,
    shifted_array,
    token_table,
)
from explorer.engine.encoding import Token
from explorer.engine.tokenizer import Tokenizer


class Segment:
    """Whole lines of the document with the tokens covering exactly them, as arrays."""

    __slots__ = ("astral", "coarse", "ends", "ids", "irregular", "lines", "nbytes", "origin",
                 "points", "starts", "text", "unknown")

    def __init__(self, text: str, ids: array, starts: array, ends: array, origin: int,
                 irregular: dict[int, Token] | None = None,
                 unknown_ids: frozenset[int] = frozenset(),
                 points: ResumePoints | None = None) -> None:
        self.text = text
        self.coarse = False
        """Cut longer than the document's own segments (:data:`COARSE_SEGMENT_CHARS`): an
        edit near it cuts it again first (:func:`refined`)."""
        self.points = points
        """The tokenizer's exact resume points inside the segment (offsets like ``starts``:
        minus ``origin`` they are offsets into ``text``), valid in every document holding
        this segment (:func:`update_document` keeps that true); None: not known."""
        self.ids = ids
        self.starts = starts
        """Token starts; minus ``origin`` they are offsets into ``text`` (so are ``ends``)."""
        self.ends = ends
        self.origin = origin
        self.irregular = irregular or None
        """Local token index -> Token, for tokens that are not their vocabulary entry
        (:mod:`explorer.engine.compact`); None when there are none."""
        self.lines = text.count("\n")
        if text.isascii():
            self.astral, self.nbytes = 0, len(text)
        else:
            # (astral characters are the UTF-16 units beyond one per code point; C speed)
            self.astral = len(text.encode("utf-16-le", "surrogatepass")) // 2 - len(text)
            self.nbytes = len(text.encode("utf-8", "surrogatepass"))
        unknown = 0
        if unknown_ids and ids:  # (numpy: array.count makes an int per entry, and a
            held = np.frombuffer(ids, np.int32)  # SentencePiece <unk> run is a regular token)
            unknown = sum(int(np.count_nonzero(held == u)) for u in unknown_ids)
        if irregular:
            unknown += sum(1 for t in irregular.values() if t.unknown)
            unknown -= sum(1 for t in irregular.values() if t.id in unknown_ids)
        self.unknown = unknown

    @classmethod
    def from_tokens(cls, text: str, tokens: Sequence[Token], origin: int) -> Segment:
        """A segment holding ``tokens`` as they are (each kept whole: any tokenizer)."""
        return cls(text, int_array(t.id for t in tokens), int_array(t.start for t in tokens),
                   int_array(t.end for t in tokens), origin, dict(enumerate(tokens)))

    @property
    def utf16_len(self) -> int:
        """Length of the segment in UTF-16 code units."""
        return len(self.text) + self.astral

    @property
    def token_count(self) -> int:
        """Number of tokens in the segment."""
        return len(self.ids)


def empty_segment() -> Segment:
    """The segment of the empty document (no text, no tokens)."""
    return Segment("", int_array(), int_array(), int_array(), 0)


@dataclass(frozen=True, slots=True)
class Progress:
    """Progress of a first encode: code points done of total.

    After the first window, ``partial`` is the result so far (segments covering the start of
    the text, ``text`` the whole text): enough to paint what a freshly opened document shows.
    """

    done: int
    total: int
    partial: DocTokens | None = None


@dataclass(frozen=True, slots=True)
class Change:
    """What an update replaced: segments ``[first, first+old_count)`` became ``new_count``."""

    first_segment: int
    old_segments: int
    new_segments: int
    first_token: int
    old_tokens: int
    new_tokens: int
    full: bool = False
    same_first: bool = False
    """The first new segment is the old one unchanged (a context segment that agreed)."""
    same_last: bool = False
    """The last new segment is the old one unchanged."""
    lines: tuple[int, int] | None = None
    """Lines ``[first, stop)`` of the new document whose tokens are not the old ones (a
    superset: every line a token that changed touches); None: not known."""


class DocTokens:
    """An immutable snapshot: the document text, its segments and prefix sums for lookups."""

    __slots__ = ("byte_count", "cp_starts", "exact_until", "line_starts", "segments", "table",
                 "text", "tok_starts", "tokenizer", "u16_starts", "unknown_count")

    def __init__(self, tokenizer: Tokenizer, text: str, segments: list[Segment],
                 totals: tuple[int, int] | None = None,
                 splice: tuple[DocTokens, int, int, int] | None = None) -> None:
        """``splice=(base, lo, hi, count)``: ``segments`` are ``base``'s with ``[lo, hi)``
        replaced by ``count`` new ones; prefix sums are then spliced, not recomputed."""
        self.tokenizer = tokenizer
        self.table = token_table(tokenizer)
        """Rebuilds Token objects from the segments' arrays."""
        self.text = text
        self.segments = segments
        if totals is None:
            totals = (sum(s.nbytes for s in segments), sum(s.unknown for s in segments))
        self.byte_count, self.unknown_count = totals
        """UTF-8 length of the document and number of unknown tokens."""
        self.exact_until = 0
        """Code point before which the segments' resume points are the whole-text encode's
        exact states (and the tokens exact by construction: each window started from one
        and ended where the state was the old one again); 0 for tokenizers without
        points. :func:`encode_document` and :func:`update_document` set it."""
        if splice is None:
            self.cp_starts = prefix_sums(len(s.text) for s in segments)
            self.u16_starts = prefix_sums(s.utf16_len for s in segments)
            self.line_starts = prefix_sums(s.lines for s in segments)
            self.tok_starts = prefix_sums(len(s.ids) for s in segments)
            return
        base, lo, hi, count = splice
        new = segments[lo:lo + count]
        self.cp_starts = splice_sums(base.cp_starts, lo, hi, [len(s.text) for s in new])
        self.u16_starts = splice_sums(base.u16_starts, lo, hi, [s.utf16_len for s in new])
        self.line_starts = splice_sums(base.line_starts, lo, hi, [s.lines for s in new])
        self.tok_starts = splice_sums(base.tok_starts, lo, hi, [len(s.ids) for s in new])

    def changed_lines(self, change: Change) -> range:
        """Block numbers covered by the segments a :class:`Change` produced."""
        stop = change.first_segment + change.new_segments
        last = self.line_starts[stop] + (1 if stop >= len(self.segments) else 0)
        return range(self.line_starts[change.first_segment], max(last, 1 + self.line_starts[
            change.first_segment]))

    def line_of(self, offset: int) -> int:
        """0-based line (Qt block number) of code point ``offset``."""
        k = self.segment_of_offset(offset)
        return self.line_starts[k] + self.text.count("\n", self.cp_starts[k], offset)

    def repaint_lines(self, change: Change) -> range:
        """The lines whose tokens changed (:attr:`Change.lines`), else :meth:`changed_lines`
        without the lines of unchanged context segments at either end (their tokens,
        relative to their lines, are what they were)."""
        if change.lines is not None:
            return range(*change.lines)
        lines = self.changed_lines(change)
        first, stop = change.first_segment, change.first_segment + change.new_segments
        start, end = lines.start, lines.stop
        if change.same_first and stop - first >= 2:
            start = self.line_starts[first + 1]
        if change.same_last and stop - first >= 2 and stop < len(self.segments):
            end = self.line_starts[stop - 1]
        return range(start, max(start, end))

    @property
    def token_count(self) -> int:
        """Number of tokens in the document."""
        return self.tok_starts[-1]

    def token(self, index: int) -> tuple[Token, int]:
        """Token number ``index`` and the document code-point offset of its segment origin.

        The token's document span is ``token.start + shift, token.end + shift``. The Token is
        rebuilt from the arrays (see :mod:`explorer.engine.compact`).
        """
        k = bisect_right(self.tok_starts, index) - 1
        seg = self.segments[k]
        return self.segment_token(seg, index - self.tok_starts[k]), self.cp_starts[k] - seg.origin

    def segment_token(self, seg: Segment, j: int) -> Token:
        """Token ``j`` of segment ``seg`` (offsets relative to the segment's origin)."""
        if seg.irregular is not None:
            tok = seg.irregular.get(j)
            if tok is not None:
                return placed(tok, seg.starts[j], seg.ends[j])
        return self.table.make(seg.ids[j], seg.starts[j], seg.ends[j], seg.text, seg.origin)

    def flags(self, seg: Segment, j: int) -> tuple[bool, bool]:
        """``(special, unknown)`` of token ``j`` of segment ``seg``, without a Token."""
        if seg.irregular is not None:
            tok = seg.irregular.get(j)
            if tok is not None:
                return tok.special, tok.unknown
        return self.table.flags(seg.ids[j])

    def span(self, index: int) -> tuple[int, int]:
        """Document code-point span of token ``index``."""
        k = bisect_right(self.tok_starts, index) - 1
        seg = self.segments[k]
        j = index - self.tok_starts[k]
        shift = self.cp_starts[k] - seg.origin
        return seg.starts[j] + shift, seg.ends[j] + shift

    def token_id(self, index: int) -> int:
        """Id of token ``index``."""
        k = bisect_right(self.tok_starts, index) - 1
        return self.segments[k].ids[index - self.tok_starts[k]]

    def ids(self, limit: int | None = None) -> array:
        """Every token id in order (one array), or the first ``limit``."""
        out = int_array()
        for seg in self.segments:
            out += seg.ids
            if limit is not None and len(out) >= limit:
                return out[:limit]
        return out

    def count_id(self, token_id: int) -> int:
        """How many tokens have id ``token_id``."""
        return sum(seg.ids.count(token_id) for seg in self.segments)

    def first_index_of(self, token_id: int) -> int | None:
        """Index of the first token with id ``token_id``, or None."""
        for k, seg in enumerate(self.segments):
            if token_id in seg.ids:
                return self.tok_starts[k] + seg.ids.index(token_id)
        return None

    def segment_of_line(self, line: int) -> int:
        """Index of the segment holding 0-based line ``line`` (a Qt block number)."""
        return max(0, min(len(self.segments) - 1, bisect_right(self.line_starts, line) - 1))

    def segment_of_offset(self, offset: int) -> int:
        """Index of the segment holding code point ``offset``."""
        return max(0, min(len(self.segments) - 1, bisect_right(self.cp_starts, offset) - 1))

    def token_at(self, offset: int) -> int | None:
        """Index of the first token whose span contains code point ``offset``."""
        if not self.segments:
            return None
        k = self.segment_of_offset(offset)
        seg = self.segments[k]
        local = offset - self.cp_starts[k] + seg.origin
        starts, ends = seg.starts, seg.ends
        first = bisect_right(starts, local)  # tokens are in text order
        while first > 0 and ends[first - 1] > local:  # back to the first token containing it
            first -= 1
        for i in range(first, len(starts)):
            if starts[i] > local:
                break
            if local < ends[i]:
                return self.tok_starts[k] + i
        return None

    def tokens(self) -> Generator[tuple[Token, int, int], None, None]:
        """Every token with its document span, in order (each Token rebuilt: slow on a big
        document; prefer :meth:`ids`, :meth:`span`)."""
        for k, seg in enumerate(self.segments):
            shift = self.cp_starts[k] - seg.origin
            for j in range(len(seg.ids)):
                tok = self.segment_token(seg, j)
                yield tok, tok.start + shift, tok.end + shift


def spliced_totals(base: DocTokens, old: Sequence[Segment],
                   new: Sequence[Segment]) -> tuple[int, int]:
    """``(byte_count, unknown_count)`` of ``base`` with segments ``old`` replaced by ``new``."""
    return (base.byte_count + sum(x.nbytes for x in new) - sum(x.nbytes for x in old),
            base.unknown_count + sum(x.unknown for x in new) - sum(x.unknown for x in old))


def prefix_sums(sizes: Iterable[int]) -> array:
    """Prefix sums ``[0, s0, s0+s1, ...]`` of ``sizes`` (an ``array('q')``)."""
    return array("q", accumulate(sizes, initial=0))


def splice_sums(sums: array, lo: int, hi: int, sizes: list[int]) -> array:
    """Prefix sums with the entries of items ``[lo, hi)`` replaced by items of ``sizes``.

    The entries after the edit move by one amount: shifted with numpy in one pass over the
    array's memory (a keystroke in a 10 MB document shifts ~200k entries per sum, ~8 ms
    one Python int at a time)."""
    head = sums[:lo + 1]
    mid = array("q", accumulate(sizes, initial=head[-1]))[1:]
    shift = (mid[-1] if mid else head[-1]) - sums[hi]
    tail = sums[hi + 1:]
    if shift and tail:
        tail = array("q", (np.frombuffer(tail, dtype=np.int64) + shift).tobytes())
    return head + mid + tail


SEGMENT_CHARS = 256
"""A segment holds at least this many characters (but a window's last): fewer, bigger
segments than one per line. A segment is an object with its own text and three arrays, so
one per line of a 10 MB document (231k of them) cost ~100 MB and a quarter of its first
encode; an edit re-encodes its segment and the two around it, ~1 kB at this size, which
costs a keystroke less than splicing 231k-entry prefix sums (docs/benchmarks.md)."""


COARSE_SEGMENT_CHARS = 4_096
"""The least length of the segments of a big document's part that a child process encoded
(:func:`~explorer.workers.doctokens.encode_document` takes them at once, while only the
window's thread works: each segment is an object made there, ~10 us). They are marked
:attr:`Segment.coarse`, and an edit near one cuts it again at :data:`SEGMENT_CHARS` first
(:func:`refined`: the same tokens), so its keystrokes re-encode what they would have."""


def cut_segments(text: str, toks: CompactTokens, limit: int, begin: int = 0,
                 least: int | None = None, *, consume: bool = False,
                 clear_to: int = 0, coarse: bool = False) -> list[Segment]:
    """Split ``text[begin:limit]`` into segments at the line starts no token crosses, each
    at least ``least`` (None: :data:`SEGMENT_CHARS`) long but the last.

    ``toks`` have offsets into ``text``; ``begin`` is 0 or a safe cut (tokens before it are
    context and dropped). When ``limit < len(text)`` the result stops at ``limit`` when it is
    a safe cut (the segment before it may then be shorter), else at the last safe line start
    before it that leaves a segment of at least the minimum; otherwise the remainder is the
    last segment.

    ``consume``: ``toks`` is not used again: the segments are made from the last one back,
    each one's tokens cut off ``toks``' arrays once copied (a shrunk array gives its end
    back), so the tokens are not held twice (a 10 MB document's tail of a million tokens
    from the helper process).

    ``clear_to``: the caller knows no line start before this offset is a safe cut (the
    tokens there are an earlier try's, which had none): they are not looked at again.

    ``coarse``: the segments are marked :attr:`Segment.coarse` (``least`` is then longer
    than the document's own).
    """
    starts, ends, ids = toks.starts, toks.ends, toks.ids
    irr = sorted(toks.irregular)
    out: list[Segment] = []

    def segment(seg_text: str, a: int, b: int, origin: int) -> Segment:
        return _segment(toks, irr, seg_text, a, b, origin)

    seg_start, tok_start = begin, bisect_left(starts, begin) if begin else 0
    if least is None:
        least = SEGMENT_CHARS
    cuts, firsts = _safe_cuts(text, starts, ends, max(begin, clear_to),
                              min(limit, len(text) - 1), tok_start)
    # Greedy: each segment ends at the first safe cut at least `least` past its start (a
    # search per segment, not a step per line: a 6 MB part has 160k safe cuts, 21k segments).
    spans: list[tuple[int, int, int, int]] = []  # (text start, text end, first, past last)
    k, n = 0, len(cuts)
    while True:
        k = bisect_left(cuts, seg_start + least, k)
        if k >= n:
            break
        spans.append((seg_start, cuts[k], tok_start, firsts[k]))
        seg_start, tok_start = cuts[k], firsts[k]
        k += 1
    if n and cuts[-1] == limit and seg_start != limit:  # (the caller's end is always kept;
        spans.append((seg_start, limit, tok_start, firsts[-1]))
        seg_start, tok_start = limit, firsts[-1]  # only the last safe cut can be it)
    if limit >= len(text) and (seg_start < len(text) or len(ids) > tok_start):
        spans.append((seg_start, len(text), tok_start, len(ids)))
    if not consume:
        out = [segment(text[a:b], first, past, a) for a, b, first, past in spans]
    else:
        for a, b, first, past in reversed(spans):
            out.append(segment(text[a:b], first, past, a))
            for array_ in (ids, starts, ends):
                del array_[first:]
        out.reverse()
    if coarse:
        for seg in out:
            seg.coarse = True
    return out


def refined(base: DocTokens, lo: int, hi: int) -> DocTokens:
    """``base`` with its coarse segments among ``[lo, hi)`` (:attr:`Segment.coarse`) cut
    again at the document's own length (the same text and tokens: prefix sums spliced), or
    ``base`` itself when none of them is coarse."""
    segments = base.segments
    lo, hi = max(0, lo), min(len(segments), hi)
    if not any(seg.coarse for seg in segments[lo:hi]):
        return base
    new: list[Segment] = []
    for seg in segments[lo:hi]:
        new.extend(_recut(seg, base.table) if seg.coarse else (seg,))
    doc = DocTokens(base.tokenizer, base.text, segments[:lo] + new + segments[hi:],
                    (base.byte_count, base.unknown_count), (base, lo, hi, len(new)))
    doc.exact_until = base.exact_until
    return doc


def _recut(seg: Segment, table: TokenTable) -> list[Segment]:
    """A coarse segment cut at :data:`SEGMENT_CHARS` (offsets from its text's start)."""
    origin = seg.origin
    toks = CompactTokens(seg.ids, shifted_array(seg.starts, -origin),
                         shifted_array(seg.ends, -origin))
    if seg.irregular:
        toks.irregular = dict(seg.irregular)
    if seg.unknown:  # (which regular ids count as unknown: the segment keeps only the count)
        toks.unknown_ids = frozenset(i for i in set(seg.ids) if table.flags(i)[1])
    return cut_segments(seg.text, toks, len(seg.text))


def _segment(toks: CompactTokens, irr: list[int], seg_text: str, a: int, b: int,
             origin: int) -> Segment:
    """The segment ``seg_text`` (from ``origin`` in the text ``toks`` cover) of tokens
    ``a..b`` of ``toks`` (``irr``: its irregular tokens' indices, sorted)."""
    irregular = None
    if irr:
        lo, hi = bisect_left(irr, a), bisect_left(irr, b)
        if hi > lo:
            irregular = {i - a: toks.irregular[i] for i in irr[lo:hi]}
    points = None
    resume = toks.resume
    if resume is not None:
        first = bisect_left(resume.offsets, origin)
        last = bisect_left(resume.offsets, origin + len(seg_text))
        points = ResumePoints(resume.offsets[first:last], resume.states[first:last])
    return Segment(seg_text, toks.ids[a:b], toks.starts[a:b], toks.ends[a:b], origin,
                   irregular, toks.unknown_ids, points)


def head_segment(text: str, toks: CompactTokens, end: int) -> Segment:
    """The tokens of ``text[:end]`` (``toks``: of ``text``; none crosses ``end``, one of
    their resume points) as one segment that may end inside a line: a partial result's
    only segment while a first window finds no line start to cut at (its last line is not
    whole: the painter leaves it for the full result)."""
    b = bisect_left(toks.starts, end)
    return _segment(toks, sorted(toks.irregular), text[:end], 0, b, 0)


def _safe_cuts(text: str, starts: array, ends: array, begin: int, stop: int,
               tok_start: int) -> tuple[list[int], list[int]]:
    """``(cuts, firsts)``: each line start ``cut`` in ``(begin, stop]`` that no token
    crosses, in order, and ``i`` the first token at or after it, keeping the first cut of
    each ``i > tok_start`` (a line start inside a token run that starts no token adds
    nothing). One numpy pass over all the line starts instead of a search per line."""
    cuts = _line_starts(text, begin, stop)
    if not len(cuts) or not starts:
        return [], []
    first = np.searchsorted(np.frombuffer(starts, np.int32), cuts)  # bisect_left
    ends_arr = np.frombuffer(ends, np.int32)
    ok = first > tok_start
    ok[ok] = ends_arr[first[ok] - 1] <= cuts[ok]
    cuts, first = cuts[ok], first[ok]
    fresh = np.ones(len(first), bool)
    fresh[1:] = first[1:] != first[:-1]  # first is non-decreasing: one cut per token index
    return cuts[fresh].tolist(), first[fresh].tolist()


LINE_SCAN_CHARS = 1 << 20
"""Characters :func:`_line_starts` reads as code points at a time (4 MB each)."""


def _line_starts(text: str, begin: int, stop: int) -> np.ndarray:
    """The end of every ``\n`` in ``text[begin:stop]`` (int64): found in the text's code
    points, a slice at a time (a match object per line was ~4% of a warm 10 MB encode)."""
    found = []
    for a in range(begin, stop, LINE_SCAN_CHARS):
        b = min(a + LINE_SCAN_CHARS, stop)
        codes = np.frombuffer(text[a:b].encode("utf-32-le", "surrogatepass"), np.uint32)
        found.append(np.flatnonzero(codes == 10) + (a + 1))
    return np.concatenate(found) if found else np.zeros(0, np.int64)


def agrees(seg: Segment, window: CompactTokens, at: int) -> bool:
    """True when ``window`` tokens inside ``[at, at+len(seg))`` equal ``seg``'s tokens."""
    return same_tokens(window, at, seg, seg.origin, len(seg.text))


class _Spans(Protocol):
    """Tokens as parallel arrays (:class:`CompactTokens`, :class:`Segment`)."""

    ids: array
    starts: array
    ends: array


def same_tokens(x: _Spans, x_at: int, y: _Spans, y_at: int, length: int) -> bool:
    """``x``'s tokens in ``[x_at, x_at + length)`` are ``y``'s in ``[y_at, y_at + length)``
    (ids, and spans relative to those places), and no token of either crosses either end."""
    lo, hi = _inside(x, x_at, length)
    y_lo, y_hi = _inside(y, y_at, length)
    if lo is None or y_lo is None or hi - lo != y_hi - y_lo:
        return False
    if x.ids[lo:hi] != y.ids[y_lo:y_hi]:
        return False
    shift = x_at - y_at
    if shift == 0:
        return x.starts[lo:hi] == y.starts[y_lo:y_hi] and x.ends[lo:hi] == y.ends[y_lo:y_hi]
    return (x.starts[lo:hi] == shifted_array(y.starts[y_lo:y_hi], shift)
            and x.ends[lo:hi] == shifted_array(y.ends[y_lo:y_hi], shift))


def _inside(toks: _Spans, at: int, length: int) -> tuple[int | None, int]:
    """The range of ``toks`` that starts in ``[at, at + length)``; ``(None, 0)`` when a token
    crosses either end."""
    lo, hi = bisect_left(toks.starts, at), bisect_left(toks.starts, at + length)
    if (lo and toks.ends[lo - 1] > at) or (hi > lo and toks.ends[hi - 1] > at + length):
        return None, 0
    return lo, hi


def common_prefix(a: str, b: str) -> int:
    """Length of the common prefix: galloping block compares (C speed), then bisection."""
    n = min(len(a), len(b))
    i, step = 0, 4096
    while i < n:
        j = min(n, i + step)
        if a[i:j] != b[i:j]:
            lo, hi = i, j  # the first difference is in [lo, hi)
            while hi - lo > 1:
                mid = (lo + hi) // 2
                if a[lo:mid] == b[lo:mid]:
                    lo = mid
                else:
                    hi = mid
            return lo
        i, step = j, step * 2
    return n


def common_suffix(a: str, b: str, limit: int) -> int:
    """Length of the common suffix of ``a`` and ``b``, at most ``limit``."""
    la, lb = len(a), len(b)
    n, step = 0, 4096
    while n < limit:
        m = min(limit, n + step)
        if a[la - m:la - n] != b[lb - m:lb - n]:
            lo, hi = n, m  # the suffix length is in [lo, hi)
            while hi - lo > 1:
                mid = (lo + hi) // 2
                if a[la - mid:la - lo] == b[lb - mid:lb - lo]:
                    lo = mid
                else:
                    hi = mid
            return lo
        n, step = m, step * 2
    return limit




def abs_tokens(doc: DocTokens, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Ids, starts and ends (document code points) of the tokens of segments ``[lo, hi)``."""
    segs = doc.segments[lo:hi]
    if not segs:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty
    shifts = [doc.cp_starts[lo + i] - seg.origin for i, seg in enumerate(segs)]
    ids = np.concatenate([np.frombuffer(seg.ids, dtype=np.int32) for seg in segs])
    starts = np.concatenate([np.frombuffer(seg.starts, dtype=np.int32).astype(np.int64) + d
                             for seg, d in zip(segs, shifts, strict=True)])
    ends = np.concatenate([np.frombuffer(seg.ends, dtype=np.int32).astype(np.int64) + d
                           for seg, d in zip(segs, shifts, strict=True)])
    return ids, starts, ends


def changed_lines_between(base: DocTokens, doc: DocTokens, lo: int, hi: int, count: int,
                   edit: tuple[int, int]) -> tuple[int, int] | None:
    """Lines ``(first, stop)`` of ``doc`` holding the edited text ``edit=(start, end)`` and
    every token of the re-encoded segments that is not the old one (same id and span
    before the edit, shifted by the edit's length change after it). A SentencePiece
    segment can span hundreds of lines of which one changed."""
    if count == 0 or hi <= lo:
        return None
    return changed_lines_of(doc, abs_tokens(base, lo, hi), abs_tokens(doc, lo, lo + count),
                            len(doc.text) - len(base.text), edit, doc.cp_starts[lo + count])


def changed_lines_of(doc: DocTokens, old: tuple[np.ndarray, ...], new: tuple[np.ndarray, ...],
                     delta: int, edit: tuple[int, int], limit: int) -> tuple[int, int]:
    """:func:`changed_lines_between` from the two runs of tokens as arrays (ids, starts,
    ends; document offsets, ``old`` in the old text, ``delta`` the edit's length change),
    the new ones ending at ``limit``: a caller that has them saves converting whole
    segments again (a keystroke's update in a segment of megabytes)."""
    old_ids, old_starts, old_ends = old
    ids, starts, ends = new
    n = min(len(ids), len(old_ids))
    differ = ((ids[:n] != old_ids[:n]) | (starts[:n] != old_starts[:n])
              | (ends[:n] != old_ends[:n]))
    head = int(np.argmax(differ)) if differ.any() else n
    m = n - head
    if m:
        differ = ((ids[len(ids) - m:] != old_ids[len(old_ids) - m:])
                  | (starts[len(ids) - m:] != old_starts[len(old_ids) - m:] + delta)
                  | (ends[len(ids) - m:] != old_ends[len(old_ids) - m:] + delta))
        tail = int(np.argmax(differ[::-1])) if differ.any() else m
    else:
        tail = 0
    last = len(ids) - tail  # tokens [head, last) of the window differ
    if last <= head:  # same tokens (only possible for a change inside nothing): one line
        a = b = int(starts[head]) if head < len(ids) else limit
    else:
        a, b = int(starts[head]), int(ends[last - 1])
    a, b = min(a, edit[0]), max(b, edit[1] + 1)  # a line the edit split or joined
    a = min(a, limit)
    b = max(a, min(b, limit))
    last = doc.line_of(max(a, b - 1))
    if b >= len(doc.text):  # (to the end: the empty line after a final newline, too, whose
        last = doc.line_of(len(doc.text))  # old text's tokens may be gone)
    return doc.line_of(a), last + 1
