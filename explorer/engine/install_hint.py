"""How a user gets an optional library, in a message: the ``pip install`` command, or, in the
frozen (PyInstaller) build, which has no pip and leaves the reference libraries out, how to
get a Tokenizer Explorer that can use it."""

from __future__ import annotations

import sys

FROZEN_NOTE = ("not included in the frozen build; to use it, install Tokenizer Explorer with "
               "pip (README, Installing) and then run: ")


def is_frozen() -> bool:
    """True inside the PyInstaller build (``sys.frozen``)."""
    return bool(getattr(sys, "frozen", False))


def install_hint(pip: str, *, frozen: bool | None = None) -> str:
    """``install: PIP``, or for the frozen build the note that it is not included and how to
    get it (``frozen`` None: this process)."""
    if is_frozen() if frozen is None else frozen:
        return FROZEN_NOTE + pip
    return f"install: {pip}"
