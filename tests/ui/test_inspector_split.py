"""The inspector's split-character note: which tokens share a character, the bytes of each part.

Checked against an oracle built independently of the code under test: grapheme clusters from
``regex``'s ``\\X`` and each token's share of a cluster from the byte offsets of the real
cl100k tokens (whose bytes, concatenated, are the text's UTF-8).
"""

from __future__ import annotations

from itertools import accumulate

import pytest
import regex
from conftest import wait_highlighted
from hypothesis import given, settings
from hypothesis import strategies as st

from explorer.bundled import resource_path
from explorer.engine.encoding import Token
from explorer.engine.formats import load_tokenizer
from explorer.engine.generators import run_to_end
from explorer.ui.inspector import split_note_html, token_view
from explorer.ui.split_chars import split_characters
from explorer.workers.doctokens import DocTokens, Segment, encode_document

pytestmark = pytest.mark.usefixtures("no_qt_warnings")
PIECES = ["🦜", "👍🏽", "👨\u200d👩\u200d👧", "🇫🇷", "e\u0301", "नमस्ते", "हिन्दी", "日本語",
          "語", "한국어", " ", "a", "the", "\n", "𠀋", "ـب"]
TOKENIZER = load_tokenizer(resource_path("vocab", "cl100k_base.tiktoken"))


def _doc(text: str):
    return run_to_end(encode_document(TOKENIZER, text))


def oracle(text: str) -> list[list[tuple[str, list[tuple[int, bytes]]]]]:
    """Per token: the clusters it shares with other tokens, each as (text, [(token, part)])."""
    toks = TOKENIZER.encode(text).tokens
    data = text.encode("utf-8")
    assert b"".join(t.token_bytes for t in toks) == data
    ends = list(accumulate(len(t.token_bytes) for t in toks))
    ranges = list(zip([0, *ends], ends, strict=False))
    shared = []
    for m in regex.finditer(r"\X", text):
        c0 = len(text[:m.start()].encode())
        c1 = c0 + len(m.group().encode())
        parts = [(i, data[max(a, c0):min(b, c1)]) for i, (a, b) in enumerate(ranges)
                 if a < c1 and b > c0 and b > a]
        if len(parts) > 1:
            shared.append((m.group(), parts))
    return [[(c, parts) for c, parts in shared if any(i == k for k, _ in parts)]
            for i in range(len(toks))]


def observed(text: str) -> list[list[tuple[str, list[tuple[int, bytes]]]]]:
    doc = _doc(text)
    out = []
    for i in range(doc.token_count):
        chars = split_characters(doc, i)
        assert all(ch.exact for ch in chars)
        out.append([(ch.text, [(p.index, p.data) for p in ch.parts]) for ch in chars])
    return out


def test_split_characters_of_samples():
    text = "a 🦜 b\nनमस्ते हिन्दी\n👨\u200d👩\u200d👧 日本語\n🇫🇷 e\u0301 👍🏽"
    assert observed(text) == oracle(text)
    doc = _doc(text)
    parrot = next(i for i in range(doc.token_count) if doc.token(i)[0].token_bytes == b"\xa6")
    (ch,) = split_characters(doc, parrot)
    assert ch.text == "🦜"
    assert b"".join(p.data for p in ch.parts) == "🦜".encode()
    assert len(ch.parts) == 3 and parrot in [p.index for p in ch.parts]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=14).map("".join))
def test_split_characters_match_the_oracle(text):
    assert observed(text) == oracle(text)


def test_whole_characters_get_no_note():
    doc = _doc("plain ascii words, 日本 and é")
    assert all(not split_characters(doc, i) for i in range(doc.token_count))
    assert split_note_html([], 0) == ""


def test_normalized_tokens_show_their_whole_bytes():
    """A normalizer (SentencePiece's ``▁``) breaks the bytes/text link: no byte slicing."""
    text = "e\u0301x"
    toks = [Token(id=7, piece="▁e", token_bytes="▁e".encode(), start=0, end=1),
            Token(id=8, piece="\u0301x", token_bytes="\u0301x".encode(), start=1, end=3)]
    doc = DocTokens(TOKENIZER, text, [Segment.from_tokens(text, toks, 0)])
    (ch,) = split_characters(doc, 1)
    assert ch.text == "e\u0301" and not ch.exact
    assert [(p.index, p.token_id, p.data) for p in ch.parts] == [
        (0, 7, "▁e".encode()), (1, 8, "\u0301x".encode())]
    assert "text normalized" in split_note_html([ch], 1)


def test_inspector_shows_split_note(qtbot, window):
    text = "I saw a 🦜 today\n"
    window.set_text(text)
    wait_highlighted(qtbot, window)
    doc = window.doc
    part = next(i for i in range(doc.token_count) if doc.token(i)[0].token_bytes == b"\x9c")
    window.linker.select_token(part)
    shown = window.inspector.text
    assert "Split character" in shown and "🦜" in shown and "U+1F99C" in shown
    (ch,) = token_view(doc, part).split_characters()
    for p in ch.parts:  # every token sharing the parrot, with the bytes of its part
        this = " (this)</b>" if p.index == part else ""
        assert (f"#{p.index}{this}</td><td>{p.token_id}</td>"
                f"<td>{' '.join(f'{b:02X}' for b in p.data)}</td>") in shown
    assert "2 other tokens hold the rest" in shown
    whole = next(i for i in range(doc.token_count) if doc.token(i)[0].token_bytes == b" today")
    window.linker.select_token(whole)
    assert "Split character" not in window.inspector.text
