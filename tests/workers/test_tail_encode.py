"""A big document's first encode with its tail in a child process (tail_encode)."""

from __future__ import annotations

import os
from array import array
from dataclasses import replace

import pytest
from doc_helpers import flat, run, whole_tokens

from explorer.bundled import resource_path
from explorer.engine.formats import load_tokenizer
from explorer.workers import tail_encode
from explorer.workers.docstore import refined
from explorer.workers.doctokens import encode_document
from explorer.workers.jobs import encode_job
from explorer.workers.tail_encode import TailEncode, start_tail

LINES = [
    "The quick brown fox jumps over the lazy dog.  ",
    "Всеобщая декларация прав человека, статья 1.",
    "人人生而自由，在尊严和权利上一律平等。𠀋𠀍 emoji 😀👍🏽 café",
    "",
    "    indented code(x) -> y  # comment\t\t",
    "नमस्ते दुनिया, यह एक परीक्षण है।",
    "",
    "",
    "العربية: لكل شخص حق التمتع بجميع الحقوق 123456789",
]
TEXT = "\n".join(LINES[i % len(LINES)] + f" {i}" for i in range(1500)) + "\n"


@pytest.fixture(scope="module")
def cl100k():
    return load_tokenizer(resource_path("vocab", "cl100k_base.tiktoken"))


@pytest.fixture
def small_tail(monkeypatch):
    """Texts of this test module get a child for their tail."""
    monkeypatch.setattr(tail_encode, "PARALLEL_MIN", 1000)
    monkeypatch.setattr(tail_encode, "HEAD_START", 0)


def test_the_tail_from_a_child_process_is_taken_and_the_document_is_the_whole_encode(
        cl100k, small_tail):
    started: list[TailEncode] = []

    def start_and_wait(tokenizer, text, exact):
        helper = start_tail(tokenizer, text, exact)
        assert helper is not None
        assert helper.wait(120) is not None, "the child gave no tokens"
        started.append(helper)
        return helper

    doc = run(encode_document(cl100k, TEXT, chunk=2048, tail=start_and_wait))
    [helper] = started
    assert helper.taken_at is not None and helper.start < helper.taken_at < len(TEXT) // 2 + 5000
    assert not helper.running
    assert flat(doc) == whole_tokens(cl100k, TEXT)
    assert doc.cp_starts[-1] == len(TEXT)
    alone = run(encode_document(cl100k, TEXT, chunk=2048))
    # the thread's segments are the ones it cuts alone; the child's part is cut coarse
    # (taken at once), and cut again it is in the document's own segments
    taken = doc.segment_of_offset(helper.taken_at)
    assert doc.cp_starts[taken] == helper.taken_at
    assert [s.text for s in doc.segments[:taken]] == [s.text for s in alone.segments[:taken]]
    assert not any(s.coarse for s in doc.segments[:taken])
    assert all(s.coarse for s in doc.segments[taken:])
    assert len(doc.segments) - taken < (len(alone.segments) - taken) / 4
    fine = refined(doc, 0, len(doc.segments))
    assert flat(fine) == flat(doc) and fine.cp_starts[-1] == len(TEXT)
    assert not any(s.coarse for s in fine.segments)
    assert max(len(s.text) for s in fine.segments) <= max(len(s.text) for s in alone.segments)


class _Answered:
    """A helper that has already answered with ``tokens``."""

    words = False  # (it encodes the tail, it does not solve words)

    def __init__(self, start, tokens):
        self.start, self.tokens, self.taken_at, self.closed = start, tokens, None, False

    def poll(self):
        return self.tokens

    def covered_from(self):
        return self.start

    def reached(self, offset):
        pass

    def close(self):
        self.closed = True


