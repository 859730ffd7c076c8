"""A very long line is coloured over its start only, and the status bar says so."""

from __future__ import annotations

from conftest import wait_highlighted

from explorer.engine.offsets import Utf16Map
from explorer.ui import token_painter
from explorer.ui.editor import cluster_bounds
from explorer.ui.token_painter import LONG_LINE_CHARS, block_ranges


def _ranges(block):
    return [(r.start, r.length, r.format.background().color().name())
            for r in block.layout().formats()]


def test_a_long_line_is_coloured_over_its_start(qtbot, window, monkeypatch):
    # emoji (two UTF-16 units each) and a combining mark every few words
    long = "".join(f"word{i} 😀 e\u0301 " for i in range(LONG_LINE_CHARS // 8))
    text = f"short first line\n{long}\nlast line\n"
    assert len(long) > LONG_LINE_CHARS
    window.set_text(text)
    wait_highlighted(qtbot, window)
    doc = window.doc
    block = window.editor.document().findBlockByNumber(1)
    shown = _ranges(block)
    cap16 = Utf16Map(long[:LONG_LINE_CHARS]).length_utf16
    end16 = max(s + n for s, n, _ in shown)
    assert cap16 <= end16 < cap16 + 16  # to the end of the token at the cap
    # those ranges are the ones the whole line's colouring has there
    monkeypatch.setattr(token_painter, "LONG_LINE_CHARS", len(long) + 1)
    whole = [(r.start, r.length, r.format.background().color().name())
             for r in block_ranges(doc, 1, long, window.painter.formats)]
    assert shown == [r for r in whole if r[0] < end16]
    assert max(r[0] + r[1] for r in whole) == Utf16Map(long).length_utf16
    # the other lines are coloured whole, and the status bar says why this one is not
    assert _ranges(window.editor.document().findBlockByNumber(2))
    message = window.status.message_label.text()
    assert f"line 2: coloured up to character {LONG_LINE_CHARS:,} of {len(long):,}" in message


def test_cluster_bounds_far_into_a_long_line():
    """The outline and hover of a token far past the coloured start find its cluster near
    the column (not by reading the whole line)."""
    line = "ab " * 200_000 + "🇫🇷x"
    flag = Utf16Map(line).to_utf16(len(line) - 3)
    assert cluster_bounds(line, flag + 1) == (flag, flag + 4)
    assert cluster_bounds(line, flag + 4) == (flag + 4, flag + 5)


def test_the_cursor_does_not_blink_in_a_very_long_line(qtbot, monkeypatch):
    """Qt repaints the whole block the cursor is in at every blink (0.25-0.6 s in a 9 MB
    line): in a line longer than STEADY_CURSOR_LINE the application's flash time is held
    at 0, and given back when the cursor leaves it (or the line gets short again)."""
    from PySide6.QtGui import QGuiApplication, QTextCursor

    from explorer.ui import editor as editor_module
    from explorer.ui.editor import TokenEditor

    monkeypatch.setattr(editor_module, "STEADY_CURSOR_LINE", 1000)
    hints = QGuiApplication.styleHints()
    before = hints.cursorFlashTime()
    assert before > 0
    ed = TokenEditor()
    qtbot.addWidget(ed)
    ed.setPlainText("short\n" + "x" * 2000 + "\nend")
    cur = ed.textCursor()
    cur.setPosition(10)
    ed.setTextCursor(cur)
    assert hints.cursorFlashTime() == 0
    cur.setPosition(2)
    ed.setTextCursor(cur)
    assert hints.cursorFlashTime() == before
    cur.setPosition(10)
    ed.setTextCursor(cur)
    assert hints.cursorFlashTime() == 0
    cur.setPosition(8)  # select most of the long line and delete it: the cursor stays there
    cur.setPosition(1900, QTextCursor.MoveMode.KeepAnchor)
    cur.removeSelectedText()
    ed.setTextCursor(cur)
    assert hints.cursorFlashTime() == before
