"""The token table: one row per token of the document (index, id, piece, bytes, span, text).

The model reads rows straight from the immutable :class:`DocTokens` result, so 250k rows cost
nothing until shown. After an incremental result only the replaced rows are removed/inserted
(spans of later rows shift, so their span column is reported changed), which keeps the
selection and scroll position while typing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt, Signal
from PySide6.QtGui import QColor, QKeyEvent, QMouseEvent
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableView, QWidget

from explorer.ui.inspector import TokenView, hex_bytes, token_view, visible
from explorer.ui.table_model import HeaderTableModel
from explorer.workers.doctokens import Change, DocTokens

_Index = QModelIndex | QPersistentModelIndex
COL_INDEX, COL_ID, COL_PIECE, COL_BYTES, COL_SPAN, COL_TEXT = range(6)
HEADERS = ("#", "id", "piece", "bytes", "span", "text")
TOKEN_INDEX_ROLE = Qt.ItemDataRole.UserRole + 1
_ROLES = {Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole,
          Qt.ItemDataRole.BackgroundRole, TOKEN_INDEX_ROLE}


def combined_rows(before: DocTokens | None,
                  steps: Sequence[tuple[int, Change | None]]) -> tuple[int, int, int] | None:
    """Rows ``(first, old, new)`` that one replacement takes from ``before``'s tokens to the
    last step's, the steps being consecutive incremental results given as ``(token count,
    change)`` (each ``Change`` relative to the step before it, the first to ``before``); None
    when they do not chain that way. (Counts, not the results: a burst of typing would hold
    every keystroke's document, text and all, until the views follow.)

    A step keeps the tokens before its ``first_token`` and the ones after its replaced rows,
    so the tokens no step touched, counted from either end, stay as they are."""
    if before is None or not steps:
        return None
    count = before.token_count
    head = tail = count
    for after, change in steps:
        if (change is None or change.first_token + change.old_tokens > count
                or count - change.old_tokens + change.new_tokens != after):
            return None
        head = min(head, change.first_token)
        tail = min(tail, count - change.first_token - change.old_tokens)
        count = after
    return head, before.token_count - head - tail, count - head - tail


class TokenTableModel(HeaderTableModel):
    """Rows of the current :class:`DocTokens`."""

    HEADERS = HEADERS

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._doc: DocTokens | None = None
        self._color_of: Callable[[int], QColor] | None = None
        self._views: dict[int, TokenView] = {}
        """Rows of the current result already built (a view asks for each cell and role;
        the Token behind a row is rebuilt from the compact result once)."""

    @property
    def doc(self) -> DocTokens | None:
        """The result shown."""
        return self._doc

    def set_color_function(self, color_of: Callable[[int], QColor]) -> None:
        """``color_of(token_id) -> QColor`` for the id column's background."""
        self._color_of = color_of
        if self.rowCount():
            self.dataChanged.emit(self.index(0, COL_ID),
                                  self.index(self.rowCount() - 1, COL_ID))

    def set_result(self, doc: DocTokens | None, change: Change | None = None) -> None:
        """Show ``doc``; with ``change`` only the replaced rows are updated."""
        rows = None if change is None else (
            change.first_token, change.old_tokens, change.new_tokens)
        self.replace_rows(doc, rows)

    def replace_rows(self, doc: DocTokens | None, rows: tuple[int, int, int] | None) -> None:
        """Show ``doc``, whose rows ``[first, first+old)`` of the shown result became
        ``new`` rows (``rows=(first, old, new)``, see :func:`combined_rows`); None: reset."""
        old = self._doc
        self._views = {}
        consistent = (rows is not None and old is not None and doc is not None
                      and rows[0] + rows[1] <= old.token_count
                      and old.token_count - rows[1] + rows[2] == doc.token_count)
        if not consistent or rows is None:
            self.beginResetModel()
            self._doc = doc
            self.endResetModel()
            return
        first, n_old, n_new = rows
        if n_new > n_old:
            self.beginInsertRows(QModelIndex(), first + n_old, first + n_new - 1)
            self._doc = doc
            self.endInsertRows()
        elif n_new < n_old:
            self.beginRemoveRows(QModelIndex(), first + n_new, first + n_old - 1)
            self._doc = doc
            self.endRemoveRows()
        else:
            self._doc = doc
        last = self.rowCount() - 1
        if last >= first:
            self.dataChanged.emit(self.index(first, 0), self.index(last, len(HEADERS) - 1))

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        """Tokens in the document (0 under a valid parent: this is a table)."""
        if parent.isValid() or self._doc is None:
            return 0
        return self._doc.token_count



    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        """Cell text; token index under :data:`TOKEN_INDEX_ROLE`."""
        if role not in _ROLES:  # views ask for many roles per cell: answer the rest fast
            return None
        if not index.isValid() or self._doc is None or not 0 <= index.row() < self.rowCount():
            return None
        row, col = index.row(), index.column()
        if role == TOKEN_INDEX_ROLE:
            return row
        if role == Qt.ItemDataRole.BackgroundRole and col == COL_ID and self._color_of:
            return self._color_of(self._doc.token_id(row))
        if role not in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
            return None
        view = self._views.get(row)
        if view is None or view.doc is not self._doc:
            if len(self._views) > 4096:
                self._views.clear()
            view = self._views[row] = token_view(self._doc, row)
        if role == Qt.ItemDataRole.ToolTipRole:
            return view.html()
        tok = view.token
        if col == COL_INDEX:
            return str(row)
        if col == COL_ID:
            return str(tok.id)
        if col == COL_PIECE:
            return visible(tok.piece)
        if col == COL_BYTES:
            return hex_bytes(tok.token_bytes)
        if col == COL_SPAN:
            return f"{view.start}–{view.end}"
        return view.shown_text


class TokenTableView(QTableView):
    """A table view tuned for many rows: fixed row height, no per-row size hints.

    :attr:`row_chosen` is emitted only when the *user* picks a row in the table (a mouse
    press, or a navigation key while the table has focus). The current row also moves when
    the model inserts or removes rows under it (a new result while the user types); that is
    not a choice and must never move the text cursor, so nothing listens to
    ``currentRowChanged`` for that purpose.
    """

    row_chosen = Signal(int)
    """Row the user picked with the mouse or the keyboard."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        vh = self.verticalHeader()
        vh.setVisible(False)
        vh.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        vh.setDefaultSectionSize(self.fontMetrics().height() + 4)
        hh = self.horizontalHeader()
        hh.setStretchLastSection(True)
        self.setWordWrap(False)


    def mousePressEvent(self, event: QMouseEvent) -> None:
        """A click picks the row under the mouse."""
        super().mousePressEvent(event)
        index = self.indexAt(event.position().toPoint())
        if index.isValid() and event.button() == Qt.MouseButton.LeftButton:
            self.row_chosen.emit(index.row())

    def keyPressEvent(self, event: QKeyEvent) -> None:
        """Arrow keys, Page Up/Down, Home/End in the table pick the row they move to."""
        before = self.currentIndex().row()
        super().keyPressEvent(event)
        after = self.currentIndex().row()
        if after >= 0 and after != before:
            self.row_chosen.emit(after)
