"""What a token is, as text: the hover tooltip and the inspector panel share it.

Partial-UTF-8 tokens (bytes of one character split over several tokens) show their bytes in
hex and the character(s) they are part of, never U+FFFD. The inspector also says when the
token holds only part of a character (a grapheme cluster shared with other tokens, see
:mod:`explorer.ui.split_chars`): which tokens share it and the bytes of each part.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from explorer.engine.encoding import Token
from explorer.ui.split_chars import SplitChar, split_characters
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
    """``E6 97 A5`` style hex: the one spelling of bytes in every view."""
    return " ".join(f"{b:02X}" for b in data)


def count(n: int, noun: str, plural: str | None = None) -> str:
    """``1 char``, ``2 chars``, ``1,024 bytes``."""
    return f"{n:,} {noun if n == 1 else plural or noun + 's'}"


@dataclass(frozen=True, slots=True)
class TokenView:
    """Everything shown about one token of the document."""

    index: int
    token: Token
    start: int
    end: int
    covered: str
    """The document characters the token's span covers."""
    doc: DocTokens | None = field(default=None, compare=False, repr=False)
    """The result the token is from (for :meth:`split_characters`)."""

    def split_characters(self) -> list[SplitChar]:
        """Characters this token holds only part of (empty without ``doc``)."""
        return [] if self.doc is None else split_characters(self.doc, self.index)

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
                ("span", f"{self.start}–{self.end} ({count(self.end - self.start, 'char')})")]
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
    return TokenView(index, tok, start, end, doc.text[start:end], doc)


def code_points(text: str, limit: int = 8) -> str:
    """``U+0938 U+094D`` style code points (the first ``limit``, then an ellipsis)."""
    out = " ".join(f"U+{ord(ch):04X}" for ch in text[:limit])
    return out + (" …" if len(text) > limit else "")


def split_note_html(chars: list[SplitChar], index: int) -> str:
    """The inspector's note on characters token ``index`` shares with other tokens."""
    notes = []
    for ch in chars:
        others = len(ch.parts) - 1
        head = (f"<p><b>Split character:</b> this token holds only part of "
                f"<b>{html.escape(visible(ch.text))}</b> ({html.escape(code_points(ch.text))}, "
                f"{len(ch.text.encode('utf-8', 'surrogatepass'))} UTF-8 bytes); "
                f"{others} other token{'s' if others != 1 else ''} hold"
                f"{'s' if others == 1 else ''} the rest.</p>")
        label = "bytes of its part" if ch.exact else "token bytes (text normalized)"
        rows = "".join(
            f"<tr><td>{'<b>' if p.index == index else ''}#{p.index}"
            f"{' (this)</b>' if p.index == index else ''}</td><td>{p.token_id}</td>"
            f"<td>{hex_bytes(p.data)}</td></tr>" for p in ch.parts)
        notes.append(f"{head}<table cellspacing='2'><tr><th align='left'>token</th>"
                     f"<th align='left'>id</th><th align='left'>{label}</th></tr>{rows}</table>")
    return "".join(notes)


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
        if view is None:
            self._label.setText("Click a token to inspect it.")
            return
        self._label.setText(view.html() + split_note_html(view.split_characters(), view.index))
