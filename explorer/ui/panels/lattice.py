"""Unigram lattice panel: every candidate piece of a word or sentence, the Viterbi path, n-best.

Draws an engine :class:`~explorer.engine.unigram.lattice.Lattice` (from
``tokenizer.lattice(text)``): a ruler of the normalized characters, one box per node spanning
its character positions (filled by its marginal probability, labelled with piece and
probability), edges from every node to the nodes that can follow it, the Viterbi path on the
top row with a bold outline, and beside it the n-best segmentations with their scores; selecting
one outlines its nodes. The numbers (best path, n-best, marginals, entropy) are the engine's:
:func:`summarize_lattice` only calls the lattice's own methods, so it can run on a worker.

Does not handle: lattices of whole documents (thousands of nodes draw slowly and read badly;
the window passes the word or sentence under the cursor).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QScrollArea,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from explorer.ui.panels.chips import symbol_label
from explorer.ui.panels.lattice_canvas import LatticeCanvas, LatticeSummary, summarize_lattice
from explorer.ui.table_model import HeaderTableModel

if TYPE_CHECKING:  # only drawn, never constructed here
    from explorer.engine.unigram.lattice import Lattice, Node

_Index = QModelIndex | QPersistentModelIndex
__all__ = ["LatticeCanvas", "LatticePanel", "LatticeSummary", "NBestModel", "summarize_lattice"]


def _segmentation(path: list[Node]) -> str:
    return " | ".join(symbol_label(n.piece) for n in path)


class NBestModel(HeaderTableModel):
    """The n-best paths: rank, score, segmentation."""

    HEADERS = ("#", "score", "pieces", "segmentation")

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._paths: list[tuple[list[Node], float]] = []

    def set_paths(self, paths: list[tuple[list[Node], float]]) -> None:
        """Show ``paths`` (best first)."""
        self.beginResetModel()
        self._paths = list(paths)
        self.endResetModel()

    def path(self, row: int) -> list[Node]:
        """The nodes of path ``row``."""
        return self._paths[row][0]

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008 - Qt idiom
        return 0 if parent.isValid() else len(self._paths)



    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._paths):
            return None
        path, score = self._paths[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            return (str(index.row() + 1), f"{score:.4f}", str(len(path)),
                    _segmentation(path))[index.column()]
        if role == Qt.ItemDataRole.ToolTipRole:
            return " ".join(str(n.id) for n in path)
        return None


class LatticePanel(QWidget):
    """Title, totals, the lattice canvas and the n-best list."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.title = QLabel("Place the cursor in a word to see its Unigram lattice.", self)
        self.title.setWordWrap(True)
        self.totals = QLabel(self)
        self.totals.setWordWrap(True)
        self.canvas = LatticeCanvas()
        self.scroll = QScrollArea(self)
        self.scroll.setWidget(self.canvas)
        self.scroll.setWidgetResizable(False)
        self.nbest_model = NBestModel(self)
        self.nbest = QTableView(self)
        self.nbest.setModel(self.nbest_model)
        self.nbest.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.nbest.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.nbest.verticalHeader().setVisible(False)
        self.nbest.verticalHeader().setDefaultSectionSize(22)
        header = self.nbest.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(True)
        self.nbest.selectionModel().currentRowChanged.connect(
            lambda current, _prev: self.canvas.set_selected(
                self.nbest_model.path(current.row()) if current.isValid() else []))
        split = QSplitter(Qt.Orientation.Vertical, self)
        split.addWidget(self.scroll)
        split.addWidget(self.nbest)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 1)
        split.setSizes([360, 140])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.title)
        layout.addWidget(self.totals)
        layout.addWidget(split, 1)

    def set_lattice(self, lattice: Lattice, title: str = "", nbest: int = 5) -> None:
        """Compute (engine calls) and show ``lattice``; fine for a word or a sentence."""
        self.set_summary(summarize_lattice(lattice, nbest), title)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self.canvas.set_target_width(self.scroll.viewport().width())

    def set_summary(self, summary: LatticeSummary, title: str = "") -> None:
        """Show an already computed summary (e.g. from a worker)."""
        self.title.setText(title or f"Lattice of {summary.lattice.sentence!r}")
        nodes = len(summary.lattice.nodes) - 2
        self.totals.setText(
            f"{nodes} nodes over {summary.lattice.size} characters · Viterbi: "
            f"{len(summary.best)} pieces, score {summary.best_score:.4f} · entropy "
            f"{summary.entropy:.4f} nats · fill = marginal probability")
        self.canvas.set_target_width(self.scroll.viewport().width())
        self.canvas.set_summary(summary)
        self.nbest_model.set_paths(summary.nbest)

    def clear(self, message: str = "Place the cursor in a word to see its Unigram lattice.",
              ) -> None:
        """Show nothing but ``message``."""
        self.title.setText(message)
        self.totals.setText("")
        self.canvas.set_summary(None)
        self.nbest_model.set_paths([])
