"""Split patterns rewritten for Python's ``re`` on text without astral characters split
exactly as ``regex``, and a splitter uses the rewrite only where it is valid."""

from __future__ import annotations

import pickle

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from explorer.bundled import resource_path
from explorer.engine.pretokenizers import patterns, regex_split
from explorer.engine.pretokenizers.bmp_pattern import (
    AstralProxies,
    bmp_equivalent,
    has_astral,
    samples,
)
from explorer.engine.pretokenizers.regex_split import BMP_AFTER, RegexSplitter

KNOWN = {name: getattr(patterns, name) for name in dir(patterns)
         if name.isupper() and isinstance(getattr(patterns, name), str)}

# What decides these patterns: letters of every case and script, marks, digits and other
# numbers, apostrophes, whitespace of every kind (the ones only str.isspace() calls space
# too), lone surrogates, and any BMP character.
DECIDING = "aZsſK'’tdmlrev \n\r\t\x0b\x0c\x1c\x1f\x85\xa0\u2028\u3000" \
           "09²½Ⅻ٣.,!-_/éÉǅʰªשׁא日本ไทยक्षि\u0301\u0903\ud800\udc80"
BMP_TEXT = st.text(st.one_of(st.sampled_from(DECIDING), st.characters(max_codepoint=0xFFFF)),
                   max_size=200)


def _real_texts() -> list[str]:
    return [resource_path(folder, name).read_text(encoding="utf-8")
            for folder, name in (("samples", "multilingual.txt"), ("samples", "emoji.txt"),
                                 ("samples", "code.txt"), ("corpus", "udhr_sample.txt"))]


@pytest.mark.parametrize("name", sorted(KNOWN))
def test_every_known_pattern_has_a_bmp_twin_that_splits_every_bmp_character_as_regex(name):
    twin = bmp_equivalent(KNOWN[name])
    assert twin is not None
    original = regex.compile(KNOWN[name])
    for text in samples(1):  # (every BMP code point, alone and in four neighbourhoods)
        assert [m.span() for m in twin.finditer(text)] == \
            [m.span() for m in original.finditer(text)]


@settings(max_examples=200, deadline=None)
@given(text=BMP_TEXT)
def test_twins_split_random_bmp_text_as_regex_does(text):
    for pattern in KNOWN.values():
        assert bmp_equivalent(pattern).findall(text) == regex.findall(pattern, text)


def test_twins_split_real_text_without_astral_characters_as_regex_does():
    for text in _real_texts():
        text = "".join(c for c in text if c <= "\uffff")
        assert not has_astral(text)
        for name, pattern in KNOWN.items():
            assert bmp_equivalent(pattern).findall(text) == regex.findall(pattern, text), name


def test_has_astral():
    assert not has_astral("") and not has_astral("héllo 日本 \uffff \ud83d")
    assert has_astral("a😀") and has_astral("\U00020000") and has_astral("\U0010ffff")


def test_constructs_it_does_not_know_keep_regex():
    for pattern in [r"\X", r"[[:alpha:]]+", r"\N{SPACE}", r"(?V1)[\p{L}--a]", r"\p{L}\K\s",
                    r"(?|a|b)", r"\G\w", r"\p{L",
                    # \b is re's own idea of a word; classes folded without regard to case
                    r"\b\p{L}+\b", r"(?i)\p{Lu}+", r"(?i:\p{Ll})|x", r"a(?i:[é])",
                    r"(?i:[)]\d)", r"\\(?i:\p{L})"]:
        assert bmp_equivalent(pattern) is None, pattern
    assert bmp_equivalent(r"(?i:[sd]|x)\p{L}") is not None
    assert bmp_equivalent(r"\(?i:\p{L}") is not None  # (an escaped parenthesis: no group)


def test_a_rewrite_that_splits_differently_is_refused(monkeypatch):
    """The rewrite is checked against ``regex``: a class written out wrong (one letter, é,
    left out of ``\\p{L}``) is caught."""
    from explorer.engine.pretokenizers import bmp_pattern

    members = bmp_pattern._members
    wrong = members(r"\p{L}").replace("Ø-ö", "Ø-èê-ö")
    assert wrong != members(r"\p{L}")
    assert bmp_pattern.rewrite(patterns.CL100K) is not None
    monkeypatch.setattr(bmp_pattern, "_members",
                        lambda escape: wrong if escape == r"\p{L}" else members(escape))
    assert bmp_pattern.rewrite(patterns.CL100K) is None
    assert bmp_pattern.rewrite(patterns.GPT2) is None


