"""Drawing of one Unigram lattice: ruler, node boxes in rows, edges, the Viterbi path on top.

:class:`LatticeSummary` holds what the engine computed for a lattice (best path, n-best,
marginals, entropy; :func:`summarize_lattice` only calls the lattice's own methods, so it can
run on a worker); :class:`LatticeCanvas` paints it: one box per node spanning its character
positions, filled by its marginal probability, the Viterbi nodes on row 0 with a bold outline,
the others packed greedily into rows below, edges between nodes that can follow each other
(only the Viterbi edges above :data:`MAX_EDGES`), and an n-best path outlined when selected.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import TYPE_CHECKING

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QFont, QMouseEvent, QPainter, QPaintEvent, QPalette, QPen
from PySide6.QtWidgets import QToolTip, QWidget

from explorer.ui.panels.chips import symbol_label

if TYPE_CHECKING:  # only drawn, never constructed here
    from explorer.engine.unigram.lattice import Lattice, Node

MAX_EDGES = 1500
"""Above this many edges only the Viterbi path's edges are drawn (the rest is a hairball)."""


@dataclass(slots=True)
class LatticeSummary:
    """What the panel shows of one lattice, as the engine computed it."""

    lattice: Lattice
    best: list[Node]
    best_score: float
    nbest: list[tuple[list[Node], float]]
    marginals: list[float]
    """Marginal probability by ``node_id``."""
    entropy: float


def summarize_lattice(lattice: Lattice, nbest: int = 5) -> LatticeSummary:
    """Viterbi path, ``nbest`` best paths, marginals and entropy of ``lattice`` (engine calls)."""
    paths = lattice.nbest(nbest) if lattice.size else [([], 0.0)]
    best, best_score = lattice.viterbi()  # last, so node.prev/backtrace are Viterbi's
    return LatticeSummary(lattice, best, best_score, paths, lattice.marginals(),
                          lattice.entropy() if lattice.size else 0.0)


