"""Normalizers with alignment: sentencepiece parity (text and offsets) and Unicode forms."""

from __future__ import annotations

import functools
import random
import struct
import unicodedata
from pathlib import Path

import pytest
import sentencepiece as spm
from hypothesis import given, settings
from hypothesis import strategies as st
from scratch import scratch_dir
from sp_support import REFERENCE_MODELS, TRAINED, multilingual_lines, reference_model, trained_model

from explorer.engine.errors import VocabFormatError
from explorer.engine.formats.sentencepiece_model import parse_model_proto
from explorer.engine.normalizers import (
    IdentityNormalizer,
    PrecompiledCharsMap,
    SentencePieceNormalizer,
    SequenceNormalizer,
    UnicodeNormalizer,
)

TRICKY = list(
    " \t\n\r\u3000\u00a0\u200b\u200d¨´ﬁﬂ½①ｶﾞ㍱ e\u0301\u0308ab▁中日本語ภาษา👍🏽🇯🇵Å\u212b\ufb01xyz.,!"
)
tricky_text = st.text(alphabet=st.sampled_from(TRICKY), max_size=24)


def _model_path(model: str):
    if model in TRAINED:
        return trained_model(model)
    return reference_model(*model.split("/"))


def _normalizer(path) -> SentencePieceNormalizer:
    proto = parse_model_proto(path.read_bytes())
    spec = proto.normalizer_spec
    return SentencePieceNormalizer.from_spec(
        name=spec.name,
        precompiled_charsmap=spec.precompiled_charsmap,
        add_dummy_prefix=spec.add_dummy_prefix,
        remove_extra_whitespaces=spec.remove_extra_whitespaces,
        escape_whitespaces=spec.escape_whitespaces,
        treat_whitespace_as_suffix=proto.trainer_spec.treat_whitespace_as_suffix,
        user_defined_symbols=[p.piece for p in proto.pieces if p.type == 4],
    )


MODELS = [f"{k}/{n}" for k, n in REFERENCE_MODELS[:4]] + list(TRAINED)


@pytest.mark.parametrize("model", MODELS)
def test_text_and_offsets_match_sentencepiece_normalize(model: str) -> None:
    path = _model_path(model)
    sp = spm.SentencePieceProcessor(model_file=str(path))
    norm = _normalizer(path)
    for text in multilingual_lines():
        expected_text, expected_offsets = sp.Normalize(text, with_offsets=True)
        got = norm.normalize(text)
        assert got.text == expected_text, text
        assert got.norm_to_orig == list(expected_offsets), text
        assert norm.normalize_text(text) == expected_text, text


@settings(max_examples=150, deadline=None)
@given(text=tricky_text)
def test_random_text_matches_sentencepiece_normalize(text: str) -> None:
    for model in ["sentencepiece/botchan_en_unigram_1000.model", "uni_nows", "bpe_suffix"]:
        path = _model_path(model)
        expected_text, expected_offsets = _sp(str(path)).Normalize(text, with_offsets=True)
        got = _cached_normalizer(str(path)).normalize(text)
        assert (got.text, got.norm_to_orig) == (expected_text, list(expected_offsets))
        assert _cached_normalizer(str(path)).normalize_text(text) == expected_text


# characters whose rules (if any) map one character to one: the simplest texts of the array
# path of SentencePieceNormalizer.normalize (_normalize_arrays)
ONE_TO_ONE = list(" \t\n\r\u3000\u00a0ab▁中日本語ｶＡ👍🏽xyz.,!")


@settings(max_examples=40, deadline=None)
@given(text=st.one_of(st.text(alphabet=st.sampled_from(ONE_TO_ONE), min_size=256,
                              max_size=700),
                      st.text(alphabet=st.sampled_from(TRICKY), min_size=256, max_size=700)))
def test_long_random_text_matches_sentencepiece_normalize(text: str) -> None:
    for model in ["sentencepiece/botchan_en_unigram_1000.model", "uni_nfkc", "uni_nows",
                  "bpe_suffix", "uni_nfkc_bytes_user"]:
        path = _model_path(model)
        expected_text, expected_offsets = _sp(str(path)).Normalize(text, with_offsets=True)
        got = _cached_normalizer(str(path)).normalize(text)
        assert (got.text, got.norm_to_orig) == (expected_text, list(expected_offsets))


