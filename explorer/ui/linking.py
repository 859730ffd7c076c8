"""Links the editor, the token table and the inspector around "the current token".

Moving the text cursor (or clicking) selects the token under it in the table and the
inspector; the user picking a table row moves the cursor to that token and outlines it.

The rule that keeps the user's typing intact: **only the user's own action in a view may
move the text cursor**. The table's current row also changes by itself (rows inserted or
removed above it when a new result arrives while the user types), so the linker listens to
:attr:`TokenTableView.row_chosen` (mouse and keys in the table), never to
``currentRowChanged``; :meth:`TokenLinker.select_token` is for such user actions only.
Hover tooltips use the same lookup.
"""

from __future__ import annotations

from PySide6.QtCore import QItemSelectionModel, QObject, Signal
from PySide6.QtGui import QColor, QTextCursor

from explorer.ui.editor import TokenEditor
from explorer.ui.inspector import InspectorPanel, TokenView, token_view
from explorer.ui.locate import block_col_of, offset_of
from explorer.ui.token_table import TokenTableModel, TokenTableView
from explorer.workers.doctokens import DocTokens

OUTLINE = QColor("#d02020")


class TokenLinker(QObject):
    """Keeps editor cursor, table selection and inspector on the same token."""

    current_changed = Signal(int, object)
    """``(token index, TokenView)``; index -1 and None when the cursor is on no token."""

    def __init__(self, editor: TokenEditor, model: TokenTableModel, table: TokenTableView,
                 inspector: InspectorPanel, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._editor, self._model, self._table, self._inspector = editor, model, table, inspector
        self._doc: DocTokens | None = None
        self._current = -1
        self._syncing = False
        editor.tooltip_at = self.tooltip_at
        editor.cursorPositionChanged.connect(self._on_cursor)
        table.row_chosen.connect(self._on_row)

    @property
    def current(self) -> int:
        """Index of the current token, -1 for none."""
        return self._current

    def set_result(self, doc: DocTokens) -> None:
        """A new result: re-resolve the token under the cursor."""
        self._doc = doc
        self._on_cursor()

    def token_index_at(self, block: int, block_text: str, col16: int) -> int | None:
        """Token under UTF-16 column ``col16`` of block ``block``."""
        if self._doc is None:
            return None
        offset = offset_of(self._doc, block, block_text, col16)
        return None if offset is None else self._doc.token_at(offset)

    def is_boundary_at(self, block: int, block_text: str, col16: int) -> bool:
        """True when the gap before UTF-16 column ``col16`` of block ``block`` is a boundary
        of the current tokens: one token ends there and the next starts there."""
        if self._doc is None:
            return False
        offset = offset_of(self._doc, block, block_text, col16)
        if offset is None or offset == 0:
            return False
        right, left = self._doc.token_at(offset), self._doc.token_at(offset - 1)
        return (right is not None and left is not None and right != left
                and self._doc.span(right)[0] == offset and self._doc.span(left)[1] == offset)

    def tooltip_at(self, block: int, block_text: str, col16: int) -> str | None:
        """Hover text: the token and the partial-UTF-8 neighbours that start inside its span
        (sharing it, or lying inside the character it ends in)."""
        index = self.token_index_at(block, block_text, col16)
        if index is None or self._doc is None:
            return None
        view = token_view(self._doc, index)
        parts = [view.html()]
        nxt = index + 1
        while nxt < self._doc.token_count and self._doc.span(nxt)[0] < view.end:
            parts.append(token_view(self._doc, nxt).html())
            nxt += 1
        return "<hr>".join(parts)

    def select_token(self, index: int) -> None:
        """Make token ``index`` current in every view and put the text cursor at its start.

        Call this only in answer to the user's own action (a table row picked, a vocabulary
        entry double-clicked): it moves the text cursor."""
        if self._doc is None or not 0 <= index < self._doc.token_count:
            return
        view = token_view(self._doc, index)
        self._set_current(index, view)
        self._syncing = True
        try:
            b0, c0 = block_col_of(self._doc, view.start)
            block = self._editor.document().findBlockByNumber(b0)
            cur = QTextCursor(self._editor.document())
            cur.setPosition(block.position() + c0)
            self._editor.setTextCursor(cur)
            self._editor.ensureCursorVisible()
        finally:
            self._syncing = False

    def _on_cursor(self) -> None:
        if self._syncing or self._doc is None:
            return
        cur = self._editor.textCursor()
        block = cur.block()
        index = self.token_index_at(block.blockNumber(), block.text(), cur.positionInBlock())
        if index is None:  # at the end of a token: take the one before the cursor
            index = self.token_index_at(block.blockNumber(), block.text(),
                                        max(0, cur.positionInBlock() - 1))
        if index is None:
            self._set_current(-1, None)
            return
        self._set_current(index, token_view(self._doc, index))

    def _on_row(self, row: int) -> None:
        """The user picked ``row`` in the table."""
        if not self._syncing and row >= 0:
            self.select_token(row)

    def _set_current(self, index: int, view: TokenView | None) -> None:
        changed = index != self._current
        self._current = index
        self._inspector.show_token(view)
        self._outline(view)
        if index >= 0:
            self._syncing = True
            try:
                mi = self._model.index(index, 0)
                self._table.selectionModel().setCurrentIndex(
                    mi, QItemSelectionModel.SelectionFlag.ClearAndSelect
                    | QItemSelectionModel.SelectionFlag.Rows)
                self._table.scrollTo(mi)
            finally:
                self._syncing = False
        if changed:
            self.current_changed.emit(index, view)

    def _outline(self, view: TokenView | None) -> None:
        if view is None or self._doc is None:
            self._editor.mark_span(0, 0, OUTLINE)
            return
        doc = self._editor.document()
        b0, c0 = block_col_of(self._doc, view.start)
        b1, c1 = block_col_of(self._doc, view.end)
        s = doc.findBlockByNumber(b0).position() + c0
        e = doc.findBlockByNumber(b1).position() + c1
        self._editor.mark_span(s, e, OUTLINE)
