"""A keystroke's line is painted once, with its new colours (explorer.ui.paint_hold)."""

from __future__ import annotations

from conftest import wait_highlighted
from painting_oracle import expected_ranges, painted_ranges
from PySide6.QtCore import QEvent, QObject, QRect, Qt
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import QWidget

from explorer.ui.paint_hold import HOLD_MS, PaintHold


class PaintCounter(QObject):
    """Counts the paint events that reach a widget (installed before the hold: runs after)."""

    def __init__(self, widget: QWidget) -> None:
        super().__init__(widget)
        self.regions = []
        widget.installEventFilter(self)

    def eventFilter(self, watched, event) -> bool:
        if event.type() == QEvent.Type.Paint:
            self.regions.append(event.region().boundingRect())
        return False


def _widget(qtbot) -> QWidget:
    w = QWidget()
    qtbot.addWidget(w)
    w.resize(300, 200)
    w.show()
    qtbot.waitExposed(w)
    qtbot.wait(20)
    return w


def test_held_paints_become_one_paint_of_their_union(qtbot):
    w = _widget(qtbot)
    counter = PaintCounter(w)
    hold = PaintHold(w)
    hold.hold()
    w.update(QRect(0, 0, 10, 10))
    qtbot.wait(5)
    w.update(QRect(100, 50, 10, 10))
    qtbot.wait(5)
    assert counter.regions == []  # held: nothing painted
    hold.release()
    qtbot.waitUntil(lambda: len(counter.regions) == 1, timeout=1000)
    qtbot.wait(20)
    assert counter.regions == [QRect(0, 0, 110, 60)]
    assert not hold.holding


def test_a_hold_ends_by_itself(qtbot):
    """No result comes (a failed encode, no tokenizer): the text is painted anyway."""
    w = _widget(qtbot)
    counter = PaintCounter(w)
    hold = PaintHold(w)
    hold.hold()
    w.update()
    qtbot.waitUntil(lambda: len(counter.regions) == 1, timeout=HOLD_MS * 20)
    assert not hold.holding


def test_a_keystroke_paints_the_editor_once_with_its_colours(qtbot, window):
    """Qt repainted the typed line at once with the old colours shifted, then again with the
    result's: now the one paint comes after the result is applied."""
    window.editor.setPlainText("".join(f"line {i} of some text\n" for i in range(30)))
    wait_highlighted(qtbot, window)
    qtbot.wait(50)
    viewport = window.editor.viewport()
    # counted where the editor paints: the hold's filter (installed last) runs first
    viewport.removeEventFilter(window.paint_hold)
    counter = PaintCounter(viewport)
    viewport.installEventFilter(window.paint_hold)
    applied = []
    window.controller.encoding_ready.connect(lambda *_: applied.append(len(counter.regions)))
    window.editor.setFocus()
    cur = window.editor.textCursor()
    cur.setPosition(12)
    window.editor.setTextCursor(cur)
    qtbot.wait(50)
    before = len(counter.regions)
    qtbot.keyClick(window.editor, Qt.Key.Key_X)
    wait_highlighted(qtbot, window)
    qtbot.wait(50)
    assert window.text().startswith("line 0 of soxme")
    assert applied and applied[0] == before  # nothing painted before the result came
    assert len(counter.regions) >= before + 1


def test_a_held_keystroke_shifts_its_colours_only_if_the_hold_expires(qtbot, window,
                                                                     worker_results):
    """While the paint waits for the result, the edit's old colours are not moved (the result
    repaints the line: one layout of it instead of two); if the hold expires first, the
    waiting edits are replayed in order, so the colours stay on their characters."""
    window.set_text("hello world\n")
    wait_highlighted(qtbot, window)
    block = window.editor.document().begin()
    before = [(r.start, r.length) for r in block.layout().formats()]
    assert before == [(0, 5), (5, 6)]
    cur = QTextCursor(window.editor.document())
    cur.setPosition(3)
    cur.insertText("X")  # synchronous: no result yet, the window holds its paint
    cur.insertText("Y")
    assert window.paint_hold.holding
    assert [(r.start, r.length) for r in block.layout().formats()] == before
    window.paint_hold.expired.emit()
    assert [(r.start, r.length) for r in block.layout().formats()] == [(0, 7), (7, 6)]
    wait_highlighted(qtbot, window)
    assert window.text() == "helXYlo world\n"
    assert painted_ranges(window) == expected_ranges(window)


def test_colours_of_a_very_long_line_wait_for_the_result(qtbot, window, worker_results,
                                                        monkeypatch):
    """In a line longer than SHIFT_MAX_LINE the expired hold shifts nothing (a shift lays the
    whole line out, and the result lays it out again a few ms later: ~78 ms of each
    keystroke in lines of 47k characters); the result then colours it right."""
    from explorer.ui import token_painter

    monkeypatch.setattr(token_painter, "SHIFT_MAX_LINE", 20)
    window.set_text("hello world and more words here\nhello world\n")
    wait_highlighted(qtbot, window)
    doc = window.editor.document()
    block = doc.begin()
    before = [(r.start, r.length) for r in block.layout().formats()]
    assert block.length() > 20 and len(before) > 2
    cur = QTextCursor(doc)
    cur.setPosition(3)
    cur.insertText("X")  # the hold waits for the result...
    window.paint_hold.expired.emit()  # ...and expires first: the long line is not shifted
    assert [(r.start, r.length) for r in block.layout().formats()] == before
    wait_highlighted(qtbot, window)
    assert window.text() == "helXlo world and more words here\nhello world\n"
    assert painted_ranges(window) == expected_ranges(window)
