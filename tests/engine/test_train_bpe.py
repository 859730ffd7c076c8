"""BPE trainer: the merge list and vocabulary equal HF tokenizers' BpeTrainer on real text."""

from __future__ import annotations

import itertools
import json

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from explorer.bundled import resource_path
from explorer.engine.pretokenizers.patterns import GPT2, LLAMA3
from explorer.engine.trainers.api import run
from explorer.engine.trainers.bpe_trainer import BpeConfig, train_bpe
from explorer.engine.trainers.corpus import Corpus, split_lines
from explorer.engine.trainers.events import Merge, MergeSummary, PhaseStarted, TrainingDone
from explorer.engine.trainers.words import GPT2_LINEWISE

tokenizers = pytest.importorskip("tokenizers")

CORPUS = [resource_path("corpus", "botchan.txt"), resource_path("corpus", "udhr_sample.txt")]


def _lines() -> list[str]:
    out: list[str] = []
    for p in CORPUS:
        with open(p, encoding="utf-8", newline="") as f:
            out += split_lines(f.read())
    return out


def _hf_train(mode: str, vocab_size: int, pattern: str | None = None,
              add_prefix_space: bool = False, **kw) -> dict:
    from tokenizers import Regex, Tokenizer, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    lines = _lines()
    if mode == "byte_level":
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=add_prefix_space)
        if pattern is not None:
            tok.pre_tokenizer = pre_tokenizers.Sequence([
                pre_tokenizers.Split(Regex(pattern), behavior="isolated"),
                pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
        kw.setdefault("initial_alphabet", pre_tokenizers.ByteLevel.alphabet())
    else:
        tok.pre_tokenizer = pre_tokenizers.Metaspace()
        lines = [line.removesuffix("\n").removesuffix("\r") for line in lines]
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, show_progress=False, **kw)
    tok.train_from_iterator(lines, trainer)
    model = json.loads(tok.to_str())["model"]
    model["merges"] = [tuple(m) if isinstance(m, list) else tuple(m.split(" "))
                       for m in model["merges"]]
    return model


@pytest.mark.parametrize(
    ("mode", "vocab_size", "hf_kw", "our_kw"),
    [
        ("byte_level", 1500, {"special_tokens": ["<|endoftext|>"]},
         {"special_tokens": ("<|endoftext|>",)}),
        ("metaspace", 1200, {"special_tokens": ["<unk>", "<s>"]},
         {"special_tokens": ("<unk>", "<s>")}),
        ("metaspace", 900, {"min_frequency": 40}, {"min_frequency": 40}),
        ("byte_level", 700, {"add_prefix_space": True}, {"add_prefix_space": True}),
        ("byte_level", 700, {"pattern": LLAMA3}, {"pattern": LLAMA3}),
    ],
    ids=["byte_level", "metaspace", "min_frequency", "prefix_space", "llama3_pattern"],
)
def test_merges_equal_hf(mode, vocab_size, hf_kw, our_kw):
    expected = _hf_train(mode, vocab_size, **hf_kw)
    cfg = BpeConfig(vocab_size=vocab_size, mode=mode, merge_events=False, **our_kw)
    model = run(train_bpe(Corpus.from_files(CORPUS), cfg)).model
    assert list(model.merges) == expected["merges"]
    assert {w: i for i, w in enumerate(model.vocab)} == expected["vocab"]


def test_limit_alphabet_keeps_most_frequent_characters():
    cfg = BpeConfig(vocab_size=400, mode="metaspace", limit_alphabet=100, merge_events=False)
    model = run(train_bpe(Corpus.from_files(CORPUS), cfg)).model
    alphabet = [t for t in model.vocab if len(t) == 1]
    assert len(alphabet) == 100
    assert "e" in alphabet and "▁" in alphabet
    assert alphabet == sorted(alphabet)


def test_iterable_corpus_equals_file_corpus():
    texts = _lines()
    cfg = BpeConfig(vocab_size=700, merge_events=False)
    a = run(train_bpe(Corpus.from_files(CORPUS), cfg)).model
    b = run(train_bpe(iter(texts), cfg)).model
    assert a == b


def test_events_one_per_merge_and_summaries():
    cfg = BpeConfig(vocab_size=300 + 256, summaries=10)
    events = list(train_bpe(["low lower lowest newer wider " * 30 + "\n"] * 5, cfg))
    merges = [e for e in events if isinstance(e, Merge)]
    model = events[-1].model
    assert isinstance(events[-1], TrainingDone)
    assert [(m.left, m.right) for m in merges] == list(model.merges)
    assert [m.vocab_size for m in merges] == list(range(257, 257 + len(merges)))
    assert all(m.count >= n.count for m, n in itertools.pairwise(merges))
    assert merges[0].left + merges[0].right == merges[0].token
    assert any(isinstance(e, MergeSummary) for e in events)
    phases = [e.phase for e in events if isinstance(e, PhaseStarted)]
    assert phases == ["reading", "counting", "merging"]


def test_deterministic():
    cfg = BpeConfig(vocab_size=600, mode="metaspace", merge_events=False)
    a = run(train_bpe(Corpus.from_files(CORPUS[:1]), cfg)).model
    b = run(train_bpe(Corpus.from_files(CORPUS[:1]), cfg)).model
    assert a == b


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from([*list("ab .,'1\n\r\t  é中"), "\xa0", "\u2028"]),
               max_size=40))
def test_linewise_pattern_equals_findall_per_line(text):
    per_line = [t for line in split_lines(text) for t in regex.findall(GPT2, line)]
    assert regex.findall(GPT2_LINEWISE, text) == per_line


@settings(max_examples=400, deadline=None)
@given(st.text(st.characters(max_codepoint=0x7F), max_size=80))
def test_ascii_twin_pattern_splits_exactly_like_regex(text):
    """The stdlib-``re`` twin used for ASCII blocks gives the same pre-tokens as ``regex``."""
    import re

    import regex

    from explorer.engine.trainers.words import GPT2_LINEWISE, GPT2_LINEWISE_ASCII

    assert re.findall(GPT2_LINEWISE_ASCII, text) == regex.findall(GPT2_LINEWISE, text)


def test_ascii_twin_on_every_ascii_character_pair():
    import re

    import regex

    from explorer.engine.trainers.words import GPT2_LINEWISE, GPT2_LINEWISE_ASCII

    chars = [chr(i) for i in range(128)]
    text = "".join(a + b + " " + a + "\n" for a in chars for b in chars[::7])
    assert re.findall(GPT2_LINEWISE_ASCII, text) == regex.findall(GPT2_LINEWISE, text)


def test_stopping_short_says_why():
    """Issue 18: training past what the corpus can give stops with a reason, not silently."""
    words = ["low lower lowest newer wider\n"] * 3
    model = run(train_bpe(words, BpeConfig(vocab_size=5000, merge_events=False))).model
    assert model.vocab_size < 5000
    assert model.stop_reason.startswith("no pair left to merge")
    rare = run(train_bpe(words, BpeConfig(vocab_size=5000, min_frequency=4,
                                          merge_events=False))).model
    assert "below the minimum frequency 4" in rare.stop_reason
    full = run(train_bpe(words, BpeConfig(vocab_size=260, merge_events=False))).model
    assert full.vocab_size == 260 and full.stop_reason == ""
