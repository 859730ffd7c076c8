"""What trainers produce: plain, immutable descriptions of a trained vocabulary.

:class:`TrainedBpe` and :class:`TrainedUnigram` hold the vocabulary as the reference formats
spell it. Writing files lives in :mod:`explorer.engine.trainers.export`; turning a model into an
explorer :class:`~explorer.engine.tokenizer.Tokenizer` in :func:`to_tokenizer` there.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

BpeMode = Literal["byte_level", "metaspace"]


@dataclass(frozen=True, slots=True)
class TrainedBpe:
    """A trained BPE vocabulary in HF ``tokenizers`` spelling."""

    vocab: tuple[str, ...]
    """Token spelling by id: special tokens first, then the alphabet, then merge results."""
    merges: tuple[tuple[str, str], ...]
    """Merges in rank order, exactly as HF ``BpeTrainer`` lists them in tokenizer.json."""
    special_tokens: tuple[str, ...]
    mode: BpeMode
    pattern: str
    """Split regex of the byte-level pre-tokenizer (unused for ``metaspace``)."""
    add_prefix_space: bool = False
    continuing_subword_prefix: str | None = None
    """HF BPE model field: non-initial symbols of a word are spelled with this prefix."""
    end_of_word_suffix: str | None = None
    """HF BPE model field: a word's last symbol is spelled with this suffix."""
    stop_reason: str = ""
    """Why merging stopped before the requested size ("" when it reached it)."""

    @property
    def vocab_size(self) -> int:
        """Number of ids, special tokens included."""
        return len(self.vocab)

    @property
    def num_base(self) -> int:
        """Ids before the first merge's token: special tokens and the alphabet."""
        if not self.merges:
            return len(self.vocab)
        left, right = self.merges[0]
        prefix = self.continuing_subword_prefix
        if prefix is not None and right.startswith(prefix):
            right = right[len(prefix):]
        return self.vocab.index(left + right)

    def prefix(self, n: int) -> TrainedBpe:
        """The model of the first ``n`` merges (clamped to ``0..len(merges)``): the same ids
        as a run trained only that far on the same corpus."""
        n = max(0, min(n, len(self.merges)))
        merges = self.merges[:n]
        prefix = self.continuing_subword_prefix
        made: set[str] = set()
        for left, right in merges:
            if prefix is not None and right.startswith(prefix):
                right = right[len(prefix):]
            made.add(left + right)
        if n == len(self.merges):
            return self
        base = self.num_base
        vocab = self.vocab[:base] + tuple(t for t in self.vocab[base:] if t in made)
        return replace(self, vocab=vocab, merges=merges, stop_reason="")

    @property
    def marked(self) -> bool:
        """True when symbols carry a prefix or suffix (only tokenizer.json can hold it)."""
        return self.continuing_subword_prefix is not None or self.end_of_word_suffix is not None


@dataclass(frozen=True, slots=True)
class TrainedUnigram:
    """A trained Unigram (sentencepiece) vocabulary: pieces with log-probability scores."""

    pieces: tuple[tuple[str, float], ...]
    """``(piece, score)`` by id: ``<unk>``, ``<s>``, ``</s>``, the user-defined symbols,
    byte pieces when ``byte_fallback``, then the learned pieces by decreasing score."""
    unk_id: int = 0
    bos_id: int = 1
    eos_id: int = 2
    byte_fallback: bool = False
    user_symbols: tuple[str, ...] = ()
    """sentencepiece ``user_defined_symbols``: ids 3.., score 0, type USER_DEFINED."""

    @property
    def vocab_size(self) -> int:
        """Number of pieces, meta pieces included."""
        return len(self.pieces)

    @property
    def num_meta(self) -> int:
        """Pieces before the learned ones (unk, bos, eos, user symbols, 256 byte pieces)."""
        return 3 + len(self.user_symbols) + (256 if self.byte_fallback else 0)


TrainedModel = TrainedBpe | TrainedUnigram
