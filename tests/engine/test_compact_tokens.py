"""``Tokenizer.encode_compact``: the arrays and the Tokens rebuilt from them equal ``encode``.

Every engine (tiktoken-style BPE, SentencePiece Unigram/BPE, HF tokenizer.json, GGUF) on real
vocabularies and text that exercises their irregular tokens: special tokens, ``<unk>`` runs,
byte fallback, split UTF-8, normalizers, combining marks, astral characters.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from references import require

from explorer.bundled import resource_path
from explorer.engine.compact import token_table, tokens_of
from explorer.engine.formats import load_tokenizer

TEXT = ("Hello wörld, naïve café!\n  indented\tcode(x) == 42\n\n"
        "<|endoftext|><s> </s> <unk> [CLS] x\u2047y 😀👍🏽 🇫🇷 𠀋 e\u0301 ﬁ Ⅻ 日本語のテキスト "
        "हिन्दी ภาษาไทย \x01\x7f end  ")
ASCII = ("def f(x):\n    return x  # ok\n\n\tlast   line  \x01\x7f <|endoftext|>"
         " <s> [CLS] end  ") * 3
FILES = [
    ("gpt-tokenizer", "cl100k_base.tiktoken"),
    ("gpt-tokenizer", "o200k_base.tiktoken"),
    ("sentencepiece", "botchan_en_unigram_1000.model"),
    ("sentencepiece", "kyoto_ja_unigram_8000.model"),
    ("mistral-common", "tokenizer.model.v1"),
    ("mon-tokenizer", "mon_tokenizer.json"),
    ("minilm", "tokenizer.json"),
    ("llama-cpp", "ggml-vocab-llama-bpe.gguf"),
    ("llama-cpp", "ggml-vocab-nomic-bert-moe.gguf"),
    ("llama-cpp", "ggml-vocab-mpt.gguf"),
]


def _check(tok, text: str) -> None:
    enc = tok.encode(text)
    compact = tok.encode_compact(text)
    assert list(compact.ids) == enc.ids
    assert list(zip(compact.starts, compact.ends, strict=True)) == enc.offsets
    table = token_table(tok)
    assert tokens_of(compact, table, text) == enc.tokens
    unknown = sum(t.unknown for t in compact.irregular.values()) + sum(
        1 for i, tid in enumerate(compact.ids)
        if i not in compact.irregular and tid in compact.unknown_ids)
    assert unknown == sum(t.unknown for t in enc.tokens)


@pytest.mark.parametrize(("pkg", "name"), FILES, ids=[n for _, n in FILES])
def test_compact_tokens_rebuild_exactly(pkg, name):
    tok = load_tokenizer(require(pkg, name))
    _check(tok, TEXT)
    _check(tok, TEXT * 3 + "\n" + TEXT.upper())
    _check(tok, "")
    _check(tok, ASCII)  # (byte-level BPE: spans from the tokens' byte lengths)


def test_bundled_unigram_and_bpe_compact():
    for name in ("corpus_unigram_4k.model", "corpus_bpe_4k.json"):
        _check(load_tokenizer(resource_path("vocab", name)), TEXT)


def test_bpe_compact_stores_no_token_objects():
    """The byte-level BPE fills the arrays directly: no token is irregular."""
    tok = load_tokenizer(resource_path("vocab", "cl100k_base.tiktoken"))
    compact = tok.encode_compact(TEXT * 5)
    assert not compact.irregular and len(compact) > 100


def test_added_tokens_that_are_not_special_are_kept_as_arrays():
    """mpt's runs of spaces are added tokens, not special ones: in a text they are
    reported as added tokens are (special, no score), and that is their compact entry, so
    an indented document holds no Token object for each run (~70 MB at 10 MB)."""
    tok = load_tokenizer(require("llama-cpp", "ggml-vocab-mpt.gguf"))
    text = "def f(x):\n    if x:\n        return  x\n" * 50
    compact = tok.encode_compact(text)
    assert 50276 in compact.ids  # (two spaces)
    assert not compact.irregular
    _check(tok, text)


@pytest.mark.parametrize("name", ["uni_identity_bytes", "uni_nfkc_bytes_user",
                                  "bpe_identity_bytes"])
def test_byte_fallback_runs_rebuild_exactly(name):
    # Unknown characters fall back to <0xNN> tokens straight into the arrays (a run of
    # them used to be built as Tokens and compacted); control pieces keep their Tokens.
    from sp_support import multilingual_lines, trained_model

    tok = load_tokenizer(trained_model(name))
    text = "\n".join(multilingual_lines()) + " <ctl> <sep> x<ctl>y 𠀋😀"
    _check(tok, text)
    _check(tok, "𠀋")
    _check(tok, "😀 a 😀")


def test_byte_fallback_tokens_are_kept_as_arrays():
    from sp_support import multilingual_lines

    tok = load_tokenizer(resource_path("vocab", "corpus_unigram_4k.model"))
    text = "\n".join(multilingual_lines())
    compact = tok.encode_compact(text)
    byte_ids = {i for i, p in enumerate(tok.model.pieces) if p.startswith("<0x")}
    assert sum(1 for i in compact.ids if i in byte_ids) > 100  # scripts the 4k lacks
    assert not compact.irregular
    _check(tok, text)


def test_bpe_compact_with_a_pattern_that_skips_characters():
    """A split pattern that matches only some characters (tiktoken drops the rest): the
    arrays take the one-pre-token-at-a-time way, with ``finditer``'s spans; pre-tokens of
    several tokens (split UTF-8 included) are laid out in both ways, memoised or not."""
    from explorer.engine.bpe.tokenizer import ByteLevelBPETokenizer

    cl100k = load_tokenizer(resource_path("vocab", "cl100k_base.tiktoken"))
    ranks = cl100k.vocab.bytes_to_id
    for pattern in (r"\p{L}+|\p{N}", r"[^\s]+|\s+(?!\S)|\s+"):
        tok = ByteLevelBPETokenizer(ranks, pattern)
        for text in (TEXT, TEXT + TEXT, "𠀋😀 x  \n 😀👍🏽", "", ASCII):
            _check(tok, text)


@settings(max_examples=150, deadline=None)
@given(text=st.lists(st.sampled_from(
    [*"ab Z9 \n\t.,'", *"ßé語日本ไทยहिन्दी", "😀", "👍🏽", "𠀋", "e\u0301", "\u200d"]),
    max_size=60).map("".join))
def test_byte_level_bpe_spans_from_byte_positions(text: str) -> None:
    """A non-ASCII segment's spans come from its tokens' byte positions, for the whole
    segment at once: the same as each pre-token laid out alone (split UTF-8 included)."""
    for name in ("cl100k_base.tiktoken", "o200k_base.tiktoken"):
        _check(_bundled(name), text)


_LOADED: dict[str, object] = {}


def _bundled(name: str):
    tok = _LOADED.get(name)
    if tok is None:
        tok = _LOADED[name] = load_tokenizer(resource_path("vocab", name))
    return tok


def test_the_models_unknown_pieces_are_kept_as_arrays():
    """all-MiniLM lists ``[UNK]`` among its special added tokens, but the WordPiece model
    reports an unknown word as ``[UNK]`` not special: that is its compact entry, so a text
    of unknown words holds no Token object for each (a CJK document: 1.2 million, ~300 MB);
    the literal ``[UNK]`` typed in the text (an added special token) is the exception."""
    tok = load_tokenizer(require("minilm", "tokenizer.json"))
    text = "abc 한국어 ○ ◎ ☆ ♪ ⌘ xyz " * 40 + " [UNK] end"
    _check(tok, text)
    compact = tok.encode_compact(text)
    unk = tok.token_to_id("[UNK]")
    assert list(compact.ids).count(unk) > 40 and unk in compact.unknown_ids
    odd = [t for i, t in compact.irregular.items() if i]  # (the first word: no space before)
    assert [t.piece for t in odd] == ["[UNK]"] and odd[0].special


def test_joined_at_is_the_whole_encode_with_its_resume_points():
    """:func:`joined_at` of a Unigram text's tokens and of its end encoded again from one of
    their resume points: the whole text's tokens, irregular ones (byte fallback) and resume
    points included, at several places (``head`` is reused, so each join gets a fresh one)."""
    from explorer.engine.compact import joined_at

    tok = load_tokenizer(resource_path("vocab", "corpus_unigram_4k.model"))
    text = "\n".join(f"line {k}: x_{k} = {{'😀': {k}}} naïve 𠀋 <tag>{'<s>' * (k % 3)}"
                     for k in range(300))
    whole = tok.encode_compact_resumed(text, None)
    assert whole.resume is not None and whole.irregular
    offsets = whole.resume.offsets
    joined = 0
    for at in (offsets[len(offsets) // 5], offsets[len(offsets) // 2], offsets[-3]):
        line = text.rfind("\n", 0, at - 1) + 1
        state = whole.resume.states[offsets.index(at)]
        tail = tok.encode_compact_resumed(text[line:], (at - line, state))
        # the head: an encode of a shorter text (a window before it grew), whose tokens
        # after `at` are not the whole text's (specials where it has none)
        cut = text.find("\n", at) + 1 or len(text)
        head = tok.encode_compact_resumed(text[:cut] + "<s>" * 9, None)
        out = joined_at(head, at, tail, line)
        assert out.ids == whole.ids and out.starts == whole.starts and out.ends == whole.ends
        table = token_table(tok)
        assert out.irregular.keys() == whole.irregular.keys()
        assert tokens_of(out, table, text) == tokens_of(whole, table, text)
        assert out.resume is not None
        assert out.resume.offsets == whole.resume.offsets
        assert out.resume.states == whole.resume.states
        joined += 1
    assert joined == 3


def test_unknown_runs_are_arrays_or_one_shared_token_per_text():
    """A SentencePiece model without byte fallback makes each ``<unk>`` run one token whose
    piece is the text it covers (normalized): where that is the text itself, the run is
    kept as arrays (its piece rebuilt from the text); where the normalizer changed it
    (NFKC: half-width katakana, ``㍿``), equal runs share one Token. The tokens rebuilt are
    ``encode``'s, spans and pieces included, and the unknown tokens are counted."""
    tok = load_tokenizer(require("sentencepiece", "botchan_en_unigram_1000.model"))
    text = "see 日本 and ☆ then ｱｲ again ☆☆ ㍿ x ｱｲ \n" * 30
    compact = tok.encode_compact(text)
    runs = list(compact.irregular.values())
    assert len(runs) == 90 and {t.piece for t in runs} == {"アイ", "株式会社"}
    assert len({id(t) for t in runs}) == 2
    table = token_table(tok)
    tokens = tok.encode(text).tokens
    assert tokens_of(compact, table, text) == tokens
    unk = tok.model.unk_id
    assert list(compact.ids).count(unk) == sum(t.unknown for t in tokens) >= 30 * 6
    assert unk in compact.unknown_ids
    plain = tok.encode_compact("日本 ☆")
    assert not plain.irregular and list(plain.ids).count(unk) == 2
