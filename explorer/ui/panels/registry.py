"""How side panels join the window: each panel module registers itself; the window imports
only this module.

A panel module calls :func:`register_panel` at import time with a ``build(host)`` function.
:func:`install_panels` imports every module of the :mod:`explorer.ui.panels` package (so a new
panel is one new module, nothing else to edit), then calls each ``build`` in ``order``. A
``build`` docks its widget(s) with ``host.add_panel(key, title, widget, area)``, connects to the
host's signals and returns a :class:`Panel` (or None).

The host is the main window seen through :class:`PanelHost`: panels never import the window,
and the window never imports a panel.

Screenshot views (``--screenshot OUT.png --view NAME``): every docked panel key is a view; a
panel may add more views that need preparation (say, training paused at a fixed step) by
listing them in :attr:`Panel.views` and handling :meth:`Panel.prepare_view`.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from PySide6.QtCore import Qt

if TYPE_CHECKING:
    from PySide6.QtCore import SignalInstance
    from PySide6.QtWidgets import QDockWidget, QWidget

    from explorer.engine.tokenizer import Tokenizer
    from explorer.ui.tokenizer_source import TokenizerLoader
    from explorer.workers.doctokens import DocTokens

Area = Qt.DockWidgetArea


class PanelHost(Protocol):
    """What a panel may use of the main window."""

    tokenizer_changed: SignalInstance
    """``(Tokenizer)``: the current tokenizer changed."""
    text_changed: SignalInstance
    """``(str)``: the text changed (debounced)."""
    cursor_token_changed: SignalInstance
    """``(int, TokenView | None)``: the token under the text cursor."""
    encoding_ready: SignalInstance
    """``(DocTokens)``: a new result for the whole text."""
    panels: dict[str, QDockWidget]
    """Docked panels by key."""
    source: str
    """The current tokenizer's source (``bundled:<name>`` or a path)."""
    loader: TokenizerLoader
    """Loads vocabularies off the GUI thread; ``loaded``/``failed`` signals, ``cached()``."""

    @property
    def tokenizer(self) -> Tokenizer | None:
        """The current tokenizer."""
        ...

    @property
    def doc(self) -> DocTokens | None:
        """The latest encoding of the text."""
        ...

    def text(self) -> str:
        """The editor's text."""
        ...

    def selection(self) -> tuple[int, int] | None:
        """Code-point span of the editor's selection, or None when nothing is selected."""
        ...

    def add_panel(self, key: str, title: str, widget: QWidget,
                  area: Qt.DockWidgetArea = ...) -> QDockWidget:
        """Dock ``widget`` as panel ``key``."""
        ...

    def is_panel_shown(self, key: str) -> bool:
        """True when panel ``key`` is open and its tab is current."""
        ...

    def open_source(self, source: str) -> None:
        """Load a vocabulary and make it current."""
        ...

    def use_temporary_tokenizer(self, tokenizer: Tokenizer, label: str) -> None:
        """Encode the text with ``tokenizer`` (made by a panel) without remembering it."""
        ...

    def select_token_by_user(self, index: int) -> None:
        """Move the text cursor to token ``index``: only in answer to a user's action."""
        ...


@runtime_checkable
class Panel(Protocol):
    """What the window asks of an installed panel."""

    def busy(self) -> bool:
        """True while a shown part of the panel waits for a worker (screenshots wait)."""
        ...


@dataclass(frozen=True)
class PanelSpec:
    """A registered panel: ``build(host)`` docks it and returns its :class:`Panel`."""

    name: str
    build: Callable[[PanelHost], Any]
    order: int = 100


_REGISTRY: dict[str, PanelSpec] = {}


def register_panel(name: str, order: int = 100) -> Callable[[Callable[[PanelHost], Any]],
                                                            Callable[[PanelHost], Any]]:
    """Decorator: register ``build(host)`` as panel module ``name`` (installed by ``order``)."""

    def deco(build: Callable[[PanelHost], Any]) -> Callable[[PanelHost], Any]:
        _REGISTRY[name] = PanelSpec(name, build, order)
        return build

    return deco


def discover() -> list[PanelSpec]:
    """Import every module of :mod:`explorer.ui.panels`; the registered panels in order."""
    import explorer.ui.panels as package

    for info in pkgutil.iter_modules(package.__path__):
        importlib.import_module(f"{package.__name__}.{info.name}")
    return sorted(_REGISTRY.values(), key=lambda s: (s.order, s.name))


def install_panels(host: PanelHost) -> dict[str, Any]:
    """Build every registered panel into ``host``; ``{name: panel object}``."""
    return {spec.name: spec.build(host) for spec in discover()}


def panel_views(installed: dict[str, Any]) -> dict[str, Any]:
    """Extra screenshot views: ``{view name: panel object that prepares it}``."""
    views: dict[str, Any] = {}
    for panel in installed.values():
        for view in getattr(panel, "views", ()):
            views[view] = panel
    return views
