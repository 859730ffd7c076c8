"""Added tokens (single_word, lstrip, rstrip, normalized, special), Precompiled normalizer and
BPE merge trace, all compared with HF tokenizers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hf_support import hf_reference, load_cached, mismatches, parity_texts, trained_files
from references import require
from tokenizers import AddedToken
from tokenizers import Tokenizer as HFTokenizer

from explorer.engine.formats import load_tokenizer
from explorer.engine.hf.export import to_tokenizer_json

FLAG_TEXTS = [
    "hello world hellohello hello_x xhello hello",
    "a [X] b[X]c  [X]  end",
    "École ÉCOLE école",
    "<special> inside<special>text",
    "<|user|>hi<|end|> <|user|>",
    "  [X]",
]


@pytest.fixture(scope="module")
def flagged(tmp_path_factory: pytest.TempPathFactory) -> Path:
    src = trained_files()["wordpiece"]
    tok = HFTokenizer.from_file(str(src))
    tok.add_tokens([
        AddedToken("hello", single_word=True),
        AddedToken("[X]", lstrip=True, rstrip=True),
        AddedToken("ÉCOLE", normalized=True),  # BertNormalizer (lowercase=False) keeps it
        AddedToken("<special>", normalized=False),
    ])
    tok.add_special_tokens([AddedToken("<|user|>", rstrip=True), "<|end|>"])
    out = tmp_path_factory.mktemp("flags") / "flags.json"
    tok.save(str(out))
    return out


def test_added_token_flags_match_hf(flagged: Path) -> None:
    ours = load_tokenizer(flagged)
    assert mismatches(ours, hf_reference(flagged), FLAG_TEXTS + parity_texts()) == []


def test_added_tokens_are_marked_special(flagged: Path) -> None:
    ours = load_tokenizer(flagged)
    enc = ours.encode("<|user|>hi<|end|>")
    assert enc.tokens[0].special and enc.tokens[-1].special
    assert not any(t.special for t in enc.tokens[1:-1])
    plain = ours.encode("<|user|>hi", allowed_special=())
    assert all(not t.special for t in plain)
    assert "<|user|>" not in plain.pieces


def test_byte_level_added_tokens_match_hf(tmp_path: Path) -> None:
    tok = HFTokenizer.from_file(str(trained_files()["bytelevel_bpe"]))
    tok.add_tokens([AddedToken(" spaced", lstrip=False), AddedToken("ab", single_word=True)])
    tok.add_special_tokens(["<|im_start|>"])
    out = tmp_path / "bl.json"
    tok.save(str(out))
    texts = ["x spaced y", "ab abc cab ab", "<|im_start|>user\nhi", *parity_texts()]
    assert mismatches(load_tokenizer(out), hf_reference(out), texts) == []


@pytest.mark.parametrize("name", ["botchan_en_unigram_1000.model", "kyoto_ja_unigram_8000.model"])
def test_precompiled_normalizer_matches_hf(name: str, tmp_path: Path) -> None:
    """A sentencepiece model's charsmap exported as an HF ``Precompiled`` normalizer: our
    tokenizer.json loader and HF tokenizers read the same file identically."""
    sp = load_cached(require("sentencepiece", name))
    path = tmp_path / "pc.json"
    path.write_text(json.dumps(to_tokenizer_json(sp), ensure_ascii=False), encoding="utf-8")
    ours = load_tokenizer(path)
    texts = [*parity_texts(), "ＡＢＣ① ｶﾀｶﾅ ﬁ ㍿ ½", "Ａ\u3000Ｂ"]
    assert mismatches(ours, hf_reference(path), texts) == []
    ref = hf_reference(path)
    for t in texts:
        if "<" not in t:  # HF normalize_str does not split added tokens out first
            assert ours.stages(t).normalized == ref.normalizer.normalize_str(t), t


def test_merge_trace_ends_with_the_encoding() -> None:
    tok = load_cached(require("llama-cpp", "ggml-vocab-gpt-2.gguf"))
    assert tok.supports_merge_trace()
    text = "Hello tokenization"
    st = tok.stages(text)
    pieces = []
    for p in st.pre_tokens:
        steps = list(tok.trace_merges(text[p.start:p.end]))  # original text, as the UI does
        assert steps[0].kind == "start" and steps[-1].kind == "done"
        pieces.extend(steps[-1].symbols)
    assert pieces == tok.encode(text).pieces
    assert [tok.token_id(x) for x in pieces] == tok.encode(text).ids


def test_wordpiece_has_no_merge_trace() -> None:
    tok = load_cached(require("minilm", "tokenizer.json"))
    assert not tok.supports_merge_trace()
    assert not tok.supports_lattice()
    assert load_cached(require("mon-tokenizer", "mon_tokenizer.json")).supports_lattice()
