"""Training dialog: a real tiny training on a worker, live plots, use/save, cancel and rerun."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from explorer.engine.formats import load_tokenizer
from explorer.ui.dialogs.training import ALGORITHMS, TrainingDialog, bundled_corpora


def _pick(dialog: TrainingDialog, prefix: str, vocab: int, corpora: set[str]) -> None:
    dialog.algorithm.setCurrentText(next(k for k in ALGORITHMS if k.startswith(prefix)))
    dialog.vocab_size.setValue(vocab)
    for i in range(dialog.corpus.count()):
        item = dialog.corpus.item(i)
        name = item.data(Qt.ItemDataRole.UserRole).rsplit("/", 1)[-1]
        item.setCheckState(Qt.CheckState.Checked if name in corpora
                           else Qt.CheckState.Unchecked)


@pytest.fixture()
def dialog(qtbot):
    d = TrainingDialog()
    qtbot.addWidget(d)
    yield d
    d.cancel()


def test_bundled_corpus_is_offered(dialog):
    names = {p.name for p in bundled_corpora()}
    assert {"botchan.txt", "udhr_sample.txt"} <= names
    assert [p.name for p in dialog.corpus_files()] == ["botchan.txt"]


def test_bpe_training_runs_to_completion_and_plots(qtbot, dialog, tmp_path):
    _pick(dialog, "BPE (byte-level", 600, {"botchan.txt"})
    received = []
    dialog.tokenizer_ready.connect(received.append)
    with qtbot.waitSignal(dialog.finished_training, timeout=30000) as blocker:
        dialog.start()
        assert dialog.is_running() and not dialog.start_button.isEnabled()
    assert blocker.args == ["done"]
    assert dialog.model is not None and dialog.model.vocab_size == 600
    plots = dialog.plots
    dialog.show()  # hidden plots are drawn when they show
    dialog.tabs.setCurrentWidget(plots)
    # one point per merge: 600 tokens = 256 bytes + 344 merges
    assert len(plots.xa) == 344 and plots.xa[:3] == [1, 2, 3]
    x, y = plots.curve_a.xData, plots.curve_a.yData  # all points (drawn downsampled)
    assert len(x) == 344 and y[0] >= y[-1]  # pair counts fall as merges go on
    assert len(plots.curve_b.getData()[0]) >= 2 and plots.yb[-1] == 600
    assert "merge" in plots.log.toPlainText() and dialog.progress.value() == 100
    assert dialog.use_button.isEnabled() and dialog.start_button.isEnabled()

    dialog.use_button.click()
    assert len(received) == 1
    tok = received[0]
    text = "The school was a grand old building."
    ids = tok.encode(text).ids
    assert tok.decode(ids) == text and len(ids) < len(text)

    for ext in (".json", ".tiktoken"):
        path = dialog.save_to(tmp_path / f"trained{ext}")
        assert load_tokenizer(path).encode(text).ids == ids


def test_cancel_leaves_the_dialog_usable(qtbot, dialog, tmp_path):
    _pick(dialog, "Unigram", 8000, {"botchan.txt", "udhr_sample.txt"})
    dialog.start()
    qtbot.waitUntil(lambda: "EM round" in dialog.status.text()
                    or "Seeding" in dialog.status.text()
                    or "Counting" in dialog.status.text(), timeout=20000)
    with qtbot.waitSignal(dialog.finished_training, timeout=60000) as blocker:
        dialog.cancel_button.click()
    # Before EM there is nothing to keep; in EM the pieces so far are kept (usable).
    assert blocker.args in (["cancelled"], ["stopped"])
    kept = blocker.args == ["stopped"]
    assert not dialog.is_running() and (dialog.model is not None) == kept
    assert ("Stopped early" if kept else "cancelled") in dialog.status.text()
    assert dialog.start_button.isEnabled() and dialog.save_button.isEnabled() == kept
    assert list(tmp_path.iterdir()) == []
    status = dialog.status.text()
    qtbot.wait(200)  # anything the stopped worker had queued must not land
    assert dialog.status.text() == status

    # and a new run works
    _pick(dialog, "Unigram", 400, {"botchan.txt"})
    with qtbot.waitSignal(dialog.finished_training, timeout=30000) as blocker:
        dialog.start()
    assert blocker.args == ["done"]
    assert dialog.model is not None and dialog.model.vocab_size == 400
    plots = dialog.plots
    dialog.show()
    dialog.tabs.setCurrentWidget(plots)
    assert len(plots.xa) >= 2 and len(plots.xb) >= 1  # EM objective, pruning rounds
    assert plots.yb == sorted(plots.yb, reverse=True)  # vocabulary shrinks round by round
    assert "prune round" in plots.log.toPlainText()
    tok = dialog.trained_tokenizer()
    assert tok.supports_lattice()
    path = dialog.save_to(tmp_path / "u.model")
    assert load_tokenizer(path).encode("the cat").ids == tok.encode("the cat").ids


def test_no_corpus_and_bad_export(qtbot, dialog, tmp_path):
    _pick(dialog, "BPE (byte-level", 600, set())
    dialog.start()
    assert "at least one corpus" in dialog.status.text() and not dialog.is_running()
    with pytest.raises(Exception, match="no trained model"):
        dialog.save_to(tmp_path / "x.json")


def test_training_that_stops_short_says_why(qtbot, dialog):
    """Issue 18: BPE asked for more tokens than the corpus can give says why it stopped."""
    _pick(dialog, "BPE (byte-level", 262_144, {"udhr_sample.txt"})
    with qtbot.waitSignal(dialog.finished_training, timeout=120000) as blocker:
        dialog.start()
    assert blocker.args == ["done"]
    assert dialog.model.vocab_size < 262_144
    assert "not 262,144: no pair left to merge" in dialog.status.text()
