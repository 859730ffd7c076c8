"""A SentencePiece Unigram document encoded window by window is exactly one whole-text encode.

sentencepiece runs one Viterbi over the whole text, summing piece scores in float32, so a near
tie can be decided by everything before it. Each window of the document encode starts from
the exact running score of the window before (``encode_compact_resumed``), so no window is
redone and no whole-text encode is needed; ids equal sentencepiece's, offsets our own
whole-text encode's (itself checked against sentencepiece's in tests/engine).
"""

from __future__ import annotations

from itertools import pairwise

import pytest
import sentencepiece as spm
from doc_helpers import ChildStandIn, answers, encoded_lengths, run_with_partials
from doc_helpers import flat as _flat
from doc_helpers import run as _run
from hypothesis import given, settings
from hypothesis import strategies as st

from explorer.engine.formats import load_tokenizer
from explorer.engine.formats.sentencepiece_model import save_sentencepiece_model
from explorer.engine.sentencepiece.pieces import PieceType
from explorer.engine.unigram.model import UnigramModel
from explorer.workers import docstore, doctokens
from explorer.workers.doctokens import encode_document

# "ab" ties "a" + "b" exactly from score 0; at some prefix scores float32 rounding makes the
# two-piece path strictly better (tests/engine/test_unigram_batch.py found them by search).
TIES = {"\u2581": -3.0999999046325684, "a": -0.7733107805252075, "b": -1.5899378061294556,
        "ab": -2.363248586654663, "x": -2.369999885559082, "y": -1.1299999952316284}


def _whole(tok, text):
    toks = tok.encode_compact(text)
    return list(zip(toks.ids, toks.starts, toks.ends, strict=True))


class _Counting:
    """Records the document encoder's windows: start offset and whether it resumed."""

    def __init__(self, tok, monkeypatch) -> None:
        self.starts: list[int] = []
        self.resumed: list[bool] = []
        self.plain = 0
        window, resumed, plain = doctokens._encode_window, tok.encode_compact_resumed, \
            tok.encode_compact

        def counted_window(tokenizer, text, pos, lead, points):
            self.starts.append(pos)
            return window(tokenizer, text, pos, lead, points)

        def counted_resumed(text, resume):
            self.resumed.append(resume is not None)
            return resumed(text, resume)

        def counted_plain(text):
            self.plain += 1
            return plain(text)

        monkeypatch.setattr(doctokens, "_encode_window", counted_window)
        monkeypatch.setattr(tok, "encode_compact_resumed", counted_resumed)
        monkeypatch.setattr(tok, "encode_compact", counted_plain)

    def check_exact_by_construction(self) -> None:
        """Every window after the first started from the exact score of the one before; no
        window was redone from an earlier start and the encode never started over."""
        assert self.plain == 0
        assert self.resumed[0] is False and all(self.resumed[1:])
        assert self.starts == sorted(self.starts) and self.starts.count(0) == 1


@pytest.fixture(scope="module")
def ties(tmp_path_factory):
    pieces = ["<unk>", *TIES]
    types = [PieceType.UNKNOWN] + [PieceType.NORMAL] * len(TIES)
    model = UnigramModel(pieces, [0.0, *TIES.values()], types)
    path = save_sentencepiece_model(model, tmp_path_factory.mktemp("ties") / "ties.model")
    return load_tokenizer(path), spm.SentencePieceProcessor(model_file=str(path))


def test_near_ties_decided_by_the_running_score_come_out_as_one_whole_text_encode(
        ties, monkeypatch):
    tok, sp = ties
    lines = [" ".join(["x"] * (k % 37) + ["y"] * (k % 11) + ["ab"] * 3) for k in range(1, 700)]
    text = "\n".join(lines)
    expected = sp.encode(text)
    a, ab = (tok.model.pieces.index(p) for p in ("a", "ab"))
    assert expected.count(ab) > 100 and expected.count(a) > 10  # both outcomes occur
    # ... and where the text starts matters: some line alone comes out differently
    assert sum(sp.encode(line).count(a) for line in lines) != expected.count(a)
    calls = _Counting(tok, monkeypatch)
    doc = _run(encode_document(tok, text, chunk=2048))
    calls.check_exact_by_construction()
    assert len(doc.segments) > 20
    assert doc.ids().tolist() == expected
    assert _flat(doc) == _whole(tok, text)


