"""The in-editor highlighter: colours each token's span inside the editable text.

Formats go straight into each block's ``QTextLayout`` (what ``QSyntaxHighlighter`` does
internally), so nothing runs on the GUI thread unless we ask: a big paste costs no Python
callback per block. Tokens come from the document-level result (:class:`DocTokens`): a
block's tokens are the tokens of its segment that overlap the line, and every code-point span
goes through :class:`~explorer.engine.offsets.Utf16Map` because Qt counts UTF-16 units.

After a full result (first encode, another tokenizer, another palette) the visible blocks are
painted at once and the rest in small batches from a zero-timer, so the window stays live.
After an edit only the blocks of the re-encoded segments are painted. A block whose text no
longer matches the result (the user typed since) is left alone until the next result lands.
``Block.userState()`` records the paint generation, so scrolled-to blocks are painted first.
Until a typed character's result lands (a few ms), the edited block's colours are shifted
along with its text (:meth:`TokenPainter.shift_for_edit`) so they do not slide off their
characters for a frame.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtGui import QColor, QFont, QTextBlock, QTextCharFormat, QTextDocument, QTextLayout

from explorer.engine.encoding import Token
from explorer.engine.offsets import Utf16Map
from explorer.ui.palettes import DEFAULT_PALETTE, PALETTES, color_index
from explorer.workers.doctokens import DocTokens

BATCH_BLOCKS = 400
"""Blocks painted per zero-timer tick in the background pass."""

VisibleRange = Callable[[], tuple[int, int]]


class TokenFormats:
    """Char formats per (palette slot, flags), built once and reused for every token."""

    def __init__(self, palette: str = DEFAULT_PALETTE, dark: bool = False) -> None:
        self.palette = palette
        self.dark = dark
        self._colors = [QColor(c) for c in PALETTES[palette].colors(dark)]
        self._cache: dict[tuple[int, bool, bool, bool], QTextCharFormat] = {}

    def color(self, token_id: int) -> QColor:
        """Background colour of ``token_id``."""
        return self._colors[color_index(token_id, len(self._colors))]

    def format(self, tok: Token, shared: bool) -> QTextCharFormat:
        """Format of a token; ``shared`` marks spans shared by partial-UTF-8 tokens."""
        slot = color_index(tok.id, len(self._colors))
        key = (slot, tok.special, tok.unknown, shared)
        fmt = self._cache.get(key)
        if fmt is None:
            fmt = QTextCharFormat()
            fmt.setBackground(self._colors[slot])
            if tok.special:
                fmt.setFontWeight(QFont.Weight.Bold)
                fmt.setFontUnderline(True)
            if tok.unknown:
                fmt.setUnderlineStyle(QTextCharFormat.UnderlineStyle.WaveUnderline)
                fmt.setUnderlineColor(QColor("#d00000"))
            elif shared:  # bytes of one character split over tokens: shown as one group
                fmt.setUnderlineStyle(QTextCharFormat.UnderlineStyle.DotLine)
            self._cache[key] = fmt
        return fmt


def block_ranges(doc: DocTokens, line: int, text: str,
                 formats: TokenFormats) -> list[QTextLayout.FormatRange] | None:
    """Format ranges of line ``line`` (a block whose text is ``text``), or None if stale."""
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
        return None
    u16 = Utf16Map(text)
    lo, hi = a + seg.origin, b + seg.origin
    out: list[QTextLayout.FormatRange] = []
    last_span = (-1, -1)
    for i, tok in enumerate(seg.tokens):
        if tok.end <= lo and not (tok.start == tok.end == lo):
            continue
        if tok.start > hi or (tok.start == hi and hi > lo):
            break
        s, e = max(tok.start, lo) - lo, min(tok.end, hi) - lo
        if e <= s or (s, e) == last_span:
            continue  # empty, or the rest of a partial-UTF-8 group already painted
        nxt = seg.tokens[i + 1] if i + 1 < len(seg.tokens) else None
        shared = nxt is not None and (nxt.start, nxt.end) == (tok.start, tok.end)
        last_span = (s, e)
        r = QTextLayout.FormatRange()
        r.start, r.length = u16.span_to_utf16(s, e)
        r.format = formats.format(tok, shared)
        out.append(r)
    return out


class TokenPainter(QObject):
    """Paints token colours into a ``QTextDocument`` from the latest :class:`DocTokens`."""

    complete = Signal()
    """Every block of the current result is painted."""

    def __init__(self, document: QTextDocument, visible: VisibleRange,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._document = document
        self._visible = visible
        self._doc: DocTokens | None = None
        self.formats = TokenFormats()
        self._generation = 1
        self._next_block = 0
        self._timer = QTimer(self)
        self._timer.setInterval(0)
        self._timer.timeout.connect(self._paint_batch)
        document.contentsChange.connect(self.shift_for_edit)

    @property
    def is_complete(self) -> bool:
        """True when no background painting is pending."""
        return not self._timer.isActive()

    def set_formats(self, formats: TokenFormats) -> None:
        """Switch palette/theme and repaint everything."""
        self.formats = formats
        self.repaint_all()

    def set_result(self, doc: DocTokens | None, lines: range | None = None) -> None:
        """Use ``doc``; repaint ``lines`` only (an edit) or everything (``None``)."""
        self._doc = doc
        if lines is None:
            self.repaint_all()
            return
        block = self._document.findBlockByNumber(lines.start)
        while block.isValid() and block.blockNumber() < lines.stop:
            self._paint(block)
            block = block.next()
        if self.is_complete:
            self.complete.emit()

    def repaint_all(self) -> None:
        """Paint the visible blocks now and the rest in the background."""
        self._generation += 1
        first, last = self._visible()
        block = self._document.findBlockByNumber(first)
        while block.isValid() and block.blockNumber() <= last:
            self._paint(block)
            block = block.next()
        self._next_block = 0
        self._timer.start()

    def paint_visible(self) -> None:
        """Paint visible blocks the background pass has not reached (after scrolling)."""
        first, last = self._visible()
        block = self._document.findBlockByNumber(first)
        while block.isValid() and block.blockNumber() <= last:
            if block.userState() != self._generation:
                self._paint(block)
            block = block.next()

    def shift_for_edit(self, pos: int, removed: int, added: int) -> None:
        """Keep the edited block's colours on their characters until the new result."""
        if removed == added or max(removed, added) > 64:
            return
        block = self._document.findBlock(pos)
        if not block.isValid() or pos + removed > block.position() + block.length():
            return  # the edit spans blocks: the result repaints them
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
        block.layout().setFormats(shifted)

    def _paint_batch(self) -> None:
        block = self._document.findBlockByNumber(self._next_block)
        n = 0
        while block.isValid() and n < BATCH_BLOCKS:
            if block.userState() != self._generation:
                self._paint(block)
                n += 1
            block = block.next()
        if block.isValid():
            self._next_block = block.blockNumber()
            return
        self._timer.stop()
        self.complete.emit()

    def _paint(self, block: QTextBlock) -> None:
        layout = block.layout()
        if self._doc is None:
            ranges: list[QTextLayout.FormatRange] | None = []
        else:
            ranges = block_ranges(self._doc, block.blockNumber(), block.text(), self.formats)
        if ranges is None:
            return  # stale: the text changed since this result; the next result paints it
        if ranges or layout.formats():
            layout.setFormats(ranges)
            self._document.markContentsDirty(block.position(), block.length())
        block.setUserState(self._generation)
