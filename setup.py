"""Package layout only (metadata is in pyproject.toml).

The design keeps bundled data in the top-level ``resources/`` folder; it is installed as the
``explorer.resources`` package (each sub-folder a data-only sub-package) so the app finds it
through ``importlib.resources``.
"""

from pathlib import Path

from setuptools import find_packages, setup

HERE = Path(__file__).parent
RESOURCE_DIRS = sorted(p.name for p in (HERE / "resources").iterdir()
                       if p.is_dir() and not p.name.startswith(("_", ".")))

setup(
    packages=[
        *find_packages(include=["explorer", "explorer.*"]),
        "explorer.resources",
        *(f"explorer.resources.{d}" for d in RESOURCE_DIRS),
    ],
    package_dir={
        "explorer.resources": "resources",
        **{f"explorer.resources.{d}": f"resources/{d}" for d in RESOURCE_DIRS},
    },
    package_data={
        "explorer": ["py.typed"],
        "explorer.resources": ["*.md"],
        **{f"explorer.resources.{d}": ["*"] for d in RESOURCE_DIRS},
    },
)
