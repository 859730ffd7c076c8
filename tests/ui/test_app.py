"""The application around the window: screenshot CLI, big pastes, stale results, About, looks."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import wait_highlighted
from doubles import SlowDouble
from PySide6.QtGui import QColor

from explorer.ui.about import AboutDialog, versions
from explorer.ui.palettes import PALETTES, THEME_TEXT, contrast_ratio
from explorer.ui.samples import sample_names, sample_text

pytestmark = pytest.mark.usefixtures("no_qt_warnings")
ROOT = Path(__file__).resolve().parents[2]


def test_screenshot_cli_writes_a_png(tmp_path):
    out = tmp_path / "shot.png"
    text = tmp_path / "in.txt"
    text.write_text("Screenshot test: héllo 😀 𠀋\n", encoding="utf-8")
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    r = subprocess.run([sys.executable, "-m", "explorer", "--screenshot", str(out),
                        "--text-file", str(text)], cwd=ROOT, env=env, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    data = out.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000


START_UP_SKIPS = ("pyqtgraph", "jinja2", "importlib.metadata", "explorer.engine.explain.pipeline")
"""Modules the window does not import until a plot, a chat render, About or an explanation
needs them."""


def test_window_starts_without_plot_chat_about_or_explainer_modules(tmp_path):
    # A fresh interpreter: the test session has imported them all long ago. Its settings go
    # to tmp_path (the window writes its look at start: without this, every run wrote them
    # into the user's ~/.config/TokenizerExplorer).
    code = ("import sys\n"
            "from pathlib import Path\n"
            "from explorer.ui.settings import use_settings_dir\n"
            "use_settings_dir(Path(sys.argv[1]))\n"
            "from explorer.ui.app import application\n"
            "from explorer.ui.main_window import MainWindow\n"
            "app = application()\n"
            "w = MainWindow(autosave=False)\n"
            "w.show()\n"
            "app.processEvents()\n"
            "w.settings.sync()\n"
            f"print(sorted(m for m in {START_UP_SKIPS!r} if m in sys.modules))\n")
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    r = subprocess.run([sys.executable, "-c", code, str(tmp_path)], cwd=ROOT, env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip().splitlines()[-1] == "[]"
    assert (tmp_path / "settings.ini").is_file()  # (the window's settings went there)


def test_screenshot_cli_bad_vocab_exits_2(tmp_path):
    bad = tmp_path / "bad.tiktoken"
    bad.write_bytes(b"not a vocabulary")
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    r = subprocess.run([sys.executable, "-m", "explorer", "--screenshot",
                        str(tmp_path / "x.png"), "--vocab", str(bad)], cwd=ROOT, env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2
    assert "Traceback" not in r.stderr and "bad.tiktoken" in r.stderr


def test_screenshot_cli_reports_a_text_the_tokenizer_refuses(tmp_path):
    """A Unigram tokenizer.json without an unk id refuses a character it lacks (as HF
    tokenizers does): the screenshot command says so at once and exits 2, instead of
    waiting a minute for a highlight that cannot come."""
    vocab = tmp_path / "no_unk.json"
    vocab.write_text(json.dumps({
        "version": "1.0", "added_tokens": [], "normalizer": None, "post_processor": None,
        "decoder": None, "pre_tokenizer": {"type": "Whitespace"},
        "model": {"type": "Unigram", "unk_id": None, "byte_fallback": False,
                  "vocab": [["a", -1.0], ["b", -2.0]]},
    }), encoding="utf-8")
    text = tmp_path / "in.txt"
    text.write_text("ab ba 字\n", encoding="utf-8")
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    r = subprocess.run([sys.executable, "-m", "explorer", "--screenshot",
                        str(tmp_path / "x.png"), "--vocab", str(vocab), "--text-file",
                        str(text)], cwd=ROOT, env=env, capture_output=True, text=True,
                       timeout=50)
    assert r.returncode == 2, r.stderr
    assert "encoding failed" in r.stderr and "unk" in r.stderr
    assert "Traceback" not in r.stderr


def test_big_paste_shows_progress_and_stays_interactive(qtbot, window):
    text = sample_text("multilingual") * 800  # ~1 MB
    progress = []
    window.controller.progress.connect(lambda d, t: progress.append((d, t)))
    window.editor.setPlainText(text)
    # While it encodes, the GUI thread keeps handling events (we are running in it) and a
    # keystroke lands in the text at once.
    qtbot.waitUntil(lambda: bool(progress), timeout=20000)
    assert window.status.progress.isVisible()
    window.editor.moveCursor(window.editor.textCursor().MoveOperation.Start)
    qtbot.keyClicks(window.editor, "Z")
    assert window.text().startswith("Z")
    wait_highlighted(qtbot, window, timeout=60000)
    assert not window.status.progress.isVisible()
    assert all(0 < d < t for d, t in progress)
    assert window.doc.token_count == len(window.tokenizer.encode(window.text()).ids)


def test_stale_results_never_land(qtbot, window):
    """A slow tokenizer's result must not replace the newer tokenizer's."""
    fast = window.tokenizer
    window.set_text("abc " * 50)
    wait_highlighted(qtbot, window)
    results = []
    window.controller.encoding_ready.connect(lambda doc, ch: results.append(doc.tokenizer))
    window.controller.set_tokenizer(SlowDouble(0.002))  # ~0.4 s of work
    window.controller.set_tokenizer(fast)
    wait_highlighted(qtbot, window)
    qtbot.wait(600)  # the slow job has finished by now; its result must have been dropped
    assert results and all(t is fast for t in results)
    assert window.doc.tokenizer is fast


def test_typing_fast_ends_with_the_latest_text(qtbot, window):
    window.set_text("")
    qtbot.keyClicks(window.editor, "the quick brown fox jumps over the lazy dog " * 3)
    wait_highlighted(qtbot, window)
    assert window.doc.text == window.text()
    assert [t.id for t, _, _ in window.doc.tokens()] == window.tokenizer.encode(
        window.text()).ids


def test_about_lists_versions_and_licenses(qtbot):
    dlg = AboutDialog()
    qtbot.addWidget(dlg)
    html = dlg.browser.toPlainText()
    for name, version in versions():
        assert name in html and version in html
    assert "cl100k_base" in html and "MIT" in html


def test_samples_are_bundled_and_one_click_away(qtbot, window):
    names = sample_names()
    assert names[0] == "welcome" and {"multilingual", "code", "emoji"} <= set(names)
    actions = {a.text(): a for a in window.menuBar().findChildren(type(
        window.menus.whitespace)) if a.shortcut().toString().startswith("Ctrl+")
        and a.shortcut().toString()[-1].isdigit()}
    assert len(actions) == len(names)
    next(a for a in actions.values() if a.shortcut().toString() == "Ctrl+4").trigger()
    assert window.text() == sample_text(names[3])


@pytest.mark.parametrize("dark", [False, True], ids=["light", "dark"])
@pytest.mark.parametrize("name", list(PALETTES))
def test_palettes_keep_text_readable(name, dark):
    for color in PALETTES[name].colors(dark):
        assert contrast_ratio(QColor(color), THEME_TEXT[dark]) >= 4.5, color
