"""The cyclic GC runs on the GUI thread only (a Qt destructor on a worker deadlocked)."""

from __future__ import annotations

import gc
import threading

from explorer.ui.gui_gc import GuiThreadCollector


def test_window_turns_automatic_gc_off_and_collects_on_the_gui_thread(qtbot, window,
                                                                      monkeypatch):
    from explorer.ui import gui_gc

    monkeypatch.setattr(gui_gc, "_last_activity", 0.0)  # (no typing just now)
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


def test_collections_wait_while_bulk_work_holds_them_off(qtbot, window, monkeypatch):
    from explorer.engine.gc_pause import collection_held, gc_paused
    from explorer.ui import gui_gc

    collector = _app().findChild(GuiThreadCollector)
    monkeypatch.setattr(gui_gc, "_last_activity", 0.0)  # (no typing just now)
    monkeypatch.setattr(gui_gc, "MAX_HELD_S", 1e9)
    freed: list[int] = []

    with gc_paused():  # a BPE merge loop on a worker, say
        assert collection_held()
        _make_cycles(freed)
        collector.check()
        assert freed == []  # held off
        monkeypatch.setattr(gui_gc, "MAX_HELD_S", 0.0)
        collector.check()
        assert freed  # but not for longer than MAX_HELD_S
    assert not collection_held()


def test_collections_wait_for_a_pause_in_typing(qtbot, window, monkeypatch):
    from explorer.ui import gui_gc

    collector = _app().findChild(GuiThreadCollector)
    freed: list[int] = []

    collector.check()  # (start from a fresh count)
    monkeypatch.setattr(collector, "_last", __import__("time").monotonic())
    qtbot.keyClicks(window.editor, "x")  # a keystroke notes activity
    _make_cycles(freed)
    collector.check()
    assert freed == []  # typing: wait
    monkeypatch.setattr(gui_gc, "_last_activity", 0.0)  # a pause
    collector.check()
    assert freed


def _make_cycles(freed: list[int]) -> None:
    """More garbage cycles than generation 0's threshold; each appends 1 when freed."""

    class Cycle:
        def __init__(self) -> None:
            self.me = self

        def __del__(self) -> None:
            freed.append(1)

    for _ in range(gc.get_threshold()[0] + 10):
        Cycle()
