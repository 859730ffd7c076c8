"""What every registered side panel shares: docking in a scroll area, and refreshing only
while its dock is shown.

:class:`ShownPanel` docks a widget with ``host.add_panel`` and keeps one "stale" flag: a
panel asks for a refresh with :meth:`ShownPanel.refresh`; it runs at once when the dock's tab
is on screen, otherwise when the tab is next shown, so typing never pays for panels nobody
looks at. Qt keeps the widgets of background dock tabs "visible"; the dock's
``visibilityChanged`` is the one reliable report of which tab is on screen.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Qt, QTimer
from PySide6.QtWidgets import QDockWidget, QWidget

from explorer.ui.panels.scroll_area import PanelScroll

if TYPE_CHECKING:
    from explorer.ui.panels.registry import PanelHost

Area = Qt.DockWidgetArea
WINDOW_OWN_PANELS = ("tokens", "inspector")
"""The window's own panels stay the front tabs of their areas."""


def dock_scrolled(host: PanelHost, key: str, title: str, widget: QWidget,
                  area: Qt.DockWidgetArea = Area.BottomDockWidgetArea) -> QDockWidget:
    """Dock ``widget`` (in a :class:`PanelScroll`) as panel ``key``, tabbed behind the
    window's own panels."""
    dock = host.add_panel(key, title, PanelScroll(widget), area)
    for own in WINDOW_OWN_PANELS:
        if own in host.panels:
            host.panels[own].raise_()
    return dock


class ShownPanel(QObject):
    """A docked panel that refreshes only while shown: subclasses implement :meth:`update_panel`
    and call :meth:`refresh` whenever what they show may have changed."""

    def __init__(self, host: PanelHost, key: str, title: str, widget: QWidget,
                 area: Qt.DockWidgetArea = Area.BottomDockWidgetArea) -> None:
        super().__init__(host)  # type: ignore[arg-type]  # the host is the main window
        self.host = host
        self.key = key
        self.widget = widget
        self.dock = dock_scrolled(host, key, title, widget, area)
        self.stale = True
        self._shown = False
        self.dock.visibilityChanged.connect(self._on_visibility)

    def shown(self) -> bool:
        """True when the dock's tab is on screen."""
        return self._shown and self.dock.isVisible()

    def refresh(self) -> None:
        """What the panel shows may have changed: update now if shown, else when shown."""
        self.stale = True
        if self.shown():
            self.stale = False
            self.update_panel()

    def update_panel(self) -> None:
        """Bring the panel up to date with the window (only called while shown)."""

    def jobs_busy(self) -> bool:
        """True while a worker of the panel runs (subclasses with workers override)."""
        return False

    def busy(self) -> bool:
        """True while the shown panel still waits for a refresh or a worker."""
        return self.jobs_busy() or (self.stale and self.shown())

    def _on_visibility(self, visible: bool) -> None:
        self._shown = visible
        if visible:
            self.refresh()


class CursorPanel(ShownPanel):
    """A :class:`ShownPanel` about the text under the cursor: it refreshes when the tokenizer
    or the text changes, and :data:`~explorer.ui.panels.cursor_span.CURSOR_DELAY_MS` after the
    token under the cursor does; :attr:`cursor_offset` is that token's start (None: none)."""

    def __init__(self, host: PanelHost, key: str, title: str, widget: QWidget,
                 area: Qt.DockWidgetArea = Area.BottomDockWidgetArea) -> None:
        from explorer.ui.panels.cursor_span import CURSOR_DELAY_MS

        super().__init__(host, key, title, widget, area)
        self.cursor_offset: int | None = None
        self._cursor_timer = QTimer(self)
        self._cursor_timer.setSingleShot(True)
        self._cursor_timer.setInterval(CURSOR_DELAY_MS)
        self._cursor_timer.timeout.connect(self.refresh)
        host.tokenizer_changed.connect(lambda _t: self.refresh())
        host.text_changed.connect(lambda _text: self.refresh())
        host.cursor_token_changed.connect(self._on_cursor)

    def _on_cursor(self, _index: int, view: Any) -> None:
        self.cursor_offset = None if view is None else view.start
        self.stale = True
        self._cursor_timer.start()
