"""The *Unigram Lattice* panel (dock ``lattice``): the lattice of the pre-token under the
cursor, from ``tokenizer.lattice``; a tokenizer without one gets a one-line explanation."""

from __future__ import annotations

from typing import TYPE_CHECKING

from explorer.ui.panels.cursor_span import cursor_pre_token
from explorer.ui.panels.docking import CursorPanel
from explorer.ui.panels.lattice import LatticePanel
from explorer.ui.panels.registry import register_panel
from explorer.ui.panels.stand_in import StandIns, last_trained, offer_link, stand_in_note

if TYPE_CHECKING:
    from explorer.ui.panels.registry import PanelHost

MAX_LATTICE_CHARS = 120
"""Longer pieces are not drawn as a lattice (thousands of boxes read as noise)."""


class LatticeDock(CursorPanel):
    """The Unigram lattice of the pre-token under the text cursor."""

    def __init__(self, host: PanelHost) -> None:
        self.lattice = LatticePanel()
        super().__init__(host, "lattice", "Unigram Lattice", self.lattice)
        # One-click offer of a Unigram model when the editor's tokenizer is not one.
        self.stand_ins = StandIns(lambda kind: last_trained(host, kind), self)
        self.stand_ins.ready.connect(lambda _kind: self.refresh())
        self.lattice.title.linkActivated.connect(lambda _h: self.stand_ins.choose("lattice"))

    def jobs_busy(self) -> bool:
        return self.stand_ins.busy()

    def update_panel(self) -> None:
        current = self.host.tokenizer
        tok = self.stand_ins.tokenizer_for("lattice", current)
        if tok is None:
            self.lattice.clear(f"{current.info.name if current else 'This tokenizer'} is not a "
                               "Unigram model: no lattice to show."
                               + offer_link("lattice", self.stand_ins.offer_label("lattice")))
            return
        found = cursor_pre_token(tok, self.host.text(), self.cursor_offset)
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


@register_panel("lattice", order=11)
def install_lattice_panel(host: PanelHost) -> LatticeDock:
    """Dock the *Unigram Lattice* panel."""
    return LatticeDock(host)
