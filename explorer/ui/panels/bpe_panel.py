"""The *BPE Merges* panel (dock ``bpe``): the merge queue of the pre-token under the cursor,
from ``tokenizer.trace_merges``; a tokenizer that cannot trace gets a one-line explanation."""

from __future__ import annotations

from typing import TYPE_CHECKING

from explorer.ui.panels.cursor_span import cursor_pre_token
from explorer.ui.panels.docking import CursorPanel
from explorer.ui.panels.merge_queue import MergeQueuePanel
from explorer.ui.panels.registry import register_panel
from explorer.ui.panels.stand_in import StandIns, last_trained, offer_link, stand_in_note

if TYPE_CHECKING:
    from explorer.ui.panels.registry import PanelHost

MAX_TRACE_BYTES = 300
"""Longer pre-tokens are not traced: every traced step sorts the whole queue (O(n² log n))."""


class BpePanel(CursorPanel):
    """The merge queue of the pre-token under the text cursor."""

    def __init__(self, host: PanelHost) -> None:
        self.merge_queue = MergeQueuePanel()
        super().__init__(host, "bpe", "BPE Merges", self.merge_queue)
        # One-click offer of a BPE model when the editor's tokenizer cannot trace merges.
        self.stand_ins = StandIns(lambda kind: last_trained(host, kind), self)
        self.stand_ins.ready.connect(lambda _kind: self.refresh())
        self.merge_queue.title.linkActivated.connect(lambda _h: self.stand_ins.choose("bpe"))

    def jobs_busy(self) -> bool:
        return self.stand_ins.busy()

    def update_panel(self) -> None:
        current = self.host.tokenizer
        tok = self.stand_ins.tokenizer_for("bpe", current)
        if tok is None:
            self.merge_queue.clear(f"{current.info.name if current else 'This tokenizer'} has "
                                   "no BPE merge queue to show (not a byte-level BPE)."
                                   + offer_link("bpe", self.stand_ins.offer_label("bpe")))
            return
        found = cursor_pre_token(tok, self.host.text(), self.cursor_offset)
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


@register_panel("bpe", order=10)
def install_bpe_panel(host: PanelHost) -> BpePanel:
    """Dock the *BPE Merges* panel."""
    return BpePanel(host)
