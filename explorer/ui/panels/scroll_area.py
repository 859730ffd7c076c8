"""A dock's scroll area: docking a panel never makes the window's minimum size grow."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QSize
from PySide6.QtWidgets import QFrame, QScrollArea, QWidget


class PanelScroll(QScrollArea):
    """``panel`` in a frameless scroll area: it fills the dock when there is room and scrolls
    when the dock is smaller than the panel's minimum; the size hint stays the panel's
    (bounded), so the dock opens roomy.

    The panel is sized here, not by ``widgetResizable``: that one asks a panel holding
    word-wrapped labels for its height-for-width, which is its *preferred* height, so the
    panel would scroll even when its minimum fits."""

    def __init__(self, panel: QWidget) -> None:
        super().__init__()
        self.setWidgetResizable(False)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setWidget(panel)

    def sizeHint(self) -> QSize:
        hint = self.widget().sizeHint()
        return QSize(min(hint.width(), 900), min(max(hint.height(), 300), 460))

    def _fit(self) -> None:
        panel = self.widget()
        least = panel.minimumSizeHint().expandedTo(panel.minimumSize())
        view = self.viewport().size()
        panel.resize(max(view.width(), least.width()), max(view.height(), least.height()))

    def resizeEvent(self, event: Any) -> None:
        super().resizeEvent(event)
        self._fit()

    def showEvent(self, event: Any) -> None:
        super().showEvent(event)
        self._fit()
