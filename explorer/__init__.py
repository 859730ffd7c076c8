"""Tokenizer Explorer: see what a tokenizer does.

The Qt-free engine lives in :mod:`explorer.engine`; the desktop app in :mod:`explorer.ui`.
"""

__version__ = "0.1.0"
