"""Tokens of a whole editable document, stored so that one edit re-encodes only a window.

The document is split into *segments*: runs of whole lines whose first character starts a
token (no token crosses a segment boundary). Each segment keeps its tokens compactly (ids,
starts and ends in ``array('i')``, see :mod:`explorer.engine.compact`: a 10 MB document holds
~2.5 million tokens, a Token object each would take half a gigabyte) with the encoding's
coordinate of the segment start, so segments after an edit are reused as they are (no offset
is shifted). :meth:`DocTokens.token` rebuilds a Token when one is looked at.

After an edit, :func:`update_document` re-encodes the changed segments plus context segments
on both sides and accepts the result only when the window's tokens *agree* with the old tokens
in the context segments (same ids and relative spans, boundaries in the same places); otherwise
the window grows (x4) until it does or covers the whole document. This is engine-agnostic:
a BPE pre-token spanning line ends, a SentencePiece dummy prefix or a normalizer that looks at
neighbours only makes the window larger. :func:`encode_document` builds the first state in
chunks with the same agreement rule, yielding progress so a 10 MB text stays cancellable.

A SentencePiece Unigram model decides near ties by its float32 running score, which an edit
changes for everything after it. Segments keep the exact score at each word start
(``Segment.points``); an update starts from the one before the edit and grows its window past
the edit until the score comes back to the old one (then every later decision is the old
one), up to ``EXACT_WINDOW`` characters; beyond that the old tokens are kept by the
agreement rule and :attr:`DocTokens.exact_until` records where exactness by construction ends.

A first encode of a big text pauses Python's cyclic garbage collector and, when it finishes,
moves everything alive into the collector's permanent generation (``gc.freeze``): millions of
token objects would otherwise be walked by each full collection, which holds the GIL (and so
freezes the GUI thread) for up to half a second on a 10 MB text, longer as the text grows.
Tokens and segments hold no reference cycles, so nothing is lost by not scanning them; the
price is that cyclic garbage already lying around at that moment stays until exit.

Pure Python (no Qt): the worker jobs run these on pool threads.
"""

from __future__ import annotations

import gc
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Generator, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import accumulate

import numpy as np

from explorer.engine.compact import CompactTokens, ResumePoints, int_array, token_table
from explorer.engine.encoding import Token
from explorer.engine.tokenizer import Tokenizer

CHUNK_CHARS = 32_768
"""First-encode chunk size; each chunk is one progress step and cancellation point."""
RETRIES = 3
"""A window that disagrees with the previous one is retried from this many segments earlier
before the whole first encode starts over in bigger windows."""
EXACT_WINDOW = 32_768
"""An update whose tokenizer has exact resume points re-encodes past the edit until the
state comes back to the old one, up to a window this long; beyond, the document after the
window keeps its tokens by the agreement rule and is no longer exact by construction
(:attr:`DocTokens.exact_until`)."""
GC_QUIET_CHARS = 256 * 1024
"""First encodes of texts this long run with the cyclic GC paused (see the module notes)."""


class Segment:
    """Whole lines of the document with the tokens covering exactly them, as arrays."""

    __slots__ = ("astral", "ends", "ids", "irregular", "lines", "nbytes", "origin", "points",
                 "starts", "text", "unknown")

    def __init__(self, text: str, ids: array, starts: array, ends: array, origin: int,
                 irregular: dict[int, Token] | None = None,
                 unknown_ids: frozenset[int] = frozenset(),
                 points: ResumePoints | None = None) -> None:
        self.text = text
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
            self.astral = sum(1 for ch in text if ord(ch) > 0xFFFF)
            self.nbytes = len(text.encode("utf-8", "surrogatepass"))
        unknown = sum(ids.count(u) for u in unknown_ids) if unknown_ids else 0
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


def _empty_segment() -> Segment:
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
            self.cp_starts = _sums(len(s.text) for s in segments)
            self.u16_starts = _sums(s.utf16_len for s in segments)
            self.line_starts = _sums(s.lines for s in segments)
            self.tok_starts = _sums(len(s.ids) for s in segments)
            return
        base, lo, hi, count = splice
        new = segments[lo:lo + count]
        self.cp_starts = _splice(base.cp_starts, lo, hi, [len(s.text) for s in new])
        self.u16_starts = _splice(base.u16_starts, lo, hi, [s.utf16_len for s in new])
        self.line_starts = _splice(base.line_starts, lo, hi, [s.lines for s in new])
        self.tok_starts = _splice(base.tok_starts, lo, hi, [len(s.ids) for s in new])

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
                return tok
        return self.table.make(seg.ids[j], seg.starts[j], seg.ends[j])

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


