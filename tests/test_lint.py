"""Static checks run as tests so the one README test command covers them: ruff, import-linter."""

import re
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
    found = re.search(r"Contracts: (\d+) kept, 0 broken", r.stdout)
    assert found and int(found.group(1)) >= 3, r.stdout


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


def test_ui_has_no_import_cycle():
    """No module of explorer.ui reaches itself through imports (TYPE_CHECKING ones count)."""
    import grimp

    graph = grimp.build_graph("explorer")
    ui = sorted(m for m in graph.modules if m.startswith("explorer.ui"))
    cycles = [graph.find_shortest_chain(importer=b, imported=a)
              for a in ui for b in graph.find_modules_directly_imported_by(a)
              if b.startswith("explorer.ui") and graph.chain_exists(importer=b, imported=a)]
    assert cycles == [], cycles