def test_the_checked_rewrite_is_kept_in_the_vocabulary_cache(tmp_path, monkeypatch):
    from explorer.engine.pretokenizers import bmp_pattern

    monkeypatch.setenv("EXPLORER_CACHE_DIR", str(tmp_path))
    made: list[str] = []
    real = bmp_pattern.rewrite
    monkeypatch.setattr(bmp_pattern, "rewrite", lambda p: made.append(p) or real(p))
    pattern = patterns.LLAMA3 + "|x"
    first = bmp_pattern.bmp_equivalent.__wrapped__(pattern)
    again = bmp_pattern.bmp_equivalent.__wrapped__(pattern)
    assert made == [pattern] and first.pattern == again.pattern
    text = "héllo wörld, 日本語 ǅ 123456 \ud800 'S"
    assert again.findall(text) == regex.findall(pattern, text)
    assert bmp_pattern.bmp_equivalent.__wrapped__(r"\X") is None  # (refused: kept too)
    assert bmp_pattern.bmp_equivalent.__wrapped__(r"\X") is None and made[1:] == [r"\X"]


def test_splitter_takes_the_twin_after_enough_text_and_never_on_astral_text():
    splitter = RegexSplitter(patterns.O200K)
    unicode_text = "Всеобщая декларация прав человека, статья 1. 人人生而自由 café\n" * 40
    emoji_text = unicode_text + "😀👍🏽 𠀋"
    assert splitter.split(unicode_text) == regex.findall(patterns.O200K, unicode_text)
    assert splitter._bmp is None  # (short texts never pay the compile)
    while splitter._bmp is None:
        assert splitter._unicode_seen <= BMP_AFTER
        splitter.split(unicode_text)
    twin = splitter._bmp
    assert splitter._for(unicode_text)[0] == twin.findall
    assert splitter._for(emoji_text)[0].func is regex_split._with_stand_ins
    assert splitter._for("plain ascii")[0] == splitter._ascii.findall
    for text in (unicode_text, emoji_text, *_real_texts()):
        assert splitter.split(text) == regex.findall(patterns.O200K, text)
        assert list(splitter.split_with_starts(text)) == [
            (m.group(), m.start()) for m in regex.finditer(patterns.O200K, text)]
    # a pickled splitter (a child process's) learns it again
    assert pickle.loads(pickle.dumps(splitter))._bmp is None


def test_splitter_keeps_regex_for_a_pattern_without_a_twin(monkeypatch):
    monkeypatch.setattr(regex_split, "BMP_AFTER", 10)
    pattern = r"\X"
    splitter = RegexSplitter(pattern)
    for _ in range(3):
        assert splitter.split("e\u0301 日本") == regex.findall(pattern, "e\u0301 日本")
    assert splitter._bmp is None


# Astral characters of every kind a pattern tells apart: emoji and symbols (So), CJK
# Extension B and Gothic letters (Lo), mathematical and Adlam letters of both cases (Lu, Ll),
# Adlam and Osmanya digits (Nd), Aegean and Counting-rod numbers (No), Gothic's Nl, Brahmi
# and Chakma marks (Mc, Mn), variation selectors (Mn), tags (Cf), private use (Co),
# unassigned and noncharacters (Cn).
ASTRAL = ("😀👍🏽🀄𝄞" "𠀋𠀍𐌰𐌱" "𝐀𝐚𞤀𞤢" "𞥐𞥑𐒠𐒡" "𐄇𝍠𐍁" "\U00011000\U00011001\U00011127"
          "\U000e0100\U000e0041\U000f0000\U0010fffd\U0002fffe\U000e01f0")
ASTRAL_TEXT = st.text(st.one_of(st.sampled_from(DECIDING), st.sampled_from(ASTRAL),
                                st.characters(min_codepoint=0x10000)), max_size=120)


def _twin_split(name: str, text: str) -> list[str] | None:
    pattern = KNOWN[name]
    return AstralProxies(pattern, bmp_equivalent(pattern)).findall(bmp_equivalent(pattern),
                                                                   text)


