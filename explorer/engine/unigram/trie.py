"""A prefix dictionary over pieces: the common-prefix search the Unigram lattice needs.

Every prefix of every piece is a key; full pieces map to ``(id, score, is_user_defined)``,
proper prefixes map to None. Walking ``text[i:j]`` for growing ``j`` and stopping at the first
missing key is sentencepiece's ``commonPrefixSearch`` on its double array, done with C-speed
``dict`` lookups instead of a Python node walk.
"""

from __future__ import annotations

from collections.abc import Iterator

Entry = tuple[int, float, bool]
"""``(id, score, is_user_defined)`` of a piece."""


class PieceTrie:
    """Pieces (and all their prefixes) in one dict. Immutable after construction."""

    def __init__(self) -> None:
        self.entries: dict[str, Entry | None] = {}
        self.max_len = 0

    def add(self, piece: str, entry: Entry | None) -> None:
        """Add ``piece``; ``entry`` None marks it as a prefix only (e.g. an UNUSED piece)."""
        entries = self.entries
        for k in range(1, len(piece)):
            entries.setdefault(piece[:k], None)
        if entry is not None or piece not in entries:
            entries[piece] = entry
        self.max_len = max(self.max_len, len(piece))

    def get(self, piece: str) -> Entry | None:
        """The entry of ``piece`` or None."""
        return self.entries.get(piece)

    def common_prefix_search(self, text: str, pos: int) -> Iterator[tuple[int, Entry]]:
        """Every piece starting at ``text[pos]``, shortest first, as ``(end, entry)``."""
        entries = self.entries
        n = len(text)
        end = pos + 1
        while end <= n:
            key = text[pos:end]
            if key not in entries:
                return
            entry = entries[key]
            if entry is not None:
                yield end, entry
            end += 1
