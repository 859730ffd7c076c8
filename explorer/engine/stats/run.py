"""Run the corpus statistics: map :func:`count_shard` over the shards, reduce by merging.

Three executors give the same numbers (counters only add up):

- in this process (``workers=1``): shard after shard;
- a local process pool (``workers=N``, the default is one process per core): tokenizers are
  pickled once per process (``spawn``, safe beside Qt threads);
- a Dask cluster (``scheduler=ADDRESS``; ``pip install "dask[distributed]"``): tokenizers are
  scattered to every worker once.

:func:`corpus_stats` is a generator job: it yields :class:`Progress` after every merged shard
(each yield is a cancellation point: closing the generator cancels the shards not started
and shuts the pool down) and returns :class:`CorpusStats`. At most ``2 x workers`` shards are
in flight, so memory stays bounded whatever the corpus size.
"""

from __future__ import annotations

import os
import pickle
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from multiprocessing import get_context
from typing import Any

from explorer.engine.errors import CorpusError, TokenizerError
from explorer.engine.stats.corpus import SHARD_CHARS, CorpusSource, iter_shards
from explorer.engine.stats.counts import Counts, DiffLine, Shard, ShardResult, count_shard
from explorer.engine.tokenizer import Tokenizer

DASK_PIP = 'pip install "dask[distributed]"'


@dataclass(frozen=True, slots=True)
class Progress:
    """Bytes of the corpus done so far out of ``total``."""

    done: int
    total: int
    shards: int


@dataclass(slots=True)
class CorpusStats:
    """The reduced statistics of every tokenizer over the corpus."""

    names: list[str]
    vocab_sizes: list[int]
    counts: list[Counts]
    files: list[str]
    diff_lines: list[DiffLine] = field(default_factory=list)
    diff_count: int = 0
    pieces: list[dict[int, str]] = field(default_factory=list)
    """Per tokenizer: piece of every id in its most frequent tokens (for display)."""


def default_workers() -> int:
    """One process per core."""
    return max(1, os.cpu_count() or 1)


# -- process-pool side -----------------------------------------------------------------------
_WORKER_TOKENIZERS: list[Tokenizer] = []


def _init_worker(payload: bytes) -> None:
    global _WORKER_TOKENIZERS
    _WORKER_TOKENIZERS = pickle.loads(payload)


def _pool_count(shard: Shard, diff_limit: int) -> ShardResult:
    return count_shard(_WORKER_TOKENIZERS, shard, diff_limit=diff_limit)


# -- the job ---------------------------------------------------------------------------------
class _Reducer:
    def __init__(self, n: int, diff_limit: int) -> None:
        self.counts = [Counts() for _ in range(n)]
        self.diff: list[tuple[int, DiffLine]] = []
        self.diff_count = 0
        self.diff_limit = diff_limit

    def add(self, index: int, result: ShardResult) -> None:
        for total, part in zip(self.counts, result.counts, strict=True):
            total.merge(part)
        self.diff_count += result.diff_count
        self.diff.extend((index, d) for d in result.diff_lines)
        if len(self.diff) > 4 * self.diff_limit:
            self._trim()

    def _trim(self) -> None:
        self.diff.sort(key=lambda item: (item[0], item[1].line))
        del self.diff[self.diff_limit:]

    def lines(self) -> list[DiffLine]:
        self._trim()
        return [d for _, d in self.diff]


def corpus_stats(tokenizers: Sequence[Tokenizer], sources: Sequence[CorpusSource], *,
                 names: Sequence[str] | None = None, workers: int | None = None,
                 scheduler: str | None = None, shard_chars: int = SHARD_CHARS,
                 diff_limit: int = 0, top: int = 20) -> Generator[Progress, None, CorpusStats]:
    """Statistics of every tokenizer over every line of ``sources`` (see the module doc).

    ``diff_limit``: keep that many lines whose token boundaries differ between the tokenizers
    (the first ones in corpus order; all are counted). ``top``: most frequent tokens kept.
    Raises :class:`CorpusError` for unreadable input, ``ValueError`` for bad arguments.
    """
    if not tokenizers:
        raise ValueError("corpus statistics need at least one tokenizer")
    total = sum(s.size() for s in sources)  # fails early on a missing file
    reducer = _Reducer(len(tokenizers), diff_limit)
    shards = iter_shards(sources, shard_chars=shard_chars)
    if scheduler is not None:
        run = _run_dask(tokenizers, shards, scheduler, diff_limit)
    elif (workers or default_workers()) <= 1:
        run = _run_inline(tokenizers, shards, diff_limit)
    else:
        run = _run_pool(tokenizers, shards, workers or default_workers(), diff_limit)
    done = n = 0
    try:
        for index, size, result in run:
            reducer.add(index, result)
            done += size
            n += 1
            yield Progress(done, total, n)
    finally:
        run.close()
    labels = list(dict.fromkeys(s.label for s in sources))
    stats = CorpusStats(list(names or [t.info.name for t in tokenizers]),
                        [t.vocab_size for t in tokenizers], reducer.counts, labels,
                        reducer.lines(), reducer.diff_count)
    for tok, counts in zip(tokenizers, stats.counts, strict=True):
        stats.pieces.append({i: _piece(tok, i) for i, _ in most_common(counts, top)})
    return stats


