"""The HF pipeline's fast paths give exactly what the general path and HF tokenizers give.

Fast paths under test: per-piece cached decoded bytes (:mod:`explorer.engine.hf.token_bytes`),
the byte-level word memo (:mod:`explorer.engine.hf.byte_level_memo`), the 1-for-1 character
``Replace``, ``drop_matching``, remembered normalization runs, the char-split memo, the BPE
pair-rank memo and ``encode_ids``. The general path is ``stages()`` (it records every
intermediate piece, so it never takes the memoised shortcuts) and plain re-implementations.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import regex
from hf_support import load_cached, parity_texts
from hypothesis import given, settings
from hypothesis import strategies as st
from references import require
from tokenizers import Tokenizer as HFTokenizer

from explorer.engine.hf.decoders import (
    BPEDecoder,
    ByteFallbackDecoder,
    ByteLevelDecoder,
    FuseDecoder,
    MetaspaceDecoder,
    ReplaceDecoder,
    SequenceDecoder,
    StripDecoder,
    WordPieceDecoder,
    decode_tokens,
)
from explorer.engine.hf.export import to_tokenizer_json
from explorer.engine.hf.normalized import Aligned, _normalized_run, concat
from explorer.engine.hf.pre_tokenizers import bert_pre_tokenizer
from explorer.engine.hf.token_bytes import TokenBytes

DATA = Path(__file__).resolve().parent.parent / "data"


def multilingual() -> list[str]:
    lines = (DATA / "multilingual.txt").read_text(encoding="utf-8").splitlines()
    text = "\n".join(lines)
    return [*lines, text, *parity_texts(), "  double  spaces\t\ttabs ", "x", ""]


FAMILIES = {
    "unigram": ("mon-tokenizer", "mon_tokenizer.json"),
    "wordpiece": ("minilm", "tokenizer.json"),
    "llama3-bpe": ("llama-cpp", "ggml-vocab-llama-bpe.gguf"),
    "qwen2-bpe": ("llama-cpp", "ggml-vocab-qwen2.gguf"),
    "gpt2-bpe": ("llama-cpp", "ggml-vocab-gpt-2.gguf"),
}


def family(name: str):
    """Our tokenizer and HF's for the same file (GGUF files through our exporter)."""
    path = require(*FAMILIES[name])
    ours = load_cached(path)
    if path.suffix == ".gguf":
        ref = HFTokenizer.from_str(json.dumps(to_tokenizer_json(ours)))
    else:
        ref = HFTokenizer.from_file(str(path))
    ref.no_padding()
    ref.no_truncation()
    return ours, ref


@pytest.mark.parametrize("name", list(FAMILIES))
def test_encode_matches_general_path_and_hf(name: str) -> None:
    ours, ref = family(name)
    for text in multilingual():
        fast = ours.encode(text)
        slow = ours.stages(text).encoding  # the traced, un-memoised path
        assert fast.tokens == slow.tokens, text
        assert ours.encode_ids(text) == fast.ids, text
        e = ref.encode(text, add_special_tokens=False)
        assert fast.ids == e.ids, text
        assert fast.pieces == e.tokens, text
        assert fast.offsets == [tuple(x) for x in e.offsets], text


@pytest.mark.parametrize("name", list(FAMILIES))
def test_cold_and_warm_caches_agree(name: str) -> None:
    ours, _ = family(name)
    texts = multilingual()
    warm = [ours.encode(t).tokens for t in texts]
    ours.clear_caches()
    assert [ours.encode(t).tokens for t in texts] == warm
    assert [ours.encode(t).tokens for t in reversed(texts)] == warm[::-1]


_DECODERS = [
    None,
    ByteLevelDecoder(),
    MetaspaceDecoder("▁", "always"),
    MetaspaceDecoder("▁", "never"),
    WordPieceDecoder("##", True),
    BPEDecoder("</w>"),
    SequenceDecoder((ByteFallbackDecoder(), FuseDecoder(),
                     ReplaceDecoder(regex.compile("▁"), "▁", " "), StripDecoder(" ", 1, 0))),
    SequenceDecoder((ReplaceDecoder(regex.compile("▁"), "▁", " "), StripDecoder(" ", 1, 1),
                     MetaspaceDecoder("▁", "first"))),
    SequenceDecoder((SequenceDecoder((FuseDecoder(),)), StripDecoder("a", 2, 1))),
    StripDecoder("a", 1, 2),
]
_PIECES = ["▁a", "a", "##b", "<0xE2>", "<0x82>", "<0xAC>", "x</w>", "Ġhi", "aa", "", " ",
           "▁", "don", "'t", ".", "ĠâĤ¬"]


@pytest.mark.parametrize("decoder", _DECODERS, ids=lambda d: d.describe() if d else "none")
@settings(max_examples=150, deadline=None)
@given(pieces=st.lists(st.sampled_from(_PIECES), max_size=7))
def test_cached_token_bytes_equal_the_decoder(decoder, pieces: list[str]) -> None:
    cached = TokenBytes(decoder)
    assert cached.decode(pieces) == decode_tokens(decoder, pieces)
    assert cached.decode(pieces) == decode_tokens(decoder, pieces)  # from the cache


