"""The HF normalizers' and BERT pre-tokenizer's whole-text passes give exactly what the
per-character steps give, text and spans, and what HF tokenizers gives.

Under test: :meth:`Aligned.translate` (a per-character map by ``str.translate`` and list
passes, spliced where few characters change length, gathered where many do),
:meth:`Aligned.unicode_normalize`'s decomposition runs (NFD/NFKD), ``drop_matching``,
``BertNormalizer`` (one table for the text's distinct characters), ``Lowercase``,
``ByteLevel`` and the BERT pre-tokenizer's whitespace runs.
"""

from __future__ import annotations

import regex
from hypothesis import given, settings
from hypothesis import strategies as st
from tokenizers import normalizers as hf_normalizers

from explorer.engine.hf.normalized import _FEW_RESIZED, Aligned, _normalized_run
from explorer.engine.hf.normalizers import BertNormalizer, ByteLevelNormalizer, Lowercase
from explorer.engine.hf.pre_tokenizers import _CHAR_CLASSES, _KEPT_RUNS, _char_split
from explorer.engine.hf.unicode_props import (
    is_bert_control,
    is_chinese_char,
    is_whitespace,
)
from explorer.engine.pretokenizers.byte_level import bytes_to_unicode

# marks (in and out of canonical order), Hangul, compatibility characters, CJK, controls,
# odd spaces, a character past the BMP, a lone surrogate
_ALPHABET = ("ab cé\u0301\u0323\u0327ﬁ½가\u1100\u1161ΣİẞDž語\U00020000\u3000\u00a0\t\n"
             "\x00\x07\u200b\ufffd\U0001f600\ud800")
_TEXT = st.text(alphabet=st.sampled_from(_ALPHABET), max_size=40)
_LONG = st.lists(st.sampled_from(_ALPHABET), min_size=200, max_size=400).map("".join)


def _aligned(text: str) -> Aligned:
    """``text`` with a non-identity alignment (NFKD of itself, from offset 3)."""
    return Aligned.from_original(text, 3)._normalize_segments("NFKD")


def _same(got: Aligned, want: Aligned) -> None:
    assert (got.text, got.starts, got.ends) == (want.text, want.starts, want.ends)


@settings(max_examples=200, deadline=None)
@given(text=st.one_of(_TEXT, _LONG),
       table=st.dictionaries(st.sampled_from(_ALPHABET),
                             st.sampled_from(["", "x", "yz", " a ", "\u0301", "Σσ"]),
                             max_size=6))
def test_translate_equals_the_per_character_map(text: str, table: dict[str, str]) -> None:
    a = _aligned(text)
    got = a.translate({ord(k): v for k, v in table.items()})
    _same(got, a.map_chars(lambda c: table.get(c, c)))


def test_translate_maps_every_character_once() -> None:
    """A replacement is not replaced again (``str.translate``'s rule), however few rules."""
    a = _aligned("ab\u0301ba")
    for table in ({"a": "b", "b": "c"}, {"b": "a", "a": "b"}, {"\u0301": "x", "a": "\u0301"},
                  {"a": "bb", "b": "a"}):
        _same(a.translate({ord(k): v for k, v in table.items()}),
              a.map_chars(lambda c, t=table: t.get(c, c)))


def test_translate_takes_both_ways_of_building_the_spans() -> None:
    """Few characters that change length are spliced in, many are gathered; both give
    the per-character map's spans."""
    base = "abcdefgh " * 40
    for every in (1, 3, _FEW_RESIZED * 2):
        text = "".join(c + ("語" if i % every == 0 else "") for i, c in enumerate(base))
        a = _aligned(text)
        for table in ({ord("語"): " 語 "}, {ord("語"): ""}, {ord("語"): "", ord("a"): "A"}):
            _same(a.translate(table), a.map_chars(lambda c, t=table: t.get(ord(c), c)))


@settings(max_examples=300, deadline=None)
@given(text=st.one_of(_TEXT, _LONG))
def test_unicode_forms_equal_the_segment_by_segment_path(text: str) -> None:
    for form in ("NFC", "NFD", "NFKC", "NFKD"):
        a = Aligned.from_original(text, 7)
        _same(a.unicode_normalize(form), a._normalize_segments(form))
        assert _normalized_run(text, form)[0] == a.unicode_normalize(form).text


def _bert_per_character(norm: BertNormalizer, a: Aligned) -> Aligned:
    """BertNormalizer's steps one character at a time (HF's ``BertNormalizer``)."""
    if norm.clean_text:
        a = a.filter(lambda c: not (c in "\0\ufffd" or is_bert_control(c)))
        a = a.map_chars(lambda c: " " if is_whitespace(c) else c)
    if norm.handle_chinese_chars:
        a = a.map_chars(lambda c: f" {c} " if is_chinese_char(c) else c)
    strip = norm.lowercase if norm.strip_accents is None else norm.strip_accents
    if strip:
        a = a._normalize_segments("NFD")
        a = a.filter(lambda c: not regex.match(r"\p{Mn}", c))
    if norm.lowercase:
        a = a.map_chars(str.lower)
    return a


@settings(max_examples=200, deadline=None)
@given(text=st.one_of(_TEXT, _LONG), clean=st.booleans(), cjk=st.booleans(),
       strip=st.sampled_from([None, True, False]), lower=st.booleans())
def test_bert_normalizer_equals_its_steps_and_hf(text: str, clean: bool, cjk: bool,
                                                 strip: bool | None, lower: bool) -> None:
    text = text.replace("\ud800", "")  # (HF takes no lone surrogate)
    norm = BertNormalizer(clean, cjk, strip, lower)
    a = Aligned.from_original(text)
    got = norm.normalize(a)
    _same(got, _bert_per_character(norm, a))
    hf = hf_normalizers.BertNormalizer(clean_text=clean, handle_chinese_chars=cjk,
                                       strip_accents=strip, lowercase=lower)
    assert got.text == hf.normalize_str(text)


@settings(max_examples=100, deadline=None)
@given(text=st.one_of(_TEXT, _LONG))
def test_lowercase_and_byte_level_equal_the_per_character_map(text: str) -> None:
    a = _aligned(text.replace("\ud800", ""))
    _same(Lowercase().normalize(a), a.map_chars(str.lower))
    table = bytes_to_unicode()
    _same(ByteLevelNormalizer().normalize(a),
          a.map_chars(lambda c: "".join(table[b] for b in c.encode("utf-8"))))


def test_the_whitespace_runs_keep_what_the_whitespace_step_keeps() -> None:
    """The BERT pre-tokenizer's first step as runs: their class is the whitespace
    step's complement, code point by code point."""
    runs = _KEPT_RUNS[(is_whitespace, "Removed")]
    found = _CHAR_CLASSES[is_whitespace][0]
    for code in range(0x110000):
        c = chr(code)
        assert (runs.fullmatch(c) is None) == (found.fullmatch(c) is not None) == is_whitespace(c)
    text = "a b\tc\u3000d\u00a0 e\n\nf  "
    a = Aligned.from_original(text, 2)
    kept = [(p.text, p.starts, p.ends)
            for p in _char_split([a], ((is_whitespace, "Removed"),))]
    assert [m.group() for m in runs.finditer(text)] == [t for t, _, _ in kept]
