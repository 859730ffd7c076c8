"""Incremental BPE training that reproduces HF ``tokenizers``' ``BpeTrainer`` merge for merge.

The algorithm is HF's: word-frequency dedup, a pair -> words index, a lazy max-heap, and local
pair-count updates in the words that contain the merged pair (never a full recount). Merge
order and ids follow HF exactly: special tokens first, the alphabet in code-point order, ties
broken by the higher count then the smaller ``(id_a, id_b)``; each heap entry carries the words
where its pair was found when pushed, and merged pairs keep their (stale) count, as in HF.

HF's ``continuing_subword_prefix`` (``##``), ``end_of_word_suffix`` (``</w>``) and
``max_token_length`` work as in ``BpeTrainer``: every character but a word's first gets the
prefix, its last gets the suffix (first/last count skipped characters, as in HF), a merge
drops the prefix of its right part, and with a length cap a pair is only counted when the
merged token would be *shorter* than the cap in characters (HF's ``<``; the first pairs of
two characters are always counted). HF's quirk under a cap is kept too: a pair occurrence
made by a merge but not counted is still subtracted when it goes, and the negative count,
read as an unsigned number, makes that pair the next merge. HF numbers the prefixed/suffixed
symbols in the order of its word hash map, which changes from run to run (and with it
tie-breaks between merges); ours follow the first occurrence in the corpus, or an order given
to :func:`train_bpe_from_counts` (``symbol_order``), with which merges equal HF's run for run.
"""

from __future__ import annotations

import heapq
import time
from collections import defaultdict
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import chain

import numpy as np

from explorer.engine.gc_pause import paused_steps
from explorer.engine.pretokenizers.byte_level import bytes_to_unicode
from explorer.engine.pretokenizers.patterns import GPT2
from explorer.engine.trainers.bpe_marks import marked_symbols, merge_words_capped, word_symbols
from explorer.engine.trainers.corpus import Corpus
from explorer.engine.trainers.events import (
    Merge,
    MergeSummary,
    PairCount,
    PhaseStarted,
    TrainEvent,
    TrainingDone,
    WordsCounted,
)
from explorer.engine.trainers.models import BpeMode, TrainedBpe
from explorer.engine.trainers.words import WordCounts, count_byte_level, count_metaspace

_SHIFT = 24  # pair key = id_a << _SHIFT | id_b: int keys hash and compare faster than tuples
_MASK = (1 << _SHIFT) - 1
_PAIR_MASK = (1 << 2 * _SHIFT) - 1
_SEQ_BITS = 40  # heap entry = -count << _COUNT_SHIFT | pair << _SEQ_BITS | seq
_SEQ_MASK = (1 << _SEQ_BITS) - 1
_COUNT_SHIFT = _SEQ_BITS + 2 * _SHIFT
_LOW_MASK = (1 << _COUNT_SHIFT) - 1
_U64 = 1 << 64
STOPPED_EARLY = "stopped early on request (the merges so far are kept)"


@dataclass(frozen=True, slots=True)
class BpeConfig:
    """Settings of a BPE training run (HF ``BpeTrainer`` names where they exist)."""

    vocab_size: int = 8000
    mode: BpeMode = "byte_level"
    """``byte_level``: GPT-style regex split + byte alphabet (all 256 bytes always in the
    vocabulary); ``metaspace``: SentencePiece-style characters with ``▁`` for spaces."""
    pattern: str = GPT2
    add_prefix_space: bool = False
    min_frequency: int = 0
    special_tokens: tuple[str, ...] = ()
    limit_alphabet: int | None = None
    initial_alphabet: tuple[str, ...] = ()
    """Extra characters always kept (single characters)."""
    summaries: int = 100
    """About how many :class:`MergeSummary` events to send over the run."""
    merge_events: bool = True
    """Send one :class:`Merge` event per merge (turn off for benchmarks)."""
    continuing_subword_prefix: str | None = None
    """Spelling mark of non-initial symbols of a word (HF, e.g. ``##``)."""
    end_of_word_suffix: str | None = None
    """Spelling mark of a word's last symbol (HF, e.g. ``</w>``)."""
    max_token_length: int | None = None
    """No merge makes a token of this many characters or more (beyond the first pairs)."""
    step_pairs: int = 0
    """Step details: each :class:`Merge` event carries the top ``step_pairs`` pairs by live
    count (0, the default, costs nothing; a few dozen cost microseconds per merge)."""

    def __post_init__(self) -> None:
        if self.vocab_size < 1 or self.vocab_size > _MASK:
            raise ValueError(f"vocab size must be between 1 and {_MASK}, got {self.vocab_size}")
        if self.mode not in ("byte_level", "metaspace"):
            raise ValueError(f"unknown BPE mode {self.mode!r} (byte_level or metaspace)")
        if any(len(c) != 1 for c in self.initial_alphabet):
            raise ValueError("initial_alphabet must hold single characters")
        if self.max_token_length is not None and self.max_token_length < 1:
            raise ValueError(f"max token length must be at least 1, got {self.max_token_length}")
        if self.step_pairs < 0:
            raise ValueError("step_pairs must be 0 or more")
        for name in ("continuing_subword_prefix", "end_of_word_suffix"):
            if getattr(self, name) == "":
                raise ValueError(f"{name.replace('_', ' ')} must not be empty (use None)")