def test_a_window_with_no_safe_cut_goes_on_from_its_last_exact_point(ties, monkeypatch):
    """No safe cut in a window (every line starts with "z", which no piece holds: one
    ``<unk>`` covers the line end and it): the window grows, and the longer one re-encodes
    only what follows its last exact resume point (not the whole window again); the result
    is still sentencepiece's one encode, with near ties decided by the running score."""
    tok, sp = ties
    lines = ["z" + " ".join((["x"] * (k % 37) + ["y"] * (k % 11) + ["ab"] * 3) * 8)
             for k in range(1, 80)]
    text = "\n".join(lines)
    grown = answers(monkeypatch, doctokens, "_grown")
    doc = _run(encode_document(tok, text, chunk=512))
    assert sum(grown) >= 5 and all(grown)
    assert doc.ids().tolist() == sp.encode(text)
    assert _flat(doc) == _whole(tok, text)


def test_each_window_goes_on_from_the_last_ones_tokens(ties, monkeypatch):
    """A window after the first starts where the last one's kept segments end, with its
    tokens up to their last exact point: only the last lines before a window end are
    encoded twice (not the last segment again, nor one before it as context)."""
    tok, sp = ties
    lines = [" ".join(["x"] * (k % 7) + ["y"] * (k % 5) + ["ab"] * 2) for k in range(1, 3000)]
    text = "\n".join(lines)
    encoded = encoded_lengths(tok, monkeypatch)
    doc = _run(encode_document(tok, text, chunk=512))
    assert len(encoded) > 20
    assert sum(encoded) < 1.1 * len(text)
    assert doc.ids().tolist() == sp.encode(text)
    assert _flat(doc) == _whole(tok, text)
    assert doc.exact_until == len(text)


@pytest.mark.parametrize("fails_at", [0, 1, 4])
def test_a_continuation_that_fails_falls_back_to_the_agreement_rule(ties, monkeypatch,
                                                                       fails_at):
    """When a window cannot go on exactly from the last one's tokens (its resume point not
    found), the windows from there on start a segment early and must reproduce the one
    after it, as for tokenizers without exact points; the result is still sentencepiece's."""
    tok, sp = ties
    lines = [" ".join(["x"] * (k % 37) + ["y"] * (k % 11) + ["ab"] * 3) for k in range(1, 700)]
    text = "\n".join(lines)
    calls: list[int] = []
    real = doctokens._continued

    def failing(*args):
        calls.append(len(calls))
        return None if len(calls) - 1 == fails_at else real(*args)

    monkeypatch.setattr(doctokens, "_continued", failing)
    agreed: list[bool] = []
    real_agrees = doctokens.agrees
    monkeypatch.setattr(doctokens, "agrees",
                        lambda *a: agreed.append(real_agrees(*a)) or agreed[-1])
    doc = _run(encode_document(tok, text, chunk=512))
    assert len(calls) == fails_at + 1  # (no continuation after the failure)
    assert len(agreed) > 5 and all(agreed)
    assert doc.ids().tolist() == sp.encode(text)
    assert _flat(doc) == _whole(tok, text)


@settings(max_examples=25, deadline=None)
@given(words=st.lists(st.sampled_from(["x", "y", "ab", "a", "b", "xab", "\n", "\n\n", "  "]),
                      min_size=1, max_size=3000),
       chunk=st.sampled_from([16, 200, 1000]))
def test_random_documents_equal_sentencepiece(ties, words, chunk):
    tok, sp = ties
    text = " ".join(words)
    doc = _run(encode_document(tok, text, chunk=chunk))
    assert doc.ids().tolist() == sp.encode(text)
    assert _flat(doc) == _whole(tok, text)


