"""Drive the real app in a real X server: Xvfb for the display, xdotool for input events.

Offscreen QTest events go straight into a widget; real X events go through the X server,
Qt's xcb plugin, the event loop and focus handling, at a real pace, while workers deliver
results in between. That is where the text scramble of issue 18 lived, and offscreen tests
did not see it. Here the app runs as a separate process (``python -m explorer``, as a user
starts it) with its own XDG folders, and what it holds is read back from its autosave file
(and, after closing with ``Ctrl+Q``, the final text written on close).
"""

from __future__ import annotations

import fcntl
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

APP_TITLE = "Tokenizer Explorer"
START_TIMEOUT_S = 40.0


def missing_tools() -> list[str]:
    """The programs this harness needs that are not installed."""
    return [t for t in ("Xvfb", "xdotool") if shutil.which(t) is None]


class XServer:
    """An Xvfb display for the whole test session (no window manager, as on a bare X)."""

    def __init__(self, size: str = "1600x1000x24") -> None:
        # Xvfb servers started at once (pytest-xdist workers) can both pick the first free
        # display and one of them then dies: start one at a time, and only keep a live one.
        with open(Path(tempfile.gettempdir()) / "explorer-xvfb.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            for _ in range(5):
                self.proc, number = self._start(size)
                if number and self._alive(number):
                    break
                self.proc.kill()
                self.proc.wait()
            else:
                raise RuntimeError("Xvfb did not start")
        self.display = f":{number}"

    @staticmethod
    def _start(size: str) -> tuple[subprocess.Popen[bytes], str]:
        read, write = os.pipe()
        proc = subprocess.Popen(
            # -noreset: by default the server resets when its last client leaves (one app
            # closed, the next not yet connected), and an app connecting during that reset
            # fails with "could not connect to display" (seen once in CI).
            ["Xvfb", "-displayfd", str(write), "-screen", "0", size, "-nolisten", "tcp",
             "-noreset"],
            pass_fds=(write,), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(write)
        with os.fdopen(read) as f:
            return proc, f.readline().strip()

    def _alive(self, number: str) -> bool:
        """The server still runs a moment later (once its socket is there, or after 1 s)."""
        deadline = time.monotonic() + 1.0
        socket = Path(f"/tmp/.X11-unix/X{number}")
        while time.monotonic() < deadline and not socket.exists():
            if self.proc.poll() is not None:
                return False
            time.sleep(0.02)
        time.sleep(0.05)
        return self.proc.poll() is None

    def alive(self) -> bool:
        """The server process still runs."""
        return self.proc.poll() is None

    def xdotool(self, *args: str, check: bool = True) -> str:
        """Run ``xdotool ARGS`` on this display; its stdout."""
        out = subprocess.run(["xdotool", *args], env={**os.environ, "DISPLAY": self.display},
                             capture_output=True, text=True, timeout=120)
        if check and out.returncode != 0:
            raise RuntimeError(f"xdotool {' '.join(args)}: {out.stderr.strip()}")
        return out.stdout

    def stop(self) -> None:
        """Stop the server."""
        self.proc.terminate()
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()


class XApp:
    """One run of ``python -m explorer`` in :class:`XServer`, with private XDG folders."""

    def __init__(self, x: XServer, home: Path, args: Sequence[str] = ()) -> None:
        self.x = x
        self.home = home
        env = {**os.environ, "DISPLAY": x.display, "QT_QPA_PLATFORM": "xcb",
               "XDG_CONFIG_HOME": str(home / "config"), "XDG_DATA_HOME": str(home / "data"),
               "XDG_CACHE_HOME": str(home / "cache"), "HOME": str(home)}
        env.pop("QT_QPA_PLATFORM_PLUGIN_PATH", None)
        for attempt in range(2):
            self.log = (home / "app.log").open("w")
            self.proc = subprocess.Popen([sys.executable, "-m", "explorer", *args], cwd=home,
                                         env=env, stdout=self.log, stderr=subprocess.STDOUT)
            try:
                self.window = self._wait_window()
                return
            except RuntimeError as e:
                # The display refused the connection (not the app's fault): once more, if
                # the server still runs; a second refusal is reported as it is.
                if attempt or "could not connect to display" not in str(e) or not x.alive():
                    raise
                self.log.close()
                time.sleep(1.0)

    def _wait_window(self) -> str:
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the app exited ({self.proc.returncode}): {self.log_text()}")
            ids = self.x.xdotool("search", "--onlyvisible", "--name", APP_TITLE,
                                 check=False).split()
            if ids:
                return ids[0]
            time.sleep(0.2)
        raise RuntimeError(f"no window within {START_TIMEOUT_S} s: {self.log_text()}")

    def log_text(self) -> str:
        """What the app printed."""
        self.log.flush()
        return (self.home / "app.log").read_text(errors="replace")[-2000:]

    # --- input ----------------------------------------------------------------------------
    def geometry(self) -> tuple[int, int, int, int]:
        """``(x, y, width, height)`` of the window on the screen."""
        out = self.x.xdotool("getwindowgeometry", "--shell", self.window)
        vals = dict(line.split("=", 1) for line in out.split() if "=" in line)
        return int(vals["X"]), int(vals["Y"]), int(vals["WIDTH"]), int(vals["HEIGHT"])

    def click(self, fx: float, fy: float, button: int = 1) -> None:
        """Click at fraction ``(fx, fy)`` of the window."""
        x, y, w, h = self.geometry()
        self.x.xdotool("mousemove", str(int(x + fx * w)), str(int(y + fy * h)),
                       "click", str(button))

    def click_editor(self) -> None:
        """Click inside the text (the upper left of the editor), then wait until the window
        has the keyboard focus: keys sent before Qt has handled the click's focus change (a
        window still busy starting up, on a slow machine) reach no widget and are dropped,
        which no user typing after a click sees."""
        self.click(0.15, 0.18)
        self.wait_focused()

    def wait_focused(self, timeout_s: float = 10.0) -> None:
        """Wait until X gives the keyboard focus to this window, and Qt a moment to see it."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.x.xdotool("getwindowfocus", check=False).strip() == self.window:
                break
            time.sleep(0.05)
        time.sleep(0.3)

    def drag(self, a: tuple[float, float], b: tuple[float, float]) -> None:
        """Press at ``a``, move to ``b`` in steps, release (window fractions)."""
        x, y, w, h = self.geometry()
        self.x.xdotool("mousemove", str(int(x + a[0] * w)), str(int(y + a[1] * h)),
                       "mousedown", "1")
        for i in range(1, 6):
            fx = a[0] + (b[0] - a[0]) * i / 5
            fy = a[1] + (b[1] - a[1]) * i / 5
            self.x.xdotool("mousemove", str(int(x + fx * w)), str(int(y + fy * h)))
            time.sleep(0.05)
        self.x.xdotool("mouseup", "1")

    def hover(self, fx: float, fy: float) -> None:
        """Move the mouse to fraction ``(fx, fy)`` of the window (tooltips, hover outline)."""
        x, y, w, h = self.geometry()
        self.x.xdotool("mousemove", str(int(x + fx * w)), str(int(y + fy * h)))

    def key(self, *keys: str, delay_ms: int = 30) -> None:
        """Press and release keys (xdotool names: ``ctrl+End``, ``Return``, ``ctrl+z``)."""
        self.x.xdotool("key", "--delay", str(delay_ms), *keys)

    def type(self, text: str, delay_ms: int) -> None:
        """Type ``text`` with real key events, ``delay_ms`` between keys."""
        self.x.xdotool("type", "--delay", str(delay_ms), text)

    def hold(self, key: str, seconds: float) -> None:
        """Hold ``key`` down (the X server's auto-repeat repeats it), then release it."""
        self.x.xdotool("keydown", key)
        time.sleep(seconds)
        self.x.xdotool("keyup", key)

    # --- state ----------------------------------------------------------------------------
    def autosave_file(self) -> Path | None:
        """The autosave file, once written."""
        found = sorted((self.home / "data").rglob("autosave.txt"))
        return found[0] if found else None

    def autosaved(self) -> str | None:
        """The text of the autosave file (None before the first write)."""
        path = self.autosave_file()
        if path is None:
            return None
        try:
            return path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None

    def wait_autosaved(self, expected: str, timeout_s: float = 15.0) -> str | None:
        """Poll the autosave until it equals ``expected`` and stays so for 1.5 s (the app
        writes 1 s after the last change); returns the last text read."""
        deadline = time.monotonic() + timeout_s
        stable_since: float | None = None
        text = None
        while time.monotonic() < deadline:
            text = self.autosaved()
            if text == expected:
                stable_since = stable_since or time.monotonic()
                if time.monotonic() - stable_since >= 1.5:
                    return text
            else:
                stable_since = None
            time.sleep(0.1)
        return text

    def screenshot(self, out: Path) -> None:
        """The whole screen as PNG (ImageMagick's ``import``, when installed)."""
        if shutil.which("import"):
            subprocess.run(["import", "-window", "root", str(out)],
                           env={**os.environ, "DISPLAY": self.x.display}, timeout=30,
                           check=False, capture_output=True)

    def close(self) -> str | None:
        """Close with ``Ctrl+Q`` (the window writes its text on close); the final text."""
        if self.proc.poll() is None:
            self.x.xdotool("key", "ctrl+q", check=False)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.send_signal(signal.SIGKILL)
                self.proc.wait(5)
        self.log.close()
        return self.autosaved()