def count_words(corpus: Corpus, config: BpeConfig) -> Generator[TrainEvent, None, WordCounts]:
    """Counting phase: the corpus as pre-token frequencies, in the mode's spelling."""
    yield PhaseStarted("reading", corpus.total_bytes)
    if config.mode == "byte_level":
        counts = yield from count_byte_level(
            corpus, config.pattern, add_prefix_space=config.add_prefix_space
        )
    else:
        counts = yield from count_metaspace(corpus)
    return counts


def train_bpe(corpus: Corpus | Iterable[str], config: BpeConfig,
              stop: Callable[[], bool] | None = None,
              details: Callable[[], bool] | None = None) -> Iterator[TrainEvent]:
    """Train on a corpus: yields progress events, the last one :class:`TrainingDone`.

    ``stop``: checked before each merge; when it returns True merging ends there and the
    model of the merges so far is the result (a usable, saveable tokenizer). ``details``:
    with ``config.step_pairs``, asked before each merge whether to list its top pairs
    (None: every merge).
    """
    if not isinstance(corpus, Corpus):
        corpus = Corpus.from_texts(corpus)
    start = time.perf_counter()
    counts = yield from count_words(corpus, config)
    model = yield from train_bpe_from_counts(counts, config, stop=stop, details=details)
    yield TrainingDone(model, time.perf_counter() - start, {"unique_words": float(len(counts))})


def _alphabet(counts: WordCounts, config: BpeConfig) -> list[str]:
    freq: dict[str, int] = {}
    for word, c in counts.items():
        for ch in word:
            freq[ch] = freq.get(ch, 0) + c
    forced = set(config.initial_alphabet)
    if config.mode == "byte_level":
        forced.update(bytes_to_unicode().values())
    for ch in forced:
        freq[ch] = 1 << 62  # HF: usize::MAX, kept unless the limit is below their number
    chars = list(freq)
    limit = config.limit_alphabet
    if limit is not None and len(chars) > limit:
        # Drop the rarest (HF's unstable sort leaves ties arbitrary; we break them by char).
        chars.sort(key=lambda ch: (freq[ch], ch))
        chars = chars[len(chars) - limit :]
    chars.sort()
    return chars


def train_bpe_from_counts(
    counts: WordCounts, config: BpeConfig, *, symbol_order: Sequence[str] = (),
    stop: Callable[[], bool] | None = None, details: Callable[[], bool] | None = None,
) -> Generator[TrainEvent, None, TrainedBpe]:
    """Merging phase on word counts; returns the model (HF ``BpeTrainer.do_train``).

    ``symbol_order``: ids for prefixed/suffixed symbols (``##a``, ``a</w>``), in this order,
    before those met in the words (HF's order is its hash map's: pass it to replay a run).
    ``stop``: checked before each merge; True ends merging with the merges so far.
    ``details``: with ``config.step_pairs``, whether this merge lists its top pairs (None:
    every merge; listing costs a walk of the heap's top, ~0.1 ms late in a big run).
    """
    # The merge loop allocates millions of small objects but never a cycle: the cyclic GC's
    # full scans would only cost time (10-20%), so it is paused during each step.
    return (yield from paused_steps(_train_from_counts(counts, config, symbol_order, stop,
                                                       details)))


