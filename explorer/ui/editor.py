"""The editable text: hover tooltips for tokens, the selected-token outline, file drops.

The editor knows nothing about tokenizers: it asks a ``tooltip_at(block, block_text, col16)``
callback for hover text and reports cursor moves and dropped files as signals.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QEvent, QMimeData, Signal
from PySide6.QtGui import (
    QColor,
    QDragEnterEvent,
    QDropEvent,
    QFont,
    QFontDatabase,
    QHelpEvent,
    QTextCursor,
    QTextFormat,
    QTextOption,
)
from PySide6.QtWidgets import QPlainTextEdit, QTextEdit, QToolTip, QWidget

TooltipAt = Callable[[int, str, int], str | None]


def local_files(mime: QMimeData) -> list[Path]:
    """Local file paths in a drag's data."""
    if not mime.hasUrls():
        return []
    return [Path(u.toLocalFile()) for u in mime.urls() if u.isLocalFile()]


class TokenEditor(QPlainTextEdit):
    """A plain-text editor whose text is painted with token colours by the painter."""

    file_dropped = Signal(Path)
    """A local file was dropped (the window decides whether it is a vocabulary or text)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.tooltip_at: TooltipAt | None = None
        font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        font.setPointSize(max(font.pointSize(), 11))
        font.setStyleHint(QFont.StyleHint.Monospace)
        self.setFont(font)
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.setWordWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
        self.setPlaceholderText("Type or paste text, or drop a vocabulary file here.")
        self.setAcceptDrops(True)
        self.setMouseTracking(True)

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
        sel = QTextEdit.ExtraSelection()
        cur = QTextCursor(self.document())
        cur.setPosition(start16)
        cur.setPosition(end16, QTextCursor.MoveMode.KeepAnchor)
        sel.cursor = cur
        sel.format.setProperty(QTextFormat.Property.OutlinePen, color)
        sel.format.setUnderlineStyle(sel.format.UnderlineStyle.SingleUnderline)
        sel.format.setUnderlineColor(color)
        sel.format.setFontUnderline(True)
        self.setExtraSelections([sel])

    def viewportEvent(self, event: QEvent) -> bool:
        """Tooltips for the token under the mouse."""
        if event.type() == QEvent.Type.ToolTip and isinstance(event, QHelpEvent):
            cur = self.cursorForPosition(event.pos())
            block = cur.block()
            tip = None
            if self.tooltip_at is not None and block.isValid():
                rect = self.cursorRect(cur)
                # cursorForPosition snaps to the nearest gap; past the line end there is no token
                if abs(rect.center().y() - event.pos().y()) <= rect.height():
                    tip = self.tooltip_at(block.blockNumber(), block.text(),
                                          cur.positionInBlock())
            if tip:
                QToolTip.showText(event.globalPos(), tip, self)
            else:
                QToolTip.hideText()
            return True
        return super().viewportEvent(event)

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
        """Paste: a file goes to the window, text is inserted."""
        files = local_files(source)
        if files:
            self.file_dropped.emit(files[0])
            return
        super().insertFromMimeData(source)
