"""The core side panels, and how they keep in step with the main window.

Registered as ``core`` (:mod:`explorer.ui.panels.registry`): it docks the merge-queue,
lattice, comparison and vocabulary panels and the training dialog, and a :class:`PanelHub`
follows the window's signals (``tokenizer_changed``, ``text_changed``,
``cursor_token_changed``). A panel that is hidden (a background tab) is only marked stale and
refreshed when it is shown, so typing never pays for panels nobody looks at.

The pre-token under the cursor comes from the engine's own pipeline
(``tokenizer.stages(...)`` on the cursor's line, at most :data:`WINDOW_CHARS` either side), the
merge trace from ``tokenizer.trace_merges`` and the lattice from ``tokenizer.lattice``; a
tokenizer that cannot trace or has no lattice gets a one-line explanation instead.
"""

from __future__ import annotations

import time
from collections.abc import Generator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, QSize, Qt, QTimer
from PySide6.QtWidgets import QDockWidget, QFrame, QScrollArea, QWidget

from explorer.engine.errors import TokenizerError
from explorer.engine.formats import load_tokenizer
from explorer.engine.tokenizer import Tokenizer
from explorer.engine.trainers.models import TrainedUnigram
from explorer.ui.dialogs.training import TrainingDialog
from explorer.ui.panels.compare import ComparePanel
from explorer.ui.panels.lattice import LatticePanel
from explorer.ui.panels.merge_queue import MergeQueuePanel
from explorer.ui.panels.registry import register_panel
from explorer.ui.panels.stand_in import StandIns, fits, offer_link, stand_in_note
from explorer.ui.panels.vocab_browser import VocabBrowser
from explorer.workers.latest import LatestRunner

if TYPE_CHECKING:
    from explorer.ui.panels.registry import PanelHost

WINDOW_CHARS = 400
"""Characters of the cursor's line, either side, run through ``stages`` to find its pre-token."""
CURSOR_DELAY_MS = 60
MAX_TRACE_BYTES = 300
"""Longer pre-tokens are not traced: every traced step sorts the whole queue (O(n² log n))."""
MAX_LATTICE_CHARS = 120
"""Longer pieces are not drawn as a lattice (thousands of boxes read as noise)."""
COMPARE_DEFAULTS = ("bundled:cl100k_base", "bundled:o200k_base")
"""Compared with the current tokenizer when nothing else was loaded yet."""
Area = Qt.DockWidgetArea


def pre_token_span(tokenizer: Tokenizer, text: str, offset: int) -> tuple[int, int] | None:
    """Code-point span of the pre-token containing ``offset``, or None (e.g. on a newline)."""
    line_start = text.rfind("\n", 0, offset) + 1
    line_end = text.find("\n", offset)
    line_end = len(text) if line_end < 0 else line_end
    lo, hi = max(line_start, offset - WINDOW_CHARS), min(line_end, offset + WINDOW_CHARS)
    if lo >= hi:
        return None
    for pre in tokenizer.stages(text[lo:hi]).pre_tokens:
        if pre.start <= offset - lo < pre.end:
            return lo + pre.start, lo + pre.end
    return None


