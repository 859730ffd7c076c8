"""Bundled, permissively licensed data (vocabularies, corpus, sample texts); see LICENSES.md.

Installed as ``explorer.resources``; code finds it through :mod:`explorer.bundled`, which also
works from the source tree and the frozen build.
"""
