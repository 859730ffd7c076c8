"""Bars grouped by category, one colour per series, with a legend (the statistics plots).

Imported only when a statistics result is first drawn (it imports pyqtgraph; see
:mod:`explorer.ui.plot_slot`).
"""

from __future__ import annotations

from collections.abc import Sequence

import pyqtgraph as pg
from PySide6.QtWidgets import QWidget

from explorer.ui.themed_plot import ThemedPlot

COLORS = [(40, 110, 200), (220, 110, 30), (60, 160, 80), (170, 60, 170), (200, 50, 50),
          (90, 90, 90), (20, 160, 170), (150, 120, 40)]
"""Series colours, in order (they read on the light and the dark background)."""


class GroupedBars(ThemedPlot):
    """Bars grouped by category, one colour per series, with a legend."""

    def __init__(self, title: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.set_title(title)
        self.showGrid(y=True, alpha=0.25)
        self.setMinimumHeight(90)
        self.setMouseEnabled(x=False, y=False)
        self.series: dict[str, list[float]] = {}

    def set_bars(self, categories: Sequence[str], series: dict[str, list[float]]) -> None:
        """``series``: name -> one value per category."""
        self.clear()
        self.series = dict(series)
        legend = self.plotItem.legend or self.addLegend(offset=(-10, 10))
        legend.clear()
        n = max(1, len(series))
        width = 0.8 / n
        for k, (name, values) in enumerate(series.items()):
            xs = [i - 0.4 + width * (k + 0.5) for i in range(len(categories))]
            color = COLORS[k % len(COLORS)]
            bars = pg.BarGraphItem(x=xs, height=values, width=width * 0.92, brush=color,
                                   pen=pg.mkPen(color), name=name)
            self.addItem(bars)  # a named item joins the legend by itself
        self.getAxis("bottom").setTicks([list(enumerate(categories))])
        self.setXRange(-0.6, max(len(categories) - 0.4, 0.6), padding=0)
        self.enableAutoRange(axis="y")
