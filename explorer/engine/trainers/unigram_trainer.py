"""Unigram training with sentencepiece's algorithm, on word counts, observable step by step.

The steps of ``unigram_model_trainer.cc``: seed pieces (see :mod:`.unigram_seed`), then rounds
of EM (``num_sub_iterations`` E+M steps; the M step is the Bayesian one: ``digamma(expected) -
digamma(total)``, dropping pieces expected less than 0.5 times) followed by pruning by loss
(keep ``shrinking_factor`` of the pieces, never fewer than 1.1 x the vocabulary size), and a
finalisation that keeps every required character. Words are ``▁`` + each space-separated word
of each line (sentencepiece's ``split_by_whitespace`` and ``remove_extra_whitespaces``) and are
counted, never stored as sentences. No normalization is applied (``identity``).

``user_defined_symbols`` take the ids after ``<unk> <s> </s>`` (before byte pieces) and are cut
out of the text before counting, so no learned piece overlaps one; ``split_digits`` keeps ASCII
digits out of every piece longer than one character.

Not handled: whitespace-only pieces, treating whitespace as a suffix, and sentencepiece's
sentence sampling (all text is used).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Generator, Iterable, Iterator
from dataclasses import dataclass, replace

import numpy as np

from explorer.engine.errors import TokenizerError
from explorer.engine.gc_pause import paused_steps
from explorer.engine.sentencepiece.pieces import f32
from explorer.engine.trainers.corpus import Corpus
from explorer.engine.trainers.events import (
    EmStep,
    PhaseStarted,
    PruneStep,
    SeedsReady,
    TrainEvent,
    TrainingDone,
    WordsCounted,
)
from explorer.engine.trainers.models import TrainedUnigram
from explorer.engine.trainers.unigram_lattice import EdgeLattice, FloatArray, digamma
from explorer.engine.trainers.unigram_seed import (
    RARE,
    mask_rare,
    required_chars,
)
from explorer.engine.trainers.unigram_substrings import seeds_and_lattice
from explorer.engine.trainers.words import count_sentencepiece_words

UNK_PENALTY = 10.0
MIN_EXPECTED = 0.5
META = ("<unk>", "<s>", "</s>")
SEEDS_SHOWN = 50
"""Seeds listed by :class:`SeedsReady` (the best by score)."""


class TrainingError(TokenizerError):
    """Training cannot produce the requested vocabulary (e.g. it is too small)."""


@dataclass(frozen=True, slots=True)
class UnigramConfig:
    """Settings of a Unigram run (sentencepiece ``TrainerSpec`` names and defaults)."""

    vocab_size: int = 8000
    character_coverage: float = 0.9995
    max_piece_length: int = 16
    seed_size: int = 1_000_000
    shrinking_factor: float = 0.75
    num_sub_iterations: int = 2
    byte_fallback: bool = False
    split_by_unicode_script: bool = True
    user_defined_symbols: tuple[str, ...] = ()
    """Pieces always kept whole and never split (sentencepiece type USER_DEFINED)."""
    split_digits: bool = False
    """Every ASCII digit is a piece of its own (never merged with other characters)."""
    step_details: bool = False
    """Step details: a :class:`SeedsReady` event, and every :class:`EmStep` /
    :class:`PruneStep` carries a snapshot model (costs a sort of the live pieces per step)."""

    def __post_init__(self) -> None:
        symbols = self.user_defined_symbols
        if any(not s or any(ch.isspace() for ch in s) for s in symbols):
            raise ValueError("user-defined symbols must be non-empty and hold no whitespace")
        if len(set(symbols)) != len(symbols) or set(symbols) & set(META):
            raise ValueError("user-defined symbols must be distinct and differ from "
                             + " ".join(META))
        meta = self.num_meta
        if self.vocab_size <= meta:
            raise ValueError(f"vocab size must exceed the {meta} meta pieces")
        if not 0.0 < self.character_coverage <= 1.0:
            raise ValueError("character_coverage must be in (0, 1]")
        if not 0.0 < self.shrinking_factor < 1.0:
            raise ValueError("shrinking_factor must be in (0, 1)")

    @property
    def num_meta(self) -> int:
        """Pieces that are not learned: unk, bos, eos, user symbols and byte pieces."""
        return len(META) + len(self.user_defined_symbols) + (256 if self.byte_fallback else 0)


def train_unigram(corpus: Corpus | Iterable[str], config: UnigramConfig,
                  stop: Callable[[], bool] | None = None) -> Iterator[TrainEvent]:
    """Train on a corpus: yields progress events, the last one :class:`TrainingDone`.

    ``stop``: checked after each EM step and pruning round; True finalizes the model there.
    """
    if not isinstance(corpus, Corpus):
        corpus = Corpus.from_texts(corpus)
    start = time.perf_counter()
    yield PhaseStarted("reading", corpus.total_bytes)
    words, line_final = yield from count_sentencepiece_words(corpus,
                                                             config.user_defined_symbols)
    model = yield from train_unigram_from_counts(words, config, line_final, stop=stop)
    yield TrainingDone(model, time.perf_counter() - start, {"unique_words": float(len(words))})


def train_unigram_from_counts(
    words: dict[str, int], config: UnigramConfig, line_final: dict[str, int] | None = None,
    *, stop: Callable[[], bool] | None = None,
) -> Generator[TrainEvent, None, TrainedUnigram]:
    """Seeding, EM rounds with pruning, and finalisation on ``▁word`` counts.

    ``line_final``: how often each word ended its line (refines seeding; optional).
    ``stop``: checked after each EM step and pruning round; True finalizes there.
    """
    # Arrays, lists and tuples without cycles: the cyclic GC would only walk them (and the
    # window's GUI-thread collector waits while it is paused, see gc_pause), so it is paused
    # during each step.
    return (yield from paused_steps(_train_from_counts(words, config, line_final, stop)))


def _train_from_counts(
    words: dict[str, int], config: UnigramConfig, line_final: dict[str, int] | None,
    stop: Callable[[], bool] | None,
) -> Generator[TrainEvent, None, TrainedUnigram]:
    if not words:
        raise TrainingError("the corpus has no words to train on")
    required = required_chars(words, config.character_coverage)
    # Fail before the (long) EM rounds when the vocabulary cannot even hold the characters.
    room = config.vocab_size - config.num_meta
    if len(required) > room:
        raise TrainingError(f"vocab size {config.vocab_size} is too small for the "
                            f"{len(required)} characters that must be in it")
    words = mask_rare(words, required)
    if line_final is not None:
        line_final = mask_rare(line_final, required)
    yield WordsCounted(len(words), sum(words.values()), len(required))

    yield PhaseStarted("seeding")
    seeds, lattice = yield from seeds_and_lattice(
        words, required, line_final=line_final, max_len=config.max_piece_length,
        by_script=config.split_by_unicode_script, seed_size=config.seed_size,
        split_digits=config.split_digits)
    pieces = [s for s, _ in seeds]
    raw = np.array([f for _, f in seeds])
    logp = np.log(raw) - math.log(raw.sum())
    alive = np.ones(len(pieces), bool)
    desired = int(config.vocab_size * 1.1)
    details = config.step_details
    if details:
        order = np.argsort(-logp, kind="stable")[:SEEDS_SHOWN]
        yield SeedsReady(len(pieces), tuple((pieces[i], float(logp[i])) for i in order))

    def stopped() -> bool:
        return stop is not None and stop()

    for rnd in range(1_000):
        if stopped():
            break
        yield PhaseStarted("em", config.num_sub_iterations)
        for sub in range(config.num_sub_iterations):
            full = _with_unk(logp, alive)
            expected, loglik = lattice.forward_backward(full)
            _, num_tokens = lattice.viterbi_counts(full)
            keep = alive & (expected >= MIN_EXPECTED)
            total = expected[keep].sum()
            logp = np.where(keep, digamma(np.maximum(expected, MIN_EXPECTED)) -
                            digamma(np.array([total]))[0], -np.inf)
            alive = keep
            lattice.keep(alive)
            yield EmStep(rnd, sub, -loglik, int(alive.sum()), num_tokens,
                         snapshot(pieces, logp, alive, required, config) if details else None)
            if stopped():
                break
        if alive.sum() <= desired or stopped():
            break
        yield PhaseStarted("pruning")
        removed = prune(pieces, logp, alive, lattice, desired, config)
        lattice.keep(alive)
        yield PruneStep(rnd, removed, int(alive.sum()),
                        snapshot(pieces, logp, alive, required, config) if details else None)

    yield PhaseStarted("finalizing")
    return finalize(pieces, logp, alive, required, config)


def snapshot(pieces: list[str], logp: FloatArray, alive: np.ndarray,
             required: dict[str, int], config: UnigramConfig) -> TrainedUnigram:
    """The model of the current state: every live piece (and required character) kept."""
    room = int(alive.sum()) + len(required) + config.num_meta + 1
    return finalize(pieces, logp, alive, required, replace(config, vocab_size=room))


def _with_unk(logp: FloatArray, alive: np.ndarray) -> FloatArray:
    """Scores by seed index plus the ``<unk>`` slot (min score - 10, as sentencepiece)."""
    unk = float(logp[alive].min()) - UNK_PENALTY if alive.any() else -UNK_PENALTY
    return np.append(np.where(alive, logp, -np.inf), unk)


def _second_best(s: str, index: dict[str, int], score: list[float], max_len: int
                 ) -> tuple[float, list[int]]:
    """Best segmentation of piece ``s`` that does not use ``s`` itself (unk = last slot)."""
    n = len(s)
    unk = len(score) - 1
    best = [0.0] + [-math.inf] * n
    back: list[tuple[int, int]] = [(0, 0)] * (n + 1)
    for j in range(1, n + 1):
        for i in range(max(0, j - max_len), j):
            if i == 0 and j == n:
                continue
            pid = index.get(s[i:j])
            if pid is None:
                if j - i != 1:
                    continue
                pid = unk
            v = best[i] + score[pid]
            if v > best[j]:
                best[j] = v
                back[j] = (i, pid)
    path: list[int] = []
    j = n
    while j > 0:
        i, pid = back[j]
        path.append(pid)
        j = i
    return best[n], path


def prune(pieces: list[str], logp: FloatArray, alive: np.ndarray, lattice: EdgeLattice,
          desired: int, config: UnigramConfig) -> tuple[tuple[str, float], ...]:
    """sentencepiece's ``PruneSentencePieces``; updates ``alive``, returns removed pieces."""
    full = _with_unk(logp, alive)
    freq, _ = lattice.viterbi_counts(full)
    freq = np.append(freq, 0.0)
    ids = np.flatnonzero(alive)
    index = {pieces[i]: int(i) for i in ids}
    score = full.tolist()
    total = float(freq.sum())
    logsum = math.log(total)
    keep: list[int] = []
    free: list[int] = []
    candidates: list[tuple[float, int]] = []
    for i in ids.tolist():
        f = float(freq[i])
        s = pieces[i]
        if f == 0.0:
            free.append(i)
            continue
        if len(s) == 1:
            keep.append(i)
            continue
        alt_score, alt = _second_best(s, index, score, config.max_piece_length)
        if alt_score > score[i]:
            free.append(i)  # its own Viterbi segmentation is split: never chosen
            continue
        logsum_alt = math.log(total + f * (len(alt) - 1))
        logprob_alt = sum(math.log(freq[n] + f) - logsum_alt for n in alt)
        loss = (f / total) * ((math.log(f) - logsum) - logprob_alt)  # F = token frequency
        candidates.append((loss, i))
    size = max(desired, int(config.shrinking_factor * len(ids)))
    candidates.sort(key=lambda t: (-t[0], t[1]))
    room = max(0, size - len(keep))
    kept_candidates = candidates[:room]
    alive[:] = False
    alive[keep] = True
    alive[[i for _, i in kept_candidates]] = True
    removed = [(pieces[i], loss) for loss, i in candidates[room:]]
    removed += [(pieces[i], 0.0) for i in free]
    return tuple(removed)


