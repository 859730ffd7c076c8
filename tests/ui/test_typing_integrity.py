"""Issue 18, offscreen side: IME composition and undo/redo keep exactly the typed text while
results arrive and the token table and inspector follow the caret."""

from __future__ import annotations

import pytest
from conftest import wait_highlighted
from PySide6.QtCore import Qt
from PySide6.QtGui import QInputMethodEvent
from PySide6.QtWidgets import QApplication

pytestmark = pytest.mark.usefixtures("no_qt_warnings")
BASE = "hello world, some text\nsecond line\n"


def _ime(editor, preedit: str, commit: str = "") -> None:
    event = QInputMethodEvent(preedit, [])
    if commit:
        event.setCommitString(commit)
    QApplication.sendEvent(editor, event)


def test_ime_composition_while_results_arrive(qtbot, window):
    window.set_text(BASE)
    wait_highlighted(qtbot, window)
    editor = window.editor
    editor.setFocus()
    qtbot.keyClick(editor, Qt.Key.Key_End, Qt.KeyboardModifier.ControlModifier)
    for preedit, commit in (("n", ""), ("に", ""), ("にほ", ""), ("", "日本"), ("g", ""),
                            ("ご", ""), ("", "語"), ("", " ok")):
        _ime(editor, preedit, commit)
        wait_highlighted(qtbot, window)  # results land between composition steps
    assert window.text() == BASE + "日本語 ok"
    assert editor.textCursor().position() == len((BASE + "日本語 ok").encode("utf-16-le")) // 2


def test_undo_redo_after_highlighting_restores_exact_text(qtbot, window):
    window.set_text(BASE)
    wait_highlighted(qtbot, window)
    editor = window.editor
    editor.setFocus()
    qtbot.keyClick(editor, Qt.Key.Key_End, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClicks(editor, "typed words")
    wait_highlighted(qtbot, window)
    typed = window.text()
    editor.undo()
    wait_highlighted(qtbot, window)
    assert window.text() == BASE
    editor.redo()
    wait_highlighted(qtbot, window)
    assert window.text() == typed
    # colouring is not an edit: one undo step took the whole typing back
    assert not editor.document().isRedoAvailable()
