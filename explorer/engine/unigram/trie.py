"""A prefix dictionary over pieces: the common-prefix search the Unigram lattice needs.

Every prefix of every piece is a key; full pieces map to ``(id, score, is_user_defined)``,
proper prefixes map to None. Walking ``text[i:j]`` for growing ``j`` and stopping at the first
missing key is sentencepiece's ``commonPrefixSearch`` on its double array, done with C-speed
``dict`` lookups instead of a Python node walk.

:meth:`PieceTrie.build` fills the dict in bulk with C-level ``map`` passes (one per prefix
length over the pieces long enough), and the prefix list of large vocabularies is cached on
disk (``explorer.engine.formats.vocab_cache``), keyed by a digest of the pieces.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from itertools import compress, filterfalse
from operator import itemgetter, not_

from explorer.engine.formats.vocab_cache import cached_by_key

Entry = tuple[int, float, bool]
"""``(id, score, is_user_defined)`` of a piece."""


def substrings_by_offset(pieces: Sequence[str], width: int | None) -> set[str]:
    """Every ``piece[k:k + width]`` (``width`` None: every proper prefix ``piece[:k]``).

    Pieces are bucketed by length so each pass only slices pieces long enough, and each
    pass is a C-level ``map`` of an ``itemgetter(slice)``.
    """
    ordered = sorted(pieces, key=len, reverse=True)
    out: set[str] = set()
    if not ordered:
        return out
    need = 1 if width is None else width  # a substring at k needs len > k (prefix) / >= k+w
    count = len(ordered)
    k = 1 if width is None else 0
    longest = len(ordered[0])
    while True:
        min_len = k + need if width is not None else k + 1
        if min_len > longest:
            break
        while count and len(ordered[count - 1]) < min_len:
            count -= 1
        cut = slice(None, k) if width is None else slice(k, k + width)
        out.update(map(itemgetter(cut), ordered[:count]))
        k += 1
    return out


_CACHE_MIN_PIECES = 20_000


def cached_substrings(pieces: Sequence[str], width: int | None, kind: str) -> list[str]:
    """:func:`substrings_by_offset` as a list, from the on-disk cache for large vocabularies.

    The key is a digest of the pieces, so every file with the same vocabulary shares it
    (a 250k-piece model: 0.25 s to compute, ~0.04 s to load).
    """
    if len(pieces) < _CACHE_MIN_PIECES:
        return list(substrings_by_offset(pieces, width))
    digest = hashlib.sha256("\0".join(pieces).encode("utf-8", "surrogatepass")).digest()
    value = cached_by_key(digest, kind, lambda: list(substrings_by_offset(pieces, width)))
    return value if isinstance(value, list) else list(substrings_by_offset(pieces, width))


class PieceTrie:
    """Pieces (and all their prefixes) in one dict. Immutable after construction."""

    def __init__(self) -> None:
        self.entries: dict[str, Entry | None] = {}
        self.max_len = 0

    @classmethod
    def build(
        cls, pieces: Sequence[str], entries: Sequence[Entry | None]
    ) -> PieceTrie:
        """A trie of ``pieces`` in bulk; an entry None marks a prefix-only piece (UNUSED).

        Same result as :meth:`add` in order: a later piece with an entry replaces an earlier
        one of the same spelling.
        """
        trie = cls()
        table: dict[str, Entry | None] = dict.fromkeys(
            cached_substrings(pieces, None, "piece-prefixes-1")
        )
        # entries are non-empty tuples or None: compress keeps the tuples, in C
        table.update(compress(zip(pieces, entries, strict=True), entries))
        # a piece without an entry (UNUSED) is a key too, unless a piece or prefix is
        table.update(dict.fromkeys(filterfalse(table.__contains__,
                                               compress(pieces, map(not_, entries)))))
        trie.entries = table
        trie.max_len = max(map(len, pieces), default=0)
        return trie

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