def test_long_texts_take_the_array_path() -> None:
    path = str(_model_path("uni_nfkc"))
    norm = _cached_normalizer(path)
    text = "  Hello\n\n   wörld  ｶ\u3000x  " * 20
    # one to one; one character becomes two; two become one; a rule to a space first
    for sample in (text, "ﬁ" + text, "e\u0301 ﬁ ´x" + text + "e\u0301", "\u3000ﬁ" + text,
                   "´" + text, " \u200b" + text,
                   # the first character that is not a space past the first few thousand
                   " " * 5000 + "x ﬁ" + text, "\u3000" * 4500 + "ﬁ x" + text):
        fast = norm._normalize_arrays(sample)
        assert fast is not None
        expected_text, expected_offsets = _sp(path).Normalize(sample, with_offsets=True)
        assert (fast.text, fast.norm_to_orig) == (expected_text, list(expected_offsets))
        assert fast.offset_array().tolist() == fast.norm_to_orig


@settings(max_examples=150, deadline=None)
@given(text=st.one_of(st.text(alphabet="CDEFJxy \t\u3000", min_size=256, max_size=400),
                      st.text(alphabet="ABCDEFHJxy \t\u3000", min_size=256, max_size=400)))
def test_array_path_with_custom_rules(text: str) -> None:
    """Longer keys, a rule to one space, replacements with inner and trailing spaces: the
    array path agrees with sentencepiece, and gives way where a replacement holds two
    spaces in a row (A and H here)."""
    path = _custom_rules_model()
    norm = _cached_normalizer(path)
    expected_text, expected_offsets = _sp(path).Normalize(text, with_offsets=True)
    fast = norm._normalize_arrays(text)
    assert (fast is None) == ("A" in text or "H" in text)
    got = norm.normalize(text)
    assert (got.text, got.norm_to_orig) == (expected_text, list(expected_offsets))


_SP: dict = {}
_NORM: dict = {}


def _sp(path: str) -> spm.SentencePieceProcessor:
    if path not in _SP:
        _SP[path] = spm.SentencePieceProcessor(model_file=path)
    return _SP[path]


def _cached_normalizer(path: str) -> SentencePieceNormalizer:

    if path not in _NORM:
        _NORM[path] = _normalizer(Path(path))
    return _NORM[path]


def test_precompiled_charsmap_rules_agree_with_the_double_array() -> None:
    proto = parse_model_proto(
        reference_model("sentencepiece", "kyoto_ja_unigram_8000.model").read_bytes()
    )
    cmap = PrecompiledCharsMap.from_bytes(proto.normalizer_spec.precompiled_charsmap)
    assert len(cmap.rules) > 10000
    assert cmap.rules["ｶ"] == "カ" and cmap.rules["①"] == "1" and cmap.rules["\u3000"] == " "
    for key in list(cmap.rules)[::97]:
        found = cmap.common_prefix_search(key.encode())
        value, length = found[-1]
        assert length == len(key.encode())
        assert cmap.replacement_at(value).decode() == cmap.rules[key]
    assert cmap.longest_match("xｶﾞy", 1) == ("ガ", 2)  # the two-character rule wins
    assert cmap.longest_match("abc", 0) is None


def test_longest_match_without_the_rules_is_the_longest_rule() -> None:
    """Where no longer key can start (the next character is no key's second), the match
    comes from the one-character rules alone; it is the rules' longest match everywhere."""
    proto = parse_model_proto(
        reference_model("sentencepiece", "kyoto_ja_unigram_8000.model").read_bytes()
    )
    cmap = PrecompiledCharsMap.from_bytes(proto.normalizer_spec.precompiled_charsmap)
    rules = cmap.rules
    longer = [k for k in rules if len(k) > 1]
    chars = sorted({c for k in longer[::50] for c in k} | set("…ﬅ´ ①ｶﾞa\u0301"))
    rng = random.Random(5)
    text = "".join(rng.choice(chars) for _ in range(20000)) + "".join(longer[::40])

    def slow(pos: int) -> tuple[str, int] | None:
        for length in range(min(cmap.max_key_len, len(text) - pos), 0, -1):
            if text[pos : pos + length] in rules:
                return rules[text[pos : pos + length]], length
        return None

    assert [cmap.longest_match(text, i) for i in range(len(text))] == list(
        map(slow, range(len(text))))
    assert cmap.longest_match("…", 0) == (rules["…"], 1)  # (the text's last character)


