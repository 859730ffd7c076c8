"""The in-editor highlighter: colours each token's span inside the editable text.

Formats go straight into each block's ``QTextLayout`` (what ``QSyntaxHighlighter`` does
internally), so nothing runs on the GUI thread unless we ask: a big paste costs no Python
callback per block. Tokens come from the document-level result (:class:`DocTokens`): a
block's tokens are the tokens of its segment that overlap the line, and every code-point span
goes through :class:`~explorer.engine.offsets.Utf16Map` because Qt counts UTF-16 units.

After a full result (first encode, another tokenizer, another palette) the visible blocks are
painted at once and the rest in small batches from a zero-timer, so the window stays live; in
a document of more than :data:`BACKGROUND_MAX_BLOCKS` blocks or :data:`BACKGROUND_MAX_CHARS`
characters only what is shown is painted, each block when it comes into view.
After an edit only the blocks of the re-encoded segments are painted. A block whose text no
longer matches the result (the user typed since) is left alone until the next result lands.
``Block.userState()`` records the paint generation, so scrolled-to blocks are painted first.
New colours repaint only their own blocks on screen (:meth:`TokenPainter._batch`): Qt's plain
text layout would otherwise repaint the whole viewport for every block whose formats change
(its "optimization potential" path: a format change is reported as a change twice the block's
length, which ends in a later block), twice per keystroke.
A token with the same palette colour as the token before it takes that colour's second shade
(:func:`~explorer.ui.palettes.shaded_slots`; the run before a block's first token is followed
back, across segments: :func:`shade_state`), so neighbours never look like one token; an
edit that reshades a run going on past its lines repaints those too (``_ripple``).
Until a typed character's result lands (a few ms), the edited block's colours are shifted
along with its text (:meth:`TokenPainter.shift_for_edit`) so they do not slide off their
characters for a frame. While the window holds its paint for the result
(:mod:`explorer.ui.paint_hold`, :attr:`TokenPainter.holding`), the shift waits: it is made
only if the hold expires first (:meth:`TokenPainter.apply_shifts`) or the result is for an
older text; a current result repaints the block anyway, so the usual keystroke lays its
block out once instead of twice.

Format-range edges fall only on grapheme-cluster boundaries (:mod:`explorer.ui.graphemes`,
``regex``'s ``\\X``: the one definition the editor and inspector use too), because
Qt shapes each format range separately: a colour edge inside a user-perceived character
(Devanagari vowel sign, ZWJ emoji sequence, flag, skin tone, combining mark) breaks its
rendering. A cluster covered by more than one token gets one "split character" format over the
whole cluster (:data:`SPLIT_COLORS`); hover and the token table list the tokens inside it.
Blocks of pure ASCII skip the boundary search (every character is its own cluster), so typing
in ordinary text costs nothing extra. Colours shifted for an edit in progress are re-snapped to
the new clusters (a typed ZWJ or combining mark can join two clusters).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from itertools import islice
from operator import itemgetter

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtGui import (
    QColor,
    QFont,
    QTextBlock,
    QTextCharFormat,
    QTextDocument,
    QTextLayout,
)
from PySide6.QtWidgets import QPlainTextDocumentLayout
from shiboken6 import isValid

from explorer.engine.encoding import Token
from explorer.engine.offsets import Utf16Map
from explorer.ui.graphemes import graphemes_of
from explorer.ui.palettes import (
    DEFAULT_PALETTE,
    PALETTES,
    SLOT_MIX,
    color_index,
    second_shade,
)
from explorer.workers.doctokens import DocTokens

BATCH_BLOCKS = 400
"""Blocks painted per zero-timer tick in the background pass."""
EDIT_SYNC_LINES = 8
"""An edit's re-encoded lines up to this many are all painted at once; of more (a Unigram
model's segments span many lines) the shown ones, the rest right after (see set_result)."""
BACKGROUND_MAX_BLOCKS = 20_000
"""Documents with more blocks get no background pass: a block is painted when it is shown
(scrolling, resizing: :meth:`TokenPainter.paint_visible` runs on the editor's update
requests). Painting all 230k blocks of a 10 MB text took ~15 s of the GUI thread and kept a
``QTextLayout`` with formats alive for every block."""
BACKGROUND_MAX_CHARS = 1_000_000
"""Documents of more characters get no background pass either (see
:data:`BACKGROUND_MAX_BLOCKS`): a 9 MB text in 200 lines of 47k characters was painted whole,
every block laid out again with its formats, ~9 s of the GUI thread after the encode."""
BATCH_CHARS = 65_536
"""A background batch ends once it has painted this many characters (or
:data:`BATCH_BLOCKS` blocks): a block of a long line is laid out whole."""

