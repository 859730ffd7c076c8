"""The provenance view: how the token under the cursor was made, and why each boundary
around it sits where it sits.

- a strip of the neighbouring tokens; the gaps between them are boundaries: hover one for its
  explanation, click it to pin the explanation, click a token to see its provenance;
- the explanation of the chosen boundary in plain words;
- BPE: the merge tree of the token drawn as a tree, leaves (bytes or initial symbols) at the
  bottom, each merge with its rank (SentencePiece BPE: score) and trace step;
- Unigram: the token's score and the best competing segmentations of its span;
- WordPiece: the greedy steps, candidates tried and rejected.

Draws data computed by :mod:`explorer.engine.explain` on a worker.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QPoint, QRect, QSize, Qt, Signal
from PySide6.QtGui import (
    QColor,
    QFontMetrics,
    QHelpEvent,
    QMouseEvent,
    QPainter,
    QPaintEvent,
    QPalette,
    QPen,
)
from PySide6.QtWidgets import QLabel, QToolTip, QVBoxLayout, QWidget

from explorer.engine.encoding import Token
from explorer.ui.palettes import DEFAULT_PALETTE, PALETTES, color_index
from explorer.ui.panels.chips import symbol_label, symbol_tooltip

if TYPE_CHECKING:  # (the explainers are imported by the jobs that use them)
    from explorer.engine.explain.boundary import BoundaryExplanation
    from explorer.engine.explain.provenance import MergeNode, Provenance

GAP = 10
NODE_H = 22
LEVEL_H = 58
LEAF_SLOT = 66
"""Minimum width per leaf, so the captions of neighbouring merges do not overlap."""


@dataclass
class ProvenanceResult:
    """What the worker computed for one cursor position."""

    tokens: list[Token]
    """The neighbouring tokens shown in the strip."""
    first_index: int
    """Encoding index of ``tokens[0]``."""
    provenance: dict[int, Provenance] = field(default_factory=dict)
    """By encoding index."""
    boundaries: dict[int, BoundaryExplanation] = field(default_factory=dict)
    """By encoding index of the token right of the boundary."""
    current: int = 0
    """The token under the cursor (encoding index)."""
    boundary: int | None = None
    """The boundary shown first."""
    byte_level: bool = False
    """Tokens are shown by their bytes (byte-level BPE), else by their vocabulary piece."""


class BoundaryStrip(QWidget):
    """Token chips with hoverable, clickable boundaries between them."""

    boundary_clicked = Signal(int)
    """Encoding index of the token right of the clicked boundary."""
    token_clicked = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.result: ProvenanceResult | None = None
        self.selected_token: int | None = None
        self.selected_boundary: int | None = None
        self._tokens: list[tuple[int, QRect]] = []
        self._gaps: list[tuple[int, QRect]] = []
        self.setMouseTracking(True)
        self.setMinimumHeight(NODE_H + 24)

    def set_result(self, result: ProvenanceResult | None) -> None:
        """Show the tokens of ``result``."""
        self.result = result
        self._layout()
        self.updateGeometry()
        self.update()

    def sizeHint(self) -> QSize:
        right = self._tokens[-1][1].right() + 8 if self._tokens else 200
        return QSize(right, NODE_H + 24)

    def label(self, tok: Token) -> str:
        """A token's chip label: its bytes for byte-level BPE, else its piece."""
        r = self.result
        return symbol_label(tok.token_bytes if r is not None and r.byte_level else tok.piece)

    def _layout(self) -> None:
        self._tokens, self._gaps = [], []
        r = self.result
        if r is None:
            return
        fm = QFontMetrics(self.font())
        x = 4
        for k, tok in enumerate(r.tokens):
            index = r.first_index + k
            if k:
                self._gaps.append((index, QRect(x, 2, GAP, NODE_H + 4)))
                x += GAP
            w = fm.horizontalAdvance(self.label(tok)) + 12
            self._tokens.append((index, QRect(x, 4, w, NODE_H)))
            x += w

    def paintEvent(self, event: QPaintEvent) -> None:
        p = QPainter(self)
        pal = self.palette()
        dark = pal.color(QPalette.ColorRole.Base).lightness() < 128
        colors = PALETTES[DEFAULT_PALETTE].colors(dark)
        r = self.result
        if r is None:
            p.end()
            return
        text = pal.color(QPalette.ColorRole.Text)
        for index, rect in self._tokens:
            tok = r.tokens[index - r.first_index]
            p.fillRect(rect, QColor(colors[color_index(tok.id, len(colors))]))
            if index == self.selected_token:
                p.setPen(QPen(pal.color(QPalette.ColorRole.Highlight), 2))
                p.drawRect(rect.adjusted(0, 0, -1, -1))
            p.setPen(text)
            p.drawText(rect, Qt.AlignmentFlag.AlignCenter, self.label(tok))
        for index, rect in self._gaps:
            explanation = r.boundaries.get(index)
            colour = {"pre-tokenizer": "#5b7db1", "special": "#999999", "merge": "#d9534f",
                      "viterbi": "#8a5bb1", "wordpiece": "#2e8b57",
                      "byte-fallback": "#d08c2b"}.get(
                explanation.cause if explanation else "", "#bbbbbb")
            width = 4 if index == self.selected_boundary else 2
            p.setPen(QPen(QColor(colour), width))
            x = rect.center().x()
            p.drawLine(x, rect.top(), x, rect.bottom())
        p.end()

    def _at(self, pos: QPoint) -> tuple[str, int] | None:
        for index, rect in self._gaps:
            if rect.adjusted(-2, 0, 2, 0).contains(pos):
                return "boundary", index
        for index, rect in self._tokens:
            if rect.contains(pos):
                return "token", index
        return None

    def mousePressEvent(self, event: QMouseEvent) -> None:
        hit = self._at(event.position().toPoint())
        if hit is None:
            return
        kind, index = hit
        if kind == "boundary":
            self.boundary_clicked.emit(index)
        else:
            self.token_clicked.emit(index)

    def event(self, e: QEvent) -> bool:
        if e.type() == QEvent.Type.ToolTip and isinstance(e, QHelpEvent):
            tip = self.tip_at(e.pos())
            if tip:
                QToolTip.showText(e.globalPos(), tip, self)
            else:
                QToolTip.hideText()
            return True
        return super().event(e)

    def tip_at(self, pos: QPoint) -> str:
        """The explanation of the boundary (or the token) under ``pos``."""
        hit = self._at(pos)
        r = self.result
        if hit is None or r is None:
            return ""
        kind, index = hit
        if kind == "boundary":
            explanation = r.boundaries.get(index)
            return explanation.full_text() if explanation else ""
        tok = r.tokens[index - r.first_index]
        return f"id {tok.id}: {symbol_tooltip(tok.token_bytes)} (click for its provenance)"


