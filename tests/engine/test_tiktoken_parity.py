"""Ids, offsets and pieces identical to tiktoken on the real r50k/p50k/cl100k/o200k/qwen ranks.

Inputs: gpt-tokenizer's TestPlans (expected ids), llama.cpp's gpt-2 / llama-bpe / qwen2 test
strings, and our multilingual corpus (tests/data/multilingual.txt).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from references import require
from tiktoken_support import ENCODINGS, TIKTOKEN_NAMES, llama_cpp_cases, ours, reference

from explorer.engine.pretokenizers import bytes_to_piece

CORPUS = Path(__file__).resolve().parent.parent / "data" / "multilingual.txt"


def _test_plans() -> list[tuple[str, str, list[int]]]:
    try:
        path = require("gpt-tokenizer", "TestPlans.txt")
    except pytest.skip.Exception:
        return []
    cases = []
    for block in path.read_text(encoding="utf-8").split("EncodingName: ")[1:]:
        name, rest = block.split("\n", 1)
        sample, encoded = rest.removeprefix("Sample: ").rsplit("\nEncoded: ", 1)
        ids = [int(x) for x in encoded.strip().strip("[]").split(",") if x.strip()]
        cases.append((TIKTOKEN_NAMES[name], sample, ids))
    return cases


TEST_PLANS = _test_plans()


def assert_same_as_tiktoken(name: str, text: str) -> None:
    """Ids, start offsets, token bytes and pieces of ``text`` equal tiktoken's."""
    tok, ref = ours(name), reference(name)
    expected = ref.encode(text, allowed_special="all")
    enc = tok.encode(text)
    assert enc.ids == expected
    assert tok.encode_ids(text) == expected
    assert [t.start for t in enc] == reference_starts(ref, expected)
    assert [t.token_bytes for t in enc] == [ref.decode_single_token_bytes(i) for i in expected]
    assert enc.pieces == [
        t.token_bytes.decode() if t.special else bytes_to_piece(t.token_bytes) for t in enc
    ]
    # Spans tile the text: each token ends where the next starts, or shares a character.
    for a, b in zip(enc.tokens, enc.tokens[1:], strict=False):
        assert a.end == b.start or (a.end == b.start + 1 and (a.is_partial_utf8
                                                              or b.is_partial_utf8))
    if enc.tokens:
        assert enc.tokens[0].start == 0 and enc.tokens[-1].end == len(text)


def reference_starts(ref, ids: list[int]) -> list[int]:
    return ref.decode_with_offsets(ids)[1]


@pytest.mark.skipif(not TEST_PLANS, reason="gpt-tokenizer TestPlans.txt not fetched")
def test_test_plans_cover_all_cases():
    assert len(TEST_PLANS) == 313  # 249 base-encoding cases + 64 for p50k_edit
    assert len([c for c in TEST_PLANS if c[0] != "p50k_edit"]) == 249


@pytest.mark.parametrize(("name", "sample", "expected"), TEST_PLANS,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(TEST_PLANS)])
def test_gpt_tokenizer_test_plans(name: str, sample: str, expected: list[int]):
    tok = ours(name)
    assert tok.encode(sample).ids == expected
    assert tok.encode_ids(sample) == expected
    assert reference(name).encode(sample, allowed_special="all") == expected


@pytest.mark.parametrize("name", ENCODINGS)
def test_multilingual_corpus_lines(name: str):
    for line in CORPUS.read_text(encoding="utf-8").split("\n"):
        assert_same_as_tiktoken(name, line)


@pytest.mark.parametrize("name", ENCODINGS)
def test_multilingual_corpus_whole(name: str):
    assert_same_as_tiktoken(name, CORPUS.read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", ENCODINGS)
@pytest.mark.parametrize("vocab", ["gpt-2", "llama-bpe", "qwen2"])
def test_llama_cpp_strings_match_tiktoken(name: str, vocab: str):
    for text, _ in llama_cpp_cases(vocab):
        assert_same_as_tiktoken(name, text)


def test_special_tokens_disallowed_like_tiktoken():
    from explorer.engine.errors import SpecialTokenError

    tok, ref = ours("cl100k"), reference("cl100k")
    text = "a <|endoftext|> b <|fim_prefix|>"
    with pytest.raises(SpecialTokenError):
        tok.encode(text, allowed_special=set(), disallowed_special="all")
    with pytest.raises(ValueError):
        ref.encode(text)
    assert tok.encode(text, allowed_special=set()).ids == ref.encode_ordinary(text)
    subset = {"<|fim_prefix|>"}
    assert (tok.encode(text, allowed_special=subset).ids
            == ref.encode(text, allowed_special=subset, disallowed_special=()))
    assert (tok.encode_ids(text, allowed_special=subset)
            == ref.encode(text, allowed_special=subset, disallowed_special=()))
    assert tok.encode_ordinary_ids(text) == ref.encode_ordinary(text)
    enc = tok.encode(text)
    specials = [t for t in enc if t.special]
    assert [(t.piece, t.start, t.end) for t in specials] == [
        ("<|endoftext|>", 2, 15), ("<|fim_prefix|>", 18, 32)]


@pytest.mark.parametrize("name", ENCODINGS)
def test_long_multilingual_text_through_the_re_twin_matches_tiktoken(name: str):
    """Past ``BMP_AFTER`` characters of non-ASCII text a splitter runs its pattern's ``re``
    twin (with stand-ins for astral characters): ids still tiktoken's, on the all-language
    UDHR sample with and without emoji and CJK Extension B."""
    from explorer.bundled import resource_path
    from explorer.engine.pretokenizers.regex_split import BMP_AFTER

    tok, ref = ours(name), reference(name)
    udhr = resource_path("corpus", "udhr_sample.txt").read_text(encoding="utf-8")
    astral = "".join(f"{line} 😀👍🏽 𠀋𝐀𝐚 {k}\n" for k, line in enumerate(udhr.splitlines()[:400]))
    assert len(udhr) > BMP_AFTER
    for text in (udhr, astral, CORPUS.read_text(encoding="utf-8")):
        assert tok.encode_ids(text) == ref.encode(text, allowed_special="all")
        compact = tok.encode_compact(text)
        assert list(compact.ids) == ref.encode(text, allowed_special="all")
    assert tok.splitter._bmp is not None and tok.splitter._proxies is not None