def _sums(sizes: Iterable[int]) -> array:
    """Prefix sums ``[0, s0, s0+s1, ...]`` of ``sizes`` (an ``array('q')``)."""
    return array("q", accumulate(sizes, initial=0))


def _splice(sums: array, lo: int, hi: int, sizes: list[int]) -> array:
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


def _cut(text: str, toks: CompactTokens, limit: int, begin: int = 0) -> list[Segment]:
    """Split ``text[begin:limit]`` into segments at the line starts no token crosses.

    ``toks`` have offsets into ``text``; ``begin`` is 0 or a safe cut (tokens before it are
    context and dropped). When ``limit < len(text)`` the result stops at the last safe line
    start at or before ``limit``; otherwise the remainder is the last segment.
    """
    starts, ends, ids = toks.starts, toks.ends, toks.ids
    irr = sorted(toks.irregular)
    unknown_ids = toks.unknown_ids
    resume = toks.resume
    out: list[Segment] = []

    def segment(seg_text: str, a: int, b: int, origin: int) -> Segment:
        irregular = None
        if irr:
            lo, hi = bisect_left(irr, a), bisect_left(irr, b)
            if hi > lo:
                irregular = {i - a: toks.irregular[i] for i in irr[lo:hi]}
        points = None
        if resume is not None:
            first = bisect_left(resume.offsets, origin)
            last = bisect_left(resume.offsets, origin + len(seg_text))
            points = ResumePoints(resume.offsets[first:last], resume.states[first:last])
        return Segment(seg_text, ids[a:b], starts[a:b], ends[a:b], origin, irregular,
                       unknown_ids, points)

    seg_start, tok_start = begin, bisect_left(starts, begin) if begin else 0
    pos = text.find("\n", begin, limit)
    while pos != -1 and pos + 1 <= limit and pos + 1 < len(text):
        cut = pos + 1
        i = bisect_left(starts, cut)
        if i > tok_start and ends[i - 1] <= cut:
            out.append(segment(text[seg_start:cut], tok_start, i, seg_start))
            seg_start, tok_start = cut, i
        pos = text.find("\n", cut, limit)
    if limit >= len(text) and (seg_start < len(text) or len(ids) > tok_start):
        out.append(segment(text[seg_start:], tok_start, len(ids), seg_start))
    return out


def _agrees(seg: Segment, window: CompactTokens, at: int) -> bool:
    """True when ``window`` tokens inside ``[at, at+len(seg))`` equal ``seg``'s tokens."""
    starts, ends = window.starts, window.ends
    lo = bisect_left(starts, at)
    hi = bisect_left(starts, at + len(seg.text))
    if hi - lo != len(seg.ids):
        return False
    if lo > 0 and ends[lo - 1] > at:
        return False
    if hi > lo and ends[hi - 1] > at + len(seg.text):
        return False
    if window.ids[lo:hi] != seg.ids:
        return False
    shift = at - seg.origin
    if shift == 0:
        return starts[lo:hi] == seg.starts and ends[lo:hi] == seg.ends
    return (starts[lo:hi] == int_array(map(shift.__add__, seg.starts))
            and ends[lo:hi] == int_array(map(shift.__add__, seg.ends)))


def _common_prefix(a: str, b: str) -> int:
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


def _common_suffix(a: str, b: str, limit: int) -> int:
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


def encode_document(tokenizer: Tokenizer, text: str,
                    chunk: int = CHUNK_CHARS) -> Generator[Progress, None, DocTokens]:
    """First encode of ``text`` in chunks; yields :class:`Progress` after every chunk.

    Each window's last kept segment is encoded again as the start of the next window; the
    next window is accepted only if it reproduces that segment, otherwise the previous window
    is redone from the start in 4x larger windows (a tokenizer that never agrees ends up
    encoding the text in one go).
    """
    with gc_quiet(len(text) >= GC_QUIET_CHARS) as quiet:
        doc = yield from _encode_chunks(tokenizer, text, chunk)
        quiet.succeeded = True
    return doc


class _Outcome:
    """Set ``succeeded`` to True inside a :func:`gc_quiet` block to freeze on exit."""

    succeeded = False


