"""Ids, pieces, offsets and decoding identical to sentencepiece on real and trained models."""

from __future__ import annotations

import pytest
import sentencepiece as spm
from sp_support import (
    REFERENCE_MODELS,
    TRAINED,
    check_offsets,
    multilingual_lines,
    reference_model,
    sp_offsets,
    trained_model,
)

from explorer.engine.formats import detect_format, load_tokenizer
from explorer.engine.sentencepiece import SentencePieceTokenizer


def _texts() -> list[str]:
    from references import path

    botchan = path("sentencepiece", "botchan.txt")
    lines = botchan.read_text(encoding="utf-8").splitlines()[::5] if botchan.exists() else []
    return multilingual_lines() + lines


def _model_path(model: str):
    if model in TRAINED:
        return trained_model(model)
    key, name = model.split("/")
    return reference_model(key, name)


MODELS = [f"{k}/{n}" for k, n in REFERENCE_MODELS] + list(TRAINED)


@pytest.mark.parametrize("model", MODELS)
def test_ids_pieces_offsets_and_decode_match_sentencepiece(model: str) -> None:
    path = _model_path(model)
    sp = spm.SentencePieceProcessor(model_file=str(path))
    tok = load_tokenizer(path)
    assert detect_format(path) == "sentencepiece"
    assert isinstance(tok, SentencePieceTokenizer)
    assert tok.vocab_size == sp.get_piece_size()
    for text in _texts():
        expected_ids = sp.encode(text)
        enc = tok.encode(text, allowed_special=())
        assert enc.ids == expected_ids, text
        assert enc.pieces == sp.encode(text, out_type=str), text
        assert tok.encode_ids(text) == expected_ids, text
        assert tok.decode(expected_ids) == sp.decode(expected_ids), text
        check_offsets(enc, sp_offsets(sp, text), text)


@pytest.mark.parametrize("model", ["uni_nfkc", "bpe_nfkc", "uni_identity_bytes"])
def test_unknown_characters_merge_or_fall_back_to_bytes(model: str) -> None:
    path = trained_model(model)
    sp = spm.SentencePieceProcessor(model_file=str(path))
    tok = load_tokenizer(path)
    text = "x \U0002a6b2\U0002a6b3\U0002a6b4 y \ue000"  # rare CJK + private use: not in vocab
    enc = tok.encode(text)
    assert enc.ids == sp.encode(text)
    if tok.byte_fallback:
        partial = [t for t in enc.tokens if t.is_partial_utf8]
        assert partial and all(t.piece.startswith("<0x") for t in partial)
        assert (
            b"".join(t.token_bytes for t in partial)
            == "\U0002a6b2\U0002a6b3\U0002a6b4\ue000".encode()
        )
    else:
        unknown = [t for t in enc.tokens if t.unknown]
        assert unknown[0].piece.endswith("\U0002a6b2\U0002a6b3\U0002a6b4")  # one merged <unk>
        assert text[unknown[0].start : unknown[0].end].endswith("\U0002a6b4")


def test_specials_split_out_of_text_when_allowed() -> None:
    path = reference_model("mistral-common", "mistral_instruct_tokenizer_240323.model.v3")
    sp = spm.SentencePieceProcessor(model_file=str(path))
    tok = load_tokenizer(path)
    text = "<s>[INST] Hello [/INST] Hi</s>"
    enc = tok.encode(text)
    specials = [t for t in enc.tokens if t.special]
    assert [t.piece for t in specials] == ["<s>", "[INST]", "[/INST]", "</s>"]
    assert [t.id for t in specials] == [
        sp.piece_to_id(p) for p in ["<s>", "[INST]", "[/INST]", "</s>"]
    ]
    assert all(text[t.start : t.end] == t.piece for t in specials)
    # between specials each segment is encoded as sentencepiece encodes it alone
    assert [t.id for t in enc.tokens if not t.special] == (sp.encode(" Hello ") + sp.encode(" Hi"))
    assert tok.encode(text, allowed_special=()).ids == sp.encode(text)
    assert tok.decode(enc.ids) == sp.decode(enc.ids)


