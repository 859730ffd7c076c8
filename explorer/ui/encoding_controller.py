"""Keeps the document's tokens up to date: the bridge between the editor and the workers.

It listens to the ``QTextDocument``; each change schedules an encode job (throttled: the first
keystroke encodes at once, later ones at most every :data:`EDIT_THROTTLE_MS`). With a result
for the current tokenizer, the job re-encodes only a window around the edit; otherwise (first
text, another tokenizer) it encodes the whole text in chunks with progress, debounced so a
burst of typing does not restart a long encode per keystroke. Latest request wins: results of
superseded requests never land.

A keystroke's re-encode of a small window (:func:`~explorer.workers.jobs.quick_update`, a few
ms at most) runs on the GUI thread when no worker is busy: inside the edit, once Qt has laid
it out (the window calls :meth:`EncodingController.encode_due_now` from the document's last
``contentsChanged`` slot), else on the event loop's next round. Handing it to a worker and
its result back cost more than the encode (thread wake-ups, the GIL shared with Qt's own
calls into Python), ~1.3 ms of a 7 ms keystroke. Anything bigger, or failing, goes to a
worker as before.

The controller keeps its own copy of the text, patched from each ``contentsChange`` (position,
removed, added) so a keystroke does not copy a 10 MB document out of Qt. The patch is exact
while the text has no astral characters (then UTF-16 positions are code-point positions);
otherwise, or when the length check fails, it re-reads the whole text. The patched changes
also tell the re-encode where the text changed since the result it starts from (so it does
not compare two 10 MB texts to find out).
"""

from __future__ import annotations

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtGui import QTextCursor, QTextDocument

from explorer.engine.offsets import Utf16Map
from explorer.engine.tokenizer import Tokenizer
from explorer.ui.gui_gc import note_activity
from explorer.workers.doctokens import Change, DocTokens, Progress
from explorer.workers.jobs import Encoded, Settled, encode_job, quick_update, settle_job
from explorer.workers.latest import Debounce, LatestRunner, Throttle

EDIT_THROTTLE_MS = 15
FULL_DEBOUNCE_MS = 150
"""A text with no result for its tokenizer yet is encoded this long after the last change
(keys typed while a first encode runs restart it once, not per key)..."""
AT_ONCE_CHARS = 100_000
"""...but a change adding at least this many characters (a file opened, a big paste) starts
its encode at once: no typing to wait for (the 10 MB start-up text's encode started 0.1-0.15
s after Qt had laid it out, both cores idle meanwhile)."""
SETTLE_DELAY_MS = 250
"""After typing pauses this long, a SentencePiece Unigram document is made exact again past
the keystrokes' windows (:func:`~explorer.workers.doctokens.settle_document`), step by step."""
PATCH_MAX_CHARS = 100_000
"""Bigger insertions re-read the whole text (one copy either way)."""
# What QTextDocument.toPlainText replaces (so the patched copy equals it exactly).
_PLAIN = str.maketrans({"\u00a0": " ", "\u2029": "\n", "\u2028": "\n"})
_INSERTED = {**{chr(k): v for k, v in _PLAIN.items()}, "\ufdd0": "\n", "\ufdd1": "\n"}
""":data:`_PLAIN` and Qt's frame marks (a block break each), as ``str.replace`` pairs."""


def inserted_plain(text: str) -> str:
    """``text`` as ``toPlainText()`` reads it back after ``QTextCursor.insertText``: a CR LF,
    a lone CR, a paragraph separator or a frame mark starts a new block (a line break), and
    :data:`_PLAIN` applies. (``str.replace`` of what occurs: ``translate`` took 1.2 s on
    10 MB.)"""
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    for mark, plain in _INSERTED.items():
        if mark in text:
            text = text.replace(mark, plain)
    return text


