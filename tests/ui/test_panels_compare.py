"""Comparison view: rows aligned, exactly the differing boundaries marked, counts side by side."""

from __future__ import annotations

import pytest
from references import require

from explorer.bundled import resource_path
from explorer.engine.compare import compare_boundaries
from explorer.engine.formats import load_tokenizer
from explorer.ui.panels.compare import MAX_DRAWN_CHARS, ComparePanel, CompareStatsModel

TEXT = "Hello world!!!  123456 don't\n\n  x"


@pytest.fixture(scope="module")
def cl100k():
    return load_tokenizer(resource_path("vocab/cl100k_base.tiktoken"))


@pytest.fixture(scope="module")
def o200k():
    return load_tokenizer(resource_path("vocab/o200k_base.tiktoken"))


@pytest.fixture(scope="module")
def botchan():
    return load_tokenizer(require("sentencepiece", "botchan_en_unigram_1000.model"))


def test_marks_exactly_the_differing_boundaries(qtbot, cl100k, o200k):
    panel = ComparePanel()
    qtbot.addWidget(panel)
    panel.resize(900, 400)
    encs = [cl100k.encode(TEXT), o200k.encode(TEXT)]
    panel.set_encodings(["cl100k", "o200k"], encs)
    rows = panel.rows
    # cl100k splits " don" + "'t", o200k keeps " don't": one bar, in the cl100k row only
    assert rows.marked_boundaries(0) == {TEXT.index("'")}
    assert rows.marked_boundaries(1) == set()
    for r, enc in enumerate(encs):
        assert rows.boxes(r) == enc.offsets  # one box per token, in order
    assert "1 boundary differ" in panel.title.text()
    m = panel.stats
    assert [m.data(m.index(r, 1)) for r in range(2)] == [str(len(e)) for e in encs]
    assert [m.data(m.index(r, 5)) for r in range(2)] == ["1", "0"]


def test_bpe_vs_unigram_on_a_worker(qtbot, cl100k, botchan):
    text = "The quick brown fox jumps over the lazy dog. Tokenizers disagree!"
    panel = ComparePanel()
    qtbot.addWidget(panel)
    panel.resize(700, 400)
    with qtbot.waitSignal(panel.compared, timeout=10000):
        panel.set_tokenizers([cl100k, botchan])  # starts encoding "" ...
        panel.set_text(text)  # ... which this request supersedes: only its result lands
    expected = compare_boundaries([cl100k.encode(text), botchan.encode(text)])
    assert expected.all_differing  # they do disagree somewhere
    for r in range(2):
        assert panel.rows.marked_boundaries(r) == set(expected.differing[r])
    assert panel.rows.boxes(1) == [s for s in botchan.encode(text).offsets if s[1] > s[0]]
    # narrow widget: segments wrap into several bands, marks stay exact
    panel.rows.resize(260, 10)
    panel.rows.heightForWidth(260)
    for r in range(2):
        assert panel.rows.marked_boundaries(r) == set(expected.differing[r])


def test_stats_model_passes_qtmodeltester(qtmodeltester, cl100k, o200k):
    model = CompareStatsModel()
    model.set_comparison(["a", "b"], compare_boundaries([cl100k.encode(TEXT),
                                                         o200k.encode(TEXT)]))
    qtmodeltester.check(model, force_py=True)


def test_long_text_draws_a_prefix_counts_everything(qtbot, cl100k, o200k):
    text = "word " * (MAX_DRAWN_CHARS // 2)
    panel = ComparePanel()
    qtbot.addWidget(panel)
    panel.set_encodings(["cl100k", "o200k"], [cl100k.encode(text), o200k.encode(text)])
    assert all(s < MAX_DRAWN_CHARS for s, _ in panel.rows.boxes(0))
    assert panel.stats.data(panel.stats.index(0, 1)) == f"{len(cl100k.encode(text)):,}"
    assert "characters drawn" in panel.title.text()


def test_no_tokenizers(qtbot):
    panel = ComparePanel()
    qtbot.addWidget(panel)
    panel.set_tokenizers([])
    assert panel.stats.rowCount() == 0 and "Pick two" in panel.title.text()


def test_huge_text_is_compared_up_to_the_limit(qtbot, cl100k, o200k):
    from explorer.ui.panels.compare import MAX_COMPARED_CHARS

    panel = ComparePanel()
    qtbot.addWidget(panel)
    with qtbot.waitSignal(panel.compared, timeout=60000):
        panel.set_tokenizers([cl100k, o200k])
        panel.set_text("ab " * (MAX_COMPARED_CHARS // 3 + 10))
    assert panel.rows.comparison.text == ("ab " * (MAX_COMPARED_CHARS // 3 + 10))[
        :MAX_COMPARED_CHARS]
    assert "only the first" in panel.title.text()
