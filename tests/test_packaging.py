"""Packaging metadata stays consistent: one app id, one version, resources inside the package."""

import tomllib
import xml.etree.ElementTree as ET
from pathlib import Path

import explorer

ROOT = Path(__file__).resolve().parent.parent


def test_version_matches_pyproject():
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert meta["version"] == explorer.__version__


def test_app_id_shared_by_desktop_and_metainfo():
    desktop = ROOT / "resources" / "desktop" / f"{explorer.APP_ID}.desktop"
    assert desktop.exists()
    tree = ET.parse(ROOT / "resources" / "desktop" / f"{explorer.APP_ID}.metainfo.xml")
    assert tree.getroot().findtext("id") == explorer.APP_ID
    assert f"Icon={explorer.APP_ID}" in desktop.read_text()


def test_bundled_resources_reachable_and_licensed():
    from explorer.bundled import resource_path

    licenses = resource_path("LICENSES.md").read_text()
    for f in resource_path("vocab").iterdir():
        assert f.name in licenses, f"{f.name} has no license entry"
