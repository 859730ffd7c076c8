"""Parity and corpus statistics panels: real vocabularies, workers, cancel, export, and the
real window's ``--view parity`` / ``--view stats`` screenshots."""

from __future__ import annotations

import csv
import importlib.util
import io
import json
from pathlib import Path

import pytest
from PySide6.QtGui import QImage
from references import require

from explorer.bundled import resource_path
from explorer.engine.formats import load_tokenizer
from explorer.engine.pretokenizers import patterns
from explorer.engine.stats import CorpusSource, corpus_stats
from explorer.engine.stats.report import to_dict
from explorer.ui.panels.parity import ParityPanel
from explorer.ui.panels.stats import StatsPanel

TEXT = "Hello world 2000000 and 1234567!"


@pytest.fixture(scope="module")
def possessive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    obj = json.loads(resource_path("vocab/corpus_bpe_4k.json").read_text(encoding="utf-8"))
    obj["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [
        {"type": "Split", "pattern": {"Regex": patterns.CL100K}, "behavior": "Isolated",
         "invert": False},
        {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
         "use_regex": False}]}
    path = tmp_path_factory.mktemp("panels") / "possessive.json"
    path.write_text(json.dumps(obj), encoding="utf-8")
    return path


def _checked_panel(qtbot, path: Path, text: str) -> ParityPanel:
    panel = ParityPanel()
    qtbot.addWidget(panel)
    panel.resize(1000, 600)
    panel.show()
    with qtbot.waitSignal(panel.checked, timeout=20000):
        panel.check(path, load_tokenizer(path), text)
    return panel


def test_parity_rows_spans_and_stage(qtbot, possessive: Path) -> None:
    panel = _checked_panel(qtbot, possessive, TEXT)
    assert panel.rows.names == ["explorer (this engine)", "HF tokenizers",
                                "tiktoken (from tokenizer.json)"]
    assert panel.rows.outlined(0) == [(17, 19)]
    assert panel.rows.outlined(1) == []
    assert panel.rows.outlined(2) == [(17, 18), (18, 19)]
    assert "first differing token: #8 (tiktoken (from tokenizer.json))" in panel.title.text()
    m = panel.spans
    assert m.rowCount() == 1
    row = [m.data(m.index(0, c)) for c in range(m.columnCount())]
    assert row[:8] == ["tiktoken (from tokenizer.json)", "17–19", "00", "00", "0 | 0",
                       "pre-tokenization", "2000000", "(not exposed)"]


def test_parity_whole_file_export_and_cancel(qtbot, possessive: Path, tmp_path: Path) -> None:
    panel = _checked_panel(qtbot, possessive, "abc")
    assert panel.title.text().endswith("all implementations agree")
    corpus = tmp_path / "lines.txt"
    corpus.write_text("plain\nthe year 1000000\nmore plain text\n", encoding="utf-8")
    with qtbot.waitSignal(panel.file_checked, timeout=20000):
        panel.check_file(corpus)
    assert panel.lines.rowCount() == 1
    assert panel.lines.data(panel.lines.index(0, 0)) == "2"
    assert "tiktoken (from tokenizer.json): 1" in panel.file_status.text()
    panel.export(tmp_path / "out.csv", "csv")
    panel.export(tmp_path / "out.json", "json")
    rows = list(csv.DictReader(io.StringIO((tmp_path / "out.csv").read_text("utf-8"))))
    assert [(r["line"], r["stage"]) for r in rows] == [("2", "pre-tokenization")]
    assert json.loads((tmp_path / "out.json").read_text("utf-8"))["lines"] == 3
    big = tmp_path / "big.txt"
    big.write_text("the year 1000000 and more words here\n" * 20000, encoding="utf-8")
    panel.check_file(big)
    worker = panel.file_runner.current
    assert worker is not None and panel.cancel_button.isEnabled()
    panel.cancel_file()
    assert worker.wait(20)
    assert panel.file_status.text() == "Cancelled." and not panel.progress.isVisible()
    assert panel.file_runner.current is None


def test_missing_reference_listed_with_pip(qtbot) -> None:
    path = require("llama-cpp", "ggml-vocab-gpt-2.gguf")
    panel = _checked_panel(qtbot, path, "Hello world")
    if importlib.util.find_spec("llama_cpp") is not None:  # installed: it is a row
        assert panel.rows.names[1] == "llama.cpp"
        return
    assert "pip install llama-cpp-python" in panel.missing.text()
    assert panel.rows.names == ["explorer (this engine)", "transformers (GGUF)"]
    assert panel.title.text().endswith("all implementations agree")


def test_gguf_divergence_shown_with_its_stage(qtbot) -> None:
    """StarCoder's GGUF through transformers' conversion (no split regex for its
    ``tokenizer.ggml.pre``): the differing span outlined, its stage and both outputs."""
    path = require("llama-cpp", "ggml-vocab-starcoder.gguf")
    panel = _checked_panel(qtbot, path, "ied 4 ½ months")
    names = panel.rows.names  # llama.cpp, where installed, is a row agreeing with ours
    assert names[0] == "explorer (this engine)" and "transformers (GGUF)" in names
    assert panel.rows.outlined(0) == [(5, 6), (6, 7)]  # ' ' then '½' (its two bytes)
    theirs = names.index("transformers (GGUF)")
    assert panel.rows.outlined(theirs) == [(5, 7), (6, 7)]  # "ĠÂ" crosses into "½", then "½"
    assert "first differing token: #3 (transformers (GGUF))" in panel.title.text()
    m = panel.spans
    assert m.rowCount() == 1
    row = [m.data(m.index(0, c)) for c in range(m.columnCount())]
    assert row[0] == "transformers (GGUF)"
    assert row[5:8] == ["pre-tokenization", "Ġ | Â½", "ĠÂ½"]


