"""A copyable view of the token ids (space- or comma-separated)."""

from __future__ import annotations

from PySide6.QtGui import QGuiApplication, QShowEvent
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from explorer.workers.doctokens import DocTokens

SEPARATORS = {"spaces": " ", "commas": ", ", "lines": "\n"}


class IdsView(QWidget):
    """Ids of the current result as text, refreshed when shown or changed."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.text_view = QPlainTextEdit(self)
        self.text_view.setReadOnly(True)
        self.separator = QComboBox(self)
        self.separator.addItems(list(SEPARATORS))
        copy = QPushButton("Copy", self)
        copy.clicked.connect(self.copy)
        row = QHBoxLayout()
        row.addWidget(self.separator)
        row.addStretch(1)
        row.addWidget(copy)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        lay.addLayout(row)
        lay.addWidget(self.text_view)
        self._doc: DocTokens | None = None
        self.separator.currentTextChanged.connect(lambda _t: self._render())

    def ids_text(self) -> str:
        """The ids joined by the chosen separator."""
        if self._doc is None:
            return ""
        sep = SEPARATORS[self.separator.currentText()]
        return sep.join(str(t.id) for seg in self._doc.segments for t in seg.tokens)

    def set_result(self, doc: DocTokens) -> None:
        """Show the ids of ``doc``."""
        self._doc = doc
        self._render()

    def _render(self) -> None:
        if self.isVisible():
            self.text_view.setPlainText(self.ids_text())

    def showEvent(self, event: QShowEvent) -> None:
        """Render lazily: joining 250k ids is only worth it when shown."""
        self._render()
        super().showEvent(event)

    def copy(self) -> None:
        """Copy the ids to the clipboard."""
        QGuiApplication.clipboard().setText(self.ids_text())