def test_id_to_token_and_info() -> None:
    path = reference_model("mistral-common", "tokenizer.model.v1")
    sp = spm.SentencePieceProcessor(model_file=str(path))
    tok = load_tokenizer(path)
    for i in [0, 1, 2, 3, 100, 13, 28705, 31999]:
        t = tok.id_to_token(i)
        assert t.piece == sp.id_to_piece(i)
        assert t.score == pytest.approx(sp.get_score(i))
        assert t.special == sp.is_control(i) and t.unknown == sp.is_unknown(i)
    assert tok.id_to_token(13).token_bytes == b"\n"  # <0x0A>
    info = tok.info
    assert (info.format, info.model_type, info.vocab_size) == ("sentencepiece", "bpe", 32000)
    assert info.special_tokens == {"<unk>": 0, "<s>": 1, "</s>": 2}
    assert not tok.supports_lattice()


def test_stages_align_normalized_text_with_original() -> None:
    tok = load_tokenizer(reference_model("sentencepiece", "botchan_en_unigram_1000.model"))
    text = "  ﬁne   day ½"
    st = tok.stages(text)
    assert st.normalized == "▁fine▁day▁1⁄2"
    assert len(st.norm_to_orig) == len(st.normalized) + 1
    assert [p.text for p in st.pre_tokens] == ["▁fine", "▁day", "▁1⁄2"]
    assert [(p.start, p.end) for p in st.pre_tokens] == [(2, 5), (5, 11), (11, 13)]
    assert st.decoded == "fine day 1 \u2047 2"  # ⁄ is not in the vocabulary
    assert st.encoding.ids == tok.encode(text).ids


@pytest.mark.parametrize("name", ["botchan_en_unigram_1000.model", "kyoto_ja_unigram_8000.model"])
def test_one_long_line_past_the_score_rebasing_threshold(name: str) -> None:
    """sentencepiece re-bases path scores beyond ±100000: a 100k-character line crosses it."""
    path = reference_model("sentencepiece", name)
    sp = spm.SentencePieceProcessor(model_file=str(path))
    tok = load_tokenizer(path)
    botchan = reference_model("sentencepiece", "botchan.txt").read_text(encoding="utf-8")
    text = " ".join(botchan.splitlines()[:1500])
    assert tok.encode_ids(text) == sp.encode(text)
    japanese = "日本語のテキストを正しく分割できるかを確認します。" * 2000
    assert tok.encode_ids(japanese) == sp.encode(japanese)
    ties = "to be of the same opinion....... I want 55555 " * 3000  # equal-score splits
    assert tok.encode_ids(ties) == sp.encode(ties)
    assert tok.encode(ties, allowed_special=()).ids == sp.encode(ties)


def test_lone_surrogates_do_not_crash() -> None:
    tok = load_tokenizer(reference_model("mistral-common", "tokenizer.model.v1"))
    enc = tok.encode("a\ud800b")
    assert [t.piece for t in enc.tokens if t.is_partial_utf8] == ["<0xED>", "<0xA0>", "<0x80>"]
    assert tok.encode_ids("a\ud800b") == enc.ids


@pytest.mark.parametrize("kind", ["unused", "user_defined"])
def test_bpe_unused_and_user_defined_pieces_match_sentencepiece(kind: str, tmp_path) -> None:
    """A SentencePiece BPE model with some merged pieces marked UNUSED (merged, then split
    back into the parts they were made from) or USER_DEFINED (whole, never merged into):
    the merge paths for both, against sentencepiece on the multilingual lines."""
    from sentencepiece import sentencepiece_model_pb2 as pb

    proto = pb.ModelProto()
    proto.ParseFromString(reference_model("sentencepiece",
                                          "botchan_en_bpe_1000.model").read_bytes())
    kind_id = pb.ModelProto.SentencePiece.UNUSED if kind == "unused" else (
        pb.ModelProto.SentencePiece.USER_DEFINED)
    marked = 0
    for piece in proto.pieces:
        if piece.type == piece.NORMAL and len(piece.piece) >= 2 and marked < 60:
            piece.type = kind_id
            marked += 1
    path = tmp_path / f"{kind}.model"
    path.write_bytes(proto.SerializeToString())
    sp = spm.SentencePieceProcessor(model_file=str(path))
    tok = load_tokenizer(path)
    texts = [*_texts()[:400], "the then there other another weather " * 5]
    for text in texts:
        assert tok.encode(text, allowed_special=()).ids == sp.encode(text), text
