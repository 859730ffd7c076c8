"""Typing in a SentencePiece Unigram document: each keystroke re-encodes the words around it;
once typing pauses the window re-decides the rest from the exact running score (settling), so
the document ends exactly as sentencepiece encodes the edited text, painted as such."""

from __future__ import annotations

import pytest
import sentencepiece as spm
from conftest import wait_highlighted
from painting_oracle import expected_ranges, painted_ranges

from explorer.bundled import resource_path

pytestmark = pytest.mark.usefixtures("no_qt_warnings")


def test_typing_then_pausing_settles_the_whole_document(qtbot, window):
    from references import require

    path = require("sentencepiece", "botchan_en_unigram_1000.model")
    sp = spm.SentencePieceProcessor(model_file=str(path))
    text = resource_path("corpus", "botchan.txt").read_text(encoding="utf-8")[:60_000]
    window.open_source(str(path))
    qtbot.waitUntil(lambda: window.controller.tokenizer is not None
                    and "botchan" in window.windowTitle(), timeout=20000)
    window.set_text(text)
    wait_highlighted(qtbot, window)
    assert window.doc.exact_until == len(window.text())
    settled = []
    window.controller._settler.busy_changed.connect(settled.append)
    cur = window.editor.textCursor()
    cur.setPosition(1000)
    window.editor.setTextCursor(cur)
    qtbot.keyClicks(window.editor, "zq ")
    wait_highlighted(qtbot, window)
    # Right after the keystrokes: exact up to their windows, the rest follows in steps.
    qtbot.waitUntil(lambda: window.doc.exact_until == len(window.text()), timeout=30000)
    assert True in settled  # it took settling steps to get there
    assert window.doc.ids().tolist() == sp.encode(window.text())
    wait_highlighted(qtbot, window)
    assert painted_ranges(window) == expected_ranges(window)
