"""Byte-pair encoding: the merge loop (generic), its trace, the naive reference, the
ranks-based byte-level model and the complete tiktoken-style tokenizer.

- :mod:`.queue`: ``merge_with_queue(symbols, rank_of)`` -- llama.cpp priority queue, reusable
  for merges-list and SentencePiece BPE; ``merge_by_scan`` for short byte pieces.
- :mod:`.trace`: ``trace_merges`` yields :class:`MergeStep` snapshots for the UI.
- :mod:`.naive`: minbpe-style reference used by tests.
- :mod:`.model`: :class:`BytePairModel` (ranks, whole-token lookup, memo).
- :mod:`.tokenizer`: :class:`ByteLevelBPETokenizer` (specials, regex split, offsets).
"""

from explorer.engine.bpe.model import BytePairModel
from explorer.engine.bpe.naive import naive_encode, naive_merge
from explorer.engine.bpe.queue import merge_by_scan, merge_with_queue
from explorer.engine.bpe.tokenizer import ByteLevelBPETokenizer
from explorer.engine.bpe.trace import AppliedMerge, MergeStep, QueueEntry, trace_merges

__all__ = [
    "AppliedMerge",
    "ByteLevelBPETokenizer",
    "BytePairModel",
    "MergeStep",
    "QueueEntry",
    "merge_by_scan",
    "merge_with_queue",
    "naive_encode",
    "naive_merge",
    "trace_merges",
]