def test_a_tail_that_disagrees_is_not_taken(cl100k, small_tail):
    start = tail_encode.tail_start(TEXT)
    true = cl100k.encode_compact(TEXT[start:])
    wrong = replace(true, ids=array("i", (i + 1 for i in true.ids)))
    helpers: list[_Answered] = []

    def answered(_tok, _text, _exact):
        helpers.append(_Answered(start, wrong))
        return helpers[-1]

    doc = run(encode_document(cl100k, TEXT, chunk=2048, tail=answered))
    assert flat(doc) == whole_tokens(cl100k, TEXT)
    assert helpers[0].taken_at is None and helpers[0].closed


def test_the_true_tail_is_taken_from_the_first_boundary_past_its_start(cl100k, small_tail):
    start = tail_encode.tail_start(TEXT)
    helpers: list[_Answered] = []

    def answered(_tok, _text, _exact):
        helpers.append(_Answered(start, cl100k.encode_compact(TEXT[start:])))
        return helpers[-1]

    doc = run(encode_document(cl100k, TEXT, chunk=2048, tail=answered))
    assert flat(doc) == whole_tokens(cl100k, TEXT)
    assert start < helpers[0].taken_at <= start + 4 * 4 * 2048


def test_a_cancelled_encode_stops_the_child(cl100k, small_tail):
    started: list[TailEncode] = []

    def start(tokenizer, text, exact):
        helper = start_tail(tokenizer, text, exact)
        started.append(helper)
        return helper

    gen = encode_document(cl100k, TEXT * 4, chunk=2048, tail=start)
    next(gen)
    next(gen)  # the helper starts after the first window's partial result
    [helper] = started
    assert helper is not None
    gen.close()
    assert not helper.running


class _Unpicklable:
    """A tokenizer that cannot be sent to another process."""

    def __init__(self, inner):
        self.inner, self.hook = inner, lambda: None

    def __getattr__(self, name):
        return getattr(self.inner, name)


def test_a_tokenizer_that_cannot_be_sent_gets_no_child(cl100k, small_tail):
    assert start_tail(_Unpicklable(cl100k), TEXT) is None


class _FailsInChild:
    """Encodes in this process, raises in any other (the child's encode fails)."""

    def __init__(self, inner):
        self.inner, self.pid = inner, os.getpid()

    def encode_compact(self, text):
        if os.getpid() != self.pid:
            raise RuntimeError("no encode here")
        return self.inner.encode_compact(text)


def test_a_child_that_fails_gives_nothing_and_the_encode_goes_on(cl100k, small_tail):
    helper = start_tail(_FailsInChild(cl100k), TEXT)  # type: ignore[arg-type]
    assert helper is not None
    assert helper.wait(120) is None and helper.failed
    helper.close()
    assert not helper.running


def test_short_texts_get_no_child(cl100k):
    assert start_tail(cl100k, TEXT[:5000]) is None


@pytest.fixture(scope="module")
def unigram():
    from references import require

    return load_tokenizer(require("sentencepiece", "botchan_en_unigram_1000.model"))


def test_a_unigram_model_gets_a_child_solving_its_words_ahead(unigram, small_tail, monkeypatch):
    monkeypatch.setattr(tail_encode, "WORDS_AHEAD", 10_000)
    monkeypatch.setattr(tail_encode, "SHARE_STEP", 8192)
    rows = unigram.model._cache.rows
    unigram.model._cache.clear()
    seen = []

    def start_and_wait(tokenizer, text, exact):
        assert exact  # (a Unigram model has exact resume points)
        helper = start_tail(tokenizer, text, exact)
        assert helper is not None and helper.start > 10_000
        before = rows.size
        assert helper.wait(120) is None and not helper.failed
        seen.append((helper, before, rows.size))
        return helper

    doc = run(encode_document(unigram, TEXT, chunk=2048, tail=start_and_wait))
    [(helper, before, after)] = seen
    assert helper.shares >= 5 and not helper.running
    assert after > before  # the child's words were taken
    assert flat(doc) == whole_tokens(unigram, TEXT)
    assert doc.exact_until == len(TEXT)


