"""Live plots and the event log of the training dialog (pyqtgraph, created on first show).

:class:`TrainingPlots` owns two plots whose curves are created once, the first time its tab
shows (pyqtgraph is not imported before: :mod:`explorer.ui.plot_slot`), and updated with
``setData``; which series they show depends on the algorithm: BPE plots the pair count of every
merge (log scale) and the vocabulary size over time; Unigram plots the EM objective per
sub-iteration and the vocabulary size per pruning round. :meth:`TrainingPlots.add_events`
takes a batch of trainer events (plain data from the engine) and only appends to arrays; a
timer-driven :meth:`TrainingPlots.flush` pushes them to the screen at most a few times per
second, so thousands of merges per second do not flood the GUI thread.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Literal

from PySide6.QtGui import QFont, QShowEvent
from PySide6.QtWidgets import QHBoxLayout, QPlainTextEdit, QVBoxLayout, QWidget

from explorer.engine.trainers.events import (
    EmStep,
    Merge,
    MergeSummary,
    PruneStep,
    TrainEvent,
    WordsCounted,
)

if TYPE_CHECKING:
    from pyqtgraph import PlotDataItem

    from explorer.ui.themed_plot import ThemedPlot

Algorithm = Literal["bpe", "unigram"]
LOG_LINES = 400
"""Lines kept in the event log."""
PRUNED_SHOWN = 8
"""Pruned pieces listed per pruning round in the log."""


class TrainingPlots(QWidget):
    """Two live plots side by side and a log of recent merges / pruned pieces below."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.plot_a: ThemedPlot | None = None
        self.plot_b: ThemedPlot | None = None
        self.curve_a: PlotDataItem | None = None
        self.curve_b: PlotDataItem | None = None
        self.log = QPlainTextEdit(self)
        self.log.setReadOnly(True)
        self.log.setMaximumBlockCount(LOG_LINES)
        self.log.setMinimumHeight(50)
        mono = QFont("monospace")
        mono.setStyleHint(QFont.StyleHint.Monospace)
        self.log.setFont(mono)
        self._plots = QHBoxLayout()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(self._plots, 3)
        layout.addWidget(self.log, 2)
        self.algorithm: Algorithm = "bpe"
        self.reset("bpe")

    def reset(self, algorithm: Algorithm) -> None:
        """Empty the series and label the plots for ``algorithm``."""
        self.algorithm = algorithm
        self.xa: list[float] = []
        self.ya: list[float] = []
        self.xb: list[float] = []
        self.yb: list[float] = []
        self._pending_log: list[str | Merge] = []
        self._dirty = True
        self.log.clear()
        if self.plot_a is not None:
            self._label_plots()
        self.flush(force=True)

    def _build_plots(self) -> None:
        """Create the two plots and their curves (the first time the plots are drawn)."""
        import pyqtgraph as pg

        from explorer.ui.themed_plot import ThemedPlot

        pg.setConfigOptions(antialias=True)
        self.plot_a, self.plot_b = ThemedPlot(self), ThemedPlot(self)
        for plot in (self.plot_a, self.plot_b):
            plot.showGrid(x=True, y=True, alpha=0.25)
            plot.setMinimumHeight(100)
            self._plots.addWidget(plot)
        self.curve_a = self.plot_a.plot([], [], pen=pg.mkPen((40, 110, 200), width=1.5))
        # Tens of thousands of merges: draw what the pixels can show.
        self.curve_a.setDownsampling(auto=True, method="peak")
        self.curve_a.setClipToView(True)
        self.curve_b = self.plot_b.plot([], [], pen=pg.mkPen((200, 90, 30), width=2),
                                        symbol="o", symbolSize=5,
                                        symbolBrush=(200, 90, 30))
        self._label_plots()

    def _label_plots(self) -> None:
        assert self.plot_a is not None and self.plot_b is not None
        if self.algorithm == "bpe":
            self._label(self.plot_a, "Pair count of each merge", "merge", "pair count")
            self.plot_a.setLogMode(x=False, y=True)
            self._label(self.plot_b, "Vocabulary size", "seconds", "tokens")
        else:
            self._label(self.plot_a, "EM objective per sub-iteration", "EM sub-iteration",
                        "loss (NLL per word)")
            self.plot_a.setLogMode(x=False, y=False)
            self._label(self.plot_b, "Vocabulary size per pruning round", "round", "pieces")

    @staticmethod
    def _label(plot: ThemedPlot, title: str, x: str, y: str) -> None:
        plot.set_title(title)
        plot.setLabel("bottom", x)
        plot.setLabel("left", y)

    def add_events(self, events: Iterable[TrainEvent]) -> None:
        """Record a batch of trainer events (drawn at the next :meth:`flush`)."""
        log = self._pending_log
        for e in events:
            if isinstance(e, Merge):
                self.xa.append(e.rank + 1)
                self.ya.append(max(e.count, 1))
                log.append(e)  # formatted at flush, only the lines that stay in the log
            elif isinstance(e, MergeSummary):
                self.xb.append(e.elapsed)
                self.yb.append(e.vocab_size)
            elif isinstance(e, EmStep):
                self.xa.append(len(self.xa) + 1)
                self.ya.append(e.objective)
                log.append(f"EM round {e.round} sub-iteration {e.sub_iteration}: objective "
                           f"{e.objective:.4f}, {e.vocab_size:,} pieces, "
                           f"{e.num_tokens:,} tokens")
            elif isinstance(e, PruneStep):
                self.xb.append(e.round)
                self.yb.append(e.kept)
                shown = ", ".join(f"{p!r} ({loss:.3g})" for p, loss in e.removed[:PRUNED_SHOWN])
                more = len(e.removed) - PRUNED_SHOWN
                log.append(f"prune round {e.round}: removed {len(e.removed):,}, kept "
                           f"{e.kept:,}: {shown}" + (f" … and {more:,} more" if more > 0 else ""))
            elif isinstance(e, WordsCounted):
                log.append(f"counted {e.total_words:,} words, {e.unique_words:,} unique, "
                           f"alphabet {e.alphabet_size:,}")
            else:
                continue
            self._dirty = True

    def flush(self, *, force: bool = False) -> None:
        """Push recorded data to the curves and the log (cheap when nothing changed). While
        the plots are hidden (another tab) nothing is drawn until they show, or ``force``."""
        if not self._dirty or not (force or self.isVisible()):
            return
        if self.isVisible() and self.plot_a is None:
            self._build_plots()
        self._dirty = False
        self._flush_log()
        if self.plot_a is None or self.plot_b is None or self.curve_a is None or \
                self.curve_b is None:
            return  # never shown yet: drawn from the recorded data when first shown
        self.curve_a.setData(self.xa, self.ya)
        self.curve_b.setData(self.xb, self.yb)
        for plot, xs, log_y in ((self.plot_a, self.xa, self.algorithm == "bpe"),
                                (self.plot_b, self.xb, False)):
            if xs:
                plot.enableAutoRange()
            else:  # an empty plot: a round range, or a log axis labels every minor tick
                plot.setXRange(0, 10, padding=0)
                plot.setYRange(0, 3 if log_y else 10, padding=0)

    def _flush_log(self) -> None:
        if self._pending_log:
            # Only the tail can stay visible anyway; appending more would be wasted work.
            tail = [_log_line(e) for e in self._pending_log[-LOG_LINES:]]
            self.log.appendPlainText("\n".join(tail))
            self._pending_log = []

    def showEvent(self, event: QShowEvent) -> None:
        """Draw what was recorded while hidden."""
        super().showEvent(event)
        if self.plot_a is None:
            self._dirty = True
        self.flush()


def _log_line(e: str | Merge) -> str:
    if isinstance(e, str):
        return e
    return (f"merge {e.rank + 1:>6}  {e.left!r} + {e.right!r} → {e.token!r}"
            f"  count {e.count:,}  id {e.token_id}")