class EncodingController(QObject):
    """Owns the current tokenizer and document result; emits when a new result lands."""

    encoding_ready = Signal(object, object)
    """``(DocTokens, Change | None)``: a new result; ``Change`` None means everything changed."""
    progress = Signal(int, int)
    """``(done, total)`` code points of a full encode."""
    partial_ready = Signal(object)
    """``DocTokens`` covering the start of the text during a full encode (paint it first)."""
    busy_changed = Signal(bool)
    failed = Signal(str)
    """An encode failed (message for the status bar)."""

    def __init__(self, document: QTextDocument, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._document = document
        self._tokenizer: Tokenizer | None = None
        self.doc: DocTokens | None = None
        self._text = document.toPlainText()
        self._bmp_only = self._is_bmp_only(self._text)
        self._edits: list[tuple[int, int, int, int] | None] = []
        """Per revision since the current result's: ``(revision, position, length before,
        unchanged suffix)`` of the patched change, None when the text was re-read."""
        self.revision = 0
        self.applied_revision = -1
        """Revision of the text the current result was computed for."""
        self._runner = LatestRunner(self)
        self._runner.busy_changed.connect(self.busy_changed)
        self._throttle = Throttle(self._start, EDIT_THROTTLE_MS, self)
        self._quick = QTimer(self)  # a small re-encode, once Qt has handled the key
        self._quick.setSingleShot(True)
        self._quick.setInterval(0)
        self._quick.timeout.connect(self._encode_quickly)
        self._debounce = Debounce(self._start, FULL_DEBOUNCE_MS, self)
        # Settling runs apart (not "busy": the result on screen is the current text's).
        self._settler = LatestRunner(self)
        self._settle_later = Debounce(self._settle, SETTLE_DELAY_MS, self)
        document.contentsChange.connect(self._on_change)

    @property
    def tokenizer(self) -> Tokenizer | None:
        """The tokenizer results are computed with."""
        return self._tokenizer

    @property
    def text(self) -> str:
        """The document's plain text (as ``toPlainText()``), kept current without copying."""
        return self._text

    @property
    def busy(self) -> bool:
        """True while an encode runs or is scheduled."""
        return (self._runner.current is not None or self._debounce.pending()
                or self._quick.isActive())

    @property
    def up_to_date(self) -> bool:
        """True when the last result is for the current text and tokenizer."""
        return (not self.busy and self.doc is not None and self.doc.tokenizer is self._tokenizer
                and self.applied_revision == self.revision)

    def set_tokenizer(self, tokenizer: Tokenizer | None) -> None:
        """Switch tokenizer; the whole text is re-encoded at once."""
        self._tokenizer = tokenizer
        self._quick.stop()
        # (a text change waiting to start an encode: the new tokenizer's encode below starts
        # it; flushing it would start an encode only to cancel it, which a worker may already
        # run, cancellable only after its first window: ~0.2 s of a big text's start-up)
        self._debounce.cancel()
        self._runner.cancel()
        self._settler.cancel()
        if tokenizer is None:
            self._start()
        else:  # (a result always lands, even for the tokenizer of the current result)
            self._submit()

    def after_insert(self, text: str, start16: int, end16: int) -> str:
        """The text as it will be once ``text`` replaces the UTF-16 span ``[start16,
        end16)`` (a paste, before Qt inserts it)."""
        old = self._text
        if self._bmp_only:
            start, end = start16, end16
        else:
            u16 = Utf16Map(old)
            start, end = u16.to_codepoint(start16), u16.to_codepoint(end16)
        return old[:start] + inserted_plain(text) + old[end:]

    def shutdown(self) -> None:
        """Cancel pending and running work (window closing)."""
        self._quick.stop()
        self._runner.cancel()
        self._settler.cancel()

    def _on_change(self, _pos: int, removed: int, added: int) -> None:
        if removed == 0 and added == 0:
            return  # format-only change (our own painting)
        self._settler.cancel()
        note_activity()
        before = len(self._text)
        patched = self._patch_text(_pos, removed, added)
        self.revision += 1
        self._edits.append((self.revision, _pos, before, before - _pos - removed)
                           if patched else None)
        if self.doc is not None and self.doc.tokenizer is self._tokenizer:
            self._throttle()
        elif added >= AT_ONCE_CHARS:
            self._debounce.cancel()
            self._start()
        else:
            self._debounce()

    def _patch_text(self, pos: int, removed: int, added: int) -> bool:
        """Apply a change to the text copy; False when it had to re-read the whole text."""
        doc = self._document
        expected = doc.characterCount() - 1  # Qt counts the final paragraph separator
        # Qt reports removals reaching its final paragraph separator shifted one place: only
        # patch changes that end inside the text.
        if (self._bmp_only and added <= PATCH_MAX_CHARS and pos + removed <= len(self._text)
                and pos + added <= expected):
            cur = QTextCursor(doc)
            cur.setPosition(pos)
            cur.setPosition(pos + added, QTextCursor.MoveMode.KeepAnchor)
            inserted = cur.selectedText().translate(_PLAIN)
            if len(inserted) == added:  # fewer code points than UTF-16 units: astral
                # In place where it can (CPython grows a string held only here without
                # copying it): one copy of the document instead of two.
                text = self._text[:pos]
                text += inserted
                text += self._text[pos + removed:]
                if len(text) == expected:
                    self._text = text
                    return True
        self._text = doc.toPlainText()
        self._bmp_only = self._is_bmp_only(self._text)
        return False

    def _unchanged_since(self, base: DocTokens) -> tuple[int, int] | None:
        """Lengths of the start and end of the text that are ``base.text``'s, from the
        changes patched since ``base`` (the current result); None when not known."""
        if base is not self.doc:
            return None
        head = tail = len(base.text)
        seen = 0
        for edit in self._edits:
            if edit is None:
                return None
            revision, pos, _before, suffix = edit
            if revision <= self.applied_revision:
                continue
            head, tail = min(head, pos), min(tail, suffix)
            seen += 1
        if seen != self.revision - self.applied_revision:
            return None
        return head, tail

    def _is_bmp_only(self, text: str) -> bool:
        """True when ``text`` (the whole document) has no astral characters: then its length
        in code points equals Qt's in UTF-16 units (O(1), where a regex scan of 10 MB takes
        20-40 ms of the GUI thread)."""
        return len(text) == self._document.characterCount() - 1

    def _base(self) -> DocTokens | None:
        """The current result when it is the current tokenizer's (an edit updates it)."""
        doc = self.doc
        return doc if doc is not None and doc.tokenizer is self._tokenizer else None

    def _start(self) -> None:
        if self._tokenizer is None:
            self._quick.stop()
            self._runner.cancel()
            return
        if self._base() is not None and self._runner.current is None:
            self._quick.start()  # (after the key's own handling: see the module notes)
            return
        self._submit()

    def encode_due_now(self) -> None:
        """Run the small re-encode the last edit scheduled now, not after the event loop's
        next round (the window calls this once Qt has laid the edit out and every other
        view has seen it: its colours then make the edit's one and only paint)."""
        if self._quick.isActive():
            self._quick.stop()
            self._encode_quickly()

    def _encode_quickly(self) -> None:
        """Re-encode a small window here and now; else hand the encode to a worker."""
        if self._tokenizer is None:
            return
        base = self._base()
        if base is not None and self.applied_revision == self.revision:
            return  # up to date (a trailing throttle call after a quick encode took all)
        same = None if base is None else self._unchanged_since(base)
        if base is None or same is None or self._runner.current is not None:
            self._submit()
            return
        try:
            result = quick_update(base, self._text, self.revision, same)
        except Exception:  # the worker reports it (an engine error is not the GUI's crash)
            result = None
        if result is None:
            self._submit()
        else:
            self._on_result(result)

    def _submit(self) -> None:
        """Start the encode job on a worker (cancelling the running one)."""
        self._quick.stop()
        base = self._base()
        same = None if base is None else self._unchanged_since(base)
        self._runner.submit(encode_job, self._tokenizer, base, self._text,
                            self.revision, same, on_yield=self._on_progress,
                            on_return=self._on_result, on_error=self._on_error)

    def _on_progress(self, p: Progress) -> None:
        self.progress.emit(p.done, p.total)
        if (p.partial is not None and p.partial.text is self._text
                and p.partial.tokenizer is self._tokenizer):
            self.partial_ready.emit(p.partial)

    def _on_result(self, result: Encoded) -> None:
        self.doc = result.doc
        self.applied_revision = result.revision
        self._edits = [e for e in self._edits if e is not None and e[0] > result.revision]
        change: Change | None = result.change
        self.encoding_ready.emit(result.doc, change)
        if result.revision != self.revision:  # typed meanwhile: catch up from this result
            self._throttle()
        else:
            self._settle_later()

    def _settle(self) -> None:
        """Start the next settling step when the current result needs one."""
        doc = self.doc
        if (doc is None or not self.up_to_date or not doc.segments
                or doc.segments[0].points is None or doc.exact_until >= len(doc.text)):
            return
        self._settler.submit(settle_job, doc, self.revision, on_return=self._on_settled,
                             on_error=self._on_error)

    def _on_settled(self, result: Settled | None) -> None:
        if result is None or result.base is not self.doc or result.revision != self.revision:
            return  # exact already, or typed meanwhile (the next pause settles again)
        self.doc = result.doc
        if result.change is not None:
            self.encoding_ready.emit(result.doc, result.change)
        self._settle()

    def _on_error(self, error: object) -> None:
        self.failed.emit(str(error))
