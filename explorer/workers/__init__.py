"""Worker threads: the only bridge between the engine and Qt (QtCore only)."""
