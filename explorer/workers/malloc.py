"""glibc's mmap threshold during a big document's first encode (no Qt; ctypes only).

glibc raises its mmap threshold to the size of every mapped block freed, so after a few
large temporaries every later one comes from the heap, between the word caches' small
long-lived objects, and the heap keeps the holes. During the first encode of a big document
(numpy temporaries of a few hundred kB per window) the threshold is held at 1 MiB: the
text-sized ones (a window's int64 arrays and up) are mapped and returned. Held for good it
cost keystrokes ~2 ms (the editor's megabyte copies mapped and faulted in afresh every time),
so afterwards it is set high (32 MB, glibc's own ceiling for the moving threshold) and later
allocations come from the heap as before. Measured in docs/benchmarks.md (sessions 8 and 25).
Elsewhere than glibc nothing changes.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable, Iterator
from contextlib import contextmanager

M_MMAP_THRESHOLD = -3  # malloc.h
DURING = 1024 * 1024
"""At 256 kB every window's arrays of 4 bytes a character were mapped and faulted in afresh:
a 10 MB document with a 32k Unigram model took 142k page faults on the encode's thread, a
quarter of its CPU (0.28-0.33 s of system time); at 1 MiB 59k, and the thread's CPU 1.11 ->
0.94-1.0 s. The window's peak stayed where it was (Gemma 4 593 MiB, nomic-bert-moe 588; at
32 MB they reached 608 and 602)."""
AFTER = 32 * 1024 * 1024


def _mallopt(library: str = "libc.so.6") -> Callable[[int, int], int] | None:
    try:
        return ctypes.CDLL(library).mallopt  # type: ignore[no-any-return]
    except (OSError, AttributeError):
        return None


def set_mmap_threshold(size: int, library: str = "libc.so.6") -> bool:
    """Fix glibc's mmap threshold at ``size`` bytes; False where there is no glibc."""
    mallopt = _mallopt(library)
    if mallopt is None:
        return False
    return bool(mallopt(ctypes.c_int(M_MMAP_THRESHOLD), ctypes.c_int(size)))


@contextmanager
def mapped_temporaries(active: bool) -> Iterator[None]:
    """Hold the threshold at :data:`DURING` inside the block, at :data:`AFTER` after it."""
    if not active or not set_mmap_threshold(DURING):
        yield
        return
    try:
        yield
    finally:
        set_mmap_threshold(AFTER)


def trim(library: str = "libc.so.6") -> bool:
    """Give the heap's free memory back to the system (glibc ``malloc_trim(0)``): after a
    vocabulary's load, whose parsed file and temporaries leave holes in the heap (a
    262k-piece GGUF model: 147 -> 124 MB), and before a big document's last part is taken
    in, the moment its peak would otherwise come. False where there is no glibc."""
    try:
        malloc_trim = ctypes.CDLL(library).malloc_trim
    except (OSError, AttributeError):
        return False
    return bool(malloc_trim(ctypes.c_size_t(0)))
