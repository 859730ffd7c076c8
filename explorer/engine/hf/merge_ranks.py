"""An HF BPE model's merge ranks keyed by their parts' ids, in a compact hash table.

``left_id * stride + right_id -> rank``. A dict of them held ~100 bytes a merge (an int key,
an int value and the dict's slot): Gemma 4's 515k merges took 51 MB of the window, which
holds a 10 MB document within 600 MB with little room. Here they are an
:class:`~explorer.engine.int_table.IntTable` (12 bytes a slot, two slots a merge: 12 MB),
looked up one pair at a time in Python (~0.3 us, against ~0.05 us for the dict; a model
remembers each pair's answer by its strings, so a pair is looked up here once) and as arrays
by the lock-step merges.
"""

from __future__ import annotations

from array import array

import numpy as np

from explorer.engine.int_table import MISSING, IntTable


class MergeRanks:
    """The rank of each merge kept (both parts in the vocabulary), keyed by its parts' ids."""

    __slots__ = ("_table",)

    def __init__(self, keys: np.ndarray, ranks: np.ndarray) -> None:
        """``keys[i] -> ranks[i]``; where a key repeats, the later one (in ``keys`` order)
        wins, as in HF's HashMap collect of the merges."""
        keys = np.asarray(keys, np.int64)
        ranks = np.asarray(ranks, np.int64)
        _, last = np.unique(keys[::-1], return_index=True)
        last = len(keys) - 1 - last
        last.sort()
        self._table = IntTable(keys[last], ranks[last])

    @classmethod
    def from_merges(cls, vocab: dict[str, int], merges: list[tuple[str, str]] | list[str],
                    stride: int) -> MergeRanks:
        """The ranks of ``merges`` (``"left right"`` strings, split at the first space after
        the first character as llama.cpp does, or pairs) whose parts are both in ``vocab``;
        a merge with a missing part is left out (no pair of pieces can ask for it)."""
        get = vocab.get
        strings = bool(merges) and isinstance(merges[0], str)
        keys, ranks = array("q"), array("q")
        add_key, add_rank = keys.append, ranks.append
        for rank, merge in enumerate(merges):
            if strings:
                cut = merge.find(" ", 1)  # type: ignore[union-attr]
                if cut < 0:
                    continue  # (refused by a strict model's validation)
                a, b = merge[:cut], merge[cut + 1:]
            else:
                a, b = merge
            left, right = get(a), get(b)
            if left is not None and right is not None:
                add_key(left * stride + right)
                add_rank(rank)
        return cls(np.frombuffer(keys, np.int64), np.frombuffer(ranks, np.int64))

    @property
    def table(self) -> IntTable:
        """The table itself (its array lookups: :meth:`IntTable.get`)."""
        return self._table

    def get(self, key: int) -> int | None:
        """The rank of the merge keyed ``key``, None when there is none."""
        rank = self._table.get_one(key)
        return None if rank == MISSING else rank

    def __len__(self) -> int:
        return len(self._table)

    def __contains__(self, key: int) -> bool:
        return self._table.get_one(key) != MISSING

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """Every key and its rank (int64), in rank order."""
        keys = self._table.keys()
        ranks = self._table.get(keys).astype(np.int64)
        order = np.argsort(ranks, kind="stable")
        return keys[order], ranks[order]