@contextmanager
def gc_quiet(active: bool) -> Iterator[_Outcome]:
    """Pause the cyclic GC while a big result is built; on success freeze what is alive.

    No-op when not ``active`` or when the GC is already off (someone else pauses it). A
    cancelled run only re-enables the GC: its objects are freed by reference counting.
    """
    outcome = _Outcome()
    if not active or not gc.isenabled():
        yield outcome
        return
    gc.disable()
    try:
        yield outcome
    finally:
        if outcome.succeeded:
            gc.freeze()  # the new tokens are never walked by a collection (no cycles in them)
        gc.enable()


def _encode_chunks(tokenizer: Tokenizer, text: str,
                   chunk: int) -> Generator[Progress, None, DocTokens]:
    """The body of :func:`encode_document`."""
    segments: list[Segment] = []
    pos, size = 0, chunk
    lead = 0  # characters of context at the window start (the previous window's last segment)
    retries, retry_until = 0, 0
    first = True  # the first window's result is yielded as a partial result
    check: Segment | None = None  # what the next window must reproduce after its lead
    points: list[ResumePoints] = []  # exact resume points of the last windows, newest last
    while True:
        end = text.find("\n", min(len(text), pos + size))
        end = len(text) if end == -1 else end + 1
        window = text[pos:end]
        toks = _encode_window(tokenizer, window, pos, lead, points)
        if check is not None and not _agrees(check, toks, lead):
            if retries < RETRIES and len(segments) >= 2:
                # Start one segment earlier: the segment this window began with must then
                # come out as it was (a near tie decided by what came before, for example).
                retries += 1
                retry_until = max(retry_until, pos + lead + len(check.text))
                check = segments.pop()
                lead = len(segments[-1].text)
                pos -= lead
                continue
            # Starting mid-text changes this tokenizer's tokens (a near tie in a Unigram
            # model's float32 path scores is decided by where the text starts): start over
            # in bigger windows, so the result stays exactly one whole-text encode
            # (terminates: a window holding the whole text has nothing to check).
            segments.clear()
            points.clear()
            pos, lead, check, size = 0, 0, None, max(size, pos) * 4
            continue
        if pos >= retry_until:  # past the place that needed retries
            retries = 0
        if end == len(text):
            segments.extend(_cut(window, toks, len(window), lead))
            break
        # Keep all but the last two lines: the window end may have changed their tokens.
        keep = window.rfind("\n", 0, window.rfind("\n", 0, len(window) - 1)) + 1
        new = _cut(window, toks, keep, lead) if keep > lead else []
        if len(new) < 2:  # no safe cut in this window: this tokenizer needs more text
            size *= 2
            continue
        last = new.pop()
        segments.extend(new)
        _keep_points(points, toks, pos, pos + keep)
        # The next window starts one segment early: that segment is only context (a
        # SentencePiece text starts with a dummy-prefix piece), the one after it must agree.
        pos, lead, check = pos + new[-1].origin, len(new[-1].text), last
        size = max(chunk, len(last.text) + lead)  # grown only as long as needed
        partial = DocTokens(tokenizer, text, list(segments)) if first else None
        first = False
        yield Progress(pos, len(text), partial)
    if not segments:
        segments.append(_empty_segment())
        segments[0].points = tokenizer.encode_compact_resumed("", None).resume
    doc = DocTokens(tokenizer, text, segments)
    lost = next((k for k, seg in enumerate(segments) if seg.points is None), None)
    doc.exact_until = len(text) if lost is None else doc.cp_starts[lost]
    return doc


def _encode_window(tokenizer: Tokenizer, window: str, pos: int, lead: int,
                   points: list[ResumePoints]) -> CompactTokens:
    """Encode the window starting at document offset ``pos``, from the exact state of the
    whole-text encode at a word start in its lead (``points``) when the tokenizer has one
    (a Unigram model's float32 path score, :meth:`Tokenizer.encode_compact_resumed`):
    then a near tie decided by what came before comes out as in one whole-text encode."""
    if pos == 0:
        return tokenizer.encode_compact_resumed(window, None)
    for found in reversed(points):
        point = found.before(pos + lead, pos)
        if point is not None:
            return tokenizer.encode_compact_resumed(window, (point[0] - pos, point[1]))
    return tokenizer.encode_compact(window)


