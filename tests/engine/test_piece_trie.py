"""The Unigram prefix dict built in bulk (``PieceTrie.build``) equals one built piece by
piece (``PieceTrie.add``): prefixes, UNUSED pieces (no entry) and repeated spellings."""

from __future__ import annotations

import random

from explorer.engine.unigram.trie import Entry, PieceTrie


def test_bulk_build_equals_adding_piece_by_piece() -> None:
    rng = random.Random(7)
    for _ in range(200):
        pieces = ["".join(rng.choice("ab▁") for _ in range(rng.randint(1, 4)))
                  for _ in range(rng.randint(1, 12))]
        entries: list[Entry | None] = [
            None if rng.random() < 0.3 else (i, -float(i), rng.random() < 0.2)
            for i in range(len(pieces))
        ]
        bulk = PieceTrie.build(pieces, entries)
        one = PieceTrie()
        for piece, entry in zip(pieces, entries, strict=True):
            one.add(piece, entry)
        assert bulk.entries == one.entries, (pieces, entries)
        assert bulk.max_len == one.max_len


def test_an_unused_spelling_keeps_an_earlier_pieces_entry() -> None:
    trie = PieceTrie.build(["ab", "ab", "abc"], [(0, -1.0, False), None, None])
    assert trie.entries == {"a": None, "ab": (0, -1.0, False), "abc": None}
