"""Texts with very long lines: soft cuts, chunked encodes, and documents of one long line."""

from __future__ import annotations

import numpy as np
import pytest
from doc_helpers import ChildStandIn, flat, run, run_with_partials, whole_tokens
from references import require
from test_tail_encode import LINES

from explorer.bundled import resource_path
from explorer.engine.compact import token_table, tokens_of
from explorer.engine.formats import load_tokenizer
from explorer.engine.soft_cuts import end_after, start_before
from explorer.workers import long_lines
from explorer.workers.doctokens import encode_document, update_document
from explorer.workers.long_lines import encode_joined, encode_long
from explorer.workers.tail_chunks import encode_backward

# one line of every script (no line breaks), with a "minified JSON" stretch without spaces
ONE_LINE = "".join(
    f'{{"id":{i},"text":"{LINES[i % len(LINES)]}","tags":["a{i}","b"]}},'
    + ("  " * (i % 4)) + LINES[(i * 7) % len(LINES)] + " "
    for i in range(900))
VOCABS = ["cl100k_base.tiktoken", "corpus_bpe_4k.json", "corpus_unigram_4k.model",
          "sentencepiece/botchan_en_bpe_1000.model", "minilm/tokenizer.json"]


@pytest.fixture(autouse=True)
def _small_long_texts(monkeypatch):
    """Texts past 10k characters count as long here (1M in the app)."""
    monkeypatch.setattr(long_lines, "LONG_TEXT", 10_000)
    monkeypatch.setattr(long_lines, "LONG_CHUNK", 8_000)


def _load(vocab: str):
    if "/" in vocab:
        return load_tokenizer(require(*vocab.split("/")))
    return load_tokenizer(resource_path("vocab", vocab))


def test_soft_cuts_are_line_ends_when_near_else_word_starts():
    text = "abc def\n" + "x" * 10 + " word" * 4000 + "\nend"
    assert start_before(text, 5) == 0 and end_after(text, 5) == 8  # the line's start, end
    far = 8 + 6000
    cut = start_before(text, far)
    assert far - 4096 < cut <= far and text[cut] == " " and text[cut + 1] == "w"
    cut = end_after(text, far)
    assert far <= cut < far + 4096 and text[cut] == " " and text[cut + 1] == "w"
    assert end_after(text, len(text) - 2) == len(text)
    solid = "y" * 20_000  # no line start, no space: the place itself
    assert start_before(solid, 10_000) == 10_000 and end_after(solid, 10_000) == 10_000
    assert start_before(solid, 0) == 0 and end_after(solid, 30_000) == len(solid)


def _soft(text: str, p: int) -> bool:
    return 0 < p < len(text) - 1 and text[p] == " " and not text[p - 1].isspace() \
        and not text[p + 1].isspace()


def test_soft_cuts_match_their_definition_on_random_texts():
    """start_before / end_after against their definition written plainly (the line start
    or end within reach, else the nearest soft cut within reach, else the place)."""
    import random

    rng = random.Random(5)
    for _ in range(200):
        text = "".join(rng.choice(["a", "ab cd", " ", "\n", "x" * rng.randint(1, 300),
                                   "w " * rng.randint(1, 50), "  \t"])
                       for _ in range(rng.randint(1, 30)))
        for at in rng.sample(range(len(text) + 1), min(30, len(text) + 1)):
            for reach in (1, 10, 100):
                line = text.rfind("\n", 0, at) + 1
                soft = [p for p in range(max(1, at - reach), at + 1) if _soft(text, p)]
                want = (0 if at <= 0 else line if at - line <= reach
                        else soft[-1] if soft else at)
                assert start_before(text, at, reach) == want, (text, at, reach)
                ends = [p for p in range(at, min(len(text), at + reach)) if _soft(text, p)]
                newline = text.find("\n", at, at + reach)
                want = (len(text) if at >= len(text) else newline + 1 if newline != -1
                        else len(text) if len(text) - at <= reach else ends[0] if ends
                        else at)
                assert end_after(text, at, reach) == want, (text, at, reach)


