"""Bundled sample texts (resources/samples): one click away in the Samples menu."""

from __future__ import annotations

from explorer.bundled import resource_path

DEFAULT_SAMPLE = "welcome"
TITLES = {
    "welcome": "Welcome (a bit of everything)",
    "multilingual": "Multilingual pangrams",
    "code": "Source code",
    "emoji": "Emoji and astral characters",
}


def sample_names() -> list[str]:
    """Names of the bundled samples, the welcome text first."""
    found = sorted(p.stem for p in resource_path("samples").glob("*.txt"))
    return sorted(found, key=lambda n: (n != DEFAULT_SAMPLE, list(TITLES).index(n)
                                        if n in TITLES else len(TITLES), n))


def sample_text(name: str) -> str:
    """Text of sample ``name``."""
    return resource_path("samples", f"{name}.txt").read_text(encoding="utf-8")