def _keep_points(points: list[ResumePoints], toks: CompactTokens, pos: int, keep: int) -> None:
    """Remember the window's exact resume points before document offset ``keep`` (the rest
    of the window may change when more text follows), for the next windows."""
    if toks.resume is None:
        return
    offsets = toks.resume.offsets
    n = bisect_left(offsets, keep - pos)
    points.append(ResumePoints(offsets[:n], toks.resume.states[:n]).shifted(pos))
    del points[:-(RETRIES + 1)]


def update_document(base: DocTokens, text: str, max_window: int | None = None,
                    same: tuple[int, int] | None = None) -> tuple[DocTokens, Change] | None:
    """Re-encode ``text`` reusing ``base`` outside a window around the edit.

    Returns None when the window would exceed ``max_window`` code points (a big paste or
    a tokenizer that needs much context): the caller encodes in chunks instead.
    ``same=(prefix, suffix)``: lengths of a start and an end of ``text`` the caller knows
    are ``base.text``'s (an editor's change notifications say where it changed); without
    it they are found by comparing the texts (~0.6 ms per megabyte).
    """
    old = base.text
    nseg = len(base.segments)
    limit = min(len(old), len(text))
    if same is not None and min(same) >= 0 and sum(same) <= limit:
        p, s = same
    else:
        if old == text:
            return base, Change(0, 0, 0, 0, 0, 0)
        p = _common_prefix(old, text)
        s = _common_suffix(old, text, limit - p)
    old_end = len(old) - s
    delta = len(text) - len(old)
    k0 = base.segment_of_offset(p)
    k1 = base.segment_of_offset(max(p, old_end - 1))
    # A tokenizer with exact resume points (a SentencePiece Unigram model) starts the window
    # from its state before the edit and re-encodes until its state after the edit is the
    # old one again (then every later decision is the old one): exact by construction.
    exact = bool(base.segments) and base.segments[0].points is not None
    left = right = 1
    settled: tuple | None = None  # an agreeing window whose state did not come back (yet)
    while True:
        lo, hi = max(0, k0 - left), min(nseg, k1 + 1 + right)
        # Segments lo - 1 and hi are encoded too, as context only (a SentencePiece text
        # starts with a dummy-prefix piece and drops trailing whitespace): segments lo and
        # hi - 1 must then come out as before.
        start = base.cp_starts[max(0, lo - 1)]
        end = base.cp_starts[min(nseg, hi + 1)] + delta
        if settled is not None and (end - start > EXACT_WINDOW or (
                max_window is not None and end - start > max_window)):
            lo, hi, start, window, toks, exact_start = settled
            converged = False
            break
        lead = base.cp_starts[lo] - start
        trail = base.cp_starts[min(nseg, hi + 1)] - base.cp_starts[hi]
        if max_window is not None and end - start > max_window:
            return None
        window = text[start:end]
        if exact:
            toks, exact_start = _encode_update(base, window, start, lo)
        else:
            toks, exact_start = base.tokenizer.encode_compact(window), False
        ok_left = lo == 0 or _agrees(base.segments[lo], toks, lead)
        ok_right = hi == nseg
        if not ok_right:
            last = base.segments[hi - 1]
            ok_right = _agrees(last, toks, len(window) - trail - len(last.text))
        converged = hi == nseg or (exact_start and ok_right
                                   and _converged(base, hi, toks, start - delta))
        if ok_left and ok_right and (converged or not exact_start
                                     or base.exact_until < base.cp_starts[hi]):
            break  # (an old state that was not exact cannot come back: accept as it is)
        if lo == 0 and hi == nseg:
            break
        if ok_left and ok_right:  # exact start, state not back yet: re-decide further on
            settled = (lo, hi, start, window, toks, exact_start)
        if ok_left and ok_right:
            right *= 4
        else:  # (as before: both sides grow)
            left, right = left * 4, right * 4
    trail = base.cp_starts[min(nseg, hi + 1)] - base.cp_starts[hi]
    lead = base.cp_starts[lo] - start
    new = _cut(window, toks, len(window) - trail, lead)
    segments = base.segments[:lo] + new + base.segments[hi:]
    if not segments:  # the empty document: one empty segment (knowing the empty text's points)
        segments = [_empty_segment()]
        segments[0].points = toks.resume
    old_segs = base.segments[lo:hi]
    totals = (base.byte_count + sum(x.nbytes for x in new) - sum(x.nbytes for x in old_segs),
              base.unknown_count + sum(x.unknown for x in new)
              - sum(x.unknown for x in old_segs))
    if len(segments) == nseg - (hi - lo) + len(new):
        doc = DocTokens(base.tokenizer, text, segments, totals, (base, lo, hi, len(new)))
    else:  # the empty-document placeholder
        doc = DocTokens(base.tokenizer, text, segments, totals)
    if not exact_start:
        doc.exact_until = min(base.exact_until, start)
    elif not converged:
        doc.exact_until = doc.cp_starts[lo + len(new)]
    else:
        doc.exact_until = len(text) if hi == nseg else base.exact_until + delta
    change = Change(
        first_segment=lo,
        old_segments=hi - lo,
        new_segments=len(new),
        first_token=base.tok_starts[lo],
        old_tokens=base.tok_starts[hi] - base.tok_starts[lo],
        new_tokens=sum(len(x.ids) for x in new),
        full=lo == 0 and hi == nseg,
        # Segments lo and hi - 1 agreed (the loop above); still the same segments when the
        # cut kept their text (an edit that joins lines moves the cut)
        same_first=lo > 0 and bool(new) and new[0].text == base.segments[lo].text,
        same_last=hi < nseg and bool(new) and new[-1].text == base.segments[hi - 1].text,
        lines=_changed_lines(base, doc, lo, hi, len(new), (p, len(text) - s)),
    )
    return doc, change


