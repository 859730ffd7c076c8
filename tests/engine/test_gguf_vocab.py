"""GGUF vocabularies: ids identical to the llama.cpp test vectors (HF reference outputs)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hf_support import load_cached
from references import CACHE, require

from explorer.engine.formats import load_tokenizer

SEP = "\n__ggml_vocab_test__\n"

WITH_VECTORS = [
    "bert-bge", "command-r", "deepseek-coder", "deepseek-llm", "falcon", "gemma-4", "gpt-2",
    "llama-bpe", "llama-spm", "mpt", "phi-3", "qwen2", "qwen35", "refact", "starcoder",
]
WITHOUT_VECTORS = ["aquila", "baichuan", "gpt-neox", "nomic-bert-moe"]


def read_vectors(gguf: Path) -> list[tuple[str, list[int]]]:
    """``(text, expected ids)`` pairs of a ``.inp``/``.out`` couple."""
    raw = gguf.with_name(gguf.name + ".inp").read_text(encoding="utf-8")
    raw = raw.removesuffix(SEP)
    texts = raw.split(SEP)
    out = gguf.with_name(gguf.name + ".out").read_text(encoding="utf-8").removesuffix("\n")
    lines = out.split("\n")
    assert len(texts) == len(lines), f"{gguf.name}: {len(texts)} texts, {len(lines)} lines"
    return [(t, [int(x) for x in line.split()]) for t, line in zip(texts, lines, strict=True)]


@pytest.mark.parametrize("name", WITH_VECTORS)
def test_gguf_ids_match_test_vectors(name: str) -> None:
    path = require("llama-cpp", f"ggml-vocab-{name}.gguf")
    tok = load_tokenizer(path)
    vectors = read_vectors(path)
    assert len(vectors) >= 46
    bad = [(text, ids, tok.encode(text).ids) for text, ids in vectors
           if tok.encode(text).ids != ids]
    assert bad == []


def test_every_vector_file_is_covered() -> None:
    folder = CACHE / "llama-cpp"
    if not folder.exists():
        require("llama-cpp", "ggml-vocab-gpt-2.gguf")
    found = sorted(p.name.removeprefix("ggml-vocab-").removesuffix(".gguf.inp")
                   for p in folder.glob("ggml-vocab-*.gguf.inp"))
    assert found == sorted(WITH_VECTORS)


@pytest.mark.parametrize("name", WITH_VECTORS + WITHOUT_VECTORS)
def test_gguf_round_trip_and_offsets(name: str) -> None:
    tok = load_cached(require("llama-cpp", f"ggml-vocab-{name}.gguf"))
    text = "Hello world, ça va? 12345 東京 🦙"
    enc = tok.encode(text)
    assert enc.ids
    assert all(0 <= t.start <= t.end <= len(text) for t in enc)
    assert [t.start for t in enc] == sorted(t.start for t in enc)
    decoded = tok.decode(enc.ids)
    if name == "bert-bge":
        assert decoded == "hello world, ca va? 12345 東 京 [UNK]"
    elif name == "nomic-bert-moe":  # no byte fallback: the llama is <unk>, shown as sentencepiece
        assert decoded == "Hello world, ça va? 12345 東京  \u2047 "
        assert enc.tokens[-1].unknown
    else:
        assert decoded.strip() == text
    assert tok.vocab_size == len(tok.info.special_tokens) + (tok.vocab_size
                                                           - len(tok.info.special_tokens))
    assert tok.id_to_token(enc.ids[0]).id == enc.ids[0]


def test_nomic_t5_unigram_matches_sentencepiece() -> None:
    """GGUF ``t5`` (Unigram + precompiled charsmap) equals sentencepiece on the same model."""
    import sentencepiece as spm
    from sentencepiece import sentencepiece_model_pb2 as pb

    from explorer.engine.formats.gguf_reader import read_metadata

    path = require("llama-cpp", "ggml-vocab-nomic-bert-moe.gguf")
    meta = read_metadata(path, prefix="tokenizer.ggml.")
    proto = pb.ModelProto()
    proto.trainer_spec.model_type = pb.TrainerSpec.UNIGRAM
    proto.trainer_spec.byte_fallback = False
    proto.normalizer_spec.name = "gguf"
    proto.normalizer_spec.precompiled_charsmap = bytes(
        b & 0xFF for b in meta["tokenizer.ggml.precompiled_charsmap"])
    proto.normalizer_spec.add_dummy_prefix = True
    proto.normalizer_spec.remove_extra_whitespaces = True
    proto.normalizer_spec.escape_whitespaces = True
    for piece, score, kind in zip(meta["tokenizer.ggml.tokens"], meta["tokenizer.ggml.scores"],
                                  meta["tokenizer.ggml.token_type"], strict=True):
        proto.pieces.add(piece=piece, score=score, type=kind)
    ref = spm.SentencePieceProcessor(model_proto=proto.SerializeToString())
    ours = load_cached(path)
    texts = read_vectors(require("llama-cpp", "ggml-vocab-qwen35.gguf"))
    for text, _ in texts:
        assert ours.encode(text, allowed_special=()).ids == ref.encode(text), text


def test_piece_types_from_gguf() -> None:
    tok = load_cached(require("llama-cpp", "ggml-vocab-gemma-4.gguf"))
    assert tok.piece_type(2) == "control"  # <bos>
    assert tok.piece_type(48) == "user-defined"  # <|tool_call>
    byte_ids = [i for i in range(600) if tok.piece_type(i) == "byte"]
    assert len(byte_ids) == 256
    assert all(tok.id_to_token(i).piece.startswith("<0x") for i in byte_ids)
    assert load_cached(require("llama-cpp", "ggml-vocab-gpt-2.gguf")).piece_type(50256) == "control"