def test_the_window_job_encodes_big_texts_with_a_child(cl100k, small_tail, monkeypatch):
    started: list[TailEncode | None] = []

    def recording(tokenizer, text, exact):
        started.append(start_tail(tokenizer, text, exact))
        return started[-1]

    monkeypatch.setattr("explorer.workers.jobs.start_tail", recording)
    result = run(encode_job(cl100k, None, TEXT, revision=1))
    assert flat(result.doc) == whole_tokens(cl100k, TEXT)
    assert len(started) == 1 and started[0] is not None and not started[0].running


def test_the_child_encodes_in_windows_exactly_as_one_encode(cl100k):
    """The tokens child encodes its part with the document encoder (bounded memory) and
    flattens it: the same arrays, irregular tokens (partial UTF-8) and unknown ids as one
    ``encode_compact``."""
    from references import require

    from explorer.workers.tail_encode import _encode_flat

    mistral = load_tokenizer(require("mistral-common", "tokenizer.model.v1"))
    minilm = load_tokenizer(require("minilm", "tokenizer.json"))
    text = TEXT[:60_000] + "\n\U0002a6a5\U0001f9d1\u200d\U0001f33e x\u0301 \x00\n" * 50
    seen_irregular = False
    for tok in (cl100k, mistral, minilm):
        one = tok.encode_compact(text)
        seen_irregular |= bool(one.irregular)
        assert _encode_flat(tok, text) == one
    assert seen_irregular  # (byte fallback, [UNK] runs)


def test_the_childs_flat_tokens_keep_regular_unknown_ids(tmp_path):
    """A BPE tokenizer.json whose ``[UNK]`` is its vocabulary entry: the unknown tokens are
    regular, named in ``unknown_ids`` (found only when a segment counts unknown tokens)."""
    import tokenizers
    from tokenizers import models, pre_tokenizers

    from explorer.workers.tail_encode import _encode_flat

    hf = tokenizers.Tokenizer(models.BPE({"[UNK]": 0, "a": 1, "b": 2, "ab": 3, "x": 4},
                                         [("a", "b")], unk_token="[UNK]"))
    hf.pre_tokenizer = pre_tokenizers.Whitespace()
    hf.save(str(tmp_path / "unk.json"))
    tok = load_tokenizer(tmp_path / "unk.json")
    text = "ab x zz ab\nq ab\n" * 2000
    one = tok.encode_compact(text)
    assert one.unknown_ids == {0}
    assert _encode_flat(tok, text) == one
    assert _encode_flat(tok, "ab x ab\n" * 2000).unknown_ids == frozenset()


def _prefetched(vocab, text):
    """The child :func:`prefetch_tail` started (and nothing else left from other tests)."""
    tail_encode.prefetch_tail(str(vocab), text)
    assert len(tail_encode._prefetched) == 1
    return tail_encode._prefetched[0]


def test_a_child_started_before_the_window_is_adopted_by_the_first_encode(cl100k, small_tail):
    early = _prefetched(resource_path("vocab", "cl100k_base.tiktoken"), TEXT)
    assert early.ready(120) and not early.words
    at = tail_encode.PREFETCH_AT
    assert at * len(TEXT) <= early.start < (at + 0.05) * len(TEXT)
    assert early.wait(120) is not None  # (all its tokens in before the encode looks)
    seen = []

    def recording(tokenizer, text, exact):
        seen.append(start_tail(tokenizer, text, exact))
        return seen[-1]

    doc = run(encode_document(cl100k, TEXT, chunk=2048, tail=recording))
    assert seen == [early] and early.taken_at is not None and not tail_encode._prefetched
    assert flat(doc) == whole_tokens(cl100k, TEXT)


