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
def test_every_changed_pixel_is_repainted(qtbot, line):
    editor = _editor(qtbot, [LATIN, HEBREW, LATIN, HEBREW, HEBREW, LATIN, "", LATIN])
    region, changed = _type_at(qtbot, editor, line, 5, "a")
    assert changed, "typing changed nothing on screen"
    width = editor.viewport().width()
    for y in changed:
        assert region.contains(QRect(0, y, width, 1)), f"row {y} changed but was not repainted"


def test_a_taller_line_repaints_from_its_top_down_only(qtbot):
    lines = [LATIN] * 6 + [HEBREW] + [LATIN] * 3
    editor = _editor(qtbot, lines)
    height = editor.document().findBlockByNumber(6).layout().boundingRect().height()
    top = _block_top(editor, 6)
    region, _changed = _type_at(qtbot, editor, 6, 3, "a")
    grown = editor.document().findBlockByNumber(6).layout().boundingRect().height()
    if grown == height:
        pytest.skip("the fallback font for Hebrew is as tall as the editor font here")
    bounds = region.boundingRect()
    assert bounds.top() >= top - 1  # Qt alone repaints the whole viewport
    assert bounds.bottom() >= editor.viewport().height() - 1


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
    for _ in range(40):  # the line wraps: one more visual line
        QTest.keyClick(editor, "x")
    qtbot.wait(30)
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
def test_a_wrapped_paragraph_repaints_every_changed_pixel(qtbot, para, where, key):
    editor = _editor(qtbot, [LATIN, para, LATIN])
    block = editor.document().findBlockByNumber(1)
    assert block.layout().lineCount() >= 3
    region, changed = _type_at(qtbot, editor, 1, int(len(para) * where), key)
    assert changed, "typing changed nothing on screen"
    width = editor.viewport().width()
    for y in changed:
        assert region.contains(QRect(0, y, width, 1)), f"row {y} changed but was not repainted"
