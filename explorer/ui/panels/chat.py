"""Chat panel (dock key ``chat``, ``--view chat``): how many tokens a conversation costs once
the model's chat template has turned it into a prompt, and where the special tokens go.

Left: the conversation (:mod:`.chat_messages`) and, under it, the tools/documents JSON
that tool-use and RAG templates take. Top: the template (the model folder's
``chat_template`` and its named ones, a GGUF's ``tokenizer.chat_template``, or a built-in),
the ``add_generation_prompt`` toggle, the total and a context-length gauge. Right: the
rendered prompt, tokenized and coloured like the editor, special tokens drawn dark so they
stand out; each message row shows its own token count.

The engine does the work (:mod:`explorer.engine.chat`): the template is untrusted code and
renders in Jinja2's sandbox with a time and output limit, on a worker (latest request wins),
so a hostile template gives a message here while the window stays live.
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QObject, Qt, QTimer
from PySide6.QtGui import QColor, QFont, QHelpEvent, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QProgressBar,
    QSizePolicy,
    QSplitter,
    QTextEdit,
    QToolTip,
    QVBoxLayout,
    QWidget,
)

from explorer.engine.chat.templates import BUILTIN_TEMPLATES, ChatSetup, chat_setup
from explorer.engine.offsets import Utf16Map
from explorer.engine.tokenizer import Tokenizer
from explorer.ui.palettes import DEFAULT_PALETTE, PALETTES, second_shade, shaded_slots
from explorer.ui.panels.chat_messages import MessageList
from explorer.ui.panels.registry import PanelHost, register_panel
from explorer.workers.latest import LatestRunner

if TYPE_CHECKING:
    from explorer.engine.chat.prompt import ChatPrompt

KEY = "chat"
EDIT_DELAY_MS = 300
MAX_PAINTED_TOKENS = 20_000
"""Tokens coloured in the prompt view (counts always cover the whole prompt)."""
SPECIAL_BACKGROUNDS, SPECIAL_TEXT = ("#263238", "#00574b"), "#ffffff"
"""Special tokens: dark (two shades, alternating, so adjacent ones stay apart), white text."""


def setup_job(source: str, specials: dict[str, int]) -> Generator[None, None, ChatSetup]:
    """Worker job: the templates and special tokens of ``source`` (files are read here)."""
    yield None
    from explorer.ui.tokenizer_source import BUNDLED_PREFIX, source_path

    return chat_setup(None if source.startswith(BUNDLED_PREFIX) else source_path(source),
                      specials)


@dataclass(frozen=True)
class RenderRequest:
    """Everything one render needs (immutable: handed to a worker)."""

    tokenizer: Tokenizer
    template: str
    messages: tuple[dict[str, str], ...]
    add_generation_prompt: bool
    variables: dict[str, str]
    context_length: int | None
    tools: tuple[object, ...] | None = None
    documents: tuple[object, ...] | None = None


def render_job(req: RenderRequest) -> Generator[None, None, ChatPrompt]:
    """Worker job: render (sandboxed, time-limited) and tokenize the conversation."""
    yield None
    from explorer.engine.chat.prompt import build_prompt  # jinja2: on the first render

    return build_prompt(req.tokenizer, req.template, list(req.messages),
                        add_generation_prompt=req.add_generation_prompt,
                        variables=req.variables, context_length=req.context_length,
                        tools=None if req.tools is None else list(req.tools),
                        documents=None if req.documents is None else list(req.documents))


class ChatPanel(QWidget):
    """The chat view's widgets; :class:`ChatDock` feeds it."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.template = QComboBox()
        self.template.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.template.setMinimumWidth(90)  # preferred: its contents; minimum: small
        self.template.setToolTip("The chat template: the model's own, or a built-in")
        self.generation = QCheckBox("add_generation_prompt")
        self.generation.setChecked(True)
        self.total = QLabel("")
        self.total.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.total.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        self.gauge = QProgressBar()
        self.gauge.setMinimumWidth(80)  # the panel must not widen the window's minimum
        self.gauge.setMaximumWidth(240)
        self.gauge.setFormat("%p% of context")
        self.status = QLabel("")
        self.status.setWordWrap(True)
        self.messages = MessageList()
        self.extras = QPlainTextEdit()
        self.extras.setPlaceholderText('Tools / documents for templates that use them (JSON): '
                                       '{"tools": [...], "documents": [...]}')
        self.extras.setToolTip("Passed to the template as apply_chat_template(tools=..., "
                               "documents=...) passes them (tool-use and RAG templates)")
        self.extras.setMaximumHeight(72)
        self.prompt = QTextEdit()
        self.prompt.setReadOnly(True)
        self.prompt.setLineWrapMode(QTextEdit.LineWrapMode.WidgetWidth)
        font = QFont("monospace")
        font.setStyleHint(QFont.StyleHint.TypeWriter)
        self.prompt.setFont(font)
        self.prompt.viewport().installEventFilter(self)
        self.shown: ChatPrompt | None = None
        self._u16: Utf16Map | None = None
        top = QHBoxLayout()
        top.addWidget(QLabel("Template:"))
        top.addWidget(self.template)
        top.addWidget(self.generation)
        top.addWidget(self.total, 1)  # takes the free room, right-aligned; may shrink
        top.addWidget(self.gauge)
        right = QWidget()
        rl = QVBoxLayout(right)
        rl.setContentsMargins(0, 0, 0, 0)
        rl.addWidget(QLabel("Rendered prompt (special tokens dark):"))
        rl.addWidget(self.prompt, 1)
        left = QWidget()
        ll = QVBoxLayout(left)
        ll.setContentsMargins(0, 0, 0, 0)
        ll.addWidget(self.messages, 1)
        ll.addWidget(self.extras)
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(left)
        split.addWidget(right)
        split.setStretchFactor(0, 1)
        split.setStretchFactor(1, 1)
        split.setSizes([560, 640])
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.status)
        layout.addWidget(split, 1)

    def set_templates(self, setup: ChatSetup) -> None:
        """Offer ``setup``'s templates, then the built-ins; select the model's default template,
        or keep a built-in chosen before when the model has none."""
        previous = self.template.currentData()
        self.template.blockSignals(True)
        self.template.clear()
        for name in setup.templates:
            self.template.addItem(f"{name} (from the model)", name)
        for name in BUILTIN_TEMPLATES:
            if name not in setup.templates:
                self.template.addItem(f"{name} (built-in)", name)
        wanted = setup.default_name() or (previous if previous in setup.names() else None)
        index = self.template.findData(wanted or "chatml")
        self.template.setCurrentIndex(max(index, 0))
        self.template.blockSignals(False)

    def token_tooltip(self, utf16_pos: int) -> str | None:
        """What hovering the prompt at ``utf16_pos`` shows: token, id, bytes, message."""
        prompt, u16 = self.shown, self._u16
        if prompt is None or u16 is None:
            return None
        index = prompt.encoding.token_at(u16.to_codepoint(utf16_pos))
        if index is None:
            return None
        tok = prompt.encoding.tokens[index]
        owner = prompt.message_of_token(index)
        where = ("generation prompt" if owner is None and tok.start >= prompt.tail_span[0]
                 else "template text" if owner is None
                 else f"message {owner + 1} ({self.messages.messages()[owner]['role']})"
                 if owner < len(self.messages.rows) else f"message {owner + 1}")
        kind = "special token" if tok.special else "token"
        return (f"{kind} #{index}  id {tok.id}  {tok.piece!r}\n"
                f"bytes {tok.token_bytes.hex(' ').upper()}\n{where}")

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """Tooltips over the prompt's tokens."""
        if (watched is self.prompt.viewport() and event.type() == QEvent.Type.ToolTip
                and isinstance(event, QHelpEvent)):
            pos = self.prompt.cursorForPosition(event.pos()).position()
            text = self.token_tooltip(pos)
            if text:
                QToolTip.showText(event.globalPos(), text, self.prompt)
            else:
                QToolTip.hideText()
            return True
        return super().eventFilter(watched, event)

    def show_prompt(self, prompt: ChatPrompt, palette: str = DEFAULT_PALETTE) -> None:
        """Paint the prompt's tokens, the per-message counts, total and gauge."""
        u16 = Utf16Map(prompt.text)
        self.shown, self._u16 = prompt, u16
        self.status.setText("")
        self.status.setStyleSheet("")
        self.prompt.setPlainText(prompt.text)
        colors = [QColor(c) for c in PALETTES[palette].colors(False)]
        cursor = QTextCursor(self.prompt.document())
        specials = []
        for shade in SPECIAL_BACKGROUNDS:
            fmt = QTextCharFormat()
            fmt.setBackground(QColor(shade))
            fmt.setForeground(QColor(SPECIAL_TEXT))
            fmt.setFontWeight(QFont.Weight.Bold)
            specials.append(fmt)
        n_special = 0
        painted = prompt.encoding.tokens[:MAX_PAINTED_TOKENS]
        slots = shaded_slots((t.id for t in painted), len(colors))
        for tok, (slot, shaded) in zip(painted, slots, strict=True):
            if tok.end <= tok.start:
                continue
            start, length = u16.span_to_utf16(tok.start, tok.end)
            cursor.setPosition(start)
            cursor.setPosition(start + length, QTextCursor.MoveMode.KeepAnchor)
            if tok.special:
                fmt = specials[n_special % 2]
                n_special += 1
            else:
                fmt = QTextCharFormat()
                fmt.setBackground(second_shade(colors[slot], False) if shaded else colors[slot])
            cursor.setCharFormat(fmt)
        self.messages.set_counts(prompt.counts)
        tail = f", generation prompt {prompt.tail_count}" if prompt.tail_count else ""
        if prompt.context_length:
            share = prompt.total / prompt.context_length
            self.total.setText(f"{prompt.total:,} tokens{tail} · context "
                               f"{prompt.context_length:,}")
            self.gauge.setRange(0, 1000)
            self.gauge.setValue(min(1000, round(share * 1000)))
            self.gauge.setFormat(f"{share:.1%} of context")
            self.gauge.setEnabled(True)
        else:
            self.total.setText(f"{prompt.total:,} tokens{tail}")
            self.gauge.setRange(0, 1)
            self.gauge.setValue(0)
            self.gauge.setFormat("context length unknown")
            self.gauge.setEnabled(False)

    def show_error(self, message: str) -> None:
        """A failed render: say why; the conversation and the last prompt stay."""
        self.status.setText(f"⚠ {message}")
        self.status.setStyleSheet("color: #b00020;")
        self.messages.set_counts(None)


