"""The UTF-8 bytes of many spans of a text, by array passes (byte-fallback unknowns)."""

from __future__ import annotations

from itertools import pairwise

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from explorer.engine.sentencepiece.tokenizer import utf8_of_spans

_CHARS = st.sampled_from(["a", "_", "=", " ", "é", "\u0301", "中", "\U00020000", "😀",
                          "\ud800", "\x00", "\u0800", "\uffff"])


@settings(max_examples=300, deadline=None)
@given(st.lists(_CHARS, max_size=60).map("".join), st.data())
def test_spans_bytes_equal_each_span_encoded(text: str, data: st.DataObject) -> None:
    cuts = sorted(data.draw(st.lists(st.integers(0, len(text)), max_size=20)))
    spans = [(a, b) for a, b in pairwise(cuts)
             if data.draw(st.booleans())]
    starts = np.array([a for a, _ in spans], np.int64)
    ends = np.array([b for _, b in spans], np.int64)
    raw, lengths = utf8_of_spans(text, starts, ends)
    pieces = [text[a:b].encode("utf-8", "surrogatepass") for a, b in spans]
    assert raw.tobytes() == b"".join(pieces)
    assert lengths.tolist() == [len(p) for p in pieces]


def test_an_ascii_text_and_no_spans() -> None:
    raw, lengths = utf8_of_spans("a_b=c", np.array([1, 3]), np.array([2, 5]))
    assert raw.tobytes() == b"_=c" and lengths.tolist() == [1, 2]
    raw, lengths = utf8_of_spans("中文", np.zeros(0, np.int64), np.zeros(0, np.int64))
    assert raw.size == 0 and lengths.size == 0
