"""Keystrokes in a SentencePiece Unigram document re-encode only the words around the edit.

:func:`explorer.workers.word_update.update_words` splices a small window (from the exact
state at the last word start before the edit to a word start after it where the tokens meet
the old ones) into long segments; :func:`explorer.workers.doctokens.settle_document` then
makes the rest exact again. Checked against sentencepiece's encode of the edited text (ids)
and our whole-text encode (offsets), on a real model and real multilingual text.
"""

from __future__ import annotations

import random

import pytest
import sentencepiece as spm
from doc_helpers import answers
from doc_helpers import flat as _flat
from doc_helpers import run as _run
from doc_helpers import whole_tokens as _whole

from explorer.bundled import resource_path
from explorer.engine.formats import load_tokenizer
from explorer.workers import doctokens, word_update
from explorer.workers.docstore import changed_lines_between, common_prefix, common_suffix
from explorer.workers.doctokens import encode_document, settle_document, update_document


@pytest.fixture(scope="module")
def model():
    from references import require

    path = require("sentencepiece", "botchan_en_unigram_1000.model")
    return load_tokenizer(path), spm.SentencePieceProcessor(model_file=str(path))


@pytest.fixture(scope="module")
def document():
    botchan = resource_path("corpus", "botchan.txt").read_text(encoding="utf-8")
    udhr = resource_path("corpus", "udhr_sample.txt").read_text(encoding="utf-8")
    return botchan[:30_000] + udhr[:30_000]


def _consistent(doc) -> None:
    """Segments cover the text exactly, in order, each token inside its segment."""
    assert "".join(seg.text for seg in doc.segments) == doc.text
    for k, seg in enumerate(doc.segments):
        local = [(s - seg.origin, e - seg.origin) for s, e in zip(seg.starts, seg.ends,
                                                                  strict=True)]
        assert all(0 <= s <= e <= len(seg.text) for s, e in local), k
        assert doc.cp_starts[k + 1] - doc.cp_starts[k] == len(seg.text)


EDITS = ["a", "e ", " ", "", "\n", "x\ny", "ü", "日本", "  ", "the "]


def test_random_keystrokes_take_the_word_path_and_equal_sentencepiece(model, document,
                                                                     monkeypatch):
    tok, sp = model
    taken = answers(monkeypatch, doctokens, "update_words")
    text = document
    doc = _run(encode_document(tok, text, chunk=4096))
    longest = max(len(seg.text) for seg in doc.segments)
    assert longest > 300  # segments of many lines: the word path re-encodes less
    rng = random.Random(7)
    for _ in range(60):
        at = rng.randrange(len(text) + 1)
        cut = rng.choice([0, 0, 1, 2, 5])
        text = text[:at] + rng.choice(EDITS) + text[at + cut:]
        base = doc
        updated = update_document(doc, text)
        assert updated is not None
        doc, change = updated
        assert doc.text == text
        assert doc.ids().tolist() == sp.encode(text)
        _consistent(doc)
        if change.lines is not None:
            assert change.lines[0] <= text.count("\n", 0, at) < change.lines[1]
        if taken[-1]:  # (the word path's lines, from its own arrays: as from the segments)
            lo = change.first_segment
            p = common_prefix(base.text, text)
            edit = (p, len(text) - common_suffix(base.text, text,
                                                 min(len(text), len(base.text)) - p))
            assert change.lines == changed_lines_between(
                base, doc, lo, lo + change.old_segments, change.new_segments, edit)
    assert _flat(doc) == _whole(tok, text)
    assert sum(taken) >= 50, taken  # (an edit near a long run without word starts falls back)


def test_edits_at_the_ends_and_across_lines(model, document):
    tok, sp = model
    text = document[:5000]
    doc = _run(encode_document(tok, text, chunk=1024))
    for at, cut, insert in [(0, 0, "Hello "), (0, 3, ""), (len(text), 0, " end"),
                            (2500, 400, "\n\n"), (100, 0, "one\ntwo\nthree "),
                            (1, 2000, "")]:
        at = min(at, len(text))
        text = text[:at] + insert + text[at + cut:]
        doc = update_document(doc, text)[0]
        assert doc.ids().tolist() == sp.encode(text)
        assert _flat(doc) == _whole(tok, text)
        _consistent(doc)


def test_settle_steps_make_the_document_exact_again(model, document):
    tok, sp = model
    text = document
    doc = _run(encode_document(tok, text, chunk=4096))
    assert doc.exact_until == len(text)
    rng = random.Random(3)
    for _ in range(10):
        at = rng.randrange(len(text))
        text = text[:at] + "w" + text[at:]
        doc = update_document(doc, text)[0]
    assert doc.exact_until < len(text)  # keystrokes are exact up to their windows only
    steps = 0
    windows: list[int] = []
    encode = tok.encode_compact_resumed

    def recording(window, resume):
        windows.append(len(window))
        return encode(window, resume)

    tok.encode_compact_resumed = recording
    try:
        while (step := settle_document(doc)) is not None:
            new, change = step
            assert new.exact_until > doc.exact_until
            assert new.ids().tolist() == sp.encode(text)
            if change is None:  # no token changed: the same tokens
                assert new.ids() == doc.ids()
            doc, steps = new, steps + 1
            _consistent(doc)
    finally:
        del tok.encode_compact_resumed
    assert doc.exact_until == len(text)
    assert 1 <= steps <= len(text) // doctokens.SETTLE_WORD_CHARS + 2
    # each step re-encodes a few kB of words, not whole (long) segments
    assert max(windows) <= word_update.MAX_WORD_WINDOW
    assert _flat(doc) == _whole(tok, text)


def test_settle_steps_in_a_segment_of_megabytes_are_longer(monkeypatch):
    """In a segment longer than ``LONG_SEGMENT`` (one line that no token boundary cuts:
    minified JSON with a Unigram model) a settle step re-decides ``SETTLE_LONG_CHARS``,
    not a few kB: its splice costs the segment's size whatever it re-decides. Still
    sentencepiece's encode at the end, in fewer steps."""
    from references import require

    path = require("sentencepiece", "botchan_en_unigram_1000.model")
    tok, sp = load_tokenizer(path), spm.SentencePieceProcessor(model_file=str(path))
    line = "".join(f'{{"id":{k},"name":"word{k % 97} and more","x":[{k},"y"]}},'
                   for k in range(1500))
    text = "first line\n" + line
    doc = _run(encode_document(tok, text, chunk=4096))
    assert len(doc.segments[doc.segment_of_offset(20_000)].text) > 40_000
    text = text[:100] + "w" + text[100:]
    edited = update_document(doc, text)[0]
    assert edited.exact_until < len(text)

    def settle(long_segment: int) -> int:
        monkeypatch.setattr(doctokens, "LONG_SEGMENT", long_segment)
        monkeypatch.setattr(doctokens, "SETTLE_LONG_CHARS", 16_384)
        d, steps = edited, 0
        while (step := settle_document(d)) is not None:
            d, steps = step[0], steps + 1
        assert d.exact_until == len(text) and d.ids().tolist() == sp.encode(text)
        return steps

    short_steps = settle(10**9)  # (every segment short: 4k a step)
    long_steps = settle(40_000)
    assert long_steps * 3 < short_steps
