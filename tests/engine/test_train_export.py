"""Exported trained models load in the reference libraries and give our engine's ids."""

from __future__ import annotations

import json

import pytest

from explorer.bundled import resource_path
from explorer.engine.formats import load_tokenizer
from explorer.engine.pretokenizers.patterns import GPT2
from explorer.engine.trainers import (
    BpeConfig,
    Corpus,
    ExportError,
    UnigramConfig,
    export,
    run,
    to_tokenizer,
    train,
)

tokenizers = pytest.importorskip("tokenizers")
spm = pytest.importorskip("sentencepiece")
tiktoken = pytest.importorskip("tiktoken")

BOTCHAN = resource_path("corpus", "botchan.txt")
UDHR = resource_path("corpus", "udhr_sample.txt")


def _sample_lines() -> list[str]:
    lines = UDHR.read_text("utf-8").splitlines()[::40]
    lines += BOTCHAN.read_text("utf-8").splitlines()[100:3000:60]
    lines += ["Hello  world  ", " leading space", "tabs\tand\nnewlines", "1234567 + 89",
              "naïve café ☕ 😀 日本語のテキスト", "don't you'll we've"]
    return [line for line in lines if line]


@pytest.fixture(scope="module")
def byte_bpe():
    cfg = BpeConfig(vocab_size=800, special_tokens=("<|endoftext|>",), merge_events=False)
    return run(train(Corpus.from_files([BOTCHAN, UDHR]), cfg)).model


@pytest.fixture(scope="module")
def meta_bpe():
    cfg = BpeConfig(vocab_size=700, mode="metaspace", special_tokens=("<unk>", "<s>", "</s>"),
                    merge_events=False)
    return run(train(Corpus.from_files([BOTCHAN]), cfg)).model


@pytest.fixture(scope="module", params=[False, True], ids=["plain", "byte_fallback"])
def unigram(request):
    cfg = UnigramConfig(vocab_size=700 if request.param else 500,
                        byte_fallback=request.param)
    return run(train(Corpus.from_files([BOTCHAN]), cfg)).model


def test_byte_level_json_matches_hf_and_engine(byte_bpe, tmp_path):
    path = export(byte_bpe, tmp_path / "bpe.json")
    hf = tokenizers.Tokenizer.from_file(str(path))
    ours = load_tokenizer(path)
    direct = to_tokenizer(byte_bpe)
    for line in _sample_lines():
        expected = hf.encode(line).ids
        assert ours.encode(line).ids == expected, line
        assert direct.encode(line).ids == expected, line
    assert json.loads(path.read_text("utf-8"))["model"]["merges"][0] == list(byte_bpe.merges[0])


def test_tiktoken_matches_tiktoken_and_engine(byte_bpe, tmp_path):
    from tiktoken.load import load_tiktoken_bpe

    path = export(byte_bpe, tmp_path / "bpe.tiktoken")
    ranks = load_tiktoken_bpe(str(path))
    assert len(ranks) == byte_bpe.vocab_size - 1  # the special token is not a rank
    enc = tiktoken.Encoding("trained", pat_str=GPT2, mergeable_ranks=ranks, special_tokens={})
    ours = load_tokenizer(path, preset="r50k")
    for line in _sample_lines():
        assert ours.encode(line, allowed_special=set()).ids == enc.encode_ordinary(line), line


def test_metaspace_bpe_json_and_model(meta_bpe, tmp_path):
    js = export(meta_bpe, tmp_path / "m.json")
    mp = export(meta_bpe, tmp_path / "m.model")
    hf = tokenizers.Tokenizer.from_file(str(js))
    sp = spm.SentencePieceProcessor(model_file=str(mp))
    ours_js, ours_mp = load_tokenizer(js), load_tokenizer(mp)
    direct = to_tokenizer(meta_bpe)
    assert sp.get_piece_size() == meta_bpe.vocab_size
    for line in _sample_lines():
        assert ours_js.encode(line).ids == hf.encode(line).ids, line
        assert direct.encode(line).ids == hf.encode(line).ids, line
        assert ours_mp.encode(line).ids == sp.encode(line), line


def test_unigram_model_and_json(unigram, tmp_path):
    mp = export(unigram, tmp_path / "u.model")
    js = export(unigram, tmp_path / "u.json")
    sp = spm.SentencePieceProcessor(model_file=str(mp))
    hf = tokenizers.Tokenizer.from_file(str(js))
    ours_mp, ours_js, direct = load_tokenizer(mp), load_tokenizer(js), to_tokenizer(unigram)
    assert sp.get_piece_size() == unigram.vocab_size
    assert direct.supports_lattice()
    for line in _sample_lines():
        ids = sp.encode(line)
        assert ours_mp.encode(line).ids == ids, line
        assert direct.encode(line).ids == ids, line
        assert ours_js.encode(line).ids == hf.encode(line).ids, line


def test_export_refuses_impossible_formats(byte_bpe, unigram, tmp_path):
    with pytest.raises(ExportError, match="tiktoken"):
        export(unigram, tmp_path / "u.tiktoken")
    with pytest.raises(ExportError, match="Metaspace"):
        export(byte_bpe, tmp_path / "b.model")
    with pytest.raises(ExportError, match="extension"):
        export(byte_bpe, tmp_path / "b.txt")
    assert list(tmp_path.iterdir()) == []


def test_custom_split_pattern_exports_as_split_plus_byte_level(tmp_path):
    from explorer.engine.pretokenizers.patterns import LLAMA3

    cfg = BpeConfig(vocab_size=500, pattern=LLAMA3, merge_events=False)
    model = run(train(Corpus.from_files([BOTCHAN]), cfg)).model
    path = export(model, tmp_path / "llama3_style.json")
    pre = json.loads(path.read_text("utf-8"))["pre_tokenizer"]
    assert [p["type"] for p in pre["pretokenizers"]] == ["Split", "ByteLevel"]
    hf = tokenizers.Tokenizer.from_file(str(path))
    ours, direct = load_tokenizer(path), to_tokenizer(model)
    for line in _sample_lines():
        expected = hf.encode(line).ids
        assert ours.encode(line).ids == expected, line
        assert direct.encode(line).ids == expected, line
