"""The *Pipeline* panel (dock ``pipeline``): every stage of the selection (else the cursor's
line), aligned to the original text (:mod:`explorer.ui.panels.pipeline_view`). The trace comes from
:func:`explorer.engine.explain.pipeline.pipeline_trace`, run on a worker."""

from __future__ import annotations

from collections.abc import Generator
from typing import TYPE_CHECKING

from explorer.engine.tokenizer import Tokenizer
from explorer.ui.panels.cursor_span import line_window
from explorer.ui.panels.docking import CursorPanel
from explorer.ui.panels.pipeline_view import PipelineView
from explorer.ui.panels.registry import register_panel
from explorer.workers.latest import LatestRunner

if TYPE_CHECKING:
    from explorer.engine.explain.pipeline import PipelineTrace
    from explorer.ui.panels.registry import PanelHost

MAX_LINE_CHARS = 160
"""Characters either side of the cursor shown as stage rows (one column per character)."""


def _trace_job(tokenizer: Tokenizer, text: str) -> Generator[None, None, PipelineTrace]:
    from explorer.engine.explain.pipeline import pipeline_trace  # (on the first trace)

    yield None
    return pipeline_trace(tokenizer, text)


class PipelinePanel(CursorPanel):
    """Every stage of the line under the text cursor."""

    def __init__(self, host: PanelHost) -> None:
        self.view = PipelineView()
        super().__init__(host, "pipeline", "Pipeline", self.view)
        self._runner = LatestRunner(owner=self)

    def jobs_busy(self) -> bool:
        return self._runner.current is not None

    def update_panel(self) -> None:
        tok = self.host.tokenizer
        if tok is None:
            self.view.clear("No tokenizer loaded.")
            return
        text = self.host.text()
        selected = self.host.selection()
        if selected is not None and selected[0] < selected[1]:
            lo, hi = selected[0], min(selected[1], selected[0] + 2 * MAX_LINE_CHARS)
            what = "Selection"
        else:
            lo, hi = line_window(text, self.cursor_offset, MAX_LINE_CHARS)
            what = "Line"
        if lo >= hi:
            self.view.clear("Place the cursor on a line with text (or select text) to see "
                            "its stages.")
            return
        line = text[lo:hi]
        title = (f"{what} at characters {lo}–{hi} under {tok.info.name}: original, "
                 "normalized, pre-tokens, tokens, post-processor, decoded (hover for details)")
        self._runner.submit(_trace_job, tok, line,
                            on_return=lambda tr: self.view.set_trace(tr, title),
                            on_error=lambda e: self.view.clear(f"Could not trace: {e}"))


@register_panel("pipeline", order=20)
def install_pipeline_panel(host: PanelHost) -> PipelinePanel:
    """Dock the *Pipeline* panel."""
    return PipelinePanel(host)
