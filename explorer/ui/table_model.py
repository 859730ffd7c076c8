"""The base of every flat table model: fixed column titles, no tree."""

from __future__ import annotations

from typing import Any, ClassVar

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt

_Index = QModelIndex | QPersistentModelIndex


class HeaderTableModel(QAbstractTableModel):
    """A table model whose columns are titled by the class attribute ``HEADERS``.

    Subclasses give ``HEADERS``, ``rowCount`` and ``data``; columns and titles come from here.
    """

    HEADERS: ClassVar[tuple[str, ...]] = ()

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008 - Qt idiom
        """One column per title."""
        return 0 if parent.isValid() else len(self.HEADERS)

    def headerData(self, section: int, orientation: Qt.Orientation,
                   role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        """Column titles (horizontal, display role only)."""
        if (orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole
                and 0 <= section < len(self.HEADERS)):
            return self.HEADERS[section]
        return None
