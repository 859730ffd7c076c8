"""The cyclic GC runs on the GUI thread only (a Qt destructor on a worker deadlocked)."""

from __future__ import annotations

import gc
import threading

from explorer.ui.gui_gc import GuiThreadCollector


def test_window_turns_automatic_gc_off_and_collects_on_the_gui_thread(qtbot, window):
    assert not gc.isenabled()
    collector = _app().findChild(GuiThreadCollector)
    assert isinstance(collector, GuiThreadCollector)
    freed: list[str] = []

    class Cycle:
        def __init__(self) -> None:
            self.me = self

        def __del__(self) -> None:
            freed.append(threading.current_thread().name)

    for _ in range(gc.get_threshold()[0] + 10):
        Cycle()
    worker = threading.Thread(target=lambda: [object() for _ in range(10000)], name="worker")
    worker.start()
    worker.join()
    assert freed == []  # nothing collected on the worker, nor anywhere, automatically
    collector.check()
    assert freed and set(freed) == {threading.main_thread().name}


def _app():
    from PySide6.QtWidgets import QApplication

    return QApplication.instance()
