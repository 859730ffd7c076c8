"""The incremental document encoding equals a full encode after any edit."""

from __future__ import annotations

import gc
from bisect import bisect_right
from itertools import pairwise

import pytest
from doc_helpers import flat as _flat
from doc_helpers import full as _full_tokens
from doc_helpers import run as _full
from doc_helpers import whole_tokens as _expected
from doubles import DummyPrefixDouble, TiktokenDouble
from hypothesis import given, settings
from hypothesis import strategies as st

from explorer.workers import docstore, doctokens
from explorer.workers.doctokens import encode_document, update_document

TIK = TiktokenDouble()
DUMMY = DummyPrefixDouble()
BASE = ("def f(x):\n    return x + 1\n\n\n\nclass A:\n  pass  \n"
        "héllo wörld 😀👍🏽 𠀋𠀌 e\u0301\n\n 日本語のテキスト\n") * 3
ALPHABET = st.sampled_from([*list("ab \n\t😀é́日\r.,"), "\n\n", "  "])


@pytest.fixture(autouse=True, params=[1, docstore.SEGMENT_CHARS], ids=["line", "default"])
def segment_chars(request, monkeypatch):
    """Every test twice: with a segment per line (these texts are short: many windows,
    segments and cuts) and with the app's minimum segment size."""
    monkeypatch.setattr(docstore, "SEGMENT_CHARS", request.param)
    return request.param


@pytest.fixture
def line_segments(monkeypatch):
    """A segment per line whatever ``segment_chars`` says (tests of windows that need a
    text this short cut into several)."""
    monkeypatch.setattr(docstore, "SEGMENT_CHARS", 1)


@pytest.mark.parametrize("tok", [TIK, DUMMY], ids=["tiktoken", "context-sensitive"])
@pytest.mark.parametrize("chunk", [8, 64, 100_000])
def test_chunked_first_encode_equals_full(tok, chunk):
    doc = _full(encode_document(tok, BASE, chunk=chunk))
    assert _flat(doc) == _expected(tok, BASE)
    assert doc.text == BASE
    assert "".join(s.text for s in doc.segments) == BASE


@settings(max_examples=60, deadline=None)
@given(st.data())
@pytest.mark.parametrize("tok", [TIK, DUMMY], ids=["tiktoken", "context-sensitive"])
def test_edit_sequences_equal_full_encode(tok, data):
    text = BASE
    doc = _full(encode_document(tok, text, chunk=16))
    for _ in range(3):
        a = data.draw(st.integers(0, len(text)))
        b = data.draw(st.integers(a, min(len(text), a + 6)))
        ins = "".join(data.draw(st.lists(ALPHABET, max_size=3)))
        text = text[:a] + ins + text[b:]
        doc, _change = update_document(doc, text)  # type: ignore[misc]
        assert _flat(doc) == _expected(tok, text)
        assert doc.token_count == len(_expected(tok, text))


def test_single_edit_reencodes_a_small_window():
    text = "".join(f"line {i} has some words in it\n" for i in range(2000))
    doc = _full(encode_document(TIK, text))
    pos = text.index("line 1000")
    _doc2, change = update_document(doc, text[:pos] + "X" + text[pos:])  # type: ignore[misc]
    assert not change.full
    assert change.old_segments <= 4 and change.new_segments <= 4
    assert change.first_token == doc.tok_starts[change.first_segment]


def test_context_around_an_edit_is_one_line_not_a_segment(monkeypatch):
    """The segments before and after the checked ones are context only: one line of each is
    encoded (a segment holds many short lines)."""
    text = "".join(f"line {i} has some words in it\n" for i in range(2000))
    doc = _full(encode_document(TIK, text))
    windows: list[str] = []
    encode = TIK.encode_compact
    monkeypatch.setattr(TIK, "encode_compact", lambda w: windows.append(w) or encode(w))
    pos = text.index("line 1000")
    new = text[:pos] + "X" + text[pos:]
    doc2, _change = update_document(doc, new)  # type: ignore[misc]
    assert _flat(doc2) == _expected(TIK, new)
    k = doc.segment_of_offset(pos)
    checked = doc.cp_starts[k + 2] - doc.cp_starts[k - 1]  # the edited segment, its two
    line = len("line 1000 has some words in it\n")
    assert len(windows) == 1 and len(windows[0]) <= checked + 1 + 2 * line