def most_common(counts: Counts, n: int) -> list[tuple[int, int]]:
    """The ``n`` most frequent ``(id, count)``, ties by id (deterministic)."""
    return sorted(counts.ids.items(), key=lambda kv: (-kv[1], kv[0]))[:n]


def _piece(tokenizer: Tokenizer, token_id: int) -> str:
    try:
        return tokenizer.id_to_token(token_id).piece
    except (KeyError, IndexError, ValueError, TokenizerError):
        return f"<id {token_id}>"


Results = Generator[tuple[int, int, ShardResult], None, None]


def _run_inline(tokenizers: Sequence[Tokenizer], shards: Iterator[tuple[Shard, int]],
                diff_limit: int) -> Results:
    for shard, size in shards:
        yield shard.index, size, count_shard(tokenizers, shard, diff_limit=diff_limit)


def _in_flight(shards: Iterator[tuple[Shard, int]], limit: int,
               submit: Callable[[Shard], Any],
               first_done: Callable[[list[Any]], Iterable[Any]],
               result: Callable[[Any], ShardResult],
               pending: dict[Any, tuple[int, int]]) -> Results:
    """Keep at most ``limit`` shards submitted (``submit`` returns a future), yield each
    result as it completes (``first_done`` waits for at least one); ``pending`` is the
    caller's, so it can cancel what is left."""
    exhausted = False
    while True:
        while not exhausted and len(pending) < limit:
            nxt = next(shards, None)
            if nxt is None:
                exhausted = True
                break
            shard, size = nxt
            pending[submit(shard)] = (shard.index, size)
        if not pending:
            return
        for fut in first_done(list(pending)):
            index, size = pending.pop(fut)
            yield index, size, result(fut)


def _run_pool(tokenizers: Sequence[Tokenizer], shards: Iterator[tuple[Shard, int]],
              workers: int, diff_limit: int) -> Results:
    try:
        payload = pickle.dumps(list(tokenizers), protocol=pickle.HIGHEST_PROTOCOL)
    except (pickle.PicklingError, TypeError, AttributeError) as e:
        raise CorpusError(f"a tokenizer cannot be sent to worker processes ({e}); "
                          "use --workers 1") from None
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=get_context("spawn"),
                               initializer=_init_worker, initargs=(payload,))
    pending: dict[Any, tuple[int, int]] = {}

    def result(fut: Future[ShardResult]) -> ShardResult:
        try:
            return fut.result()
        except BrokenProcessPool as e:
            raise CorpusError(f"a worker process died ({e})") from None

    try:
        yield from _in_flight(
            shards, 2 * workers, lambda shard: pool.submit(_pool_count, shard, diff_limit),
            lambda futs: wait(futs, return_when=FIRST_COMPLETED)[0], result, pending)
    finally:
        for fut in pending:
            fut.cancel()
        pool.shutdown(wait=True, cancel_futures=True)


def _run_dask(tokenizers: Sequence[Tokenizer], shards: Iterator[tuple[Shard, int]],
              address: str, diff_limit: int) -> Results:
    try:
        from distributed import Client
        from distributed import wait as dask_wait
    except ImportError:
        from explorer.engine.install_hint import install_hint

        raise CorpusError(f"--scheduler needs Dask ({install_hint(DASK_PIP)})") from None
    try:
        client = Client(address, timeout="10s")
    except (OSError, TimeoutError, ValueError) as e:
        raise CorpusError(f"cannot reach the Dask scheduler at {address}: {e}") from None
    pending: dict[Any, tuple[int, int]] = {}
    try:
        workers = max(1, sum(client.nthreads().values()))
        [scattered] = client.scatter([list(tokenizers)], broadcast=True)

        def submit(shard: Shard) -> Any:
            # The shard goes to a worker as data, not inside the task: the scheduler keeps
            # every task's arguments it has seen, so memory would grow with the corpus.
            [data] = client.scatter([shard], hash=False)
            return client.submit(count_shard, scattered, data, diff_limit=diff_limit,
                                 pure=False)

        yield from _in_flight(
            shards, 2 * workers, submit,
            lambda futs: dask_wait(futs, return_when="FIRST_COMPLETED").done,
            lambda fut: fut.result(), pending)
    finally:
        if pending:
            client.cancel(list(pending))
        client.close()
