"""Package layout only (metadata is in pyproject.toml).

The design keeps bundled data in the top-level ``resources/`` folder; it is installed as the
``explorer.resources`` package so the app finds it through ``importlib.resources``.
"""

from setuptools import find_packages, setup

setup(
    packages=[*find_packages(include=["explorer", "explorer.*"]), "explorer.resources"],
    package_dir={"explorer.resources": "resources"},
    package_data={"explorer": ["py.typed"], "explorer.resources": ["*.md", "*/*", "*/*/*"]},
)
