"""A copyable view of the token ids (space- or comma-separated).

Rendering is lazy: only while the panel is the shown tab (:meth:`IdsView.set_active`), at most
:data:`MAX_SHOWN` ids (Copy always copies all of them).

"Add special tokens (post-processor)" shows instead the ids Hugging Face's ``encode(text,
add_special_tokens=True)`` returns for the whole text (template tokens such as ``[CLS]`` and
``[SEP]`` around it). It is enabled only for tokenizers that
:meth:`~explorer.engine.tokenizer.Tokenizer.supports_post_processor`. Those ids are computed on
the worker (:func:`~explorer.workers.jobs.special_ids_job`), once per result and only while the
panel is shown; the editor's colours stay the plain per-segment encoding. Not modelled: the
file's truncation and padding settings (as with HF's ``no_truncation()``/``no_padding()``).
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Signal
from PySide6.QtGui import QGuiApplication, QShowEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from explorer.workers.doctokens import DocTokens
from explorer.workers.jobs import special_ids_job
from explorer.workers.latest import LatestRunner

SEPARATORS = {"spaces": " ", "commas": ", ", "lines": "\n"}
MAX_SHOWN = 20_000
SPECIAL_LABEL = "Add special tokens (post-processor)"
NO_POST_TIP = ("Only Hugging Face tokenizer.json files have a post-processor; this tokenizer "
               "adds no special tokens around the text.")
PENDING = "adding special tokens…"


def post_processor_tip(extra: dict[str, str]) -> str:
    """Tooltip of the checkbox for a tokenizer that has the post-processor concept."""
    name = extra.get("post-processor", "none")
    what = "none (adds nothing)" if name == "none" else name
    return (f"Show the ids of HF encode(text, add_special_tokens=True) for the whole text.\n"
            f"Post-processor: {what}\n(the file's truncation and padding are not applied)")


class IdsView(QWidget):
    """Ids of the current result as text, refreshed when shown or changed."""

    special_ids_ready = Signal()
    """The post-processed ids of the current result arrived (or failed) and are shown."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.text_view = QPlainTextEdit(self)
        self.text_view.setReadOnly(True)
        self.separator = QComboBox(self)
        self.separator.addItems(list(SEPARATORS))
        self.add_special = QCheckBox(SPECIAL_LABEL, self)
        self.add_special.setEnabled(False)
        self.add_special.setToolTip(NO_POST_TIP)
        self.copy_button = QPushButton("Copy", self)
        self.copy_button.clicked.connect(self.copy)
        row = QHBoxLayout()
        row.addWidget(self.separator)
        row.addWidget(self.add_special)
        row.addStretch(1)
        row.addWidget(self.copy_button)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        lay.addLayout(row)
        lay.addWidget(self.text_view)
        self._doc: DocTokens | None = None
        self._active = True
        self._dirty = True
        # Post-processed ids of _special_doc (None: not computed yet), or the error message.
        self._special_doc: DocTokens | None = None
        self._special_ids: list[int] | None = None
        self._special_error: str | None = None
        self._requested: DocTokens | None = None  # whose post-processed ids are in flight
        self._copy_when_ready = False
        self._runner = LatestRunner(owner=self)
        self.separator.currentTextChanged.connect(lambda _t: self._render())
        self.add_special.toggled.connect(lambda _on: self._render())

    def post_processed(self) -> bool:
        """True when the view shows the ids with the post-processor's special tokens."""
        return self.add_special.isEnabled() and self.add_special.isChecked()

    @property
    def pending(self) -> bool:
        """True while the post-processed ids of the current result are being computed."""
        return self.post_processed() and self._special_doc is not self._doc

    def _ids(self, limit: int | None = None) -> Sequence[int] | None:
        """Ids to show (the first ``limit`` when given): the plain ones, the post-processed
        ones, or None while pending."""
        if self._doc is None:
            return []
        if not self.post_processed():
            return self._doc.ids(limit)
        if self.pending or self._special_ids is None:
            return None
        return self._special_ids if limit is None else self._special_ids[:limit]

    def _id_count(self) -> int:
        """Number of ids :meth:`_ids` gives (0 while pending)."""
        if self._doc is None:
            return 0
        if not self.post_processed():
            return self._doc.token_count
        return len(self._special_ids or ()) if not self.pending else 0

    def ids_text(self, limit: int | None = None) -> str:
        """The ids joined by the chosen separator (the first ``limit`` when given); with
        special tokens on and their ids not computed yet, an empty string."""
        ids = self._ids(limit)
        if not ids:
            return ""
        sep = SEPARATORS[self.separator.currentText()]
        return sep.join(map(str, ids))

    def set_active(self, active: bool) -> None:
        """Whether the panel is the shown tab (hidden tabs of Qt docks stay "visible")."""
        self._active = active
        if active and self._dirty:
            self._render()

    def set_result(self, doc: DocTokens) -> None:
        """Show the ids of ``doc``."""
        tok = doc.tokenizer
        if self._doc is None or self._doc.tokenizer is not tok:
            supported = tok.supports_post_processor()
            self.add_special.setEnabled(supported)
            self.add_special.setToolTip(post_processor_tip(tok.info.extra) if supported
                                        else NO_POST_TIP)
        self._doc = doc
        self._render()

    def _request_special(self) -> None:
        """Compute the post-processed ids of the current result on the worker. One encode at
        a time: while one runs (it cannot be interrupted mid-encode), newer results wait and
        only the newest is computed next, so typing in a big document never piles them up."""
        doc = self._doc
        assert doc is not None
        self.copy_button.setEnabled(False)
        self.text_view.setPlainText(PENDING)
        if self._requested is not None:
            return  # _special_done starts the newest one
        self._requested = doc
        self._runner.submit(special_ids_job, doc.tokenizer, doc.text,
                            on_return=lambda ids: self._special_done(doc, ids, None),
                            on_error=lambda err: self._special_done(doc, None, str(err)))

    def _special_done(self, doc: DocTokens, ids: list[int] | None, error: str | None) -> None:
        self._requested = None
        if doc is not self._doc:  # a newer result arrived meanwhile
            if self._copy_when_ready or (self._active and self.isVisible()):
                self._request_special()
            return
        self._special_doc, self._special_ids, self._special_error = doc, ids, error
        self.copy_button.setEnabled(True)
        self._dirty = True
        self._render()
        if self._copy_when_ready:
            self._copy_when_ready = False
            self.copy()
        self.special_ids_ready.emit()

    def _render(self) -> None:
        self._dirty = True
        if not (self._active and self.isVisible()):
            return
        if self.pending:
            if self._requested is not self._doc:
                self._request_special()
            return
        self._dirty = False
        self.copy_button.setEnabled(True)
        if self.post_processed() and self._special_error is not None:
            self.text_view.setPlainText(f"The post-processor failed: {self._special_error}")
            return
        count = self._id_count()
        text = self.ids_text(MAX_SHOWN)
        if count > MAX_SHOWN:
            text += f"\n… {count - MAX_SHOWN:,} more (Copy copies all)"
        self.text_view.setPlainText(text)

    def showEvent(self, event: QShowEvent) -> None:
        """Render lazily: joining 250k ids is only worth it when shown."""
        self._render()
        super().showEvent(event)

    def copy(self) -> None:
        """Copy the ids to the clipboard (the post-processed ones once they are computed)."""
        if self.pending:
            self._copy_when_ready = True
            if self._requested is not self._doc:  # even while the panel is hidden
                self._request_special()
            return
        QGuiApplication.clipboard().setText(self.ids_text())