class ChatDock(QObject):
    """The chat panel docked in the window and kept current (the :class:`Panel` object)."""

    def __init__(self, host: PanelHost) -> None:
        super().__init__(host)  # type: ignore[arg-type]
        self.host = host
        self.panel = ChatPanel()
        self.dock = host.add_panel(KEY, "Chat", self.panel, Qt.DockWidgetArea.BottomDockWidgetArea)
        self.setup: ChatSetup | None = None
        self._setup_for: tuple[str, int] | None = None
        self._stale = True
        self._shown = False
        self.setup_runner = LatestRunner(owner=self)
        self.render_runner = LatestRunner(owner=self)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(EDIT_DELAY_MS)
        self._timer.timeout.connect(self.refresh)
        host.tokenizer_changed.connect(self._on_tokenizer)
        self.dock.visibilityChanged.connect(self._on_visibility)
        self.panel.messages.changed.connect(self._edited)
        self.panel.template.currentIndexChanged.connect(lambda _i: self._edited())
        self.panel.generation.toggled.connect(lambda _b: self._edited())
        self.panel.extras.textChanged.connect(self._edited)

    def busy(self) -> bool:
        """True while the shown panel waits for its setup or render."""
        waiting = self.setup_runner.current is not None or self.render_runner.current is not None
        return waiting or (self._visible() and (self._stale or self._timer.isActive()))

    def _visible(self) -> bool:
        return self._shown and self.dock.isVisible()

    def _on_visibility(self, visible: bool) -> None:
        self._shown = visible
        if visible and self._stale:
            self.refresh()

    def _on_tokenizer(self, _tokenizer: Tokenizer) -> None:
        self._stale = True
        if self._visible():
            self.refresh()

    def _edited(self) -> None:
        self._stale = True
        if self._visible():
            self._timer.start()

    def refresh(self) -> None:
        """Bring the setup (templates) up to date, then render."""
        tok = self.host.tokenizer
        if tok is None:
            return
        key = (self.host.source, id(tok))
        if self._setup_for != key:
            self._setup_for = key
            self.setup_runner.submit(setup_job, self.host.source, dict(tok.info.special_tokens),
                                     on_return=self._on_setup, on_error=self._on_setup_error)
            return
        self._render()

    def _on_setup(self, setup: ChatSetup) -> None:
        self.setup = setup
        self.panel.set_templates(setup)
        self._render()

    def _on_setup_error(self, error: object) -> None:
        self.setup = ChatSetup()
        self.panel.set_templates(self.setup)
        self.panel.show_error(f"cannot read the model's chat templates: {error}")
        self._render()

    def _render(self) -> None:
        tok, setup = self.host.tokenizer, self.setup
        if tok is None or setup is None:
            return
        self._stale = False
        name = self.panel.template.currentData() or "chatml"
        try:
            source = setup.template(name)
        except Exception as e:  # shown, never raised into Qt
            self.panel.show_error(str(e))
            return
        messages = tuple(self.panel.messages.messages())
        if not messages:
            self.panel.show_error("add a message to render the conversation")
            return
        try:
            from explorer.engine.chat.prompt import parse_tools_documents

            tools, documents = parse_tools_documents(self.panel.extras.toPlainText())
        except Exception as e:  # malformed JSON: say so, keep the text and the last prompt
            self.panel.show_error(str(e))
            return
        req = RenderRequest(tok, source, messages, self.panel.generation.isChecked(),
                            dict(setup.variables), setup.context_length,
                            None if tools is None else tuple(tools),
                            None if documents is None else tuple(documents))
        self.render_runner.submit(render_job, req, on_return=self._on_prompt,
                                  on_error=self._on_render_error)

    def _on_prompt(self, prompt: ChatPrompt) -> None:
        palette = getattr(getattr(self.host, "settings", None), "palette", DEFAULT_PALETTE)
        self.panel.show_prompt(prompt, palette if palette in PALETTES else DEFAULT_PALETTE)

    def _on_render_error(self, error: object) -> None:
        self.panel.show_error(str(error) or type(error).__name__)


def messages_of(panel: ChatPanel) -> Sequence[dict[str, str]]:
    """The conversation shown in ``panel`` (tests, screenshots)."""
    return panel.messages.messages()


@register_panel(KEY, order=60)
def install_chat_panel(host: PanelHost) -> ChatDock:
    """Dock the chat panel in ``host``."""
    return ChatDock(host)


__all__ = ["ChatDock", "ChatPanel", "install_chat_panel", "messages_of", "setup_job"]
