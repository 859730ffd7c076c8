"""The editable text: hover tooltips for tokens, the selected-token outline, file drops.

The editor knows nothing about tokenizers: it asks a ``tooltip_at(block, block_text, col16)``
callback for hover text and reports cursor moves and dropped files as signals. With the
mouse within :data:`GAP_PIXELS` of the gap between two characters it first asks
``boundary_tip_at(block, block_text, col16)`` (the gap before column ``col16``): "why this
boundary" when the gap is a token boundary.

Hover and outline work on whole grapheme clusters (user-perceived characters), like the
painter: the tooltip of a character lists the tokens of every code point in it (a flag, a ZWJ
emoji or a letter with a combining mark can be split between tokens, and a token may lie
wholly inside one character), and the outline of a token inside a character covers the whole
character, because a format edge inside a cluster would break its shaping.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QEvent, QMimeData, QObject, QPoint, Signal
from PySide6.QtGui import (
    QColor,
    QDragEnterEvent,
    QDropEvent,
    QFont,
    QFontDatabase,
    QGuiApplication,
    QHelpEvent,
    QTextCursor,
    QTextFormat,
    QTextLine,
    QTextOption,
)
from PySide6.QtWidgets import QPlainTextEdit, QTextEdit, QToolTip, QWidget

from explorer.engine.offsets import Utf16Map
from explorer.ui.graphemes import WHOLE_LINE, Graphemes, cluster_at

TooltipAt = Callable[[int, str, int], str | None]
SPLIT_NOTE = ("<p><b>One character, {n} code points, split between tokens</b> "
              "(each token below; its bytes in hex)</p>")
"""Heads the tooltip of a multi-code-point character whose code points are in different tokens."""
GAP_PIXELS = 3
"""How close (in pixels) to the gap between two characters the mouse must be for the gap's
boundary tooltip instead of the character's token tooltip."""
BIG_PASTE_CHARS = 100_000
"""Pastes this long first clear the colours where they go (see ``_drop_formats_at_cursor``)."""
STEADY_CURSOR_LINE = 200_000
"""With the text cursor in a line (block) longer than this many UTF-16 units, the cursor
does not blink (:meth:`TokenEditor.update_blinking`). Qt repaints the whole block the cursor
is in at every blink, however small the cursor: 0.25-0.6 s a blink in a 9 MB one-line
document (a bare ``QPlainTextEdit``, offscreen), which kept the window busy and the encode
thread waiting for the interpreter half the time; ~5 ms at this length."""


def cluster_bounds(text: str, col16: int) -> tuple[int, int]:
    """UTF-16 ``(start, end)`` of the grapheme cluster of ``text`` holding column ``col16``.

    A line longer than :data:`~explorer.ui.graphemes.WHOLE_LINE` is searched near the
    column only (:func:`~explorer.ui.graphemes.cluster_at`), and mapped to UTF-16 only up to
    it: on a 9 MB minified JSON line, finding every cluster of the line each time the cursor
    moved took 8 s of a first paint."""
    if len(text) > WHOLE_LINE:
        if col16 < 0:
            return col16, col16
        head = Utf16Map(text[:col16 + 1])
        if col16 >= head.length_utf16:
            return col16, col16
        start, end = cluster_at(text, head.to_codepoint(col16))
        around = Utf16Map(text[:end])
        return around.to_utf16(start), around.length_utf16
    u16 = Utf16Map(text)
    if not 0 <= col16 < u16.length_utf16:
        return col16, col16
    g = Graphemes(text, u16)
    start = g.down(col16)
    return start, g.up(start + 1)


def snap_to_clusters(text: str, start16: int, end16: int) -> tuple[int, int]:
    """Widen the UTF-16 span ``[start16, end16)`` of ``text`` to whole grapheme clusters."""
    if text.isascii() and "\r\n" not in text:
        return start16, end16
    s = cluster_bounds(text, start16)[0]
    e = end16 if end16 <= s else cluster_bounds(text, end16 - 1)[1]
    return s, max(e, end16)


def local_files(mime: QMimeData) -> list[Path]:
    """Local file paths in a drag's data."""
    if not mime.hasUrls():
        return []
    return [Path(u.toLocalFile()) for u in mime.urls() if u.isLocalFile()]


class _Tips(QObject):
    """The editor's tooltips, from an event filter on its viewport. Not a ``viewportEvent``
    override: every viewport event would then run inside a Python call, its paints
    included, and Qt paints with the GIL held there: the encode's worker thread stopped
    for each paint of a big document (~80 ms for the first)."""

    def __init__(self, editor: TokenEditor) -> None:
        super().__init__(editor)
        self._editor = editor

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """Answer tooltip requests; let everything else through."""
        if event.type() == QEvent.Type.ToolTip and isinstance(event, QHelpEvent):
            self._editor.show_tip(event)
            return True
        return False


