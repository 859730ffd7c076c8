"""Unigram trainer: sentencepiece-level quality, observable EM and pruning, determinism."""

from __future__ import annotations

import math

import numpy as np
import pytest

from explorer.bundled import resource_path
from explorer.engine.trainers import (
    EmStep,
    PhaseStarted,
    PruneStep,
    TrainingDone,
    UnigramConfig,
    export,
    run,
    train,
)
from explorer.engine.trainers.unigram_lattice import digamma
from explorer.engine.trainers.unigram_seed import script_of, valid_spans

spm = pytest.importorskip("sentencepiece")

BOTCHAN = resource_path("corpus", "botchan.txt")


def _split() -> tuple[list[str], list[str]]:
    lines = BOTCHAN.read_text("utf-8").splitlines()
    train_lines = [line for i, line in enumerate(lines) if i % 10]
    held = [line for i, line in enumerate(lines) if i % 10 == 0 and line.strip()]
    return train_lines, held


def test_tokens_per_char_within_2_percent_of_sentencepiece(tmp_path):
    train_lines, held = _split()
    corpus = tmp_path / "train.txt"
    corpus.write_text("\n".join(train_lines) + "\n", "utf-8")
    spm.SentencePieceTrainer.train(
        input=str(corpus), model_prefix=str(tmp_path / "ref"), vocab_size=1000,
        model_type="unigram", normalization_rule_name="identity", num_threads=1,
        minloglevel=2)
    model = run(train([line + "\n" for line in train_lines], UnigramConfig(vocab_size=1000)))
    export(model.model, tmp_path / "ours.model")
    ref = spm.SentencePieceProcessor(model_file=str(tmp_path / "ref.model"))
    ours = spm.SentencePieceProcessor(model_file=str(tmp_path / "ours.model"))
    chars = sum(len(line) for line in held)
    ref_tpc = sum(len(ref.encode(line)) for line in held) / chars
    our_tpc = sum(len(ours.encode(line)) for line in held) / chars
    print(f"tokens/char sentencepiece {ref_tpc:.4f} ours {our_tpc:.4f}")
    assert abs(our_tpc / ref_tpc - 1) < 0.02
    assert ours.get_piece_size() == 1000


def test_events_describe_em_and_pruning():
    train_lines, _ = _split()
    events = list(train(train_lines[:1500], UnigramConfig(vocab_size=300)))
    em = [e for e in events if isinstance(e, EmStep)]
    prunes = [e for e in events if isinstance(e, PruneStep)]
    assert isinstance(events[-1], TrainingDone)
    assert len(em) == 2 * (len(prunes) + 1)
    assert [e.sub_iteration for e in em] == [0, 1] * (len(prunes) + 1)
    assert all(e.objective > 0 and e.num_tokens > 0 for e in em)
    sizes = [p.kept for p in prunes]
    assert sizes == sorted(sizes, reverse=True) and sizes[-1] >= int(300 * 1.1)
    for p in prunes:
        losses = [loss for _, loss in p.removed]
        assert p.removed and all(loss >= 0 for loss in losses)
    phases = [e.phase for e in events if isinstance(e, PhaseStarted)]
    assert phases[:3] == ["reading", "seeding", "em"] and "pruning" in phases
    assert events[-1].model.vocab_size == 300


def test_byte_fallback_and_required_characters():
    train_lines, _ = _split()
    model = run(train(train_lines[:800], UnigramConfig(vocab_size=400, byte_fallback=True)))
    pieces = [p for p, _ in model.model.pieces]
    assert pieces[:3] == ["<unk>", "<s>", "</s>"]
    assert pieces[3:259] == [f"<0x{b:02X}>" for b in range(256)]
    assert len(pieces) == 400 and len(set(pieces)) == 400
    text = "".join(train_lines[:800])
    for ch in "etaoinsETAOIN":
        assert ch in pieces or ch not in text


def test_deterministic():
    train_lines, _ = _split()
    a = run(train(train_lines[:600], UnigramConfig(vocab_size=250))).model
    b = run(train(train_lines[:600], UnigramConfig(vocab_size=250))).model
    assert a == b


def test_digamma_is_the_derivative_of_log_gamma():
    x = np.array([0.5, 1.0, 3.7, 7.0, 42.0, 1e5])
    h = 1e-6
    numeric = [(math.lgamma(v + h) - math.lgamma(v - h)) / (2 * h) for v in x]
    assert np.allclose(digamma(x), numeric, rtol=1e-5, atol=1e-6)


def test_piece_validity_follows_sentencepiece_rules():
    def spans(word: str) -> set[str]:
        return {word[i:j] for i, j in valid_spans(word, 16, True)}

    assert "▁the" in spans("▁the,")
    assert "e," not in spans("▁the,")  # Latin + Common
    assert "日本語" in spans("日本語のテキスト")  # Han + Hiragana + Katakana fold to Han
    assert "▁" + "a" * 15 in spans("▁" + "a" * 20) and "a" * 17 not in spans("a" * 20)
    assert script_of("\u0301") == "Inherited"
    assert "fe\u0301" in spans("▁cafe\u0301")  # a combining mark takes the script before it
    assert "\u0301," not in spans("▁cafe\u0301,")
    assert spans("▁a\x00b") == {"▁a"}  # rare characters (masked as NUL) never join a piece


def test_vectorized_spans_equal_the_rules():
    from explorer.engine.trainers.unigram_substrings import WordArray

    words = {"▁the,": 3, "▁cafe\u0301s": 1, "日本語のテキスト。": 2, "▁a\x00b": 1,
             "▁" + "x" * 20: 1, "▁abc123": 1, "▁": 4, "▁Ελληνικά": 1, "▁ok▁no": 1}
    wa = WordArray(words, by_script=True)
    got = {(int(wa.word_of[k]), int(k - wa.word_start[k]), length)
           for length, ks in wa.spans(16) for k in ks.tolist()}
    want = {(w, i, j - i) for w, word in enumerate(words) for i, j in valid_spans(word, 16, True)}
    assert got == want


def test_too_small_vocab_fails_before_em():
    """A vocabulary that cannot hold the required characters fails at once, not after EM."""
    from explorer.engine.trainers import UnigramConfig, train
    from explorer.engine.trainers.events import EmStep
    from explorer.engine.trainers.unigram_trainer import TrainingError

    text = ["".join(chr(0x4E00 + i) for i in range(k, k + 40)) for k in range(0, 400, 40)]
    seen = []
    with pytest.raises(TrainingError, match="too small"):
        for ev in train(text, UnigramConfig(vocab_size=100)):
            seen.append(ev)
    assert not any(isinstance(ev, EmStep) for ev in seen)


def test_seed_ranking_equals_pythons_sort():
    import random

    import numpy as np

    from explorer.engine.trainers.unigram_substrings import _rank

    rnd = random.Random(7)
    for _ in range(100):
        texts = list({"".join(rnd.choice("ab▁é\x01\uffff😀") for _ in range(rnd.randint(1, 4)))
                      for _ in range(rnd.randint(0, 200))})
        scores = np.array([float(rnd.randint(1, 5)) for _ in texts])
        expected = sorted(range(len(texts)), key=lambda i: (-scores[i], texts[i]))
        assert _rank(scores, texts) == expected
        texts_nul = [t + "\0" for t in texts]  # numpy cannot hold a final NUL: Python sorts
        assert _rank(scores, texts_nul) == sorted(range(len(texts)),
                                                  key=lambda i: (-scores[i], texts_nul[i]))
