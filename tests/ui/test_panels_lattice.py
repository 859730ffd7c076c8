"""Unigram lattice panel: draws the engine's lattice, Viterbi path on top, n-best, marginals."""

from __future__ import annotations

import itertools

import pytest
from references import require

from explorer.engine.formats import load_tokenizer
from explorer.ui.panels.lattice import LatticePanel, NBestModel, summarize_lattice


@pytest.fixture(scope="module")
def botchan():
    """(reference sentencepiece processor, our tokenizer) of the same real Unigram model."""
    import sentencepiece as spm

    path = str(require("sentencepiece", "botchan_en_unigram_1000.model"))
    return spm.SentencePieceProcessor(model_file=path), load_tokenizer(path)


def test_panel_shows_the_engines_viterbi_path(qtbot, botchan):
    sp, model = botchan
    text = "hello world"
    lattice = model.lattice(text)
    assert lattice.sentence == "▁hello▁world"  # normalized: the lattice's own text
    expected_path, expected_score = model.lattice(text).viterbi()
    panel = LatticePanel()
    qtbot.addWidget(panel)
    panel.set_lattice(lattice, nbest=5)
    canvas = panel.canvas
    best = canvas.summary.best
    assert [(n.pos, n.length, n.id) for n in best] == \
        [(n.pos, n.length, n.id) for n in expected_path]
    # and that is what sentencepiece itself produces for this text
    assert [n.piece for n in best] == sp.encode("hello world", out_type=str)
    # the Viterbi path is the top row, in order, boxes left to right without overlap
    assert all(canvas.row_of(n) == 0 for n in best)
    assert all(canvas.row_of(n) > 0 for n in canvas.nodes() if n not in best)
    rects = [canvas.node_rect(n) for n in best]
    assert all(a.right() <= b.left() for a, b in itertools.pairwise(rects))
    # every node is drawn, and no two boxes in a row overlap
    assert len(canvas.nodes()) == len(lattice.nodes) - 2
    by_row: dict[int, list] = {}
    for n in canvas.nodes():
        by_row.setdefault(canvas.row_of(n), []).append(n)
    for nodes in by_row.values():
        nodes.sort(key=lambda n: n.pos)
        assert all(a.end <= b.pos for a, b in itertools.pairwise(nodes))
    assert f"score {expected_score:.4f}" in panel.totals.text()


def test_nbest_list_and_selection(qtbot, botchan):
    sp, model = botchan
    text = "hello world"
    panel = LatticePanel()
    qtbot.addWidget(panel)
    panel.set_lattice(model.lattice(text), nbest=4)
    m = panel.nbest_model
    assert m.rowCount() == 4
    ref = sp.nbest_encode_as_pieces("hello world", 4)
    assert [[n.piece for n in m.path(r)] for r in range(4)] == ref
    assert m.data(m.index(0, 3)) == " | ".join(ref[0])
    scores = [float(m.data(m.index(r, 1))) for r in range(4)]
    assert scores == sorted(scores, reverse=True)
    panel.nbest.selectRow(2)
    assert panel.canvas.selected == m.path(2)


def test_marginals_and_entropy_are_the_lattices(qtbot, botchan):
    _, model = botchan
    lattice = model.lattice("the cat")
    summary = summarize_lattice(lattice, nbest=3)
    assert summary.marginals == pytest.approx(model.lattice("the cat").marginals())
    assert summary.entropy == pytest.approx(model.lattice("the cat").entropy())
    # marginals of the nodes covering any one character sum to 1
    for pos in range(lattice.size):
        covering = [n for n in lattice.nodes[2:] if n.pos <= pos < n.end]
        assert sum(summary.marginals[n.node_id] for n in covering) == pytest.approx(1.0)
    panel = LatticePanel()
    qtbot.addWidget(panel)
    panel.set_summary(summary)
    assert f"entropy {summary.entropy:.4f}" in panel.totals.text()


def test_nbest_model_passes_qtmodeltester(qtmodeltester, botchan):
    _, model = botchan
    m = NBestModel()
    m.set_paths(model.lattice("hello").nbest(3))
    qtmodeltester.check(m, force_py=True)


def test_clear_and_empty(qtbot, botchan):
    _, model = botchan
    panel = LatticePanel()
    qtbot.addWidget(panel)
    panel.set_lattice(model.lattice(""))
    assert panel.canvas.nodes() == []
    panel.clear("not a Unigram model")
    assert panel.title.text() == "not a Unigram model" and panel.nbest_model.rowCount() == 0
