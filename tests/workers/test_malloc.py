"""A big document's first encode holds glibc's mmap threshold low, then sets it high
(explorer/workers/malloc.py): measured on the process's own 8 MB block with mallinfo2."""

from __future__ import annotations

import subprocess
import sys

import pytest

PROBE = """
import ctypes, sys
from explorer.workers.malloc import mapped_temporaries

class Info(ctypes.Structure):  # glibc's struct mallinfo2
    _fields_ = [(name, ctypes.c_size_t) for name in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks",
        "fordblks", "keepcost")]
libc = ctypes.CDLL("libc.so.6")
libc.malloc.restype = ctypes.c_void_p
libc.free.argtypes = [ctypes.c_void_p]
libc.mallinfo2.restype = Info

def mapped() -> int:  # is an 8 MB block mapped, after a 16 MB one was freed?
    libc.free(libc.malloc(16 << 20))
    before = libc.mallinfo2().hblkhd
    block = libc.malloc(8 << 20)
    found = int(libc.mallinfo2().hblkhd - before >= 8 << 20)
    libc.free(block)
    return found

if sys.argv[1] == "default":
    print(mapped())
else:
    with mapped_temporaries(True):
        inside = mapped()
    print(inside, mapped())
"""


def probe(mode: str) -> str:
    out = subprocess.run([sys.executable, "-c", PROBE, mode], capture_output=True, text=True,
                         check=True)
    return out.stdout.strip()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc (Linux)")
def test_blocks_are_mapped_during_the_encode_and_not_after() -> None:
    assert probe("default") == "0"  # glibc's own rule: the threshold grew to 16 MB
    assert probe("held") == "1 0"  # 256 kB inside, 32 MB after


def test_without_glibc_nothing_changes() -> None:
    from explorer.workers.malloc import set_mmap_threshold

    assert set_mmap_threshold(1 << 20, library="libnot-a-libc.so.0") is False
