"""The core side panels (bpe, lattice, compare, vocab, train) inside the main window: docked,
following the cursor, text and tokenizer."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from references import require

from explorer.engine.formats import load_tokenizer
from explorer.ui.panels.cursor_span import pre_token_span


def _core(w) -> SimpleNamespace:
    """The core panels' widgets, each from its own registered panel."""
    p = w.panel_objects
    return SimpleNamespace(merge_queue=p["bpe"].merge_queue, lattice=p["lattice"].lattice,
                           compare=p["compare"].compare, vocab=p["vocab"].vocab,
                           training=p["train"].training)


def _move_cursor(w, offset: int) -> None:
    cur = w.editor.textCursor()
    cur.setPosition(offset)  # ASCII text: code points = UTF-16 units
    w.editor.setTextCursor(cur)


def test_pre_token_span_uses_the_engines_pre_tokenizer(window):
    tok = window.tokenizer
    text = "hello world, again\nsecond line"
    assert pre_token_span(tok, text, 7) == (5, 11)  # " world"
    assert pre_token_span(tok, text, 20) == (19, 25)  # "second" on the next line
    assert pre_token_span(tok, text, text.index("\n")) is None  # on the line break


def test_panels_are_docked_and_follow_the_cursor(qtbot, window):
    w = window
    for key in ("bpe", "lattice", "compare", "vocab", "train"):
        assert key in w.panels
    hub = _core(w)
    assert w.show_view("bpe")
    _move_cursor(w, 8)  # in " world"
    qtbot.waitUntil(lambda: "' world'" in hub.merge_queue.title.text(), timeout=5000)
    expected = w.tokenizer.encode(" world")
    assert [int(c.caption) for c in hub.merge_queue.final.chips] == expected.ids

    assert w.show_view("lattice")
    qtbot.waitUntil(lambda: "not a Unigram model" in hub.lattice.title.text(), timeout=5000)

    w.show_view("bpe")
    w.set_text("a <|endoftext|> b\n")
    qtbot.waitUntil(lambda: w.is_highlighted and w.doc.text == w.text(), timeout=20000)
    _move_cursor(w, 5)
    qtbot.waitUntil(lambda: "special token (id 100257)" in hub.merge_queue.title.text(),
                    timeout=5000)


def test_compare_view_compares_with_a_second_tokenizer(qtbot, window):
    w = window
    hub = _core(w)
    with qtbot.waitSignal(hub.compare.compared, timeout=20000):
        w.show_view("compare")
    qtbot.waitUntil(lambda: hub.compare.stats.rowCount() == 2, timeout=20000)
    names = [hub.compare.stats.data(hub.compare.stats.index(r, 0)) for r in range(2)]
    assert names[0] == w.tokenizer.info.name and "o200k" in names[1]
    # typing updates the comparison (the window's text_changed signal)
    with qtbot.waitSignal(hub.compare.compared, timeout=20000):
        w.set_text("Tokenizers don't agree\n")
    qtbot.waitUntil(lambda: hub.compare.rows.comparison is not None
                    and hub.compare.rows.comparison.text == w.text(), timeout=20000)


def test_vocab_and_lattice_follow_the_tokenizer(qtbot, window):
    w = window
    hub = _core(w)
    # a background tab does no work: the vocabulary is read only when its tab is shown
    assert hub.vocab.model.matching == 0 and hub.compare.stats.rowCount() == 0
    with qtbot.waitSignal(hub.vocab.loaded, timeout=20000):
        w.show_view("vocab")
    assert hub.vocab.model.matching == len(hub.vocab.model.rows) > 100_000
    path = require("sentencepiece", "botchan_en_unigram_1000.model")
    w.show_view("lattice")
    with qtbot.waitSignal(w.tokenizer_changed, timeout=20000):
        w.open_source(str(path))
    qtbot.waitUntil(lambda: w.is_highlighted, timeout=20000)
    _move_cursor(w, 8)
    qtbot.waitUntil(lambda: "world" in hub.lattice.title.text(), timeout=5000)
    best = [n.piece for n in hub.lattice.canvas.summary.best]
    assert best == load_tokenizer(path).encode("world").pieces


