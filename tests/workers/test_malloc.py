"""A big document's first encode holds glibc's mmap threshold low, then sets it high
(explorer/workers/malloc.py). What glibc then does with a block depends on the process's
heap (a behavioural probe passed alone and failed inside the full suite), so these tests
check the calls; the effect is measured in docs/benchmarks.md (sessions 8, 25)."""

from __future__ import annotations

import sys

import pytest

from explorer.workers import malloc
from explorer.workers.doctokens import GC_QUIET_CHARS, encode_document


@pytest.fixture
def calls(monkeypatch):
    seen: list[tuple[int, int]] = []

    def fake(library: str = "libc.so.6"):
        return lambda option, size: seen.append((option.value, size.value)) or 1

    monkeypatch.setattr(malloc, "_mallopt", fake)
    return seen


def test_held_low_inside_and_set_high_after(calls) -> None:
    with malloc.mapped_temporaries(True):
        assert calls == [(malloc.M_MMAP_THRESHOLD, malloc.DURING)]
    assert calls[-1] == (malloc.M_MMAP_THRESHOLD, malloc.AFTER)
    calls.clear()
    with pytest.raises(RuntimeError), malloc.mapped_temporaries(True):
        raise RuntimeError  # a cancelled encode sets it high too
    assert calls[-1] == (malloc.M_MMAP_THRESHOLD, malloc.AFTER)


def test_only_big_first_encodes(calls) -> None:
    from explorer.bundled import resource_path
    from explorer.engine.formats import load_tokenizer
    from explorer.engine.generators import run_to_end

    tok = load_tokenizer(resource_path("vocab", "cl100k_base.tiktoken"))
    run_to_end(encode_document(tok, "small text\n" * 10))
    assert calls == []
    run_to_end(encode_document(tok, "word\n" * (GC_QUIET_CHARS // 5 + 1)))
    assert [size for _, size in calls] == [malloc.DURING, malloc.AFTER]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc (Linux)")
def test_glibc_takes_the_setting() -> None:
    assert malloc.set_mmap_threshold(malloc.AFTER) is True


def test_without_glibc_nothing_changes() -> None:
    assert malloc.set_mmap_threshold(1 << 20, library="libnot-a-libc.so.0") is False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc (Linux)")
def test_glibc_trims() -> None:
    assert malloc.trim() is True


def test_trim_without_glibc() -> None:
    assert malloc.trim(library="libnot-a-libc.so.0") is False


def test_a_load_and_a_taken_tail_trim(monkeypatch) -> None:
    from explorer.bundled import resource_path
    from explorer.engine.generators import run_to_end
    from explorer.workers import doctokens, jobs

    trims: list[str] = []
    monkeypatch.setattr(jobs, "trim", lambda: trims.append("load") or True)
    loaded = run_to_end(jobs.load_job(resource_path("vocab", "corpus_bpe_4k.json")))
    assert loaded.tokenizer is not None and trims == ["load"]

    class Helper:  # a tail helper whose tokens are in, for text[start:]
        start = 6
        taken_at = None

        def __init__(self, text: str) -> None:
            self.tokens = loaded.tokenizer.encode_compact(text[self.start:])

        def reached(self, offset: int) -> None:
            pass

        def poll(self):
            return self.tokens

        def covered_from(self):
            return self.start

    monkeypatch.setattr(doctokens, "trim", lambda: trims.append("take") or True)
    text = "first\nsecond line\nthird line\nfourth line\n"
    helper = Helper(text)
    part = text[helper.start:]
    check = doctokens.cut_segments(part, helper.tokens, len(part), 12, least=1)[0]
    assert check.text == "third line\n"
    segments: list = []
    assert doctokens._take_tail(helper, text, 18, check, segments)
    assert trims == ["load", "take"]
    assert "".join(seg.text for seg in segments) == text[18:]
