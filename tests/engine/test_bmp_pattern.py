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
from explorer.engine.pretokenizers.bmp_pattern import bmp_equivalent, has_astral, samples
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
                    r"(?|a|b)", r"\G\w", r"\p{L"]:
        assert bmp_equivalent(pattern) is None, pattern


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
        assert splitter._unicode_seen < BMP_AFTER
        splitter.split(unicode_text)
    twin = splitter._bmp
    assert splitter._for(unicode_text)[0] == twin.findall
    assert splitter._for(emoji_text)[0] != twin.findall
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
