"""HF's ``Precompiled`` normalizer (a SentencePiece charsmap applied grapheme by grapheme):
only the graphemes around characters that can change are cut out; the result, text and
alignment, is the one of cutting every grapheme, and HF tokenizers' own."""

from __future__ import annotations

import random
from functools import cache

import tokenizers
from sp_support import reference_model

from explorer.engine.formats.sentencepiece_model import parse_model_proto
from explorer.engine.hf.normalized import Aligned, concat
from explorer.engine.hf.normalizers import Precompiled
from explorer.engine.normalizers import PrecompiledCharsMap

PIECES = [
    "a", "b", "Z", " ", "  ", ".", "<", "=", ">", "\n", "\r\n", "\r", "\t", "\x01", "\x7f",
    "e\u0301", "\u0301", "\u0600", "\u06001", "\u1100\u1161", "\u1161", "ｶﾞ", "ｶ", "ﾞ",
    "👩\u200d💻", "\u200d", "①", "\u3000", "🇫🇷", "ﬁ", "Å", "字", "𠀀", "\u0915\u094d\u0937",
]


@cache
def blob() -> bytes:
    proto = parse_model_proto(
        reference_model("sentencepiece", "kyoto_ja_unigram_8000.model").read_bytes())
    return proto.normalizer_spec.precompiled_charsmap


def every_grapheme(charsmap: PrecompiledCharsMap, text: Aligned) -> Aligned:
    """The rules applied to every grapheme of the text (the way before the fast path)."""
    parts: list[Aligned] = []
    Precompiled._graphemes(text, 0, len(text.text), charsmap.rules, parts)
    return concat(parts)


def texts() -> list[str]:
    rng = random.Random(3)
    out = ["", "plain ascii text", "e\u0301", "a\u0600", "\u06001 x", "x\r\ny", "ab\u0301c"]
    out += ["".join(rng.choice(PIECES) for _ in range(rng.randint(1, 40))) for _ in range(600)]
    return out


def test_the_graphemes_that_can_change_give_every_graphemes_result() -> None:
    charsmap = PrecompiledCharsMap.from_bytes(blob())
    normalizer = Precompiled(charsmap)
    for text in texts():
        ours = normalizer.normalize(Aligned.from_original(text))
        reference = every_grapheme(charsmap, Aligned.from_original(text))
        assert (ours.text, ours.starts, ours.ends) == (
            reference.text, reference.starts, reference.ends), repr(text)


def test_the_same_text_as_hf_tokenizers() -> None:
    normalizer = Precompiled(PrecompiledCharsMap.from_bytes(blob()))
    hf = tokenizers.normalizers.Precompiled(blob())
    for text in texts():
        assert normalizer.normalize(Aligned.from_original(text)).text == hf.normalize_str(text)


def test_a_short_grapheme_takes_the_rule_that_begins_it_as_hf_does() -> None:
    """HF looks a grapheme up with the charsmap's common-prefix search and takes the first
    (shortest) rule found: ``ﬁ`` + U+0301 is replaced whole by ``fi``, the mark dropped."""
    normalizer = Precompiled(PrecompiledCharsMap.from_bytes(blob()))
    text = "\ufb01\u0301 x"
    out = normalizer.normalize(Aligned.from_original(text))
    assert out.text == tokenizers.normalizers.Precompiled(blob()).normalize_str(text) == "fi x"
    # (two characters for two: HF's `replace` aligns them one to one)
    assert (out.starts, out.ends) == ([0, 1, 2, 3], [1, 2, 3, 4])


def test_text_with_nothing_to_change_comes_back_as_it_is() -> None:
    normalizer = Precompiled(PrecompiledCharsMap.from_bytes(blob()))
    text = Aligned.from_original("Nothing here changes, not even <this> = that.")
    assert normalizer.normalize(text) is text
