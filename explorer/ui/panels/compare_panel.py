"""The *Compare* panel (dock ``compare``): the text under the current tokenizer and the ones
ticked in "Compare with" (by default what was loaded, else another bundled tokenizer); the
other tokenizers load one at a time on a worker."""

from __future__ import annotations

from collections.abc import Generator
from pathlib import Path
from typing import TYPE_CHECKING

from explorer.engine.formats import load_tokenizer
from explorer.engine.tokenizer import Tokenizer
from explorer.ui.panels.compare import ComparePanel
from explorer.ui.panels.docking import ShownPanel
from explorer.ui.panels.registry import register_panel
from explorer.workers.latest import LatestRunner

if TYPE_CHECKING:
    from explorer.ui.panels.registry import PanelHost

COMPARE_DEFAULTS = ("bundled:cl100k_base", "bundled:o200k_base")
"""Compared with the current tokenizer when nothing else was loaded yet."""


def _load_job(path: Path) -> Generator[None, None, Tokenizer]:
    yield None
    return load_tokenizer(path)


class CompareDock(ShownPanel):
    """The comparison of the current tokenizer with others, following text and tokenizer."""

    def __init__(self, host: PanelHost) -> None:
        self.compare = ComparePanel()
        super().__init__(host, "compare", "Compare", self.compare)
        self._others: dict[str, Tokenizer] = {}  # source -> tokenizer loaded for comparing
        self._chosen: list[str] | None = None  # sources ticked in "Compare with" (None: auto)
        self._failed: set[str] = set()
        self._loader = LatestRunner(owner=self)
        host.tokenizer_changed.connect(lambda _t: self.refresh())
        host.text_changed.connect(lambda _text: self.refresh())
        host.loader.loaded.connect(lambda _s, _t: self.refresh())
        self.compare.choices_changed.connect(self._on_choices)

    def jobs_busy(self) -> bool:
        return self._loader.current is not None or self.compare.runner.current is not None

    def update_panel(self) -> None:
        from explorer.ui.tokenizer_source import bundled_sources, source_label, source_path

        tok = self.host.tokenizer
        if tok is None:
            return
        current = self.host.source
        loaded = {**self._others, **self.host.loader.cached()}
        candidates = [s for s in [*bundled_sources(), *loaded] if s != current]
        candidates = list(dict.fromkeys(candidates))  # unique, in order
        if self._chosen is None:  # not chosen yet: what was loaded, else another bundled one
            chosen = [s for s in loaded if s != current and not s.startswith("trained:")][:3]
            chosen = chosen or [s for s in COMPARE_DEFAULTS if s != current][:1]
        else:
            chosen = [s for s in self._chosen if s != current]
        self.compare.set_choices([(s, source_label(s)) for s in candidates], chosen)
        missing = [s for s in chosen if s not in loaded and s not in self._failed]
        if missing:  # load one at a time; each arrival refreshes the comparison
            source = missing[0]
            self._loader.submit(_load_job, source_path(source),
                                on_return=lambda t, s=source: self._add_other(s, t),
                                on_error=lambda e, s=source: self._load_failed(s, e))
        self.compare.set_tokenizers([tok, *(loaded[s] for s in chosen if s in loaded)])
        self.compare.set_text(self.host.text())

    def compare_with(self, others: dict[str, Tokenizer]) -> None:
        """Compare the current tokenizer with ``others`` (source label -> tokenizer made in
        the window, e.g. by the Train panel's "Train both") on the text, and show Compare."""
        self._others.update(others)
        self._chosen = list(others)
        self.dock.show()
        self.dock.raise_()
        self.refresh()

    def _on_choices(self, sources: list[str]) -> None:
        self._chosen = sources
        self.refresh()

    def _add_other(self, source: str, tokenizer: Tokenizer) -> None:
        self._others[source] = tokenizer
        self.refresh()

    def _load_failed(self, source: str, error: object) -> None:
        self._failed.add(source)  # never retried in a loop
        self.compare.title.setText(f"Could not load {source}: {error}")


@register_panel("compare", order=12)
def install_compare_panel(host: PanelHost) -> CompareDock:
    """Dock the *Compare* panel."""
    return CompareDock(host)
