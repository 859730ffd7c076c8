"""A child's part encoded in chunks from its end back (tail_chunks), joined as one encode."""

from __future__ import annotations

import time

import pytest
from doc_helpers import flat, run, whole_tokens
from references import require
from test_tail_encode import LINES

from explorer.bundled import resource_path
from explorer.engine.formats import load_tokenizer
from explorer.workers import tail_encode
from explorer.workers.doctokens import encode_document
from explorer.workers.tail_chunks import CHUNK_LIMITS, encode_backward, joined_chunks
from explorer.workers.tail_encode import TailEncode, start_tail

# lines of every script, some long, some blank, spaces at line ends and starts
TEXT = "\n".join(("  " * (i % 3)) + LINES[i % len(LINES)] * (1 + i % 7) + f" {i}  "
                 for i in range(6000)) + "\n"


@pytest.fixture(scope="module")
def cl100k():
    return load_tokenizer(resource_path("vocab", "cl100k_base.tiktoken"))


@pytest.mark.parametrize("vocab", ["cl100k_base.tiktoken", "corpus_bpe_4k.json",
                                   "sentencepiece/botchan_en_bpe_1000.model"])
@pytest.mark.parametrize("chunk", [3000, 40_000])
def test_the_chunks_joined_are_one_whole_text_encode(vocab, chunk):
    tok = load_tokenizer(require(*vocab.split("/")) if "/" in vocab
                         else resource_path("vocab", vocab))
    part = TEXT[len(TEXT) // 5:]
    chunks = list(encode_backward(tok.encode_compact, part, chunk=chunk, seconds=None))
    assert len(chunks) > 3 and [c[0] for c in chunks] == sorted((c[0] for c in chunks),
                                                                 reverse=True)
    assert all(later[0] < earlier[1] for earlier, later in zip(chunks[1:], chunks, strict=False))
    assert chunks[-1][0] == 0  # (down to the part's start: nothing stopped it)
    start, end, toks = joined_chunks(chunks)
    whole = tok.encode_compact(part)
    assert (start, end) == (0, len(part)) and toks == whole


def test_chunks_join_where_line_starts_are_inside_tokens(cl100k):
    """cl100k's ``"\n\n"`` tokens run across every other line start of a text with blank
    lines, and the byte tokens of one character share its span: the join is where a token
    starts and none crosses, not at a line start."""
    indented = "".join(f"    line {i} = f(x) + {i} 𠀋\n\n" for i in range(8000))
    chunks = list(encode_backward(cl100k.encode_compact, indented, chunk=20_000,
                                  seconds=None))
    assert len(chunks) > 5 and chunks[-1][0] == 0
    assert joined_chunks(chunks) == (0, len(indented), cl100k.encode_compact(indented))


def test_chunks_are_sized_by_the_pace_within_limits(cl100k):
    """After the first, a chunk is the last one's pace times ``seconds`` (a millisecond of
    cl100k is a few thousand characters: the least size then)."""
    chunks = list(encode_backward(cl100k.encode_compact, TEXT, chunk=50_000, seconds=1e-3))
    starts = [start for start, _, _ in chunks]
    sizes = [end - start for start, end in zip(starts, [len(TEXT), *starts], strict=False)]
    assert sizes[0] >= 50_000 and len(chunks) > 10
    assert all(CHUNK_LIMITS[0] <= size < CHUNK_LIMITS[0] + 5000 for size in sizes[1:-1])
    assert joined_chunks(chunks) == (0, len(TEXT), cl100k.encode_compact(TEXT))


def test_the_chunks_stop_where_the_thread_is(cl100k):
    places = iter([0, 0, 10**9])
    chunks = list(encode_backward(cl100k.encode_compact, TEXT, lambda: next(places), 20_000,
                                  seconds=None))
    assert len(chunks) == 2
    start, _, toks = joined_chunks(chunks)
    assert toks == cl100k.encode_compact(TEXT[start:])


def test_a_chunk_that_does_not_join_ends_the_work(cl100k):
    """A chunk whose tokens over the join differ from the next chunk's is not sent."""
    calls = []

    def encode(text):
        calls.append(text)
        toks = cl100k.encode_compact(text)
        if len(calls) == 3:  # (the third chunk comes out otherwise over its join)
            toks.ids[-1] += 1
            toks.ids[len(toks.ids) // 2 :] = toks.ids[len(toks.ids) // 2 :][::-1]
        return toks

    chunks = list(encode_backward(encode, TEXT, chunk=20_000, seconds=None))
    assert len(chunks) == 2 and len(calls) == 3
    start, _, toks = joined_chunks(chunks)
    assert toks == cl100k.encode_compact(TEXT[start:])


def test_a_child_encoding_chunks_meets_the_thread_and_the_document_is_one_encode(
        cl100k, monkeypatch):
    """A real child from a quarter in (~800k characters: several chunks of the child's
    size): the thread takes its chunks where they meet, the document is the whole encode."""
    monkeypatch.setattr(tail_encode, "PARALLEL_MIN", 1000)
    text = TEXT * 2
    started: list[TailEncode] = []

    def start(tokenizer, text_, exact):  # (the thread waits for the child's first chunk)
        helper = start_tail(tokenizer, text_, exact)
        assert helper is not None
        deadline = time.monotonic() + 120
        while helper.covered_from() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        assert helper.start > len(text_) // 2, "the child sent its chunks from the end"
        started.append(helper)
        return helper

    doc = run(encode_document(cl100k, text, chunk=32_768, tail=start))
    [helper] = started
    assert helper.taken_at is not None and helper.start < helper.taken_at
    assert flat(doc) == whole_tokens(cl100k, text)
    assert not helper.running


def test_the_parent_joins_the_chunks_it_has_even_when_the_child_then_fails(cl100k):
    """Chunks taken in before an error stay usable (each was joined by the child); the
    tokens start at the lowest chunk's start, in the document's offsets."""
    part_start = 1000
    text = TEXT[:200_000]
    part = text[part_start:]
    chunks = list(encode_backward(cl100k.encode_compact, part, chunk=30_000, seconds=None))
    helper = TailEncode.__new__(TailEncode)
    helper.start = helper._part = part_start
    helper.words, helper.failed, helper._done = False, False, False
    helper._chunks, helper._tokens = [], None
    helper._inbox = tail_encode.queue.SimpleQueue()
    assert helper.covered_from() is None and helper.poll() is None
    for chunk in chunks[:3]:
        helper._inbox.put(("chunk", chunk))
    helper._inbox.put(("error", "RuntimeError: gone"))
    assert helper.covered_from() == part_start + chunks[2][0] and helper.failed
    assert helper.poll() == cl100k.encode_compact(part[chunks[2][0]:])
    helper._inbox.put(("chunk", chunks[3]))  # (nothing is read after an error)
    assert helper.covered_from() == part_start + chunks[2][0]