def _train_from_counts(
    counts: WordCounts, config: BpeConfig, symbol_order: Sequence[str],
    stop: Callable[[], bool] | None, details: Callable[[], bool] | None,
) -> Generator[TrainEvent, None, TrainedBpe]:
    id_to_word: list[str] = []
    word_to_id: dict[str, int] = {}
    for tok in (*config.special_tokens, *_alphabet(counts, config)):
        if tok not in word_to_id:
            word_to_id[tok] = len(id_to_word)
            id_to_word.append(tok)
    n_alphabet = len(id_to_word) - len(config.special_tokens)

    words: list[list[int]] = []
    wcounts: list[int] = []
    get = word_to_id.get
    prefix, suffix = config.continuing_subword_prefix, config.end_of_word_suffix
    if prefix is None and suffix is None:
        for word, c in counts.items():
            words.append([i for i in map(get, word) if i is not None])
            wcounts.append(c)
    else:
        for tok in (*symbol_order, *marked_symbols(counts, word_to_id, prefix, suffix)):
            if tok not in word_to_id:
                word_to_id[tok] = len(id_to_word)
                id_to_word.append(tok)
        for word, c in counts.items():
            words.append([word_to_id[s] for s in word_symbols(word, word_to_id, prefix, suffix)])
            wcounts.append(c)
    yield WordsCounted(len(words), sum(wcounts), n_alphabet)
    cap = config.max_token_length
    # Symbol lengths in characters, per word (only needed to apply a length cap).
    lens = [[1] * len(w) for w in words] if cap is not None else None

    yield PhaseStarted("counting", len(words))
    pair_counts, where = _count_pairs(words, wcounts, len(id_to_word))
    # Heap entries are single ints ordered like (-count, pair, seq): ``seq`` (push order,
    # HF's tie-break between entries of one pair) indexes ``positions``, the words where
    # the pair was found when pushed. One int compare per sift step instead of a tuple's.
    positions: list[set[int] | None] = []
    heap: list[int] = []
    for k, pos in where.items():
        c = pair_counts[k]
        if c > 0:
            heap.append(-c << _COUNT_SHIFT | k << _SEQ_BITS | len(positions))
            positions.append(pos)
    del where
    heapq.heapify(heap)

    target = max(config.vocab_size - len(id_to_word), 0)
    yield PhaseStarted("merging", target)
    merges: list[tuple[int, int]] = []
    every = max(1, target // max(1, config.summaries))
    t0 = time.perf_counter()
    heappop, heappush, heapreplace = heapq.heappop, heapq.heappush, heapq.heapreplace
    min_freq = config.min_frequency
    vocab_size = config.vocab_size
    last_count = 0
    step_pairs = config.step_pairs
    # HF never uncounts the merged occurrences of a pair: they stay in its count. They
    # are summed in ``stale``, so that the live count of every pair is
    # ``pair_counts - stale``, exactly a recount of the words (for the step table).
    stale: defaultdict[int, int] = defaultdict(int)
    stop_reason = ""
    while len(word_to_id) < vocab_size and heap:
        if stop is not None and stop():
            stop_reason = STOPPED_EARLY
            break
        top = heap[0]
        key = top >> _SEQ_BITS & _PAIR_MASK
        count = pair_counts[key]
        if count < 0:
            # Only with a length cap: a pair formed too long was never counted but is
            # still uncounted when destroyed. HF reads its i32 count as u64: it wraps to
            # a huge count, so the pair is merged next. Do the same.
            count += _U64
        if top >> _COUNT_SHIFT != -count:  # stale: re-queue with the current count
            heapreplace(heap, -count << _COUNT_SHIFT | top & _LOW_MASK)
            continue
        if count < 1 or min_freq > count:
            stop_reason = (f"the most frequent pair occurs {count:,} times, below the "
                           f"minimum frequency {min_freq:,}" if count >= 1 else "")
            break
        top_pairs: tuple[PairCount, ...] = ()
        if step_pairs and (details is None or details()):
            top_pairs = _top_pairs(heap, pair_counts, stale, step_pairs, id_to_word)
        heappop(heap)
        if count >= _U64 >> 1:
            count -= _U64  # events show the real (negative) count
        seq = top & _SEQ_MASK
        pos = positions[seq]
        positions[seq] = None
        a, b = key >> _SHIFT, key & _MASK
        right = id_to_word[b]
        if prefix is not None and right.startswith(prefix):
            right = right[len(prefix):]  # HF: the merged token drops b's prefix
        token = id_to_word[a] + right
        new = word_to_id.get(token)
        if new is None:
            new = word_to_id[token] = len(id_to_word)
            id_to_word.append(token)
        merges.append((a, b))
        last_count = count
        if lens is None:
            touched, merged = _merge_words(words, wcounts, pos, a, b, new, pair_counts)
        else:
            touched, merged = merge_words_capped(words, lens, wcounts, pos, a, b, new,
                                                 pair_counts, cap or 0, _SHIFT)
        stale[key] += merged
        for k, p in touched.items():
            c = pair_counts[k]
            if c > 0:
                heappush(heap, -c << _COUNT_SHIFT | k << _SEQ_BITS | len(positions))
                positions.append(p)
        if config.merge_events:
            yield Merge(len(merges) - 1, id_to_word[a], id_to_word[b], token, new, count,
                        len(id_to_word), top_pairs, _tied(top_pairs, a, b, count))
        if len(merges) % every == 0:
            yield MergeSummary(
                len(merges), target, len(id_to_word), count, time.perf_counter() - t0
            )
    if len(word_to_id) < vocab_size and not stop_reason:
        stop_reason = ("no pair left to merge: every word of the corpus is already a "
                       "single token")
    # Free the millions of small containers while the GC is still paused: once it is back
    # on, its first young-generation pass would otherwise walk them all (~10% of a run).
    heap.clear()
    positions.clear()
    words.clear()
    yield MergeSummary(len(merges), target, len(id_to_word), last_count, time.perf_counter() - t0)
    return TrainedBpe(
        vocab=tuple(id_to_word),
        merges=_hf_merge_list(merges, id_to_word),
        special_tokens=tuple(dict.fromkeys(config.special_tokens)),
        mode=config.mode,
        pattern=config.pattern,
        add_prefix_space=config.add_prefix_space,
        continuing_subword_prefix=prefix,
        end_of_word_suffix=suffix,
        stop_reason=stop_reason,
    )


def _top_pairs(heap: list[int], pair_counts: defaultdict[int, int],
               stale: defaultdict[int, int], k: int, id_to_word: list[str]
               ) -> tuple[PairCount, ...]:
    """The ``k`` pairs with the highest live counts, in HF's order (higher count, then
    smaller ``(id_a, id_b)``): exactly what a recount of the words from scratch gives.

    A pair's live count is ``pair_counts - stale`` (HF never uncounts the occurrences a
    merge joined; ``stale`` sums them). Under a length cap only pairs HF counts are listed:
    pairs too long to merge have no positive live count.

    Walks the heap from its root in sorted order without changing it. An entry's stored
    count is never below its pair's live count (a count that drops leaves its entry stale;
    one that grows pushes a new entry; a stale count is never below the live one), so a
    pair not met yet ranks after the entry being visited: once ``k`` pairs rank before it,
    the walk stops (also inside long runs of equal counts, where the pair order decides).
    """
    best: dict[int, int] = {}
    worst: list[tuple[int, int]] = []  # (count, -key) of the k best: worst[0] is the k-th
    frontier = [(heap[0], 0)] if heap else []
    n = len(heap)
    get_stale = stale.get
    while frontier:
        entry, i = heapq.heappop(frontier)
        key = entry >> _SEQ_BITS & _PAIR_MASK
        if len(worst) >= k:
            count_k, neg_key_k = worst[0]
            stored = -(entry >> _COUNT_SHIFT)
            if stored < count_k or (stored == count_k and key > -neg_key_k):
                break
        c = pair_counts.get(key, 0) - get_stale(key, 0)
        if c > 0 and key not in best:
            best[key] = c
            if len(worst) < k:
                heapq.heappush(worst, (c, -key))
            elif (c, -key) > worst[0]:
                heapq.heapreplace(worst, (c, -key))
        for child in (2 * i + 1, 2 * i + 2):
            if child < n:
                heapq.heappush(frontier, (heap[child], child))
    ranked = sorted(best.items(), key=lambda kc: (-kc[1], kc[0]))[:k]
    return tuple(PairCount(id_to_word[key >> _SHIFT], id_to_word[key & _MASK], c,
                           key >> _SHIFT, key & _MASK) for key, c in ranked)


def _tied(top_pairs: tuple[PairCount, ...], a: int, b: int, count: int) -> int:
    """How many listed pairs share the winner's count, when the winner ``a b`` leads the
    list with its live count (else 0: HF took the pair by a stale count)."""
    if not top_pairs or (top_pairs[0].left_id, top_pairs[0].right_id, top_pairs[0].count
                         ) != (a, b, count):
        return 0
    return sum(p.count == top_pairs[0].count for p in top_pairs)


def _count_pairs(
    words: list[list[int]], wcounts: list[int], n_symbols: int
) -> tuple[defaultdict[int, int], dict[int, set[int]]]:
    """Weighted count of every adjacent pair, and the words holding each (ascending).

    Vectorized: one stable sort of all pair occurrences groups them by pair with the word
    indices ascending, so every set is built by the same sequence of adds as a loop would.
    """
    lens = np.fromiter(map(len, words), dtype=np.int64, count=len(words))
    flat = np.fromiter(chain.from_iterable(words), dtype=np.int64, count=int(lens.sum()))
    if len(flat) < 2:
        return defaultdict(int), {}
    not_last = np.ones(len(flat), dtype=bool)
    not_last[np.cumsum(lens[lens > 0]) - 1] = False  # a word's last symbol starts no pair
    keep = not_last[:-1]
    # Dense keys a * n + b order pairs like (a, b); small ones take numpy's radix sort.
    dense = (flat[:-1] * n_symbols + flat[1:])[keep]
    order = np.argsort(dense.astype(np.uint16) if n_symbols <= 256 else dense, kind="stable")
    dense = dense[order]
    word_of = np.repeat(np.arange(len(words), dtype=np.int64), lens)[:-1][keep][order]
    if not len(dense):
        return defaultdict(int), {}
    starts = np.flatnonzero(np.r_[True, dense[1:] != dense[:-1]])
    sums = np.add.reduceat(np.asarray(wcounts, dtype=np.int64)[word_of], starts)
    # Pairs in order of first occurrence, as a counting loop would insert them: the frequent
    # pairs then sit first in their hash probe chains (~4% faster merging than sorted order).
    by_first = np.argsort(order[starts], kind="stable")
    firsts = dense[starts][by_first]
    keys = (firsts // n_symbols << _SHIFT | firsts % n_symbols).tolist()
    # One int object per word, shared by all its sets as a loop's ``i`` would be (distinct
    # objects per occurrence make the merge loop ~5% slower: more memory to walk).
    word_list = list(map(list(range(len(words))).__getitem__, word_of.tolist()))
    lows = starts[by_first].tolist()
    highs = np.append(starts[1:], len(word_list))[by_first].tolist()
    where = {k: set(word_list[lo:hi]) for k, lo, hi in zip(keys, lows, highs, strict=True)}
    return defaultdict(int, zip(keys, sums[by_first].tolist(), strict=True)), where


def _merge_words(
    words: list[list[int]],
    wcounts: list[int],
    pos: set[int],
    a: int,
    b: int,
    new: int,
    pair_counts: defaultdict[int, int],
) -> tuple[defaultdict[int, set[int]], int]:
    """Merge ``a b`` -> ``new`` left to right in the words of ``pos`` (HF ``Word::merge``).

    Updates ``pair_counts`` in place (as HF: the joined occurrences stay counted); returns
    the pairs that gained occurrences, with the words where they did (HF's
    ``where_to_update``), and the weighted number of occurrences joined.
    """
    touched: defaultdict[int, set[int]] = defaultdict(set)
    merged = 0
    sh = _SHIFT
    new_hi = new << sh
    same = a == b
    for i in pos:
        w = words[i]
        left = w.count(a)  # occurrences of a still ahead: no exception-driven search
        if not left:
            continue  # often: the pair left this word after the entry was pushed
        c = wcounts[i]
        last = first_last = len(w) - 1
        j = -1
        while left:
            j = w.index(a, j + 1)
            left -= 1
            if j < last and w[j + 1] == b:
                if same:
                    left -= 1  # the b merged away was an a too
                if j:
                    prev = w[j - 1]
                    pair_counts[prev << sh | a] -= c
                    k = prev << sh | new
                    pair_counts[k] += c
                    touched[k].add(i)
                w[j] = new
                del w[j + 1]
                last -= 1
                if j < last:
                    nxt = w[j + 1]
                    pair_counts[b << sh | nxt] -= c
                    k = new_hi | nxt
                    pair_counts[k] += c
                    touched[k].add(i)
        merged += c * (first_last - last)
    return touched, merged


def _hf_merge_list(
    merges: list[tuple[int, int]], id_to_word: list[str]
) -> tuple[tuple[str, str], ...]:
    """HF keeps merges in a map: a pair merged twice keeps its last rank; list by rank."""
    last = {pair: rank for rank, pair in enumerate(merges)}
    if len(last) < len(merges):  # rare: a pair merged again after its token was re-made
        merges = [pair for rank, pair in enumerate(merges) if last[pair] == rank]
    return tuple((id_to_word[a], id_to_word[b]) for a, b in merges)
