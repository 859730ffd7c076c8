"""A keystroke repaints its line; what is below it is moved, not painted, when the line's
height changed.

Qt's plain-text layout answers an edit that changes its block's height with a repaint of the
whole viewport (``QPlainTextDocumentLayout::documentChanged``: "optimization potential"),
although nothing above the block moved. A line of a script drawn by a fallback font takes
that font's height (18 px here against the editor font's 21), so a Latin letter typed into a
Hebrew, Arabic or Devanagari line grows it, and the whole viewport is painted again: 5-10 ms
for a screen of complex-script text with hex boxes (:mod:`explorer.ui.missing_glyphs`),
against ~1 ms for the line.

:class:`EditRepaint` holds the layout's signals while Qt lays out an edit that stays inside
one block (between the document's ``contentsChange`` and ``contentsChanged``), then asks for
what changed:

- the block alone when its height is the same (what Qt does too);
- the block, when its height changed but not its number of lines, with the pixels of
  everything below it moved by the change (``QWidget.scroll``: the lines below moved,
  they did not change; Qt repaints the strip that uncovers); those above did not move;
- the same, and the document size (the scroll bar counts lines), when its number of
  lines changed.

Edits that add or remove blocks, or that start or end outside one block, are left to Qt.
"""

from __future__ import annotations

import math

from PySide6.QtCore import QObject, QRect
from PySide6.QtGui import QTextBlock
from PySide6.QtWidgets import QPlainTextDocumentLayout, QPlainTextEdit


class EditRepaint(QObject):
    """Narrows the repaint of ``editor``'s one-block edits (see the module notes).

    Create it before anything else connects to the document's ``contentsChanged``: the
    layout's signals are let go in the first slot, so later ones see them as usual.
    """

    def __init__(self, editor: QPlainTextEdit) -> None:
        super().__init__(editor)
        self._editor = editor
        document = editor.document()
        self._blocks = document.blockCount()
        """Blocks after the last edit (an edit that changes the count is left to Qt)."""
        self._held: tuple[QTextBlock, float, int] | None = None
        """The edited block, its height and number of lines before the edit."""
        document.contentsChange.connect(self._before_layout)
        document.contentsChanged.connect(self._after_layout)

    def _before_layout(self, pos: int, removed: int, added: int) -> None:
        document = self._editor.document()
        layout = document.documentLayout()
        if (self._held is not None or document.blockCount() != self._blocks
                or not isinstance(layout, QPlainTextDocumentLayout) or layout.signalsBlocked()
                or removed == added):  # (removed == added: formats, or a replacement)
            return
        block = document.findBlock(pos)
        lines = block.layout().lineCount() if block.isValid() else 0
        if not lines or pos + added > block.position() + block.length() - 1:
            return  # not laid out yet, or the change goes past the block
        self._held = (block, block.layout().boundingRect().height(), lines)
        layout.blockSignals(True)

    def _after_layout(self) -> None:
        held, self._held = self._held, None
        self._blocks = self._editor.document().blockCount()
        if held is None:
            return
        layout = self._editor.document().documentLayout()
        layout.blockSignals(False)
        block, height, lines = held
        if not block.isValid():
            layout.requestUpdate()
            return
        self.show_block(block, height, lines)

    def show_block(self, block: QTextBlock, height: float, lines: int) -> None:
        """Show ``block``, laid out again (now, if Qt has not), which was ``height`` high in
        ``lines`` visual lines: repaint it, and when its height changed, move the pixels of
        what is below it (``QWidget.scroll``; Qt paints what that uncovers). The token
        painter shows a block whose colours changed its wrapping the same way."""
        layout = self._editor.document().documentLayout()
        new_height = layout.blockBoundingRect(block).height()
        if block.lineCount() != lines:
            layout.documentSizeChanged.emit(layout.documentSize())  # (the scroll bar)
        elif new_height == height:
            layout.updateBlock.emit(block)
            return
        editor = self._editor
        top = editor.blockBoundingGeometry(block).translated(editor.contentOffset()).top()
        viewport = editor.viewport()
        width, bottom = viewport.width(), viewport.height()
        if top >= bottom:
            return
        old_end, new_end = math.ceil(top + height), math.ceil(top + new_height)
        first = max(0, math.floor(top))
        if 0 < old_end < bottom and 0 < new_end < bottom:
            viewport.scroll(0, new_end - old_end, QRect(0, old_end, width, bottom - old_end))
            viewport.update(QRect(0, first, width, max(old_end, new_end) - first))
        else:  # the block reaches past the viewport's bottom: it is all there is below
            viewport.update(QRect(0, first, width, bottom - first))
