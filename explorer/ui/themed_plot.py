"""A pyqtgraph plot that follows the application's palette (light or dark theme).

pyqtgraph paints with its own colours (white or black background, grey axes), so a plot
made for the light theme stays white in the dark one. :class:`ThemedPlot` takes its background
from the palette's ``Base`` and its axes, labels and title from ``Text``, and re-reads them
whenever the palette changes. Every plot of the app should be one.
"""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import QEvent
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QWidget

_PALETTE_EVENTS = (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange,
                   QEvent.Type.StyleChange)


class ThemedPlot(pg.PlotWidget):
    """A ``PlotWidget`` coloured by the widget palette; set titles with :meth:`set_title`."""

    def __init__(self, parent: QWidget | None = None) -> None:
        self._title = ""
        self._ready = False  # pyqtgraph's constructor sends palette events before the plot
        super().__init__(parent)
        self._ready = True
        self.apply_palette()

    def set_title(self, title: str) -> None:
        """The plot's title, drawn in the palette's text colour."""
        self._title = title
        self.setTitle(title, color=self.palette().color(QPalette.ColorRole.Text).name())

    def apply_palette(self) -> None:
        """Re-colour background, axes and title from the current palette."""
        pal = self.palette()
        fg = pal.color(QPalette.ColorRole.Text)
        self.setBackground(pal.color(QPalette.ColorRole.Base))
        for name in ("left", "bottom", "right", "top"):
            axis = self.getAxis(name)
            axis.setPen(pg.mkPen(fg))
            axis.setTextPen(pg.mkPen(fg))
            if axis.label is not None:
                axis.label.setDefaultTextColor(fg)
        if self._title:
            self.set_title(self._title)

    def changeEvent(self, event: QEvent) -> None:
        """Follow palette changes (the theme switch)."""
        if self._ready and event.type() in _PALETTE_EVENTS:
            self.apply_palette()
        super().changeEvent(event)
