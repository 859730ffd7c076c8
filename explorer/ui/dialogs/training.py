"""Training dialog: train a BPE or Unigram tokenizer on a corpus while watching it learn.

Choose the algorithm, vocabulary size, advanced options (:mod:`.training_options`) and corpus
(the bundled ``resources/corpus`` texts or your own files), press Start: the engine's trainer
(:func:`explorer.engine.trainers.train`, a generator of events) runs on a worker, and its
events feed live plots and a log (:class:`~explorer.ui.dialogs.training_plots.TrainingPlots`).
Cancel stops the trainer at its
next event; training writes no files, so nothing is left half-written, and the dialog is ready
for another run. When training finishes, "Use this tokenizer" emits :attr:`tokenizer_ready`
with the trained :class:`~explorer.engine.tokenizer.Tokenizer` and "Save as…" exports it
(``.json`` tokenizer.json, ``.model`` SentencePiece, ``.tiktoken`` for byte-level BPE).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from PySide6.QtCore import QSize, Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from explorer.engine.errors import Cancelled, TokenizerError
from explorer.engine.tokenizer import Tokenizer
from explorer.engine.trainers import (
    BpeConfig,
    BytesRead,
    Corpus,
    EmStep,
    MergeSummary,
    PhaseStarted,
    PruneStep,
    TrainEvent,
    TrainingDone,
    UnigramConfig,
    export,
    to_tokenizer,
)
from explorer.engine.trainers.models import TrainedModel, TrainedUnigram
from explorer.ui.dialogs.training_job import (
    ALGORITHMS,
    PHASES,
    REDRAW_MS,
    bundled_corpora,
    training_job,
)
from explorer.ui.dialogs.training_options import TrainingOptions
from explorer.ui.dialogs.training_plots import TrainingPlots
from explorer.workers.latest import LatestRunner


class TrainingDialog(QDialog):
    """Settings, Start/Cancel, progress, live plots, log, and what to do with the result."""

    tokenizer_ready = Signal(object)
    """The trained Tokenizer, when the user chooses "Use this tokenizer"."""
    finished_training = Signal(str)
    """``done``, ``cancelled`` or ``error``: a run ended (tests wait for it)."""

    def __init__(self, parent: QWidget | None = None, *, embedded: bool = False) -> None:
        """``embedded``: shown inside a dock of the main window (no Close button; Escape
        cancels a running training instead of hiding the dialog)."""
        super().__init__(parent)
        self.embedded = embedded
        if embedded:
            self.setWindowFlags(Qt.WindowType.Widget)
        self.setWindowTitle("Train a tokenizer")
        self.resize(900, 680)
        self.model: TrainedModel | None = None
        self._cancel = threading.Event()
        self._job = LatestRunner(owner=self)
        self._started = 0.0

        self.algorithm = QComboBox(self)
        self.algorithm.addItems(list(ALGORITHMS))
        self.vocab_size = QSpinBox(self)
        self.vocab_size.setRange(300, 262_144)
        self.vocab_size.setSingleStep(500)
        self.vocab_size.setValue(2000)
        self.corpus = QListWidget(self)
        self.corpus.setMaximumHeight(60)
        for path in bundled_corpora():
            self._add_corpus_item(path, checked=path.name == "botchan.txt")
        self.add_files = QPushButton("Add files…", self)
        self.add_files.clicked.connect(self._choose_files)

        self.options = TrainingOptions(self)
        self.algorithm.currentTextChanged.connect(
            lambda text: self.options.show_for(ALGORITHMS[text][0]))

        form = QFormLayout()
        form.addRow("Algorithm", self.algorithm)
        # The advanced options share the vocabulary row: the dock has little height to spare.
        size_row = QHBoxLayout()
        size_row.addWidget(self.vocab_size)
        size_row.addSpacing(16)
        size_row.addWidget(self.options, 1)
        form.addRow("Vocabulary size", size_row)
        corpus_row = QHBoxLayout()
        corpus_row.addWidget(self.corpus, 1)
        corpus_row.addWidget(self.add_files, 0, Qt.AlignmentFlag.AlignTop)
        form.addRow("Corpus", corpus_row)

        self.start_button = QPushButton("Start", self)
        self.start_button.setDefault(True)
        self.cancel_button = QPushButton("Cancel training", self)
        self.use_button = QPushButton("Use this tokenizer", self)
        self.save_button = QPushButton("Save as…", self)
        self.close_button = QPushButton("Close", self)
        self.start_button.clicked.connect(self.start)
        self.cancel_button.clicked.connect(self.cancel)
        self.use_button.clicked.connect(self.use_tokenizer)
        self.save_button.clicked.connect(self._choose_save_path)
        self.close_button.clicked.connect(self.reject)
        buttons = QHBoxLayout()
        for b in (self.start_button, self.cancel_button):
            buttons.addWidget(b)
        buttons.addStretch(1)
        for b in (self.use_button, self.save_button, self.close_button):
            buttons.addWidget(b)

        self.progress = QProgressBar(self)
        self.progress.setRange(0, 100)
        self.status = QLabel("Choose settings and press Start.", self)
        self.plots = TrainingPlots(self)

        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addLayout(buttons)
        layout.addWidget(self.progress)
        layout.addWidget(self.status)
        layout.addWidget(self.plots, 1)

        self._redraw = QTimer(self)
        self._redraw.setInterval(REDRAW_MS)
        self._redraw.timeout.connect(self.plots.flush)
        self.close_button.setVisible(not embedded)
        self._set_running(False)

    def sizeHint(self) -> QSize:
        """Embedded in a dock: no taller than the window's own bottom panels."""
        return QSize(800, 420) if self.embedded else super().sizeHint()

    # --- settings -------------------------------------------------------------------------
    def _add_corpus_item(self, path: Path, *, checked: bool) -> None:
        item = QListWidgetItem(f"{path.name}  ({path.stat().st_size / 1e6:.2f} MB)")
        item.setData(Qt.ItemDataRole.UserRole, str(path))
        item.setToolTip(str(path))
        item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
        item.setCheckState(Qt.CheckState.Checked if checked else Qt.CheckState.Unchecked)
        self.corpus.addItem(item)

    def _choose_files(self) -> None:
        paths, _ = QFileDialog.getOpenFileNames(self, "Corpus files", "",
                                                "Text files (*.txt);;All files (*)")
        self.add_corpus_files([Path(p) for p in paths])

    def add_corpus_files(self, paths: Sequence[Path]) -> None:
        """Add files to the corpus list, checked."""
        for p in paths:
            self._add_corpus_item(p, checked=True)

    def corpus_files(self) -> list[Path]:
        """The checked corpus files."""
        out = []
        for i in range(self.corpus.count()):
            item = self.corpus.item(i)
            if item.checkState() == Qt.CheckState.Checked:
                out.append(Path(item.data(Qt.ItemDataRole.UserRole)))
        return out

    def config(self) -> BpeConfig | UnigramConfig:
        """The training settings chosen."""
        kind, mode = ALGORITHMS[self.algorithm.currentText()]
        if kind == "unigram":
            return UnigramConfig(vocab_size=self.vocab_size.value(),
                                 **self.options.unigram_options())
        return BpeConfig(vocab_size=self.vocab_size.value(), mode=mode,  # type: ignore[arg-type]
                         **self.options.bpe_options())

    # --- running --------------------------------------------------------------------------
    def start(self) -> None:
        """Start training with the current settings (on a worker)."""
        files = self.corpus_files()
        if not files:
            self.status.setText("Choose at least one corpus file.")
            return
        try:
            config = self.config()
        except ValueError as e:
            self.status.setText(f"Invalid settings: {e}")
            return
        self.model = None
        self._cancel = threading.Event()
        self._phase = ""
        self._target = config.vocab_size
        self.plots.reset("unigram" if isinstance(config, UnigramConfig) else "bpe")
        self.progress.setValue(0)
        self._started = time.perf_counter()
        self._set_running(True)
        self.status.setText("Reading the corpus…")
        self._job.submit(training_job, Corpus.from_files(files), config, self._cancel,
                         on_yield=self._on_events, on_return=self._on_done,
                         on_error=self._on_error)
        self._redraw.start()

    def cancel(self) -> None:
        """Stop the running training; the dialog stays usable (nothing was written)."""
        if self._job.current is None:
            return
        self._cancel.set()
        self._job.cancel()  # its results no longer land, even if already queued
        self._finish("cancelled", "Training cancelled. Nothing was saved.")

    def is_running(self) -> bool:
        """True while a training runs."""
        return self._job.current is not None

    def _on_events(self, events: list[TrainEvent]) -> None:
        self.plots.add_events(events)
        for e in events:
            if isinstance(e, PhaseStarted):
                self._phase = e.phase
                self.status.setText(PHASES.get(e.phase, e.phase) + "…")
            elif isinstance(e, BytesRead) and e.total_bytes:
                self.progress.setValue(int(20 * e.bytes_read / e.total_bytes))
            elif isinstance(e, MergeSummary) and e.merges_target:
                self.progress.setValue(20 + int(80 * e.merges_done / e.merges_target))
                self.status.setText(f"Merging: {e.merges_done:,} / {e.merges_target:,} merges, "
                                    f"vocabulary {e.vocab_size:,}")
            elif isinstance(e, EmStep):
                self.status.setText(f"EM round {e.round}.{e.sub_iteration}: objective "
                                    f"{e.objective:.4f}, {e.vocab_size:,} pieces")
            elif isinstance(e, PruneStep):
                self.status.setText(f"Pruning round {e.round}: {e.kept:,} pieces kept "
                                    f"(target {self._target:,})")
                if e.kept:
                    self.progress.setValue(max(self.progress.value(),
                                               min(99, int(100 * self._target / e.kept))))

    def _on_done(self, done: TrainingDone) -> None:
        self.model = done.model
        self.progress.setValue(100)
        reason = getattr(done.model, "stop_reason", "")
        short = (f" (not {self._target:,}: {reason})"
                 if reason and self._target else "")
        self._finish("done", f"Done in {done.elapsed:.1f} s: {done.model.vocab_size:,} tokens"
                             f"{short}. Use it in the explorer or save it.")

    def _on_error(self, error: Any) -> None:
        if isinstance(error, Cancelled):
            self._finish("cancelled", "Training cancelled. Nothing was saved.")
        else:
            self._finish("error", f"Training failed: {error}")

    def _finish(self, outcome: str, message: str) -> None:
        self._redraw.stop()
        self.plots.flush()
        self.status.setText(message)
        self._set_running(False)
        self.finished_training.emit(outcome)

    def _set_running(self, running: bool) -> None:
        for w in (self.algorithm, self.vocab_size, self.options, self.corpus, self.add_files,
                  self.start_button):
            w.setEnabled(not running)
        self.cancel_button.setEnabled(running)
        has_model = self.model is not None and not running
        self.use_button.setEnabled(has_model)
        self.save_button.setEnabled(has_model)

    # --- results --------------------------------------------------------------------------
    def trained_tokenizer(self) -> Tokenizer:
        """The finished model as an explorer Tokenizer (same ids as its exports)."""
        if self.model is None:
            raise TokenizerError("no trained model yet")
        kind = "unigram" if isinstance(self.model, TrainedUnigram) else "bpe"
        return to_tokenizer(self.model, name=f"trained {kind} {self.model.vocab_size}")

    def use_tokenizer(self) -> None:
        """Emit :attr:`tokenizer_ready` with the trained tokenizer."""
        try:
            tok = self.trained_tokenizer()
        except TokenizerError as e:
            self.status.setText(str(e))
            return
        self.tokenizer_ready.emit(tok)
        self.status.setText(f"Now using {tok.info.name}.")

    def save_to(self, path: Path) -> Path:
        """Export the model to ``path`` (format by extension); raises TokenizerError."""
        if self.model is None:
            raise TokenizerError("no trained model yet")
        written = export(self.model, path)
        self.status.setText(f"Saved {written}.")
        return written

    def _choose_save_path(self) -> None:
        path, _ = QFileDialog.getSaveFileName(
            self, "Save the trained tokenizer", "tokenizer.json",
            "tokenizer.json (*.json);;SentencePiece model (*.model);;tiktoken ranks (*.tiktoken)")
        if not path:
            return
        try:
            self.save_to(Path(path))
        except TokenizerError as e:
            QMessageBox.warning(self, "Could not save", str(e))

    def reject(self) -> None:
        """Closing the dialog cancels a running training first (embedded: only cancels)."""
        self.cancel()
        if not self.embedded:
            super().reject()
