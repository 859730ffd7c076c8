"""Byte-level BPE trained with ``add_prefix_space``: the trained tokenizer and its
tokenizer.json encode as HF ``tokenizers`` does with the same settings (a space before the
text), and a ranks file, which cannot say so, is refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tokenizers import Tokenizer, models, pre_tokenizers, trainers

from explorer.bundled import resource_path
from explorer.engine.formats import load_tokenizer
from explorer.engine.trainers.api import run, to_tokenizer
from explorer.engine.trainers.bpe_trainer import BpeConfig, train_bpe
from explorer.engine.trainers.corpus import Corpus, split_lines
from explorer.engine.trainers.export import ExportError, export
from explorer.engine.trainers.models import TrainedBpe

CORPUS = [resource_path("corpus", "botchan.txt"), resource_path("corpus", "udhr_sample.txt")]
VOCAB = 900
TEXTS = [
    "hello world",
    " already spaced",
    "The school was a grand old building.\nSecond line starts here.",
    "Tout être humain naît libre et égal en dignité et en droits.",
    "Все люди рождаются свободными и равными.",
    "東京で会いましょう 🙂 12345 don't",
    "\tindented\n\n  two spaces",
    "",
]


def _hf() -> Tokenizer:
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=True)
    trainer = trainers.BpeTrainer(vocab_size=VOCAB, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    lines: list[str] = []
    for p in CORPUS:
        with open(p, encoding="utf-8", newline="") as f:
            lines += split_lines(f.read())
    tok.train_from_iterator(lines, trainer)
    return tok


@pytest.fixture(scope="module")
def trained() -> tuple[TrainedBpe, Tokenizer]:
    cfg = BpeConfig(vocab_size=VOCAB, add_prefix_space=True, merge_events=False)
    model = run(train_bpe(Corpus.from_files(CORPUS), cfg)).model
    assert isinstance(model, TrainedBpe)
    hf = _hf()
    assert list(model.merges) == [tuple(m) if isinstance(m, list) else tuple(m.split(" "))
                                  for m in json.loads(hf.to_str())["model"]["merges"]]
    return model, hf


def test_trained_tokenizer_adds_the_prefix_space_as_hf(trained, tmp_path: Path):
    model, hf = trained
    ours = to_tokenizer(model)
    path = export(model, tmp_path / "tokenizer.json")
    from_file = Tokenizer.from_file(str(path))
    loaded = load_tokenizer(path)
    for text in TEXTS:
        expected = hf.encode(text).ids
        assert ours.encode(text).ids == expected, text
        assert from_file.encode(text).ids == expected, text
        assert loaded.encode(text).ids == expected, text
        assert ours.decode(expected) == from_file.decode(expected), text
    assert ours.encode("hello").ids != to_tokenizer(
        TrainedBpe(**{**_fields(model), "add_prefix_space": False})).encode("hello").ids


def _fields(model: TrainedBpe) -> dict:
    return {f: getattr(model, f) for f in model.__dataclass_fields__}


def test_a_ranks_file_cannot_hold_the_prefix_space(trained, tmp_path: Path):
    model, _ = trained
    with pytest.raises(ExportError, match="add_prefix_space"):
        export(model, tmp_path / "x.tiktoken")
    assert not (tmp_path / "x.tiktoken").exists()
