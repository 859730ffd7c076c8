"""Tokenizer Explorer: see what a tokenizer does.

The Qt-free engine lives in :mod:`explorer.engine`; the desktop app in :mod:`explorer.ui`.
"""

__version__ = "0.1.0"

#: One application id shared by the .desktop file, AppStream metainfo, icon and Qt.
APP_ID = "io.github.tokenizer_explorer.TokenizerExplorer"
APP_NAME = "Tokenizer Explorer"
