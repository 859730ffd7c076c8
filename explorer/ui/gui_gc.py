"""The cyclic garbage collector runs on the GUI thread only.

Python runs a collection in whichever thread happens to allocate when a generation's
threshold is crossed, often an encode worker. If that collection frees a Qt object (a
window, menu or action left in a reference cycle), its C++ destructor runs on the worker
while the GUI thread may be deleting a related object: each waits for the other (Qt's mutex
against Python's GIL) and the app freezes. This was seen as a hang of the test suite: the
worker in ``gc_collect_main`` -> ``QObject::~QObject`` waiting for the GIL, the GUI thread in
``~QMenu`` waiting for the mutex.

:func:`collect_on_gui_thread` turns automatic collection off and runs the same generational
collections from a timer on the GUI thread instead (the recipe pyqtgraph's
``GarbageCollector`` uses). Reference counting, which frees almost everything, is untouched.
While a worker's bulk work pauses the GC (:mod:`explorer.engine.gc_pause`: a BPE training's
merge loop) the timer waits too: with automatic collection off, generation 0 would hold all
the containers that work made, and one ``collect(0)`` walked them for ~60 ms of the GUI thread
in the middle of a 16k BPE training.
"""

from __future__ import annotations

import gc
import time

from PySide6.QtCore import QCoreApplication, QObject, QTimer

from explorer.engine.gc_pause import collection_held

INTERVAL_MS = 500
"""How often the generation counts are checked (a collection runs only past a threshold)."""
TYPING_QUIET_S = 0.4
"""No collection while the user typed within this long (:func:`note_activity`): a full
collection takes ~20 ms of the GUI thread on a 1 MB document, more than a keystroke's frame."""
MAX_TYPING_DEFER_S = 5.0
"""Continuous typing defers collections at most this long."""
_last_activity = 0.0
MAX_HELD_S = 10.0
"""While bulk work holds collections off (:func:`~explorer.engine.gc_pause.collection_held`:
a BPE merge loop, a big encode), a collection still runs at least this often."""


class GuiThreadCollector(QObject):
    """Collects like Python would (same thresholds), from a GUI-thread timer."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.threshold = gc.get_threshold()
        self._last = time.monotonic()
        gc.disable()
        self._timer = QTimer(self)
        self._timer.setInterval(INTERVAL_MS)
        self._timer.timeout.connect(self.check)
        self._timer.start()

    def check(self) -> None:
        """Collect the generations whose counts passed their thresholds (held off while
        bulk work that makes no cycles runs, at most :data:`MAX_HELD_S`)."""
        now = time.monotonic()
        if collection_held() and now - self._last < MAX_HELD_S:
            return
        if now - _last_activity < TYPING_QUIET_S and now - self._last < MAX_TYPING_DEFER_S:
            return  # typing: collect in the next pause
        t0, t1, t2 = self.threshold
        c0, c1, c2 = gc.get_count()
        if c0 > t0:
            self._last = now
            gc.collect(0)
            if c1 > t1:
                gc.collect(1)
                if c2 > t2:
                    gc.collect(2)


def note_activity() -> None:
    """The user is typing: hold collections until a pause (see :data:`TYPING_QUIET_S`)."""
    global _last_activity
    _last_activity = time.monotonic()


def collect_on_gui_thread(app: QCoreApplication) -> GuiThreadCollector:
    """Install the collector once per application (call on the GUI thread)."""
    found = app.findChild(GuiThreadCollector)
    if isinstance(found, GuiThreadCollector):
        if gc.isenabled():  # someone turned it back on (a finished big encode): off again
            gc.disable()
        return found
    collector = GuiThreadCollector(app)
    collector.setObjectName("gui-thread-gc")
    return collector
