"""The pipeline view: one row per stage of a :class:`~explorer.engine.explain.pipeline.
PipelineTrace`, aligned to the original text.

Columns are the original characters. Each column is as wide as the widest of what sits in it:
the original character and the normalized characters that came from it. Rows:

- *Original*: the text; characters that normalization changed are marked (amber);
- *Normalized*: each normalized character under the original it came from, changed ones
  marked; hover shows ``original -> normalized``;
- *Pre-tokens*: one box per pre-token with the rule that cut it (the pattern alternative);
- *Tokens*: the model tokens, coloured by id like the editor, ids under them;
- *Post-processor*: the tokens it adds (``[CLS]``/``[SEP]``, BOS/EOS) with their ids;
- *Decoded*: the decoded text; what decoding lost or changed is marked red under its
  original span.

Draws data only; the trace is computed by the engine on a worker.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QPoint, QRect, QSize, Qt
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontMetrics,
    QHelpEvent,
    QImage,
    QPainter,
    QPaintEvent,
    QPalette,
)
from PySide6.QtWidgets import QLabel, QToolTip, QVBoxLayout, QWidget

from explorer.engine.encoding import Token
from explorer.ui.palettes import DEFAULT_PALETTE, PALETTES, color_index
from explorer.ui.panels.chips import symbol_label

if TYPE_CHECKING:  # (the explainers are imported by the jobs that use them)
    from explorer.engine.explain.pipeline import PipelineTrace

ROWS = ("Original", "Normalized", "Pre-tokens", "Tokens", "Post-processor", "Decoded")
LABEL_W = 120
ROW_H = 24
CAPTION_H = 14
PAD = 4
CHANGED = QColor("#f5c04a")
LOST = QColor("#d9534f")


def rule_numbers(trace: PipelineTrace) -> dict[str, int]:
    """Pattern alternatives numbered in order of first use (captions ``#n``, legend)."""
    numbers: dict[str, int] = {}
    for pre in trace.pre_tokens:
        if pre.regex and pre.rule and pre.rule not in numbers:
            numbers[pre.rule] = len(numbers) + 1
    return numbers


def _visible(text: str) -> str:
    return symbol_label(text) if text else "∅"


@dataclass(frozen=True)
class _Hit:
    rect: QRect
    tip: str


class PipelineCanvas(QWidget):
    """Paints the stage rows of one trace; tooltips explain every mark."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.trace: PipelineTrace | None = None
        self._x: list[int] = []  # left edge of each original column (+ one past the end)
        self._hits: list[_Hit] = []
        self._hits_dirty = True
        self._size = QSize(400, 8 * ROW_H)
        self.setMouseTracking(True)
        font = QFont(self.font())
        font.setStyleHint(QFont.StyleHint.Monospace)
        font.setFamily("monospace")
        self.setFont(font)

    def set_trace(self, trace: PipelineTrace | None) -> None:
        """Show ``trace`` (None clears)."""
        self.trace = trace
        self._hits_dirty = True
        self._layout()
        self.updateGeometry()
        self.update()

    def sizeHint(self) -> QSize:
        return self._size

    def minimumSizeHint(self) -> QSize:
        return self._size

    # --- layout -------------------------------------------------------------------------------
    def _layout(self) -> None:
        t = self.trace
        fm = QFontMetrics(self.font())
        if t is None:
            self._x = []
            self._size = QSize(400, 8 * ROW_H)
            return
        n = len(t.text)
        widths = [fm.horizontalAdvance(_visible(ch)) + 6 for ch in t.text]
        per_orig: dict[int, str] = {}
        for j, ch in enumerate(t.normalized):
            s = min(t.norm_starts[j], n - 1) if n else 0
            per_orig[s] = per_orig.get(s, "") + ch
        for i, chars in per_orig.items():
            if 0 <= i < n:
                widths[i] = max(widths[i], fm.horizontalAdvance(_visible(chars)) + 6)
        for tok in t.encoding:  # a token's label fits under its columns
            if tok.end > tok.start:
                need = fm.horizontalAdvance(self._label(tok)) + 8
                have = sum(widths[tok.start:tok.end])
                if need > have:
                    widths[tok.end - 1] += need - have
        x = LABEL_W
        self._x = []
        for w in widths:
            self._x.append(x)
            x += w
        self._x.append(x)
        extra = sum(fm.horizontalAdvance(f"{a.piece} {a.id}") + 16 for a in t.additions)
        height = PAD + len(ROWS) * (ROW_H + CAPTION_H) + PAD
        self._size = QSize(x + extra + 2 * PAD + 60, height)

    def _label(self, tok: Token) -> str:
        """Byte-level tokens by their bytes; others by their vocabulary piece."""
        t = self.trace
        byte_level = t is not None and (t.format == "tiktoken" or any(
            "ByteLevel" in c.description for c in t.components if c.kind == "decoder"))
        return symbol_label(tok.token_bytes if byte_level else tok.piece)

    def _col(self, orig: int) -> int:
        if not self._x:
            return LABEL_W
        return self._x[max(0, min(orig, len(self._x) - 1))]

    def _row_y(self, row: int) -> int:
        return PAD + row * (ROW_H + CAPTION_H)

    # --- painting -----------------------------------------------------------------------------
    def paintEvent(self, event: QPaintEvent) -> None:
        p = QPainter(self)
        self._paint(p)
        p.end()
        self._hits_dirty = False

    def _paint(self, p: QPainter) -> None:
        """Paint every row (and record the tooltip areas)."""
        pal = self.palette()
        p.fillRect(self.rect(), pal.color(QPalette.ColorRole.Base))
        text_color = pal.color(QPalette.ColorRole.Text)
        dark = pal.color(QPalette.ColorRole.Base).lightness() < 128
        colors = PALETTES[DEFAULT_PALETTE].colors(dark)
        self._hits = []
        for r, name in enumerate(ROWS):
            p.setPen(pal.color(QPalette.ColorRole.PlaceholderText))
            p.drawText(QRect(PAD, self._row_y(r), LABEL_W - 2 * PAD, ROW_H),
                       Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft, name)
        t = self.trace
        if t is None:
            return
        changed_orig: set[int] = set()
        changed_norm: dict[int, str] = {}
        for c in t.changes:
            tip = (f"original {c.before!r} → normalized {c.after!r}"
                   if c.after else f"original {c.before!r} removed by normalization")
            changed_orig.update(range(c.orig_start, c.orig_end))
            for j in range(c.norm_start, c.norm_end):
                changed_norm[j] = tip
            x0, x1 = self._col(c.orig_start), self._col(max(c.orig_end, c.orig_start + 1))
            self._hits.append(_Hit(QRect(x0, self._row_y(0), x1 - x0, 2 * ROW_H + CAPTION_H),
                                   tip))
        # Original
        y = self._row_y(0)
        for i, ch in enumerate(t.text):
            rect = QRect(self._x[i], y, self._x[i + 1] - self._x[i], ROW_H)
            if i in changed_orig:
                p.fillRect(rect.adjusted(0, 2, 0, -2), CHANGED)
            p.setPen(text_color)
            p.drawText(rect, Qt.AlignmentFlag.AlignCenter, _visible(ch))
        # Normalized: characters under their original column, side by side
        y = self._row_y(1)
        fm = QFontMetrics(self.font())
        cursor: dict[int, int] = {}
        n = len(t.text)
        for j, ch in enumerate(t.normalized):
            s = min(t.norm_starts[j], max(n - 1, 0))
            x = cursor.get(s, self._col(s) + 3)
            w = fm.horizontalAdvance(_visible(ch))
            rect = QRect(x, y, w, ROW_H)
            if j in changed_norm:
                p.fillRect(rect.adjusted(-1, 2, 1, -2), CHANGED)
                self._hits.append(_Hit(rect, changed_norm[j]))
            p.setPen(text_color)
            p.drawText(rect, Qt.AlignmentFlag.AlignCenter, _visible(ch))
            cursor[s] = x + w
        # Pre-tokens
        y = self._row_y(2)
        small = QFont(self.font())
        small.setPointSizeF(max(6.0, small.pointSizeF() * 0.8))
        for k, pre in enumerate(t.pre_tokens):
            x0, x1 = self._col(pre.orig_start), self._col(max(pre.orig_end, pre.orig_start + 1))
            rect = QRect(x0 + 1, y + 2, x1 - x0 - 2, ROW_H - 4)
            p.setPen(QColor("#5b7db1") if k % 2 == 0 else QColor("#8a5bb1"))
            p.drawRect(rect)
            p.setPen(text_color)
            shown = t.normalized[pre.start:pre.end] if pre.end > pre.start else pre.piece
            p.drawText(rect, Qt.AlignmentFlag.AlignCenter, symbol_label(shown))
            if pre.rule and pre.regex:
                p.setFont(small)
                p.setPen(pal.color(QPalette.ColorRole.PlaceholderText))
                cap = QRect(x0, y + ROW_H, max(x1 - x0, 10), CAPTION_H)
                p.drawText(cap, Qt.AlignmentFlag.AlignCenter,
                           f"#{rule_numbers(t).get(pre.rule, 0)}")
                p.setFont(self.font())
            how = "pattern alternative" if pre.regex else "cut by"
            self._hits.append(_Hit(QRect(x0, y, x1 - x0, ROW_H + CAPTION_H),
                                   f"pre-token {pre.piece!r} (normalized {pre.start}–"
                                   f"{pre.end})" + (f"\n{how}: {pre.rule}" if pre.rule
                                                    else "")))
        # Tokens
        y = self._row_y(3)
        for tok in t.encoding:
            x0, x1 = self._col(tok.start), self._col(max(tok.end, tok.start + 1))
            rect = QRect(x0 + 1, y + 2, x1 - x0 - 2, ROW_H - 4)
            p.fillRect(rect, QColor(colors[color_index(tok.id, len(colors))]))
            p.setPen(text_color)
            p.drawText(rect, Qt.AlignmentFlag.AlignCenter, self._label(tok))
            p.setFont(small)
            p.setPen(pal.color(QPalette.ColorRole.PlaceholderText))
            p.drawText(QRect(x0, y + ROW_H, x1 - x0, CAPTION_H), Qt.AlignmentFlag.AlignCenter,
                       str(tok.id))
            p.setFont(self.font())
            self._hits.append(_Hit(QRect(x0, y, x1 - x0, ROW_H + CAPTION_H),
                                   f"token {tok.piece!r} id {tok.id}, characters "
                                   f"{tok.start}–{tok.end}"))
        # Post-processor
        y = self._row_y(4)
        if t.additions:
            end_x = self._col(len(t.text)) + 6
            front = LABEL_W
            for a in t.additions:
                label = f"{a.piece} {a.id}"
                w = fm.horizontalAdvance(label) + 10
                at_start = a.index == 0
                x = front if at_start else end_x
                rect = QRect(x, y + 2, w, ROW_H - 4)
                p.fillRect(rect, QColor("#cfd8e3") if not dark else QColor("#3b4a5c"))
                p.setPen(text_color)
                p.drawText(rect, Qt.AlignmentFlag.AlignCenter, label)
                self._hits.append(_Hit(rect, f"added by the post-processor at position "
                                             f"{a.index}: {a.piece!r} id {a.id}"))
                if at_start:
                    front += w + 4
                else:
                    end_x += w + 4
        else:
            p.setPen(pal.color(QPalette.ColorRole.PlaceholderText))
            p.drawText(QRect(LABEL_W, y, 800, ROW_H), Qt.AlignmentFlag.AlignVCenter,
                       t.post_note or "nothing added")
        # Decoded: the text, losses marked red under their original span
        y = self._row_y(5)
        lost = {i: x for x in t.losses for i in range(x.orig_start, max(x.orig_end,
                                                                       x.orig_start + 1))}
        for i, ch in enumerate(t.text):
            rect = QRect(self._x[i], y, self._x[i + 1] - self._x[i], ROW_H)
            loss = lost.get(i)
            if loss is None:
                p.setPen(text_color)
                p.drawText(rect, Qt.AlignmentFlag.AlignCenter, _visible(ch))
        for x in t.losses:
            x0 = self._col(x.orig_start)
            x1 = max(self._col(x.orig_end), x0 + 8)
            rect = QRect(x0, y + 2, x1 - x0, ROW_H - 4)
            p.setPen(LOST)
            p.drawRect(rect)
            p.drawText(rect, Qt.AlignmentFlag.AlignCenter, _visible(x.decoded) if x.decoded
                       else "∅")
            self._hits.append(_Hit(rect, f"decode(encode(text)) differs: {x.original!r} → "
                                         f"{x.decoded!r}"))

    def event(self, e: QEvent) -> bool:
        if e.type() == QEvent.Type.ToolTip:
            he = e if isinstance(e, QHelpEvent) else None
            if he is not None:
                tip = self.tip_at(he.pos())
                if tip:
                    QToolTip.showText(he.globalPos(), tip, self)
                else:
                    QToolTip.hideText()
                return True
        return super().event(e)

    def tip_at(self, pos: QPoint) -> str:
        """The tooltip at ``pos`` (what changed, which rule, which token)."""
        if self._hits_dirty:  # not painted since the last trace: lay the marks out now
            image = QImage(max(1, self.width()), max(1, self.height()),
                           QImage.Format.Format_ARGB32)
            painter = QPainter(image)
            self._paint(painter)
            painter.end()
            self._hits_dirty = False
        for hit in reversed(self._hits):
            if hit.rect.contains(pos):
                return hit.tip
        return ""


class PipelineView(QWidget):
    """Title, component list and the stage rows."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.title = QLabel("Place the cursor in the text to see every stage of its line.",
                            self)
        self.title.setWordWrap(True)
        self.components = QLabel(self)
        self.components.setWordWrap(True)
        self.components.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.canvas = PipelineCanvas(self)
        self.legend = QLabel(self)
        self.legend.setWordWrap(True)
        self.legend.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout = QVBoxLayout(self)
        layout.addWidget(self.title)
        layout.addWidget(self.components)
        layout.addWidget(self.canvas)
        layout.addWidget(self.legend)
        layout.addStretch(1)

    def set_trace(self, trace: PipelineTrace, title: str) -> None:
        """Show ``trace`` under ``title``."""
        self.title.setText(title)
        self.components.setText("  →  ".join(f"<b>{c.kind}</b> {_html(c.description)}"
                                             for c in trace.components))
        self.canvas.set_trace(trace)
        numbers = rule_numbers(trace)
        self.legend.setText(
            ("<b>Pattern alternatives that cut the pre-tokens:</b> " + " &nbsp; ".join(
                f"#{n} <code>{_html(rule)}</code>" for rule, n in numbers.items()))
            if numbers else "")

    def clear(self, message: str) -> None:
        """Show ``message`` and no rows."""
        self.title.setText(message)
        self.components.setText("")
        self.legend.setText("")
        self.canvas.set_trace(None)


def _html(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
