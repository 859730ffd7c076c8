"""A naive BPE corpus state for tests: words as symbol lists, merges replayed one by one,
pair counts recounted from scratch (the oracle of the trainer's live pair-count table)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from itertools import pairwise

from explorer.engine.trainers.bpe_marks import word_symbols

Pair = tuple[str, str]


class NaiveState:
    """Every word of a corpus as its current symbols, with its count."""

    def __init__(self, words: dict[str, int], *, prefix: str | None = None,
                 suffix: str | None = None) -> None:
        known = {ch: 0 for w in words for ch in w}
        self.words = [(list(word_symbols(w, known, prefix, suffix)), c)
                      for w, c in words.items()]
        self.prefix = prefix
        self.merged = 0

    def apply(self, left: str, right: str, token: str) -> None:
        """One merge, left to right and non-overlapping in every word (HF ``Word::merge``)."""
        for sym, _c in self.words:
            if left not in sym:
                continue
            j = 0
            while j < len(sym) - 1:
                if sym[j] == left and sym[j + 1] == right:
                    sym[j:j + 2] = [token]
                j += 1
        self.merged += 1

    def apply_all(self, merges: Iterable[tuple[str, str, str]]) -> None:
        """Several merges ``(left, right, token)`` in order."""
        for left, right, token in merges:
            self.apply(left, right, token)

    def recount(self, counted: Callable[[str, str], bool] | None = None) -> Counter[Pair]:
        """Every adjacent pair's weighted count, from scratch (``counted``: which pairs a
        length cap lets the trainer count)."""
        out: Counter[Pair] = Counter()
        for sym, c in self.words:
            for a, b in pairwise(sym):
                out[a, b] += c
        if counted is not None:
            out = Counter({p: c for p, c in out.items() if counted(*p)})
        return out

    def top(self, ids: dict[str, int], k: int,
            counted: Callable[[str, str], bool] | None = None) -> list[tuple[Pair, int]]:
        """The ``k`` pairs with the highest counts, ties by the smaller ``(id_a, id_b)``."""
        return sorted(self.recount(counted).items(),
                      key=lambda kv: (-kv[1], ids[kv[0][0]], ids[kv[0][1]]))[:k]