def test_lookups():
    text = "ab 😀 cd\nef\n"
    doc = _full(encode_document(TIK, text))
    i = doc.token_at(text.index("😀"))
    tok, _ = doc.token(i)
    assert "😀".encode() in b"".join(doc.token(j)[0].token_bytes for j in range(doc.token_count))
    assert doc.span(i)[0] <= text.index("😀") < doc.span(i)[1]
    assert doc.segment_of_line(1) == len(doc.segments) - 1 or doc.line_starts[-1] >= 1
    assert tok is not None


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_spliced_prefix_sums_equal_recomputed(data):
    from explorer.workers.doctokens import DocTokens

    text = BASE
    doc = _full(encode_document(TIK, text, chunk=16))
    for _ in range(3):
        a = data.draw(st.integers(0, len(text)))
        b = data.draw(st.integers(a, min(len(text), a + 40)))
        text = text[:a] + "".join(data.draw(st.lists(ALPHABET, max_size=5))) + text[b:]
        doc, _ = update_document(doc, text)  # type: ignore[misc]
        fresh = DocTokens(doc.tokenizer, doc.text, doc.segments)
        for name in ("cp_starts", "u16_starts", "line_starts", "tok_starts", "byte_count",
                     "unknown_count"):
            assert getattr(doc, name) == getattr(fresh, name), name
        assert doc.byte_count == len(text.encode())


ENGINE_FILES = [
    ("minilm", "tokenizer.json"),
    ("sentencepiece", "botchan_en_unigram_1000.model"),
    ("llama-cpp", "ggml-vocab-llama-spm.gguf"),
    ("gpt-tokenizer", "o200k_base.tiktoken"),
]
_LOADED: dict = {}


def _engine(pkg, name):
    from references import require

    from explorer.engine.formats import load_tokenizer

    key = (pkg, name)
    if key not in _LOADED:
        _LOADED[key] = load_tokenizer(require(pkg, name))
    return _LOADED[key]


@pytest.mark.parametrize(("pkg", "name"), ENGINE_FILES, ids=[n for _, n in ENGINE_FILES])
@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_our_engines_edit_sequences_equal_full_encode(pkg, name, data):
    tok = _engine(pkg, name)
    text = "Hello world\n\nsecond line here  \n  indented café 😀\nlast"
    doc = _full(encode_document(tok, text, chunk=12))
    assert _flat(doc) == _expected(tok, text)
    for _ in range(3):
        a = data.draw(st.integers(0, len(text)))
        b = data.draw(st.integers(a, min(len(text), a + 5)))
        text = text[:a] + "".join(data.draw(st.lists(ALPHABET, max_size=3))) + text[b:]
        doc, _ = update_document(doc, text)  # type: ignore[misc]
        assert _flat(doc) == _expected(tok, text)
        assert _full_tokens(doc) == tok.encode(text).tokens  # (irregular ones whole)


# ----- the cyclic GC during a big first encode ---------------------------------------------
@pytest.fixture(autouse=True)
def _gc_on(automatic_gc):
    """These tests start with Python's automatic GC on (tests/conftest.py)."""


@pytest.fixture
def small_quiet_limit(monkeypatch):
    """Treat BASE as a big text; leave the GC unfrozen afterwards."""
    monkeypatch.setattr(doctokens, "GC_QUIET_CHARS", 10)
    yield
    gc.unfreeze()


