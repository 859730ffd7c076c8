"""A one-block edit repaints its block, and below it only when its height changed
(explorer.ui.edit_repaint)."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QEvent, QObject, QRect, Qt
from PySide6.QtGui import QImage, QRegion
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QPlainTextEdit

from explorer.ui.edit_repaint import EditRepaint
from explorer.ui.editor import TokenEditor

HEBREW = "כל בני האדם נולדו בני חורין ושווים בערכם ובזכויותיהם"
LATIN = "All human beings are born free and equal in dignity and rights"


class PaintRegions(QObject):
    """The region of every paint event that reaches a widget."""

    def __init__(self, widget) -> None:
        super().__init__(widget)
        self.region = QRegion()
        widget.installEventFilter(self)

    def eventFilter(self, watched, event) -> bool:
        if event.type() == QEvent.Type.Paint:
            self.region = self.region.united(event.region())
        return False


def _editor(qtbot, lines: list[str]) -> TokenEditor:
    editor = TokenEditor()
    qtbot.addWidget(editor)
    editor.resize(700, 400)
    editor.setPlainText("\n".join(lines))
    EditRepaint(editor)
    editor.show()
    qtbot.waitExposed(editor)
    qtbot.wait(30)
    return editor


def _frame(editor: QPlainTextEdit) -> QImage:
    return editor.viewport().grab().toImage()


def _changed_rows(before: QImage, after: QImage) -> list[int]:
    return [y for y in range(min(before.height(), after.height()))
            if bytes(before.constScanLine(y))[:before.bytesPerLine()]
            != bytes(after.constScanLine(y))[:after.bytesPerLine()]]


def _on_screen(editor: QPlainTextEdit) -> QImage:
    """The viewport as the window's backing store holds it (what is on screen), unlike
    ``grab()``, which renders it afresh."""
    from PySide6.QtCore import QPoint
    from PySide6.QtWidgets import QApplication

    viewport = editor.viewport()
    at = viewport.mapTo(editor.window(), QPoint(0, 0))
    shot = QApplication.primaryScreen().grabWindow(editor.window().winId(), at.x(), at.y(),
                                                    viewport.width(), viewport.height())
    return shot.toImage().convertToFormat(QImage.Format.Format_RGB32)


def _fresh(editor: QPlainTextEdit) -> QImage:
    return _frame(editor).convertToFormat(QImage.Format.Format_RGB32)


def _settles_on_fresh_paint(qtbot, editor: QPlainTextEdit) -> bool:
    """Whether the screen comes to show what a fresh paint shows once the paints already
    asked for are done (a loaded machine can leave one pending past a fixed wait; a
    repaint that was never asked for leaves the screen wrong for good)."""
    try:
        qtbot.waitUntil(lambda: _on_screen(editor) == _fresh(editor), timeout=2000)
    except qtbot.TimeoutError:
        return False
    return True


def _type_at(qtbot, editor: QPlainTextEdit, block_number: int, column: int,
             key: str | Qt.Key) -> tuple[QRegion, list[int]]:
    """Type ``key`` in block ``block_number`` at ``column``: the region repainted, and the
    viewport rows whose pixels changed (every frame rendered afresh)."""
    block = editor.document().findBlockByNumber(block_number)
    cursor = editor.textCursor()
    cursor.setPosition(block.position() + column)
    editor.setTextCursor(cursor)
    editor.setCursorWidth(0)  # (no blinking cursor in the frames)
    qtbot.wait(30)
    before = _frame(editor)
    regions = PaintRegions(editor.viewport())
    QTest.keyClick(editor, key)
    qtbot.wait(30)
    return regions.region, _changed_rows(before, _frame(editor))


def _block_top(editor: QPlainTextEdit, block_number: int) -> int:
    block = editor.document().findBlockByNumber(block_number)
    return int(editor.blockBoundingGeometry(block).translated(editor.contentOffset()).top())


@pytest.mark.parametrize("line", [1, 4])
def test_every_changed_pixel_is_shown(qtbot, line):
    editor = _editor(qtbot, [LATIN, HEBREW, LATIN, HEBREW, HEBREW, LATIN, "", LATIN])
    _region, changed = _type_at(qtbot, editor, line, 5, "a")
    assert changed, "typing changed nothing on screen"
    # every changed row was repainted, or moved with what is above it changing height
    assert _settles_on_fresh_paint(qtbot, editor)


@pytest.mark.parametrize("key", ["a", Qt.Key.Key_Backspace])
def test_a_line_whose_height_changes_moves_what_is_below_it(qtbot, key):
    """A Latin letter typed into a Hebrew line makes it as tall as the editor font's
    line (Backspace then shrinks it back): the block is repainted, the lines below it are
    moved, not painted again, and the screen shows what a fresh paint shows."""
    lines = [LATIN] * 3 + [HEBREW] * 2 + [LATIN] * 12
    editor = _editor(qtbot, lines)
    if key == Qt.Key.Key_Backspace:  # a Latin letter to delete first
        _type_at(qtbot, editor, 3, 3, "a")
    assert _settles_on_fresh_paint(qtbot, editor)
    block = editor.document().findBlockByNumber(3)
    height = block.layout().boundingRect().height()
    top = _block_top(editor, 3)
    region, _changed = _type_at(qtbot, editor, 3, 3 if key == "a" else 4, key)
    grown = editor.document().findBlockByNumber(3).layout().boundingRect().height()
    if grown == height:
        pytest.skip("the fallback font for Hebrew is as tall as the editor font here")
    assert _settles_on_fresh_paint(qtbot, editor), "the screen differs from a fresh paint"
    assert region.boundingRect().top() >= top - 1
    below = int(top + max(height, grown)) + 3
    width = editor.viewport().width()
    # the lines below were moved, not painted (a shrinking line uncovers a strip at the
    # bottom of the viewport, which is painted)
    assert not region.intersects(QRect(0, below, width, editor.viewport().height() - 40 - below))


def test_the_screen_matches_a_fresh_paint_after_typing(qtbot):
    lines = [LATIN, HEBREW, LATIN, HEBREW, HEBREW, LATIN, "", LATIN] * 3
    editor = _editor(qtbot, lines)
    for block_number, column, key in [(1, 3, "a"), (3, 0, "b"), (4, 10, Qt.Key.Key_Backspace),
                                      (1, 4, Qt.Key.Key_Backspace), (0, 5, "c"),
                                      (2, 5, Qt.Key.Key_Return), (5, 2, "d")]:
        _type_at(qtbot, editor, block_number, column, key)
        assert _settles_on_fresh_paint(qtbot, editor), (block_number, column, key)


def test_a_same_height_edit_repaints_its_block_only(qtbot):
    editor = _editor(qtbot, [LATIN] * 10)
    top = _block_top(editor, 4)
    region, _changed = _type_at(qtbot, editor, 4, 5, "a")
    bounds = region.boundingRect()
    assert bounds.top() >= top - 1
    assert bounds.bottom() <= _block_top(editor, 5) + 1


def test_new_lines_and_wrapping_still_repaint_and_resize(qtbot):
    editor = _editor(qtbot, [LATIN] * 30)
    lines = editor.document().lineCount()
    _type_at(qtbot, editor, 2, 5, Qt.Key.Key_Return)  # a new block: left to Qt
    assert editor.document().blockCount() == 31
    block = editor.document().findBlockByNumber(4)
    cursor = editor.textCursor()
    cursor.setPosition(block.position() + len(LATIN))
    editor.setTextCursor(cursor)
    editor.setCursorWidth(0)
    for _ in range(40):  # the line wraps: one more visual line
        QTest.keyClick(editor, "x")
        qtbot.wait(5)
    qtbot.wait(30)
    assert _settles_on_fresh_paint(qtbot, editor)
    assert editor.document().lineCount() > lines + 1
    assert editor.verticalScrollBar().maximum() >= editor.document().lineCount() - 30
    layout = editor.document().documentLayout()
    assert not layout.signalsBlocked()


GREEK = ("Όλοι οι άνθρωποι γεννιούνται ελεύθεροι και ίσοι στην αξιοπρέπεια και τα "
         "δικαιώματα. Είναι προικισμένοι με λογική και συνείδηση, και οφείλουν να "
         "συμπεριφέρονται μεταξύ τους με πνεύμα αδελφοσύνης. ") * 2
THAI = "ทุกคนมีสิทธิในการศึกษาการศึกษาจะต้องให้เปล่าอย่างน้อยในขั้นประถมศึกษา" * 4


@pytest.mark.parametrize("para", [GREEK, THAI], ids=["spaces", "no-spaces"])
@pytest.mark.parametrize("where", [0.02, 0.3, 0.5, 0.97])
@pytest.mark.parametrize("key", ["a", Qt.Key.Key_Backspace])
def test_a_wrapped_paragraph_shows_every_changed_pixel(qtbot, para, where, key):
    editor = _editor(qtbot, [LATIN, para, LATIN])
    block = editor.document().findBlockByNumber(1)
    assert block.layout().lineCount() >= 3
    _region, changed = _type_at(qtbot, editor, 1, int(len(para) * where), key)
    assert changed, "typing changed nothing on screen"
    assert _settles_on_fresh_paint(qtbot, editor)


def test_the_window_shows_what_a_fresh_paint_shows_after_typing(qtbot, window):
    """The whole window (token colours set after each edit, paints held for them, hex
    boxes drawn over characters without a font): after each keystroke the screen is what
    painting the editor afresh gives, lines moved by a taller line included."""
    from conftest import wait_highlighted

    devanagari = "सभी मनुष्यों को गौरव और अधिकारों के मामले में जन्मजात स्वतंत्रता प्राप्त है"
    window.restore(text="\n".join([LATIN, HEBREW, devanagari, LATIN, GREEK, HEBREW, LATIN,
                                   devanagari, LATIN] * 2))
    wait_highlighted(qtbot, window)
    editor = window.editor
    editor.setCursorWidth(0)
    for block_number, column, key in [(1, 3, "a"), (2, 5, "b"), (2, 5, Qt.Key.Key_Backspace),
                                      (4, 40, "c"), (7, 2, "d"), (1, 3, Qt.Key.Key_Backspace)]:
        block = editor.document().findBlockByNumber(block_number)
        cursor = editor.textCursor()
        cursor.setPosition(block.position() + column)
        editor.setTextCursor(cursor)
        QTest.keyClick(editor, key)
        wait_highlighted(qtbot, window)
        qtbot.wait(60)
        assert _settles_on_fresh_paint(qtbot, editor), (block_number, column, key)
