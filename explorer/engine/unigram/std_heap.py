"""A replica of libstdc++'s ``std::priority_queue`` (``push_heap`` / ``pop_heap``).

sentencepiece's n-best search pops hypotheses from a ``std::priority_queue``; when two have
exactly the same score, which comes first is decided by the heap's sift order. Python's
``heapq`` sifts differently, so equal-score paths would come out in another order.
"""

from __future__ import annotations


class StdMaxHeap:
    """``std::priority_queue`` (libstdc++ push_heap/pop_heap) ordered by item[0], largest first.

    Python's ``heapq`` pops equal keys in a different order; sentencepiece's n-best order on
    ties is whatever this exact algorithm produces.
    """

    def __init__(self) -> None:
        self.items: list[tuple] = []

    def __len__(self) -> int:
        return len(self.items)

    def push(self, item: tuple) -> None:
        heap = self.items
        heap.append(item)
        self._sift_up(len(heap) - 1, 0, item)

    def _sift_up(self, hole: int, top: int, item: tuple) -> None:
        heap = self.items
        key = item[0]
        parent = (hole - 1) // 2
        while hole > top and heap[parent][0] < key:
            heap[hole] = heap[parent]
            hole = parent
            parent = (hole - 1) // 2
        heap[hole] = item

    def pop(self) -> tuple:
        heap = self.items
        first = heap[0]
        last = heap.pop()
        if heap:  # std::__pop_heap: move the last item into the hole left at the top
            length = len(heap)
            hole = child = 0
            while child < (length - 1) // 2:
                child = 2 * (child + 1)
                if heap[child][0] < heap[child - 1][0]:
                    child -= 1
                heap[hole] = heap[child]
                hole = child
            if length % 2 == 0 and child == (length - 2) // 2:
                child = 2 * (child + 1)
                heap[hole] = heap[child - 1]
                hole = child - 1
            self._sift_up(hole, 0, last)
        return first