def _encode_update(base: DocTokens, window: str, start: int,
                   lo: int) -> tuple[CompactTokens, bool]:
    """Encode the window of an update starting at document offset ``start`` (segment
    ``lo - 1``'s start) from the state at the last resume point before segment ``lo`` (the
    text before the edit is the old one, so the old state there is still the state), and
    whether that state was exact (before ``base.exact_until``)."""
    tokenizer = base.tokenizer
    if lo == 0:
        return tokenizer.encode_compact_resumed(window, None), True
    limit = base.cp_starts[lo]
    for k in (lo - 1, lo):  # the lead segment's last point, else the first one after it
        seg = base.segments[k]
        points = seg.points
        if points is None:
            continue
        point = points.shifted(base.cp_starts[k] - seg.origin).before(limit, start)
        if point is not None:
            toks = tokenizer.encode_compact_resumed(window, (point[0] - start, point[1]))
            return toks, toks.resume is not None and point[0] < base.exact_until
    return tokenizer.encode_compact(window), False


def _converged(base: DocTokens, hi: int, toks: CompactTokens, old_start: int) -> bool:
    """True when the window's state at the first resume point of old segment ``hi`` (the
    trailing context, after the edit) equals the old one there: then the whole-text encode
    decides everything from there on as before. ``old_start``: the window start minus the
    edit's length change (an old offset after the edit minus it is a window offset)."""
    seg = base.segments[hi]
    if toks.resume is None or seg.points is None or not seg.points.offsets:
        return False
    old = seg.points.offsets[0] - seg.origin + base.cp_starts[hi]
    if old >= base.exact_until:
        return False
    at = old - old_start
    k = bisect_left(toks.resume.offsets, at)
    return (k < len(toks.resume.offsets) and toks.resume.offsets[k] == at
            and toks.resume.states[k] == seg.points.states[0])


def _abs_tokens(doc: DocTokens, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
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


def _changed_lines(base: DocTokens, doc: DocTokens, lo: int, hi: int, count: int,
                   edit: tuple[int, int]) -> tuple[int, int] | None:
    """Lines ``(first, stop)`` of ``doc`` holding the edited text ``edit=(start, end)`` and
    every token of the re-encoded segments that is not the old one (same id and span
    before the edit, shifted by the edit's length change after it). A SentencePiece
    segment can span hundreds of lines of which one changed."""
    if count == 0 or hi <= lo:
        return None
    delta = len(doc.text) - len(base.text)
    old_ids, old_starts, old_ends = _abs_tokens(base, lo, hi)
    ids, starts, ends = _abs_tokens(doc, lo, lo + count)
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
        a = b = int(starts[head]) if head < len(ids) else doc.cp_starts[lo + count]
    else:
        a, b = int(starts[head]), int(ends[last - 1])
    a, b = min(a, edit[0]), max(b, edit[1] + 1)  # a line the edit split or joined
    limit = doc.cp_starts[lo + count]
    a = min(a, limit)
    b = max(a, min(b, limit))
    return doc.line_of(a), doc.line_of(max(a, b - 1)) + 1

