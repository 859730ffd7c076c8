"""Visual training wired into the window: editor sample, vocabulary slider, Train both, views.

Registered after the Train panel (:mod:`.train_panel`, which docks the
:class:`~explorer.ui.dialogs.training.TrainingDialog`), it connects that dialog to the window:

- the step view's "Editor text" sample reads the editor (``host.text``);
- the vocabulary slider re-tokenizes the editor's text live through
  ``host.use_temporary_tokenizer`` (the window's tokenizer is not remembered: picking one
  in the toolbar brings the usual ones back);
- "Train both" opens Compare with the current tokenizer and both trained ones.

Screenshot views (``--screenshot OUT.png --view NAME``): ``train-step`` is byte-level BPE
(2,000 tokens on the bundled botchan.txt) paused after :data:`BPE_VIEW_MERGES` merges, and
``train-unigram`` is Unigram (2,000 pieces on botchan.txt) paused at pruning round
:data:`UNIGRAM_VIEW_ROUNDS`; both are deterministic.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Qt

from explorer.engine.tokenizer import Tokenizer
from explorer.ui.dialogs.training import ALGORITHMS, TrainingDialog
from explorer.ui.dialogs.training_controls import STEP_UNITS
from explorer.ui.panels.registry import register_panel

if TYPE_CHECKING:
    from explorer.ui.panels.registry import PanelHost

BPE_VIEW_MERGES = 140
"""Merges done before the ``train-step`` view is taken (100, then 4 steps of 10: the
sample marks what the last 10 merges changed)."""
UNIGRAM_VIEW_ROUNDS = 2
"""Pruning rounds done before the ``train-unigram`` view is taken."""
VIEW_VOCAB = 2000
VIEW_DOCK_SHARE = 0.72
"""Part of the window's height the Train dock gets in the training views."""


class TrainingSteps(QObject):
    """The glue between the Train panel and the window; prepares the training views."""

    views = ("train-step", "train-unigram")

    def __init__(self, host: PanelHost, dialog: TrainingDialog) -> None:
        super().__init__(dialog)
        self.host = host
        self.dialog = dialog
        dialog.editor_text = host.text
        dialog.preview_ready.connect(self._preview)
        dialog.both_ready.connect(self._compare_both)
        self._steps: list[tuple[int, int]] = []  # (step unit index, count) still to run
        dialog.paused.connect(self._next_step)

    def busy(self) -> bool:
        """True while a prepared view still steps or a shown part still computes."""
        return bool(self._steps) or (self.dialog.is_running() and not self.dialog.is_paused()
                                     ) or self.dialog.busy()

    def _preview(self, tokenizer: Tokenizer, label: str) -> None:
        self.host.use_temporary_tokenizer(tokenizer, label)

    def _compare_both(self, trained: list[tuple[str, Tokenizer]]) -> None:
        from explorer.ui.panels.compare_panel import CompareDock

        dock = self.host.findChild(CompareDock)  # type: ignore[attr-defined]
        if dock is not None:
            dock.compare_with({f"trained:{label}": tok for label, tok in trained})

    # --- screenshot views -----------------------------------------------------------------
    def prepare_view(self, name: str) -> None:
        """Show the Train panel paused at a fixed step of a run on the bundled corpus."""
        d = self.dialog
        dock = self.host.panels["train"]
        dock.show()
        dock.raise_()
        resize = getattr(self.host, "resizeDocks", None)
        height = getattr(self.host, "height", lambda: 800)()
        if resize is not None:
            resize([dock], [int(height * VIEW_DOCK_SHARE)], Qt.Orientation.Vertical)
        for i in range(d.corpus.count()):
            item = d.corpus.item(i)
            name_i = str(item.data(Qt.ItemDataRole.UserRole)).replace("\\", "/").rsplit("/")[-1]
            item.setCheckState(Qt.CheckState.Checked if name_i == "botchan.txt"
                               else Qt.CheckState.Unchecked)
        d.vocab_size.setValue(VIEW_VOCAB)
        d.tabs.setCurrentIndex(0)
        if name == "train-step":
            d.algorithm.setCurrentText(next(k for k, v in ALGORITHMS.items()
                                            if v == ("bpe", "byte_level")))
            self._steps = [(2, 1), *[(1, 1)] * 4]  # 100 + 4 x 10 merges
        else:
            d.algorithm.setCurrentText(next(k for k, v in ALGORITHMS.items()
                                            if v[0] == "unigram"))
            units = [label for label, _cls, _n in STEP_UNITS["unigram"]]
            prune = units.index("1 pruning round")
            self._steps = [(prune, 1)] * UNIGRAM_VIEW_ROUNDS
        d.start(paused=True)
        self._next_step()

    def _next_step(self) -> None:
        if not self._steps:
            return
        unit, _count = self._steps.pop(0)
        self.dialog.controls.step_unit.setCurrentIndex(unit)
        self.dialog.step()


@register_panel("training-steps", order=15)
def install_training_steps(host: PanelHost) -> Any:
    """Connect the docked Train panel to the window (after train_panel docked it)."""
    dock = host.panels.get("train")
    dialog = None if dock is None else dock.findChild(TrainingDialog)
    if dialog is None:
        return None
    return TrainingSteps(host, dialog)
