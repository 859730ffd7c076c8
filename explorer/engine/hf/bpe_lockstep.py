"""An HF BPE model's new words merged many at once, in lock step (numpy).

:meth:`BPEModel._merge <explorer.engine.hf.models.BPEModel._merge>` merges one word at a
time with a heap, ~1 us a merge in Python: a cold pass over text in other scripts spends
most of its time there (Gemma 4 on the all-language UDHR). A window of text has thousands of
new words; here they advance together, as the byte-level BPE's pieces do
(:func:`~explorer.engine.bpe.lockstep.lockstep_rounds`): each round, every word still able
to merge merges its lowest-rank pair, the leftmost on ties, which is HF's
``Word::merge_all`` rule.

Taken only where the words start as their characters: a model without a continuing
subword prefix or word suffix, and words whose every character is a piece (others, with
unknown characters or byte fallback, are merged one by one). A pair's rank comes from the
model's merges whose result is a piece (:class:`MergeTable`), and the id a merge makes from
its rank (each merge has its own).
"""

from __future__ import annotations

import hashlib
from itertools import accumulate, chain, repeat
from typing import TYPE_CHECKING

import numpy as np

from explorer.engine.bpe.lockstep import NEVER, lockstep_rounds
from explorer.engine.int_table import MISSING, IntTable

if TYPE_CHECKING:
    from explorer.engine.hf.models import BPEModel, ModelToken

LOCKSTEP_MIN_WORDS = 150
"""Fewer new words than this are merged one by one (a round costs ~0.1-0.2 ms)."""
LOCKSTEP_MAX_CHARS = 256
"""Longer words are merged one by one (a round merges one pair of each word)."""


class MergeTable:
    """``(left id, right id) -> rank`` of a model's merges, and the id each rank makes."""

    __slots__ = ("rank_to_id", "stride", "table")

    def __init__(self, model: BPEModel) -> None:
        """Built once per vocabulary (Gemma 4's 515k merges: ~0.5 s) and kept in the
        vocabulary cache under the digest of its merges and pieces (read back: ~20 ms)."""
        from explorer.engine.formats.vocab_cache import cached_and_built

        keys, ranks = model.ranks.arrays()
        pieces = "\0".join(map(model.id_to_piece.get, range(model.stride), repeat("")))
        digest = hashlib.sha256(keys.tobytes() + ranks.tobytes()
                                + pieces.encode("utf-8", "surrogatepass")).digest()
        self.stride = model.stride
        table, self.rank_to_id = cached_and_built(
            digest, "hf-bpe-merge-table-4", lambda: _built(model, keys, ranks), _read)
        # (every merge makes a piece, as in any strict model: the model's own table serves)
        self.table = model.ranks.table if table is None else table

    def of(self, left: np.ndarray, right: np.ndarray) -> np.ndarray:
        """Rank of merging ``left[i]`` with ``right[i]`` (int64), :data:`NEVER` if none."""
        found = self.table.get(left * self.stride + right).astype(np.int64)
        found[found == MISSING] = NEVER
        return found

    def merged_of(self, ranks: np.ndarray) -> np.ndarray:
        """The ids the merges of ``ranks`` make."""
        return self.rank_to_id[ranks]


def _built(model: BPEModel, keys: np.ndarray, ranks: np.ndarray
           ) -> tuple[tuple[int, int, int, bytes, bytes] | None, bytes]:
    """The table's :meth:`IntTable.state` (None when it would hold every merge of the
    model's :class:`~explorer.engine.hf.merge_ranks.MergeRanks`: that one is used, not a
    second copy, 12 MB for Gemma 4) and the ids by rank, as bytes (for the cache)."""
    piece, stride, vocab = model.id_to_piece, model.stride, model.vocab
    lefts, rights = (keys // stride).tolist(), (keys % stride).tolist()
    made = np.array([-1 if m is None else m for m in map(
        vocab.get, map(str.__add__, map(piece.__getitem__, lefts),
                       map(piece.__getitem__, rights)))], np.int64)
    kept = made >= 0  # (a merge whose result is no piece never applies)
    rank_to_id = np.full(int(ranks.max(initial=-1)) + 1, -1, np.int32)
    rank_to_id[ranks[kept]] = made[kept]
    state = None if kept.all() else IntTable(keys[kept], ranks[kept], room=2).state()
    return state, rank_to_id.tobytes()


def _read(value: tuple) -> tuple[IntTable | None, np.ndarray]:
    """The table (None: the model's own) and the ids by rank from :func:`_built`'s value
    (``ValueError`` or ``TypeError`` for anything else)."""
    state, rank_to_id = value
    table = None if state is None else IntTable.from_state(state)
    return table, np.frombuffer(rank_to_id, np.int32)


def merge_words(model: BPEModel, table: MergeTable, words: list[str]
                ) -> list[list[ModelToken]]:
    """The tokens of ``words`` (each character a piece, no prefix or suffix), as
    ``BPEModel._merge`` makes them: ``(id, piece, start, end)`` in characters."""
    vocab = model.vocab
    counts = np.fromiter(map(len, words), np.int64, len(words))
    sym = np.fromiter(map(vocab.__getitem__, chain.from_iterable(words)), np.int64,
                      int(counts.sum()))
    rank = np.empty(sym.size, np.int64)
    rank[:-1] = table.of(sym[:-1], sym[1:])
    rank[np.cumsum(counts) - 1] = NEVER
    merged = lockstep_rounds(table.of, table.merged_of, sym, rank, counts)
    pieces = model.id_to_piece  # (the vocabulary's own strings, as the tokens hold)
    out: list[list[ModelToken]] = []
    for ids in merged:
        texts = list(map(pieces.__getitem__, ids))
        ends = list(accumulate(map(len, texts)))
        out.append(list(zip(ids, texts, [0, *ends[:-1]], ends, strict=True)))
    return out
