"""Unigram training with sentencepiece's user_defined_symbols and split_digits.

Each case trains sentencepiece and our trainer with the same options on the same text
(botchan plus the UDHR sample, one line in ten held out) and checks: the symbols get the same
ids and type USER_DEFINED, our exported ``.model`` encodes held-out text identically in
sentencepiece and in our engine, split_digits leaves no digit inside a longer piece, and
tokens per character stay within 2% of sentencepiece's.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from explorer.bundled import resource_path
from explorer.engine.formats import load_tokenizer
from explorer.engine.formats.sentencepiece_schema import PIECE_TYPES, ModelProto
from explorer.engine.generators import run_to_end as _drive
from explorer.engine.trainers import Corpus, UnigramConfig, export, run, train
from explorer.engine.trainers.unigram_seed import valid_spans
from explorer.engine.trainers.unigram_substrings import WordArray
from explorer.engine.trainers.words import count_sentencepiece_words

spm = pytest.importorskip("sentencepiece")

SYMBOLS = ("<mask>", "[SEP]", "Article")
DIGIT_NEXT_TO_OTHER = re.compile(r"[0-9].|.[0-9]", re.S)
EXTRA = ["x<mask>y and Article 12[SEP]ok", "<mask><mask> 1905, 3.14 [SEP]", "Articles 7-9"]


def _split() -> tuple[list[str], list[str]]:
    lines = (resource_path("corpus", "botchan.txt").read_text("utf-8").splitlines()
             + resource_path("corpus", "udhr_sample.txt").read_text("utf-8").splitlines())
    train_lines = [line for i, line in enumerate(lines) if i % 10]
    held = [line for i, line in enumerate(lines) if i % 10 == 0 and line.strip()]
    return train_lines, held


def _types(path: Path) -> list[tuple[str, int]]:
    proto = ModelProto()
    proto.ParseFromString(path.read_bytes())
    return [(p.piece, p.type) for p in proto.pieces]


@pytest.fixture(scope="module", params=[False, True], ids=["symbols", "symbols_split_digits"])
def trained(request, tmp_path_factory):
    split_digits = request.param
    tmp = tmp_path_factory.mktemp("unigram_options")
    train_lines, held = _split()
    corpus = tmp / "train.txt"
    corpus.write_text("\n".join(train_lines) + "\n", "utf-8")
    spm.SentencePieceTrainer.train(
        input=str(corpus), model_prefix=str(tmp / "ref"), vocab_size=2000,
        model_type="unigram", normalization_rule_name="identity", num_threads=1,
        minloglevel=2, user_defined_symbols=list(SYMBOLS), split_digits=split_digits)
    cfg = UnigramConfig(vocab_size=2000, user_defined_symbols=SYMBOLS, split_digits=split_digits)
    model = run(train(Corpus.from_files([corpus]), cfg)).model
    export(model, tmp / "ours.model")
    return split_digits, model, tmp, held


def test_tokens_per_char_within_2_percent(trained):
    _, _, tmp, held = trained
    ref = spm.SentencePieceProcessor(model_file=str(tmp / "ref.model"))
    ours = spm.SentencePieceProcessor(model_file=str(tmp / "ours.model"))
    chars = sum(map(len, held))
    ref_tpc = sum(len(ref.encode(line)) for line in held) / chars
    our_tpc = sum(len(ours.encode(line)) for line in held) / chars
    print(f"tokens/char sentencepiece {ref_tpc:.4f} ours {our_tpc:.4f}")
    assert abs(our_tpc / ref_tpc - 1) < 0.02
    assert ours.get_piece_size() == ref.get_piece_size() == 2000


def test_user_symbols_have_sentencepiece_ids_and_type(trained):
    _, model, tmp, _ = trained
    ref, ours = _types(tmp / "ref.model"), _types(tmp / "ours.model")
    user = PIECE_TYPES["USER_DEFINED"]
    assert ours[:6] == ref[:6]
    assert [p for p, t in ours if t == user] == list(SYMBOLS) == [p for p, t in ref if t == user]
    assert model.user_symbols == SYMBOLS and model.num_meta == 6
    # Nothing learned contains a symbol: the text was cut around them.
    assert not [p for p, _ in model.pieces[6:] if any(s in p for s in SYMBOLS)]


def test_export_encodes_alike_in_sentencepiece_and_engine(trained):
    _, _, tmp, held = trained
    ref = spm.SentencePieceProcessor(model_file=str(tmp / "ours.model"))
    engine = load_tokenizer(tmp / "ours.model")
    for text in held + EXTRA:
        assert [t.id for t in engine.encode(text).tokens] == ref.encode(text), text
    pieces = ref.encode(EXTRA[0], out_type=str)
    assert "<mask>" in pieces and "[SEP]" in pieces and "Article" in pieces


def test_split_digits_keeps_digits_alone(trained):
    split_digits, model, tmp, _ = trained
    ref = spm.SentencePieceProcessor(model_file=str(tmp / "ref.model"))
    ref_pieces = [ref.id_to_piece(i) for i in range(ref.get_piece_size())
                  if not ref.is_control(i) and not ref.is_unknown(i)]
    ours = [p for p, _ in model.pieces[model.num_meta:]]
    ref_mixed = [p for p in ref_pieces if p not in SYMBOLS and DIGIT_NEXT_TO_OTHER.search(p)]
    our_mixed = [p for p in ours if DIGIT_NEXT_TO_OTHER.search(p)]
    if split_digits:
        assert our_mixed == [] and ref_mixed == []
        held_pieces = spm.SentencePieceProcessor(model_file=str(tmp / "ours.model")).encode(
            "In 1948, 30 articles", out_type=str)
        assert [p for p in held_pieces if DIGIT_NEXT_TO_OTHER.search(p)] == []
    else:  # the corpus does tempt both trainers to merge digits
        assert our_mixed and ref_mixed


def test_byte_pieces_follow_user_symbols_like_sentencepiece(tmp_path):
    text = resource_path("corpus", "botchan.txt")
    spm.SentencePieceTrainer.train(
        input=str(text), model_prefix=str(tmp_path / "ref"), vocab_size=800,
        model_type="unigram", normalization_rule_name="identity", num_threads=1,
        minloglevel=2, user_defined_symbols=["<mask>", "[SEP]"], byte_fallback=True)
    cfg = UnigramConfig(vocab_size=800, user_defined_symbols=("<mask>", "[SEP]"),
                        byte_fallback=True)
    export(run(train(Corpus.from_files([text]), cfg)).model, tmp_path / "ours.model")
    ref, ours = _types(tmp_path / "ref.model"), _types(tmp_path / "ours.model")
    assert ours[:3 + 2 + 256] == ref[:3 + 2 + 256]
    engine = load_tokenizer(tmp_path / "ours.model")
    sp = spm.SentencePieceProcessor(model_file=str(tmp_path / "ours.model"))
    for line in ["Ünïcödé <mask> 漢字 [SEP]", "plain text[SEP]<mask>"]:
        assert [t.id for t in engine.encode(line).tokens] == sp.encode(line)


def test_json_export_keeps_symbols_whole(trained, tmp_path):
    tokenizers = pytest.importorskip("tokenizers")
    _, model, _, held = trained
    path = export(model, tmp_path / "ours.json")
    added = json.loads(path.read_text("utf-8"))["added_tokens"]
    assert [a["content"] for a in added if not a["special"]] == list(SYMBOLS)
    ref = tokenizers.Tokenizer.from_file(str(path))
    engine = load_tokenizer(path)
    for text in held[::5] + EXTRA:
        assert [t.id for t in engine.encode(text).tokens] == ref.encode(text).ids, text


@pytest.mark.parametrize(
    ("line", "words"),
    [("a<mask>b c", ["▁a", "b", "▁c"]),
     ("Article 5", ["▁", "▁5"]),
     ("<mask><mask>", ["▁"]),
     ("Articles [SEP]x", ["▁", "s", "▁", "x"])],
)
def test_word_counts_cut_user_symbols(line, words):
    counts, final = _drive(count_sentencepiece_words(Corpus.from_texts([line]), SYMBOLS))
    expected: dict[str, int] = {}
    for w in words:
        expected[w] = expected.get(w, 0) + 1
    assert counts == expected
    assert final == {words[-1]: 1}


@pytest.mark.parametrize("word", ["▁abc123", "▁1.5", "▁x9y", "▁2024年", "▁a\x00b1"])
def test_split_digits_spans(word):
    spans = {word[i:j] for i, j in valid_spans(word, 16, True, split_digits=True)}
    assert not [s for s in spans if re.search(r"[0-9]", s)]
    wa = WordArray({word: 1}, by_script=True, split_digits=True)
    got = {(int(k), length) for length, ks in wa.spans(16) for k in ks.tolist()}
    assert got == {(i, j - i) for i, j in valid_spans(word, 16, True, split_digits=True)}


@pytest.mark.parametrize("symbols", [("",), ("a b",), ("<s>",), ("x", "x")])
def test_bad_user_symbols_are_rejected(symbols):
    with pytest.raises(ValueError, match="user-defined symbols"):
        UnigramConfig(vocab_size=500, user_defined_symbols=symbols)
