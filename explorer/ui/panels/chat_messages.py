"""The conversation editor of the chat panel: one row per message (role, content, token count,
move up/down, remove) and an "Add message" button. Emits ``changed`` on every edit."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from explorer.engine.chat.roles import ROLES

SAMPLE_CONVERSATION: tuple[dict[str, str], ...] = (
    {"role": "system", "content": "You are a concise assistant. Answer in the user's language."},
    {"role": "user", "content": "Wie viele Tokens kostet dieser Satz? 😀"},
    {"role": "assistant", "content": "Das hängt vom Tokenizer ab: zähl sie hier nach."},
    {"role": "user", "content": "東京の天気は? And in Paris?"},
)
"""The conversation a fresh panel starts with (multilingual, so splits show)."""


class MessageRow(QFrame):
    """One message: role picker, content editor, its token count and row buttons."""

    changed = Signal()
    move = Signal(object, int)
    """``(row, -1 | +1)``."""
    remove = Signal(object)

    def __init__(self, role: str, content: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.role = QComboBox()
        self.role.addItems(list(ROLES))
        self.role.setEditable(True)  # templates may know more roles ("ipython", "developer")
        self.role.setCurrentText(role)
        self.content = QPlainTextEdit(content)
        self.content.setTabChangesFocus(True)
        self.content.setFixedHeight(54)
        self.count = QLabel("")
        self.count.setMinimumWidth(70)
        self.count.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        side = QVBoxLayout()
        side.addWidget(self.role)
        side.addWidget(self.count)
        buttons = QVBoxLayout()
        for text, tip, slot in (("▲", "Move up", lambda: self.move.emit(self, -1)),
                                ("▼", "Move down", lambda: self.move.emit(self, 1)),
                                ("✕", "Remove this message", lambda: self.remove.emit(self))):
            b = QToolButton()
            b.setText(text)
            b.setToolTip(tip)
            b.setAutoRaise(True)
            b.clicked.connect(slot)
            buttons.addWidget(b)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(4, 2, 4, 2)
        layout.addLayout(side)
        layout.addWidget(self.content, 1)
        layout.addLayout(buttons)
        self.role.currentTextChanged.connect(lambda _t: self.changed.emit())
        self.content.textChanged.connect(self.changed.emit)

    def message(self) -> dict[str, str]:
        """``{"role", "content"}`` of this row."""
        return {"role": self.role.currentText().strip() or "user",
                "content": self.content.toPlainText()}


class MessageList(QWidget):
    """The editable conversation."""

    changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.rows: list[MessageRow] = []
        self._box = QVBoxLayout()
        self._box.setSpacing(3)
        inner = QWidget()
        outer = QVBoxLayout(inner)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addLayout(self._box)
        outer.addStretch(1)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(inner)
        add = QPushButton("Add message")
        add.clicked.connect(self._add_next)
        self.add_button = add
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(scroll, 1)
        layout.addWidget(add)
        self.set_messages(SAMPLE_CONVERSATION)

    def messages(self) -> list[dict[str, str]]:
        """The conversation in order."""
        return [row.message() for row in self.rows]

    def set_messages(self, messages: Sequence[dict[str, str]]) -> None:
        """Replace the conversation."""
        for row in self.rows:
            row.setParent(None)
            row.deleteLater()
        self.rows = []
        for m in messages:
            self._append(str(m.get("role", "user")), str(m.get("content", "")))
        self.changed.emit()

    def add_message(self, role: str, content: str = "") -> MessageRow:
        """Append a message; returns its row."""
        row = self._append(role, content)
        self.changed.emit()
        return row

    def set_counts(self, counts: Sequence[int | None] | None) -> None:
        """Show each message's token count (None: unknown; counts None: clear)."""
        for i, row in enumerate(self.rows):
            n = None if counts is None or i >= len(counts) else counts[i]
            row.count.setText("" if counts is None else ("?" if n is None else f"{n} tokens"))

    def _append(self, role: str, content: str) -> MessageRow:
        row = MessageRow(role, content)
        row.changed.connect(self.changed.emit)
        row.move.connect(self._move)
        row.remove.connect(self._remove)
        self.rows.append(row)
        self._box.addWidget(row)
        return row

    def _add_next(self) -> None:
        last = self.rows[-1].message()["role"] if self.rows else "assistant"
        self.add_message("assistant" if last == "user" else "user").content.setFocus()

    def _move(self, row: MessageRow, step: int) -> None:
        i = self.rows.index(row)
        j = i + step
        if not 0 <= j < len(self.rows):
            return
        self.rows[i], self.rows[j] = self.rows[j], self.rows[i]
        self._box.removeWidget(row)
        self._box.insertWidget(j, row)
        self.changed.emit()

    def _remove(self, row: MessageRow) -> None:
        self.rows.remove(row)
        self._box.removeWidget(row)
        row.setParent(None)
        row.deleteLater()
        self.changed.emit()
