"""The *Vocabulary* panel (dock ``vocab``): the current tokenizer's whole vocabulary;
double-clicking an entry selects its first occurrence in the text."""

from __future__ import annotations

from typing import TYPE_CHECKING

from explorer.ui.panels.docking import ShownPanel
from explorer.ui.panels.registry import register_panel
from explorer.ui.panels.vocab_browser import VocabBrowser

if TYPE_CHECKING:
    from explorer.ui.panels.registry import PanelHost


class VocabDock(ShownPanel):
    """The vocabulary browser, following the current tokenizer."""

    def __init__(self, host: PanelHost) -> None:
        self.vocab = VocabBrowser()
        super().__init__(host, "vocab", "Vocabulary", self.vocab)
        host.tokenizer_changed.connect(lambda _t: self.refresh())
        self.vocab.token_activated.connect(self._on_vocab_token)

    def jobs_busy(self) -> bool:
        return (self.vocab.loader.current is not None
                or self.vocab.query_runner.current is not None)

    def update_panel(self) -> None:
        tok = self.host.tokenizer
        if tok is not None:
            self.vocab.set_tokenizer(tok)

    def _on_vocab_token(self, token_id: int) -> None:
        """Double-click in the vocabulary: select that token's first occurrence in the text."""
        index = self.vocab.locate(self.host.doc, token_id)
        if index is not None:
            self.host.select_token_by_user(index)


@register_panel("vocab", order=13)
def install_vocab_panel(host: PanelHost) -> VocabDock:
    """Dock the *Vocabulary* panel."""
    return VocabDock(host)
