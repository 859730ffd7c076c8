"""BPE training with HF's continuing_subword_prefix, end_of_word_suffix and max_token_length.

Merges and vocabulary are compared with HF ``BpeTrainer`` run on the same corpus and options.
HF numbers the prefixed/suffixed symbols (``##a``, ``a</w>``) in its hash map's order, which
changes between processes, so each case replays HF's order (read from its vocabulary) through
``symbol_order``; everything else (merge order, tie-breaks, ids) must then agree exactly.
Exports must load in HF with the same ids and decoded text as our engine.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from explorer.bundled import resource_path
from explorer.engine.formats import load_tokenizer
from explorer.engine.generators import run_to_end as _drive
from explorer.engine.trainers import (
    BpeConfig,
    Corpus,
    ExportError,
    export,
    run,
    to_tokenizer,
    train,
)
from explorer.engine.trainers.bpe_marks import marked_symbols
from explorer.engine.trainers.bpe_trainer import count_words, train_bpe_from_counts
from explorer.engine.trainers.corpus import split_lines

tokenizers = pytest.importorskip("tokenizers")

BOTCHAN = resource_path("corpus", "botchan.txt")
UDHR = resource_path("corpus", "udhr_sample.txt")

CASES: list[tuple[str, int, dict[str, Any]]] = [
    ("byte_level", 800, {"continuing_subword_prefix": "##"}),
    ("byte_level", 800, {"end_of_word_suffix": "</w>"}),
    ("byte_level", 800, {"max_token_length": 4}),
    ("metaspace", 900, {"continuing_subword_prefix": "##", "end_of_word_suffix": "</w>",
                        "max_token_length": 5}),
    ("metaspace", 700, {"end_of_word_suffix": "</w>", "special_tokens": ["<unk>"]}),
    # Dropped characters still count as a word's first/last (no tie at this cut in HF).
    ("metaspace", 600, {"continuing_subword_prefix": "##", "end_of_word_suffix": "</w>",
                        "limit_alphabet": 50, "special_tokens": ["<unk>"]}),
]
IDS = ["prefix", "suffix", "max_len", "meta_all_three", "meta_suffix_unk", "limit_alphabet"]


def _hf_train(mode: str, vocab_size: int, kw: dict[str, Any]) -> tokenizers.Tokenizer:
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    with open(BOTCHAN, encoding="utf-8", newline="") as f:  # keep \r\n as our Corpus does
        lines = split_lines(f.read())
    unk = "<unk>" if "<unk>" in kw.get("special_tokens", ()) else None
    tok = Tokenizer(models.BPE(unk_token=unk))
    kw = dict(kw)
    if mode == "byte_level":
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        kw["initial_alphabet"] = pre_tokenizers.ByteLevel.alphabet()
    else:
        tok.pre_tokenizer = pre_tokenizers.Metaspace()
        lines = [line.removesuffix("\n").removesuffix("\r") for line in lines]
    tok.train_from_iterator(lines, trainers.BpeTrainer(vocab_size=vocab_size,
                                                       show_progress=False, **kw))
    return tok


def _config(mode: str, vocab_size: int, kw: dict[str, Any]) -> BpeConfig:
    kw = dict(kw)
    kw["special_tokens"] = tuple(kw.get("special_tokens", ()))
    return BpeConfig(vocab_size=vocab_size, mode=mode, merge_events=False, **kw)  # type: ignore[arg-type]


@pytest.fixture(scope="module", params=CASES, ids=IDS)
def trained(request):
    mode, vocab_size, kw = request.param
    hf = _hf_train(mode, vocab_size, kw)
    cfg = _config(mode, vocab_size, kw)
    counts = _drive(count_words(Corpus.from_files([BOTCHAN]), cfg))
    hf_model = json.loads(hf.to_str())["model"]
    by_id = sorted(hf_model["vocab"], key=hf_model["vocab"].__getitem__)
    # HF adds the marked symbols right after specials and alphabet: replay their order.
    alphabet = {t: 0 for t in by_id if len(t) == 1 or t in cfg.special_tokens}
    marked = set(marked_symbols(counts, alphabet, cfg.continuing_subword_prefix,
                                 cfg.end_of_word_suffix)) - set(alphabet)
    start = next((i for i, t in enumerate(by_id) if t in marked), len(by_id))
    order = by_id[start:start + len(marked)] if marked else []
    model = _drive(train_bpe_from_counts(counts, cfg, symbol_order=order))
    return hf, hf_model, model, cfg


def test_merges_and_vocab_equal_hf(trained):
    _, hf_model, model, cfg = trained
    assert [list(m) for m in model.merges] == [list(m) for m in hf_model["merges"]]
    assert {t: i for i, t in enumerate(model.vocab)} == hf_model["vocab"]
    assert model.continuing_subword_prefix == cfg.continuing_subword_prefix
    assert model.end_of_word_suffix == cfg.end_of_word_suffix
    if cfg.max_token_length:
        # HF counts a new pair only when the merged token is shorter than the cap.
        prefix = cfg.continuing_subword_prefix or ""
        suffix = cfg.end_of_word_suffix or ""
        plain = [t.removeprefix(prefix).removesuffix(suffix) if prefix or suffix else t
                 for t in model.vocab]
        assert max(map(len, plain)) < cfg.max_token_length


def _held_out() -> list[str]:
    lines = UDHR.read_text("utf-8").splitlines()[::50]
    lines += BOTCHAN.read_text("utf-8").splitlines()[7::97]
    lines += ["Hello  world", "don't stop", "1234567 + 89", "naïve café ☕"]
    return [line for line in lines if line.strip()]


def test_export_loads_in_hf_with_the_same_ids(trained, tmp_path):
    _, _, model, _ = trained
    path = export(model, tmp_path / "marked.json")
    ref = tokenizers.Tokenizer.from_file(str(path))
    ours = load_tokenizer(path)
    direct = to_tokenizer(model)
    for text in _held_out():
        want = ref.encode(text, add_special_tokens=False)
        got = ours.encode(text)
        assert [t.id for t in got.tokens] == want.ids, text
        assert [t.piece for t in got.tokens] == want.tokens, text
        assert [t.id for t in direct.encode(text).tokens] == want.ids, text
        plain = [i for i in want.ids if model.vocab[i] not in model.special_tokens]
        assert ours.decode(plain) == ref.decode(plain), text  # HF skips specials


def test_decoder_removes_marks(trained):
    """On text made of seen characters the decoder gives the text back."""
    model = trained[2]
    tok = to_tokenizer(model)
    text = "The master said nothing, and I went home."
    ids = [t.id for t in tok.encode(text).tokens]
    assert tok.decode(ids) == text


@pytest.mark.parametrize("suffix", [".tiktoken", ".model"])
def test_marked_models_refuse_other_formats(suffix, tmp_path):
    mode = "byte_level" if suffix == ".tiktoken" else "metaspace"
    cfg = BpeConfig(vocab_size=300, mode=mode, continuing_subword_prefix="##",
                    special_tokens=("<unk>",), merge_events=False)
    model = run(train(Corpus.from_texts(["hello world, hello there\n"]), cfg)).model
    with pytest.raises(ExportError, match=r"export as \.json"):
        export(model, tmp_path / f"out{suffix}")
    assert not (tmp_path / f"out{suffix}").exists()


@pytest.mark.parametrize(("field", "value"), [("max_token_length", 0),
                                              ("continuing_subword_prefix", ""),
                                              ("end_of_word_suffix", "")])
def test_bad_options_are_rejected(field, value):
    with pytest.raises(ValueError):
        BpeConfig(**{field: value})


def test_default_symbol_order_is_deterministic():
    cfg = BpeConfig(vocab_size=400, mode="metaspace", continuing_subword_prefix="##",
                    end_of_word_suffix="</w>", merge_events=False)
    runs = [run(train(Corpus.from_files([BOTCHAN]), cfg)).model for _ in range(2)]
    assert runs[0] == runs[1]


@settings(max_examples=40, deadline=None)
@given(words=st.lists(st.text(alphabet="abc#", min_size=1, max_size=9), min_size=1,
                      max_size=40),
       cap=st.integers(min_value=1, max_value=6),
       prefix=st.sampled_from([None, "##", "#"]),
       suffix=st.sampled_from([None, "</w>", "#"]))
def test_random_words_with_cap_and_marks_equal_hf(words, cap, prefix, suffix):
    """Small alphabets force ties and mark collisions (``#`` + ``##a``); the cap then
    depends on per-occurrence lengths, as in HF's ``Word::merge``."""
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    kw: dict[str, Any] = {"max_token_length": cap}
    if prefix is not None:
        kw["continuing_subword_prefix"] = prefix
    if suffix is not None:
        kw["end_of_word_suffix"] = suffix
    tok.train_from_iterator([" ".join(words)], trainers.BpeTrainer(
        vocab_size=60, show_progress=False, **kw))
    hf_model = json.loads(tok.to_str())["model"]
    counts: dict[str, int] = {}
    for w in words:
        counts[w] = counts.get(w, 0) + 1
    cfg = BpeConfig(vocab_size=60, mode="metaspace", merge_events=False, **kw)
    alphabet = sorted({ch for w in words for ch in w})
    marked = [t for t in set(marked_symbols(counts, dict.fromkeys(alphabet), prefix, suffix))
              if t not in alphabet]
    by_id = sorted(hf_model["vocab"], key=hf_model["vocab"].__getitem__)
    order = by_id[len(alphabet):len(alphabet) + len(marked)]
    model = _drive(train_bpe_from_counts(counts, cfg, symbol_order=order))
    assert [list(m) for m in model.merges] == [list(m) for m in hf_model["merges"]]
    assert {t: i for i, t in enumerate(model.vocab)} == hf_model["vocab"]
