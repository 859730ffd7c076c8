"""Issue 18 details: status bar places, pending counts, redo keys, the dark theme everywhere."""

from __future__ import annotations

import pytest
from conftest import wait_highlighted
from PySide6.QtCore import Qt
from PySide6.QtGui import QPalette

from explorer.ui.inspector import count, hex_bytes

pytestmark = pytest.mark.usefixtures("no_qt_warnings")


def test_message_and_counts_have_their_own_places(qtbot, window):
    long = "could not open /a/very/long/path/" + "x" * 300 + "/corrupt.model: not a valid"
    window.status.message(long)
    status = window.status
    assert status.message_label.text() == long and status.message_label.toolTip() == long
    counts = status.stats.text()
    assert counts.endswith("unknown") and "corrupt" not in counts
    # the labels do not overlap, whatever the message's length
    bar = window.statusBar()
    bar.resize(700, bar.height())
    qtbot.wait(50)
    m, s = status.message_label.geometry(), status.stats.geometry()
    assert m.right() < s.left() or not m.intersects(s)
    assert status.stats.toolTip() == counts


def test_counts_are_pending_after_a_tokenizer_switch(qtbot, window):
    window.set_text("some text to count " * 50)
    wait_highlighted(qtbot, window)
    before = window.status.stats.text()
    seen: list[str] = []
    window.tokenizer_changed.connect(lambda _t: seen.append(window.status.stats.text()))
    window.open_source("bundled:o200k_base")
    qtbot.waitUntil(lambda: bool(seen), timeout=20000)
    assert seen[0].startswith("counting tokens with o200k_base") and seen[0] != before
    wait_highlighted(qtbot, window)
    assert window.status.stats.text().endswith("unknown")
    assert window.status.pending_name is None


def test_ctrl_y_and_ctrl_shift_z_redo(qtbot, window):
    """Both redo keys work in the editor, as in Linux editors."""
    window.activateWindow()
    window.editor.setFocus()
    qtbot.keyClick(window.editor, Qt.Key.Key_End, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClicks(window.editor, "abc")
    typed = window.text()
    ctrl, shift = Qt.KeyboardModifier.ControlModifier, Qt.KeyboardModifier.ShiftModifier
    for key, mods in ((Qt.Key.Key_Y, ctrl), (Qt.Key.Key_Z, ctrl | shift)):
        qtbot.keyClick(window.editor, Qt.Key.Key_Z, ctrl)
        assert window.text() != typed
        qtbot.keyClick(window.editor, key, mods)
        assert window.text() == typed


def test_dark_theme_reaches_plots_and_disabled_widgets(qtbot, window):
    from explorer.ui.dialogs.training import TrainingDialog
    from explorer.ui.panels.stats import StatsPanel
    from explorer.ui.themed_plot import ThemedPlot

    # Plots are built when first drawn on (no pyqtgraph at start-up): build three kinds.
    window.findChild(StatsPanel).script_plot.set_bars(["Latin"], {"a": [1.0]})
    training = window.findChild(TrainingDialog)
    training.step_view.histogram.plot()
    training.plots._build_plots()
    window.set_dark(True)
    qtbot.wait(20)
    pal = window.palette()
    normal = pal.color(QPalette.ColorGroup.Active, QPalette.ColorRole.ButtonText)
    disabled = pal.color(QPalette.ColorGroup.Disabled, QPalette.ColorRole.ButtonText)
    assert disabled.lightness() < normal.lightness() - 80
    for widget in (window.menuBar(), window.picker):
        assert widget.palette().color(QPalette.ColorRole.Window).lightness() < 80
    plots = window.findChildren(ThemedPlot)
    assert len(plots) == 4
    for plot in plots:
        assert plot.backgroundBrush().color().lightness() < 80
    window.set_dark(False)
    qtbot.wait(20)
    for plot in plots:
        assert plot.backgroundBrush().color().lightness() > 200


def test_one_spelling_of_bytes_and_counts():
    assert hex_bytes(b"\xe6\x97\xa5") == "E6 97 A5"
    assert count(1, "char") == "1 char" and count(2, "char") == "2 chars"
    assert count(1024, "byte") == "1,024 bytes"
