"""The window keeps glibc's mmap threshold fixed (explorer/ui/app.py fix_mmap_threshold): big
temporaries are then mapped and returned to the system, not left as holes in the heap."""

from __future__ import annotations

import subprocess
import sys

import pytest

PROBE = """
import ctypes, sys
from explorer.ui.app import fix_mmap_threshold
if sys.argv[1] == "fixed":
    assert fix_mmap_threshold()
class Info(ctypes.Structure):  # glibc's struct mallinfo2
    _fields_ = [(name, ctypes.c_size_t) for name in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks",
        "fordblks", "keepcost")]
libc = ctypes.CDLL("libc.so.6")
libc.malloc.restype = ctypes.c_void_p
libc.free.argtypes = [ctypes.c_void_p]
libc.mallinfo2.restype = Info
libc.free(libc.malloc(16 << 20))  # a mapped block freed: glibc would raise the threshold
before = libc.mallinfo2().hblkhd  # bytes in mapped blocks (imports hold some)
block = libc.malloc(8 << 20)
print(int(libc.mallinfo2().hblkhd - before >= 8 << 20))  # is the 8 MB block mapped?
"""


def probe(mode: str) -> str:
    out = subprocess.run([sys.executable, "-c", PROBE, mode], capture_output=True, text=True,
                         check=True)
    return out.stdout.strip()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc (Linux)")
def test_a_block_over_the_threshold_is_mapped_even_after_a_bigger_one_was_freed() -> None:
    assert probe("default") == "0"  # glibc's own rule: the threshold grew to 16 MB
    assert probe("fixed") == "1"


def test_without_glibc_nothing_changes() -> None:
    from explorer.ui.app import fix_mmap_threshold

    assert fix_mmap_threshold(library="libnot-a-libc.so.0") is False
