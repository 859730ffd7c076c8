"""Screenshot smoke test: every panel and the training dialog render real data to a PNG."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QImage
from references import require

from explorer.bundled import resource_path
from explorer.engine.formats import load_tokenizer
from explorer.ui.dialogs.training import TrainingDialog
from explorer.ui.panels.compare import ComparePanel
from explorer.ui.panels.lattice import LatticePanel
from explorer.ui.panels.merge_queue import MergeQueuePanel
from explorer.ui.panels.vocab_browser import VocabBrowser


@pytest.fixture(scope="module")
def cl100k():
    return load_tokenizer(resource_path("vocab/cl100k_base.tiktoken"))


@pytest.fixture(scope="module")
def botchan():
    return load_tokenizer(require("sentencepiece", "botchan_en_unigram_1000.model"))


def _save(widget, path) -> QImage:
    widget.resize(800, 560)
    widget.show()
    pixmap = widget.grab()
    assert pixmap.save(str(path))
    image = QImage(str(path))
    assert path.stat().st_size > 2000 and image.width() == 800
    # not a blank picture: many distinct colours (text, chips, plots)
    colors = {image.pixel(x, y) for x in range(0, 800, 7) for y in range(0, 560, 7)}
    assert len(colors) > 12, f"{path.name} looks empty"
    return image


def test_merge_queue_png(qtbot, tmp_path, cl100k):
    panel = MergeQueuePanel()
    qtbot.addWidget(panel)
    panel.set_trace(list(cl100k.trace_merges(" tokenization")), "' tokenization'",
                    cl100k.token_id)
    panel.set_position(4)
    _save(panel, tmp_path / "bpe.png")


def test_lattice_png(qtbot, tmp_path, botchan):
    panel = LatticePanel()
    qtbot.addWidget(panel)
    panel.set_lattice(botchan.lattice("hello world"))
    _save(panel, tmp_path / "lattice.png")


def test_compare_png(qtbot, tmp_path, cl100k, botchan):
    panel = ComparePanel()
    qtbot.addWidget(panel)
    text = "Tokenizers disagree: don't they? 12345 naïve café 🙂"
    panel.set_encodings(["cl100k", "botchan unigram"], [cl100k.encode(text),
                                                        botchan.encode(text)])
    _save(panel, tmp_path / "compare.png")


def test_vocab_png(qtbot, tmp_path, cl100k):
    browser = VocabBrowser()
    qtbot.addWidget(browser)
    with qtbot.waitSignal(browser.query_done, timeout=20000):
        browser.set_tokenizer(cl100k)
    _save(browser, tmp_path / "vocab.png")


def test_training_png(qtbot, tmp_path):
    dialog = TrainingDialog()
    qtbot.addWidget(dialog)
    dialog.vocab_size.setValue(400)
    with qtbot.waitSignal(dialog.finished_training, timeout=30000):
        dialog.start()
    image = _save(dialog, tmp_path / "train.png")
    assert image.pixelColor(400, 300) != Qt.GlobalColor.black
