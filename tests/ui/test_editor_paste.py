"""Pasting text: the editor's fast path gives exactly the text (and undo) Qt's own path gives.

The editor inserts pasted text with ``insertPlainText`` instead of Qt's fragment-building
``insertFromMimeData``; a big paste first clears the colours of the block it goes into. The
text the user pasted must come out unchanged either way, and the controller's copy of the
text must equal the document's.
"""

from __future__ import annotations

from conftest import wait_highlighted
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PySide6.QtCore import QMimeData
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import QPlainTextEdit

from explorer.ui.editor import BIG_PASTE_CHARS, TokenEditor

TRICKY = ["a\r\nb", "a\rb", "x\u2029y\u2028z", "no\u00a0break", "😀👍🏽 e\u0301",
          "tab\tend\n", "\n\n\n", "日本語\r\n\r\n", "\ufdd0frame\ufdd1"]


def _mime(text: str) -> QMimeData:
    mime = QMimeData()
    mime.setText(text)
    return mime


def _paste_both(qtbot, before: str, sel: tuple[int, int], pasted: str) -> tuple[str, str]:
    """Paste ``pasted`` over UTF-16 selection ``sel`` of ``before`` in a TokenEditor and in a
    bare QPlainTextEdit (Qt's own path); return both texts."""
    out = []
    for editor in (TokenEditor(), QPlainTextEdit()):
        qtbot.addWidget(editor)
        editor.setPlainText(before)
        cur = editor.textCursor()
        cur.setPosition(sel[0])
        cur.setPosition(sel[1], QTextCursor.MoveMode.KeepAnchor)
        editor.setTextCursor(cur)
        editor.insertFromMimeData(_mime(pasted))
        out.append(editor.toPlainText())
    return out[0], out[1]


def test_paste_equals_qt_paste_on_tricky_text(qtbot):
    for pasted in TRICKY:
        ours, qts = _paste_both(qtbot, "héllo\nwörld", (2, 8), pasted)
        assert ours == qts, repr(pasted)


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(before=st.text(st.sampled_from("ab\n😀é\r "), max_size=12),
       pasted=st.lists(st.sampled_from(["a", "\n", "\r", "\r\n", "😀", "\u00a0", "\u2029", "日"]),
                       max_size=12).map("".join),
       a=st.integers(0, 20), b=st.integers(0, 20))
def test_paste_equals_qt_paste_anywhere(qtbot, before, pasted, a, b):
    n = len(before.replace("\r\n", "\n").encode("utf-16-le")) // 2
    sel = (min(a, b, n), min(max(a, b), n))
    ours, qts = _paste_both(qtbot, before, sel, pasted)
    assert ours == qts


def test_paste_is_one_undo_step_and_leaves_the_cursor_after_it(qtbot):
    editor = TokenEditor()
    qtbot.addWidget(editor)
    editor.setPlainText("keep this")
    cur = editor.textCursor()
    cur.setPosition(5)
    editor.setTextCursor(cur)
    editor.insertFromMimeData(_mime("one\ntwo\r\nthree "))
    assert editor.toPlainText() == "keep one\ntwo\nthree this"
    assert editor.textCursor().position() == len("keep one\ntwo\nthree ")
    editor.undo()
    assert editor.toPlainText() == "keep this"


def test_big_paste_into_a_coloured_block_keeps_text_and_gets_coloured_again(qtbot, window):
    window.set_text("first line\nsecond line\n")
    wait_highlighted(qtbot, window)
    block = window.editor.document().firstBlock()
    assert block.layout().formats()  # the painter coloured it
    lines = "".join(f"line {i} héllo 😀 wörld\n" for i in range(BIG_PASTE_CHARS // 20))
    cur = window.editor.textCursor()
    cur.setPosition(6)  # inside "first line": that block is split once per pasted line
    window.editor.setTextCursor(cur)
    window.editor.insertFromMimeData(_mime(lines))
    expected = "first " + lines + "line\nsecond line\n"
    assert window.editor.toPlainText() == expected
    assert window.text() == expected  # the controller's copy
    wait_highlighted(qtbot, window, timeout=120000)
    assert window.editor.document().firstBlock().layout().formats()
    assert window.doc.text == expected