def test_big_first_encode_pauses_gc_then_freezes_its_result(small_quiet_limit, line_segments):
    gc.unfreeze()
    gen = encode_document(TIK, BASE, chunk=8)
    next(gen)
    assert not gc.isenabled()  # paused between chunks, while the GUI thread runs
    doc = _full(gen)
    assert gc.isenabled()
    assert gc.get_freeze_count() > 0
    assert any(gc.is_tracked(t) for t, _s, _e in doc.tokens())
    assert _flat(doc) == _expected(TIK, BASE)


def test_cancelled_first_encode_turns_gc_back_on_without_freezing(small_quiet_limit, line_segments):
    gc.unfreeze()
    gen = encode_document(TIK, BASE, chunk=8)
    next(gen)
    gen.close()  # what the worker does on cancel
    assert gc.isenabled()
    assert gc.get_freeze_count() == 0


def test_gc_left_alone_when_someone_else_paused_it(small_quiet_limit):
    gc.unfreeze()
    gc.disable()
    try:
        doc = _full(encode_document(TIK, BASE, chunk=8))
        assert not gc.isenabled()
        assert gc.get_freeze_count() == 0
        assert _flat(doc) == _expected(TIK, BASE)
    finally:
        gc.enable()  # (left off, it failed test_train_api's GC check when run after this)


def test_small_first_encode_leaves_gc_alone(line_segments):
    gc.unfreeze()
    gen = encode_document(TIK, BASE, chunk=8)
    next(gen)
    assert gc.isenabled()
    _full(gen)
    assert gc.get_freeze_count() == 0


def test_sentencepiece_edit_reencodes_locally(monkeypatch, line_segments):
    """A SentencePiece text starts with a dummy-prefix piece and drops trailing whitespace:
    the window's context segments absorb both, so an edit stays local (not the whole text)
    and the result still equals a full encode. (Without the re-deciding of what follows the
    edit until the running score comes back, which on a text this short reaches its end:
    tests/workers/test_doctokens_unigram.py.)"""
    monkeypatch.setattr(doctokens, "EXACT_WINDOW", 0)
    tok = _engine("sentencepiece", "botchan_en_unigram_1000.model")
    text = "".join(f"Line {i} of the text.\n\nIt goes on here {i}.\n" for i in range(60))
    doc = _full(encode_document(tok, text, chunk=64))
    assert len(doc.segments) > 10
    assert _flat(doc) == _expected(tok, text)
    at = text.index("Line 30")
    text = text[:at] + "Zebra " + text[at:]
    doc, change = update_document(doc, text)
    assert not change.full and change.old_segments <= 10
    assert _flat(doc) == _expected(tok, text)


def test_sentencepiece_document_equals_one_whole_text_encode():
    """A big Unigram document encoded window by window is exactly one whole-text encode
    (sentencepiece's float32 path scores can make a near tie depend on where the text
    starts: such a window is redone in a bigger one, never taken as it came out)."""
    from explorer.bundled import resource_path

    tok = _engine("sentencepiece", "botchan_en_unigram_1000.model")
    text = (resource_path("corpus", "botchan.txt").read_text(encoding="utf-8")
            + resource_path("corpus", "udhr_sample.txt").read_text(encoding="utf-8"))
    doc = _full(encode_document(tok, text, chunk=4096))
    assert len(doc.segments) > 100
    assert _flat(doc) == _expected(tok, text)
    assert _full_tokens(doc) == tok.encode(text).tokens  # (its <unk> runs whole)


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_known_unchanged_ends_give_the_same_result(data):
    """``same=(prefix, suffix)`` from an editor's change notifications (any lengths that
    are unchanged, not only the longest) gives what comparing the texts gives."""
    text = BASE
    doc = _full(encode_document(TIK, text, chunk=16))
    for _ in range(3):
        a = data.draw(st.integers(0, len(text)))
        b = data.draw(st.integers(a, min(len(text), a + 6)))
        ins = "".join(data.draw(st.lists(ALPHABET, max_size=3)))
        new = text[:a] + ins + text[b:]
        head = data.draw(st.integers(0, a))
        tail = data.draw(st.integers(0, len(text) - b))
        hinted, _ = update_document(doc, new, same=(head, tail))  # type: ignore[misc]
        plain, _ = update_document(doc, new)  # type: ignore[misc]
        assert _flat(hinted) == _flat(plain) == _expected(TIK, new)
        assert hinted.text == new
        text, doc = new, hinted


