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
(``Segment.points``). A keystroke first re-encodes just the words around the edit
(:func:`explorer.workers.word_update.update_words`: from the exact score at the last word start
before it to a word start after it where the tokens meet the old ones; SentencePiece segments
can be tens of thousands of characters long); failing that, whole segments from the score
before the edit, growing past the edit until the score comes back to the old one, up to
``EXACT_WINDOW`` characters. Beyond the window the old tokens are kept by the agreement rule
and :attr:`DocTokens.exact_until` records where exactness by construction ends; once typing
pauses the window calls :func:`settle_document` step by step (about ``SETTLE_WORD_CHARS``
each, from the exact score there, at word granularity like a keystroke; whole segments of
``SETTLE_CHARS`` when the words do not meet), which re-decides the rest until the whole
document is exact again.

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
from bisect import bisect_left
from collections.abc import Callable, Generator, Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from explorer.engine.compact import CompactTokens, ResumePoints, joined_at, tokens_from
from explorer.engine.soft_cuts import end_after, start_before
from explorer.engine.tokenizer import Tokenizer
from explorer.workers import docstore, long_lines
from explorer.workers.docstore import (
    Change,
    DocTokens,
    Progress,
    Segment,
    abs_tokens,
    agrees,
    changed_lines_between,
    common_prefix,
    common_suffix,
    cut_segments,
    empty_segment,
    head_segment,
    refined,
    spliced_totals,
)
from explorer.workers.line_update import update_inside
from explorer.workers.long_lines import encode_joined, encode_long, has_exact_points
from explorer.workers.malloc import mapped_temporaries, trim
from explorer.workers.word_update import MAX_WORD_WINDOW, update_words

if TYPE_CHECKING:
    from explorer.workers.tail_encode import TailEncode

__all__ = ["CHUNK_CHARS", "EXACT_WINDOW", "Change", "DocTokens", "Progress", "Segment",
           "common_prefix", "common_suffix", "encode_document", "settle_document",
           "update_document"]

CHUNK_CHARS = 32_768
"""First-encode chunk size; each chunk is one progress step and cancellation point."""
LATER_CHUNKS = 4
"""Chunks after the first are this many times longer: the first (the part a new document
shows) comes back fast, and the rest pays its per-window costs a quarter as often (a
Unigram model's new words solved in one numpy batch per window, the lead re-encoded). 2 MB
of English in 32k windows 2.74 s -> 1.91 s with an 8k Unigram model, the all-language UDHR
8.2 -> 6.1 s (docs/benchmarks.md); a chunk of 128k characters is still ~0.1-0.2 s."""
RETRIES = 3
"""A window that disagrees with the previous one is retried from this many segments earlier
before the whole first encode starts over in bigger windows."""
EXACT_WINDOW = 32_768
"""An update whose tokenizer has exact resume points re-encodes past the edit until the
state comes back to the old one, up to a window this long; beyond, the document after the
window keeps its tokens by the agreement rule and is no longer exact by construction
(:attr:`DocTokens.exact_until`)."""
EXACT_SEGMENT_FACTOR = 8
"""A tokenizer with exact resume points (a SentencePiece Unigram model) cuts its first
encode's segments this many times :data:`~.docstore.SEGMENT_CHARS` long (2,048 characters
in 32k windows, see :func:`_least_segment`): its keystrokes re-encode the words around the
edit (:func:`update_words`), not segments, so longer ones cost them nothing, and each
segment is an object made on the thread (the bundled 4k Unigram model on the 10 MB English
document cut 35k of them, 0.24 s of a 1.24 s thread).
Other tokenizers keep the short ones: a keystroke re-encodes about three segments (at 1,024
characters all-MiniLM's p95 went 9.3 -> 15.5 ms, Gemma 4's 9.4 -> 11.3 ms)."""
REDO_CHARS = 8_192
"""A window keeps all but its last two lines (the window's end may change their tokens), or,
when those are longer than this, up to about this many characters before its end (to a soft
cut: :func:`_kept_part`; segments end at line starts, so that keeps all but the last line).
With :data:`LONG_LINE_WINDOWS` and the windows' growth: lines of ~47k characters (a 9 MB
minified JSON in 200 lines) had every line encoded three or four times, cl100k's first
encode 10.9 s, now 3.4 s (1.24x the text encoded)."""
LONG_LINE_WINDOWS = 8
"""A first encode's window is at least this many times the text it starts with again (the
last window's last two segments: lines, when they are long; see :func:`_encode_windows`)."""
EXACT_GROWTH = 524_288
"""A window with no safe cut that goes on exactly from its last point (:func:`_go_on_from`)
grows by at most this much at a time, not by doubling: only the new part is encoded anyway,
and between steps the thread takes the words a child has solved ahead (a 9 MB minified JSON
in 200 lines with a Unigram model, whose tokens cross every line start, is one window: it
grew 4 MB, then 8 MB at once, solving every word itself)."""
PARTIAL_LINE_MAX = 1 << 20
"""A first window with no safe cut yields the text's start as a partial result (cut inside a
line) unless that line is longer than this: Qt lays a line out whole for each paint of it,
and a one-line 9 MB document highlighted 7.7 s after its text without the partial, 10.6 s
with it (its result lays the line out again)."""
GC_QUIET_CHARS = 256 * 1024
"""First encodes of texts this long run with the cyclic GC paused (see the module notes)."""


