"""What a token is, as text: the hover tooltip and the inspector panel share it.

Partial-UTF-8 tokens (bytes of one character split over several tokens) show their bytes in
hex and the character(s) they are part of, never U+FFFD.
"""

from __future__ import annotations

import html
from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from explorer.engine.encoding import Token
from explorer.workers.doctokens import DocTokens

CONTROL_NAMES = {"\n": "↵", "\r": "␍", "\t": "⇥", " ": "·"}


def visible(text: str) -> str:
    """Text with whitespace and control characters made visible."""
    out = []
    for ch in text:
        if ch in CONTROL_NAMES:
            out.append(CONTROL_NAMES[ch])
        elif ord(ch) < 0x20 or 0x7F <= ord(ch) < 0xA0:
            out.append(f"\\x{ord(ch):02x}")
        else:
            out.append(ch)
    return "".join(out)


def hex_bytes(data: bytes) -> str:
    """``E6 97 A5`` style hex."""
    return " ".join(f"{b:02X}" for b in data)


@dataclass(frozen=True, slots=True)
class TokenView:
    """Everything shown about one token of the document."""

    index: int
    token: Token
    start: int
    end: int
    covered: str
    """The document characters the token's span covers."""

    @property
    def shown_text(self) -> str:
        """The token's text for display: hex escapes for partial UTF-8."""
        if self.token.is_partial_utf8:
            return "⟨" + hex_bytes(self.token.token_bytes) + "⟩"
        return visible(self.token.token_bytes.decode("utf-8"))

    def rows(self) -> list[tuple[str, str]]:
        """Label/value pairs, in display order."""
        t = self.token
        rows = [("token", f"#{self.index}"), ("id", str(t.id)), ("piece", visible(t.piece)),
                ("bytes", hex_bytes(t.token_bytes) or "(none)"),
                ("span", f"{self.start}–{self.end} ({self.end - self.start} chars)")]
        if t.rank is not None:
            rows.append(("rank", str(t.rank)))
        if t.score is not None:
            rows.append(("score", f"{t.score:.4f}"))
        if t.is_partial_utf8:
            rows.append(("partial UTF-8", f"part of {visible(self.covered)!r}"))
        if t.special:
            rows.append(("special", "yes"))
        if t.unknown:
            rows.append(("unknown", "yes (the model's unknown token)"))
        return rows

    def html(self) -> str:
        """Rich-text table for tooltips and the inspector."""
        cells = "".join(f"<tr><td><b>{html.escape(k)}</b></td><td>{html.escape(v)}</td></tr>"
                        for k, v in self.rows())
        return f"<table cellspacing='2'>{cells}</table>"


def token_view(doc: DocTokens, index: int) -> TokenView:
    """The :class:`TokenView` of token ``index`` of ``doc``."""
    tok, shift = doc.token(index)
    start, end = tok.start + shift, tok.end + shift
    return TokenView(index, tok, start, end, doc.text[start:end])


class InspectorPanel(QWidget):
    """Shows the token under the text cursor."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._label = QLabel("Click a token to inspect it.")
        self._label.setWordWrap(True)
        self._label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        lay = QVBoxLayout(self)
        lay.addWidget(self._label)
        lay.addStretch(1)

    @property
    def text(self) -> str:
        """The shown text (for tests)."""
        return self._label.text()

    def show_token(self, view: TokenView | None) -> None:
        """Show ``view`` (or a hint when None)."""
        self._label.setText(view.html() if view else "Click a token to inspect it.")