def _relative(seg):
    return seg.text, seg.ids.tolist(), [x - seg.origin for x in seg.starts], \
        [x - seg.origin for x in seg.ends]


@settings(max_examples=60, deadline=None)
@given(st.data())
@pytest.mark.parametrize("tok", [TIK, DUMMY], ids=["tiktoken", "context-sensitive"])
def test_context_segments_left_out_of_the_repaint_are_unchanged(tok, data):
    """``repaint_lines`` leaves out only segments whose text and tokens are the old ones."""
    text = BASE
    doc = _full(encode_document(tok, text, chunk=16))
    for _ in range(3):
        a = data.draw(st.integers(0, len(text)))
        b = data.draw(st.integers(a, min(len(text), a + 6)))
        text = text[:a] + "".join(data.draw(st.lists(ALPHABET, max_size=3))) + text[b:]
        new, change = update_document(doc, text)  # type: ignore[misc]
        first, stop = change.first_segment, change.first_segment + change.new_segments
        if change.same_first:
            assert _relative(new.segments[first]) == _relative(doc.segments[first])
        if change.same_last:
            old_last = change.first_segment + change.old_segments - 1
            assert _relative(new.segments[stop - 1]) == _relative(doc.segments[old_last])
        repaint, changed = new.repaint_lines(change), new.changed_lines(change)
        assert changed.start <= repaint.start and repaint.stop <= changed.stop
        # The line where the text starts to differ (the drawn edit may begin with what was
        # there) is always repainted.
        edited = text.count("\n", 0, doctokens.common_prefix(doc.text, text))
        assert repaint.start <= edited < max(repaint.stop, repaint.start + 1) or \
            change.new_segments == 0
        doc = new


def _line_tokens(doc):
    """Per line: the (id, start, end) of the tokens touching it, relative to the line."""
    starts = [0] + [i + 1 for i, ch in enumerate(doc.text) if ch == "\n"]
    out: list[list[tuple[int, int, int]]] = [[] for _ in starts]
    for tok, a, b in doc.tokens():
        first = max(0, bisect_right(starts, a) - 1)
        last = max(first, bisect_right(starts, max(a, b - 1)) - 1)
        for line in range(first, last + 1):
            out[line].append((tok.id, a - starts[line], b - starts[line]))
    return out


@settings(max_examples=60, deadline=None)
@given(st.data())
@pytest.mark.parametrize("tok", [TIK, DUMMY], ids=["tiktoken", "context-sensitive"])
def test_lines_left_out_of_the_repaint_keep_their_tokens(tok, data):
    """Every line outside ``repaint_lines`` has the tokens its old line had (lines before
    the edit keep their number, lines after it move by the lines the edit added)."""
    text = BASE
    doc = _full(encode_document(tok, text, chunk=16))
    for _ in range(3):
        a = data.draw(st.integers(0, len(text)))
        b = data.draw(st.integers(a, min(len(text), a + 6)))
        ins = "".join(data.draw(st.lists(ALPHABET, max_size=3)))
        new_text = text[:a] + ins + text[b:]
        new, change = update_document(doc, new_text)  # type: ignore[misc]
        repaint = new.repaint_lines(change)
        before, after = _line_tokens(doc), _line_tokens(new)
        moved = new_text.count("\n") - text.count("\n")
        # (where the texts first differ: inserting "a\n\n" after "a\n\n" changes them at 3)
        edit_line = text.count("\n", 0, doctokens.common_prefix(text, new_text))
        for line, toks in enumerate(after):
            if line in repaint:
                continue
            old_line = line if line <= edit_line else line - moved
            assert 0 <= old_line < len(before) and before[old_line] == toks, line
        text, doc = new_text, new


