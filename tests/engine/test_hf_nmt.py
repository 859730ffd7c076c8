"""HF's ``Nmt`` normalizer (sentencepiece's NMT rules) with slices and ``str.translate``:
the text of HF tokenizers' own, and the alignment of doing it a character at a time."""

from __future__ import annotations

import random

import tokenizers

from explorer.engine.hf.normalized import Aligned
from explorer.engine.hf.normalizers import _NMT_REMOVED, _NMT_SPACE, Nmt

PIECES = ["a", "b", " ", "\n", "\r\n", "\t", "\x01", "\x0b", "\x1f", "\x7f", "\x8f", "\x9f",
          "\x0c", "\u1680", "\u200b", "\u200d", "\u2028", "\u2581", "\ufeff", "\ufffd", "é",
          "字", "😀", "\x00", "\x85"]


def one_at_a_time(text: Aligned) -> Aligned:
    """The rules a character at a time (the way before)."""
    text = text.filter(lambda c: ord(c) not in _NMT_REMOVED)
    return text.map_chars(lambda c: " " if ord(c) in _NMT_SPACE else c)


def texts() -> list[str]:
    rng = random.Random(5)
    return ["", "plain", "line\nbreaks\n"] + [
        "".join(rng.choice(PIECES) for _ in range(rng.randint(1, 30))) for _ in range(500)]


def test_the_rules_as_hf_tokenizers_and_aligned_as_one_at_a_time() -> None:
    hf = tokenizers.normalizers.Nmt()
    for text in texts():
        ours = Nmt().normalize(Aligned.from_original(text))
        assert ours.text == hf.normalize_str(text), repr(text)
        reference = one_at_a_time(Aligned.from_original(text))
        assert (ours.text, ours.starts, ours.ends) == (
            reference.text, reference.starts, reference.ends), repr(text)


def test_text_the_rules_leave_alone_comes_back_as_it_is() -> None:
    text = Aligned.from_original("nothing to do here")
    assert Nmt().normalize(text) is text
