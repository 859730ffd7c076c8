"""Reading and writing SentencePiece ``.model`` files; errors name the problem."""

from __future__ import annotations

import random
import subprocess
import sys

import pytest
import sentencepiece as spm
from sentencepiece import sentencepiece_model_pb2 as reference_pb2
from sp_support import multilingual_lines, reference_model, trained_model

from explorer.engine.errors import UnsupportedComponentError, VocabFormatError
from explorer.engine.formats import detect_format, load_tokenizer
from explorer.engine.formats.sentencepiece_model import (
    model_proto_from_model,
    parse_model_proto,
    save_sentencepiece_model,
    tokenizer_from_bytes,
)
from explorer.engine.formats.sentencepiece_schema import ModelProto, build_file_descriptor
from explorer.engine.sentencepiece import PieceType, SentencePieceBPEModel
from explorer.engine.unigram import UnigramModel


def _data(name: str = "botchan_en_unigram_1000.model") -> bytes:
    return reference_model("sentencepiece", name).read_bytes()


def test_schema_matches_sentencepiece_generated_code() -> None:
    ours = build_file_descriptor()
    from google.protobuf import descriptor_pb2

    theirs = descriptor_pb2.FileDescriptorProto()
    reference_pb2.DESCRIPTOR.CopyToProto(theirs)
    for msg in theirs.message_type:
        mine = next(m for m in ours.message_type if m.name == msg.name)
        theirs_fields = {(f.name, f.number, f.type, f.label) for f in msg.field}
        assert theirs_fields <= {(f.name, f.number, f.type, f.label) for f in mine.field}


@pytest.mark.parametrize(
    "name",
    ["botchan_en_unigram_1000.model", "botchan_en_bpe_1000.model", "kyoto_ja_unigram_8000.model"],
)
def test_read_write_round_trip_is_byte_identical(name: str) -> None:
    data = _data(name)
    proto = parse_model_proto(data)
    assert proto.SerializeToString() == data
    assert reference_pb2.ModelProto.FromString(data).SerializeToString() == data


def test_corrupt_and_truncated_files_raise_vocab_format_error(tmp_path) -> None:
    data = _data()
    rng = random.Random(0)
    cuts = [*sorted(rng.sample(range(1, len(data)), 40)), 1, 2, 3, len(data) - 1]
    for cut in cuts:
        try:
            tokenizer_from_bytes(data[:cut], name="cut.model")
        except VocabFormatError as e:
            assert "cut.model" in str(e)
        else:  # a cut at a field boundary can still be a valid, smaller model
            assert cut > len(data) // 2
    with pytest.raises(VocabFormatError, match="corrupt or truncated"):
        tokenizer_from_bytes(b"\x0a\xff\xff\xff\xff\x0f garbage", name="junk.model")
    with pytest.raises(VocabFormatError, match="empty"):
        tokenizer_from_bytes(b"", name="empty.model")
    bad = tmp_path / "bad.model"
    bad.write_bytes(bytes(rng.randrange(256) for _ in range(3000)))
    with pytest.raises(VocabFormatError):
        load_tokenizer(bad, format="sentencepiece")


def _edited(edit) -> bytes:
    proto = ModelProto.FromString(_data())
    edit(proto)
    return proto.SerializeToString()


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda p: p.pieces[0].__setattr__("type", 1), "unknown piece is not defined"),
        (lambda p: p.pieces[5].__setattr__("piece", p.pieces[6].piece), "defined twice"),
        (lambda p: p.pieces[7].__setattr__("piece", ""), "piece 7 is empty"),
        (lambda p: p.trainer_spec.__setattr__("byte_fallback", True), "256 byte pieces"),
        (lambda p: p.ClearField("trainer_spec"), "no trainer_spec"),
        (lambda p: p.ClearField("pieces"), "no pieces"),
    ],
)
def test_inconsistent_models_are_rejected(edit, message: str) -> None:
    with pytest.raises(VocabFormatError, match=message):
        tokenizer_from_bytes(_edited(edit), name="edited.model")