TailStarter = Callable[[Tokenizer, str, bool], "TailEncode | None"]


def encode_document(tokenizer: Tokenizer, text: str, chunk: int = CHUNK_CHARS,
                    tail: TailStarter | None = None, segment_chars: int | None = None,
                    ) -> Generator[Progress, None, DocTokens]:
    """First encode of ``text`` in chunks; yields :class:`Progress` after every chunk.

    Each window's last kept segment is encoded again as the start of the next window; the
    next window is accepted only if it reproduces that segment, otherwise the previous window
    is redone from the start in 4x larger windows (a tokenizer that never agrees ends up
    encoding the text in one go). A tokenizer with exact resume points (a SentencePiece
    Unigram model) needs no such check: each window keeps every segment it cut and the next
    one goes on from its tokens at their last exact point before its last two lines
    (:func:`_continued`), so only those lines are encoded twice (a 10 MB English document
    was encoded 1.45 times over with a 32k model, whose safe cuts are far apart; now 1.001).

    ``tail(tokenizer, text, exact)``: called after the first window (``exact``: the tokenizer
    has exact resume points), it may start a helper (:func:`~explorer.workers.tail_encode.
    start_tail`: a child process) that encodes the text's tail, whose tokens are taken over
    at a window boundary where they reproduce the segment the next window must reproduce,
    or that solves words ahead, taken at each window.

    ``segment_chars``: the segments' least length (None: :data:`~.docstore.SEGMENT_CHARS`,
    what the document keeps: an edit re-encodes about three; a child process that only
    sends the tokens back cuts fewer, bigger ones).
    """
    big = len(text) >= GC_QUIET_CHARS
    with gc_quiet(big) as quiet, mapped_temporaries(big):
        doc = yield from _encode_chunks(tokenizer, text, chunk, tail, segment_chars)
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


def _encode_chunks(tokenizer: Tokenizer, text: str, chunk: int, tail: TailStarter | None,
                   segment_chars: int | None) -> Generator[Progress, None, DocTokens]:
    """The body of :func:`encode_document`: start and close the tail's helper."""
    helper: list[TailEncode] = []
    try:
        return (yield from _encode_windows(tokenizer, text, chunk, tail, helper,
                                           segment_chars))
    finally:
        for started in helper:
            started.close()