def _replace_general(a: Aligned, pattern: regex.Pattern[str], content: str) -> Aligned:
    """``Aligned.replace`` without its fast path (HF ``Replace``)."""
    pieces: list[Aligned] = []
    pos = 0
    for m in pattern.finditer(a.text):
        s, e = m.span()
        if s == e:
            continue
        pieces.append(a.slice(pos, s))
        pieces.append(Aligned(content, [a.starts[e - 1]] * len(content),
                              [a.ends[e - 1]] * len(content)))
        pos = e
    pieces.append(a.slice(pos, len(a.text)))
    return concat(pieces)


_TEXT = st.text(alphabet=st.sampled_from("ab c\u00a0\u3000é\u0301ﬁ½가\u1100\u1161Σ."),
                max_size=20)


@pytest.mark.parametrize("pattern,content", [
    (r"\p{Zs}", " "), (r"[ab]", "x"), (r"a", "a"), (r"a|bc", "y"), (r"b*", "z"),
    (r" ", "▁"), (r"(?<=a)", "q"), (r"c", "\\"), (r"(a)", "b"), (r"\s", "$"),
])
@settings(max_examples=80, deadline=None)
@given(text=_TEXT)
def test_one_char_replace_equals_general_replace(pattern: str, content: str,
                                                 text: str) -> None:
    a = Aligned.from_original(text, 3).unicode_normalize("NFKD")  # a non-identity alignment
    got = a.replace(regex.compile(pattern), content)
    want = _replace_general(a, regex.compile(pattern), content)
    assert (got.text, got.starts, got.ends) == (want.text, want.starts, want.ends)


@settings(max_examples=150, deadline=None)
@given(text=_TEXT)
def test_drop_matching_and_normalized_runs(text: str) -> None:
    a = Aligned.from_original(text).unicode_normalize("NFD")
    got = a.drop_matching(regex.compile(r"[\p{Mn}x]"))
    want = a.filter(lambda c: not (c == "x" or regex.match(r"\p{Mn}", c)))
    assert (got.text, got.starts, got.ends) == (want.text, want.starts, want.ends)
    for form in ("NFC", "NFD", "NFKC", "NFKD"):
        general = Aligned.from_original(text)._normalize_segments(form)
        assert _normalized_run(text, form) == (general.text, tuple(general.starts))


@settings(max_examples=150, deadline=None)
@given(text=st.text(alphabet=st.sampled_from("ab .,!\t¿语é‐"), max_size=24))
def test_char_split_memo_equals_step_by_step(text: str) -> None:
    from explorer.engine.hf.pre_tokenizers import _char_split

    pre = bert_pre_tokenizer()
    a = Aligned.from_original(text, 5)
    for _ in range(2):  # second round from the memo
        got = pre.split([a])
        want = _char_split([a], pre.steps)
        assert [(p.text, p.starts, p.ends) for p in got] == \
            [(p.text, p.starts, p.ends) for p in want]


def _compact_files() -> list[tuple[str, str]]:
    return [("minilm", "tokenizer.json"), ("mon-tokenizer", "mon_tokenizer.json"),
            ("llama-cpp", "ggml-vocab-llama-bpe.gguf"), ("llama-cpp", "ggml-vocab-gpt-2.gguf"),
            ("llama-cpp", "ggml-vocab-bert-bge.gguf")]


@pytest.mark.parametrize(("package", "name"), _compact_files(),
                         ids=[n for _, n in _compact_files()])
def test_compact_encode_equals_the_tokens_compacted(package, name):
    """``encode_compact`` tests the raw tuples instead of building every Token: the same
    arrays, irregular tokens and unknown ids as compacting ``encode``'s Tokens."""
    from explorer.engine.compact import token_table

    tok = load_cached(require(package, name))
    text = "\n".join(parity_texts()) + " <s> [CLS] <unk> \U0002a6a5\U0001f9d1\u200d\U0001f33e"
    one = tok.encode_compact(text)
    assert one == token_table(tok).compact(tok.encode(text).tokens)
    assert len(one) > 500
    # the entries are the tokens' bytes between two others (a WordPiece word's first
    # token has a leading space, a "##" piece none): nearly every token is kept as arrays
    assert len(one.irregular) < len(one) // 10, len(one.irregular)
    assert tok.encode_compact(text) == one


def test_compact_encode_of_trained_and_bundled_files_equals_the_tokens_compacted():
    from hf_support import trained_files

    from explorer.bundled import resource_path
    from explorer.engine.compact import token_table

    paths = [*trained_files().values(), resource_path("vocab", "corpus_bpe_4k.json")]
    text = "\n".join(parity_texts()) + " <s> </s> [UNK] [CLS] <unk> \u00e9\u0301 \U0001f600"
    irregular = 0
    for path in paths:
        tok = load_cached(Path(path))
        one = tok.encode_compact(text)
        assert one == token_table(tok).compact(tok.encode(text).tokens), path
        irregular += len(one.irregular)
    assert irregular  # (some file makes tokens that are not their vocabulary entry)
