"""Boundary comparison: goldens that read at a glance, real cl100k vs o200k, and properties."""

from __future__ import annotations

from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from explorer.engine.compare import compare_boundaries, encoding_stats, token_boundaries
from explorer.engine.encoding import Encoding, Token


def _enc(text: str, cuts: list[int]) -> Encoding:
    """An encoding of ``text`` whose tokens end at ``cuts`` (ASCII: bytes = chars)."""
    tokens, start = [], 0
    for i, end in enumerate(cuts):
        piece = text[start:end]
        tokens.append(Token(i, piece, piece.encode(), start, end))
        start = end
    return Encoding(text, tokens)


def test_two_encodings_golden():
    a = _enc("hello world", [5, 11])  # hello| world
    b = _enc("hello world", [4, 5, 11])  # hell|o| world
    cmp = compare_boundaries([a, b])
    assert cmp.boundaries == (frozenset({0, 5, 11}), frozenset({0, 4, 5, 11}))
    assert cmp.common == frozenset({0, 5, 11})
    assert cmp.differing == (frozenset(), frozenset({4}))
    assert cmp.all_differing == frozenset({4})
    assert cmp.segments == [(0, 4), (4, 5), (5, 11)]


def test_three_encodings_boundary_missing_in_one_differs_everywhere_it_exists():
    text = "abcdef"
    a = _enc(text, [2, 4, 6])
    b = _enc(text, [2, 6])
    c = _enc(text, [2, 3, 4, 6])
    cmp = compare_boundaries([a, b, c])
    assert cmp.common == frozenset({0, 2, 6})
    assert cmp.differing == (frozenset({4}), frozenset(), frozenset({3, 4}))
    assert cmp.segments == [(0, 2), (2, 3), (3, 4), (4, 6)]


def test_identical_encodings_have_no_differences():
    a = _enc("same text", [4, 9])
    cmp = compare_boundaries([a, _enc("same text", [4, 9])])
    assert cmp.all_differing == frozenset()
    assert cmp.segments == [(0, 4), (4, 9)]


def test_partial_utf8_tokens_share_a_span_and_add_no_inner_boundary():
    # "é" split by byte-level BPE into two partial tokens with the same span.
    text = "é"
    a = Encoding(text, [Token(0, "Ã", b"\xc3", 0, 1), Token(1, "©", b"\xa9", 0, 1)])
    b = Encoding(text, [Token(7, "é", "é".encode(), 0, 1)])
    cmp = compare_boundaries([a, b])
    assert token_boundaries(a) == frozenset({0, 1})
    assert cmp.all_differing == frozenset()
    assert cmp.segments == [(0, 1)]


def test_stats():
    text = "añb"
    enc = Encoding(text, [Token(0, "a", b"a", 0, 1), Token(1, "<unk>", "ñ".encode(), 1, 2,
                                                              unknown=True),
                          Token(2, "b", b"b", 2, 3)])
    s = encoding_stats(enc)
    assert (s.tokens, s.characters, s.utf8_bytes, s.unknown, s.special) == (3, 3, 4, 1, 0)
    assert s.chars_per_token == 1.0
    assert s.bytes_per_token == pytest.approx(4 / 3)


def test_rejects_different_texts_and_empty_input():
    with pytest.raises(ValueError, match="same text"):
        compare_boundaries([_enc("ab", [2]), _enc("ac", [2])])
    with pytest.raises(ValueError, match="at least one"):
        compare_boundaries([])


def test_empty_text():
    cmp = compare_boundaries([Encoding(""), Encoding("")])
    assert cmp.segments == [] and cmp.all_differing == frozenset()


def _tiktoken(name: str):
    """A real tiktoken Encoding built offline from the bundled vocabulary."""
    import tiktoken
    import tiktoken_ext.openai_public as public
    from tiktoken.load import load_tiktoken_bpe

    from explorer.bundled import resource_path

    local = str(resource_path(f"vocab/{name}.tiktoken"))
    with mock.patch.object(public, "load_tiktoken_bpe",
                           lambda _url, expected_hash=None: load_tiktoken_bpe(local)):
        params = getattr(public, name)()
    return tiktoken.Encoding(**params)


def _from_tiktoken(enc, text: str) -> Encoding:
    """ASCII text only: tiktoken byte offsets are character offsets."""
    tokens, pos = [], 0
    for i in enc.encode(text):
        b = enc.decode_single_token_bytes(i)
        tokens.append(Token(i, b.decode(), b, pos, pos + len(b)))
        pos += len(b)
    return Encoding(text, tokens)


def test_real_cl100k_vs_o200k_marks_exactly_the_contraction_split():
    text = "Hello world!!!  123456 don't\n\n  x"
    cl = _from_tiktoken(_tiktoken("cl100k_base"), text)
    o2 = _from_tiktoken(_tiktoken("o200k_base"), text)
    cmp = compare_boundaries([cl, o2])
    # cl100k splits " don" + "'t"; o200k keeps " don't" whole. Nothing else differs.
    apostrophe = text.index("'")
    assert cmp.differing == (frozenset({apostrophe}), frozenset())
    assert cmp.stats[0].tokens == cmp.stats[1].tokens + 1


_cuts = st.lists(st.integers(min_value=1, max_value=29), max_size=12)


@settings(max_examples=60, deadline=None)
@given(st.lists(_cuts, min_size=1, max_size=4))
def test_differing_matches_definition(cut_lists):
    text = "x" * 30
    encs = [_enc(text, sorted(set(c) | {30})) for c in cut_lists]
    cmp = compare_boundaries(encs)
    for i, b in enumerate(cmp.boundaries):
        for offset in range(31):
            expected = offset in b and any(offset not in other for other in cmp.boundaries)
            assert (offset in cmp.differing[i]) == expected
    # Segments tile the text, and every token is a whole run of segments.
    assert cmp.segments[0][0] == 0 and cmp.segments[-1][1] == 30
    assert all(a[1] == b[0] for a, b in zip(cmp.segments, cmp.segments[1:], strict=False))
    starts = {s for s, _ in cmp.segments} | {30}
    for enc in encs:
        for t in enc.tokens:
            assert t.start in starts and t.end in starts
