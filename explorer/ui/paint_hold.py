"""One repaint per keystroke: the editor's paint waits for the edit's colours.

A keystroke used to repaint its line twice: Qt repaints the typed line at once (with the old
colours shifted), and again a few milliseconds later when the worker's result recolours it.
The first paint is thrown away work (a complex-script line with hex boxes costs 1-5 ms to
paint) and a flash of stale colours. :class:`PaintHold` holds the viewport's paint events
from an edit until its result is painted (:meth:`release`) or :data:`HOLD_MS` pass,
whichever comes first, then repaints the union of what was asked, once.

A held paint event is accepted without drawing: the backing store keeps showing the previous
frame for those few milliseconds, then the whole held region is painted.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QTimer, Signal
from PySide6.QtGui import QPaintEvent, QRegion
from PySide6.QtWidgets import QWidget

HOLD_MS = 20
"""Longest a keystroke's repaint waits for its colours (then the text is painted anyway)."""


class PaintHold(QObject):
    """Holds ``viewport``'s paint events between :meth:`hold` and :meth:`release`.

    Install it after any other paint filter of the viewport (Qt runs the last installed
    filter first), so a held event reaches none of them.
    """

    expired = Signal()
    """:data:`HOLD_MS` passed without :meth:`release`: emitted just before the held paint is
    let through (the window moves the edit's old colours with its text then)."""

    def __init__(self, viewport: QWidget, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._viewport = viewport
        self._region: QRegion | None = None
        """What was asked to be painted while holding (None: not holding)."""
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(HOLD_MS)
        self._timer.timeout.connect(self._expire)
        viewport.installEventFilter(self)

    def _expire(self) -> None:
        self.expired.emit()
        self.release()

    @property
    def holding(self) -> bool:
        """True between :meth:`hold` and :meth:`release`."""
        return self._region is not None

    def hold(self) -> None:
        """Hold paint events until :meth:`release` (at most :data:`HOLD_MS` from the first
        hold: typing faster than results come still repaints every ``HOLD_MS``)."""
        if self._region is None:
            self._region = QRegion()
            self._timer.start()

    def release(self) -> None:
        """Stop holding and repaint what was held, in one paint event."""
        region, self._region = self._region, None
        self._timer.stop()
        if region is not None and not region.isEmpty():
            self._viewport.update(region)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """Swallow the viewport's paint events while holding, remembering their region."""
        if (self._region is not None and event.type() == QEvent.Type.Paint
                and watched is self._viewport and isinstance(event, QPaintEvent)):
            self._region = self._region.united(event.region())
            return True
        return False
