"""Characters no installed font can draw: marked as their code point, named in the status bar.

Without a font for a script (Devanagari, CJK, emoji on a minimal Linux), Qt draws every such
character as the same empty box, so the text silently looks like nothing. Here:

- :class:`GlyphCoverage` asks the character map of the editor's font, then of every
  installed font family (``QRawFont.supportsCharacter``), whether any can draw a code point
  (the same fonts Qt's fallback can pick from); answers are cached per code point;
- :class:`MissingGlyphs` paints a *hex box* (the code point's hex digits in two rows, as
  GTK/Pango do) over each such character in the editor, after the editor's own painting
  (an event filter on its viewport: the editor is not changed), and shows in the status bar
  which scripts lack a font and which Debian/Fedora packages add one (details in the label's
  tooltip).

Characters that need no glyph (controls, format characters such as ZWJ, variation selectors,
spaces and line separators) are never reported.
"""

from __future__ import annotations

import math
import unicodedata
from bisect import bisect_left
from collections.abc import Iterable, Iterator
from functools import cache

import numpy as np
from PySide6.QtCore import QEvent, QLoggingCategory, QObject, QPointF, QRect, QRectF, Qt
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontDatabase,
    QImage,
    QPainter,
    QPaintEvent,
    QPen,
    QRawFont,
    QTextBlock,
    QTextLayout,
)
from PySide6.QtWidgets import QPlainTextEdit, QSizePolicy, QStatusBar, QWidget

from explorer.engine.offsets import Utf16Map
from explorer.ui.font_packages import display_name, package_for, script_of
from explorer.ui.status import ElidedLabel

NO_GLYPH_CATEGORIES = {"Cc", "Cf", "Zs", "Zl", "Zp", "Cs"}
SMALL_TEXT = 100_000
"""Texts up to this many characters are scanned with ``set``; longer ones with numpy."""
EXAMPLES = 6
"""Example characters per script in the status label's tooltip."""
BOX_IMAGES = 4096
"""Drawn hex boxes kept (the cache starts over beyond this many)."""
LINE_BOXES = 2048
"""Visual lines whose box rectangles are kept (see ``MissingGlyphs._cached_line_boxes``)."""
LINE_IMAGES = 256
"""Visual lines whose boxes are kept drawn in one image (~60 kB each; see ``paint_boxes``)."""


FONT_PROBE_RULE = "qt.text.font.db.info=false"
"""Qt logs ``qt.text.font.db: OpenType support missing for "<family>", script N`` (at *info*
level) for every installed family it tries while looking for a font that can shape script N
(11: Devanagari) when none can. The only fix is a font for that script, which the status bar
names, so this rule hides the info messages of that one category (its warnings still show,
and ``QT_LOGGING_RULES`` in the environment still overrides it:
``QT_LOGGING_RULES=qt.text.font.db.info=true`` brings them back)."""


def quiet_font_probe_warnings() -> None:
    """Hide Qt's per-family "OpenType support missing" messages (before the QApplication)."""
    QLoggingCategory.setFilterRules(FONT_PROBE_RULE)


@cache
def needs_glyph(cp: int) -> bool:
    """False for code points that are never drawn (controls, format, spaces, selectors)."""
    if 0xFE00 <= cp <= 0xFE0F or 0xE0100 <= cp <= 0xE01EF:  # variation selectors
        return False
    return unicodedata.category(chr(cp)) not in NO_GLYPH_CATEGORIES


SCAN_CHARS = 1 << 20
"""Code points of a long text scanned at a time by :func:`distinct_non_ascii`."""


