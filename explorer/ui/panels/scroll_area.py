"""A dock's scroll area: docking a panel never makes the window's minimum size grow."""

from __future__ import annotations

from PySide6.QtCore import QSize
from PySide6.QtWidgets import QFrame, QScrollArea, QWidget


class PanelScroll(QScrollArea):
    """``panel`` in a frameless scroll area: it fills the dock when there is room and scrolls
    when the dock is smaller than the panel's minimum; the size hint stays the panel's
    (bounded), so the dock opens roomy."""

    def __init__(self, panel: QWidget) -> None:
        super().__init__()
        self.setWidgetResizable(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setWidget(panel)

    def sizeHint(self) -> QSize:
        hint = self.widget().sizeHint()
        return QSize(min(hint.width(), 900), min(max(hint.height(), 300), 460))
