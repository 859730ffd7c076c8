"""Step-by-step trace of the BPE merge queue, for the merge-queue panel.

:func:`trace_merges` runs exactly the algorithm of
:func:`explorer.engine.bpe.queue.merge_with_queue` (linked list of symbols, min-heap of
``(rank, left)``, stale entries skipped) but yields a
:class:`MergeStep` snapshot after the start and after every pop: the live symbols, the whole
queue in pop order with each entry's live/stale state, the entry popped and the merge applied
(``None`` for a stale pop). The last step has ``kind == "done"``. It is a separate function so
that plain encoding pays nothing for tracing. Snapshots sort the heap, so a step costs
O(q log q) for a queue of q entries: fine for one pre-token under the cursor, not for corpora.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from heapq import heappop, heappush
from typing import Generic, Literal, TypeVar

S = TypeVar("S", bytes, str)
Rank = int | float
StepKind = Literal["start", "pop", "done"]


@dataclass(frozen=True, slots=True)
class QueueEntry(Generic[S]):
    """One candidate merge in the queue: symbols at node ``left`` and ``right``."""

    rank: Rank
    left: int
    """Node index (position in the initial symbol list) of the left symbol."""
    right: int
    merged: S
    """The symbol the merge would produce (``left + right`` when it was pushed)."""
    live: bool
    """False when stale: a side was merged away or has grown since the entry was pushed."""


@dataclass(frozen=True, slots=True)
class AppliedMerge(Generic[S]):
    """A merge that happened: ``left_symbol + right_symbol -> merged`` at node ``left``."""

    rank: Rank
    left: int
    right: int
    left_symbol: S
    right_symbol: S
    merged: S


@dataclass(frozen=True, slots=True)
class MergeStep(Generic[S]):
    """The state after one step of the merge loop."""

    index: int
    """0 for the start, then one per pop; the done step comes last."""
    kind: StepKind
    symbols: tuple[S, ...]
    """Live symbols in order, after this step."""
    nodes: tuple[int, ...]
    """Node index of each live symbol (what queue entries refer to)."""
    queue: tuple[QueueEntry[S], ...]
    """The whole queue after this step, in pop order (rank, then left)."""
    popped: QueueEntry[S] | None = None
    """The entry popped this step (its ``live`` says whether it was stale)."""
    merge: AppliedMerge[S] | None = None
    """The merge applied this step; None at start/done and for stale pops."""
    whole_token: bool = False
    """Done step only: the pre-token was emitted whole by a vocabulary lookup."""


def trace_merges(
    symbols: Sequence[S], rank_of: Callable[[S, S], Rank | None]
) -> Iterator[MergeStep[S]]:
    """Yield every step of merging ``symbols`` (see the module docstring)."""
    n = len(symbols)
    sym = list(symbols)
    size = [len(s) for s in sym]
    nxt = list(range(1, n + 1))
    prev = list(range(-1, n - 1))
    heap: list[tuple[Rank, int, int, S]] = []

    def push(left: int, right: int) -> None:
        r = rank_of(sym[left], sym[right])
        if r is not None:
            heappush(heap, (r, left, right, sym[left] + sym[right]))

    def is_live(left: int, right: int, merged: S) -> bool:
        ls, rs = size[left], size[right]
        return bool(ls and rs and ls + rs == len(merged))

    def snapshot(index: int, kind: StepKind, popped: QueueEntry[S] | None,
                 merge: AppliedMerge[S] | None) -> MergeStep[S]:
        nodes: list[int] = []
        i = 0 if n else n
        while i < n:
            nodes.append(i)
            i = nxt[i]
        queue = tuple(QueueEntry(r, left, right, m, is_live(left, right, m))
                      for r, left, right, m in sorted(heap))
        return MergeStep(index, kind, tuple(sym[i] for i in nodes), tuple(nodes), queue,
                         popped, merge)

    for i in range(n - 1):
        push(i, i + 1)
    yield snapshot(0, "start", None, None)
    step = 0
    while heap:
        step += 1
        r, left, right, merged = heappop(heap)
        live = is_live(left, right, merged)
        popped = QueueEntry(r, left, right, merged, live)
        if not live:
            yield snapshot(step, "pop", popped, None)
            continue
        applied = AppliedMerge(r, left, right, sym[left], sym[right], merged)
        sym[left] = merged
        size[left] = len(merged)
        size[right] = 0
        after = nxt[right]
        nxt[left] = after
        if after < n:
            prev[after] = left
        if prev[left] >= 0:
            push(prev[left], left)
        if after < n:
            push(left, after)
        yield snapshot(step, "pop", popped, applied)
    yield snapshot(step + 1, "done", None, None)
