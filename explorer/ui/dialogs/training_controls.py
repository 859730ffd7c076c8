"""The Train panel's run controls: pause, resume, step by a chosen unit, speed.

What a step is depends on the algorithm: 1, 10 or 100 BPE merges; one Unigram EM
sub-iteration or one pruning round. The speed limits steps per second (merges, or EM
sub-iterations and pruning rounds) or lets the trainer run as fast as it can.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QPushButton, QWidget

from explorer.engine.trainers.events import EmStep, Merge, PruneStep

Predicate = Callable[[object], bool]

STEP_UNITS: dict[str, list[tuple[str, type, int]]] = {
    "bpe": [("1 merge", Merge, 1), ("10 merges", Merge, 10), ("100 merges", Merge, 100)],
    "unigram": [("1 EM sub-iteration", EmStep, 1), ("1 pruning round", PruneStep, 1)],
}
SPEEDS: list[tuple[str, float | None]] = [
    ("max speed", None), ("1000 steps/s", 1000.0), ("100 steps/s", 100.0),
    ("10 steps/s", 10.0), ("2 steps/s", 2.0), ("1 step/s", 1.0)]


def is_step_of(kind: str) -> Predicate:
    """What counts as one step while running at a limited speed."""
    if kind == "bpe":
        return lambda e: isinstance(e, Merge)
    return lambda e: isinstance(e, EmStep | PruneStep)


class StepControls(QWidget):
    """Pause / Resume / Step [unit] / Speed, in one row."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.pause_button = QPushButton("Pause", self)
        self.resume_button = QPushButton("Resume", self)
        self.step_button = QPushButton("Step", self)
        self.step_button.setToolTip("Start paused or go on by one step, then pause")
        self.step_unit = QComboBox(self)
        self.step_unit.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.speed = QComboBox(self)
        for label, rate in SPEEDS:
            self.speed.addItem(label, rate)
        self.speed.setToolTip("Steps per second while running (merges, or EM sub-iterations "
                              "and pruning rounds)")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        for w in (self.pause_button, self.resume_button, self.step_button, self.step_unit,
                  QLabel("Speed", self), self.speed):
            layout.addWidget(w)
        self.kind = ""
        self.show_for("bpe")

    def show_for(self, kind: str) -> None:
        """Offer the step units of ``bpe`` or ``unigram``."""
        if kind == self.kind:
            return
        self.kind = kind
        self.step_unit.clear()
        for label, _cls, _n in STEP_UNITS[kind]:
            self.step_unit.addItem(label)

    def step_request(self) -> tuple[int, Predicate]:
        """How many events of which kind the Step button advances by."""
        _label, cls, n = STEP_UNITS[self.kind][max(0, self.step_unit.currentIndex())]
        return n, lambda e: isinstance(e, cls)

    def rate(self) -> float | None:
        """Steps per second, or None for full speed."""
        value = self.speed.currentData()
        return None if value is None else float(value)

    def set_state(self, *, running: bool, pulling: bool) -> None:
        """Enable what makes sense: a run exists (``running``), it advances (``pulling``)."""
        self.pause_button.setEnabled(running and pulling)
        self.resume_button.setEnabled(running and not pulling)
        self.step_unit.setEnabled(True)
