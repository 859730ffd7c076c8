"""Hover and click linking between editor, token table and inspector; the ids view."""

from __future__ import annotations

import pytest
from conftest import wait_highlighted
from PySide6.QtCore import Qt
from PySide6.QtGui import QTextCursor

from explorer.ui.token_table import COL_ID, TokenTableModel

pytestmark = pytest.mark.usefixtures("no_qt_warnings")
TEXT = "The café 😀 serves 𠀋 tea.\nSecond line here.\n"


def u16(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


@pytest.fixture
def linked(qtbot, window):
    window.set_text(TEXT)
    wait_highlighted(qtbot, window)
    return window


def test_click_selects_token_in_table_and_inspector(qtbot, linked):
    w = linked
    enc = w.tokenizer.encode(TEXT)
    target = next(i for i, t in enumerate(enc.tokens) if t.token_bytes == b" serves")
    tok = enc.tokens[target]
    with qtbot.waitSignal(w.cursor_token_changed, timeout=2000) as sig:
        # a real mouse click inside the token
        cur = QTextCursor(w.editor.document())
        cur.setPosition(u16(TEXT[:tok.start + 2]))
        rect = w.editor.cursorRect(cur)
        qtbot.mouseClick(w.editor.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert sig.args[0] == target
    assert w.table.currentIndex().row() == target
    assert str(tok.id) in w.inspector.text and "serves" in w.inspector.text
    assert w.table_model.index(target, COL_ID).data() == str(tok.id)


def test_table_row_moves_cursor_to_token(qtbot, linked):
    w = linked
    enc = w.tokenizer.encode(TEXT)
    target = next(i for i, t in enumerate(enc.tokens) if t.token_bytes == b" tea")
    w.table.show()
    w.table.scrollTo(w.table_model.index(target, 0))
    rect = w.table.visualRect(w.table_model.index(target, COL_ID))
    qtbot.mouseClick(w.table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert w.linker.current == target
    assert w.editor.textCursor().position() == u16(TEXT[:enc.tokens[target].start])
    sel = w.editor.extraSelections()
    assert len(sel) == 1
    a, b = sel[0].cursor.selectionStart(), sel[0].cursor.selectionEnd()
    assert (a, b) == (u16(TEXT[:enc.tokens[target].start]), u16(TEXT[:enc.tokens[target].end]))


def test_hover_tooltip_shows_id_piece_bytes_span_rank(linked):
    w = linked
    enc = w.tokenizer.encode(TEXT)
    i = next(i for i, t in enumerate(enc.tokens) if t.token_bytes == b" serves")
    tok = enc.tokens[i]
    col = u16(TEXT[:tok.start + 1])
    tip = w.linker.tooltip_at(0, TEXT.split("\n")[0], col)
    for part in (str(tok.id), "Ġserves", "20 73 65 72 76 65 73", f"{tok.start}–{tok.end}",
                 str(tok.rank)):
        assert part in tip, part


def test_emoji_token_after_astral_char_maps_back(linked):
    w = linked
    enc = w.tokenizer.encode(TEXT)
    i = next(i for i, t in enumerate(enc.tokens) if t.token_bytes == b" tea")
    col = u16(TEXT[:enc.tokens[i].start]) + 1
    assert w.linker.token_index_at(0, TEXT.split("\n")[0], col) == i


def test_ids_view_is_copyable(qtbot, linked):
    w = linked
    ids = w.tokenizer.encode(TEXT).ids
    w.show_view("ids")
    assert w.ids_view.ids_text() == " ".join(map(str, ids))
    w.ids_view.separator.setCurrentText("commas")
    assert w.ids_view.text_view.toPlainText() == ", ".join(map(str, ids))
    w.ids_view.copy()
    from PySide6.QtGui import QGuiApplication

    assert QGuiApplication.clipboard().text() == ", ".join(map(str, ids))


def test_status_counts(linked):
    text = linked.statusBar().findChildren(type(linked.status.stats))
    stats = linked.status.stats.text()
    n = len(linked.tokenizer.encode(TEXT).ids)
    assert f"{n} tokens" in stats and f"{len(TEXT)} chars" in stats
    assert f"{len(TEXT.encode())} bytes" in stats and "0 unknown" in stats
    assert text


def test_token_table_model_passes_modeltester(qtmodeltester, qtbot, linked):
    model = TokenTableModel()
    model.set_result(linked.doc)
    qtmodeltester.check(model, force_py=True)
    assert model.rowCount() == linked.doc.token_count


def test_model_updates_incrementally_while_typing(qtmodeltester, qtbot, linked):
    w = linked
    qtmodeltester.check(w.table_model, force_py=True)  # keeps checking on every signal
    cur = w.editor.textCursor()
    cur.setPosition(u16(TEXT[:TEXT.index("Second")]))
    w.editor.setTextCursor(cur)
    qtbot.keyClicks(w.editor, "new words ")
    wait_highlighted(qtbot, w)
    rows = [int(w.table_model.index(r, COL_ID).data()) for r in range(w.table_model.rowCount())]
    assert rows == w.tokenizer.encode(w.text()).ids


def test_table_keys_move_cursor_to_token(qtbot, linked):
    """Down arrow in the focused table is the user's choice: the cursor follows it."""
    w = linked
    enc = w.tokenizer.encode(TEXT)
    w.linker.select_token(2)
    w.table.setFocus()
    qtbot.keyClick(w.table, Qt.Key.Key_Down)
    assert w.linker.current == 3
    assert w.editor.textCursor().position() == u16(TEXT[:enc.tokens[3].start])


def test_table_row_changed_by_program_never_moves_text_cursor(qtbot, linked):
    """Issue 18: the table's current row moves by itself when rows are inserted above it
    (a new result while the user types). That must not move the text cursor."""
    w = linked
    cur = w.editor.textCursor()
    cur.setPosition(u16(TEXT) - 3)
    w.editor.setTextCursor(cur)
    before = w.editor.textCursor().position()
    for row in (0, 1, 5):
        w.table.selectionModel().setCurrentIndex(
            w.table_model.index(row, 0),
            w.table.selectionModel().SelectionFlag.ClearAndSelect)
        w.table.selectRow(row)
    assert w.editor.textCursor().position() == before


def test_typing_while_results_arrive_keeps_text(qtbot, linked):
    """Typed at the end, waiting for each result so rows are inserted under the current row
    (the real-window scramble of issue 18); the text must be exactly what was typed."""
    w = linked
    w.editor.setFocus()
    qtbot.keyClick(w.editor, Qt.Key.Key_End, Qt.KeyboardModifier.ControlModifier)
    typed = "abcdefghij klmno 0123456789 the end"
    for ch in typed:
        qtbot.keyClicks(w.editor, ch)
        wait_highlighted(qtbot, w)
    assert w.text() == TEXT + typed