def test_longest_match_from_the_double_array_is_the_rules_one() -> None:
    """Without its rules read (the window's normalizer never reads them), the longest match
    comes from the double array: the same as the rules' everywhere, lone surrogates and
    keys cut short by the text's end included, and the rules stay unread."""
    blob = parse_model_proto(
        reference_model("sentencepiece", "kyoto_ja_unigram_8000.model").read_bytes()
    ).normalizer_spec.precompiled_charsmap
    rules = PrecompiledCharsMap.from_bytes(blob).rules
    cmap = PrecompiledCharsMap.from_bytes(blob)
    cmap.__dict__.pop("_rules", None)
    longer = [k for k in rules if len(k) > 1]
    chars = sorted({c for k in longer[::30] for c in k} | set("…ﬅ´ ①ｶﾞa\u0301\ud800\U00020000"))
    rng = random.Random(7)
    text = "".join(rng.choice(chars) for _ in range(20000)) + "".join(longer[::25]) + longer[0][:-1]

    def slow(pos: int) -> tuple[str, int] | None:
        for length in range(min(cmap.max_key_len, len(text) - pos), 0, -1):
            if text[pos : pos + length] in rules:
                return rules[text[pos : pos + length]], length
        return None

    expected = list(map(slow, range(len(text))))
    assert sum(1 for m in expected if m is not None and m[1] > 1) > 500
    assert [cmap.longest_match(text, i) for i in range(len(text))] == expected
    assert "_rules" not in cmap.__dict__


def test_a_charsmap_pickles_as_its_blob_and_comes_back_equal() -> None:
    import pickle

    proto = parse_model_proto(
        reference_model("sentencepiece", "kyoto_ja_unigram_8000.model").read_bytes()
    )
    cmap = PrecompiledCharsMap.from_bytes(proto.normalizer_spec.precompiled_charsmap)
    data = pickle.dumps(cmap)
    assert len(data) < len(proto.normalizer_spec.precompiled_charsmap) + 1000  # no rules in it
    assert pickle.loads(data) == cmap


def test_broken_charsmap_blobs_raise() -> None:
    with pytest.raises(VocabFormatError, match="broken"):
        PrecompiledCharsMap.from_bytes(b"\x01\x00")
    with pytest.raises(VocabFormatError, match="does not fit"):
        PrecompiledCharsMap.from_bytes(struct.pack("<I", 4000) + b"\x00" * 16)


def test_whitespace_options_without_charsmap() -> None:
    norm = SentencePieceNormalizer()
    assert norm.normalize("  a  b  ").text == "▁a▁b"
    assert norm.normalize("  a  b  ").norm_to_orig == [2, 2, 3, 5, 6]
    keep = SentencePieceNormalizer(add_dummy_prefix=False, remove_extra_whitespaces=False)
    assert keep.normalize(" a  b ").text == "▁a▁▁b▁"
    plain = SentencePieceNormalizer(escape_whitespaces=False)
    assert plain.normalize("a  b").text == " a b"
    user = SentencePieceNormalizer(user_defined_symbols=["  "], remove_extra_whitespaces=False)
    assert user.normalize("a  b").text == "▁a▁▁b"


@pytest.mark.parametrize("form", ["NFC", "NFD", "NFKC", "NFKD"])
def test_unicode_forms_equal_unicodedata_and_align(form: str) -> None:
    norm = UnicodeNormalizer(form)
    for text in multilingual_lines():
        got = norm.normalize(text)
        assert got.text == unicodedata.normalize(form, text)
        _check_alignment(text, got.text, got.norm_to_orig)


@settings(max_examples=200, deadline=None)
@given(text=tricky_text)
def test_every_normalizer_aligns_monotonically(text: str) -> None:
    normalizers = [
        IdentityNormalizer(),
        UnicodeNormalizer("NFKC"),
        UnicodeNormalizer("NFD"),
        SequenceNormalizer([UnicodeNormalizer("NFKC"), SentencePieceNormalizer()]),
        _cached_normalizer(str(reference_model("sentencepiece", "botchan_en_unigram_1000.model"))),
    ]
    for norm in normalizers:
        got = norm.normalize(text)
        _check_alignment(text, got.text, got.norm_to_orig)


def _check_alignment(text: str, normalized: str, n2o: list[int]) -> None:
    assert len(n2o) == len(normalized) + 1
    assert all(0 <= o <= len(text) for o in n2o)
    assert n2o == sorted(n2o)


def test_unicode_segments_map_to_their_source() -> None:
    got = UnicodeNormalizer("NFKC").normalize("xﬁe\u0301")
    assert got.text == "xfié"
    assert got.norm_to_orig == [0, 1, 1, 2, 4]
    composed = SequenceNormalizer([UnicodeNormalizer("NFKC"), SentencePieceNormalizer()])
    assert composed.normalize(" ﬁ  x").text == "▁fi▁x"
    assert composed.normalize(" ﬁ  x").norm_to_orig == [1, 1, 1, 2, 4, 5]