class LatticeCanvas(QWidget):
    """Paints the lattice: ruler, node boxes in rows (Viterbi path on top), edges."""

    MARGIN, RULER_H, ROW_H, ROW_GAP, MIN_CELL = 8, 34, 34, 8, 26
    MAX_ZOOM = 3.0
    """Short words are stretched up to this factor to use the width they are given."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.summary: LatticeSummary | None = None
        self.selected: list[Node] = []
        self._x: list[float] = []  # x of each character boundary 0..size
        self._row_of: dict[int, int] = {}  # node_id -> row
        self._best_ids: set[int] = set()
        self._target_width = 0
        self.setMouseTracking(True)

    # --- data ---------------------------------------------------------------------------
    def set_summary(self, summary: LatticeSummary | None) -> None:
        """Show ``summary`` (None: nothing)."""
        self.summary = summary
        self.selected = []
        self._layout()
        self.update()

    def set_target_width(self, width: int) -> None:
        """The width available (the scroll viewport): short lattices stretch to fill it."""
        if width != self._target_width:
            self._target_width = width
            self._layout()
            self.update()

    def set_selected(self, path: list[Node]) -> None:
        """Outline ``path`` (an n-best path) in a second colour."""
        self.selected = path
        self.update()

    def nodes(self) -> list[Node]:
        """Nodes drawn (everything but BOS/EOS)."""
        if self.summary is None:
            return []
        lat = self.summary.lattice
        return [n for n in lat.nodes if n is not lat.bos_node and n is not lat.eos_node]

    def row_of(self, node: Node) -> int:
        """The row a node is drawn in (0 = the Viterbi path)."""
        return self._row_of[node.node_id]

    def node_rect(self, node: Node) -> QRectF:
        """The box of ``node`` in widget coordinates."""
        row = self._row_of[node.node_id]
        y = self.MARGIN + self.RULER_H + row * (self.ROW_H + self.ROW_GAP)
        x0, x1 = self._x[node.pos], self._x[node.end]
        return QRectF(x0 + 1, y, max(x1 - x0 - 2, 4), self.ROW_H)

    def _layout(self) -> None:
        self._row_of = {}
        self._best_ids = set()
        if self.summary is None:
            self._x = []
            self.setMinimumSize(0, 0)
            return
        lat = self.summary.lattice
        fm = self.fontMetrics()
        cells = [max(fm.horizontalAdvance(symbol_label(ch)) + 10, self.MIN_CELL)
                 for ch in lat.sentence]
        natural = sum(cells)
        room = self._target_width - 2 * self.MARGIN
        zoom = min(self.MAX_ZOOM, room / natural) if natural and room > natural else 1.0
        x = float(self.MARGIN)
        self._x = [x]
        for cell in cells:
            x += cell * zoom
            self._x.append(x)
        # Row 0 holds the Viterbi path; the other nodes go greedily to the first row free at
        # their start (interval partitioning), longest first at each position.
        best = self.summary.best
        self._best_ids = {n.node_id for n in best}
        for n in best:
            self._row_of[n.node_id] = 0
        row_end: list[int] = [lat.size]  # row 0 is full
        for n in sorted(self.nodes(), key=lambda n: (n.pos, -n.length, n.id)):
            if n.node_id in self._best_ids:
                continue
            for r in range(1, len(row_end)):
                if row_end[r] <= n.pos:
                    row_end[r] = n.end
                    self._row_of[n.node_id] = r
                    break
            else:
                row_end.append(n.end)
                self._row_of[n.node_id] = len(row_end) - 1
        rows = len(row_end)
        height = self.MARGIN * 2 + self.RULER_H + rows * (self.ROW_H + self.ROW_GAP)
        self.setMinimumSize(int(x + self.MARGIN), int(height))
        self.resize(self.minimumSize())

    # --- painting -----------------------------------------------------------------------
    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        pal = self.palette()
        painter.fillRect(self.rect(), pal.color(QPalette.ColorRole.Base))
        if self.summary is None:
            painter.end()
            return
        self._paint_ruler(painter, pal)
        self._paint_edges(painter, pal)
        self._paint_nodes(painter, pal)
        painter.end()

    def _paint_ruler(self, painter: QPainter, pal: QPalette) -> None:
        assert self.summary is not None
        text_color = pal.color(QPalette.ColorRole.Text)
        small = QFont(self.font())
        small.setPointSizeF(max(self.font().pointSizeF() * 0.75, 6))
        top = self.MARGIN
        for i, ch in enumerate(self.summary.lattice.sentence):
            cell = QRectF(self._x[i], top, self._x[i + 1] - self._x[i], 20)
            painter.setPen(pal.color(QPalette.ColorRole.Mid))
            painter.drawRect(cell)
            painter.setPen(text_color)
            painter.drawText(cell, Qt.AlignmentFlag.AlignCenter, symbol_label(ch))
        painter.setFont(small)
        painter.setPen(pal.color(QPalette.ColorRole.PlaceholderText))
        for i, x in enumerate(self._x):
            painter.drawText(QRectF(x - 15, top + 20, 30, 12), Qt.AlignmentFlag.AlignCenter,
                             str(i))
        painter.setFont(self.font())

    def _paint_edges(self, painter: QPainter, pal: QPalette) -> None:
        assert self.summary is not None
        lat = self.summary.lattice
        faint = QColor(pal.color(QPalette.ColorRole.Text))
        faint.setAlphaF(0.18)
        nodes = self.nodes()
        edges = sum(len(lat.begin_nodes(n.end)) for n in nodes)
        if edges <= MAX_EDGES:
            painter.setPen(QPen(faint, 1))
            for left in nodes:
                if left.end >= lat.size:
                    continue
                a = self.node_rect(left)
                for right in lat.begin_nodes(left.end):
                    b = self.node_rect(right)
                    painter.drawLine(QPointF(a.right(), a.center().y()),
                                     QPointF(b.left(), b.center().y()))
        accent = pal.color(QPalette.ColorRole.Highlight)
        painter.setPen(QPen(accent, 2.5))
        best = self.summary.best
        for left, right in itertools.pairwise(best):
            a, b = self.node_rect(left), self.node_rect(right)
            painter.drawLine(QPointF(a.right(), a.center().y()), QPointF(b.left(), b.center().y()))

    def _paint_nodes(self, painter: QPainter, pal: QPalette) -> None:
        assert self.summary is not None
        marg = self.summary.marginals
        accent = pal.color(QPalette.ColorRole.Highlight)
        text_color = pal.color(QPalette.ColorRole.Text)
        selected = {n.node_id for n in self.selected}
        small = QFont(self.font())
        small.setPointSizeF(max(self.font().pointSizeF() * 0.75, 6))
        fm = self.fontMetrics()
        for node in self.nodes():
            rect = self.node_rect(node)
            fill = QColor(accent)
            fill.setAlphaF(0.08 + 0.72 * max(0.0, min(1.0, marg[node.node_id])))
            best = node.node_id in self._best_ids
            pen = QPen(accent.darker(140) if best else pal.color(QPalette.ColorRole.Mid),
                       2.5 if best else 1)
            if node.node_id in selected:
                pen = QPen(QColor(230, 120, 0), 2.5, Qt.PenStyle.DashLine)
            painter.setPen(pen)
            painter.setBrush(fill)
            painter.drawRoundedRect(rect, 4, 4)
            painter.setPen(text_color)
            label = fm.elidedText(symbol_label(node.piece), Qt.TextElideMode.ElideRight,
                                  int(rect.width()) - 4)
            painter.setFont(self.font())
            painter.drawText(rect.adjusted(0, 1, 0, -rect.height() / 2),
                             Qt.AlignmentFlag.AlignCenter, label)
            painter.setFont(small)
            painter.drawText(rect.adjusted(0, rect.height() / 2, 0, -1),
                             Qt.AlignmentFlag.AlignCenter, f"{marg[node.node_id]:.2f}")
        painter.setFont(self.font())

    def node_at(self, x: float, y: float) -> Node | None:
        """The node drawn at a point, if any."""
        for node in self.nodes():
            if self.node_rect(node).contains(x, y):
                return node
        return None

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        pos = event.position()
        node = self.node_at(pos.x(), pos.y())
        if node is None or self.summary is None:
            QToolTip.hideText()
            return
        lat = self.summary.lattice
        start, end = lat.orig_span(node)
        QToolTip.showText(
            event.globalPosition().toPoint(),
            f"{symbol_label(node.piece)}  id {node.id}\nscore {node.score:.4f}\n"
            f"marginal p {self.summary.marginals[node.node_id]:.4f}\n"
            f"normalized [{node.pos}, {node.end})  original [{start}, {end})"
            + ("\non the Viterbi path" if node.node_id in self._best_ids else ""),
            self)
