"""``.tiktoken`` loading, saving, presets, the parsed-vocabulary cache and the Tokenizer API."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import tiktoken.load
from tiktoken_support import ENCODINGS, ours, reference, vocab_path

from explorer.engine.bpe import ByteLevelBPETokenizer
from explorer.engine.errors import VocabFormatError
from explorer.engine.formats import detect_format, load_tokenizer, vocab_cache
from explorer.engine.formats.tiktoken_file import parse_tiktoken, read_ranks, save_tiktoken
from explorer.engine.formats.tiktoken_presets import PRESETS, get_preset


@pytest.fixture
def cache_dir(tmp_path, monkeypatch) -> Path:
    d = tmp_path / "cache"
    monkeypatch.setenv("EXPLORER_CACHE_DIR", str(d))
    monkeypatch.delenv("EXPLORER_NO_VOCAB_CACHE", raising=False)
    return d


@pytest.mark.parametrize("name", ENCODINGS)
def test_preset_detected_from_ranks(name: str):
    tok = load_tokenizer(vocab_path(name))
    assert tok.info.extra["preset"] == f"{name} (detected)"
    assert tok.info.special_tokens == reference(name)._special_tokens
    assert tok.vocab_size == reference(name).n_vocab
    assert detect_format(vocab_path(name)) == "tiktoken"


def test_parse_matches_tiktoken_loader():
    path = vocab_path("cl100k")
    assert parse_tiktoken(path.read_bytes()) == tiktoken.load.load_tiktoken_bpe(str(path))


def test_save_round_trip(tmp_path, cache_dir):
    ranks = ours("r50k").vocab.bytes_to_id
    out = tmp_path / "copy.tiktoken"
    save_tiktoken(ranks, out)
    assert out.read_bytes() == vocab_path("r50k").read_bytes().rstrip(b"\n") + b"\n"
    assert tiktoken.load.load_tiktoken_bpe(str(out)) == ranks
    tok = load_tokenizer(out)
    assert tok.info.extra["preset"] == "r50k (detected)"
    assert tok.encode("round trip ✓").ids == ours("r50k").encode("round trip ✓").ids


def test_small_custom_vocab_round_trip_and_fallback(tmp_path, cache_dir):
    ranks = {bytes([b]): b for b in range(256)} | {b"ab": 256, b" ab": 257}
    path = tmp_path / "tiny.tiktoken"
    save_tiktoken(ranks, path)
    assert read_ranks(path) == ranks
    tok = load_tokenizer(path)
    assert "none" in tok.info.extra["preset"] and not tok.info.special_tokens
    assert tok.encode("ab ab abc").pieces == ["ab", "Ġab", "Ġab", "c"]


def test_cache_is_written_used_and_invalidated(tmp_path, cache_dir):
    path = tmp_path / "v.tiktoken"
    save_tiktoken({bytes([b]): b for b in range(256)} | {b"hi": 256}, path)
    first = read_ranks(path)
    entries = list(cache_dir.glob("*.marshal"))
    assert len(entries) == 1
    assert read_ranks(path) == first
    # Editing the file (new size and mtime) must miss the cache.
    save_tiktoken({bytes([b]): b for b in range(256)} | {b"hi": 256, b"hip": 257}, path)
    os.utime(path, ns=(1, 1))
    assert b"hip" in read_ranks(path)
    assert len(list(cache_dir.glob("*.marshal"))) == 2


def test_corrupt_cache_entry_falls_back_to_parsing(tmp_path, cache_dir):
    path = tmp_path / "v.tiktoken"
    save_tiktoken({bytes([b]): b for b in range(256)}, path)
    read_ranks(path)
    (entry,) = cache_dir.glob("*.marshal")
    entry.write_bytes(b"garbage")
    assert len(read_ranks(path)) == 256


def test_unwritable_cache_dir_is_ignored(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    monkeypatch.setenv("EXPLORER_CACHE_DIR", str(blocker / "sub"))
    path = tmp_path / "v.tiktoken"
    save_tiktoken({bytes([b]): b for b in range(256)}, path)
    assert len(read_ranks(path)) == 256
    assert vocab_cache.cache_dir() == blocker / "sub"


@pytest.mark.parametrize(("content", "message"), [
    (b"YQ== 0\nnot-base64! 1\n", ":2: bad base64"),
    (b"YQ== 0\nYg==\n", ":2: expected"),
    (b"YQ== 0\nYg== -1\n", "negative rank"),
    (b"YQ== 0\nYg== 0\n", "share one rank"),
])
def test_corrupt_files_raise_one_line_errors(tmp_path, cache_dir, content, message):
    path = tmp_path / "bad.tiktoken"
    path.write_bytes(content)
    with pytest.raises(VocabFormatError, match=message) as info:
        load_tokenizer(path, format="tiktoken")
    assert "\n" not in str(info.value)


def test_missing_single_bytes_is_an_error(tmp_path, cache_dir):
    path = tmp_path / "short.tiktoken"
    save_tiktoken({b"a": 0, b"b": 1}, path)
    with pytest.raises(VocabFormatError, match="256 single-byte"):
        load_tokenizer(path)


def test_missing_file_and_unknown_preset():
    with pytest.raises(VocabFormatError, match="no such file"):
        load_tokenizer("/nonexistent/x.tiktoken", format="tiktoken")
    with pytest.raises(VocabFormatError, match="unknown preset"):
        get_preset("gpt5")
    assert get_preset("cl100k_base") is PRESETS["cl100k"]
    assert get_preset("gpt2") is PRESETS["r50k"]


def test_tokenizer_api_on_cl100k():
    tok = ours("cl100k")
    assert isinstance(tok, ByteLevelBPETokenizer)
    assert tok.supports_merge_trace() and not tok.supports_lattice()
    info = tok.info
    assert (info.format, info.model_type, info.normalizer) == ("tiktoken", "bpe", "none")
    assert "cl100k" in info.pre_tokenizer
    t = tok.id_to_token(tok.token_id(" hello"))
    assert (t.piece, t.token_bytes, t.special, t.start, t.end) == ("Ġhello", b" hello",
                                                                   False, 0, 0)
    s = tok.id_to_token(100257)
    assert s.special and s.piece == "<|endoftext|>"
    with pytest.raises(KeyError):
        tok.id_to_token(100256)  # a hole in cl100k
    with pytest.raises(KeyError):
        tok.decode_bytes([10**9])
    assert tok.decode_bytes([100257, 15339]) == b"<|endoftext|>hello"


def test_partial_utf8_tokens_keep_bytes_and_span():
    tok = ours("cl100k")
    text = "a𠮷b"  # CJK Ext B: 4 UTF-8 bytes, split over several tokens
    enc = tok.encode(text)
    partial = [t for t in enc if t.is_partial_utf8]
    assert partial, enc.pieces
    for t in partial:
        assert (t.start, t.end) == (1, 2)
        assert "\ufffd" not in t.text
    assert b"".join(t.token_bytes for t in enc) == text.encode()


def test_stages():
    tok = ours("cl100k")
    text = "Hi <|endoftext|> wörld"
    st = tok.stages(text)
    assert st.normalized == text and st.norm_to_orig == list(range(len(text) + 1))
    assert [(p.text, p.start, p.end) for p in st.pre_tokens] == [
        ("Hi", 0, 2), ("Ġ", 2, 3), ("<|endoftext|>", 3, 16), ("ĠwÃ¶rld", 16, 22)]
    assert st.encoding.ids == reference("cl100k").encode(text, allowed_special="all")
    assert st.decoded == text


def test_tokenizer_trace_merges_ends_with_encode_result():
    tok = ours("o200k")
    for word in (" tokenization", "的的的的", " ☃☃", "x" * 70):
        steps = list(tok.trace_merges(word))
        assert [tok.token_id(s) for s in steps[-1].symbols] == tok.encode(word).ids