@pytest.mark.parametrize("tok", [TIK, DUMMY], ids=["tiktoken", "context-sensitive"])
def test_an_edit_that_leaves_a_final_newline_repaints_the_empty_last_line(tok):
    """The last line's text replaced by the newline that ends the line before: the empty
    line after it lost its tokens, so it is repainted (found by the property test above)."""
    text = BASE + "a"
    doc = _full(encode_document(tok, text, chunk=16))
    new_text = text[:-6] + "\n"
    new, change = update_document(doc, new_text)  # type: ignore[misc]
    assert _line_tokens(doc)[-1] and not _line_tokens(new)[-1]
    assert len(_line_tokens(new)) - 1 in new.repaint_lines(change)


# ----- segments of at least SEGMENT_CHARS characters ---------------------------------------
def _covering(doc) -> None:
    """Segments cover the text in order; every token lies inside its segment."""
    assert "".join(seg.text for seg in doc.segments) == doc.text
    for k, seg in enumerate(doc.segments):
        assert doc.cp_starts[k + 1] - doc.cp_starts[k] == len(seg.text)
        assert all(seg.origin <= s <= e <= seg.origin + len(seg.text)
                   for s, e in zip(seg.starts, seg.ends, strict=True))


@pytest.mark.parametrize("tok", [TIK, DUMMY], ids=["tiktoken", "context-sensitive"])
def test_segments_hold_the_minimum_through_windows_and_edits(tok, segment_chars):
    """A first encode in windows gives segments of at least ``SEGMENT_CHARS`` characters
    (the document's last excepted); random edits keep the text covered and the tokens
    those of a full encode, and only an edit's last new segment may fall short."""
    import random

    rng = random.Random(segment_chars)
    text = "".join(f"line {i}: {'word ' * rng.randint(0, 12)}\n" + "\n" * rng.randint(0, 2)
                   for i in range(400))
    doc = _full(encode_document(tok, text, chunk=1024))
    _covering(doc)
    assert all(len(s.text) >= segment_chars for s in doc.segments[:-1])
    assert len(doc.segments) > len(text) // (4 * max(segment_chars, 40))
    assert _flat(doc) == _expected(tok, text)
    short = 1  # segments under the minimum: the last, plus at most one per edit
    for _ in range(40):
        at = rng.randrange(len(text) + 1)
        pasted = rng.choice(["x", " ", "\n", "ab\ncd", "", "word word\n" * rng.randint(5, 90)])
        text = text[:at] + pasted + text[at + rng.choice([0, 0, 1, 3, rng.randint(0, 900)]):]
        doc, _ = update_document(doc, text)
        _covering(doc)
        short += 1
        assert sum(len(s.text) < segment_chars for s in doc.segments) <= short
    assert _flat(doc) == _expected(tok, text)


def test_windows_after_the_first_are_longer(line_segments):
    """The first window (what a new document shows) is ``chunk`` long; later ones are
    ``LATER_CHUNKS`` times longer (fewer per-window costs), and the result is the same."""
    text = "".join(f"line {i} has a few words in it\n" for i in range(600))
    chunk = 256
    gen = encode_document(TIK, text, chunk=chunk)
    done: list[int] = []
    while True:
        try:
            done.append(next(gen).done)
        except StopIteration as stop:
            doc = stop.value
            break
    assert done[0] <= chunk + 64
    steps = [b - a for a, b in pairwise(done)]
    assert steps and min(steps) >= (doctokens.LATER_CHUNKS - 1) * chunk
    assert _flat(doc) == _expected(TIK, text)
