"""Fixtures of the real-window tests in tests/xwindow: the app under Xvfb, driven by xdotool
(see xdriver.py). A plugin loaded by tests/conftest.py, not a conftest of its own: every
conftest.py is imported as the module ``conftest``, and a second one would shadow
tests/ui/conftest.py for the ``from conftest import ...`` lines of the UI tests.

They need Debian's ``xvfb`` and ``xdotool`` (and Qt's xcb libraries); ``.ci/run`` installs
them. Without them the tests are skipped locally and **fail** under ``CI=true``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from xdriver import XApp, XServer, missing_tools


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test here is a real-window test."""
    here = Path(__file__).parent / "xwindow"
    for item in items:
        if Path(str(item.fspath)).is_relative_to(here):
            item.add_marker(pytest.mark.xwindow)


@pytest.fixture(scope="session")
def xserver() -> Iterator[XServer]:
    """One Xvfb display for the session."""
    missing = missing_tools()
    if missing:
        msg = (f"real-window tests need {', '.join(missing)} "
               "(apt-get install xvfb xdotool libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1)")
        if os.environ.get("CI"):
            pytest.fail(msg)
        pytest.skip(msg)
    server = XServer()
    yield server
    server.stop()


@pytest.fixture
def start_app(xserver: XServer, tmp_path: Path, request: pytest.FixtureRequest
              ) -> Iterator[Callable[..., XApp]]:
    """``start_app(*args)`` runs the app; on failure its log and a screenshot are kept."""
    apps: list[XApp] = []

    def start(*args: str, home: Path | None = None) -> XApp:
        """Start the app; ``home``: the folders of an earlier run (a restart)."""
        if home is None:
            home = tmp_path / f"run{len(apps)}"
            home.mkdir()
        app = XApp(xserver, home, args)
        apps.append(app)
        return app

    yield start
    failed = getattr(request.node, "rep_call", None)
    for app in apps:
        if failed is not None and failed.failed:
            app.screenshot(app.home / "failure.png")
            print(f"\n--- app log ({app.home}) ---\n{app.log_text()}")
        app.close()


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]
                              ) -> Iterator[None]:
    """Keep each phase's report on the item (the fixture above reads ``rep_call``)."""
    rep = yield
    setattr(item, f"rep_{rep.when}", rep)
    return rep
