"""Split patterns rewritten for Python's ``re`` on ASCII-only text split exactly as ``regex``."""

from __future__ import annotations

import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from explorer.bundled import resource_path
from explorer.engine.pretokenizers import patterns
from explorer.engine.pretokenizers.ascii_pattern import ascii_equivalent
from explorer.engine.pretokenizers.regex_split import RegexSplitter

KNOWN = {name: getattr(patterns, name) for name in dir(patterns)
         if name.isupper() and isinstance(getattr(patterns, name), str)}

# Characters that decide these patterns (letters of both cases, digits, apostrophes,
# whitespace of every kind incl. the ones only str.isspace() calls space), and all of ASCII.
ASCII = st.text(st.one_of(st.sampled_from("aZs'tdmlrev \n\r\t\x0b\x0c\x1c\x1f09.,!-_/"),
                          st.characters(max_codepoint=127)), max_size=200)


def test_every_known_pattern_has_an_ascii_twin():
    assert {"CL100K", "O200K", "GPT2", "R50K", "LLAMA3", "QWEN2"} <= set(KNOWN)
    for name, pattern in KNOWN.items():
        assert ascii_equivalent(pattern) is not None, name


@settings(max_examples=300, deadline=None)
@given(text=ASCII)
def test_twins_split_random_ascii_text_as_regex_does(text):
    for pattern in KNOWN.values():
        twin = ascii_equivalent(pattern)
        assert twin.findall(text) == regex.findall(pattern, text)


def test_twins_split_real_text_as_regex_does():
    texts = [resource_path("samples", n).read_text(encoding="utf-8")
             for n in ("code.txt", "welcome.txt")]
    texts.append(resource_path("corpus", "botchan.txt").read_text(encoding="utf-8"))
    for text in texts:
        text = "".join(c for c in text if c.isascii())
        for name, pattern in KNOWN.items():
            assert ascii_equivalent(pattern).findall(text) == regex.findall(pattern, text), name


def test_constructs_it_does_not_know_keep_regex():
    for pattern in [r"\X", r"[[:alpha:]]+", r"\N{SPACE}", r"(?V1)[\p{L}--a]", r"\p{L}\K\s",
                    r"(?|a|b)", r"\G\w", r"\p{L"]:
        assert ascii_equivalent(pattern) is None, pattern


def test_classes_that_have_no_ascii_member():
    # \p{Lo} has no ASCII character: alone it never matches, negated it matches everything
    assert ascii_equivalent(r"[\p{Lo}]+|\s").findall("ab c") == [" "]
    assert ascii_equivalent(r"[^\p{Lo}]").findall("a b") == ["a", " ", "b"]
    assert ascii_equivalent(r"\p{Lo}|x").findall("axb") == ["x"]


def test_splitter_uses_the_twin_only_on_ascii_text():
    splitter = RegexSplitter(patterns.CL100K)
    for text in ["plain ascii, it's 2024!\n", "caf\u00e9 na\u00efve \u65e5\u672c 123", ""]:
        assert splitter.split(text) == regex.findall(patterns.CL100K, text)
        assert [c for c, _s, _e in splitter.split_with_spans(text)] == splitter.split(text)