def test_a_prefetched_unigram_child_solves_words_from_the_start(small_tail, monkeypatch):
    from references import require

    monkeypatch.setattr(tail_encode, "SHARE_STEP", 8192)
    path = require("sentencepiece", "botchan_en_unigram_1000.model")
    tok = load_tokenizer(path)  # (its own: the shares fill its word rows)
    early = _prefetched(path, TEXT)
    assert early.ready(120) and early.words and early.start == 0
    doc = run(encode_document(tok, TEXT, chunk=2048, tail=start_tail))
    assert early.shares >= 1 and not tail_encode._prefetched
    assert flat(doc) == whole_tokens(tok, TEXT)
    assert doc.exact_until == len(TEXT)


@pytest.mark.parametrize("change", ["vocabulary", "text"])
def test_a_prefetched_child_for_another_vocabulary_or_text_is_stopped(cl100k, small_tail,
                                                                      change):
    vocab = resource_path("vocab", "o200k_base.tiktoken" if change == "vocabulary"
                          else "cl100k_base.tiktoken")
    early = _prefetched(vocab, TEXT if change == "vocabulary" else TEXT.upper())
    assert early.ready(120)
    seen = []

    def recording(tokenizer, text, exact):
        seen.append(start_tail(tokenizer, text, exact))
        return seen[-1]

    doc = run(encode_document(cl100k, TEXT, chunk=2048, tail=recording))
    assert seen[0] is not early and not early.running and not tail_encode._prefetched
    assert flat(doc) == whole_tokens(cl100k, TEXT)


def test_short_texts_and_missing_vocabularies_start_nothing_that_lingers(cl100k, small_tail,
                                                                          tmp_path):
    tail_encode.prefetch_tail(str(resource_path("vocab", "cl100k_base.tiktoken")), "short")
    assert not tail_encode._prefetched
    early = _prefetched(tmp_path / "missing.tiktoken", TEXT)
    assert not early.ready(120) and early.failed  # (the child could not load it)
    doc = run(encode_document(cl100k, TEXT, chunk=2048, tail=start_tail))
    assert flat(doc) == whole_tokens(cl100k, TEXT) and not tail_encode._prefetched
    # the first encode is of a shorter text (edited before it ran): the child is stopped
    early = _prefetched(resource_path("vocab", "cl100k_base.tiktoken"), TEXT)
    short = TEXT[:900]  # (under PARALLEL_MIN here, in several windows)
    doc = run(encode_document(cl100k, short, chunk=256, tail=start_tail))
    assert not tail_encode._prefetched and not early.running
    assert flat(doc) == whole_tokens(cl100k, short)


def _numbered_words(share) -> set[int]:
    """The line numbers a share holds (TEXT's lines end with their number: this model's
    words run on over the line end, ``▁123\nThe``)."""
    import re

    found = (re.match(r"\u2581(\d+)\n", w) for w in share.words)
    return {int(m.group(1)) for m in found if m}


def test_a_child_solving_words_skips_what_the_thread_reaches_first(unigram):
    """The thread's place, reported on the work pipe after the work, moves the child on:
    its next batch starts at the line after that place, and what lies before is left to the
    thread (the child's own protocol, run here in-process: deterministic)."""
    import gc
    import multiprocessing
    import pickle
    import threading

    part = TEXT[5000:]
    place = part.index("\n", 40_000) + 1  # the child is told to go on from here

    class Work:  # the work pipe as the child reads it: the work, then the thread's place
        def __init__(self):
            self.places = [place - 10]  # (mid-line: the batch starts at the next line)

        def recv_bytes(self):
            return pickle.dumps((unigram, part, 8192))

        def poll(self):
            return bool(self.places)

        def recv(self):
            return self.places.pop(0)

        def close(self):
            pass

    answers_in, answers_out = multiprocessing.Pipe(duplex=False)
    helping = threading.Thread(target=tail_encode._help, args=(Work(), answers_out))
    helping.start()  # (its answers fill the pipe: read them as they come)
    shares = []
    try:
        while answers_in.poll(60):
            kind, value = answers_in.recv()
            if kind == "done":
                break
            assert kind == "share", value
            shares.append(value)
    finally:
        helping.join(60)
        gc.enable()  # (the child's protocol turns collections off for its short life)
    first = int(part[place:].split("\n", 1)[0].rsplit(" ", 1)[1])
    numbers = set().union(*map(_numbered_words, shares))
    assert numbers and min(numbers) == first  # from the line after the place on, nothing before
    assert max(numbers) == 1499  # and on to the end


