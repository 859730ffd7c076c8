"""Corpus statistics view: several tokenizers over a corpus, per script, with plots.

Choose tokenizers (the current one, the bundled ones, any loaded or opened file) and a corpus
(the bundled multilingual samples, the editor's text, or files of any size), then *Run*. The
engine's :func:`~explorer.engine.stats.run.corpus_stats` runs on a worker (progress, *Cancel*;
big corpora use a process pool); the tables (per tokenizer, per script, per file) export as
CSV and two pyqtgraph plots show characters per token by script (bars per tokenizer) and the
token-length histograms.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QMenu,
    QProgressBar,
    QPushButton,
    QSplitter,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from explorer.bundled import resource_path
from explorer.engine.formats import load_tokenizer
from explorer.engine.stats import CorpusSource, CorpusStats, Progress, corpus_stats
from explorer.engine.stats.report import summary, to_csv
from explorer.engine.stats.run import default_workers
from explorer.engine.tokenizer import Tokenizer
from explorer.ui.panels.docking import ShownPanel
from explorer.ui.panels.registry import PanelHost, register_panel
from explorer.ui.panels.table_export import ask_export_path, result_table, write_export
from explorer.ui.plot_slot import PlotSlot
from explorer.ui.table_model import HeaderTableModel
from explorer.workers.latest import LatestRunner

if TYPE_CHECKING:
    from explorer.ui.grouped_bars import GroupedBars

_Index = QModelIndex | QPersistentModelIndex
POOL_MIN_BYTES = 4_000_000
"""Corpora smaller than this run in the worker thread (a process pool costs a second)."""
MAX_LENGTH_SHOWN = 16
CORPUS_BUNDLED, CORPUS_EDITOR, CORPUS_FILES = "bundled", "editor", "files"


def bundled_corpus() -> list[CorpusSource]:
    """The bundled multilingual samples: ``resources/samples`` and ``resources/corpus``."""
    out = []
    for folder in ("samples", "corpus"):
        for p in sorted(resource_path(folder).glob("*.txt")):
            out.append(CorpusSource.file(p))
    return out


def stats_job(tokenizers: Sequence[tuple[str, Tokenizer | Path]],
              sources: Sequence[CorpusSource]) -> Generator[Any, None, CorpusStats]:
    """Worker job: load the tokenizers not loaded yet, then run the statistics."""
    loaded: list[Tokenizer] = []
    for name, tok in tokenizers:
        if isinstance(tok, Path):
            yield f"loading {name}"
            tok = load_tokenizer(tok)
        loaded.append(tok)
    size = sum(s.size() for s in sources)
    workers = default_workers() if size >= POOL_MIN_BYTES else 1
    return (yield from corpus_stats(loaded, sources, names=[n for n, _ in tokenizers],
                                    workers=workers))


class SummaryTable(HeaderTableModel):
    """One row per tokenizer."""

    HEADERS = ("tokenizer", "tokens", "bytes/token", "chars/token", "words/token",
               "unknown+byte", "vocabulary used", "top tokens")

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.rows: list[dict[str, Any]] = []

    def set_stats(self, stats: CorpusStats | None) -> None:
        """Show ``stats``."""
        self.beginResetModel()
        self.rows = [] if stats is None else [summary(stats, k, top=8)
                                              for k in range(len(stats.names))]
        self.endResetModel()

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008 - Qt idiom
        return 0 if parent.isValid() else len(self.rows)

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self.rows):
            return None
        r = self.rows[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            top = "  ".join(f"{t['piece']}×{t['count']}" for t in r["top_tokens"])
            return (r["name"], f"{r['tokens']:,}", f"{r['bytes_per_token']:.2f}",
                    f"{r['chars_per_token']:.2f}", f"{r['words_per_token']:.2f}",
                    f"{100 * r['unknown_rate']:.2f}%",
                    f"{r['vocab_used']:,} ({100 * r['vocab_share']:.1f}%)",
                    top)[index.column()]
        if role == Qt.ItemDataRole.TextAlignmentRole and 0 < index.column() < 7:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None


class BreakdownTable(HeaderTableModel):
    """Characters per token by script (or by file), one column per tokenizer."""

    def __init__(self, key: str, title: str, parent: Any = None) -> None:
        super().__init__(parent)
        self.key, self.title = key, title
        self.HEADERS = (title, "chars")
        self.rows: list[tuple[str, int, list[str]]] = []

    def set_stats(self, stats: CorpusStats | None) -> None:
        """Show ``stats``'s breakdown."""
        self.beginResetModel()
        self.rows = []
        if stats is not None:
            sums = [summary(stats, k)[self.key] for k in range(len(stats.names))]
            self.HEADERS = (self.title, "chars", *stats.names)
            keys = sorted({s for d in sums for s in d},
                          key=lambda s: -max(d.get(s, {"chars": 0})["chars"] for d in sums))
            for s in keys:
                chars = max(d.get(s, {"chars": 0})["chars"] for d in sums)
                cells = [(f"{d[s]['tokens']:,} ({d[s]['chars_per_token']:.2f})" if s in d
                          else "–") for d in sums]
                self.rows.append((s, chars, cells))
        self.endResetModel()

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008 - Qt idiom
        return 0 if parent.isValid() else len(self.rows)

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self.rows):
            return None
        name, chars, cells = self.rows[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            return [name, f"{chars:,}", *cells][index.column()]
        if role == Qt.ItemDataRole.TextAlignmentRole and index.column() > 0:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None


def _bars(title: str) -> Callable[[QWidget], QWidget]:
    """Builds a :class:`~explorer.ui.grouped_bars.GroupedBars` plot (imports pyqtgraph)."""

    def make(parent: QWidget) -> QWidget:
        from explorer.ui.grouped_bars import GroupedBars

        return GroupedBars(title, parent)

    return make


class StatsPanel(QWidget):
    """Tokenizer and corpus choice, run/cancel, tables, plots."""

    finished = Signal()
    """A result is on screen (tests wait for it)."""
    run_requested = Signal()
    """*Run* was clicked (the glue gathers the tokenizers and the corpus)."""
    vocab_file_added = Signal(str)
    """A vocabulary file was picked with *Add a vocabulary file…* (its path)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.runner = LatestRunner(owner=self)
        self.stats: CorpusStats | None = None
        self.files: list[Path] = []
        self.choose = QToolButton(self)
        self.choose.setText("Tokenizers")
        self.choose.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.choose_menu = QMenu(self.choose)
        self.choose.setMenu(self.choose_menu)
        self.corpus = QComboBox(self)
        self.corpus.addItem("Bundled multilingual samples", CORPUS_BUNDLED)
        self.corpus.addItem("Editor text", CORPUS_EDITOR)
        self.corpus.addItem("Files…", CORPUS_FILES)
        self.corpus.activated.connect(self._on_corpus)
        self.run_button = QPushButton("Run", self)
        self.cancel_button = QPushButton("Cancel", self)
        self.cancel_button.setEnabled(False)
        self.progress = QProgressBar(self)
        self.progress.setRange(0, 1000)
        self.progress.setVisible(False)
        self.export_button = QPushButton("Export CSV…", self)
        self.export_button.setEnabled(False)
        self.status = QLabel("Choose tokenizers and a corpus, then Run.", self)
        self.status.setWordWrap(True)
        self.run_button.clicked.connect(self.run_requested.emit)
        self.cancel_button.clicked.connect(self.cancel)
        self.export_button.clicked.connect(self._export)

        self.summary = SummaryTable(self)
        self.scripts = BreakdownTable("by_script", "script", self)
        self.by_file = BreakdownTable("by_file", "file", self)
        self.script_slot = PlotSlot(_bars("characters per token, by script"))
        self.length_slot = PlotSlot(_bars("token length (characters): share of tokens, %"))
        plots = QSplitter(Qt.Orientation.Horizontal, self)
        plots.addWidget(self.script_slot)
        plots.addWidget(self.length_slot)
        plots.setSizes([600, 400])
        tables = QSplitter(Qt.Orientation.Horizontal, self)
        tables.addWidget(result_table(self.scripts, self))
        tables.addWidget(result_table(self.by_file, self))
        split = QSplitter(Qt.Orientation.Vertical, self)
        split.addWidget(result_table(self.summary, self))
        split.addWidget(plots)
        split.addWidget(tables)
        split.setSizes([110, 260, 150])
        bar = QHBoxLayout()
        for w in (self.choose, self.corpus, self.run_button, self.cancel_button, self.progress):
            bar.addWidget(w)
        bar.addWidget(self.status, 1)
        bar.addWidget(self.export_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(bar)
        layout.addWidget(split, 1)

    @property
    def script_plot(self) -> GroupedBars:
        """Characters per token by script (built, with pyqtgraph, when first asked for)."""
        return cast("GroupedBars", self.script_slot.plot())

    @property
    def length_plot(self) -> GroupedBars:
        """The token-length histograms (built when first asked for)."""
        return cast("GroupedBars", self.length_slot.plot())

    # --- choices --------------------------------------------------------------------------
    def set_choices(self, choices: Sequence[tuple[str, str]], checked: Sequence[str]) -> None:
        """Offer ``(source, label)`` tokenizers, ``checked`` ticked (kept when re-offered)."""
        before = {a.data(): a.isChecked() for a in self.choose_menu.actions() if a.isCheckable()}
        self.choose_menu.clear()
        for source, label in choices:
            action = self.choose_menu.addAction(label)
            action.setCheckable(True)
            action.setChecked(before.get(source, source in checked))
            action.setData(source)
        self.choose_menu.addSeparator()
        self.choose_menu.addAction("Add a vocabulary file…").triggered.connect(self._add_file)

    def _add_file(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self, "Add a vocabulary file", "",
            "Vocabularies (*.tiktoken *.json *.model *.gguf);;All files (*)")
        if path:
            self.vocab_file_added.emit(path)

    def chosen(self) -> list[str]:
        """Ticked tokenizer sources, in menu order."""
        return [a.data() for a in self.choose_menu.actions()
                if a.isCheckable() and a.isChecked()]

    def corpus_kind(self) -> str:
        """``bundled``, ``editor`` or ``files``."""
        return str(self.corpus.currentData())

    def _on_corpus(self, _index: int) -> None:
        if self.corpus_kind() == CORPUS_FILES:
            paths, _ = QFileDialog.getOpenFileNames(self, "Corpus files (each may be a "
                                                          "language)", "",
                                                    "Text files (*.txt);;All files (*)")
            if paths:
                self.set_files([Path(p) for p in paths])
            elif not self.files:
                self.corpus.setCurrentIndex(0)

    def set_files(self, paths: Sequence[Path]) -> None:
        """Use these files as the corpus."""
        self.files = list(paths)
        self.corpus.setCurrentIndex(self.corpus.findData(CORPUS_FILES))
        self.corpus.setItemText(self.corpus.currentIndex(),
                                f"Files: {', '.join(p.name for p in self.files)}")

    # --- running --------------------------------------------------------------------------
    def run(self, tokenizers: Sequence[tuple[str, Tokenizer | Path]],
            sources: Sequence[CorpusSource]) -> None:
        """Run the statistics on a worker."""
        if not tokenizers:
            self.status.setText("Tick at least one tokenizer.")
            return
        if not sources:
            self.status.setText("The corpus is empty.")
            return
        self.progress.setValue(0)
        self.progress.setVisible(True)
        self.cancel_button.setEnabled(True)
        self.run_button.setEnabled(False)
        self.status.setText(f"Counting with {len(tokenizers)} tokenizers…")
        self.runner.submit(stats_job, list(tokenizers), list(sources),
                           on_yield=self._on_progress, on_return=self.set_stats,
                           on_error=lambda e: self._done(f"Could not compute: {e}"))

    def cancel(self) -> None:
        """Stop the running statistics (the job stops at its next shard)."""
        if self.runner.current is not None:
            self.runner.cancel()
            self._done("Cancelled.")

    def _on_progress(self, p: Any) -> None:
        if isinstance(p, Progress):
            self.progress.setValue(int(1000 * p.done / p.total) if p.total else 0)
            self.status.setText(f"{p.done / 1e6:,.2f} of {p.total / 1e6:,.2f} MB")
        else:
            self.status.setText(str(p))

    def _done(self, message: str) -> None:
        self.progress.setVisible(False)
        self.cancel_button.setEnabled(False)
        self.run_button.setEnabled(True)
        self.status.setText(message)

    def set_stats(self, stats: CorpusStats) -> None:
        """Show a result: tables and plots."""
        self.stats = stats
        for model in (self.summary, self.scripts, self.by_file):
            model.set_stats(stats)
        sums = [summary(stats, k) for k in range(len(stats.names))]
        scripts = [s for s, _, _ in self.scripts.rows if s != "Common"][:12]
        self.script_plot.set_bars(scripts, {
            d["name"]: [d["by_script"].get(s, {"chars_per_token": 0})["chars_per_token"]
                        for s in scripts] for d in sums})
        lengths = [str(n) for n in range(1, MAX_LENGTH_SHOWN + 1)]
        self.length_plot.set_bars(lengths, {
            d["name"]: [100 * d["length_histogram"].get(n, 0) / max(d["tokens"], 1)
                        for n in lengths] for d in sums})
        lines = stats.counts[0].lines if stats.counts else 0
        self._done(f"{lines:,} lines · {len(stats.files)} file"
                   f"{'s' if len(stats.files) != 1 else ''} · "
                   f"{stats.counts[0].chars if stats.counts else 0:,} characters")
        self.export_button.setEnabled(True)
        self.finished.emit()

    def _export(self) -> None:
        path = ask_export_path(self, "Export the statistics as CSV", "corpus_stats.csv", "csv")
        if path is not None:
            self.export(path)

    def export(self, path: Path) -> None:
        """Write the per-tokenizer table then the per-script table as CSV."""
        if self.stats is None:
            return
        write_export(path, to_csv(self.stats) + "\n" + to_csv(self.stats, by_script=True),
                     self.status)


class StatsDock(ShownPanel):
    """Offers the window's tokenizers, gathers the corpus, runs once when first shown."""

    DEFAULT_OTHERS = ("bundled:cl100k_base", "bundled:corpus_unigram_4k")

    def __init__(self, host: PanelHost) -> None:
        self.panel = StatsPanel()
        super().__init__(host, "stats", "Corpus Statistics", self.panel)
        self._ran = False
        self._files: list[str] = []
        self.panel.run_requested.connect(self.run)
        self.panel.vocab_file_added.connect(self.add_file)
        host.tokenizer_changed.connect(lambda _t: self.refresh())
        host.loader.loaded.connect(lambda _s, _t: self.refresh())

    def jobs_busy(self) -> bool:
        return self.panel.runner.current is not None

    def update_panel(self) -> None:
        """Offer the tokenizers the window has now; the first time, run."""
        self._offer()
        if not self._ran:
            self.run()

    def _offer(self) -> None:
        from explorer.ui.tokenizer_source import bundled_sources, source_label

        current = self.host.source
        loaded = self.host.loader.cached()
        sources = list(dict.fromkeys([*([current] if current else []), *bundled_sources(),
                                      *loaded, *self._files]))
        checked = [current, *self.DEFAULT_OTHERS, *self._files]
        self.panel.set_choices([(s, source_label(s)) for s in sources], checked)

    def add_file(self, path: str) -> None:
        """Offer (ticked) a vocabulary file that is not loaded in the window; it is loaded on
        the worker when the statistics run."""
        if path not in self._files:
            self._files.append(path)
        self._offer()

    def corpus(self) -> list[CorpusSource]:
        """The chosen corpus."""
        kind = self.panel.corpus_kind()
        if kind == CORPUS_EDITOR:
            return [CorpusSource.memory("editor", self.host.text())]
        if kind == CORPUS_FILES and self.panel.files:
            return [CorpusSource.file(p) for p in self.panel.files]
        return bundled_corpus()

    def run(self) -> None:
        """Run with the ticked tokenizers over the chosen corpus."""
        from explorer.ui.tokenizer_source import source_label, source_path

        self._ran = True
        if not self.panel.choose_menu.actions():
            self._offer()
        loaded = self.host.loader.cached()
        tokenizers: list[tuple[str, Tokenizer | Path]] = []
        for source in self.panel.chosen():
            tok: Tokenizer | Path | None = loaded.get(source)
            if tok is None and source == self.host.source:
                tok = self.host.tokenizer
            if tok is None and not source.startswith("trained:"):
                tok = source_path(source)
            if tok is not None:
                tokenizers.append((source_label(source), tok))
        self.panel.run(tokenizers, self.corpus())


@register_panel("stats", order=61)
def install_stats_panel(host: PanelHost) -> StatsDock:
    """Dock the corpus statistics view (``--view stats``)."""
    return StatsDock(host)