@pytest.mark.parametrize("name", sorted(KNOWN))
def test_stand_ins_split_text_with_astral_characters_as_regex_does(name):
    contexts = ["".join(f"{before}{c}{after}" for c in ASTRAL)
                for before in ("a", " ", "'", "7", "日", "\u0301", "")
                for after in (" ", "", "b", "\n", "9")]
    for text in [ASTRAL, *contexts, *_real_texts()]:
        assert _twin_split(name, text) == regex.findall(KNOWN[name], text)


@settings(max_examples=200, deadline=None)
@given(text=ASTRAL_TEXT)
def test_stand_ins_split_random_text_as_regex_does(text):
    for name, pattern in KNOWN.items():
        got = _twin_split(name, text)
        assert got is None or got == regex.findall(pattern, text), name


def test_no_stand_in_leaves_the_text_to_regex(monkeypatch):
    from explorer.engine.pretokenizers import bmp_pattern

    monkeypatch.setattr(bmp_pattern, "PROXY_POOL", "à")  # (a letter only: no emoji's)
    assert _twin_split("O200K", "a 𝐚b") is not None
    assert _twin_split("O200K", "a 😀") is None
    astral_literal = patterns.O200K + "|😀"
    assert AstralProxies(astral_literal, bmp_equivalent(astral_literal)).findall(
        bmp_equivalent(astral_literal), "a 𝐚b") is None
    monkeypatch.setattr(regex_split, "BMP_AFTER", 0)
    splitter = RegexSplitter(patterns.O200K)
    for text in ("a 😀 b", "x 𝐚𝐛 'S 😀", "é 😀😀 日本"):
        assert splitter.split(text) == regex.findall(patterns.O200K, text)
    assert splitter._bmp is not None


def test_stand_ins_are_none_of_the_patterns_literals(monkeypatch):
    """An apostrophe or a letter of a contraction in any case (``ſ`` folds to ``s``) never
    stands in for an astral character; a slash or a line break (in a class) never stands in
    for one the class does not hold."""
    from explorer.engine.pretokenizers import bmp_pattern

    # (the dangerous ones first: taken before the usual ones if they were not left out)
    monkeypatch.setattr(bmp_pattern, "PROXY_POOL", "'sſSK\u212a/\r\n" + bmp_pattern.PROXY_POOL)
    text = "".join(f"'{c}/{c}\r{c}\n{c} 'S{c}" for c in "𝐚𐌰😀𝐀𞥐")
    for name, pattern in KNOWN.items():
        twin = bmp_equivalent(pattern)
        proxies = AstralProxies(pattern, twin)
        assert "à" in proxies._stand_ins and "·" in proxies._stand_ins, name
        assert "'" not in proxies._stand_ins, name
        if "(?i:" in pattern:  # (their contractions without regard to case)
            assert not set("sſS") & set(proxies._stand_ins), name
        assert proxies.findall(twin, text) == regex.findall(pattern, text), name
    kelvin = AstralProxies("(?i:k)|[^k]", bmp_equivalent("(?i:k)|[^k]"))._stand_ins
    assert "K" not in kelvin and "\u212a" not in kelvin and "s" in kelvin
    blind_class = AstralProxies("(?i:[sd])|.", bmp_equivalent("(?i:[sd])|."))._stand_ins
    assert "ſ" not in blind_class and "à" in blind_class
    assert bmp_pattern._literals(bmp_equivalent("(?i:s)|x")) == {ord("s"), ord("x")}
    assert bmp_pattern._literals(bmp_equivalent("(?i:[a-z])|x")) is None  # (a blind range)


@pytest.mark.parametrize(("folder", "name"), [("mistral-tekken", "tekken_240911.json"),
                                              ("anthropic-tokenizer", "claude.json")])
def test_loaded_vocabularies_patterns_have_twins_that_split_as_regex(folder, name):
    """The split patterns that real vocabulary files bring (tekken's, Claude's tiktoken
    JSON), through the twin and its stand-ins, on every BMP code point and astral text."""
    import json

    from references import require

    data = json.loads(require(folder, name).read_text(encoding="utf-8"))
    pattern = data.get("pat_str") or data["config"]["pattern"]
    twin = bmp_equivalent(pattern)
    assert twin is not None
    original = regex.compile(pattern)
    for text in samples(1):
        assert [m.span() for m in twin.finditer(text)] == \
            [m.span() for m in original.finditer(text)]
    text = "".join(f"a{c} '{c}S {c}7 日{c}" for c in ASTRAL) + _real_texts()[1]
    assert AstralProxies(pattern, twin).findall(twin, text) == original.findall(text)
