"""Static checks run as tests so the one README test command covers them: ruff, import-linter."""

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _tool(name: str) -> list[str]:
    exe = shutil.which(name) or str(Path(sys.executable).parent / name)
    return [exe]


def test_ruff_clean():
    r = subprocess.run([*_tool("ruff"), "check", "explorer", "tests", "benchmarks"],
                       cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_engine_imports_no_qt():
    r = subprocess.run([*_tool("lint-imports")], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Contracts: 2 kept, 0 broken" in r.stdout, r.stdout


def test_workers_use_qtcore_only():
    import ast

    for path in (ROOT / "explorer" / "workers").rglob("*.py"):
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            for name in names:
                if name.startswith("PySide6"):
                    assert name == "PySide6.QtCore", f"{path.name} imports {name}"
