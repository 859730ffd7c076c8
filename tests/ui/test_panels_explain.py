"""The Pipeline and Provenance panels in the window: real content from the engine, only
working while shown, hover and click on boundaries."""

from __future__ import annotations

import pytest
from conftest import wait_highlighted
from PySide6.QtCore import QPoint, Qt
from references import require


def _move_cursor(w, offset: int) -> None:
    cur = w.editor.textCursor()
    cur.setPosition(offset)  # ASCII/BMP text: code points = UTF-16 units
    w.editor.setTextCursor(cur)


def test_pipeline_panel_rows_match_hf_stages(qtbot, window, no_qt_warnings):
    from tokenizers import Tokenizer as HFTokenizer

    w = window
    path = require("minilm", "tokenizer.json")
    with qtbot.waitSignal(w.tokenizer_changed, timeout=20000):
        w.open_source(str(path))
    w.set_text("Café ÉCOLE naïve, ok\nsecond\n")
    wait_highlighted(qtbot, w)
    panel = w.panel_objects["pipeline"]
    assert panel.view.canvas.trace is None  # a background tab does no work
    assert w.show_view("pipeline")
    _move_cursor(w, 3)
    qtbot.waitUntil(lambda: panel.view.canvas.trace is not None
                    and panel.view.canvas.trace.text == "Café ÉCOLE naïve, ok"
                    and not panel.busy(), timeout=10000)
    trace = panel.view.canvas.trace
    ref = HFTokenizer.from_file(str(path))
    assert trace.normalized == ref.normalizer.normalize_str(trace.text)
    assert [a.piece for a in trace.additions] == ["[CLS]", "[SEP]"]
    assert "BertNormalizer" in panel.view.components.text()
    # hovering the changed 'é' in the original row explains it
    canvas = panel.view.canvas
    x = (canvas._x[3] + canvas._x[4]) // 2
    assert canvas.tip_at(QPoint(x, canvas._row_y(0) + 5)) == "original 'é' → normalized 'e'"
    # a selection is traced instead of the line
    cur = w.editor.textCursor()
    cur.setPosition(5)
    cur.setPosition(16, cur.MoveMode.KeepAnchor)  # "ÉCOLE naïve"
    w.editor.setTextCursor(cur)
    qtbot.waitUntil(lambda: panel.view.canvas.trace.text == "ÉCOLE naïve"
                    and not panel.busy(), timeout=10000)
    assert panel.view.title.text().startswith("Selection at characters 5–16")


def test_provenance_panel_tree_and_boundary_click(qtbot, window, no_qt_warnings):
    w = window
    w.set_text("Tokenization is fun\n")
    wait_highlighted(qtbot, w)
    panel = w.panel_objects["provenance"]
    assert panel.view.result is None
    assert w.show_view("provenance")
    _move_cursor(w, 1)
    qtbot.waitUntil(lambda: panel.view.result is not None and not panel.busy(), timeout=10000)
    view = panel.view
    tok = view.result.provenance[view.result.current].token
    assert tok.piece == "Token"
    tree = view.tree.tree
    assert tree is not None and b"".join(n.symbol for n in tree.leaves()) == b"Token"
    assert "merged first" in view.explanation.text()
    # click the boundary between "ization" and " is": the pre-tokenizer's
    strip = view.strip
    index, rect = strip._gaps[1]
    qtbot.mouseClick(strip, Qt.MouseButton.LeftButton, pos=rect.center())
    assert strip.selected_boundary == index
    assert "pre-tokenizer" in view.explanation.text()
    assert "pattern alternative" in strip.tip_at(rect.center())
    # click a token: its provenance
    _index, token_rect = strip._tokens[1]
    qtbot.mouseClick(strip, Qt.MouseButton.LeftButton, pos=token_rect.center())
    assert view.tree.tree.symbol == b"ization"


def test_provenance_panel_unigram_and_wordpiece(qtbot, window):
    w = window
    w.set_text("unbelievably\n")
    wait_highlighted(qtbot, w)
    w.show_view("provenance")
    panel = w.panel_objects["provenance"]
    for key, name, marker in [("sentencepiece", "botchan_en_unigram_1000.model",
                               "Best segmentations"),
                              ("minilm", "tokenizer.json", "Greedy longest match")]:
        with qtbot.waitSignal(w.tokenizer_changed, timeout=20000):
            w.open_source(str(require(key, name)))
        wait_highlighted(qtbot, w)
        _move_cursor(w, 0)
        qtbot.waitUntil(lambda m=marker: panel.view.result is not None and not panel.busy()
                        and m in panel.view.details.text(), timeout=10000)
        assert panel.view.explanation.text()


@pytest.mark.parametrize("view", ["pipeline", "provenance"])
def test_screenshot_views_render_content(window, tmp_path, view):
    from PySide6.QtGui import QImage

    from explorer.ui.app import take_screenshot

    out = tmp_path / f"{view}.png"
    assert take_screenshot(window, out, view) == 0
    assert QImage(str(out)).width() > 0 and out.stat().st_size > 10_000
    panel = window.panel_objects[view]
    assert not panel.busy()
    shown = panel.view.canvas.trace if view == "pipeline" else panel.view.result
    assert shown is not None