@pytest.mark.parametrize("vocab", VOCABS)
def test_a_long_line_in_chunks_is_one_whole_text_encode(vocab):
    """Chunks of a line joined by agreement (every tokenizer), or resumed at exact points
    (a SentencePiece Unigram model), are exactly one encode: ids, spans, resume points."""
    tok = _load(vocab)
    whole = tok.encode_compact_resumed(ONE_LINE, None)
    chunks = list(encode_backward(tok.encode_compact, ONE_LINE, chunk=8_000, seconds=None))
    assert len(chunks) > 10 and chunks[-1][0] == 0  # soft cuts inside the line, all joined
    assert "\n" not in ONE_LINE and all(ONE_LINE[c[0]] == " " for c in chunks[:-1])
    encoded = []
    real = tok.encode_compact_resumed

    def counted(text, resume):
        encoded.append(len(text))
        return real(text, resume)

    tok.encode_compact_resumed = counted  # (an instance attribute: this test's only)
    got = encode_long(tok, ONE_LINE, None)
    del tok.encode_compact_resumed
    if whole.resume is not None:  # resumed chunks, each about LONG_CHUNK long
        assert len(encoded) > 10 and max(encoded) < 12_000
    assert got.ids == whole.ids and got.starts == whole.starts and got.ends == whole.ends
    table = token_table(tok)
    assert got.irregular.keys() == whole.irregular.keys()
    assert tokens_of(got, table, ONE_LINE) == tokens_of(whole, table, ONE_LINE)
    assert (got.resume is None) == (whole.resume is None)
    if whole.resume is not None:
        assert got.resume.offsets == whole.resume.offsets
        assert got.resume.states == whole.resume.states


def test_resumed_chunks_start_from_the_state_they_are_given():
    """A long window resumed at a point of an earlier one (as the document's windows are)."""
    tok = _load("corpus_unigram_4k.model")
    head = tok.encode_compact_resumed(ONE_LINE, None)
    k = len(head.resume.offsets) // 3
    at, state = head.resume.offsets[k], head.resume.states[k]
    begin = start_before(ONE_LINE, at - 64)
    got = encode_long(tok, ONE_LINE[begin:], (at - begin, state))
    assert got.resume is not None
    n = np.searchsorted(np.frombuffer(head.starts, np.int32), at)
    m = np.searchsorted(np.frombuffer(got.starts, np.int32), at - begin)
    assert got.ids[m:] == head.ids[n:]
    assert list(got.starts[m:]) == [s - begin for s in head.starts[n:]]


def test_a_join_that_does_not_agree_falls_back_to_one_encode(monkeypatch):
    """A line without soft cuts or agreement (one pre-token of 60k characters) is encoded
    whole: the result is still the one encode."""
    tok = _load("cl100k_base.tiktoken")
    solid = "x" * 60_000 + " tail"
    calls = []
    real = tok.encode_compact

    def counted(text):
        calls.append(len(text))
        return real(text)

    assert encode_joined(counted, solid) == real(solid)
    assert calls[-1] == len(solid)


@pytest.mark.parametrize("vocab", ["cl100k_base.tiktoken", "corpus_unigram_4k.model"])
def test_a_document_of_one_long_line(vocab, monkeypatch):
    """A document that is one long line is encoded in bounded chunks (not one encode of it
    all, nor windows doubled from its start), and is one whole-text encode; a keystroke in
    its middle gives the whole-text encode of the new text."""
    tok = _load(vocab)
    longest = []
    real = tok.encode_compact_resumed
    real_compact = tok.encode_compact

    def counted(text, resume):
        longest.append(len(text))
        return real(text, resume)

    def counted_compact(text):
        longest.append(len(text))
        return real_compact(text)

    monkeypatch.setattr(tok, "encode_compact_resumed", counted)
    monkeypatch.setattr(tok, "encode_compact", counted_compact)
    doc = run(encode_document(tok, ONE_LINE))
    assert max(longest) < 20_000 and sum(longest) < 2 * len(ONE_LINE)
    assert flat(doc) == [(t.id, t.start, t.end) for t in tok.encode(ONE_LINE).tokens]
    mid = len(ONE_LINE) // 2
    text = ONE_LINE[:mid] + " inserted words" + ONE_LINE[mid:]
    new, _ = update_document(doc, text)
    assert flat(new) == [(t.id, t.start, t.end) for t in tok.encode(text).tokens]


@pytest.mark.parametrize("vocab", ["cl100k_base.tiktoken", "corpus_bpe_4k.json",
                                   "minilm/tokenizer.json"])