def finalize(pieces: list[str], logp: FloatArray, alive: np.ndarray,
             required: dict[str, int], config: UnigramConfig) -> TrainedUnigram:
    """Required characters first (penalised scores when pruned), then the best pieces."""
    final: dict[str, float] = {}
    live = {pieces[i]: float(logp[i]) for i in np.flatnonzero(alive)}
    min_score = min(live.values()) if live else 0.0
    penalty = 0.0
    for ch, _ in sorted(required.items(), key=lambda kv: (-kv[1], kv[0])):
        if ch == RARE:
            continue
        if ch in live:
            final[ch] = live[ch]
        else:
            final[ch] = min_score + penalty
            penalty += 0.0001
    room = config.vocab_size - config.num_meta
    if len(final) > room:
        raise TrainingError(f"vocab size {config.vocab_size} is too small for the "
                            f"{len(final)} characters that must be in it")
    for symbol in config.user_defined_symbols:  # never learned twice (cut out of the text)
        final.pop(symbol, None)
        live.pop(symbol, None)
    # Ranked by the float32 score the model stores, ties by piece (as sentencepiece's
    # Sorted): the float64 scores differ in their last bits between CPUs (numpy's SIMD exp
    # and log), which reordered equal float32 scores from one machine to another.
    for piece, sc in sorted(live.items(), key=_rank_key):
        if len(final) >= room:
            break
        final.setdefault(piece, sc)
    ordered = sorted(final.items(), key=_rank_key)
    meta: list[tuple[str, float]] = [(m, 0.0) for m in META]
    meta += [(s, 0.0) for s in config.user_defined_symbols]
    if config.byte_fallback:
        meta += [(f"<0x{b:02X}>", 0.0) for b in range(256)]
    return TrainedUnigram(pieces=tuple(meta + ordered), byte_fallback=config.byte_fallback,
                          user_symbols=config.user_defined_symbols)


def _rank_key(item: tuple[str, float]) -> tuple[float, str]:
    """Sort key of a final piece: float32 score descending, then the piece."""
    return -f32(item[1]), item[0]
