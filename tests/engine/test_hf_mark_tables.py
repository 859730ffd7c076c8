"""HF's combining-mark tables (BertNormalizer strip_accents, StripAccents) against HF itself,
and offsets through accent stripping exactly HF's where marks end words."""

from __future__ import annotations

import sys
import unicodedata

from hf_support import hf_reference
from references import require
from sp_support import udhr_paragraphs
from tokenizers import normalizers

from explorer.engine.formats import load_tokenizer
from explorer.engine.hf.mark_tables import bert_nonspacing_marks, marks
from explorer.engine.hf.normalized import Aligned
from explorer.engine.hf.normalizers import BertNormalizer, StripAccents


def _candidates() -> list[str]:
    """Marks, letters and format characters (where category changes happen), plus our
    tables; unassigned and private-use code points cannot be marks in HF's older tables. No
    canonical decompositions: their strip is NFD's business."""
    out = []
    for o in range(sys.maxunicode + 1):
        c = chr(o)
        cat = unicodedata.category(c)
        if cat in ("Cn", "Co", "Cs") and not (bert_nonspacing_marks().match(c)
                                              or marks().match(c)):
            continue
        if (cat[0] in "ML" or cat == "Cf" or bert_nonspacing_marks().match(c)
                or marks().match(c)) and not unicodedata.decomposition(c)[:1].isalnum():
            out.append(c)
    return out


_CANDIDATES = _candidates()


def test_tables_are_hf_tables() -> None:
    bert = normalizers.BertNormalizer(clean_text=False, handle_chinese_chars=False,
                                      strip_accents=True, lowercase=False)
    sa = normalizers.StripAccents()
    ours_bert = BertNormalizer(False, False, True, False)
    ours_sa = StripAccents()
    # one HF call per batch of characters, each after an 'a' and followed by a '|'
    for step in range(0, len(_CANDIDATES), 4096):
        chunk = _CANDIDATES[step:step + 4096]
        text = "".join(f"a{c}|" for c in chunk)
        for ref, ours in ((bert, ours_bert), (sa, ours_sa)):
            want = ref.normalize_str(text)
            got = ours.normalize(Aligned.from_original(text)).text
            if got != want:
                bad = [c for c in chunk if ours.normalize(Aligned.from_original(f"a{c}")).text
                       != ref.normalize_str(f"a{c}")]
                raise AssertionError(f"{type(ref).__name__}: {[hex(ord(c)) for c in bad]}")


WORD_END_TEXTS = [
    "𞤀𞤣𞤤𞤢𞥄 𞤢𞤲𞥆𞤢𞥄. x",  # Adlam: marks HF's Unicode 8 table does not know, at word ends
    "ab\u0301 c\u0301\u0302, Ünïcödé\u0308 x",  # marks stripped at word ends
    "\u0301ab \u0308 \u0301\u0301. E\u0301COLE",  # leading marks, marks alone
    "ﬁ\u0301n ½\u0301 ＡＢＣ\u0301 Å\u030a",  # NFD changes then strip
    "नमस्ते\u094d हिं\u0902 \u1734a \u1cf7b",  # Indic signs, category-changed characters
]


def test_minilm_offsets_equal_hf_where_marks_end_words() -> None:
    path = require("minilm", "tokenizer.json")
    ours, ref = load_tokenizer(path), hf_reference(path)
    require("udhr", "declaration/fuf_adlm.html")  # Fulfulde in Adlam script
    adlam = udhr_paragraphs("fuf_adlm")
    assert len(adlam) > 20
    for text in WORD_END_TEXTS + adlam:
        want = ref.encode(text, add_special_tokens=False)
        got = ours.encode(text)
        assert got.ids == want.ids, text
        assert got.offsets == want.offsets, text
        assert ours.stages(text).normalized == ref.normalizer.normalize_str(text), text