FEW_BLOCKS = 8
"""Up to this many blocks with new colours are each laid out and repainted at once, shown
or not (a keystroke's line); of more, only the shown ones (the rest when they are shown)."""

RIPPLE_MAX_BLOCKS = 64
"""At most this many blocks after an edit's lines are checked for colours that changed with
it (a run of same-coloured tokens over line ends; see TokenPainter._ripple)."""

LONG_LINE_CHARS = 100_000
"""A block (line) longer than this is coloured over its first this many code points only
(to the end of the token there). Qt lays a block out whole, with one format range per token:
a 9 MB minified JSON line took 42 s and 2.4 GB to show coloured, bare Qt 4.8 s and 0.46 GB
uncoloured; tokens, counts, hover and the table still cover the whole line."""
RANGE_CACHE = 50_000
"""Format ranges a :class:`TokenFormats` keeps for reuse (~10 MB at most)."""

SHIFT_MAX_LINE = 8192
"""An edit's colours are shifted along with its text until the result lands
(:meth:`TokenPainter.shift_for_edit`) only in a line up to this long (UTF-16 units): in a
longer one the shift lays the whole line out again (and finds its grapheme clusters), and
the result does it once more a few ms later: in lines of 47k characters that was ~78 ms of
each keystroke's ~230 ms."""
RUN_LOOKBACK = 4096
"""A block's first token follows its run of same-coloured tokens back this far at most: in a
longer run (thousands of blank lines, each a ``<0x0A>`` byte token of a SentencePiece model)
every block walking back to the run's start made painting quadratic. Beyond it the shades
keep alternating, possibly in the other phase."""

VisibleRange = Callable[[], tuple[int, int]]


SPLIT_COLORS = {False: ("#d4d4d4", "#a0005a"), True: ("#505050", "#ff8cc6")}
"""Theme (dark=True) -> (background, dashed underline) of a character split between tokens.

Neutral grey, unlike every palette's hues, so a split character never reads as a token of its
own; the text colour of each theme keeps >= 4.5:1 contrast on it."""


class TokenFormats:
    """Char formats per (palette slot, flags), built once and reused for every token."""

    def __init__(self, palette: str = DEFAULT_PALETTE, dark: bool = False) -> None:
        self.palette = palette
        self.dark = dark
        self._colors = [QColor(c) for c in PALETTES[palette].colors(dark)]
        self._shades = [second_shade(c, dark) for c in self._colors]
        self._cache: dict[tuple[int, bool, bool, bool], QTextCharFormat] = {}
        self._plain: list[QTextCharFormat] | None = None
        self._ranges: dict[tuple[int, int, int], QTextLayout.FormatRange] = {}
        """Format ranges made, by ``(start, end, id(format))`` (this object keeps every
        format it hands out alive, so an id is never another format's)."""
        background, underline = SPLIT_COLORS[dark]
        self.split = QTextCharFormat()
        """One character (grapheme cluster) covered by more than one token."""
        self.split.setBackground(QColor(background))
        self.split.setUnderlineStyle(QTextCharFormat.UnderlineStyle.DashUnderline)
        self.split.setUnderlineColor(QColor(underline))

    @property
    def size(self) -> int:
        """Number of colour slots of the palette."""
        return len(self._colors)

    def color(self, token_id: int, shaded: bool = False) -> QColor:
        """Background colour of ``token_id`` (``shaded``: its second shade, see
        :func:`~explorer.ui.palettes.shaded_slots`)."""
        slot = color_index(token_id, len(self._colors))
        return self._shades[slot] if shaded else self._colors[slot]

    @property
    def split_color(self) -> QColor:
        """Background of a character split between tokens."""
        return self.split.background().color()

    def format(self, tok: Token, shaded: bool = False) -> QTextCharFormat:
        """Format of a token that covers whole characters."""
        return self.format_of(color_index(tok.id, len(self._colors)), tok.special, tok.unknown,
                              shaded)

    def ranges(self, spans: list[Span]) -> list[QTextLayout.FormatRange]:
        """A format range per ``(start, end, format)`` (formats of this object), kept and
        handed out again (Qt copies ranges it is given; a new one costs ~1.7 µs of Python
        attribute setting, and a repainted line mostly has the ranges it had)."""
        found = self._ranges
        if len(found) + len(spans) > RANGE_CACHE:
            found.clear()
        get = found.get
        out = []
        add = out.append
        for s, e, fmt in spans:
            key = (s, e, id(fmt))
            r = get(key)
            if r is None:
                r = found[key] = _range(s, e, fmt)
            add(r)
        return out

    def plain_formats(self) -> list[QTextCharFormat]:
        """The formats of tokens with no flags: index ``2 * slot + shaded``."""
        if self._plain is None:
            self._plain = [self.format_of(slot, False, False, shaded)
                           for slot in range(self.size) for shaded in (False, True)]
        return self._plain

    def format_of(self, slot: int, special: bool, unknown: bool,
                  shaded: bool = False) -> QTextCharFormat:
        """Format of a token in palette slot ``slot`` with these flags (``shaded``: the
        slot's second shade)."""
        key = (slot, special, unknown, shaded)
        fmt = self._cache.get(key)
        if fmt is None:
            fmt = QTextCharFormat()
            fmt.setBackground(self._shades[slot] if shaded else self._colors[slot])
            if special:
                fmt.setFontWeight(QFont.Weight.Bold)
                fmt.setFontUnderline(True)
            if unknown:
                fmt.setUnderlineStyle(QTextCharFormat.UnderlineStyle.WaveUnderline)
                fmt.setUnderlineColor(QColor("#d00000"))
            self._cache[key] = fmt
        return fmt


