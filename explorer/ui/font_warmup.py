"""Resolve font fallbacks for common scripts before the user types them.

The first time a script appears (Devanagari, Thai, CJK, emoji...), Qt looks up a fallback font
for it and shapes it: 5-20 ms per font on these machines, paid by the GUI thread at the
keystroke that brings the script in, once for the editor's font, once for its bold variant
(special tokens), once for the table's and the inspector's. All of it together costs ~0.6 s, too
much for start-up, and it cannot be done on another thread (Qt's font caches are per
thread). So :class:`FontWarmer` pays it in idle time after start-up, one script and font per
timer tick (a few ms each), never while the user types, so the first Hindi or Thai character
typed usually lands within a frame.

Nor while the document is being encoded: a layout holds the GIL, and the encode worker waited
for the warm-up's 140 layouts (~1.2 s of a 10 MB document's first encode in the window). Nor
while a vocabulary loads: a 32k SentencePiece model took 2.1 s to load instead of 0.6 s when
the window opened on a 10 MB text, ~1 s of it waiting for layouts.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from PySide6.QtCore import QElapsedTimer, QObject, QTimer
from PySide6.QtGui import QFont, QTextLayout

SAMPLES = ("Aa", "Ωω", "Жж", "Աա", "אב", "عر", "ހ", "ߊ", "अआ", "নব", "ਪੰ", "ગુ", "ଓ", "தமி",
           "తె", "ಕನ", "മല", "සි", "ไทย", "ລາວ", "ཀ", "မြ", "ქა", "ሀ", "ᏣᎳ", "ᓀ", "ខ្មែ", "한국",
           "日本語中文", "かなカナ", "ㄅꀀ", "𠀋", "😀👍🏽🇫🇷", "∑√♥ⓐ", "é̈́")
"""A few letters of each common script (and emoji, symbols, an astral CJK character): one
script per step, so no step costs more than a few ms."""
TICK_MS = 10
IDLE_MS = 400
"""No step runs until the user has left the keyboard alone this long."""


def lay_out(text: str, font: QFont) -> None:
    """Shape ``text`` in ``font`` once (Qt caches the fallback fonts it resolves)."""
    layout = QTextLayout(text, font)
    layout.beginLayout()
    layout.createLine()
    layout.endLayout()


class FontWarmer(QObject):
    """Lays out :data:`SAMPLES` in each font (and its bold variant), one per tick."""

    def __init__(self, fonts: Iterable[QFont], parent: QObject | None = None,
                 wait_while: Callable[[], bool] = lambda: False) -> None:
        """``wait_while``: no step runs while it returns True (the encoder is busy)."""
        super().__init__(parent)
        self._wait_while = wait_while
        unique: dict[str, QFont] = {}
        for font in fonts:
            for bold in (False, True):
                f = QFont(font)
                f.setBold(bold)
                unique.setdefault(f.key(), f)
        self._todo = [(s, f) for s in reversed(SAMPLES) for f in unique.values()]
        self._since_input = QElapsedTimer()
        self._since_input.start()
        self._timer = QTimer(self)
        self._timer.setInterval(TICK_MS)
        self._timer.timeout.connect(self._step)

    @property
    def done(self) -> bool:
        """True when every font has seen every sample."""
        return not self._todo

    @property
    def remaining(self) -> int:
        """Layouts still to do (one per step)."""
        return len(self._todo)

    def start(self) -> None:
        """Begin warming in idle time."""
        self._timer.start()

    def note_input(self, *_args: object) -> None:
        """The user typed or moved the caret: wait for a pause before the next step."""
        self._since_input.restart()

    def _step(self) -> None:
        if not self._todo:
            self._timer.stop()
            return
        if self._since_input.elapsed() < IDLE_MS or self._wait_while():
            return
        lay_out(*self._todo.pop())
