"""Training dialog: train a BPE or Unigram tokenizer on a corpus while watching it learn.

Choose the algorithm, vocabulary size, advanced options (:mod:`.training_options`) and corpus
(the bundled ``resources/corpus`` texts or your own files), press Start, or Step to start
paused. The engine's trainer (:func:`explorer.engine.trainers.train`, a generator of events)
is driven by a :class:`~explorer.workers.stepping.SteppedGenerator`: Pause stops pulling it
(nothing blocks, the window stays live), Step advances by 1/10/100 merges or one EM
sub-iteration / pruning round (:mod:`.training_controls`), Resume runs on at the chosen speed.
Its events feed the step view (:mod:`.training_step`: pair counts, a marked sample, the
merge list; pruned pieces, score histogram), live plots and a log
(:class:`~explorer.ui.dialogs.training_plots.TrainingPlots`).

Cancel during merging or EM ends training *there* with a usable model (the merges so far,
the pieces of the last round); before that there is nothing to keep and it is a plain cancel.
Training writes no files. When a run ends, the vocabulary slider (:mod:`.training_history`)
picks an earlier point of it (first N merges / Unigram round r) and re-tokenizes the editor's
text live (:attr:`TrainingDialog.preview_ready`); "Use this tokenizer" and "Save as…" take
the chosen point (``.json`` tokenizer.json, ``.model`` SentencePiece, ``.tiktoken``).
"Train both" trains BPE and Unigram with the same corpus and size and emits
:attr:`TrainingDialog.both_ready` (the panel opens Compare with them).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Generator, Sequence
from dataclasses import replace
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
    QTabWidget,
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
    train,
)
from explorer.engine.trainers.models import TrainedModel, TrainedUnigram
from explorer.ui.dialogs.training_controls import StepControls, is_step_of
from explorer.ui.dialogs.training_history import HistorySlider
from explorer.ui.dialogs.training_job import (
    ALGORITHMS,
    PHASES,
    REDRAW_MS,
    bundled_corpora,
)
from explorer.ui.dialogs.training_options import TrainingOptions
from explorer.ui.dialogs.training_plots import TrainingPlots
from explorer.ui.dialogs.training_step import StepView
from explorer.workers.latest import LatestRunner
from explorer.workers.stepping import SteppedGenerator

STEP_PAIRS = 20
"""Pairs listed in the step view's pair-count table."""
SAMPLE_LINES = 8
SAMPLE_CHARS = 3000
"""The sample shown segmented: this many corpus lines (or editor characters) at most."""
DEFAULT_SAMPLE_LINE = 21
"""First corpus line of the sample (the bundled botchan.txt's prose starts there)."""
KEEP_PHASES = ("merging", "em", "pruning")
"""Phases in which Cancel keeps the model so far."""
READ_BLOCK_CHARS = 1 << 16
"""The corpus is read in blocks this small: one regex pass over a block holds the GIL, and
the window must not wait for a 1 MB one (~100 ms)."""
DETAIL_SECONDS = 0.1
"""At full speed, a merge lists its top pairs at most this often (the table redraws at
about that rate anyway); stepped or speed-limited, every merge does."""


def _tokenizer_job(model: TrainedModel, name: str) -> Generator[None, None, Tokenizer]:
    yield None
    return to_tokenizer(model, name=name)


def _is_done(event: object) -> bool:
    return isinstance(event, TrainingDone)


