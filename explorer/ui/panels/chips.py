"""A row of labelled chips (symbols, tokens), wrapped to the widget's width.

Used by the merge-queue panel for the current symbols and the final tokens. Each chip has a
label, an optional caption under it (an id), a tooltip, and can be highlighted. Labels come from
:func:`symbol_label`, which spells bytes honestly: valid UTF-8 as text with visible whitespace,
anything else as hex bytes (never U+FFFD).
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QEvent, QRect, QSize, Qt
from PySide6.QtGui import QColor, QFontMetrics, QHelpEvent, QPainter, QPaintEvent, QPalette
from PySide6.QtWidgets import QSizePolicy, QToolTip, QWidget

from explorer.ui.inspector import count, hex_bytes

_VISIBLE = {0x20: "·", 0x0A: "↵", 0x09: "→", 0x0D: "␍"} | {
    i: chr(0x2400 + i) for i in range(0x20) if i not in (0x09, 0x0A, 0x0D)}


def symbol_label(symbol: bytes | str) -> str:
    """Display spelling of a BPE symbol or token: visible whitespace, hex for partial UTF-8."""
    if isinstance(symbol, bytes):
        try:
            symbol = symbol.decode("utf-8")
        except UnicodeDecodeError:
            return "⟨" + hex_bytes(symbol) + "⟩"
    return symbol.translate(_VISIBLE) if symbol else "∅"


def symbol_tooltip(symbol: bytes | str) -> str:
    """Hex bytes (and text) of a symbol, for tooltips."""
    data = symbol if isinstance(symbol, bytes) else symbol.encode("utf-8")
    return f"{symbol_label(symbol)}  [{hex_bytes(data)}]  {count(len(data), 'byte')}"


@dataclass(frozen=True, slots=True)
class Chip:
    """One chip: its label, an optional caption (e.g. a token id) and tooltip."""

    label: str
    caption: str = ""
    tooltip: str = ""
    highlight: bool = False


class ChipRow(QWidget):
    """Paints chips left to right, wrapping onto new lines; height follows the width."""

    PAD_X, PAD_Y, GAP = 6, 3, 4

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._chips: list[Chip] = []
        self._rects: list[QRect] = []
        sp = QSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)
        sp.setHeightForWidth(True)
        self.setSizePolicy(sp)
        self.setMouseTracking(True)

    @property
    def chips(self) -> list[Chip]:
        """The chips shown, in order."""
        return list(self._chips)

    def labels(self) -> list[str]:
        """Labels of the chips shown, in order (what tests read)."""
        return [c.label for c in self._chips]

    def set_chips(self, chips: list[Chip]) -> None:
        """Replace the chips and repaint."""
        self._chips = chips
        self._rects = []
        self.updateGeometry()
        self.update()

    # --- layout -------------------------------------------------------------------------
    def _chip_size(self, fm: QFontMetrics, chip: Chip) -> QSize:
        w = max(fm.horizontalAdvance(chip.label), fm.horizontalAdvance(chip.caption), 8)
        lines = 2 if chip.caption else 1
        return QSize(w + 2 * self.PAD_X, lines * fm.height() + 2 * self.PAD_Y)

    def _layout(self, width: int) -> tuple[list[QRect], int]:
        fm = self.fontMetrics()
        rects: list[QRect] = []
        x = y = 0
        line_h = 0
        for chip in self._chips:
            size = self._chip_size(fm, chip)
            if x > 0 and x + size.width() > width:
                x, y = 0, y + line_h + self.GAP
                line_h = 0
            rects.append(QRect(x, y, size.width(), size.height()))
            x += size.width() + self.GAP
            line_h = max(line_h, size.height())
        return rects, y + line_h

    def hasHeightForWidth(self) -> bool:
        return True

    def heightForWidth(self, width: int) -> int:
        return max(self._layout(width)[1], self.fontMetrics().height() + 2 * self.PAD_Y)

    def sizeHint(self) -> QSize:
        return QSize(400, self.heightForWidth(400))

    def minimumSizeHint(self) -> QSize:
        return QSize(50, self.fontMetrics().height() + 2 * self.PAD_Y)

    # --- painting -----------------------------------------------------------------------
    def paintEvent(self, event: QPaintEvent) -> None:
        self._rects, _ = self._layout(self.width())
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        pal = self.palette()
        fm = self.fontMetrics()
        normal = pal.color(QPalette.ColorRole.AlternateBase)
        border = pal.color(QPalette.ColorRole.Mid)
        hilite = pal.color(QPalette.ColorRole.Highlight)
        for chip, rect in zip(self._chips, self._rects, strict=True):
            fill = hilite if chip.highlight else normal
            painter.setPen(hilite.darker(130) if chip.highlight else border)
            painter.setBrush(fill)
            painter.drawRoundedRect(rect.adjusted(0, 0, -1, -1), 4, 4)
            text_color = (pal.color(QPalette.ColorRole.HighlightedText) if chip.highlight
                          else pal.color(QPalette.ColorRole.Text))
            painter.setPen(text_color)
            label_rect = QRect(rect.x(), rect.y() + self.PAD_Y, rect.width(), fm.height())
            painter.drawText(label_rect, Qt.AlignmentFlag.AlignCenter, chip.label)
            if chip.caption:
                cap = QColor(text_color)
                cap.setAlphaF(0.65)
                painter.setPen(cap)
                cap_rect = label_rect.translated(0, fm.height())
                painter.drawText(cap_rect, Qt.AlignmentFlag.AlignCenter, chip.caption)
        painter.end()

    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ToolTip and isinstance(event, QHelpEvent):
            for chip, rect in zip(self._chips, self._rects, strict=False):
                if rect.contains(event.pos()) and chip.tooltip:
                    QToolTip.showText(event.globalPos(), chip.tooltip, self)
                    return True
        return super().event(event)