class TokenEditor(QPlainTextEdit):
    """A plain-text editor whose text is painted with token colours by the painter."""

    file_dropped = Signal(Path)
    """A local file was dropped (the window decides whether it is a vocabulary or text)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.tooltip_at: TooltipAt | None = None
        self.boundary_tip_at: TooltipAt | None = None
        self.last_tip_pos: QPoint | None = None
        """Global position of the last tooltip request (late answers show there)."""
        self.before_paste: Callable[[str, int, int], None] | None = None
        """Called with a pasted text and the UTF-16 span it replaces, before Qt inserts it
        (the window starts the helper of the encode that follows)."""
        font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        font.setPointSize(max(font.pointSize(), 11))
        font.setStyleHint(QFont.StyleHint.Monospace)
        self.setFont(font)
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.setWordWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
        self.setPlaceholderText("Type or paste text, or drop a vocabulary file here.")
        self.setAcceptDrops(True)
        self.setMouseTracking(True)
        self._blink_time: int | None = None
        """The application's cursor flash time while this editor holds it at 0 (None:
        not held; see :meth:`update_blinking`)."""
        self.cursorPositionChanged.connect(self.update_blinking)
        self.viewport().installEventFilter(_Tips(self))

    def update_blinking(self) -> None:
        """Stop the cursor blinking while it is in a line longer than
        :data:`STEADY_CURSOR_LINE`, and let it blink again once it is not. Qt has no
        per-editor setting: the application's flash time is set to 0 and restored (the
        other text fields of the window blink again as soon as the cursor leaves the line)."""
        hints = QGuiApplication.styleHints()
        steady = self.textCursor().block().length() > STEADY_CURSOR_LINE
        if steady and self._blink_time is None:
            self._blink_time = hints.cursorFlashTime()
            hints.setCursorFlashTime(0)
        elif not steady and self._blink_time is not None:
            hints.setCursorFlashTime(self._blink_time)
            self._blink_time = None

    def set_show_whitespace(self, show: bool) -> None:
        """Show spaces, tabs and line ends as glyphs."""
        opt = self.document().defaultTextOption()
        flags = opt.flags()
        marks = (QTextOption.Flag.ShowTabsAndSpaces
                 | QTextOption.Flag.ShowLineAndParagraphSeparators)
        opt.setFlags(flags | marks if show else flags & ~marks)
        self.document().setDefaultTextOption(opt)

    def visible_blocks(self) -> tuple[int, int]:
        """First and last block numbers in the viewport."""
        block = self.firstVisibleBlock()
        first = max(0, block.blockNumber())
        bottom = self.viewport().height()
        top = self.blockBoundingGeometry(block).translated(self.contentOffset()).top()
        last = first
        while block.isValid() and top <= bottom:
            last = block.blockNumber()
            top += self.blockBoundingRect(block).height()
            block = block.next()
        return first, last + 1

    def mark_span(self, start16: int, end16: int, color: QColor) -> None:
        """Outline the selected token (document UTF-16 positions); empty span clears."""
        if end16 <= start16:
            self.setExtraSelections([])
            return
        doc = self.document()
        # A token inside one character (a flag's second half) outlines the whole character.
        first, last = doc.findBlock(start16), doc.findBlock(max(start16, end16 - 1))
        start16 = first.position() + snap_to_clusters(
            first.text(), start16 - first.position(), start16 - first.position() + 1)[0]
        end16 = last.position() + snap_to_clusters(
            last.text(), end16 - last.position() - 1, end16 - last.position())[1]
        sel = QTextEdit.ExtraSelection()
        cur = QTextCursor(doc)
        cur.setPosition(start16)
        cur.setPosition(end16, QTextCursor.MoveMode.KeepAnchor)
        sel.cursor = cur
        sel.format.setProperty(QTextFormat.Property.OutlinePen, color)
        sel.format.setUnderlineStyle(sel.format.UnderlineStyle.SingleUnderline)
        sel.format.setUnderlineColor(color)
        sel.format.setFontUnderline(True)
        self.setExtraSelections([sel])

    def char_at(self, pos: QPoint) -> tuple[int, int] | None:
        """``(block number, UTF-16 column)`` of the character under viewport point ``pos``
        (the one the mouse is on, not the nearest gap between characters), or None."""
        cur = self.cursorForPosition(pos)
        block = cur.block()
        if not block.isValid():
            return None
        rect = self.cursorRect(cur)
        if abs(rect.center().y() - pos.y()) > rect.height():
            return None  # below the last line
        layout = block.layout()
        origin = self.blockBoundingGeometry(block).translated(self.contentOffset()).topLeft()
        line = layout.lineForTextPosition(cur.positionInBlock())
        if not line.isValid():
            return None
        x = pos.x() - origin.x()
        if x >= line.naturalTextWidth() + line.x():
            return None  # past the line end there is no token
        col = line.xToCursor(x, QTextLine.CursorPosition.CursorOnCharacter)
        return block.blockNumber(), col

    def gap_at(self, pos: QPoint) -> tuple[int, int] | None:
        """``(block number, UTF-16 column)`` of the gap between two characters of one line
        within :data:`GAP_PIXELS` of viewport point ``pos`` (the gap before that column), or
        None (line ends and gaps inside a grapheme cluster are not gaps)."""
        hit = self.char_at(pos)
        if hit is None:
            return None
        block = self.document().findBlockByNumber(hit[0])
        layout = block.layout()
        origin = self.blockBoundingGeometry(block).translated(self.contentOffset()).topLeft()
        x = pos.x() - origin.x()
        line = layout.lineForTextPosition(hit[1])
        if not line.isValid():
            return None
        col = line.xToCursor(x, QTextLine.CursorPosition.CursorBetweenCharacters)
        text = block.text()
        if not 0 < col < len(text.encode("utf-16-le")) // 2:
            return None
        gap_x, _ = line.cursorToX(col)
        if abs(gap_x - x) > GAP_PIXELS or cluster_bounds(text, col)[0] != col:
            return None
        return hit[0], col

    def tooltip_for(self, block_number: int, block_text: str, col16: int) -> str | None:
        """Hover text of the character at ``col16``: the tokens of each of its code points."""
        if self.tooltip_at is None:
            return None
        start, end = cluster_bounds(block_text, col16)
        if end - start <= 1:
            return self.tooltip_at(block_number, block_text, col16)
        u16 = Utf16Map(block_text)
        tips: list[str] = []
        for cp in range(u16.to_codepoint(start), u16.to_codepoint(end)):
            tip = self.tooltip_at(block_number, block_text, u16.to_utf16(cp))
            if tip and tip not in tips:
                tips.append(tip)
        if len(tips) > 1:
            n = u16.to_codepoint(end) - u16.to_codepoint(start)
            return SPLIT_NOTE.format(n=n) + "<hr>".join(tips)
        return tips[0] if tips else None

    def show_tip(self, event: QHelpEvent) -> None:
        """A tooltip: why the boundary under the mouse is there, else the token(s) of the
        character under it."""
        tip = None
        self.last_tip_pos = event.globalPos()
        gap = self.gap_at(event.pos()) if self.boundary_tip_at is not None else None
        if gap is not None and self.boundary_tip_at is not None:
            block = self.document().findBlockByNumber(gap[0])
            tip = self.boundary_tip_at(gap[0], block.text(), gap[1])
        hit = self.char_at(event.pos()) if tip is None else None
        if hit is not None:
            block = self.document().findBlockByNumber(hit[0])
            tip = self.tooltip_for(hit[0], block.text(), hit[1])
        if tip:
            QToolTip.showText(event.globalPos(), tip, self)
        else:
            QToolTip.hideText()

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        """Accept file drops (vocabularies) as well as text."""
        if local_files(event.mimeData()):
            event.acceptProposedAction()
            return
        super().dragEnterEvent(event)

    def dragMoveEvent(self, event: QDragEnterEvent) -> None:  # type: ignore[override]
        """Keep accepting a file drag while it moves."""
        if local_files(event.mimeData()):
            event.acceptProposedAction()
            return
        super().dragMoveEvent(event)

    def dropEvent(self, event: QDropEvent) -> None:
        """A dropped file goes to the window; dropped text is inserted as usual."""
        files = local_files(event.mimeData())
        if files:
            event.acceptProposedAction()
            self.file_dropped.emit(files[0])
            return
        super().dropEvent(event)

    def canInsertFromMimeData(self, source: QMimeData) -> bool:
        """Files pasted are handled like drops, not as their URL text."""
        return bool(local_files(source)) or super().canInsertFromMimeData(source)

    def insertFromMimeData(self, source: QMimeData) -> None:
        """Paste: a file goes to the window, text is inserted.

        Text goes straight in through the cursor's ``insertText``: Qt's own path builds a
        ``QTextDocumentFragment`` first, i.e. inserts the whole text into a scratch document
        and then copies it over (twice the time on a 10 MB paste, same result: a plain-text
        editor pastes plain text either way, as one undo step, in the cursor's format).
        """
        files = local_files(source)
        if files:
            self.file_dropped.emit(files[0])
            return
        text = source.text() if source.hasText() else ""
        if not text or self.isReadOnly():  # Qt's path: an empty text keeps the selection
            super().insertFromMimeData(source)
            return
        if len(text) >= BIG_PASTE_CHARS:
            self._drop_formats_at_cursor()
        if self.before_paste is not None:
            cur = self.textCursor()
            self.before_paste(text, cur.selectionStart(), cur.selectionEnd())
        self.insertPlainText(text)  # the editor's own cursor (a drop has placed it)
        self.ensureCursorVisible()

    def _drop_formats_at_cursor(self) -> None:
        """Clear the token colours of the block(s) a paste goes into.

        Qt splits that block once per pasted line, and with colours (``QTextLayout``
        formats) on it each split costs far more: 0.3-0.5 s more on a 10 MB paste. The
        block's text changes anyway, so the painter colours it again with the new tokens.
        """
        doc, cur = self.document(), self.textCursor()
        for pos in {cur.selectionStart(), cur.selectionEnd()}:
            layout = doc.findBlock(pos).layout()
            if layout is not None and layout.formats():
                layout.clearFormats()