PLAIN_FLAGS = (False, False)
"""``(special, unknown)`` of an ordinary token."""

Span = tuple[int, int, QTextCharFormat]
"""A token's code-point ``(start, end)`` in the block and its format."""


def block_ranges(doc: DocTokens, line: int, text: str, formats: TokenFormats,
                 first_only: bool = False) -> list[QTextLayout.FormatRange] | None:
    """Format ranges of line ``line`` (a block whose text is ``text``), or None if stale.

    Every range edge is a grapheme-cluster boundary (see :func:`split_clusters`). Edges
    are worked out in code points and turned into UTF-16 units once, at the end.
    ``first_only``: just the first token's range, whole (not cut at split clusters).
    A line longer than :data:`LONG_LINE_CHARS` gets ranges over its start only.
    The ranges may be shared with other calls (:meth:`TokenFormats.ranges`): read them,
    do not change them.

    A keystroke's line is worked out again on the GUI thread before it is repainted: the
    loop over its tokens is written out (no generator) and its ranges are reused: ~3 µs a
    token instead of ~8 (a 400-character Cyrillic line: ~200 tokens)."""
    k = doc.segment_of_line(line)
    seg = doc.segments[k]
    skip = line - doc.line_starts[k]
    a = 0
    for _ in range(skip):
        a = seg.text.find("\n", a) + 1
        if a == 0:
            return None
    b = seg.text.find("\n", a)
    b = len(seg.text) if b == -1 else b
    if seg.text[a:b] != text:
        if not (b == len(seg.text) and k == len(doc.segments) - 1
                and doc.cp_starts[-1] < len(doc.text) and text.startswith(seg.text[a:b])):
            return None
        # a partial result cut inside this line (docstore.head_segment): its start
        text = text[:b - a]
    lo, hi = a + seg.origin, b + seg.origin
    if b - a > LONG_LINE_CHARS:  # (only its start is coloured: see LONG_LINE_CHARS)
        hi = lo + LONG_LINE_CHARS
    spans: list[Span] = []
    shared: list[int] = []  # spans whose character(s) the next tokens share (partial UTF-8)
    starts, ends, ids = seg.starts, seg.ends, seg.ids
    first = bisect_left(starts, lo)  # tokens are in text order: start at the line
    while first > 0 and ends[first - 1] >= lo:  # tokens reaching into it (or empty at lo)
        first -= 1
    # the tokens up to the line's end (an empty line: those starting at it too)
    stop = bisect_left(starts, hi, first) if hi > lo else bisect_right(starts, hi, first)
    if hi < b + seg.origin:  # a long line's coloured start: its last token whole
        hi = min(ends[stop - 1], b + seg.origin) if stop > first else lo
        text = text[:hi - lo]
    size = formats.size
    prev_slot, prev_shaded = shade_state(doc, k, first, size)
    # A token without flags (almost every one) takes its slot's plain format from a list;
    # only flagged ones (special, unknown) and the segment's irregular tokens go through
    # format_of: two calls a token fewer on a long line.
    plain = formats.plain_formats()
    flags_of = doc.table.flags
    known_flags = doc.table.known_flags()
    irregular = seg.irregular
    last_s = last_e = -1
    for j, tid, t_start, t_end in zip(range(first, stop), ids[first:stop], starts[first:stop],
                                      ends[first:stop], strict=True):
        # the token's palette slot and shade (palettes.shaded_slots, written out)
        slot = ((tid * SLOT_MIX) & 0xFFFFFFFF) % size
        prev_shaded = shaded = slot == prev_slot and not prev_shaded
        prev_slot = slot
        if t_end <= lo and not (t_start == t_end == lo):
            continue
        s = (t_start if t_start > lo else lo) - lo
        e = (t_end if t_end < hi else hi) - lo
        if e <= s:
            continue
        if s == last_s and e == last_e:  # another byte of the same character(s)
            if not shared or shared[-1] != len(spans) - 1:
                shared.append(len(spans) - 1)
            continue
        last_s, last_e = s, e
        flagged = (doc.flags(seg, j) if irregular is not None and j in irregular
                   else known_flags(tid) or flags_of(tid))
        spans.append((s, e, plain[slot + slot + shaded] if flagged == PLAIN_FLAGS
                      else formats.format_of(slot, *flagged, shaded)))
        if first_only:
            break
    # ASCII without CR LF: one code point per grapheme, nothing to split
    if not first_only and (not text.isascii() or "\r\n" in text):
        split = split_clusters(text, spans, shared)
        if split:
            spans = _cut_out(spans, split, formats.split)
    u16 = Utf16Map(text)
    if u16.length_utf16 != len(text):  # astral characters: two UTF-16 units each
        to16 = u16.to_utf16
        spans = [(to16(s), to16(e), fmt) for s, e, fmt in spans]
    return formats.ranges(spans)