def _encode_windows(tokenizer: Tokenizer, text: str, chunk: int, tail: TailStarter | None,
                    helper: list[TailEncode], segment_chars: int | None,
                    ) -> Generator[Progress, None, DocTokens]:
    """The windows of :func:`encode_document`; a tail helper started goes in ``helper``."""
    segments: list[Segment] = []
    pos, size = 0, chunk
    lead = 0  # characters of context at the window start (the previous window's last segment)
    retries, retry_until = 0, 0
    first = True  # the first window's result is yielded as a partial result
    check: Segment | None = None  # what the next window must reproduce after its lead
    points: list[ResumePoints] = []  # exact resume points of the last windows, newest last
    grown: tuple[CompactTokens, int, float] | None = None  # see _go_on_from
    # a window that goes on exactly from the last one's tokens (see _continued): the last
    # window's tokens, its start and where they stop being final; False after a failure
    carry: tuple[CompactTokens, int, int] | None = None
    exact_windows = True
    least_size = 0  # the size a window had to grow to (see below)
    clear_to = 0  # a growing window has no safe cut before this (its final tokens had none)
    exact_points: bool | None = None  # (asked when a window is a line of megabytes)
    while True:
        end = text.find("\n", min(len(text), pos + size))
        end = len(text) if end == -1 else end + 1
        if end - pos > long_lines.LONG_TEXT:
            if exact_points is None:
                exact_points = has_exact_points(tokenizer)
            if exact_points:
                # (a line of megabytes: the window ends at a word start in it, and grows
                # on exactly from its last point, as a window with no safe cut does: each
                # step is bounded, and the child's words are taken at each)
                end = end_after(text, pos + size)
        window = text[pos:end]
        # (once the first window's partial result is out, or when it has to grow with
        # exact resume points: a text whose tokens cross every line start, minified JSON
        # with a Unigram model, is one growing window, and the child solves its words ahead
        # all the same; so is a line of megabytes, its windows cut at word starts)
        if tail is not None and (not first or grown is not None):
            started, tail = tail(tokenizer, text, bool(points) or grown is not None), None
            if started is not None:
                helper.append(started)
                if started.words:  # (the words a prefetched child has solved, before this
                    started.covered_from()  # window solves them itself: ~60 ms of 131k)
        toks = None
        if carry is not None:  # (an exact continuation: nothing to check)
            toks, carry = _continued(tokenizer, text, pos, end, *carry), None
        scan_from, clear_to = clear_to, 0
        if grown is not None:  # (the same window start, longer: go on from its last point)
            toks, grown = _grown(tokenizer, window, *grown), None
        if toks is None:  # (not grown from the last try: every line start is looked at)
            scan_from = 0
        if toks is None and check is None and pos > 0:  # a continuation that cannot go on
            exact_windows = False  # exactly: from here on, windows agree with the last one
            pos, lead, check = _fall_back(segments, pos)
            if check is None:
                points.clear()
            continue
        if toks is None:
            toks = _encode_window(tokenizer, window, pos, lead, points)
        if check is not None and not agrees(check, toks, lead):
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
        least = _least_segment(segment_chars, toks, chunk)
        if end == len(text):
            segments.extend(cut_segments(window, toks, len(window), lead, least))
            break
        keep = _kept_part(window)
        new = (cut_segments(window, toks, keep, lead, least, clear_to=scan_from)
               if keep > lead else [])
        if exact_windows and toks.resume is not None and new:
            # Exact tokens: keep every segment, and go on from the last one's end with
            # these tokens up to their last point before `keep` (nothing encoded twice
            # but the last lines, nothing to check).
            segments.extend(new)
            cut = new[-1].origin + len(new[-1].text)
            _keep_points(points, toks, pos, pos + keep)
            carry = (toks, pos, pos + keep)
            size = max(chunk * LATER_CHUNKS, len(window) - cut + chunk)
            pos, lead, check = pos + cut, 0, None
            if helper and _take_tail(helper[0], text, pos - len(new[-1].text), new[-1],
                                     segments, replaces_last=True):
                break
            partial = DocTokens(tokenizer, text, list(segments)) if first else None
            first = False
            yield Progress(pos, len(text), partial)
            continue
        if len(new) < 2:  # no safe cut in this window: this tokenizer needs more text
            grown = _go_on_from(toks, keep)
            size = max(2 * size, len(window))  # (at least a line more: lines may be long)
            if grown is not None:  # (only the new part is encoded: grow in steps)
                size = min(size, len(window) + EXACT_GROWTH)
                if not new:  # (its tokens up to the point it goes on from are final)
                    clear_to = grown[1]
            least_size = max(least_size, size)
            if helper:  # (a child solving words: where the thread is; its words taken)
                helper[0].reached(pos + keep)
                helper[0].covered_from()
            if (first and grown is not None and pos == 0 and grown[1] > 0
                    and _line_length(text, grown[1]) <= PARTIAL_LINE_MAX):
                # (no safe cut yet: the start of the text as a partial result, cut at the
                # exact point it goes on from, so that what a new document shows is painted)
                first = False
                yield Progress(grown[1], len(text), DocTokens(
                    tokenizer, text, [head_segment(window, toks, grown[1])]))
            continue
        last = new.pop()
        segments.extend(new)
        _keep_points(points, toks, pos, pos + keep)
        # The next window starts one segment early: that segment is only context (a
        # SentencePiece text starts with a dummy-prefix piece), the one after it must agree.
        pos, lead, check = pos + new[-1].origin, len(new[-1].text), last
        # Grown only as needed, but a window that had to grow (its lines being long) sizes
        # the ones after it (reset, each of them was encoded short first, then grown), and
        # each is at least 8x what it re-encodes (its lead, the segment it checks: a line
        # each; lines of 47k characters had every one encoded three or four times).
        size = max(chunk * LATER_CHUNKS, LONG_LINE_WINDOWS * (len(last.text) + lead),
                   least_size)
        if helper and _take_tail(helper[0], text, pos + lead, check, segments):
            break
        partial = DocTokens(tokenizer, text, list(segments)) if first else None
        first = False
        yield Progress(pos, len(text), partial)
    if not segments:
        segments.append(empty_segment())
        segments[0].points = tokenizer.encode_compact_resumed("", None).resume
    doc = DocTokens(tokenizer, text, segments)
    lost = next((k for k, seg in enumerate(segments) if seg.points is None), None)
    doc.exact_until = len(text) if lost is None else doc.cp_starts[lost]
    return doc


