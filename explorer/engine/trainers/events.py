"""Progress events that trainers yield, one dataclass per kind; plain data, no Qt.

A trainer is a generator of :data:`TrainEvent`. The training dialog plots them; the CLI turns
them into a progress bar. Every event is immutable and cheap to send across threads.
Events say what happened; they never carry references to the trainer's mutable state.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from explorer.engine.trainers.models import TrainedModel, TrainedUnigram

Phase = Literal["reading", "counting", "merging", "seeding", "em", "pruning", "finalizing"]


@dataclass(frozen=True, slots=True)
class PhaseStarted:
    """A new phase began. ``total`` is the expected number of steps when known."""

    phase: Phase
    total: int | None = None


@dataclass(frozen=True, slots=True)
class BytesRead:
    """Corpus reading progress: UTF-8 bytes consumed so far (``total_bytes`` for files)."""

    bytes_read: int
    total_bytes: int | None


@dataclass(frozen=True, slots=True)
class Progress:
    """Progress inside a long phase: ``done`` of ``total`` steps (Unigram seeding: one step
    per substring length counted, then per length searched)."""

    phase: Phase
    done: int
    total: int


@dataclass(frozen=True, slots=True)
class WordsCounted:
    """Counting finished: the corpus reduced to unique pre-tokens with frequencies."""

    unique_words: int
    total_words: int
    alphabet_size: int


@dataclass(frozen=True, slots=True)
class Merge:
    """One BPE merge: ``left + right -> token`` (vocabulary spellings)."""

    rank: int
    """Position in the merge list, from 0."""
    left: str
    right: str
    token: str
    token_id: int
    count: int
    """Frequency of the pair in the corpus when it was merged, as HF counts it (a pair
    merged before keeps its old count on top of new occurrences: see :attr:`top_pairs`)."""
    vocab_size: int
    """Vocabulary size after this merge (specials included)."""
    top_pairs: tuple[PairCount, ...] = ()
    """Step details (only with ``BpeConfig.step_pairs``): the pairs with the highest live
    counts just before this merge, exactly as a recount of the corpus's words from scratch
    gives them, in HF's order (higher count, then smaller ``(id_a, id_b)``). The first one
    is this merge, except in HF's rare stale-count cases (a token re-made by another merge,
    or a length cap): then HF's winner may be missing or further down."""
    tied: int = 0
    """How many of :attr:`top_pairs` share the winner's count when it leads them with its
    live count (> 1: the ids decided; 0 when HF took the winner by a stale count)."""


@dataclass(frozen=True, slots=True)
class PairCount:
    """One candidate pair of a BPE step: ``left + right`` seen ``count`` times."""

    left: str
    right: str
    count: int
    left_id: int
    right_id: int


@dataclass(frozen=True, slots=True)
class MergeSummary:
    """Throttled BPE summary for plots (about every 1% of merges and at the end)."""

    merges_done: int
    merges_target: int
    vocab_size: int
    last_count: int
    elapsed: float
    """Seconds since merging started."""


@dataclass(frozen=True, slots=True)
class EmStep:
    """One Unigram EM sub-iteration (E step then M step)."""

    round: int
    sub_iteration: int
    objective: float
    """Negative log-likelihood per word occurrence (lower is better), as sentencepiece logs."""
    vocab_size: int
    """Pieces after the M step (infrequent pieces are dropped there)."""
    num_tokens: int
    """Tokens the Viterbi segmentation gives the whole corpus with the E-step model."""
    snapshot: TrainedUnigram | None = None
    """Step details (only with ``UnigramConfig.step_details``): every live piece after this
    M step with its score, as a usable model."""


@dataclass(frozen=True, slots=True)
class PruneStep:
    """One Unigram pruning round: the pieces removed with their loss, and how many stay."""

    round: int
    removed: tuple[tuple[str, float], ...]
    """``(piece, loss)``, largest loss first; loss 0.0 for pieces removed for free
    (unused by Viterbi, or segmented into other pieces anyway)."""
    kept: int
    snapshot: TrainedUnigram | None = None
    """Step details (only with ``UnigramConfig.step_details``): the model after this round
    (every kept piece with its score); :func:`~.api.to_tokenizer` makes it usable."""


@dataclass(frozen=True, slots=True)
class SeedsReady:
    """Unigram seeding finished (only with ``UnigramConfig.step_details``)."""

    size: int
    """Number of seed pieces (characters included)."""
    top: tuple[tuple[str, float], ...]
    """The best seeds, ``(piece, log probability)``, highest first."""


@dataclass(frozen=True, slots=True)
class TrainingDone:
    """The last event: the trained model (export it or turn it into a Tokenizer)."""

    model: TrainedModel
    elapsed: float
    stats: dict[str, float] = field(default_factory=dict)


TrainEvent = (
    PhaseStarted | BytesRead | Progress | WordsCounted | Merge | MergeSummary | EmStep | PruneStep
    | SeedsReady | TrainingDone
)
"""Everything a trainer generator yields."""
