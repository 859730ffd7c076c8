"""Coarse segments (a big document's part taken from a child) cut again where an edit needs."""

from __future__ import annotations

import pytest
from doc_helpers import flat, whole_tokens
from doubles import DummyPrefixDouble, TiktokenDouble
from hypothesis import given, settings
from hypothesis import strategies as st

from explorer.workers import docstore
from explorer.workers.docstore import DocTokens, cut_segments, refined
from explorer.workers.doctokens import update_document

TIK = TiktokenDouble()
DUMMY = DummyPrefixDouble()
LINES = ["def f(x):", "    return x + 1", "", "héllo wörld 😀👍🏽 𠀋𠀌 e\u0301", "",
         " 日本語のテキスト <|endoftext|> end", "class A:", "  pass  "]
TEXT = "".join(f"{LINES[i % len(LINES)]} {i}\n" for i in range(400))
ALPHABET = st.sampled_from([*list("ab \n\t😀é́日\r.,"), "\n\n", "  ", "<|endoftext|>"])
SUMS = ("cp_starts", "u16_starts", "line_starts", "tok_starts", "byte_count", "unknown_count")


@pytest.fixture(autouse=True)
def short_segments(monkeypatch):
    """The document's own segments a few lines long (these texts are short)."""
    monkeypatch.setattr(docstore, "SEGMENT_CHARS", 40)


def coarse_doc(tok, text, least=400):
    """``text`` as one document of coarse segments (as a child's taken part is cut)."""
    segments = cut_segments(text, tok.encode_compact(text), len(text), 0, least, coarse=True)
    assert len(segments) > 4 and all(s.coarse for s in segments)
    return DocTokens(tok, text, segments)


def test_refined_is_the_same_document_in_short_segments():
    doc = coarse_doc(TIK, TEXT)
    fine = refined(doc, 0, len(doc.segments))
    assert not any(s.coarse for s in fine.segments)
    # each coarse segment in segments of at least the document's length (but its last)
    ends = set(doc.cp_starts)
    for k, seg in enumerate(fine.segments):
        assert len(seg.text) >= docstore.SEGMENT_CHARS or fine.cp_starts[k + 1] in ends
    assert len(fine.segments) > 3 * len(doc.segments)
    assert flat(fine) == flat(doc) == whole_tokens(TIK, TEXT)
    assert any(s.irregular for s in fine.segments)  # (partial UTF-8 tokens, the special one)
    fresh = DocTokens(TIK, TEXT, fine.segments)
    for name in SUMS:
        assert getattr(fine, name) == getattr(fresh, name), name
    assert (fine.byte_count, fine.unknown_count) == (doc.byte_count, doc.unknown_count)
    assert set(doc.cp_starts) <= set(fine.cp_starts)


def test_refined_cuts_only_the_coarse_segments_asked_for():
    doc = coarse_doc(TIK, TEXT)
    part = refined(doc, 2, 4)
    assert part.segments[:2] == doc.segments[:2] and part.segments[-3:] == doc.segments[-3:]
    assert [s.coarse for s in part.segments].count(False) > 2
    assert len(part.segments) - (len(doc.segments) - 2) == [
        s.coarse for s in part.segments].count(False)
    assert flat(part) == flat(doc)
    assert refined(part, 2, 4) is part  # (nothing coarse left there)


def test_refined_keeps_the_unknown_count():
    """A WordPiece vocabulary's [UNK] tokens: counted the same in the short segments."""
    from references import require

    from explorer.engine.formats import load_tokenizer

    tok = load_tokenizer(require("minilm", "tokenizer.json"))
    doc = coarse_doc(tok, TEXT)
    assert doc.unknown_count > 0
    fine = refined(doc, 0, len(doc.segments))
    assert DocTokens(tok, TEXT, fine.segments).unknown_count == doc.unknown_count
    assert flat(fine) == flat(doc)


@settings(max_examples=60, deadline=None)
@given(st.data())
@pytest.mark.parametrize("tok", [TIK, DUMMY], ids=["tiktoken", "context-sensitive"])
def test_edits_in_coarse_segments_equal_a_full_encode(tok, data):
    text = TEXT
    doc = coarse_doc(tok, text)
    for _ in range(3):
        a = data.draw(st.integers(0, len(text)))
        b = data.draw(st.integers(a, min(len(text), a + data.draw(st.sampled_from([6, 900])))))
        new_text = text[:a] + "".join(data.draw(st.lists(ALPHABET, max_size=3))) + text[b:]
        new, change = update_document(doc, new_text)  # type: ignore[misc]
        assert flat(new) == whole_tokens(tok, new_text)
        fresh = DocTokens(tok, new_text, new.segments)
        for name in SUMS:
            assert getattr(new, name) == getattr(fresh, name), name
        # the change, in the new document's segments and the tokens' indices
        old_count = len(whole_tokens(tok, text))
        assert new.token_count == old_count - change.old_tokens + change.new_tokens
        stop = change.first_segment + change.new_segments
        assert new.tok_starts[stop] - new.tok_starts[change.first_segment] == change.new_tokens
        assert new.tok_starts[change.first_segment] == change.first_token
        text, doc = new_text, new


def test_a_keystroke_in_coarse_segments_encodes_what_it_would_in_short_ones(monkeypatch):
    """The segments around the edit are cut again first: the window is the one of the
    document cut again whole, and segments away from the edit stay coarse."""
    pos = TEXT.index("class A: 206")
    new_text = TEXT[:pos] + "X" + TEXT[pos:]
    windows: dict[str, list[str]] = {}
    encode = TIK.encode_compact
    coarse = coarse_doc(TIK, TEXT)
    for name, doc in (("fine", refined(coarse, 0, len(coarse.segments))), ("coarse", coarse)):
        seen = windows[name] = []
        monkeypatch.setattr(TIK, "encode_compact", lambda w, seen=seen: seen.append(w) or
                            encode(w))
        new, _change = update_document(doc, new_text)  # type: ignore[misc]
        monkeypatch.setattr(TIK, "encode_compact", encode)
        assert flat(new) == whole_tokens(TIK, new_text)
        if name == "coarse":
            assert new.segments[0].coarse and new.segments[-1].coarse
            assert not new.segments[new.segment_of_offset(pos)].coarse
    assert windows["coarse"] == windows["fine"]
    assert len(windows["fine"]) == 1 and len(windows["fine"][0]) < 400
