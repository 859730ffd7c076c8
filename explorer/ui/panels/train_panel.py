"""The *Train* panel (dock ``train``): the training dialog, embedded; a trained tokenizer is
saved in the app data folder and opened like any file."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from explorer.engine.errors import TokenizerError
from explorer.engine.tokenizer import Tokenizer
from explorer.engine.trainers.models import TrainedUnigram
from explorer.ui.dialogs.training import TrainingDialog
from explorer.ui.panels.docking import ShownPanel
from explorer.ui.panels.registry import register_panel

if TYPE_CHECKING:
    from explorer.ui.panels.registry import PanelHost


class TrainDock(ShownPanel):
    """The embedded training dialog (self-contained: it follows nothing in the window)."""

    def __init__(self, host: PanelHost) -> None:
        self.training = TrainingDialog(embedded=True)
        super().__init__(host, "train", "Train", self.training)
        # Opaque, or a tab bar QMainWindow left under the bottom docks shows through.
        self.training.setAutoFillBackground(True)
        self.training.tokenizer_ready.connect(self._use_trained)

    def _use_trained(self, tokenizer: Tokenizer) -> None:
        """Save the trained model in the app data folder and open that file, so it is an
        ordinary source: remembered across runs, listed in recent files."""
        from explorer.ui.autosave import autosave_path

        model = self.training.chosen_model()  # the vocabulary slider's point
        if model is None:
            return
        if isinstance(model, TrainedUnigram):
            ext = ".model"  # SentencePiece: the lattice view works on it
        elif (getattr(model, "mode", "") == "byte_level" and not model.marked
              and not model.add_prefix_space):
            ext = ".tiktoken"  # ranks: the merge-queue view works on it
        else:
            ext = ".json"
        stamp = time.strftime("%Y%m%d-%H%M%S")
        name = tokenizer.info.name.replace(" ", "-")
        path = autosave_path().parent / "trained" / f"{name}-{stamp}{ext}"
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self.training.save_to(path)
        except (OSError, TokenizerError) as e:
            self.training.status.setText(f"Could not keep the trained tokenizer: {e}")
            return
        self.host.open_source(str(path))


@register_panel("train", order=14)
def install_train_panel(host: PanelHost) -> TrainDock:
    """Dock the *Train* panel."""
    return TrainDock(host)
