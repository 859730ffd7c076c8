"""Training dialog's advanced row: BPE prefix/suffix/max length, Unigram symbols/split digits."""

from __future__ import annotations

import re

import pytest
from PySide6.QtCore import Qt

from explorer.engine.trainers import BpeConfig, UnigramConfig
from explorer.ui.dialogs.training import ALGORITHMS, TrainingDialog


def _choose(dialog: TrainingDialog, prefix: str) -> None:
    dialog.algorithm.setCurrentText(next(k for k in ALGORITHMS if k.startswith(prefix)))


@pytest.fixture()
def dialog(qtbot):
    d = TrainingDialog()
    qtbot.addWidget(d)
    for i in range(d.corpus.count()):  # botchan only: a small, quick corpus
        item = d.corpus.item(i)
        checked = item.data(Qt.ItemDataRole.UserRole).endswith("botchan.txt")
        item.setCheckState(Qt.CheckState.Checked if checked else Qt.CheckState.Unchecked)
    yield d
    d.cancel()


@pytest.mark.parametrize(("algorithm", "page"), [("BPE (byte", 0), ("BPE (char", 0),
                                                 ("Unigram", 1)])
def test_row_follows_the_algorithm(dialog, algorithm, page):
    _choose(dialog, algorithm)
    assert dialog.options.currentIndex() == page


def test_fields_become_config_options(dialog):
    _choose(dialog, "BPE (byte")
    opts = dialog.options
    assert dialog.config() == BpeConfig(vocab_size=2000)  # empty fields: all off
    opts.prefix.setText("##")
    opts.suffix.setText("</w>")
    opts.max_length.setValue(8)
    cfg = dialog.config()
    assert isinstance(cfg, BpeConfig)
    assert (cfg.continuing_subword_prefix, cfg.end_of_word_suffix, cfg.max_token_length) == (
        "##", "</w>", 8)
    _choose(dialog, "Unigram")
    assert dialog.config() == UnigramConfig(vocab_size=2000)
    opts.symbols.setText("  <mask> [SEP] <mask> ")
    opts.split_digits.setChecked(True)
    cfg = dialog.config()
    assert isinstance(cfg, UnigramConfig)
    assert cfg.user_defined_symbols == ("<mask>", "[SEP]") and cfg.split_digits


def test_bad_symbols_give_a_message(dialog):
    _choose(dialog, "Unigram")
    dialog.options.symbols.setText("<s>")
    dialog.start()
    assert "Invalid settings" in dialog.status.text() and not dialog.is_running()


def test_bpe_run_with_marks_and_cap(qtbot, dialog, tmp_path):
    _choose(dialog, "BPE (byte")
    dialog.vocab_size.setValue(500)
    dialog.options.prefix.setText("##")
    dialog.options.max_length.setValue(5)
    with qtbot.waitSignal(dialog.finished_training, timeout=30000) as blocker:
        dialog.start()
        assert not dialog.options.isEnabled()
    assert blocker.args == ["done"] and dialog.options.isEnabled()
    model = dialog.model
    assert model is not None and model.continuing_subword_prefix == "##"
    assert max(len(t.removeprefix("##")) for t in model.vocab) < 5
    tok = dialog.trained_tokenizer()
    text = "I went to school."
    assert tok.decode(tok.encode(text).ids) == text
    with pytest.raises(Exception, match="export as"):
        dialog.save_to(tmp_path / "x.tiktoken")


def test_unigram_run_with_symbols_and_split_digits(qtbot, dialog, tmp_path):
    _choose(dialog, "Unigram")
    dialog.vocab_size.setValue(600)
    dialog.options.symbols.setText("<mask>")
    dialog.options.split_digits.setChecked(True)
    with qtbot.waitSignal(dialog.finished_training, timeout=30000) as blocker:
        dialog.start()
    assert blocker.args == ["done"]
    model = dialog.model
    assert model is not None and model.pieces[3][0] == "<mask>"
    assert not [p for p, _ in model.pieces if re.search(r"[0-9].|.[0-9]", p)]
    tok = dialog.trained_tokenizer()
    assert [t.piece for t in tok.encode("a<mask>b 42").tokens if t.piece == "<mask>"]
