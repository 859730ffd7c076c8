"""The process entry exits without tearing the interpreter down once Qt ran (PySide
wrappers freed at shutdown aborted the app: see explorer.cli.exit_process)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

SCRIPT = textwrap.dedent("""
    import atexit, sys
    from pathlib import Path
    out = Path(sys.argv[1])
    use_qt = sys.argv[2] == "qt"
    if use_qt:
        from PySide6.QtCore import QCoreApplication
        app = QCoreApplication([])

    class Cycle:
        def __init__(self):
            self.me = self
        def __del__(self):
            with out.open("a") as f:
                f.write("finalized\\n")

    kept = Cycle()  # freed only when the interpreter is torn down
    atexit.register(lambda: out.open("a").write("atexit\\n"))
    print("printed", end="")  # buffered: must be flushed
    from explorer.cli import exit_process
    exit_process(3)
""")


def _run(tmp_path: Path, mode: str) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    out = tmp_path / f"{mode}.log"
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(out), mode], env=env,
                          capture_output=True, text=True, timeout=60, check=False)
    lines = out.read_text().split() if out.exists() else []
    return done, lines


def test_after_qt_the_process_ends_without_finalization(tmp_path):
    done, lines = _run(tmp_path, "qt")
    assert done.returncode == 3, done.stderr
    assert done.stdout == "printed"
    assert lines == ["atexit"]  # exit handlers ran; the last collection did not


def test_without_qt_the_exit_is_the_usual_one(tmp_path):
    done, lines = _run(tmp_path, "plain")
    assert done.returncode == 3, done.stderr
    assert done.stdout == "printed"
    assert "atexit" in lines and "finalized" in lines
