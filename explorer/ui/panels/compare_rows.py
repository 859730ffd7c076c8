"""The aligned token rows of the comparison view (one row per tokenizer, segments wrapped).

The text is cut at every boundary of every encoding (the engine's
:attr:`~explorer.engine.compare.BoundaryComparison.segments`); segments are laid out left to
right and wrap into bands; each band draws one row per tokenizer whose token boxes span whole
segments, so equal boundaries line up. Boundaries in ``differing`` get a red bar in the rows
that have them. Only the first :data:`MAX_DRAWN_CHARS` characters are laid out; zero-width
tokens are not drawn; partial-UTF-8 tokens sharing one span are one box (listed in its tooltip).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import QColor, QHelpEvent, QPainter, QPaintEvent, QPalette, QPen
from PySide6.QtWidgets import QSizePolicy, QToolTip, QWidget

from explorer.engine.compare import BoundaryComparison
from explorer.engine.encoding import Encoding, Token
from explorer.ui.inspector import hex_bytes
from explorer.ui.panels.chips import symbol_label

MAX_DRAWN_CHARS = 4000
"""Characters drawn in the aligned rows (painting cost grows with the text; counts do not)."""
DIFF_COLOR = QColor(220, 40, 40)


def token_color(token_id: int) -> QColor:
    """A light colour that is stable per token id (golden-ratio hue walk)."""
    hue = (token_id * 0.618033988749895) % 1.0
    return QColor.fromHslF(hue, 0.55, 0.82)


@dataclass(frozen=True, slots=True)
class _Box:
    row: int
    rect: QRectF
    tokens: tuple[Token, ...]
    """Tokens drawn as this box (several when partial-UTF-8 tokens share one span)."""


class AlignedRows(QWidget):
    """Paints the aligned token rows; height follows the width (segments wrap)."""

    PAD, SEG_PAD, ROW_H, BAND_GAP, NAME_W = 6, 6, 24, 10, 110

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.names: list[str] = []
        self.encodings: list[Encoding] = []
        self.comparison: BoundaryComparison | None = None
        self._boxes: list[_Box] = []
        self._marks: list[tuple[int, int, QRectF]] = []  # (row, offset, bar)
        self._seg_x: dict[int, tuple[int, float, float]] = {}  # seg start -> (band, x0, x1)
        self._pos_x: dict[int, tuple[int, float]] = {}  # boundary offset -> (band, x)
        self._height = 0
        sp = QSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        sp.setHeightForWidth(True)
        self.setSizePolicy(sp)

    def set_data(self, names: Sequence[str], encodings: Sequence[Encoding],
                 comparison: BoundaryComparison | None) -> None:
        """Show ``encodings`` (rows named ``names``) and their ``comparison``."""
        self.names = list(names)
        self.encodings = list(encodings)
        self.comparison = comparison
        self._relayout(self.width())
        self.updateGeometry()
        self.update()

    def marked_boundaries(self, row: int) -> set[int]:
        """Offsets marked as differing in ``row`` (what tests read)."""
        return {offset for r, offset, _ in self._marks if r == row}

    def boxes(self, row: int) -> list[tuple[int, int]]:
        """``(start, end)`` of the token boxes drawn in ``row``, in order (pieces of a wrapped
        token are merged)."""
        spans: list[tuple[int, int]] = []
        for box in self._boxes:
            if box.row == row:
                span = (box.tokens[0].start, box.tokens[0].end)
                if not spans or spans[-1] != span:
                    spans.append(span)
        return spans

    # --- layout ---------------------------------------------------------------------------
    def _relayout(self, width: int) -> None:
        self._boxes, self._marks = [], []
        cmp = self.comparison
        if cmp is None or not self.encodings:
            self._height = 0
            return
        fm = self.fontMetrics()
        limit = min(len(cmp.text), MAX_DRAWN_CHARS)
        segments = [s for s in cmp.segments if s[0] < limit]
        rows = len(self.encodings)
        band_h = rows * self.ROW_H + self.BAND_GAP
        left = self.PAD + self.NAME_W
        right = max(width - self.PAD, left + 50)
        # x (and band) of every segment; a boundary sits at the start of its segment, or at
        # the end of the last one
        seg_x: dict[int, tuple[int, float, float]] = {}
        pos_x: dict[int, tuple[int, float]] = {}
        band, x = 0, float(left)
        for s, e in segments:
            w = fm.horizontalAdvance(symbol_label(cmp.text[s:e])) + 2 * self.SEG_PAD
            if x > left and x + w > right:
                band, x = band + 1, float(left)
            seg_x[s] = (band, x, x + w)
            pos_x[s] = (band, x)
            x += w
        if segments:
            pos_x.setdefault(segments[-1][1], (band, x))
        self._seg_x, self._pos_x = seg_x, pos_x
        self._height = (band + 1) * band_h + self.PAD if segments else 0
        starts = sorted(seg_x)
        for row, enc in enumerate(self.encodings):
            group: list[Token] = []
            for tok in enc.tokens:
                if tok.end <= tok.start or tok.start >= limit:
                    continue
                if group and (group[0].start, group[0].end) != (tok.start, tok.end):
                    self._add_boxes(row, tuple(group), starts, band_h)
                    group = []
                group.append(tok)
            if group:
                self._add_boxes(row, tuple(group), starts, band_h)
            for offset in sorted(cmp.differing[row]):
                where = pos_x.get(offset)
                if where is None:  # beyond the drawn part
                    continue
                b, xo = where
                y = self.PAD + b * band_h + row * self.ROW_H
                self._marks.append((row, offset, QRectF(xo - 1.5, y, 3, self.ROW_H)))

    def _add_boxes(self, row: int, tokens: tuple[Token, ...], starts: list[int],
                   band_h: int) -> None:
        # One box per band the token's segments occupy (a wrapped token is drawn in parts).
        first = bisect_left(starts, tokens[0].start)
        runs: dict[int, list[float]] = {}
        for s in starts[first:]:
            if s >= tokens[0].end:
                break
            b, x0, x1 = self._seg_x[s]
            run = runs.setdefault(b, [x0, x1])
            run[0], run[1] = min(run[0], x0), max(run[1], x1)
        for b, (x0, x1) in runs.items():
            y = self.PAD + b * band_h + row * self.ROW_H
            self._boxes.append(_Box(row, QRectF(x0 + 1, y + 2, x1 - x0 - 2, self.ROW_H - 4),
                                    tokens))

    def hasHeightForWidth(self) -> bool:
        return True

    def heightForWidth(self, width: int) -> int:
        self._relayout(width)
        return self._height

    def sizeHint(self) -> QSize:
        return QSize(600, max(self._height, 40))

    def resizeEvent(self, event: Any) -> None:
        self._relayout(self.width())
        self.setMinimumHeight(self._height)
        super().resizeEvent(event)

    # --- painting -------------------------------------------------------------------------
    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        pal = self.palette()
        painter.fillRect(self.rect(), pal.color(QPalette.ColorRole.Base))
        cmp = self.comparison
        if cmp is None:
            painter.end()
            return
        fm = self.fontMetrics()
        band_h = len(self.encodings) * self.ROW_H + self.BAND_GAP
        bands = {b for b, _, _ in self._seg_x.values()}
        text_color = pal.color(QPalette.ColorRole.Text)
        muted = pal.color(QPalette.ColorRole.PlaceholderText)
        visible = event.rect()
        for b in sorted(bands):  # row names at the start of every band
            for row, name in enumerate(self.names):
                y = self.PAD + b * band_h + row * self.ROW_H
                painter.setPen(muted)
                painter.drawText(QRectF(self.PAD, y, self.NAME_W - 6, self.ROW_H),
                                 Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft,
                                 fm.elidedText(name, Qt.TextElideMode.ElideRight,
                                               self.NAME_W - 8))
        for box in self._boxes:
            if not box.rect.intersects(QRectF(visible)):
                continue
            tok = box.tokens[0]
            painter.setPen(QPen(text_color.lighter(250) if pal.color(
                QPalette.ColorRole.Base).lightness() < 128 else QColor(120, 120, 120), 1))
            painter.setBrush(token_color(tok.id))
            painter.drawRoundedRect(box.rect, 3, 3)
            painter.setPen(QColor(20, 20, 20))
            painter.drawText(box.rect, Qt.AlignmentFlag.AlignCenter,
                             fm.elidedText(symbol_label(cmp.text[tok.start:tok.end]),
                                           Qt.TextElideMode.ElideRight,
                                           int(box.rect.width()) - 2))
        for _row, _offset, bar in self._marks:
            painter.fillRect(bar, DIFF_COLOR)
        painter.end()

    def event(self, event: Any) -> bool:
        if event.type() == event.Type.ToolTip and isinstance(event, QHelpEvent):
            for box in self._boxes:
                if box.rect.contains(event.position()):
                    lines = [f"{self.names[box.row]}"] + [
                        f"id {t.id}  {t.piece!r}  [{hex_bytes(t.token_bytes)}]  "
                        f"span {t.start}–{t.end}" for t in box.tokens]
                    QToolTip.showText(event.globalPos(), "\n".join(lines), self)
                    return True
            QToolTip.hideText()
            return True
        return super().event(event)
