""""Why this boundary" when the mouse rests on the gap between two tokens in the editor.

The editor asks :meth:`BoundaryTips.tip_at` for the gap under the mouse. When the gap is a
token boundary of the document's current tokens, the explanation
(:func:`explorer.engine.explain.boundary.explain_boundary_at`, on the boundary's line, at
most :data:`WINDOW_CHARS` characters either side) is computed on a worker, newest request
wins, and cached; the tooltip says "explaining..." until it arrives, then shows the answer
where the mouse is (if it is still on that gap). Typing never waits for it.
"""

from __future__ import annotations

import html
from collections import OrderedDict
from collections.abc import Callable, Generator
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QToolTip

from explorer.engine.offsets import Utf16Map
from explorer.engine.tokenizer import Tokenizer
from explorer.ui.editor import TokenEditor
from explorer.workers.latest import LatestRunner

if TYPE_CHECKING:  # the explainer is imported by the first explanation (it is ~0.1 s)
    from explorer.engine.explain.boundary import BoundaryExplanation

WINDOW_CHARS = 80
"""Characters of the line either side of the boundary that are encoded and explained."""
CACHE_SIZE = 512
PENDING = "<b>Why this boundary?</b><br><i>explaining…</i>"

IsBoundary = Callable[[int, str, int], bool]
Key = tuple[int, str, int]


def boundary_job(tokenizer: Tokenizer, text: str,
                 position: int) -> Generator[None, None, BoundaryExplanation | None]:
    """Worker job: the explanation of the boundary at ``position`` of ``text``."""
    yield None
    from explorer.engine.explain.boundary import explain_boundary_at

    return explain_boundary_at(tokenizer, text, position)


def boundary_html(explanation: BoundaryExplanation) -> str:
    """The tooltip: the cause, the plain-words explanation and the normalization note."""
    out = (f"<b>Why this boundary?</b> ({html.escape(explanation.cause)})"
           f"<p style='white-space:pre-wrap'>{html.escape(explanation.text)}</p>")
    if explanation.normalization:
        out += f"<p><i>{html.escape(explanation.normalization)}</i></p>"
    return out


class BoundaryTips(QObject):
    """Explains the token boundary under the mouse in ``editor``, off the GUI thread."""

    def __init__(self, editor: TokenEditor, tokenizer: Callable[[], Tokenizer | None],
                 is_boundary: IsBoundary, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._editor = editor
        self._tokenizer = tokenizer
        self._is_boundary = is_boundary
        self._cache: OrderedDict[Key, str | None] = OrderedDict()
        self._pending: Key | None = None
        self._runner = LatestRunner(owner=self)
        editor.boundary_tip_at = self.tip_at

    def busy(self) -> bool:
        """True while an explanation is being computed."""
        return self._runner.current is not None

    def clear(self) -> None:
        """Forget every explanation (a new tokenizer)."""
        self._cache.clear()
        self._pending = None

    def key_at(self, block: int, block_text: str, col16: int) -> Key | None:
        """``(tokenizer id, line window, boundary position in it)`` of the gap at UTF-16
        column ``col16`` of block ``block``, or None when it is not a token boundary."""
        tok = self._tokenizer()
        if tok is None or not self._is_boundary(block, block_text, col16):
            return None
        cp = Utf16Map(block_text).to_codepoint(col16)
        lo, hi = max(0, cp - WINDOW_CHARS), min(len(block_text), cp + WINDOW_CHARS)
        return id(tok), block_text[lo:hi], cp - lo

    def tip_at(self, block: int, block_text: str, col16: int) -> str | None:
        """The tooltip for the gap at ``col16`` (cached, or "explaining..." while a worker
        computes it), None when the gap is no token boundary or has no explanation."""
        key = self.key_at(block, block_text, col16)
        if key is None:
            return None
        if key in self._cache:
            self._cache.move_to_end(key)
            return self._cache[key]
        tok = self._tokenizer()
        if tok is None:
            return None
        if self._pending != key:
            self._pending = key
            self._runner.submit(boundary_job, tok, key[1], key[2],
                                on_return=lambda r, key=key: self._done(key, r),
                                on_error=lambda _e, key=key: self._done(key, None))
        return PENDING

    def _done(self, key: Key, result: BoundaryExplanation | None) -> None:
        tip = None if result is None else boundary_html(result)
        self._cache[key] = tip
        while len(self._cache) > CACHE_SIZE:
            self._cache.popitem(last=False)
        if self._pending != key:
            return
        self._pending = None
        where = self._editor.last_tip_pos
        if tip and where is not None and QToolTip.isVisible():  # still showing our "explaining"
            QToolTip.showText(where, tip, self._editor)
