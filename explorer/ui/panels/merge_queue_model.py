"""The queue table of the merge-queue panel: one trace step's queue as an item model.

Rows: the entry popped at this step first (bold, highlighted; greyed when it was stale and
skipped), then the whole queue in pop order (rank, then left node). Columns: left and right
symbols (for stale entries only their node numbers mean anything), the merged symbol, the rank
and the state (popped / live / stale).
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QFont, QPalette

from explorer.engine.bpe.trace import MergeStep, QueueEntry
from explorer.ui.panels.chips import symbol_label, symbol_tooltip
from explorer.ui.table_model import HeaderTableModel

_Index = QModelIndex | QPersistentModelIndex
Symbol = bytes | str


class MergeQueueModel(HeaderTableModel):
    """The queue of one step: the popped entry (if any) first, then the queue in pop order."""

    HEADERS = ("left", "right", "merged", "rank", "state")

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._rows: list[tuple[QueueEntry[Any], str]] = []
        self._symbol_at: dict[int, Symbol] = {}
        self._merge_sides: tuple[Symbol, Symbol] | None = None

    def set_step(self, step: MergeStep[Any] | None) -> None:
        """Show the queue of ``step`` (None: empty)."""
        self.beginResetModel()
        self._rows = []
        self._symbol_at = {}
        self._merge_sides = None
        if step is not None:
            if step.merge is not None:
                self._merge_sides = (step.merge.left_symbol, step.merge.right_symbol)
            self._symbol_at = dict(zip(step.nodes, step.symbols, strict=True))
            if step.popped is not None:
                state = "popped" if step.popped.live else "popped (stale, skipped)"
                self._rows.append((step.popped, state))
            self._rows += [(e, "live" if e.live else "stale") for e in step.queue]
        self.endResetModel()

    def entry(self, row: int) -> QueueEntry[Any]:
        """The queue entry shown at ``row``."""
        return self._rows[row][0]

    def state(self, row: int) -> str:
        """``popped``, ``popped (stale, skipped)``, ``live`` or ``stale``."""
        return self._rows[row][1]

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008 - Qt idiom
        return 0 if parent.isValid() else len(self._rows)



    def _side(self, node: int, entry: QueueEntry[Any]) -> str:
        # A live entry's sides are the current symbols at its nodes; a stale entry's side may
        # have been merged away or grown, so only its node number is meaningful.
        sym = self._symbol_at.get(node)
        if entry.live and sym is not None:
            return symbol_label(sym)
        return f"node {node}" + ("" if sym is None else f" (now {symbol_label(sym)})")

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._rows):
            return None
        entry, state = self._rows[index.row()]
        col = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            if col in (0, 1):
                if state == "popped" and self._merge_sides is not None:
                    return symbol_label(self._merge_sides[col])
                return self._side(entry.left if col == 0 else entry.right, entry)
            if col == 2:
                return symbol_label(entry.merged)
            if col == 3:
                r = entry.rank
                return str(int(r)) if float(r).is_integer() else f"{r:.4g}"
            return state
        if role == Qt.ItemDataRole.ToolTipRole and col == 2:
            return symbol_tooltip(entry.merged)
        if role == Qt.ItemDataRole.FontRole and state.startswith("popped"):
            font = QFont()
            font.setBold(True)
            return font
        if role == Qt.ItemDataRole.BackgroundRole and state.startswith("popped"):
            return QPalette().color(QPalette.ColorRole.Highlight).lighter(170)
        if role == Qt.ItemDataRole.ForegroundRole and state in ("stale",
                                                                "popped (stale, skipped)"):
            return QPalette().color(QPalette.ColorRole.PlaceholderText)
        return None
