"""Merge-queue panel: steps through real traces and shows the engine's symbols at each step."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from explorer.bundled import resource_path
from explorer.engine.bpe import BytePairModel
from explorer.engine.formats import load_tokenizer
from explorer.ui.panels.chips import symbol_label
from explorer.ui.panels.merge_queue import MergeQueueModel, MergeQueuePanel

# minbpe's Wikipedia example: training "aaabdaaabac" for 3 merges gives aa=256, aaa=257,
# aaab=258, and the text encodes to [258, 100, 258, 97, 99].
MINBPE_RANKS = {bytes([b]): b for b in range(256)} | {b"aa": 256, b"aaa": 257, b"aaab": 258}


@pytest.fixture()
def minbpe_trace():
    model = BytePairModel(MINBPE_RANKS)
    return list(model.encode_trace(b"aaabdaaabac"))


@pytest.fixture(scope="module")
def cl100k():
    return load_tokenizer(resource_path("vocab/cl100k_base.tiktoken"))


def test_panel_shows_each_step_of_the_minbpe_example(qtbot, minbpe_trace):
    panel = MergeQueuePanel()
    qtbot.addWidget(panel)
    panel.set_trace(minbpe_trace, "aaabdaaabac", token_id=MINBPE_RANKS.get)
    assert panel.step_count == len(minbpe_trace)
    assert panel.symbols.labels() == list("aaabdaaabac")
    assert panel.final.labels() == ["aaab", "d", "aaab", "a", "c"]
    assert [c.caption for c in panel.final.chips] == ["258", "100", "258", "97", "99"]

    panel.step_forward()  # pop aa at node 0
    assert panel.symbols.labels() == ["aa", "a", "b", "d", "a", "a", "a", "b", "a", "c"]
    assert [c.highlight for c in panel.symbols.chips][:2] == [True, False]
    assert panel.model.state(0) == "popped"
    assert [panel.model.data(panel.model.index(0, c)) for c in range(4)] == ["a", "a", "aa", "256"]
    assert "a + a → aa" in panel.step_label.text()

    panel.step_forward()  # the overlapping aa at node 1 is stale now
    assert panel.model.state(0) == "popped (stale, skipped)"
    assert "stale" in panel.step_label.text()
    assert panel.symbols.labels()[0] == "aa"

    for i, step in enumerate(minbpe_trace):  # every step, also backwards
        panel.set_position(i)
        assert panel.symbols.labels() == [symbol_label(s) for s in step.symbols]
        queued = [panel.model.entry(r) for r in range(panel.model.rowCount())]
        assert queued == ([step.popped] if step.popped else []) + list(step.queue)
    panel.set_position(0)
    panel.last_button.click()
    assert panel.position == len(minbpe_trace) - 1
    assert panel.symbols.labels() == ["aaab", "d", "aaab", "a", "c"]
    assert not panel.forward_button.isEnabled()
    panel.back_button.click()
    assert panel.position == len(minbpe_trace) - 2
    panel.first_button.click()
    assert panel.position == 0 and not panel.back_button.isEnabled()


def test_play_runs_to_the_end(qtbot, minbpe_trace, monkeypatch):
    panel = MergeQueuePanel()
    qtbot.addWidget(panel)
    panel._timer.setInterval(1)
    panel.set_trace(minbpe_trace)
    panel.play_button.click()
    qtbot.waitUntil(lambda: panel.position == panel.step_count - 1, timeout=5000)
    qtbot.waitUntil(lambda: not panel.play_button.isChecked(), timeout=5000)


def test_real_cl100k_word(qtbot, cl100k):
    word = " tokenization"
    steps = list(cl100k.trace_merges(word))
    panel = MergeQueuePanel()
    qtbot.addWidget(panel)
    panel.set_trace(steps, repr(word), token_id=cl100k.token_id)
    expected = cl100k.encode(word)
    assert [int(c.caption) for c in panel.final.chips] == expected.ids
    assert panel.final.labels() == ["·token", "ization"]
    panel.set_position(1)
    assert panel.symbols.labels()[0] == "·t"  # rank 259: " t", the first merge
    assert panel.model.data(panel.model.index(0, 3)) == "259"


def test_whole_token_lookup_is_said(qtbot, cl100k):
    steps = list(cl100k.trace_merges(" hello"))
    panel = MergeQueuePanel()
    qtbot.addWidget(panel)
    panel.set_trace(steps, token_id=cl100k.token_id)
    assert steps[-1].whole_token
    assert panel.final.labels() == ["·hello"]
    assert [c.caption for c in panel.final.chips] == [str(cl100k.encode(" hello").ids[0])]
    assert "one vocabulary entry" in panel.final_label.text()


def test_queue_model_passes_qtmodeltester(qtmodeltester, minbpe_trace):
    model = MergeQueueModel()
    model.set_step(minbpe_trace[2])
    qtmodeltester.check(model, force_py=True)
    assert model.headerData(4, Qt.Orientation.Horizontal) == "state"


def test_empty_trace(qtbot):
    panel = MergeQueuePanel()
    qtbot.addWidget(panel)
    panel.clear("No BPE here")
    assert panel.title.text() == "No BPE here" and panel.symbols.labels() == []
    assert not panel.play_button.isEnabled()


def test_partial_utf8_symbols_are_hex_never_replacement_chars(qtbot, cl100k):
    steps = list(cl100k.trace_merges(" 🙂"))
    panel = MergeQueuePanel()
    qtbot.addWidget(panel)
    panel.set_trace(steps, token_id=cl100k.token_id)
    assert panel.symbols.labels() == ["·", "⟨F0⟩", "⟨9F⟩", "⟨99⟩", "⟨82⟩"]
    labels = [label for step in range(panel.step_count)
              for label in (panel.set_position(step) or panel.symbols.labels())]
    assert "\ufffd" not in "".join(labels)
    assert [int(c.caption) for c in panel.final.chips] == cl100k.encode(" 🙂").ids
