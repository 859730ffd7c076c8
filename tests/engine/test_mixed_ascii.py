"""Mostly-ASCII text split with ``re`` on its ASCII stretches and ``regex`` around the rest
(explorer/engine/pretokenizers/mixed_ascii.py) splits exactly as ``regex`` on all of it."""

from __future__ import annotations

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from explorer.bundled import resource_path
from explorer.engine.pretokenizers import mixed_ascii
from explorer.engine.pretokenizers.ascii_pattern import ascii_equivalent
from explorer.engine.pretokenizers.mixed_ascii import SPLICED, mixed_findall
from explorer.engine.pretokenizers.patterns import PATTERNS
from explorer.engine.pretokenizers.regex_split import RegexSplitter

# what decides these patterns: letters of both cases, digits, apostrophes (straight and
# curly), every kind of whitespace, punctuation incl. "/", and non-ASCII letters, marks,
# digits, spaces, emoji and CJK; runs of the same character make long class runs
PIECES = st.one_of(
    st.sampled_from(list("aZs'tdmlrevQ \n\r\t\x0b\x0c\x1c\x1f09.,!-_/{}\":")),
    st.sampled_from(["é", "É", "’", "“", "\u0301", "٣", "\u00a0", "\u2028", "😀", "日本",
                     "𠀋", "ß", "ǅ"]),
    st.sampled_from(["   ", "\n\n", "aaaaaaaa", "ABCdef", "'s", "'LL", "1234567", "....",
                     " \n ", "  \n"]),
)
TEXTS = st.lists(PIECES, max_size=120).map("".join)


@pytest.fixture(autouse=True)
def _stitch_everything(monkeypatch):
    """Stitch at every non-ASCII run, however dense (the app scans dense text whole)."""
    monkeypatch.setattr(mixed_ascii, "SPARSE", 1)


def test_the_known_patterns_are_the_stitched_ones():
    assert set(PATTERNS.values()) == SPLICED
    for pattern in SPLICED:
        assert ascii_equivalent(pattern) is not None


@settings(max_examples=400, deadline=None)
@given(text=TEXTS)
def test_random_mixed_text_splits_as_regex_does(text):
    for pattern in SPLICED:
        slow = regex.compile(pattern)
        assert mixed_findall(ascii_equivalent(pattern), slow, text) == slow.findall(text), \
            pattern


def test_without_the_margins_the_split_differs(monkeypatch):
    """The margins are what make it exact: fast chunks kept up to the non-ASCII run itself
    (``caf`` of ``café``), or the slow scan stopped right after it, split differently."""
    slow = regex.compile(PATTERNS["cl100k"])
    fast = ascii_equivalent(PATTERNS["cl100k"])
    text = "a few words, then a café and éabc more words after it " * 4
    assert mixed_findall(fast, slow, text) == slow.findall(text)
    with monkeypatch.context() as m:
        m.setattr(mixed_ascii, "_before_breaks", lambda text, low, end: end)
        assert mixed_findall(fast, slow, text) != slow.findall(text)

    def no_margin_after(slow, text, a, d, out):  # (the slow scan ends with the run)
        out.extend(slow.findall(text, a, d))
        return d

    with monkeypatch.context() as m:
        m.setattr(mixed_ascii, "_slow_stretch", no_margin_after)
        assert mixed_findall(fast, slow, text) != slow.findall(text)


def test_real_text_with_sparse_non_ascii_splits_as_regex_does(monkeypatch):
    monkeypatch.undo()  # (the app's density rule)
    botchan = resource_path("corpus", "botchan.txt").read_text(encoding="utf-8")
    code = resource_path("samples", "code.txt").read_text(encoding="utf-8")
    text = (botchan.replace("'", "’", 200).replace(" the ", " thé ", 50)
            + code.replace("=", "≡", 20))
    assert not text.isascii()
    for pattern in SPLICED:
        splitter = RegexSplitter(pattern)
        assert splitter.split(text) == regex.findall(pattern, text), pattern
        assert [c for c, _ in splitter.split_with_starts(text)] == \
            regex.findall(pattern, text)


def test_other_patterns_are_not_stitched():
    deepseek_like = r"[\r\n]|\s?\p{L}+|\s?\p{P}+|\p{N}|\s+"
    splitter = RegexSplitter(deepseek_like)
    assert splitter._mixed is None
    assert splitter.split("naïve  text\n") == regex.findall(deepseek_like, "naïve  text\n")


@settings(max_examples=200, deadline=None)
@given(text=TEXTS, block=st.integers(1, 9))
def test_non_ascii_runs_are_found_across_blocks(text, block):
    import re

    mixed_ascii.BLOCK, saved = block, mixed_ascii.BLOCK
    try:
        runs = mixed_ascii._non_ascii_runs(text)
    finally:
        mixed_ascii.BLOCK = saved
    assert runs == [m.span() for m in re.finditer(r"[^\x00-\x7f]+", text)]


def test_dense_non_ascii_text_is_not_stitched(monkeypatch):
    monkeypatch.undo()
    udhr_like = "Всеобщая декларация прав человека " * 2000
    assert mixed_ascii._non_ascii_runs(udhr_like) is None
    sparse = ("plain ascii words " * 100 + "é ") * 50
    assert len(mixed_ascii._non_ascii_runs(sparse)) == 50
