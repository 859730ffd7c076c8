"""A place in a layout for a pyqtgraph plot that is built only when it is first needed.

Importing pyqtgraph costs ~0.33 s and each ``PlotWidget`` ~0.03 s, and no plot is on screen
when the window opens: the statistics plots show a result that only exists after a run, the
training plots live on a second tab, and the score histogram only shows for Unigram training.
So the window starts without pyqtgraph; a :class:`PlotSlot` holds the plot's place (its
layout, its size policy) and :meth:`PlotSlot.plot` builds the plot the first time someone
draws on it. The module that defines the plot class is imported by the ``make`` function,
never at the top of a panel module.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import QVBoxLayout, QWidget


class PlotSlot(QWidget):
    """Holds the place of the widget ``make(parent)`` returns, and builds it on demand."""

    def __init__(self, make: Callable[[QWidget], QWidget], parent: QWidget | None = None,
                 *, minimum_height: int = 90) -> None:
        """``make``: builds the plot as a child of the given slot (imports pyqtgraph)."""
        super().__init__(parent)
        self._make = make
        self._plot: QWidget | None = None
        self.setMinimumHeight(minimum_height)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)

    def is_built(self) -> bool:
        """True once :meth:`plot` has built the plot."""
        return self._plot is not None

    def plot(self) -> QWidget:
        """The plot, built now if it is not yet."""
        if self._plot is None:
            self._plot = self._make(self)
            self.layout().addWidget(self._plot)
            self._plot.setVisible(self.isVisible())  # a new child of a shown widget stays hidden
        return self._plot