def _run_stats(qtbot, panel: StatsPanel, tokenizers, sources) -> None:
    with qtbot.waitSignal(panel.finished, timeout=60000):
        panel.run(tokenizers, sources)


def test_stats_panel_tables_plots_export(qtbot, tmp_path: Path) -> None:
    panel = StatsPanel()
    qtbot.addWidget(panel)
    panel.resize(1100, 700)
    cl100k = load_tokenizer(resource_path("vocab/cl100k_base.tiktoken"))
    sources = [CorpusSource.file(resource_path("samples/multilingual.txt")),
               CorpusSource.file(resource_path("samples/welcome.txt"))]
    _run_stats(qtbot, panel, [("cl100k", cl100k),
                              ("unigram", resource_path("vocab/corpus_unigram_4k.model"))],
               sources)
    job = corpus_stats([cl100k, load_tokenizer(resource_path("vocab/corpus_unigram_4k.model"))],
                       sources, workers=1, names=["cl100k", "unigram"])
    try:
        while True:
            next(job)
    except StopIteration as stop:
        expected = to_dict(stop.value)["tokenizers"]
    m = panel.summary
    assert [m.data(m.index(r, 0)) for r in range(2)] == ["cl100k", "unigram"]
    assert [m.data(m.index(r, 1)) for r in range(2)] == [f"{e['tokens']:,}" for e in expected]
    scripts = [r[0] for r in panel.scripts.rows]
    assert {"Latin", "Cyrillic", "CJK", "Arabic"} <= set(scripts)
    assert {r[0] for r in panel.by_file.rows} == {"multilingual.txt", "welcome.txt"}
    assert set(panel.script_plot.series) == {"cl100k", "unigram"}
    latin = scripts.index("Latin") if "Latin" in scripts else 0
    assert panel.script_plot.series["cl100k"][latin] == \
        expected[0]["by_script"]["Latin"]["chars_per_token"]
    panel.export(tmp_path / "stats.csv")
    text = (tmp_path / "stats.csv").read_text("utf-8")
    assert text.startswith("tokenizer,tokens,") and "tokenizer,script," in text


def test_stats_panel_cancels(qtbot) -> None:
    panel = StatsPanel()
    qtbot.addWidget(panel)
    text = resource_path("corpus/udhr_sample.txt").read_text("utf-8") * 3
    panel.run([("bpe", resource_path("vocab/corpus_bpe_4k.json"))],
              [CorpusSource.memory("big", text)])
    worker = panel.runner.current
    assert worker is not None
    qtbot.waitUntil(lambda: "MB" in panel.status.text(), timeout=20000)
    panel.cancel()
    assert worker.wait(20)
    assert panel.status.text() == "Cancelled." and panel.run_button.isEnabled()
    assert panel.stats is None


@pytest.mark.parametrize("view", ["parity", "stats"])
def test_window_screenshot_views(qtbot, window, tmp_path: Path, possessive: Path,
                                 view: str) -> None:
    """``--screenshot OUT.png --view parity|stats`` in the real window, in-process."""
    from explorer.ui.app import take_screenshot

    if view == "parity":
        window.open_source(str(possessive))
        qtbot.waitUntil(lambda: window.source == str(possessive), timeout=20000)
    window.set_text(TEXT + "\nПривет, мир! 日本語\n")
    if view == "stats":  # the editor's text as the corpus: quick in a test
        glue = window.panel_objects["stats"]
        glue.panel.corpus.setCurrentIndex(glue.panel.corpus.findData("editor"))
    out = tmp_path / f"{view}.png"
    assert take_screenshot(window, out, view) == 0
    image = QImage(str(out))
    assert image.width() > 600
    colors = {image.pixel(x, y) for x in range(0, image.width(), 5)
              for y in range(image.height() // 2, image.height(), 5)}
    assert len(colors) > 30  # red outlines and token chips, or coloured bars
    glue = window.panel_objects[view]
    if view == "parity":  # the tiktoken row differs on the digit run
        assert glue.panel.rows.outlined(2) == [(17, 18), (18, 19)]
    else:
        stats = glue.panel.stats
        assert glue.panel.summary.rowCount() == 2 and stats is not None
        assert stats.files == ["editor"] and stats.counts[0].lines == 2


def test_stats_runs_a_vocabulary_file_not_loaded_in_the_window(qtbot, window,
                                                                 tmp_path: Path) -> None:
    vocab = tmp_path / "my_vocab.json"
    vocab.write_bytes(resource_path("vocab/corpus_bpe_4k.json").read_bytes())
    glue = window.panel_objects["stats"]
    panel = glue.panel
    panel.corpus.setCurrentIndex(panel.corpus.findData("editor"))
    glue.add_file(str(vocab))
    assert str(vocab) in panel.chosen()
    assert panel.choose_menu.actions()[-1].text() == "Add a vocabulary file…"
    with qtbot.waitSignal(panel.finished, timeout=30000):
        glue.run()
    assert panel.stats is not None and "my_vocab.json" in panel.stats.names
    assert panel.stats.files == ["editor"]