def shade_state(doc: DocTokens, k: int, index: int, size: int) -> tuple[int, bool]:
    """The :func:`~explorer.ui.palettes.shaded_slots` state just before token ``index`` of
    segment ``k``: the run of same-slot tokens before it is followed back, into earlier
    segments too (the whole document's tokens are one sequence)."""
    before = _ids_before(doc, k, index)
    last = next(before, None)
    if last is None:
        return -1, False
    slot = color_index(last, size)
    run = 1  # tokens of the run that ends just before `index`
    for token_id in islice(before, RUN_LOOKBACK):
        if color_index(token_id, size) != slot:
            break
        run += 1
    return slot, run % 2 == 0


def _ids_before(doc: DocTokens, k: int, index: int) -> Iterator[int]:
    """The document's token ids before token ``index`` of segment ``k``, nearest first."""
    ids = doc.segments[k].ids
    for i in range(index - 1, -1, -1):
        yield ids[i]
    for earlier in range(k - 1, -1, -1):
        ids = doc.segments[earlier].ids
        for i in range(len(ids) - 1, -1, -1):
            yield ids[i]


def same_ranges(a: list[QTextLayout.FormatRange], b: list[QTextLayout.FormatRange]) -> bool:
    """True when two lists of format ranges are equal (Qt lays a block out again for new
    formats: a long line of a complex script costs milliseconds, and most lines of a big
    re-encoded segment come out as they were)."""
    # Spans first, formats only when every span matches: comparing two formats costs
    # ~1.3 µs, and an edited line's spans differ from the edit on (a long line of Thai:
    # 0.33 ms for the formats of its 218 ranges).
    return (len(a) == len(b)
            and all(x.start == y.start and x.length == y.length
                    for x, y in zip(a, b, strict=True))
            and all(x.format == y.format for x, y in zip(a, b, strict=True)))


def _range(start: int, end: int, fmt: QTextCharFormat) -> QTextLayout.FormatRange:
    r = QTextLayout.FormatRange()
    r.start, r.length = start, end - start
    r.format = fmt
    return r


