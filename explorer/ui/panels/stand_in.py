"""Stand-in tokenizers: the BPE Merges / Unigram Lattice tabs under a model of their kind.

With the default cl100k the *Unigram Lattice* tab has no lattice to draw, and with a Unigram
model the *BPE Merges* tab has no merge queue. Each then offers, in one click (a link in its
message), to show the same text under a tokenizer of its kind: the last trained one of that
kind when there is one, else the bundled ``corpus_unigram_4k`` / ``corpus_bpe_4k``. The
editor's tokenizer does not change: only that tab uses the stand-in.

Not a panel (no ``register_panel``): the BPE and lattice panels
(:mod:`.bpe_panel`, :mod:`.lattice_panel`) ask :meth:`StandIns.tokenizer_for` which tokenizer
they show and put :func:`offer_link` in their message.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import TYPE_CHECKING, Literal

from PySide6.QtCore import QObject, Signal

from explorer.engine.formats import load_tokenizer
from explorer.engine.tokenizer import Tokenizer
from explorer.workers.latest import LatestRunner

if TYPE_CHECKING:
    from explorer.ui.panels.registry import PanelHost

Kind = Literal["bpe", "lattice"]
BUNDLED = {"bpe": "bundled:corpus_bpe_4k", "lattice": "bundled:corpus_unigram_4k"}
OFFER_HREF = "stand-in"
"""The ``href`` of the offer link (``linkActivated`` gives it back)."""


def fits(kind: Kind, tokenizer: Tokenizer | None) -> bool:
    """True when ``tokenizer`` can be shown in tab ``kind``."""
    if tokenizer is None:
        return False
    return tokenizer.supports_merge_trace() if kind == "bpe" else tokenizer.supports_lattice()


def last_trained(host: PanelHost, kind: Kind) -> Tokenizer | None:
    """The Train panel's model (at its slider's point) as a tokenizer, when it fits tab
    ``kind``; None when nothing was trained or it is of the other kind."""
    from explorer.engine.errors import TokenizerError
    from explorer.engine.trainers.models import TrainedUnigram
    from explorer.ui.dialogs.training import TrainingDialog

    dock = host.panels.get("train")
    dialog = None if dock is None else dock.findChild(TrainingDialog)
    model = None if dialog is None else dialog.chosen_model()
    if dialog is None or model is None or isinstance(model, TrainedUnigram) != (
            kind == "lattice"):
        return None
    try:
        tok = dialog.trained_tokenizer()
    except TokenizerError:
        return None
    return tok if fits(kind, tok) else None


def _load_job(source: str) -> Generator[None, None, Tokenizer]:
    from explorer.ui.tokenizer_source import source_path

    yield None
    return load_tokenizer(source_path(source))


class StandIns(QObject):
    """One stand-in tokenizer per tab kind, loaded on request off the GUI thread."""

    ready = Signal(str)
    """A stand-in for tab ``kind`` is ready (refresh that tab)."""

    def __init__(self, trained: Callable[[Kind], Tokenizer | None],
                 parent: QObject | None = None) -> None:
        """``trained(kind)``: the last trained tokenizer that fits ``kind``, or None."""
        super().__init__(parent)
        self._trained = trained
        self.tokenizers: dict[str, Tokenizer] = {}
        self._runner = LatestRunner(self)

    def busy(self) -> bool:
        """True while a stand-in loads."""
        return self._runner.current is not None

    def tokenizer_for(self, kind: Kind, current: Tokenizer | None) -> Tokenizer | None:
        """What tab ``kind`` shows: the editor's tokenizer when it fits, else the stand-in
        chosen for it, else None (the tab then shows :func:`offer_link`)."""
        if fits(kind, current):
            return current
        stand_in = self.tokenizers.get(kind)
        return stand_in if fits(kind, stand_in) else None

    def offer_label(self, kind: Kind) -> str:
        """The name of what the offer would load."""
        trained = self._trained(kind)
        return trained.info.name if trained is not None else BUNDLED[kind].split(":", 1)[1]

    def choose(self, kind: Kind) -> None:
        """The user took the offer: use the last trained model of that kind or the bundled
        one; :attr:`ready` follows."""
        trained = self._trained(kind)
        if fits(kind, trained):
            assert trained is not None
            self.tokenizers[kind] = trained
            self.ready.emit(kind)
            return
        self._runner.submit(_load_job, BUNDLED[kind], on_return=lambda tok: self._loaded(
            kind, tok), on_error=lambda _e: None)

    def _loaded(self, kind: Kind, tokenizer: Tokenizer) -> None:
        self.tokenizers[kind] = tokenizer
        self.ready.emit(kind)


def offer_link(kind: Kind, label: str) -> str:
    """The offer, as rich text with one link."""
    what = "a BPE model" if kind == "bpe" else "a Unigram model"
    return (f' <a href="{OFFER_HREF}">Show this text under {what} ({label})</a>, '
            "without changing the editor's tokenizer.")


def stand_in_note(tokenizer: Tokenizer, current: Tokenizer | None) -> str:
    """Title prefix of a tab that shows a stand-in."""
    editor = current.info.name if current is not None else "none"
    return f"[{tokenizer.info.name}; the editor keeps {editor}] "