def test_keystrokes_inside_a_long_line_re_encode_a_window(vocab, monkeypatch):
    """Typing, deleting and a newline inside a line of 100k characters re-encode a few kB
    around the edit (not the line), and each result is the whole-text encode."""
    from explorer.workers import doctokens

    tok = _load(vocab)
    head = "".join(f"line {i} before it\n" for i in range(300))  # (the long line's segment
    line = head + ONE_LINE + ONE_LINE[:20_000] + "\nafter\n"  # starts well into the text)
    doc = run(encode_document(tok, line))
    assert len(doc.segments) > 3
    encoded = []
    real = tok.encode_compact

    def counted(text):
        encoded.append(len(text))
        return real(text)

    monkeypatch.setattr(tok, "encode_compact", counted)
    inside = []
    real_inside = doctokens.update_inside

    def recorded(*args, **kwargs):
        result = real_inside(*args, **kwargs)
        inside.append(result is not None)
        return result

    monkeypatch.setattr(doctokens, "update_inside", recorded)
    text = line
    edits = [(30_000, 0, "x"), (30_001, 0, " and more words"), (50_000, 3, ""),
             (70_000, 0, "\n"), (40_000, 5, "😀é"), (20_500, 0, "{")]
    for at, cut, typed in ((len(head) + at, cut, typed) for at, cut, typed in edits):
        text = text[:at] + typed + text[at + cut:]
        doc, change = update_document(doc, text)
        assert flat(doc) == [(t.id, t.start, t.end) for t in tok.encode(text).tokens], at
        assert change.lines is not None and change.lines[1] - change.lines[0] <= 2
    assert all(inside) and len(inside) == 6 and max(encoded) < 20_000


@pytest.mark.parametrize("vocab", ["cl100k_base.tiktoken", "minilm/tokenizer.json"])
@pytest.mark.parametrize("spaced", [True, False], ids=["words", "no-spaces"])
def test_random_edits_in_a_long_line_equal_whole_encodes(vocab, spaced):
    """Random inserts and deletions anywhere in a 100k-character line (with words, or
    minified JSON without a space: no soft cut, the segment update decides), each document
    equal to the whole-text encode of its text."""
    import random

    rng = random.Random(7)
    tok = _load(vocab)
    if spaced:
        line = "".join(rng.choice(LINES[:3]) + " " for _ in range(2500))
    else:
        line = "".join(rng.choice(['{"id":', "12345", '"name":"abc",', "}", ",", "😀", "ﬁ"])
                       for _ in range(14_000))
    text = "".join(f"line {i}\n" for i in range(50)) + line + "\ntail line\n"
    doc = run(encode_document(tok, text))
    for _ in range(15):
        at, cut = rng.randint(0, len(text)), rng.choice([0, 0, 1, 3, 40])
        typed = rng.choice(["", "x", " ", "ab cd", "\n", "😀", "e\u0301", '"', "[UNK]"])
        if not typed and not cut:
            continue
        text = text[:at] + typed + text[at + cut:]
        doc, _ = update_document(doc, text)
        assert flat(doc) == [(t.id, t.start, t.end) for t in tok.encode(text).tokens], at


@pytest.mark.parametrize("line_chars", [20_000, 60_000])
def test_a_document_of_long_lines_is_encoded_about_once(line_chars, monkeypatch):
    """Lines of tens of thousands of characters (minified JSON in a few hundred lines): each
    window was a few lines, re-encoded its last two, started a line early, and grew by
    doubling from a size that ended at the same line end: every line was encoded three or
    four times (a 9 MB text in 200 lines took 10.9 s with cl100k, in one line 1.9 s). The
    windows now add up to less than twice the text, and give one whole-text encode."""
    from explorer.workers import doctokens

    tok = _load("cl100k_base.tiktoken")
    stream = ONE_LINE * 8
    lines, pos = [], 0
    while pos < len(stream) and len(lines) < 14:
        cut = stream.find(",", pos + line_chars) + 1 or len(stream)
        lines.append(stream[pos:cut])
        pos = cut
    text = "\n".join(lines) + "\n"
    sizes: list[int] = []
    real = doctokens._encode_window
    monkeypatch.setattr(doctokens, "_encode_window",
                        lambda *args: sizes.append(len(args[1])) or real(*args))
    doc = run(encode_document(tok, text, chunk=8_192))
    assert flat(doc) == whole_tokens(tok, text)
    assert len(sizes) > 2 and sum(sizes) < 2 * len(text), (sizes, len(text))