def _line_length(text: str, at: int) -> int:
    """The length of the line of ``text`` that offset ``at`` is in."""
    end = text.find("\n", at)
    return (len(text) if end == -1 else end) - text.rfind("\n", 0, at) - 1


def _kept_part(window: str) -> int:
    """How much of a window's tokens a first encode keeps: all but the last two lines (the
    window's end may have changed their tokens; the next window starts before them and must
    reproduce what was kept last), or when they are longer than :data:`REDO_CHARS`, up to a
    line start or soft cut about that far before the window's end."""
    keep = window.rfind("\n", 0, window.rfind("\n", 0, len(window) - 1)) + 1
    if len(window) - keep > 2 * REDO_CHARS:
        keep = max(keep, start_before(window, len(window) - REDO_CHARS))
    return keep


def _least_segment(segment_chars: int | None, toks: CompactTokens, chunk: int) -> int | None:
    """The least segment length for a first encode's window: ``segment_chars`` when given;
    for exact tokens up to :data:`EXACT_SEGMENT_FACTOR` times the document's own, but no
    more than a sixteenth of the first window (a segment is the context the next window
    starts with); else None (the document's own, :data:`~.docstore.SEGMENT_CHARS`)."""
    if segment_chars is not None or toks.resume is None:
        return segment_chars
    least = docstore.SEGMENT_CHARS
    return max(least, min(least * EXACT_SEGMENT_FACTOR, chunk // 16))


def _take_tail(helper: TailEncode, text: str, at: int, check: Segment,
               segments: list[Segment], replaces_last: bool = False) -> bool:
    """When the helper's tokens of ``text[helper.start:]`` are in (as far back as it has
    sent them) and reproduce ``check`` (at document offset ``at``, past their start),
    append their segments from ``at`` to the end to ``segments`` and return True;
    ``replaces_last``: ``check`` is the last of ``segments``, which theirs then replace.
    (The helper is told the thread's place; asking it takes the words a child solving
    them has sent.)"""
    helper.reached(at)
    start = helper.covered_from()  # (before joining what the child sent: often not yet)
    if start is None or at <= start:
        return False
    toks = helper.poll()
    if toks is None or not agrees(check, toks, at - helper.start):
        return False
    if replaces_last:
        segments.pop()
    trim()  # (the windows' freed temporaries: this is where a big document peaks)
    part = text[helper.start:]
    segments.extend(cut_segments(part, toks, len(part), at - helper.start,
                                 docstore.COARSE_SEGMENT_CHARS, consume=True, coarse=True))
    helper.taken_at = at
    return True


def _encode_window(tokenizer: Tokenizer, window: str, pos: int, lead: int,
                   points: list[ResumePoints]) -> CompactTokens:
    """Encode the window starting at document offset ``pos``, from the exact state of the
    whole-text encode at a word start in its lead (``points``) when the tokenizer has one
    (a Unigram model's float32 path score, :meth:`Tokenizer.encode_compact_resumed`):
    then a near tie decided by what came before comes out as in one whole-text encode."""
    if pos == 0:
        return encode_long(tokenizer, window, None)
    for found in reversed(points):
        point = found.before(pos + lead, pos)
        if point is not None:
            return encode_long(tokenizer, window, (point[0] - pos, point[1]))
    return encode_joined(tokenizer.encode_compact, window)


def _continued(tokenizer: Tokenizer, text: str, pos: int, end: int, last: CompactTokens,
               last_pos: int, final: int) -> CompactTokens | None:
    """The tokens of ``text[pos:end]``, where the window ``last`` (the tokens of the text
    from ``last_pos``, exact: see :class:`ResumePoints`) has a segment boundary at ``pos``
    and final tokens up to ``final``: its tokens up to its last resume point before
    ``final``, then an encode from a line start before that point resumed there (as
    :func:`_grown` goes on). None when that encode did not find the point, or no such point
    is past ``last_pos``."""
    if last.resume is None:
        return None
    offsets = last.resume.offsets
    k = bisect_left(offsets, final - last_pos) - 1
    if k < 0 or offsets[k] <= 0:
        return None
    at, state = last_pos + offsets[k], last.resume.states[k]
    if at >= pos:  # (the window's own tokens up to the point, as a grown window's)
        return _grown(tokenizer, text[pos:end], tokens_from(last, pos - last_pos), at - pos,
                      state)
    # the point is before the boundary: the resumed encode's tokens from the boundary on
    line = start_before(text, max(0, at - 1))
    tail = encode_long(tokenizer, text[line:end], (at - line, state))
    m = bisect_left(tail.starts, pos - line)
    if tail.resume is None or (m and tail.ends[m - 1] > pos - line):
        return None
    return tokens_from(tail, pos - line)


def _fall_back(segments: list[Segment], pos: int) -> tuple[int, int, Segment | None]:
    """Where to go on after an exact continuation failed at document offset ``pos`` (the
    end of ``segments``): ``(pos, lead, check)`` for a window that must reproduce the last
    segment after the one before it, as windows without exact points do; the document's
    start when there are not two segments (then ``segments`` is emptied)."""
    if len(segments) < 2:
        segments.clear()
        return 0, 0, None
    check = segments.pop()
    lead = len(segments[-1].text)
    return pos - len(check.text) - lead, lead, check


def _go_on_from(toks: CompactTokens, keep: int) -> tuple[CompactTokens, int, float] | None:
    """A window with no safe cut is encoded again twice as long. With exact resume points
    (a SentencePiece Unigram text can go 800k characters without a line start that starts a
    token), only what follows its last point before ``keep`` is: ``(toks, offset, state)``
    for :func:`_grown`; None when it has no such point."""
    if toks.resume is None:
        return None
    k = bisect_left(toks.resume.offsets, keep) - 1
    if k < 0 or toks.resume.offsets[k] <= 0:
        return None
    return toks, toks.resume.offsets[k], toks.resume.states[k]


def _grown(tokenizer: Tokenizer, window: str, head: CompactTokens, at: int,
           state: float) -> CompactTokens | None:
    """The tokens of ``window``, which starts as the window ``head`` was encoded from: the
    head's up to its resume point ``at``, then the rest encoded from a line start before
    it (as a keystroke's words are, :func:`~explorer.workers.word_update.update_words`),
    resumed at ``at`` with ``state``: exactly as encoding the whole window (see
    :class:`ResumePoints`). None when that encode did not find the point (then it is not
    exact)."""
    line = start_before(window, max(0, at - 1))
    tail = encode_long(tokenizer, window[line:], (at - line, state))
    if tail.resume is None:
        return None
    return joined_at(head, at, tail, line)


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
        p = common_prefix(old, text)
        s = common_suffix(old, text, limit - p)
    old_end = len(old) - s
    delta = len(text) - len(old)
    k0 = base.segment_of_offset(p)
    k1 = base.segment_of_offset(max(p, old_end - 1))
    if any(seg.coarse for seg in base.segments[max(0, k0 - 2):k0 + 1]
           + base.segments[k1:k1 + 3]):
        # (the edit's first and last segments and the two beyond each, which the window
        # below re-encodes as well or as context: cut again at the document's own length
        # first, as they would be without the child; those between are re-encoded whole)
        base = refined(refined(base, k1, k1 + 3), k0 - 2, k0 + 1)
        nseg = len(base.segments)
        k0 = base.segment_of_offset(p)
        k1 = base.segment_of_offset(max(p, old_end - 1))
    # A tokenizer with exact resume points (a SentencePiece Unigram model) starts the window
    # from its state before the edit and re-encodes until its state after the edit is the
    # old one again (then every later decision is the old one): exact by construction.
    exact = bool(base.segments) and base.segments[0].points is not None
    if exact:  # first the words around the edit (segments can be long)
        fast = update_words(base, text, p, s)
        if fast is not None:
            return fast
    elif k0 == k1:  # an edit inside one long segment (a long line): a window around it
        inside = update_inside(base, text, p, s, max_window)
        if inside is not None:
            return inside
    left = right = 1
    settled: tuple | None = None  # an agreeing window whose state did not come back (yet)
    while True:
        lo, hi = max(0, k0 - left), min(nseg, k1 + 1 + right)
        # Text around segments lo and hi - 1 is encoded too, as context only (a SentencePiece
        # text starts with a dummy-prefix piece and drops trailing whitespace): those two
        # segments must then come out as before. The context is segments lo - 1 and hi for
        # the exact path (its start is a resume point), else one line of each.
        start = base.cp_starts[max(0, lo - 1)]
        end = base.cp_starts[min(nseg, hi + 1)] + delta
        if not exact:
            start, end = _line_context(base, text, lo, hi, start, end, delta)
        if settled is not None and (end - start > EXACT_WINDOW or (
                max_window is not None and end - start > max_window)):
            lo, hi, start, window, toks, exact_start = settled
            converged = False
            break
        lead = base.cp_starts[lo] - start
        trail = end - (base.cp_starts[hi] + delta) if hi < nseg else 0
        if max_window is not None and end - start > max_window:
            return None
        window = text[start:end]
        if exact:
            toks, exact_start = _encode_update(base, window, start, lo)
        else:
            toks, exact_start = encode_joined(base.tokenizer.encode_compact, window), False
        ok_left = lo == 0 or agrees(base.segments[lo], toks, lead)
        ok_right = hi == nseg
        if not ok_right:
            last = base.segments[hi - 1]
            ok_right = agrees(last, toks, len(window) - trail - len(last.text))
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
    trail = len(window) - (base.cp_starts[hi] + delta - start) if hi < nseg else 0
    lead = base.cp_starts[lo] - start
    new = cut_segments(window, toks, len(window) - trail, lead)
    segments = base.segments[:lo] + new + base.segments[hi:]
    if not segments:  # the empty document: one empty segment (knowing the empty text's points)
        segments = [empty_segment()]
        segments[0].points = toks.resume
    old_segs = base.segments[lo:hi]
    totals = spliced_totals(base, old_segs, new)
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
        lines=changed_lines_between(base, doc, lo, hi, len(new), (p, len(text) - s)),
    )
    return doc, change


SETTLE_CHARS = 8_192
"""How far one :func:`settle_document` step by whole segments re-decides past where
exactness ended."""
SETTLE_WORD_CHARS = 4_096
"""How far one :func:`settle_document` step at word granularity re-decides: its window
holds a few kB wherever it is (a segment can be 48k characters long: a step re-encoding it
whole took ~100 ms, and a key pressed meanwhile waited for it)."""
LONG_SEGMENT = 262_144
SETTLE_LONG_CHARS = 65_536
"""How far a step re-decides inside a segment longer than :data:`LONG_SEGMENT` (a line of
megabytes that no token boundary cuts: minified JSON with a Unigram model). Splicing a
step's tokens into such a segment costs in proportion to the segment (a 2.5 MB one: ~75 ms
a step, whatever it re-decides), so the steps are longer there: settling 5 MB after a
keystroke took 1,221 steps and 45 s of CPU at 4k a step."""


def settle_document(base: DocTokens) -> tuple[DocTokens, Change | None] | None:
    """One step of making a document exact by construction again after keystrokes.

    A keystroke re-encodes only the words around it (fast), from the exact state before it;
    a near tie after that window is decided from the old running score, so exactness ends
    there (``base.exact_until``). This re-decides about :data:`SETTLE_CHARS` from that
    point on, from the exact state before it, and moves ``exact_until`` past them (to the
    end when they reach it). Returns the new document and its :class:`Change`, the change
    None when no token differs; None when ``base`` is exact already (or has no states).
    """
    text = base.text
    nseg = len(base.segments)
    if nseg == 0 or base.segments[0].points is None or base.exact_until >= len(text):
        return None
    words = _settle_words(base)
    if words is not None:
        return words
    first = base.segment_of_offset(base.exact_until)
    hi = min(nseg, max(first + 1,
                       bisect_left(base.cp_starts, base.cp_starts[first] + SETTLE_CHARS)))
    lo = first
    while True:
        start = base.cp_starts[max(0, lo - 1)]
        window = text[start:base.cp_starts[min(nseg, hi + 1)]]
        toks, exact_start = _encode_update(base, window, start, lo)
        lead, cut = base.cp_starts[lo] - start, base.cp_starts[hi] - start
        if not exact_start or not _safe_cut(toks, lead):
            if lo == 0 or first - lo >= RETRIES:
                return None
            lo -= 1  # no exact state just before: start a segment earlier (redo exact ones)
            continue
        if hi == nseg or _safe_cut(toks, cut):
            break
        hi += 1  # the window's end moved a token across the segment boundary: go on
    new = cut_segments(window, toks, len(window) if hi == nseg else cut, lead)
    old_segs = base.segments[lo:hi]
    totals = spliced_totals(base, old_segs, new)
    doc = DocTokens(base.tokenizer, text, base.segments[:lo] + new + base.segments[hi:],
                    totals, (base, lo, hi, len(new)))
    doc.exact_until = len(text) if hi == nseg else base.cp_starts[hi]
    old_ids, old_starts, old_ends = abs_tokens(base, lo, hi)
    ids, starts, ends = abs_tokens(doc, lo, lo + len(new))
    if (np.array_equal(ids, old_ids) and np.array_equal(starts, old_starts)
            and np.array_equal(ends, old_ends)):
        return doc, None
    at = base.exact_until
    return doc, Change(
        first_segment=lo, old_segments=hi - lo, new_segments=len(new),
        first_token=base.tok_starts[lo], old_tokens=base.tok_starts[hi] - base.tok_starts[lo],
        new_tokens=len(ids), lines=changed_lines_between(base, doc, lo, hi, len(new), (at, at)))


def _settle_words(base: DocTokens) -> tuple[DocTokens, Change | None] | None:
    """A :func:`settle_document` step at word granularity: the words from the last exact
    state before ``base.exact_until`` to a word start about :data:`SETTLE_WORD_CHARS` on
    where the new tokens meet the old ones, re-encoded and spliced in as a keystroke's words
    are (an "edit" that changes nothing). None when that does not apply or moves nothing."""
    text, at = base.text, base.exact_until
    reach = SETTLE_WORD_CHARS
    if len(base.segments[base.segment_of_offset(at)].text) > LONG_SEGMENT:
        reach = SETTLE_LONG_CHARS  # (a step's fixed cost there is the segment's size)
    end = min(len(text), at + reach)
    step = update_words(base, text, at, len(text) - end, reach + MAX_WORD_WINDOW)
    if step is None or step[0].exact_until <= at:
        return None
    doc, change = step
    lo, hi, count = change.first_segment, change.first_segment + change.old_segments, \
        change.new_segments
    old_ids, old_starts, old_ends = abs_tokens(base, lo, hi)
    ids, starts, ends = abs_tokens(doc, lo, lo + count)
    if (np.array_equal(ids, old_ids) and np.array_equal(starts, old_starts)
            and np.array_equal(ends, old_ends)):
        return doc, None
    # (only the lines whose tokens differ: nothing was edited)
    return doc, replace(change, lines=changed_lines_between(base, doc, lo, hi, count, (at, at)))


def _safe_cut(toks: CompactTokens, at: int) -> bool:
    """True when a token of ``toks`` starts at ``at`` (or none is left) and none crosses it."""
    i = bisect_left(toks.starts, at)
    return ((i == len(toks.starts) or toks.starts[i] == at)
            and (i == 0 or toks.ends[i - 1] <= at))


def _line_context(base: DocTokens, text: str, lo: int, hi: int, start: int, end: int,
                  delta: int) -> tuple[int, int]:
    """The window ``[start, end)`` of an update cut down to one line of context on each side.

    The context before segment ``lo`` and after segment ``hi - 1`` is only there so that
    those two segments, which must come out as before, are encoded with text around them (a
    window's first and last tokens can differ from the whole text's: a dummy prefix, dropped
    trailing whitespace). Their agreement is what is checked; the line next to each does the
    same as the whole segment next to it, and a long segment of short lines is not encoded
    for nothing (a line of Thai: ~1.3 µs per character of window)."""
    first = base.cp_starts[lo]
    if lo > 0 and first - start > 1:
        line = text.rfind("\n", start, first - 1)
        if line >= 0:
            start = line + 1
    if hi < len(base.segments):
        after = base.cp_starts[hi] + delta  # segment hi's start in the new text
        line = text.find("\n", after, end - 1)
        if line >= 0:
            end = line + 1
    return start, end


def _encode_update(base: DocTokens, window: str, start: int,
                   lo: int) -> tuple[CompactTokens, bool]:
    """Encode the window of an update starting at document offset ``start`` (segment
    ``lo - 1``'s start) from the state at the last resume point before segment ``lo`` (the
    text before the edit is the old one, so the old state there is still the state), and
    whether that state was exact (before ``base.exact_until``)."""
    tokenizer = base.tokenizer
    if lo == 0:
        return encode_long(tokenizer, window, None), True
    limit = base.cp_starts[lo]
    for k in (lo - 1, lo):  # the lead segment's last point, else the first one after it
        seg = base.segments[k]
        points = seg.points
        if points is None:
            continue
        point = points.shifted(base.cp_starts[k] - seg.origin).before(limit, start)
        if point is not None:
            toks = encode_long(tokenizer, window, (point[0] - start, point[1]))
            return toks, toks.resume is not None and point[0] < base.exact_until
    return encode_joined(tokenizer.encode_compact, window), False


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
