"""A copyable view of the token ids (space- or comma-separated).

Rendering is lazy: only while the panel is the shown tab (:meth:`IdsView.set_active`), at most
:data:`MAX_SHOWN` ids (Copy always copies all of them).
"""

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
MAX_SHOWN = 20_000


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
        self._active = True
        self._dirty = True
        self.separator.currentTextChanged.connect(lambda _t: self._render())

    def ids_text(self, limit: int | None = None) -> str:
        """The ids joined by the chosen separator (the first ``limit`` when given)."""
        if self._doc is None:
            return ""
        sep = SEPARATORS[self.separator.currentText()]
        ids = (str(t.id) for seg in self._doc.segments for t in seg.tokens)
        if limit is not None:
            ids = (x for _, x in zip(range(limit), ids, strict=False))
        return sep.join(ids)

    def set_active(self, active: bool) -> None:
        """Whether the panel is the shown tab (hidden tabs of Qt docks stay "visible")."""
        self._active = active
        if active and self._dirty:
            self._render()

    def set_result(self, doc: DocTokens) -> None:
        """Show the ids of ``doc``."""
        self._doc = doc
        self._render()

    def _render(self) -> None:
        self._dirty = True
        if not (self._active and self.isVisible()):
            return
        self._dirty = False
        text = self.ids_text(MAX_SHOWN)
        if self._doc is not None and self._doc.token_count > MAX_SHOWN:
            text += f"\n… {self._doc.token_count - MAX_SHOWN:,} more (Copy copies all)"
        self.text_view.setPlainText(text)

    def showEvent(self, event: QShowEvent) -> None:
        """Render lazily: joining 250k ids is only worth it when shown."""
        self._render()
        super().showEvent(event)

    def copy(self) -> None:
        """Copy the ids to the clipboard."""
        QGuiApplication.clipboard().setText(self.ids_text())