def test_keystrokes_in_lines_of_tens_of_thousands_stay_incremental(monkeypatch):
    """Lines of ~20k and ~40k characters (minified JSON in a few hundred lines): a keystroke
    well inside a line re-encodes a window around it (lines from 16k on are updated inside),
    and one near a line's edge re-encodes the lines around it on the worker, however many
    characters that is (up to a quarter of the text): before, five lines of 47k passed the
    worker's window and every keystroke encoded the whole text again."""
    from explorer.workers import doctokens
    from explorer.workers.jobs import INCREMENTAL_MAX_WINDOW, encode_job, incremental_window

    monkeypatch.setattr(long_lines, "LONG_TEXT", 1_000_000)  # (the app's: windows whole)
    tok = _load("cl100k_base.tiktoken")
    stream = ONE_LINE * 40
    lines, pos = [], 0
    while len(lines) < 30:
        step = 20_000 if len(lines) % 2 else 40_000
        cut = stream.find(",", pos + step) + 1
        lines.append(stream[pos:cut])
        pos = cut
    text = "\n".join(lines) + "\n"
    assert len(text) > 4 * 5 * 40_000
    doc = run(encode_document(tok, text))
    inside = []
    real_inside = doctokens.update_inside
    monkeypatch.setattr(doctokens, "update_inside", lambda *args, **kwargs: inside.append(
        (result := real_inside(*args, **kwargs)) is not None) or result)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)
    for at in (starts[3] + 10_000, starts[4] + 30, starts[10] - 50, starts[14] + 20_000):
        text = text[:at] + "x" + text[at:]
        result = run(encode_job(tok, doc, text, 1))
        assert result.change is not None, at  # incremental, not a first encode
        doc = result.doc
        assert flat(doc) == whole_tokens(tok, text), at
    assert inside == [True, False, False, True]
    assert incremental_window(100) == INCREMENTAL_MAX_WINDOW


@pytest.mark.parametrize("vocab", ["cl100k_base.tiktoken", "corpus_unigram_4k.model"])
def test_a_one_line_document_takes_its_childs_words_as_it_goes(vocab, monkeypatch):
    """A line of megabytes with a Unigram model (exact resume points) is a window that ends
    at a word start in it and grows on exactly, as a window with no safe cut does: its
    child solving words ahead is started (not after a first window that never ends), told
    where the thread is and asked for the words it has solved at each step; the result is
    the whole-text encode. Other tokenizers encode it as one window in chunks joined by
    agreement, and start no child for it (no line start to take over at)."""
    from explorer.workers import doctokens

    monkeypatch.setattr(doctokens, "EXACT_GROWTH", 8_192)  # (the app's: 512k)
    tok = _load(vocab)
    helper = ChildStandIn()
    started = []

    def tail(tokenizer, text, exact):
        started.append(exact)
        return helper

    doc = run(encode_document(tok, ONE_LINE, tail=tail))
    assert flat(doc) == [(t.id, t.start, t.end) for t in tok.encode(ONE_LINE).tokens]
    if vocab.endswith(".model"):
        assert started == [True]
        # (asked at each step, and once when started: what it had solved already)
        assert len(helper.places) >= 4 and helper.asked == len(helper.places) + 1
        assert helper.places == sorted(helper.places)
        assert helper.places[-1] > len(ONE_LINE) // 2
    else:
        assert started == [] and helper.places == []


@pytest.mark.parametrize("line_max", [1_000_000, 1_000])
def test_a_one_line_documents_start_is_shown_unless_its_line_is_too_long(line_max,
                                                                          monkeypatch):
    """A growing first window yields the text's start as a partial result, cut inside the
    line; not when that line is longer than ``PARTIAL_LINE_MAX`` (Qt would lay it all out
    for the partial, then again for the result: a 9 MB line, ~3 s more)."""
    from explorer.workers import doctokens

    monkeypatch.setattr(doctokens, "PARTIAL_LINE_MAX", line_max)
    tok = _load("corpus_unigram_4k.model")
    doc, partials = run_with_partials(encode_document(tok, ONE_LINE))
    assert flat(doc) == [(t.id, t.start, t.end) for t in tok.encode(ONE_LINE).tokens]
    if line_max > len(ONE_LINE):
        [partial] = partials
        assert 0 < partial.cp_starts[-1] < len(ONE_LINE) // 2
    else:
        assert partials == []