@functools.cache
def _custom_rules_model() -> str:
    """A model whose charsmap has rules the text fast path must treat with care: two spaces
    inside a replacement, trailing spaces, a deletion and two-character keys."""
    folder = scratch_dir("sp-rules-")
    rules = folder / "rules.tsv"
    rules.write_text(
        "41\t20 20 42\n"  # A -> "  B"
        "43\t20\n"  # C -> " "
        "48\t49 20 20\n"  # H -> "I  "
        "45 46\t47\n"  # EF -> G
        "4A\t4B 20 4C\n"  # J -> "K L"
        "3000\t20\n",  # ideographic space -> " "
        encoding="utf-8",
    )
    corpus = folder / "corpus.txt"
    corpus.write_text("\n".join(["ABC EF HIJ xy zz"] * 50 + ["hello world"] * 50) + "\n")
    spm.SentencePieceTrainer.train(
        input=str(corpus),
        model_prefix=str(folder / "rules"),
        vocab_size=30,
        hard_vocab_limit=False,
        normalization_rule_tsv=str(rules),
        num_threads=1,
        minloglevel=2,
    )
    return str(folder / "rules.model")


@settings(max_examples=300, deadline=None)
@given(text=st.text(alphabet="ABCEFHJxy \t\u3000", max_size=20))
def test_text_fast_path_with_spaces_in_replacements(text: str) -> None:
    path = _custom_rules_model()
    expected = _sp(path).Normalize(text)
    norm = _cached_normalizer(path)
    assert norm.normalize(text).text == expected
    assert norm.normalize_text(text) == expected


@pytest.mark.parametrize("seed", range(3))
def test_long_text_only_path_matches_sentencepiece(seed: int) -> None:
    """normalize_text takes the array path from 8192 characters (text only)."""
    import random

    rng = random.Random(seed)
    text = "".join(rng.choice(TRICKY) for _ in range(9000))
    for model in ["sentencepiece/botchan_en_unigram_1000.model", "uni_nfkc", "uni_nows",
                  "bpe_suffix", "uni_nfkc_bytes_user"]:
        path = str(_model_path(model))
        assert _cached_normalizer(path).normalize_text(text) == _sp(path).Normalize(text), model
    custom = _custom_rules_model()
    for alphabet in ("CDEFJxy \t\u3000", "ABCDEFHJxy \t\u3000"):
        text = "".join(rng.choice(alphabet) for _ in range(9000))
        assert _cached_normalizer(custom).normalize_text(text) == _sp(custom).Normalize(text)


def test_normalized_from_an_offset_array_makes_its_list_on_first_use() -> None:
    import pickle

    import numpy as np

    from explorer.engine.normalizers.base import Normalized

    offsets = np.array([0, 0, 1, 3], np.int64)
    lazy = Normalized("\u2581ab", offsets=offsets)
    assert lazy._norm_to_orig is None  # nothing built until asked
    assert lazy == Normalized("\u2581ab", [0, 0, 1, 3])
    assert lazy.norm_to_orig == [0, 0, 1, 3] and lazy.orig_span(1, 3) == (0, 3)
    again = pickle.loads(pickle.dumps(lazy))
    assert again == lazy and again.offset_array().tolist() == [0, 0, 1, 3]
    with pytest.raises(AttributeError):
        lazy.text = "x"  # type: ignore[misc]
    with pytest.raises(ValueError):
        Normalized("x")


def test_longest_matches_kept_decide_as_the_rules_do() -> None:
    """The array path keeps the longest match at each text as long as the longest key
    (decomposed letters and their marks recur): texts met again, a key cut short by the
    text's end, and after the kept matches are cleared, all as sentencepiece decides."""
    from explorer.engine.normalizers import sentencepiece as sp_norm

    path = _custom_rules_model()
    norm = _cached_normalizer(path)
    norm._matches.clear()
    base = "CDEF xy CDx CD EF DEFx " * 30
    samples = [base, base, base + "CD", base + "C", "e\u0301" + base + "CDE", base + "CDEF"]
    for sample in samples:
        expected_text, expected_offsets = _sp(path).Normalize(sample, with_offsets=True)
        got = norm._normalize_arrays(sample)
        assert got is not None
        assert (got.text, got.norm_to_orig) == (expected_text, list(expected_offsets)), sample
    assert norm._matches  # (kept)
    kept = sp_norm.MATCHES_KEPT
    try:
        sp_norm.MATCHES_KEPT = 0  # (cleared at every call)
        got = norm._normalize_arrays(base + "CD")
        assert got is not None and got.text == _sp(path).Normalize(base + "CD")
    finally:
        sp_norm.MATCHES_KEPT = kept
