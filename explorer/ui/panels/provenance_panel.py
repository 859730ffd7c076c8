"""The *Provenance* panel (dock ``provenance``): how the token under the cursor was made (BPE
merge tree, Unigram rivals, WordPiece steps) and why the boundaries around it sit where they
sit (:mod:`explorer.ui.panels.provenance_view`). Computed by :mod:`explorer.engine.explain`
on a worker for the cursor's line."""

from __future__ import annotations

from collections.abc import Generator
from typing import TYPE_CHECKING

from explorer.engine.tokenizer import Tokenizer
from explorer.ui.panels.cursor_span import line_window
from explorer.ui.panels.docking import CursorPanel
from explorer.ui.panels.provenance_view import ProvenanceResult, ProvenanceView
from explorer.ui.panels.registry import register_panel
from explorer.workers.latest import LatestRunner

if TYPE_CHECKING:
    from explorer.ui.panels.registry import PanelHost

MAX_LINE_CHARS = 80
"""Characters of the cursor's line, either side, that are encoded and explained."""
NEIGHBOURS = 6
"""Tokens either side of the cursor's token shown in the boundary strip."""


def provenance_job(tokenizer: Tokenizer, line: str,
                   offset: int) -> Generator[None, None, ProvenanceResult | None]:
    """Provenance of the token at ``offset`` of ``line`` and of its neighbours, and the
    explanation of every boundary between them (a yield between items: cancellable). The
    boundary shown first is the one at ``offset`` when the cursor sits between two tokens
    (the user clicked that gap in the editor), else one next to the cursor's token."""
    # (the explainers import every tokenizer family: on the first explanation, not at start)
    from explorer.engine.explain.boundary import boundary_index, explain_boundary
    from explorer.engine.explain.pipeline import pipeline_trace
    from explorer.engine.explain.provenance import token_provenance

    yield None
    enc = tokenizer.encode(line)
    if not len(enc):
        return None
    current = enc.token_at(min(offset, len(line) - 1))
    current = 0 if current is None else current
    lo, hi = max(0, current - NEIGHBOURS), min(len(enc), current + NEIGHBOURS + 1)
    trace = pipeline_trace(tokenizer, line)
    info = tokenizer.info
    result = ProvenanceResult(list(enc.tokens[lo:hi]), lo, current=current,
                              byte_level=info.format == "tiktoken" or "ByteLevel" in info.decoder)
    for k in range(lo, hi):
        yield None
        result.provenance[k] = token_provenance(tokenizer, line, k, enc)
    for k in range(lo + 1, hi):
        yield None
        result.boundaries[k] = explain_boundary(tokenizer, line, k, enc, trace)
    at = boundary_index(enc, offset)
    if at is not None and at in result.boundaries:  # the cursor sits on a boundary (a click
        result.boundary = at                        # on a gap between tokens): that one
        return result
    around = [k for k in (current + 1, current) if k in result.boundaries]
    inside = [k for k in around if result.boundaries[k].cause not in ("pre-tokenizer",
                                                                      "special")]
    result.boundary = (inside or around or [None])[0]
    return result


class ProvenancePanel(CursorPanel):
    """Provenance and boundary explanations around the text cursor."""

    def __init__(self, host: PanelHost) -> None:
        self.view = ProvenanceView()
        super().__init__(host, "provenance", "Provenance", self.view)
        self._runner = LatestRunner(owner=self)

    def jobs_busy(self) -> bool:
        return self._runner.current is not None

    def update_panel(self) -> None:
        tok = self.host.tokenizer
        if tok is None:
            self.view.clear("No tokenizer loaded.")
            return
        text = self.host.text()
        offset = self.cursor_offset or 0
        lo, hi = line_window(text, offset, MAX_LINE_CHARS)
        if lo >= hi:
            self.view.clear("Place the cursor on a token to see how it was made.")
            return
        title = (f"Tokens around character {offset} under {tok.info.name}: hover or click a "
                 "boundary (the bars between tokens) for why it is there, click a token for "
                 "how it was made.")
        self._runner.submit(provenance_job, tok, text[lo:hi], max(0, offset - lo),
                            on_return=lambda r: self._show(r, title),
                            on_error=lambda e: self.view.clear(f"Could not explain: {e}"))

    def _show(self, result: ProvenanceResult | None, title: str) -> None:
        if result is None:
            self.view.clear("No token here.")
        else:
            self.view.set_result(result, title)


@register_panel("provenance", order=21)
def install_provenance_panel(host: PanelHost) -> ProvenancePanel:
    """Dock the *Provenance* panel."""
    return ProvenancePanel(host)