def split_clusters(text: str, spans: Sequence[Span] | Sequence[tuple[int, int]],
                   shared: Sequence[int] = ()) -> list[tuple[int, int]]:
    """Code-point runs of whole grapheme clusters that are covered by more than one token.

    ``text`` is a block's text, ``spans`` its tokens in order (code points; a span stands
    for all the tokens of one same span), ``shared`` the indexes of spans shared by
    several tokens (partial UTF-8). A cluster is split when a token edge falls inside it,
    when tokens share it or when two token spans overlap on it. Qt shapes a format range
    on its own, so a colour edge inside a cluster would show a Devanagari vowel sign on a
    dotted circle, a flag as two letters, a ZWJ family as separate people: such clusters
    get one range over the whole. Touching runs are merged. Only the token edges that are
    not cluster boundaries are looked up, not every cluster.
    """
    g = graphemes_of(text)
    down, up = g.down_cp, g.up_cp  # (the identity where every code point is a cluster)
    bad: list[tuple[int, int]] = []
    if not g.every_code_point:  # else no edge can fall inside a cluster
        edges = {x for span in spans for x in span[:2]}
        bad += [(down(x), up(x)) for x in edges.difference(g.boundary_set())]
    for n in shared:
        s, e = spans[n][:2]
        bad.append((down(s), up(e)))
    reach = 0  # furthest token end so far
    for span in spans:
        s, e = span[0], span[1]
        if s < reach:  # overlaps an earlier token
            bad.append((down(s), up(min(reach, e))))
        if e > reach:
            reach = e
    if not bad:
        return []
    bad.sort()
    merged: list[tuple[int, int]] = []
    for s, e in bad:
        if merged and s <= merged[-1][1]:
            if e > merged[-1][1]:
                merged[-1] = (merged[-1][0], e)
        else:
            merged.append((s, e))
    return merged


def snap_to_graphemes(text: str, ranges: list[QTextLayout.FormatRange]
                      ) -> list[QTextLayout.FormatRange]:
    """``ranges`` (in order) widened to whole grapheme clusters of ``text``; a range that
    would overlap the one before starts where that one ends (so may vanish)."""
    g = graphemes_of(text)
    out: list[QTextLayout.FormatRange] = []
    reach = 0
    for r in ranges:
        s, e = max(g.down(r.start), reach), g.up(r.start + r.length)
        if e > s:
            r.start, r.length = s, e - s
            out.append(r)
            reach = e
    return out


def _cut_out(spans: list[Span], split: list[tuple[int, int]],
             split_format: QTextCharFormat) -> list[Span]:
    """Token spans minus the ``split`` runs, plus one ``split_format`` span per run.

    ``split`` is sorted and disjoint (:func:`split_clusters`); ``spans`` are in token
    order (their starts never decrease). Most spans meet no run and are kept whole."""
    pieces: list[Span] = []
    add = pieces.append
    n = len(split)
    i = 0  # the first run that ends after the current span's start
    for span in spans:
        s, e, fmt = span
        while i < n and split[i][1] <= s:
            i += 1
        if i == n or split[i][0] >= e:
            add(span)
            continue
        pos, k = s, i
        while pos < e:
            while k < n and split[k][1] <= pos:
                k += 1
            if k == n or split[k][0] >= e:
                add((pos, e, fmt))
                break
            if split[k][0] > pos:
                add((pos, split[k][0], fmt))
            pos = split[k][1]
    pieces += [(s, e, split_format) for s, e in split]
    pieces.sort(key=itemgetter(0))  # (two sorted runs: one merge)
    return pieces


