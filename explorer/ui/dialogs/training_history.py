"""The vocabulary-size slider of the Train panel: a point of the finished run's history.

BPE: "the first N merges" (:meth:`TrainedBpe.prefix`, the same ids as a run trained that
far). Unigram: the model after each pruning round (snapshots the trainer sent) and the final
one. Moving the slider emits :attr:`HistorySlider.chosen` once it settles; the dialog then
re-tokenizes the editor text with that model and exports it on request.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QSlider, QWidget

from explorer.engine.trainers.models import TrainedBpe, TrainedModel, TrainedUnigram

SETTLE_MS = 120
"""The slider must rest this long before the editor is re-tokenized."""


class HistorySlider(QWidget):
    """A slider over the history of the last run, with a label saying where it is."""

    chosen = Signal()
    """The slider settled on a new point."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.slider = QSlider(Qt.Orientation.Horizontal, self)
        self.label = QLabel(self)
        self.label.setMinimumWidth(200)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(QLabel("Vocabulary", self))
        layout.addWidget(self.slider, 1)
        layout.addWidget(self.label)
        self._settle = QTimer(self)
        self._settle.setSingleShot(True)
        self._settle.setInterval(SETTLE_MS)
        self._settle.timeout.connect(self.chosen)
        self.slider.valueChanged.connect(self._moved)
        self.model: TrainedModel | None = None
        self.rounds: list[tuple[int, TrainedUnigram]] = []
        self.set_history(None)

    def set_history(self, model: TrainedModel | None,
                    rounds: list[tuple[int, TrainedUnigram]] | None = None) -> None:
        """The finished ``model`` and, for Unigram, ``(round, snapshot)`` per pruning round;
        the slider starts at the end (the model itself)."""
        self.model = model
        self.rounds = list(rounds or [])
        self.slider.blockSignals(True)
        if isinstance(model, TrainedBpe):
            self.slider.setRange(0, len(model.merges))
            self.slider.setValue(len(model.merges))
        elif isinstance(model, TrainedUnigram):
            self.slider.setRange(0, len(self.rounds))
            self.slider.setValue(len(self.rounds))
        else:
            self.slider.setRange(0, 0)
        self.slider.blockSignals(False)
        self.setEnabled(model is not None)
        self._label()

    def set_position(self, value: int) -> None:
        """Move the slider (as a user would); :attr:`chosen` follows when it settles."""
        self.slider.setValue(value)

    def at_end(self) -> bool:
        """True when the slider shows the finished model."""
        return self.slider.value() == self.slider.maximum()

    def model_at(self) -> TrainedModel | None:
        """The model at the slider's position."""
        model, value = self.model, self.slider.value()
        if isinstance(model, TrainedBpe):
            return model.prefix(value)
        if isinstance(model, TrainedUnigram) and value < len(self.rounds):
            return self.rounds[value][1]
        return model

    def describe(self) -> str:
        """Where the slider is, in words."""
        model, value = self.model, self.slider.value()
        if isinstance(model, TrainedBpe):
            return (f"first {value:,} merges: {model.num_base + value:,} tokens"
                    if value < len(model.merges) else
                    f"all {value:,} merges: {model.vocab_size:,} tokens")
        if isinstance(model, TrainedUnigram):
            if value < len(self.rounds):
                rnd, snap = self.rounds[value]
                return f"after pruning round {rnd + 1}: {snap.vocab_size:,} pieces"
            return f"final: {model.vocab_size:,} pieces"
        return "train first"

    def _moved(self, _value: int) -> None:
        self._label()
        self._settle.start()

    def _label(self) -> None:
        self.label.setText(self.describe())