class MergeTreeCanvas(QWidget):
    """Draws a BPE merge tree: leaves at the bottom, each merge above its two parts."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.tree: MergeNode | None = None
        self.score_mode = False
        self._boxes: list[tuple[MergeNode, QRect]] = []
        self._size = QSize(0, 0)
        self.setMouseTracking(True)

    def set_tree(self, tree: MergeNode | None) -> None:
        """Draw ``tree`` (None clears)."""
        self.tree = tree
        self.score_mode = tree is not None and any(n.score is not None for n in tree.inner())
        self._layout()
        self.updateGeometry()
        self.update()

    def sizeHint(self) -> QSize:
        return self._size

    def minimumSizeHint(self) -> QSize:
        return self._size

    def caption(self, node: MergeNode) -> str:
        """Rank (or score) and step of a merge; empty for a leaf."""
        if node.whole_token:
            return "whole-token lookup"
        if node.rank is None:
            return ""
        what = f"score {node.score:g}" if node.score is not None else f"rank {node.rank:g}"
        return f"{what}\nstep {node.step}"

    def _layout(self) -> None:
        self._boxes = []
        tree = self.tree
        if tree is None:
            self._size = QSize(0, 0)
            return
        fm = QFontMetrics(self.font())
        depth = tree.depth()
        leaves = tree.leaves()
        x = 8
        leaf_rect: dict[int, QRect] = {}
        for leaf in leaves:
            w = max(fm.horizontalAdvance(symbol_label(leaf.symbol)) + 12, 22)
            slot = max(w + 6, LEAF_SLOT)
            leaf_rect[id(leaf)] = QRect(x + (slot - w) // 2, 8 + depth * LEVEL_H, w, NODE_H)
            x += slot

        def place(node: MergeNode, level: int) -> QRect:
            if not node.children:
                rect = leaf_rect[id(node)]
                self._boxes.append((node, rect))
                return rect
            kids = [place(c, level + 1) for c in node.children]
            label_w = fm.horizontalAdvance(symbol_label(node.symbol)) + 12
            cx = (kids[0].center().x() + kids[-1].center().x()) // 2
            y = 8 + (depth - self._height(node)) * LEVEL_H
            rect = QRect(cx - label_w // 2, y, label_w, NODE_H)
            self._boxes.append((node, rect))
            return rect

        place(tree, 0)
        right = max(r.right() for _, r in self._boxes) + 12
        self._size = QSize(max(right, x + 8), 8 + (depth + 1) * LEVEL_H + 4)

    def _height(self, node: MergeNode) -> int:
        return node.depth()

    def paintEvent(self, event: QPaintEvent) -> None:
        p = QPainter(self)
        pal = self.palette()
        text = pal.color(QPalette.ColorRole.Text)
        muted = pal.color(QPalette.ColorRole.PlaceholderText)
        rects = {id(n): r for n, r in self._boxes}
        p.setPen(QPen(muted, 1))
        for node, rect in self._boxes:
            top = rect.bottom() + (28 if self.caption(node) else 0)  # below the caption
            for child in node.children:
                c = rects[id(child)]
                p.drawLine(rect.center().x(), top, c.center().x(), c.top())
        small = self.font()
        small.setPointSizeF(max(6.0, small.pointSizeF() * 0.8))
        for node, rect in self._boxes:
            leaf = not node.children
            p.fillRect(rect, QColor("#e8eef7") if leaf else QColor("#fde9c8"))
            p.setPen(text)
            p.drawRect(rect.adjusted(0, 0, -1, -1))
            p.drawText(rect, Qt.AlignmentFlag.AlignCenter, symbol_label(node.symbol))
            cap = self.caption(node)
            if cap:
                p.setFont(small)
                p.setPen(muted)
                p.drawText(QRect(rect.center().x() - 50, rect.bottom() + 1, 100, 28),
                           Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop, cap)
                p.setFont(self.font())
        p.end()

    def event(self, e: QEvent) -> bool:
        if e.type() == QEvent.Type.ToolTip and isinstance(e, QHelpEvent):
            for node, rect in self._boxes:
                if rect.contains(e.pos()):
                    cap = self.caption(node).replace("\n", ", ") or "initial symbol"
                    QToolTip.showText(e.globalPos(), f"{symbol_tooltip(node.symbol)}\n{cap}",
                                      self)
                    return True
            QToolTip.hideText()
            return True
        return super().event(e)


class ProvenanceView(QWidget):
    """The boundary strip, the chosen boundary's explanation and the token's provenance."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.result: ProvenanceResult | None = None
        self.title = QLabel("Place the cursor on a token to see how it was made.", self)
        self.title.setWordWrap(True)
        self.strip = BoundaryStrip(self)
        self.explanation = QLabel(self)
        self.explanation.setWordWrap(True)
        self.explanation.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.summary = QLabel(self)
        self.summary.setWordWrap(True)
        self.tree = MergeTreeCanvas(self)
        self.details = QLabel(self)
        self.details.setWordWrap(True)
        self.details.setTextFormat(Qt.TextFormat.RichText)
        layout = QVBoxLayout(self)
        layout.addWidget(self.title)
        layout.addWidget(self.strip)
        layout.addWidget(self.explanation)
        layout.addWidget(self.summary)
        layout.addWidget(self.tree)
        layout.addWidget(self.details)
        layout.addStretch(1)
        self.strip.boundary_clicked.connect(self.show_boundary)
        self.strip.token_clicked.connect(self.show_token)

    def set_result(self, result: ProvenanceResult, title: str) -> None:
        """Show a worker's result."""
        self.result = result
        self.title.setText(title)
        self.strip.set_result(result)
        self.show_token(result.current)
        if result.boundary is not None:
            self.show_boundary(result.boundary)
        else:
            self.explanation.setText("")

    def clear(self, message: str) -> None:
        """Show ``message`` only."""
        self.result = None
        self.title.setText(message)
        self.strip.set_result(None)
        self.explanation.setText("")
        self.summary.setText("")
        self.tree.set_tree(None)
        self.details.setText("")

    def show_boundary(self, index: int) -> None:
        """Show the explanation of the boundary before token ``index``."""
        r = self.result
        explanation = r.boundaries.get(index) if r else None
        self.strip.selected_boundary = index
        self.strip.update()
        if explanation is None:
            self.explanation.setText("")
            return
        self.explanation.setText(f"<b>Why a boundary here ({explanation.cause})?</b> "
                                 f"{_html(explanation.full_text())}")

    def show_token(self, index: int) -> None:
        """Show the provenance of token ``index``."""
        r = self.result
        pr = r.provenance.get(index) if r else None
        self.strip.selected_token = index
        self.strip.update()
        if pr is None:
            self.summary.setText("")
            self.tree.set_tree(None)
            self.details.setText("")
            return
        self.summary.setText(f"<b>How {_html(repr(pr.token.piece))} was made:</b> "
                             f"{_html(pr.summary)}")
        self.tree.set_tree(pr.tree)
        self.details.setText(_details(pr))


def _details(pr: Provenance) -> str:
    if pr.competitors:
        rows = "".join(
            f"<tr><td>{'|'.join(_html(p) for p in s.pieces)}</td><td align=right>"
            f"{s.score:.3f}</td><td align=right>"
            f"{'' if k == 0 else f'{s.score - pr.competitors[0].score:+.3f}'}</td></tr>"
            for k, s in enumerate(pr.competitors))
        return ("<b>Best segmentations of the token's span</b> (score, difference to the "
                f"token):<table cellspacing=6>{rows}</table>")
    if pr.wordpiece:
        lines = []
        for s in pr.wordpiece:
            tried = " ".join(f"<s>{_html(r)}</s>" for r in s.rejected[:8])
            more = f" … {len(s.rejected) - 8} more" if len(s.rejected) > 8 else ""
            took = _html(s.chosen) if s.chosen else "<i>nothing: the word is unknown</i>"
            lines.append(f"from {s.start}: {tried}{more} → <b>{took}</b>")
        return "<b>Greedy longest match</b> (rejected candidates struck out):<br>" + \
            "<br>".join(lines)
    return ""


def _html(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