class TokenPainter(QObject):
    """Paints token colours into a ``QTextDocument`` from the latest :class:`DocTokens`."""

    complete = Signal()
    """Every block of the current result is painted."""
    long_line = Signal(int, int)
    """A block longer than :data:`LONG_LINE_CHARS` was painted (its number, its length in
    code points): only its start is coloured. Once per block per result."""

    def __init__(self, document: QTextDocument, visible: VisibleRange,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._document = document
        self._visible = visible
        self._doc: DocTokens | None = None
        self.formats = TokenFormats()
        self._generation = 1
        self._next_block = 0
        self._painting = False
        self._batch_depth = 0
        self._dirty: list[tuple[QTextBlock, int, float]] = []
        """Blocks whose formats changed in the current batch, with their line counts and
        heights before."""
        self.show_moved: Callable[[QTextBlock, float, int], None] | None = None
        """Shows a block whose new colours changed its height (was, lines before): set by
        the window (:meth:`~explorer.ui.edit_repaint.EditRepaint.show_block`: the pixels
        below it are moved, not painted). None, or more than one such block: the whole
        viewport is repainted."""
        self._shift: tuple[int, int, int] | None = None
        self._pending: list[tuple[int, int, int, int]] = []
        """Shifts waiting while the paint is held: ``(pos, removed, added, block count)``."""
        self.holding: Callable[[], bool] = lambda: False
        """Whether the window holds its paint for an edit's result (see ``apply_shifts``)."""
        self._edit_lines: range | None = None
        self._edit_next = 0
        self._edit_timer = QTimer(self)
        self._edit_timer.setInterval(0)
        self._edit_timer.timeout.connect(self._paint_edit_batch)
        self._timer = QTimer(self)
        self._timer.setInterval(0)
        self._timer.timeout.connect(self._paint_batch)
        document.contentsChange.connect(self._note_edit)
        document.contentsChanged.connect(self._after_edit)

    def _big(self) -> bool:
        """The document is painted as it is shown, with no background pass (more than
        :data:`BACKGROUND_MAX_BLOCKS` blocks or :data:`BACKGROUND_MAX_CHARS` characters)."""
        doc = self._document
        return (doc.blockCount() > BACKGROUND_MAX_BLOCKS
                or doc.characterCount() > BACKGROUND_MAX_CHARS)

    @property
    def is_complete(self) -> bool:
        """True when no background painting is pending."""
        return not self._timer.isActive()

    def set_formats(self, formats: TokenFormats) -> None:
        """Switch palette/theme and repaint everything."""
        self.formats = formats
        self.repaint_all()

    def set_result(self, doc: DocTokens | None, lines: range | None = None,
                   current: bool = True) -> None:
        """Use ``doc``; repaint ``lines`` only (an edit) or everything (``None``).
        ``current``: ``doc`` is for the editor's text as it is (then the shifts that waited
        are moot: the edited lines are among ``lines``); else they are made first.

        Up to :data:`EDIT_SYNC_LINES` lines are painted at once; of more (a big segment
        re-encoded, a paste) only the shown ones, the rest by a background pass over just
        those lines that does not hold back :attr:`is_complete` (or, in a big document,
        when they are shown)."""
        if current:
            self._pending.clear()
        else:
            self.apply_shifts()
        self._doc = doc
        if lines is None:
            self.repaint_all()
            return
        lazy = self._big()
        first, last = self._visible() if lazy or len(lines) > EDIT_SYNC_LINES else (0, -1)
        now = not lazy and len(lines) <= EDIT_SYNC_LINES
        deferred = False
        with self._batch():
            block = self._document.findBlockByNumber(lines.start)
            while block.isValid() and block.blockNumber() < lines.stop:
                if now or first <= block.blockNumber() <= last:
                    self._paint(block)
                else:
                    block.setUserState(0)  # painted later (generations start at 1)
                    deferred = True
                block = block.next()
            self._ripple(block)
        if deferred and not lazy:
            self._edit_lines = lines if self._edit_lines is None else range(
                min(lines.start, self._edit_lines.start), max(lines.stop, self._edit_lines.stop))
            self._edit_next = self._edit_lines.start
            self._edit_timer.start()
        if self.is_complete:
            self.complete.emit()

    def _ripple(self, block: QTextBlock) -> None:
        """Paint the blocks after an edit's lines whose colours changed all the same: a
        token's shade depends on the run of same-coloured tokens it is in (see
        :func:`~explorer.ui.palettes.shaded_slots`), and a run can go on past a line end.
        Stops at the first block that keeps its colours (empty blocks show no token).

        These blocks hold the tokens they held (the re-encoded lines come before them):
        only the shade their first token enters with can differ. When that token's range
        is the one the block shows, its run goes on as it did, and so does every colour
        after it: the block is not worked out again (a long line of a complex script
        costs ~1 ms, and almost every keystroke stops at the first such block)."""
        for _ in range(RIPPLE_MAX_BLOCKS):
            if not block.isValid() or self._first_range_kept(block):
                return
            if not (self._paint(block) or not block.text()):
                return
            block = block.next()

    def _first_range_kept(self, block: QTextBlock) -> bool:
        """True when ``block`` shows its first token's range as the current result has it
        (same span, same format: same colour and shade)."""
        if self._doc is None or not block.text():
            return False
        head = block_ranges(self._doc, block.blockNumber(), block.text(), self.formats,
                            first_only=True)
        if not head:
            return False
        shown = block.layout().formats()
        return bool(shown) and same_ranges(head, shown[:1])

    def _paint_edit_batch(self) -> None:
        """Background painting of the not-shown lines of a big edit (see set_result)."""
        lines = self._edit_lines
        if lines is None or not isValid(self._document):
            self._edit_timer.stop()
            return
        going_on = self._paint_some(self._edit_next, lines.stop)
        if going_on < lines.stop:
            self._edit_next = going_on
            return
        self._edit_lines = None
        self._edit_timer.stop()

    def _paint_some(self, first: int, stop: int) -> int:
        """One background batch: paint the blocks from number ``first`` up to ``stop`` not
        painted for the current result, at most :data:`BATCH_BLOCKS` of them and
        :data:`BATCH_CHARS` characters; the block number to go on from (``stop``: done)."""
        block = self._document.findBlockByNumber(first)
        n = chars = 0
        with self._batch():
            while (block.isValid() and block.blockNumber() < stop and n < BATCH_BLOCKS
                   and chars < BATCH_CHARS):
                if block.userState() != self._generation:
                    self._paint(block)
                    n += 1
                    chars += block.length()
                block = block.next()
        return block.blockNumber() if block.isValid() and block.blockNumber() < stop else stop

    def set_partial(self, doc: DocTokens) -> None:
        """Paint the shown blocks from a partial first result (the start of a big text)
        while the rest is encoded; blocks it does not cover stay as they are."""
        self._doc = doc
        self._generation += 1
        self._timer.stop()
        if isValid(self._document):
            self._paint_shown()

    def repaint_all(self) -> None:
        """Paint the visible blocks now and the rest in the background."""
        self._generation += 1
        self._edit_lines = None
        self._edit_timer.stop()
        first, last = self._visible()
        block = self._document.findBlockByNumber(first)
        with self._batch():
            while block.isValid() and block.blockNumber() <= last:
                self._paint(block)
                block = block.next()
        self._next_block = 0
        if not self._big():
            self._timer.start()
        else:  # the rest is painted as it is shown
            self._timer.stop()
            self.complete.emit()

    def paint_visible(self) -> None:
        """Paint visible blocks not painted for the current result (after scrolling or
        resizing). Nothing to do, and not even the visible range is computed, while every
        block is painted (a document small enough for the background pass, once it ended)."""
        if (self._painting or not isValid(self._document)
                or (not self._timer.isActive() and not self._edit_timer.isActive()
                    and not self._big())):
            return  # our own format changes ask for updates too; the window is closing
        self._paint_shown()

    def _paint_shown(self) -> None:
        """Paint the visible blocks whose paint generation is not the current one."""
        with self._batch():
            first, last = self._visible()
            block = self._document.findBlockByNumber(first)
            generation = self._generation
            while block.isValid() and block.blockNumber() <= last:
                if block.userState() != generation:
                    self._paint(block)
                block = block.next()

    def _note_edit(self, pos: int, removed: int, added: int) -> None:
        """An edit is being made: its colours are shifted once Qt has laid it out (a format
        change made inside ``contentsChange`` would be merged into the edit's own change and
        make Qt repaint the whole viewport)."""
        if removed != added:
            self._shift = (pos, removed, added)

    def _after_edit(self) -> None:
        shift, self._shift = self._shift, None
        if shift is None:
            return
        if self.holding():  # nothing is painted before the result: shift only if needed
            self._pending.append((*shift, self._document.blockCount()))
        else:
            self.shift_for_edit(*shift)

    def apply_shifts(self) -> None:
        """Make the shifts that waited for the result (the hold expired, or the result is
        for an older text). Edits are replayed in order when they all stayed inside one
        block (the later ones did not move it); otherwise the result repaints the blocks."""
        pending, self._pending = self._pending, []
        if not pending:
            return
        count = self._document.blockCount()
        blocks = {self._document.findBlock(pos).blockNumber() for pos, *_ in pending}
        if len(blocks) == 1 and all(n == count for *_, n in pending):
            for pos, removed, added, _ in pending:
                self.shift_for_edit(pos, removed, added)

    def shift_for_edit(self, pos: int, removed: int, added: int) -> None:
        """Keep the edited block's colours on their characters until the new result."""
        if removed == added or max(removed, added) > 64:
            return
        block = self._document.findBlock(pos)
        if not block.isValid() or pos + removed > block.position() + block.length():
            return  # the edit spans blocks: the result repaints them
        if block.length() > SHIFT_MAX_LINE:
            return  # (see SHIFT_MAX_LINE: the result repaints it)
        col, delta = pos - block.position(), added - removed
        shifted: list[QTextLayout.FormatRange] = []
        for r in block.layout().formats():
            end = r.start + r.length
            if end <= col and not (end == col and delta > 0):
                pass  # before the edit
            elif r.start >= col + removed:
                r.start += delta  # after the edit
            else:  # the token the edit is in grows or shrinks with it
                r.length = max(0, r.length + delta)
            if r.length > 0:
                shifted.append(r)
        text = block.text()
        if not text.isascii() or "\r\n" in text:  # e.g. a ZWJ typed between two emoji
            shifted = snap_to_graphemes(text, shifted)
        with self._batch():
            self._set_formats(block, shifted)

    def _paint_batch(self) -> None:
        if not isValid(self._document):
            self._timer.stop()
            return
        if self._big():
            # The text became big while a pass for a small one ran (a big file opened): a
            # big document is painted as it is shown (see repaint_all), and this pass would
            # otherwise go over every block, competing with the encode for the GIL.
            self._timer.stop()
            self.complete.emit()
            return
        count = self._document.blockCount()
        going_on = self._paint_some(self._next_block, count)
        if going_on < count:
            self._next_block = going_on
            return
        self._timer.stop()
        self.complete.emit()

    def _paint(self, block: QTextBlock) -> bool:
        """Paint ``block`` from the current result; True if its colours changed."""
        layout = block.layout()
        if self._doc is None:
            ranges: list[QTextLayout.FormatRange] | None = []
        else:
            ranges = block_ranges(self._doc, block.blockNumber(), block.text(), self.formats)
        if ranges is None:
            return False  # stale: the text changed since this result; the next one paints it
        if (block.length() > LONG_LINE_CHARS and block.userState() != self._generation
                and len(text := block.text()) > LONG_LINE_CHARS):
            self.long_line.emit(block.blockNumber(), len(text))
        changed = not same_ranges(ranges, layout.formats())
        if changed:  # else no relayout: nothing changed
            self._set_formats(block, ranges)
        block.setUserState(self._generation)
        return changed

    def _set_formats(self, block: QTextBlock, ranges: list[QTextLayout.FormatRange]) -> None:
        """Give ``block`` these formats and have it laid out again (inside :meth:`_batch`)."""
        self._dirty.append((block, block.lineCount(), block.layout().boundingRect().height()))
        block.layout().setFormats(ranges)
        self._document.markContentsDirty(block.position(), block.length())

    @contextmanager
    def _batch(self) -> Iterator[None]:
        """Format changes made inside are shown by repainting just their blocks.

        Qt's plain-text layout answers a block's format change with a repaint of the whole
        viewport (see the module notes), so its signals are held while formats are set;
        afterwards each changed block is laid out and repainted alone (of many, only the
        shown ones: the others are laid out when shown, Qt's layout is lazy anyway), and only
        a block whose height changed (wrapping moved) has the pixels below it moved
        (:attr:`show_moved`), or, when several did, the whole viewport repainted.
        """
        if self._batch_depth:  # inside another batch: that one shows the changes
            yield
            return
        layout = self._document.documentLayout()
        held = isinstance(layout, QPlainTextDocumentLayout) and not layout.signalsBlocked()
        painting, self._painting = self._painting, True
        self._batch_depth += 1
        if held:
            layout.blockSignals(True)
        try:
            yield
        finally:
            self._batch_depth -= 1
            if held:
                layout.blockSignals(False)
            dirty, self._dirty = self._dirty, []
            try:
                if held and dirty:
                    self._show_changed(layout, dirty)
            finally:
                self._painting = painting

    def _show_changed(self, layout: QPlainTextDocumentLayout,
                      dirty: list[tuple[QTextBlock, int, float]]) -> None:
        if len(dirty) > FEW_BLOCKS:  # only the shown ones (finding them costs ~0.3 ms)
            first, last = self._visible()
            dirty = [d for d in dirty if d[0].isValid() and first <= d[0].blockNumber() <= last]
        moved: list[tuple[QTextBlock, float, int]] = []
        for block, lines, height in dirty:
            if not block.isValid():
                continue
            if layout.blockBoundingRect(block).height() != height:  # (lays it out now)
                moved.append((block, height, lines))
            else:
                layout.updateBlock.emit(block)
        if len(moved) == 1 and self.show_moved is not None:
            self.show_moved(*moved[0])  # repaint it, move the pixels below it
        elif moved:  # (the scroll bar counts lines)
            layout.documentSizeChanged.emit(layout.documentSize())
            layout.requestUpdate()