class TrainingDialog(QDialog):
    """Settings, run controls, progress, step view, live plots, log, vocabulary slider, and
    what to do with the result."""

    tokenizer_ready = Signal(object)
    """The trained Tokenizer (at the slider's point), when the user chooses "Use this
    tokenizer"."""
    finished_training = Signal(str)
    """``done``, ``stopped`` (cancelled with a model kept), ``cancelled`` or ``error``: a
    run ended (tests wait for it)."""
    paused = Signal()
    """The run stopped pulling the trainer (Pause, or a Step reached its end)."""
    preview_ready = Signal(object, str)
    """``(Tokenizer, description)``: the slider settled; show the editor's text with it."""
    both_ready = Signal(object)
    """``[(label, Tokenizer), (label, Tokenizer)]``: "Train both" finished (BPE, Unigram)."""

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
        self.editor_text: Callable[[], str] | None = None
        """Gives the editor's text for the sample (set by the panel host)."""
        self._cancel = threading.Event()
        self._finish_now = threading.Event()
        self._run: SteppedGenerator | None = None
        self._builder = LatestRunner(owner=self)
        self._started = 0.0
        self._phase = ""
        self._kind = "bpe"
        self._rounds: list[tuple[int, TrainedUnigram]] = []
        self._both: list[tuple[str, Tokenizer]] | None = None
        self._both_models: list[TrainedModel] = []

        self.algorithm = QComboBox(self)
        self.algorithm.addItems(list(ALGORITHMS))
        self.vocab_size = QSpinBox(self)
        self.vocab_size.setRange(300, 262_144)
        self.vocab_size.setSingleStep(500)
        self.vocab_size.setValue(2000)
        self.corpus = QListWidget(self)
        self.corpus.setMaximumHeight(44)
        for path in bundled_corpora():
            self._add_corpus_item(path, checked=path.name == "botchan.txt")
        self.add_files = QPushButton("Add files…", self)
        self.add_files.clicked.connect(self._choose_files)

        self.options = TrainingOptions(self)
        self.controls = StepControls(self)
        self.algorithm.currentTextChanged.connect(self._on_algorithm)

        form = QFormLayout()
        form.setVerticalSpacing(2)
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
        self.cancel_button = QPushButton("Cancel", self)
        self.cancel_button.setToolTip("Stop now; while merging or in EM the model so far is "
                                      "kept (use it or save it)")
        self.both_button = QPushButton("Train both", self)
        self.both_button.setToolTip("Train BPE and Unigram on the same corpus and size, then "
                                    "compare them on the editor's text")
        self.use_button = QPushButton("Use this tokenizer", self)
        self.save_button = QPushButton("Save as…", self)
        self.close_button = QPushButton("Close", self)
        self.start_button.clicked.connect(self.start)
        self.cancel_button.clicked.connect(self.cancel)
        self.both_button.clicked.connect(self.train_both)
        self.use_button.clicked.connect(self.use_tokenizer)
        self.save_button.clicked.connect(self._choose_save_path)
        self.close_button.clicked.connect(self.reject)
        self.controls.pause_button.clicked.connect(self.pause)
        self.controls.resume_button.clicked.connect(self.resume)
        self.controls.step_button.clicked.connect(self.step)
        self.controls.speed.currentIndexChanged.connect(self._on_speed)
        buttons = QHBoxLayout()
        for b in (self.start_button, self.controls, self.cancel_button, self.both_button):
            buttons.addWidget(b)
        buttons.addStretch(1)
        self.progress = QProgressBar(self)
        self.progress.setRange(0, 100)
        self.progress.setMaximumWidth(220)
        self.status = QLabel("Choose settings and press Start (or Step to start paused).", self)
        status_row = QHBoxLayout()
        status_row.addWidget(self.progress)
        status_row.addWidget(self.status, 1)
        self.history = HistorySlider(self)
        self.history.chosen.connect(self._on_history)
        result_row = QHBoxLayout()
        result_row.addWidget(self.history, 1)
        for b in (self.use_button, self.save_button, self.close_button):
            result_row.addWidget(b)

        self.step_view = StepView(self)
        self.sample_source = QComboBox(self)
        self.sample_source.addItems(["Corpus lines", "Editor text"])
        self.sample_line = QSpinBox(self)
        self.sample_line.setRange(1, 10_000_000)
        self.sample_line.setValue(DEFAULT_SAMPLE_LINE)
        self.sample_line.setPrefix("from line ")
        self.sample_source.currentIndexChanged.connect(self._on_sample_changed)
        self.sample_line.valueChanged.connect(self._on_sample_changed)
        sample_row = QHBoxLayout()
        sample_row.addWidget(QLabel("Sample", self))
        sample_row.addWidget(self.sample_source)
        sample_row.addWidget(self.sample_line)
        sample_row.addStretch(1)
        step_page = QWidget(self)
        step_layout = QVBoxLayout(step_page)
        step_layout.setContentsMargins(2, 2, 2, 2)
        step_layout.addLayout(sample_row)
        step_layout.addWidget(self.step_view, 1)
        self.plots = TrainingPlots(self)
        self.tabs = QTabWidget(self)
        self.tabs.addTab(step_page, "Step")
        self.tabs.addTab(self.plots, "Plots and log")

        layout = QVBoxLayout(self)
        layout.setSpacing(3)
        layout.addLayout(form)
        layout.addLayout(buttons)
        layout.addLayout(status_row)
        layout.addLayout(result_row)
        layout.addWidget(self.tabs, 1)

        self._redraw = QTimer(self)
        self._redraw.setInterval(REDRAW_MS)
        self._redraw.timeout.connect(self._flush)
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

    def _on_algorithm(self, text: str) -> None:
        kind = ALGORITHMS[text][0]
        self.options.show_for(kind)
        self.controls.show_for(kind)

    def sample_text(self) -> str:
        """The sample the step view segments: corpus lines or the editor's text."""
        if self.sample_source.currentIndex() == 1 and self.editor_text is not None:
            return self.editor_text()[:SAMPLE_CHARS]
        files = self.corpus_files()
        if not files:
            return ""
        first = self.sample_line.value() - 1
        lines: list[str] = []
        try:
            with open(files[0], encoding="utf-8-sig", errors="replace") as f:
                for k, line in enumerate(f):
                    if k >= first + SAMPLE_LINES:
                        break
                    if k >= first:
                        lines.append(line)
        except OSError:
            return ""
        return "".join(lines)[:SAMPLE_CHARS]

    def _on_sample_changed(self, *_args: Any) -> None:
        self.sample_line.setEnabled(self.sample_source.currentIndex() == 0)
        self.step_view.set_sample(self.sample_text())

    # --- running --------------------------------------------------------------------------
    def start(self, *, paused: bool = False) -> bool:
        """Start training with the current settings (on a worker); ``paused``: start and
        wait for Step or Resume. False when the settings are not usable."""
        files = self.corpus_files()
        if not files:
            self.status.setText("Choose at least one corpus file.")
            return False
        try:
            config = self.config()
        except ValueError as e:
            self.status.setText(f"Invalid settings: {e}")
            return False
        self._abort_run()
        self.model = None
        self._cancel = threading.Event()
        self._finish_now = threading.Event()
        self._phase = ""
        self._target = config.vocab_size
        self._rounds = []
        self._kind = "unigram" if isinstance(config, UnigramConfig) else "bpe"
        if isinstance(config, UnigramConfig):
            config = replace(config, step_details=True)
        else:
            config = replace(config, step_pairs=STEP_PAIRS)
        self.plots.reset(self._kind)  # type: ignore[arg-type]
        self.step_view.reset(self._kind, config, self.sample_text())  # type: ignore[arg-type]
        self.history.set_history(None)
        self.progress.setValue(0)
        self._started = time.perf_counter()
        self._detail_at = 0.0
        corpus = Corpus(paths=files, block_chars=READ_BLOCK_CHARS)
        events = train(corpus, config, cancel=self._cancel,
                       finish=self._finish_now, details=self._want_details)
        run = SteppedGenerator(events, _is_done, self)
        run.events.connect(self._on_events)
        run.done.connect(self._on_done)
        run.failed.connect(self._on_error)
        run.paused.connect(self._on_paused)
        run.ended.connect(lambda: self._on_error(TokenizerError("the trainer ended without "
                                                                "a result")))
        self._run = run
        run.set_rate(self.controls.rate())
        self._set_running(True)
        self.status.setText("Reading the corpus…")
        if not paused:
            run.resume(is_step_of(self._kind))
        self._redraw.start()
        self._update_controls()
        return True

    def _want_details(self) -> bool:
        """Asked by the BPE trainer (on the worker) before each merge: list its top pairs?"""
        run = self._run
        if run is None or not run.full_speed:
            return True
        now = time.perf_counter()
        if now - self._detail_at >= DETAIL_SECONDS:
            self._detail_at = now
            return True
        return False

    def pause(self) -> None:
        """Stop pulling the trainer (:attr:`paused` follows). BPE while merging stops after
        one more merge, pulled with its pair counts, so the table matches where it stops."""
        if self._run is None or self._run.finished:
            return
        if self._kind == "bpe" and self._phase == "merging":
            self._run.step(1, is_step_of("bpe"))
        else:
            self._run.pause()

    def resume(self) -> None:
        """Run on at the chosen speed."""
        if self._run is not None and not self._run.finished:
            self._run.set_rate(self.controls.rate())
            self._run.resume(is_step_of(self._kind))
            self.status.setText("Running…")
            self._update_controls()

    def step(self) -> None:
        """Advance by the chosen step (starting a paused run first when none is running)."""
        if (self._run is None or self._run.finished) and not self.start(paused=True):
            return
        assert self._run is not None
        n, is_step = self.controls.step_request()
        self._run.set_rate(None)
        self._run.step(n, is_step)
        self._update_controls()

    def _on_speed(self, _index: int) -> None:
        if self._run is not None:
            self._run.set_rate(self.controls.rate())

    def _on_paused(self) -> None:
        self._flush()
        self.status.setText(f"Paused ({PHASES.get(self._phase, self._phase) or 'starting'}). "
                            "Step, Resume or Cancel (keeps the model so far).")
        self._update_controls()
        self.paused.emit()

    def cancel(self) -> None:
        """Stop the running training. While merging or in EM the model so far is kept
        (usable and saveable); before that nothing is (the dialog stays usable either way)."""
        run = self._run
        if run is None or run.finished:
            return
        self._both = None
        if self._phase in KEEP_PHASES:
            self._finish_now.set()
            self.status.setText("Stopping: keeping the model so far…")
            run.set_rate(None)
            run.resume(is_step_of(self._kind))
            return
        self._abort_run()
        self._finish("cancelled", "Training cancelled. Nothing was saved.")

    def _abort_run(self) -> None:
        if self._run is not None:
            self._cancel.set()
            self._run.abort()  # its results no longer land, even if already queued
            self._run = None

    def is_running(self) -> bool:
        """True while a training runs (paused included)."""
        return self._run is not None and not self._run.finished

    def is_paused(self) -> bool:
        """True while a run exists but its trainer is not being pulled."""
        return self.is_running() and self._run is not None and not self._run.pulling

    def _flush(self) -> None:
        run = self._run
        if run is None or run.finished:
            self.plots.flush()
            self.step_view.flush()
            return
        with run.held():  # the trainer waits while the window redraws
            self.plots.flush()
            self.step_view.flush(light=run.full_speed and run.pulling)

    def _on_events(self, events: list[TrainEvent]) -> None:
        if self._run is not None and not self._run.finished:
            with self._run.held():
                self._record(events)
        else:
            self._record(events)

    def _record(self, events: list[TrainEvent]) -> None:
        self.plots.add_events(events)
        self.step_view.add_events(events)
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
                if e.snapshot is not None:
                    self._rounds.append((e.round, e.snapshot))
                self.status.setText(f"Pruning round {e.round}: {e.kept:,} pieces kept "
                                    f"(target {self._target:,})")
                if e.kept:
                    self.progress.setValue(max(self.progress.value(),
                                               min(99, int(100 * self._target / e.kept))))

    def _on_done(self, done: TrainingDone) -> None:
        self.model = done.model
        self._run = None
        self.progress.setValue(100)
        self.history.set_history(done.model, self._rounds)
        if self._finish_now.is_set():
            self._finish("stopped", f"Stopped early: {done.model.vocab_size:,} tokens kept. "
                                    "Use them in the explorer or save them.")
            return
        reason = getattr(done.model, "stop_reason", "")
        short = (f" (not {self._target:,}: {reason})"
                 if reason and self._target else "")
        self._finish("done", f"Done in {done.elapsed:.1f} s: {done.model.vocab_size:,} tokens"
                             f"{short}. Use it in the explorer or save it; the slider picks a "
                             "smaller vocabulary from the run.")
        self._continue_both(done.model)

    def _on_error(self, error: Any) -> None:
        self._run = None
        self._both = None
        if isinstance(error, Cancelled):
            self._finish("cancelled", "Training cancelled. Nothing was saved.")
        else:
            self._finish("error", f"Training failed: {error}")

    def _finish(self, outcome: str, message: str) -> None:
        self._redraw.stop()
        self._flush()
        self.status.setText(message)
        self._set_running(False)
        self.finished_training.emit(outcome)

    def _set_running(self, running: bool) -> None:
        for w in (self.algorithm, self.vocab_size, self.options, self.corpus, self.add_files,
                  self.start_button, self.both_button):
            w.setEnabled(not running)
        self.cancel_button.setEnabled(running)
        has_model = self.model is not None and not running
        self.use_button.setEnabled(has_model)
        self.save_button.setEnabled(has_model)
        self._update_controls()

    def _update_controls(self) -> None:
        running = self.is_running()
        self.controls.set_state(running=running,
                                pulling=running and self._run is not None and self._run.pulling)
        self.controls.step_button.setEnabled(not running or self.is_paused())

    # --- train both -----------------------------------------------------------------------
    def train_both(self) -> None:
        """Train byte-level BPE, then Unigram, with the same corpus and vocabulary size;
        :attr:`both_ready` follows with both tokenizers."""
        self._both = []
        self._both_models = []
        self.algorithm.setCurrentText(next(k for k, v in ALGORITHMS.items()
                                           if v == ("bpe", "byte_level")))
        if not self.start():
            self._both = None

    def _continue_both(self, model: TrainedModel) -> None:
        if self._both is None:
            return
        kind = "unigram" if isinstance(model, TrainedUnigram) else "bpe"
        self._both.append((f"trained {kind} {model.vocab_size}",
                           to_tokenizer(model, name=f"trained {kind} {model.vocab_size}")))
        self._both_models.append(model)
        if kind == "bpe":
            both = self._both
            self.algorithm.setCurrentText(next(k for k, v in ALGORITHMS.items()
                                               if v[0] == "unigram"))
            self.start()
            self._both = both
            return
        result, self._both = self._both, None
        self.both_ready.emit(result)

    # --- results --------------------------------------------------------------------------
    def chosen_model(self) -> TrainedModel | None:
        """The model at the slider's point (the finished model when it is at the end)."""
        if self.model is None:
            return None
        return self.history.model_at() or self.model

    def trained_tokenizer(self) -> Tokenizer:
        """The chosen model as an explorer Tokenizer (same ids as its exports)."""
        model = self.chosen_model()
        if model is None:
            raise TokenizerError("no trained model yet")
        kind = "unigram" if isinstance(model, TrainedUnigram) else "bpe"
        return to_tokenizer(model, name=f"trained {kind} {model.vocab_size}")

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
        """Export the chosen model to ``path`` (format by extension); raises TokenizerError."""
        model = self.chosen_model()
        if model is None:
            raise TokenizerError("no trained model yet")
        written = export(model, path)
        self.status.setText(f"Saved {written}.")
        return written

    def _on_history(self) -> None:
        """The slider settled: build that point's tokenizer off the GUI thread."""
        model = self.history.model_at()
        if model is None:
            return
        label = self.history.describe()
        kind = "unigram" if isinstance(model, TrainedUnigram) else "bpe"
        self._builder.submit(_tokenizer_job, model, f"trained {kind} {model.vocab_size}",
                             on_return=lambda tok: self.preview_ready.emit(tok, label),
                             on_error=lambda e: self.status.setText(f"Cannot use it: {e}"))

    def busy(self) -> bool:
        """True while the step view or the slider's tokenizer is being computed."""
        return self.step_view.busy() or self._builder.current is not None

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
        """Closing the dialog stops a running training first (embedded: only cancels)."""
        if not self.embedded:
            self._abort_run()
            self._both = None
            if self._redraw.isActive():
                self._finish("cancelled", "Training cancelled. Nothing was saved.")
            super().reject()
            return
        self.cancel()