class _PanelScroll(QScrollArea):
    """A panel in a frameless scroll area: it fills the dock when there is room and scrolls
    when the dock is smaller than the panel's minimum, so docking it never makes the window's
    minimum size grow; its size hint stays the panel's (bounded), so docks open roomy."""

    def __init__(self, panel: QWidget) -> None:
        super().__init__()
        self.setWidgetResizable(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setWidget(panel)

    def sizeHint(self) -> QSize:
        hint = self.widget().sizeHint()
        return QSize(min(hint.width(), 900), min(max(hint.height(), 300), 460))


def _scrollable(panel: QWidget) -> QScrollArea:
    return _PanelScroll(panel)


def _load_job(path: Path) -> Generator[None, None, Tokenizer]:
    yield None
    return load_tokenizer(path)


class PanelHub(QObject):
    """The installed panels and the glue between them and the window."""

    def __init__(self, window: PanelHost) -> None:
        super().__init__(window)
        self.window = window
        self.merge_queue = MergeQueuePanel()
        self.lattice = LatticePanel()
        self.compare = ComparePanel()
        self.vocab = VocabBrowser()
        self.training = TrainingDialog(embedded=True)
        self.docks: dict[str, QDockWidget] = {
            # Wide views: tabbed with the token table under the editor.
            "bpe": window.add_panel("bpe", "BPE Merges", _scrollable(self.merge_queue),
                                    Area.BottomDockWidgetArea),
            "lattice": window.add_panel("lattice", "Unigram Lattice", _scrollable(self.lattice),
                                        Area.BottomDockWidgetArea),
            "compare": window.add_panel("compare", "Compare", _scrollable(self.compare),
                                        Area.BottomDockWidgetArea),
            "vocab": window.add_panel("vocab", "Vocabulary", _scrollable(self.vocab),
                                      Area.BottomDockWidgetArea),
            "train": window.add_panel("train", "Train", _scrollable(self.training),
                                      Area.BottomDockWidgetArea),
        }
        # Opaque, or a tab bar QMainWindow left under the bottom docks shows through.
        self.training.setAutoFillBackground(True)
        for key in ("tokens", "inspector"):  # the window's own panels stay in front
            if key in window.panels:
                window.panels[key].raise_()
        self._stale: set[str] = set(self.docks)
        self._offset: int | None = None
        self._others: dict[str, Tokenizer] = {}  # source -> tokenizer loaded for the comparison
        self._chosen: list[str] | None = None  # sources ticked in "Compare with" (None: auto)
        self._failed: set[str] = set()
        self._loader = LatestRunner(owner=self)
        self.stand_ins = StandIns(self._trained_of_kind, self)  # one-click offers (issue 13)
        self.stand_ins.ready.connect(lambda key: self._refresh({key}))
        self.lattice.title.linkActivated.connect(lambda _h: self.stand_ins.choose("lattice"))
        self.merge_queue.title.linkActivated.connect(lambda _h: self.stand_ins.choose("bpe"))
        self._cursor_timer = QTimer(self)
        self._cursor_timer.setSingleShot(True)
        self._cursor_timer.setInterval(CURSOR_DELAY_MS)
        self._cursor_timer.timeout.connect(lambda: self._refresh({"bpe", "lattice"}))

        window.tokenizer_changed.connect(self._on_tokenizer)
        window.text_changed.connect(lambda _text: self._refresh({"compare", "bpe", "lattice"}))
        window.cursor_token_changed.connect(self._on_cursor)
        window.loader.loaded.connect(lambda _s, _t: self._refresh({"compare"}))
        self.training.tokenizer_ready.connect(self._use_trained)
        self.compare.choices_changed.connect(self._on_choices)
        self.vocab.token_activated.connect(self._on_vocab_token)
        # Qt keeps the widgets of background dock tabs "visible"; visibilityChanged is the one
        # reliable report of which tab is on screen.
        self._shown: dict[str, bool] = dict.fromkeys(self.docks, False)
        for key, dock in self.docks.items():
            dock.visibilityChanged.connect(
                lambda visible, key=key: self._on_visibility(key, visible))

    def busy(self) -> bool:
        """True while a shown panel still waits for a worker (screenshots wait for this)."""
        jobs = [self._loader, self.compare.runner, self.vocab.loader, self.vocab.query_runner]
        return any(job.current is not None for job in jobs) or self.stand_ins.busy() or any(
            self._visible(key) for key in self._stale)

    # --- window signals -------------------------------------------------------------------
    def _on_tokenizer(self, _tokenizer: Tokenizer) -> None:
        self._refresh({"bpe", "lattice", "compare", "vocab"})

    def _on_vocab_token(self, token_id: int) -> None:
        """Double-click in the vocabulary: select that token's first occurrence in the text."""
        index = self.vocab.locate(self.window.doc, token_id)
        if index is not None:
            self.window.select_token_by_user(index)

    def _on_cursor(self, _index: int, view: Any) -> None:
        self._offset = None if view is None else view.start
        self._stale |= {"bpe", "lattice"}
        self._cursor_timer.start()

    def _use_trained(self, tokenizer: Tokenizer) -> None:
        """Save the trained model in the app data folder and open that file, so it is an
        ordinary source: remembered across runs, listed in recent files."""
        from explorer.ui.autosave import autosave_path

        model = self.training.chosen_model()
        if model is None:
            return
        if isinstance(model, TrainedUnigram):
            ext = ".model"  # SentencePiece: the lattice view works on it
        elif getattr(model, "mode", "") == "byte_level":
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
        self.window.open_source(str(path))

    # --- refreshing -----------------------------------------------------------------------
    def _on_visibility(self, key: str, visible: bool) -> None:
        self._shown[key] = visible
        if visible:
            self._refresh({key})

    def _visible(self, key: str) -> bool:
        return self._shown[key] and self.docks[key].isVisible()

    def _refresh(self, keys: set[str]) -> None:
        self._stale |= keys
        for key in sorted(self._stale):
            if self._visible(key):
                self._stale.discard(key)
                getattr(self, f"_update_{key}")()

    def _update_vocab(self) -> None:
        tok = self.window.tokenizer
        if tok is not None:
            self.vocab.set_tokenizer(tok)

    def _update_train(self) -> None:
        """Nothing to follow: the dialog is self-contained."""

    def _update_compare(self) -> None:
        from explorer.ui.tokenizer_source import bundled_sources, source_label, source_path

        tok = self.window.tokenizer
        if tok is None:
            return
        current = self.window.source
        loaded = {**self._others, **self.window.loader.cached()}
        candidates = [s for s in [*bundled_sources(), *loaded] if s != current]
        candidates = list(dict.fromkeys(candidates))  # unique, in order
        if self._chosen is None:  # not chosen yet: what was loaded, else another bundled one
            chosen = [s for s in loaded if s != current and not s.startswith("trained:")][:3]
            chosen = chosen or [s for s in COMPARE_DEFAULTS if s != current][:1]
        else:
            chosen = [s for s in self._chosen if s != current]
        self.compare.set_choices([(s, source_label(s)) for s in candidates], chosen)
        missing = [s for s in chosen if s not in loaded and s not in self._failed]
        if missing:  # load one at a time; each arrival refreshes the comparison
            source = missing[0]
            self._loader.submit(_load_job, source_path(source),
                                on_return=lambda t, s=source: self._add_other(s, t),
                                on_error=lambda e, s=source: self._load_failed(s, e))
        self.compare.set_tokenizers([tok, *(loaded[s] for s in chosen if s in loaded)])
        self.compare.set_text(self.window.text())

    def compare_with(self, others: dict[str, Tokenizer]) -> None:
        """Compare the current tokenizer with ``others`` (source label -> tokenizer made in
        the window, e.g. by "Train both") on the editor's text, and show Compare."""
        self._others.update(others)
        self._chosen = list(others)
        self.docks["compare"].show()
        self.docks["compare"].raise_()
        self._refresh({"compare"})

    def _on_choices(self, sources: list[str]) -> None:
        self._chosen = sources
        self._refresh({"compare"})

    def _add_other(self, source: str, tokenizer: Tokenizer) -> None:
        self._others[source] = tokenizer
        self._refresh({"compare"})

    def _load_failed(self, source: str, error: object) -> None:
        self._failed.add(source)  # never retried in a loop
        self.compare.title.setText(f"Could not load {source}: {error}")

    def _cursor_span(self, tok: Tokenizer) -> tuple[str, tuple[int, int]] | None:
        if self._offset is None:
            return None
        text = self.window.text()
        try:
            span = pre_token_span(tok, text, self._offset)
        except TokenizerError:
            return None
        return None if span is None else (text[span[0]:span[1]], span)

    def _trained_of_kind(self, key: str) -> Tokenizer | None:
        """The Train panel's model as a tokenizer, when it fits tab ``key``."""
        model = self.training.chosen_model()
        if model is None or isinstance(model, TrainedUnigram) != (key == "lattice"):
            return None
        try:
            tok = self.training.trained_tokenizer()
        except TokenizerError:
            return None
        return tok if fits(key, tok) else None  # type: ignore[arg-type]

    def _update_bpe(self) -> None:
        current = self.window.tokenizer
        tok = self.stand_ins.tokenizer_for("bpe", current)
        if tok is None:
            self.merge_queue.clear(f"{current.info.name if current else 'This tokenizer'} has "
                                   "no BPE merge queue to show (not a byte-level BPE)."
                                   + offer_link("bpe", self.stand_ins.offer_label("bpe")))
            return
        found = self._cursor_span(tok)
        if found is None:
            self.merge_queue.clear("Place the cursor in a word to see its BPE merges.")
            return
        piece, (start, end) = found
        special = tok.info.special_tokens.get(piece)
        if special is not None:
            self.merge_queue.clear(f"{piece!r} is a special token (id {special}): it is split "
                                   "out before BPE and never merged.")
            return
        if len(piece.encode("utf-8")) > MAX_TRACE_BYTES:
            self.merge_queue.clear(f"The pre-token at characters {start}–{end} is longer than "
                                   f"{MAX_TRACE_BYTES} bytes: too long to trace step by step.")
            return
        steps = list(tok.trace_merges(piece))  # type: ignore[attr-defined]
        note = stand_in_note(tok, current) if tok is not current else ""
        self.merge_queue.set_trace(steps, f"{note}Pre-token {piece!r} (characters "
                                   f"{start}–{end})", getattr(tok, "token_id", None))

    def _update_lattice(self) -> None:
        current = self.window.tokenizer
        tok = self.stand_ins.tokenizer_for("lattice", current)
        if tok is None:
            self.lattice.clear(f"{current.info.name if current else 'This tokenizer'} is not a "
                               "Unigram model: no lattice to show."
                               + offer_link("lattice", self.stand_ins.offer_label("lattice")))
            return
        found = self._cursor_span(tok)
        if found is None:
            self.lattice.clear("Place the cursor in a word to see its Unigram lattice.")
            return
        piece, (start, end) = found
        if len(piece) > MAX_LATTICE_CHARS:
            self.lattice.clear(f"The piece at characters {start}–{end} is longer than "
                               f"{MAX_LATTICE_CHARS} characters: too big to draw as a lattice.")
            return
        note = stand_in_note(tok, current) if tok is not current else ""
        self.lattice.set_lattice(tok.lattice(piece),  # type: ignore[attr-defined]
                                 f"{note}Lattice of {piece!r} (characters {start}–{end})")


@register_panel("core", order=10)
def install_core_panels(window: PanelHost) -> PanelHub:
    """Dock the core side panels in ``window`` and connect them to its signals."""
    return PanelHub(window)
