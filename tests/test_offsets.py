"""The code-point <-> UTF-16 helper every Qt painter uses."""

from hypothesis import given
from hypothesis import strategies as st

from explorer.engine.offsets import Utf16Map, utf16_len

CASES = [
    "plain ascii",
    "emoji 😀 and ZWJ 👩‍👩‍👧 family",
    "CJK Ext B: 𠀋𡈽𢌞 end",
    "combining: e\u0301 a\u0308\u0323 ok",
    "",
    "𝔘𝔫𝔦",
]


def _utf16_prefix(text: str, i: int) -> int:
    return len(text[:i].encode("utf-16-le")) // 2


def test_known_cases_round_trip():
    for text in CASES:
        m = Utf16Map(text)
        assert m.length_utf16 == utf16_len(text)
        for i in range(len(text) + 1):
            u = m.to_utf16(i)
            assert u == _utf16_prefix(text, i)
            assert m.to_codepoint(u) == i


def test_inside_surrogate_pair_rounds_down():
    m = Utf16Map("a😀b")
    assert m.to_codepoint(2) == 1  # between the surrogates of 😀
    assert m.span_to_utf16(1, 2) == (1, 2)


@given(st.text())
def test_property_matches_utf16_encoding(text):
    m = Utf16Map(text)
    for i in range(len(text) + 1):
        assert m.to_utf16(i) == _utf16_prefix(text, i)
        assert m.to_codepoint(m.to_utf16(i)) == i