def distinct_non_ascii(text: str) -> list[int]:
    """Sorted distinct code points above U+007F in ``text``."""
    if text.isascii():
        return []
    if len(text) <= SMALL_TEXT:
        return sorted(ord(c) for c in set(text) if ord(c) > 0x7F)
    # (a slice at a time: the whole text as UTF-32 was 40 MB more at a 10 MB document's peak)
    seen = np.zeros(0x110000, bool)
    for at in range(0, len(text), SCAN_CHARS):
        part = text[at:at + SCAN_CHARS]
        if not part.isascii():
            points = np.frombuffer(part.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
            seen[points[points > 0x7F]] = True
    return np.flatnonzero(seen).tolist()


def utf16_columns(text: str) -> list[int]:
    """The UTF-16 column of each code point of ``text``, and the end column last."""
    if len(text.encode("utf-16-le")) == 2 * len(text):  # no astral characters
        return list(range(len(text) + 1))
    cols = [0]
    for ch in text:
        cols.append(cols[-1] + (2 if ord(ch) > 0xFFFF else 1))
    return cols


Box = tuple[float, float, float, float, int]
"""A hex box's ``(x, y, width, height, code point)`` (plain numbers: a ``QRectF`` per box
cost two Qt objects on a line of hundreds)."""


def line_boxes(layout: QTextLayout, text: str, k: int, missing: set[int],
               u16: Utf16Map | None = None) -> list[Box]:
    """The boxes (relative to the line's top left) and code points of the characters of
    visual line ``k`` of ``layout`` (the block's text is ``text``; ``u16`` its
    :class:`~explorer.engine.offsets.Utf16Map`, made when not given) that are in ``missing``.

    Only clusters holding such a character are measured: the cluster around it is found
    with Qt's cursor positions (``previousCursorPosition``/``nextCursorPosition``), and its
    width shared equally by its code points that need a glyph. Only the line's own
    characters are read (a cluster never spans two visual lines): a 9 MB one-line document
    made a list of every code point and column of the block for each shown line, ~0.4 s a
    line at every repaint."""
    line = layout.lineAt(k)
    u16 = u16 if u16 is not None else Utf16Map(text)
    first, stop = line.textStart(), line.textStart() + line.textLength()
    lo = u16.to_codepoint(first)
    hi = min(len(text), u16.to_codepoint(stop) + 1)
    part = text[lo:hi]
    if part.isascii() or missing.isdisjoint(map(ord, part)):
        return []
    base = u16.to_utf16(lo)
    cols = [base + c for c in utf16_columns(part)]
    points = list(map(ord, part))
    out: list[Box] = []
    add = out.append
    height = line.height()
    i = bisect_left(cols, first)
    n = len(points)
    end, x2 = -1, 0.0  # the cluster before (a run of boxes reuses its end)
    while i < n and cols[i] < stop:
        if points[i] not in missing:
            i += 1
            continue
        if cols[i] == end:  # the cluster starts where the one before ended
            start, x1 = end, x2
        else:
            start = max(layout.previousCursorPosition(cols[i] + 1), base)
            x1 = line.cursorToX(start)[0]
        end = max(layout.nextCursorPosition(start), start + 1)
        x2 = line.cursorToX(end)[0]
        a = bisect_left(cols, start)
        j = bisect_left(cols, end, a)
        if j == a + 1:  # one code point (it is missing, so it needs a glyph)
            add((min(x1, x2), 0.0, abs(x2 - x1), height, points[a]))
            i = max(j, i + 1)
            continue
        cluster = [cp for cp in points[a:j] if needs_glyph(cp)]
        step = (x2 - x1) / len(cluster)  # negative in right-to-left text
        for m, cp in enumerate(cluster):
            if cp in missing:
                left, right = x1 + m * step, x1 + (m + 1) * step
                add((min(left, right), 0.0, abs(right - left), height, cp))
        i = max(j, i + 1)
    return out


def first_line_below(layout: QTextLayout, y: float) -> int:
    """The first visual line of ``layout`` whose bottom is below ``y`` (layout
    coordinates; ``lineCount()`` when none is): found by halving, as a block of a one-line
    document has tens of thousands of visual lines."""
    lo, hi = 0, layout.lineCount()
    while lo < hi:
        mid = (lo + hi) // 2
        line = layout.lineAt(mid)
        if line.y() + line.height() <= y:
            lo = mid + 1
        else:
            hi = mid
    return lo


class GlyphCoverage:
    """Whether some installed font has a glyph for a code point (cached)."""

    def __init__(self, font: QFont) -> None:
        self._primary = QRawFont.fromFont(font)
        self._fonts: list[QRawFont] | None = None
        self._known: dict[int, bool] = {}

    def _fallbacks(self) -> list[QRawFont]:
        if self._fonts is None:
            fonts = []
            for family in QFontDatabase.families():
                raw = QRawFont.fromFont(QFont(family))
                if raw.isValid():
                    fonts.append(raw)
            self._fonts = fonts
        return self._fonts

    def drawable(self, cp: int) -> bool:
        """True when a font can draw ``cp`` (or ``cp`` needs no glyph)."""
        known = self._known.get(cp)
        if known is None:
            known = (not needs_glyph(cp) or self._primary.supportsCharacter(cp)
                     or any(f.supportsCharacter(cp) for f in self._fallbacks()))
            self._known[cp] = known
        return known

    def missing(self, text: str) -> list[int]:
        """Code points of ``text`` that no installed font can draw."""
        return [cp for cp in distinct_non_ascii(text) if not self.drawable(cp)]


def scripts_without_font(missing: Iterable[int]) -> dict[str, list[int]]:
    """``{script: code points}`` for the missing code points (script ``""``: unknown)."""
    out: dict[str, list[int]] = {}
    for cp in missing:
        out.setdefault(script_of(chr(cp)), []).append(cp)
    return out


def status_text(by_script: dict[str, list[int]]) -> tuple[str, str]:
    """``(label, tooltip)`` for the status bar; empty when every character has a font."""
    if not by_script:
        return "", ""
    names = [display_name(s) if s else "other characters" for s in by_script]
    debian: list[str] = []
    fedora: list[str] = []
    rows = []
    for script, cps in by_script.items():
        pkg = package_for(script)
        if pkg is not None:
            debian += [pkg.debian] if pkg.debian not in debian else []
            fedora += [pkg.fedora] if pkg.fedora not in fedora else []
        examples = ", ".join(f"U+{cp:04X}" for cp in cps[:EXAMPLES])
        more = f" and {len(cps) - EXAMPLES} more" if len(cps) > EXAMPLES else ""
        where = (f"Debian/Ubuntu: {pkg.debian}; Fedora: {pkg.fedora}" if pkg
                 else "no font package known")
        rows.append(f"<li><b>{display_name(script) or 'Other'}</b>: {examples}{more} "
                    f"({where})</li>")
    label = f"⚠ No font for {', '.join(names)}"
    if debian:
        label += f" · Debian: {' '.join(debian)} · Fedora: {' '.join(fedora)}"
    tooltip = ("<p>No installed font can draw these characters; they are shown as their "
               "code point in a box.</p><ul>" + "".join(rows) + "</ul>"
               + (f"<p>Debian/Ubuntu: <code>sudo apt-get install {' '.join(debian)}</code><br>"
                  f"Fedora: <code>sudo dnf install {' '.join(fedora)}</code></p>"
                  if debian else ""))
    return label, tooltip


def hex_rows(cp: int) -> tuple[str, str]:
    """The two rows of a hex box: ``0928`` -> ``09``/``28``, ``1F600`` -> ``01F``/``600``."""
    digits = f"{cp:04X}" if cp <= 0xFFFF else f"{cp:06X}"
    half = len(digits) // 2
    return digits[:half], digits[half:]


class MissingGlyphs(QObject):
    """Hex boxes over undrawable characters in ``editor`` and a note in ``bar``."""

    def __init__(self, editor: QPlainTextEdit, bar: QStatusBar, parent: QWidget) -> None:
        super().__init__(parent)
        self.editor = editor
        self.coverage = GlyphCoverage(editor.font())
        self.missing: set[int] = set()
        self._images: dict[tuple, QImage] = {}
        """Drawn hex boxes (see :meth:`paint_boxes`)."""
        self._line_images: dict[tuple, tuple[int, int, QImage] | None] = {}
        """The boxes of a visual line in one image (see :meth:`paint_boxes`)."""
        self._line_boxes: dict[tuple, list[Box]] = {}
        """Boxes of a visual line, relative to its top left (see :meth:`_cached_line_boxes`)."""
        self.by_script: dict[str, list[int]] = {}
        self._block_texts: dict[int, tuple[str, Utf16Map]] = {}
        """Shown blocks' texts and their UTF-16 maps by block number, until the text changes
        (see :meth:`_block_text`)."""
        editor.document().contentsChange.connect(lambda *_: self._block_texts.clear())
        self.label = ElidedLabel("", parent, min_chars=24)
        self.label.setObjectName("missing-fonts")
        self.label.hide()
        # Left, after the message, most of the room the counts leave (elided; full tooltip).
        self.label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        bar.addWidget(self.label, 3)
        editor.viewport().installEventFilter(self)

    def update_text(self, text: str) -> None:
        """Recompute what is missing in ``text`` (connect to the window's ``text_changed``)."""
        missing = self.coverage.missing(text)
        if set(missing) == self.missing:
            return
        self.missing = set(missing)
        self._line_boxes.clear()
        self._line_images.clear()
        self.by_script = scripts_without_font(missing)
        label, tooltip = status_text(self.by_script)
        self.label.setText(label)
        self.label.setToolTip(tooltip)
        self.label.setVisible(bool(label))
        self.editor.viewport().update()

    # ----- painting ------------------------------------------------------------------------
    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """After the editor paints its viewport, draw the hex boxes on top."""
        if (event.type() == QEvent.Type.Paint and self.missing
                and watched is self.editor.viewport()):
            self.editor.paintEvent(event)  # the editor's own painting first
            self.paint_boxes(event.rect() if isinstance(event, QPaintEvent) else None)
            return True
        return False

    def boxes(self, area: QRect | None = None) -> list[tuple[QRectF, int]]:
        """Viewport rectangles of the visible undrawable characters, with their code points
        (only in the visual lines that reach into viewport rectangle ``area``, when given: a
        keystroke repaints one line, not the whole viewport nor its whole paragraph).

        Qt places the cursor only between clusters (a Devanagari syllable is one), so each
        cluster's width is shared equally by its code points that need a glyph: without a
        font each of them is drawn as one same-width empty box.
        """
        return [(QRectF(at.x() + x, at.y() + y, w, h), cp)
                for at, _key, boxes in self._shown_lines(area) for x, y, w, h, cp in boxes]

    def _shown_lines(self, area: QRect | None
                     ) -> Iterator[tuple[QPointF, tuple, list[Box]]]:
        """Each shown visual line with boxes (reaching into ``area``, when given): its top
        left in the viewport, its key in the line cache, its boxes relative to that point."""
        ed = self.editor
        block = ed.firstVisibleBlock()
        top, bottom = 0, ed.viewport().height()
        if area is not None:
            top, bottom = area.top(), min(bottom, area.bottom() + 1)
        while block.isValid():
            geometry = ed.blockBoundingGeometry(block).translated(ed.contentOffset())
            if geometry.top() > bottom:
                break
            if geometry.bottom() < top:
                block = block.next()
                continue
            layout = block.layout()
            if block.isVisible() and layout is not None:
                yield from self._block_lines(block, layout, geometry, top, bottom)
            block = block.next()

    def _block_lines(self, block: QTextBlock, layout: QTextLayout, geometry: QRectF,
                     top: float, bottom: float,
                     ) -> Iterator[tuple[QPointF, tuple, list[Box]]]:
        """:meth:`_shown_lines` of one block (``geometry``: its rectangle in the viewport):
        only its visual lines between ``top`` and ``bottom`` are looked at."""
        origin = geometry.topLeft()
        text: str | None = None
        u16: Utf16Map | None = None
        for k in range(first_line_below(layout, top - origin.y()), layout.lineCount()):
            line = layout.lineAt(k)
            y = origin.y() + line.y()
            if y > bottom:
                break
            if text is None:
                text, u16 = self._block_text(block)
                if u16 is None:
                    return
            key, boxes = self._cached_line_boxes(layout, text, u16, k, geometry.width(),
                                                 block.textDirection())
            if boxes:
                yield origin + QPointF(0.0, line.y()), key, boxes

    def _block_text(self, block: QTextBlock) -> tuple[str, Utf16Map | None]:
        """The block's text and its :class:`~explorer.engine.offsets.Utf16Map` (None for
        ASCII text: nothing there is missing), kept until the document changes: the cursor's
        blink repaints its line, and a 9 MB line's text and map took 0.19 s to make again."""
        number = block.blockNumber()
        found = self._block_texts.get(number)
        if found is None:
            text = block.text()
            if text.isascii():
                return text, None
            if len(self._block_texts) > LINE_BOXES:
                self._block_texts.clear()
            found = self._block_texts[number] = (text, Utf16Map(text))
        return found

    def _cached_line_boxes(self, layout: QTextLayout, text: str, u16: Utf16Map, k: int,
                           width: float, direction: Qt.LayoutDirection
                           ) -> tuple[tuple, list[Box]]:
        """:func:`line_boxes` of visual line ``k``, relative to the line's top, kept per
        line text (and the character each side, which shaping may join), where the line
        starts, the width and direction, and the font. A keystroke repaints its block, but
        lays out again only the visual line it is in: the other lines of a long paragraph
        keep their text and their boxes (a box costs four Qt calls, ~12 µs: a Thai
        paragraph of 500 characters took 7 ms). Returns the key and the boxes."""
        line = layout.lineAt(k)
        start = u16.to_codepoint(line.textStart())
        end = u16.to_codepoint(line.textStart() + line.textLength())
        key = (text[max(0, start - 1) : end + 1], start == 0, end == len(text), line.x(),
               width, direction, self.editor.font().key())
        found = self._line_boxes.get(key)
        if found is None:
            if len(self._line_boxes) > LINE_BOXES:
                self._line_boxes.clear()
            found = self._line_boxes[key] = line_boxes(layout, text, k, self.missing, u16)
        return key, found

    def paint_boxes(self, area: QRect | None = None) -> None:
        """Draw a hex box over each visible undrawable character (in ``area``, if given).

        Each box is drawn once into a small image, kept per code point, size, sub-pixel
        offset and colours; a visual line's boxes are copied into one image of the line,
        kept per line (see :meth:`_cached_line_boxes`), its sub-pixel offset and colours, and
        that is drawn: a keystroke repaints a paragraph of a script without a font, hundreds
        of boxes, and drawing each box cost ~20 µs of Python a repaint."""
        lines = list(self._shown_lines(area))
        if not lines:
            return
        palette = self.editor.palette()
        colors = (palette.text().color().rgba(), palette.base().color().rgba())
        ratio = self.editor.viewport().devicePixelRatioF()
        painter = QPainter(self.editor.viewport())
        for at, key, boxes in lines:
            x, y = math.floor(at.x()), math.floor(at.y())
            frac = QPointF(at.x() - x, at.y() - y)
            image_key = (key, round(frac.x(), 2), round(frac.y(), 2), colors, ratio)
            found = self._line_images.get(image_key)
            if found is None:
                if len(self._line_images) > LINE_IMAGES:
                    self._line_images.clear()
                dx, dy = frac.x(), frac.y()
                found = self._line_images[image_key] = self._line_image(
                    [(x + dx, y + dy, w, h, cp) for x, y, w, h, cp in boxes], colors, ratio)
            if found is not None:
                painter.drawImage(QPointF(x + found[0], y + found[1]), found[2])
        painter.end()

    def _line_image(self, boxes: list[Box], colors: tuple[int, int],
                    ratio: float) -> tuple[int, int, QImage] | None:
        """The hex boxes of one visual line (``boxes`` relative to a whole-pixel point) in
        one transparent image, with its offset from that point; None when none is drawn."""
        placed: list[tuple[int, int, QImage]] = []
        images = self._images
        get = images.get
        floor = math.floor
        for bx, by, bw, bh, cp in boxes:
            left, top, width, height = bx + 0.5, by + 1.5, bw - 1.0, bh - 3.0
            if width < 3 or height < 6:
                continue
            x, y = floor(left), floor(top)
            key = (cp, left - x, top - y, width, height, colors, ratio)
            image = get(key)
            if image is None:
                if len(images) > BOX_IMAGES:
                    images.clear()
                image = images[key] = self._box_image(key, self.editor.font())
            placed.append((x, y, image))
        if not placed:
            return None
        left = min(x for x, _, _ in placed)
        top = min(y for _, y, _ in placed)
        right = max(x + math.ceil(im.width() / ratio) for x, _, im in placed)
        bottom = max(y + math.ceil(im.height() / ratio) for _, y, im in placed)
        line = QImage(math.ceil((right - left) * ratio), math.ceil((bottom - top) * ratio),
                      QImage.Format.Format_ARGB32_Premultiplied)
        line.setDevicePixelRatio(ratio)
        line.fill(Qt.GlobalColor.transparent)
        painter = QPainter(line)
        for x, y, image in placed:
            painter.drawImage(x - left, y - top, image)
        painter.end()
        return left, top, line

    @staticmethod
    def _box_image(key: tuple, font: QFont) -> QImage:
        """The hex box of ``key = (cp, dx, dy, width, height, (fg, bg), ratio)``, drawn at
        ``(dx, dy)`` in a transparent image."""
        cp, dx, dy, width, height, (fg, bg), ratio = key
        image = QImage(math.ceil((dx + width + 1.5) * ratio),
                       math.ceil((dy + height + 1.5) * ratio),
                       QImage.Format.Format_ARGB32_Premultiplied)
        image.setDevicePixelRatio(ratio)
        image.fill(Qt.GlobalColor.transparent)
        painter = QPainter(image)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        box = QRectF(dx, dy, width, height)
        painter.setPen(QPen(QColor.fromRgba(fg), 1))
        painter.setBrush(QColor.fromRgba(bg))
        painter.drawRect(box)
        rows = hex_rows(cp)
        font = QFont(font)
        font.setPixelSize(max(4, int(box.height() / 2 - 1)))
        painter.setFont(font)
        metrics = painter.fontMetrics()
        widest = max(metrics.horizontalAdvance(r) for r in rows)
        scale = min(1.0, (box.width() - 2) / widest) if widest else 1.0
        half = box.height() / 2
        for i, row in enumerate(rows):
            painter.save()
            painter.translate(box.left() + 1, box.top() + i * half)
            painter.scale(scale, 1.0)
            painter.drawText(QRectF(0, 0, (box.width() - 2) / scale, half),
                             Qt.AlignmentFlag.AlignCenter, row)
            painter.restore()
        painter.end()
        return image
