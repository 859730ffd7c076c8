"""Hovering the gap between two tokens in the editor explains the boundary ("why this
boundary"): a pre-tokenizer cut and a BPE rank cut with cl100k, a Viterbi cut with a real
Unigram model. The explanation is computed on a worker (the first answer is "explaining..."),
then shown where the mouse rests, and cached; hovering a character still shows its token."""

from __future__ import annotations

import html

import pytest
from conftest import wait_highlighted
from PySide6.QtCore import QEvent, QPoint
from PySide6.QtGui import QHelpEvent, QTextCursor
from PySide6.QtWidgets import QApplication, QToolTip
from references import require

from explorer.engine.explain.boundary import explain_boundary_at
from explorer.ui.boundary_tips import PENDING

pytestmark = pytest.mark.gui


def gap_point(w, offset: int) -> QPoint:
    """Viewport point of the gap before document position ``offset`` (ASCII text)."""
    cur = QTextCursor(w.editor.document())
    cur.setPosition(offset)
    rect = w.editor.cursorRect(cur)
    return QPoint(rect.left(), rect.center().y())


def hover(w, pos: QPoint) -> None:
    viewport = w.editor.viewport()
    QApplication.sendEvent(viewport, QHelpEvent(QEvent.Type.ToolTip, pos,
                                                 viewport.mapToGlobal(pos)))


def tip_after_hover(qtbot, w, offset: int) -> str:
    """Hover the gap once; wait for the worker's answer to replace "explaining..."."""
    QToolTip.hideText()
    hover(w, gap_point(w, offset))
    qtbot.waitUntil(lambda: QToolTip.isVisible() and "Why this boundary" in QToolTip.text()
                    and "explaining" not in QToolTip.text(), timeout=20000)
    return QToolTip.text()


def set_text(qtbot, w, text: str) -> None:
    w.set_text(text)
    wait_highlighted(qtbot, w)


def test_pre_tokenizer_and_merge_cuts_with_cl100k(qtbot, window):
    w = window
    text = "Hello world Tokenization\n"
    set_text(qtbot, w, text)
    tok = w.tokenizer
    line = text.rstrip("\n")
    # the first request answers at once with a placeholder: nothing is computed on the GUI
    # thread, so typing never waits for an explanation
    assert w.boundary_tips.tip_at(0, line, 5) == PENDING
    tip = tip_after_hover(qtbot, w, 5)  # "Hello" | " world"
    want = explain_boundary_at(tok, line, 5)
    assert want is not None and want.cause == "pre-tokenizer"
    assert "(pre-tokenizer)" in tip and html.escape(want.text) in tip
    assert "pattern alternative" in tip
    tip = tip_after_hover(qtbot, w, 17)  # " Token" | "ization": a BPE rank decides
    want = explain_boundary_at(tok, line, 17)
    assert want is not None and want.cause == "merge"
    assert "(merge)" in tip and html.escape(want.text) in tip and "rank" in tip
    # cached: the same gap answers at once
    assert "Why this boundary" in (w.boundary_tips.tip_at(0, line, 17) or "")
    assert not w.boundary_tips.busy()
    # inside a token there is no boundary: the gap test refuses, the token tooltip shows
    assert w.boundary_tips.tip_at(0, line, 2) is None
    QToolTip.hideText()
    a, b = gap_point(w, 1), gap_point(w, 2)
    hover(w, QPoint((a.x() + b.x()) // 2, a.y()))  # the middle of the "e" of "Hello"
    qtbot.waitUntil(QToolTip.isVisible, timeout=5000)
    assert "Why this boundary" not in QToolTip.text() and "Hello" in QToolTip.text()


def test_viterbi_cut_with_a_unigram_model(qtbot, window):
    w = window
    with qtbot.waitSignal(w.tokenizer_changed, timeout=30000):
        w.open_source(str(require("sentencepiece", "botchan_en_unigram_1000.model")))
    text = "Tokenization\n"
    set_text(qtbot, w, text)
    tok, line = w.tokenizer, "Tokenization"
    enc = tok.encode(line)
    cuts = [enc[i].start for i in range(1, len(enc))]
    explained = {c: explain_boundary_at(tok, line, c) for c in cuts}
    rival = next(c for c, e in explained.items() if e is not None and "rival" in e.data)
    tip = tip_after_hover(qtbot, w, rival)
    want = explained[rival]
    assert "(viterbi)" in tip and html.escape(want.text) in tip
    assert f"{want.data['rival_score']:.2f}" in tip


def test_clicking_a_gap_selects_that_boundary_in_provenance(qtbot, window):
    from PySide6.QtCore import Qt

    w = window
    set_text(qtbot, w, "Hello world Tokenization\n")
    panel = w.panel_objects["provenance"]
    assert w.show_view("provenance")
    # "Hello" | " world": without the click the panel would show the boundary after the
    # cursor's token (" world" | " Token")
    qtbot.mouseClick(w.editor.viewport(), Qt.MouseButton.LeftButton, pos=gap_point(w, 5))
    assert w.editor.textCursor().position() == 5
    qtbot.waitUntil(lambda: panel.view.result is not None and not panel.busy()
                    and panel.view.strip.selected_boundary is not None, timeout=20000)
    result = panel.view.result
    chosen = result.boundaries[panel.view.strip.selected_boundary]
    assert chosen.position == 5 and chosen.cause == "pre-tokenizer"
    assert "'Hello' was matched" in panel.view.explanation.text()


def test_tooltips_come_from_a_filter_not_a_viewport_event_override(window):
    """The editor answers tooltip requests from an event filter on its viewport; it does not
    override ``viewportEvent``: every viewport event, its paints included, would then run
    inside a Python call, and Qt would paint holding the GIL that the encode's worker thread
    needs (~80 ms for a big document's first paint). Hovering still works (the tests above);
    a request the filter answers goes no further."""
    from explorer.ui.editor import TokenEditor

    assert all("viewportEvent" not in vars(cls) for cls in type(window.editor).__mro__
               if issubclass(cls, TokenEditor))
    viewport = window.editor.viewport()
    seen: list[QPoint] = []
    window.editor.show_tip = lambda event: seen.append(event.pos())
    event = QHelpEvent(QEvent.Type.ToolTip, QPoint(3, 4), viewport.mapToGlobal(QPoint(3, 4)))
    QApplication.sendEvent(viewport, event)
    assert seen == [QPoint(3, 4)]