def test_botchan_and_udhr_document_equals_sentencepiece_without_redoing_a_window(monkeypatch):
    """The 0.5 MB English + multilingual document of test_doctokens, on a real model."""
    from references import require

    from explorer.bundled import resource_path

    path = require("sentencepiece", "botchan_en_unigram_1000.model")
    tok = load_tokenizer(path)
    text = (resource_path("corpus", "botchan.txt").read_text(encoding="utf-8")
            + resource_path("corpus", "udhr_sample.txt").read_text(encoding="utf-8"))
    calls = _Counting(tok, monkeypatch)
    doc = _run(encode_document(tok, text, chunk=4096))
    calls.check_exact_by_construction()
    assert len(doc.segments) > 100
    assert doc.ids().tolist() == spm.SentencePieceProcessor(model_file=str(path)).encode(text)
    assert _flat(doc) == _whole(tok, text)


@settings(max_examples=30, deadline=None)
@given(words=st.lists(st.sampled_from(["x", "y", "ab", "a", "b", "xab", "\n", "\n\n", "  "]),
                      min_size=1, max_size=1500),
       edits=st.lists(st.tuples(st.floats(0, 1), st.integers(0, 3),
                                st.sampled_from(["", "a", "b", "x", "ab", "\n", " ", "y y\n"])),
                      min_size=1, max_size=6))
def test_edits_equal_sentencepiece_of_the_edited_text(ties, words, edits):
    """After random edits the document is sentencepiece's one encode of the edited text:
    each update starts from the exact running score before the edit and re-encodes until
    the score after it is the old one again (a near tie after the edit is decided by it;
    starting from the exact score but keeping the old tokens after an agreeing window gave
    11 of 40 random documents wrong, starting from score 0 all 40)."""
    tok, sp = ties
    text = " ".join(words)
    doc = _run(encode_document(tok, text, chunk=200))
    for where, cut, insert in edits:
        at = int(where * len(text))
        text = text[:at] + insert + text[at + cut:]
        updated = doctokens.update_document(doc, text)
        assert updated is not None
        doc = _settled(updated[0])
        assert doc.ids().tolist() == sp.encode(text)
        assert _flat(doc) == _whole(tok, text)
        assert doc.exact_until == len(text)


def _settled(doc):
    """``doc`` after :func:`settle_document` steps until it is exact (at most 100)."""
    for _ in range(100):
        step = doctokens.settle_document(doc)
        if step is None:
            return doc
        doc = step[0]
    raise AssertionError("settle_document did not finish")


def test_edits_that_move_the_running_score_redecide_near_ties_after_them(ties):
    """Near ties all over the document: an edit changes the score every later tie sees, so
    re-encoding only around the edit (and checking that its ends agree) is not enough."""
    import random

    tok, sp = ties
    text = "\n".join(" ".join(["x"] * (k % 37) + ["y"] * (k % 11) + ["ab"] * 3)
                     for k in range(1, 300))
    doc = _run(encode_document(tok, text, chunk=2048))
    rng = random.Random(1)
    for _ in range(40):
        at = rng.randrange(len(text))
        text = text[:at] + rng.choice(["x", "y ", "ab ", ""]) + text[at + rng.randrange(2):]
        updated = doctokens.update_document(doc, text)
        assert updated is not None
        doc = updated[0]
        assert doc.ids().tolist() == sp.encode(text)
        doc = _settled(doc)  # what the window does once typing pauses
        assert doc.exact_until == len(text)  # exact by construction, not only by luck
        assert doc.ids().tolist() == sp.encode(text)
    assert _flat(doc) == _whole(tok, text)