def test_a_child_solves_on_while_the_parent_does_not_read(unigram):
    """The child's messages go out through a thread of their own: while the parent reads
    nothing (Qt holding the GIL as it lays a big text out), the child still solves every
    word; its messages then arrive in order (the child's protocol, run in-process)."""
    import gc
    import multiprocessing
    import pickle
    import threading

    part = TEXT * 4
    solved = threading.Event()
    real = type(unigram).cache_shares

    class Work:
        def recv_bytes(self):
            return pickle.dumps((unigram, part, 8192))

        def poll(self):
            return False

        def close(self):
            pass

    def shares(self, *args):
        yield from real(self, *args)
        solved.set()

    answers_in, answers_out = multiprocessing.Pipe(duplex=False)
    kinds = []
    try:
        type(unigram).cache_shares = shares  # (the child's own copy is the pickled one)
        helping = threading.Thread(target=tail_encode._help, args=(Work(), answers_out))
        helping.start()
        assert solved.wait(60), "the child stopped at a full pipe"
        while answers_in.poll(60):
            kind, _ = answers_in.recv()
            kinds.append(kind)
            if kind != "share":
                break
    finally:
        type(unigram).cache_shares = real
        helping.join(60)
        gc.enable()  # (the child's protocol turns collections off for its short life)
    assert kinds[-1] == "done" and len(kinds) > 8 and set(kinds[:-1]) == {"share"}


def test_the_thread_reports_its_place_to_its_child(unigram, monkeypatch):
    """:meth:`TailEncode.reached` sends the place in the child's part, once the work is
    written, every ``REPORT_STEP`` code points: plus the lead to a child solving words, as
    it is to a child encoding chunks back from the end (it stops where the thread is)."""
    monkeypatch.setattr(tail_encode, "AHEAD_LEAD", 100)
    monkeypatch.setattr(tail_encode, "REPORT_STEP", 1000)
    sent = []

    class Pipe:
        def send(self, value):
            sent.append(value)

    helper = TailEncode.__new__(TailEncode)
    helper.start, helper.words, helper._done, helper.failed = 5000, True, False, False
    helper._part = helper.start
    helper._reported, helper._work = 0, Pipe()
    helper._sent = tail_encode.threading.Event()
    helper.reached(7000)
    assert sent == []  # (the work is not written yet)
    helper._sent.set()
    for offset in (4000, 7000, 7500, 8100, 9200):
        helper.reached(offset)
    assert sent == [7000 - 5000 + 100, 8100 - 5000 + 100, 9200 - 5000 + 100]
    helper.words = False
    helper.start = 15_000  # (a chunk from there on is in: the part still starts at 5000)
    helper.reached(20_000)
    assert sent[3:] == [20_000 - 5000]


def test_a_unigram_child_for_one_long_line_starts_at_a_word(unigram, small_tail, monkeypatch):
    """A text of one line (minified JSON) has no line start two megabytes in: the child
    solving its words starts at a word start there (a space after another character: a
    SentencePiece word starts with its space) instead of not at all."""
    monkeypatch.setattr(tail_encode, "WORDS_AHEAD", 10_000)
    text = TEXT.replace("\n", " ")
    helper = start_tail(unigram, text, True)
    assert helper is not None
    try:
        assert 10_000 <= helper.start < 10_000 + 4096
        assert text[helper.start] == " " and text[helper.start - 1] != " "
    finally:
        helper.close()