def test_trained_tokenizer_becomes_current(qtbot, window):
    w = window
    hub = _core(w)
    w.show_view("train")
    dialog = hub.training
    dialog.vocab_size.setValue(400)
    with qtbot.waitSignal(dialog.finished_training, timeout=30000):
        dialog.start()
    with qtbot.waitSignal(w.tokenizer_changed, timeout=10000):
        dialog.use_button.click()
    # saved in the app data folder and opened like any file: remembered, merge trace works
    assert w.source.endswith(".tiktoken") and "trained" in w.source
    assert w.tokenizer.vocab_size == 400 and w.tokenizer.supports_merge_trace()
    assert w.settings.vocabulary == w.source
    dialog.reject()  # embedded: Escape/close only cancels, the panel stays
    assert not dialog.isHidden()


def test_long_pre_token_is_not_traced(qtbot, window):
    w = window
    hub = _core(w)
    w.set_text("x" + " " * 2000 + "y\n")  # one whitespace pre-token of ~2000 bytes
    qtbot.waitUntil(lambda: w.is_highlighted and w.doc is not None
                    and w.doc.text == w.text(), timeout=20000)
    w.show_view("bpe")
    _move_cursor(w, 500)
    qtbot.waitUntil(lambda: "too long to trace" in hub.merge_queue.title.text(), timeout=5000)
    assert hub.merge_queue.step_count == 0


@pytest.mark.parametrize("view", ["bpe", "compare", "vocab", "train"])
def test_screenshot_of_each_view_shows_the_panel(window, tmp_path, view):
    from PySide6.QtGui import QImage

    from explorer.ui.app import take_screenshot

    out = tmp_path / f"{view}.png"
    assert take_screenshot(window, out, view) == 0
    image = QImage(str(out))
    assert image.width() > 0 and out.stat().st_size > 10_000
    dock = window.panels[view]
    assert dock.widget().isVisible()  # raised, on screen
    assert not window.panel_objects[view].busy()


def test_compare_with_menu_picks_the_tokenizers(qtbot, window):
    w = window
    hub = _core(w)
    with qtbot.waitSignal(hub.compare.compared, timeout=20000):
        w.show_view("compare")
    qtbot.waitUntil(lambda: hub.compare.stats.rowCount() == 2, timeout=20000)
    actions = {a.data(): a for a in hub.compare.choose_menu.actions()}
    assert "bundled:o200k_base" in actions and actions["bundled:o200k_base"].isChecked()
    # untick o200k: only the current tokenizer is left
    with qtbot.waitSignal(hub.compare.compared, timeout=20000):
        actions["bundled:o200k_base"].trigger()
    qtbot.waitUntil(lambda: hub.compare.stats.rowCount() == 1, timeout=20000)
    assert hub.compare.chosen() == []
    # tick it again
    actions = {a.data(): a for a in hub.compare.choose_menu.actions()}
    actions["bundled:o200k_base"].trigger()
    qtbot.waitUntil(lambda: hub.compare.stats.rowCount() == 2, timeout=20000)


def test_screenshot_of_stats_waits_for_the_run_and_draws_its_plots(window, tmp_path):
    # The screenshot used to wait for busy panels in a processEvents() spin that held the
    # GIL: the statistics run stood still and the picture showed it at 53%.
    from explorer.ui.app import take_screenshot
    from explorer.ui.panels.stats import StatsPanel

    assert take_screenshot(window, tmp_path / "stats.png", "stats") == 0
    panel = window.findChild(StatsPanel)
    assert panel.stats is not None and not window.panel_objects["stats"].busy()
    assert panel.script_slot.is_built() and panel.script_plot.isVisible()
    assert set(panel.script_plot.series) == set(panel.stats.names)