def test_denormalizer_rules_are_unsupported() -> None:
    charsmap = ModelProto.FromString(_data()).normalizer_spec.precompiled_charsmap
    data = _edited(lambda p: p.denormalizer_spec.__setattr__("precompiled_charsmap", charsmap))
    with pytest.raises(UnsupportedComponentError, match="denormalizer"):
        tokenizer_from_bytes(data, name="x.model")


@pytest.mark.parametrize("kind", [3, 4])
def test_word_and_char_models_load(kind: int) -> None:
    data = _edited(lambda p: p.trainer_spec.__setattr__("model_type", kind))
    tok = tokenizer_from_bytes(data, name="x.model")
    assert tok.info.model_type == "wordlevel"
    assert tok.model.model_type == {3: "word", 4: "char"}[kind]


def test_detection_of_model_files_by_content_and_name(tmp_path) -> None:
    for key, name in [
        ("mistral-common", "tokenizer.model.v1"),
        ("sentencepiece", "kyoto_ja_unigram_8000.model"),
    ]:
        assert detect_format(reference_model(key, name)) == "sentencepiece"
    copy = tmp_path / "renamed.bin"
    copy.write_bytes(_data())
    assert detect_format(copy) == "sentencepiece"


@pytest.mark.parametrize("source", ["uni_nfkc_bytes_user", "bpe_identity_bytes", "bpe_nfkc"])
def test_saved_in_memory_models_load_in_sentencepiece(source: str, tmp_path) -> None:
    original = ModelProto.FromString(trained_model(source).read_bytes())
    pieces = [p.piece for p in original.pieces]
    scores = [p.score for p in original.pieces]
    types = [p.type for p in original.pieces]
    if original.trainer_spec.model_type == 1:
        model: UnigramModel | SentencePieceBPEModel = UnigramModel(pieces, scores, types)
    else:
        model = SentencePieceBPEModel(pieces, scores, types)
    spec = original.normalizer_spec
    out = save_sentencepiece_model(
        model,
        tmp_path / "saved.model",
        normalizer_name=spec.name,
        precompiled_charsmap=spec.precompiled_charsmap,
    )
    sp = spm.SentencePieceProcessor(model_file=str(out))
    ours = load_tokenizer(out)
    reference = spm.SentencePieceProcessor(model_file=str(trained_model(source)))
    for text in multilingual_lines()[:40]:
        assert (
            sp.encode(text) == reference.encode(text) == ours.encode(text, allowed_special=()).ids
        )
    assert sp.piece_size() == len(pieces)
    proto = model_proto_from_model(model)
    assert proto.trainer_spec.byte_fallback == any(t == PieceType.BYTE for t in types)


def test_cli_encode_and_info_on_model_files(tmp_path) -> None:
    path = reference_model("mistral-common", "tokenizer.model.v1")
    sp = spm.SentencePieceProcessor(model_file=str(path))
    text_file = tmp_path / "in.txt"
    text_file.write_text("Hello 世界 𩸽", encoding="utf-8")
    run = [sys.executable, "-m", "explorer"]
    out = subprocess.run(
        [*run, "encode", "--vocab", str(path), str(text_file)],
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.split() == [str(i) for i in sp.encode("Hello 世界 𩸽")]
    info = subprocess.run(
        [*run, "info", "--vocab", str(path)], capture_output=True, text=True, check=True
    ).stdout
    assert "sentencepiece" in info and "32000" in info and "bpe" in info
    bad = tmp_path / "broken.model"
    bad.write_bytes(path.read_bytes()[:1000])
    res = subprocess.run([*run, "info", "--vocab", str(bad)], capture_output=True, text=True)
    assert res.returncode == 2 and "broken.model" in res.stderr
    assert "Traceback" not in res.stderr and len(res.stderr.strip().splitlines()) == 1