def test_exact_tokens_keep_longer_segments_and_keystrokes_stay_whole_encodes():
    """A tokenizer with exact resume points (the bundled Unigram model) cuts its first
    encode's segments ``EXACT_SEGMENT_FACTOR`` times the document's least length (fewer
    objects to make); a byte-level BPE keeps the short ones. Keystrokes in the long
    segments still give the whole-text encode."""
    from explorer.bundled import resource_path
    from explorer.workers import docstore
    from explorer.workers.doctokens import EXACT_SEGMENT_FACTOR, update_document

    text = "".join(f"line {k}: {'some words _= here ' * (k % 5)}\n" for k in range(4000))
    least = docstore.SEGMENT_CHARS * EXACT_SEGMENT_FACTOR
    unigram = load_tokenizer(resource_path("vocab", "corpus_unigram_4k.model"))
    doc = _run(encode_document(unigram, text))
    windows = len(text) // doctokens.CHUNK_CHARS + 1  # (a window's last may be shorter)
    assert sum(len(s.text) < least for s in doc.segments) <= windows
    assert len(doc.segments) > len(text) // (2 * least)
    bpe = load_tokenizer(resource_path("vocab", "cl100k_base.tiktoken"))
    short = _run(encode_document(bpe, text))
    assert sum(len(s.text) < least for s in short.segments) > len(short.segments) // 2
    for at, typed in ((5000, "x"), (20000, " new words\n"), (len(text) // 2, "é😀")):
        text = text[:at] + typed + text[at:]
        doc, _ = update_document(doc, text)
        assert _flat(doc) == _whole(unigram, text)


def test_a_window_that_keeps_growing_grows_in_steps_with_the_childs_words(ties, monkeypatch):
    """A text whose tokens cross every line start (minified JSON with a Unigram model) is
    one window that grows to the end: its child solving words ahead is started when it
    first grows (not after a first window that never comes), told where the thread is and
    asked for its words at every step; the steps are at most ``EXACT_GROWTH`` (plus the
    line they end in), and the line starts before a step's exact point are not looked
    through again. Still sentencepiece's one encode."""
    tok, sp = ties
    lines = ["z" + " ".join((["x"] * (k % 37) + ["y"] * (k % 11) + ["ab"] * 3) * 2)
             for k in range(1, 400)]
    text = "\n".join(lines)
    monkeypatch.setattr(doctokens, "EXACT_GROWTH", 2000)
    helper = ChildStandIn()
    started = []

    def tail(tokenizer, text, exact):
        started.append(exact)
        return helper

    windows = []
    real_grown = doctokens._grown

    def grown(tokenizer, window, *rest):
        windows.append(len(window))
        return real_grown(tokenizer, window, *rest)

    monkeypatch.setattr(doctokens, "_grown", grown)
    scanned = []
    real_lines = docstore._line_starts

    def line_starts(text, begin, stop):
        scanned.append(stop - begin)
        return real_lines(text, begin, stop)

    monkeypatch.setattr(docstore, "_line_starts", line_starts)
    doc, partials = run_with_partials(encode_document(tok, text, chunk=512, tail=tail))
    # the start of the text is shown as soon as the window first grows: one segment cut at
    # an exact point inside a line, its tokens the whole encode's
    [partial] = partials
    [head] = partial.segments
    end = len(head.text)
    assert 0 < end < windows[0] and text[end - 1] != "\n"
    n = len(head.ids)
    assert _flat(doc)[:n] == list(zip(head.ids, head.starts, head.ends, strict=True))
    assert doc.segments[0].starts[:1] == head.starts[:1] and _flat(doc)[n][1] == end
    assert started == [True]
    assert len(windows) > 20
    longest = max(map(len, lines)) + 1
    assert all(b - a <= 2000 + longest for a, b in pairwise(windows))
    # (every step but the last, which reaches the text's end)
    # (asked at each step, and once when started: what it had solved already)
    assert len(helper.places) == len(windows) - 1 and helper.asked == len(helper.places) + 1
    assert helper.places == sorted(helper.places) and helper.places[-1] > len(text) // 2
    assert sum(scanned) < 3 * len(text)
    assert doc.ids().tolist() == sp.encode(text)
    assert _flat(doc) == _whole(tok, text)


def test_a_word_solving_childs_words_are_taken_before_the_next_window(ties, monkeypatch):
    """A child solving words (prefetched before the window, it may have solved the whole
    text already) is asked for its words as soon as it is started, after the first window:
    the second window then finds them solved instead of solving them itself."""
    tok, sp = ties
    text = "".join(f"line {k} " + " ".join(["x", "y", "ab", "abc"][k % 4] * (k % 5 + 1)
                                          for _ in range(6)) + "\n" for k in range(3000))
    encodes = encoded_lengths(tok, monkeypatch)
    asked_after: list[int] = []

    class Child(ChildStandIn):
        def covered_from(self) -> None:
            asked_after.append(len(encodes))
            super().covered_from()

    helper = Child()
    doc = _run(encode_document(tok, text, chunk=4096, tail=lambda *_: helper))
    assert len(encodes) > 3 and asked_after[0] == 1  # (only the first window before it)
    assert doc.ids().tolist() == sp.encode(text)
