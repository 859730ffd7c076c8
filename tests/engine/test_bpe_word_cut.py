"""A BPE pre-token merged word by word (``explorer.engine.hf.models.word_cut``) gives the
same tokens as merging it whole: random vocabularies, unknown characters, byte fallback."""

from __future__ import annotations

import random

import pytest

from explorer.engine.hf.models import BPEModel, word_cut

SP = "\u2581"


def random_bpe(seed: int, **options: object) -> BPEModel:
    """A BPE over ``ab▁>`` with random merges (some make ``b▁``, ``>▁`` and ``▁▁``, none
    ``a▁``: a word can be cut after ``a``), ``c`` and ``é`` unknown."""
    rng = random.Random(seed)
    vocab = {"<unk>": 0, **{ch: i + 1 for i, ch in enumerate(f"ab{SP}>")}}
    for b in range(256):
        vocab[f"<0x{b:02X}>"] = len(vocab)
    pieces = [f"ab{SP}>"[k] for k in range(4)]
    merges: list[tuple[str, str]] = []
    while len(merges) < 40:
        a, b = rng.choice(pieces), rng.choice(pieces)
        if a + b in vocab or len(a + b) > 6 or f"a{SP}" in a + b:
            continue
        merges.append((a, b))
        vocab[a + b] = len(vocab)
        pieces.append(a + b)
    if (">", SP) not in merges:
        merges.append((">", SP))
        vocab[">" + SP] = len(vocab)
    return BPEModel(vocab, merges, unk_token="<unk>", **options)  # type: ignore[arg-type]


def texts(seed: int) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(f"aab{SP}{SP}>cé") for _ in range(rng.randint(16, 90)))
            for _ in range(300)]


@pytest.mark.parametrize("options", [{}, {"fuse_unk": True}, {"byte_fallback": True},
                                     {"fuse_unk": True, "byte_fallback": True}])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_words_merged_apart_give_the_whole_pre_tokens_tokens(seed: int, options: dict) -> None:
    model = random_bpe(seed, **options)
    cut = model._word_cut()
    assert cut is not None
    cuts = 0
    for text in texts(seed):
        assert model.tokenize(text) == model._merge(text), text
        cuts += len(cut.findall(text))
    assert cuts > 300
    assert any(len(word) < 16 for word in model._cache)  # (the words were cached)


def test_no_cut_after_a_character_a_piece_holds_before_a_space() -> None:
    vocab = {"a": 0, "b": 1, SP: 2, ">": 3, f"{SP}a": 4, f">{SP}": 5, f"{SP}{SP}": 6}
    model = BPEModel(vocab, [(SP, "a"), (">", SP), (SP, SP)])
    cut = model._word_cut()
    assert cut is not None
    text = f"ab{SP}a>{SP}b{SP}{SP}a"
    assert [m.start() for m in cut.finditer(text)] == [2, 7]  # not after ">", nor in "▁▁"
    assert [t[1] for t in model.tokenize(text)] == ["a", "b", f"{SP}a", f">{SP}", "b", SP,
                                                    f"{SP}a"]


def test_no_cut_without_a_space_piece_or_with_a_prefix_or_suffix() -> None:
    assert word_cut({"a": 0, "b": 1, "ab": 2}) is None
    assert word_cut({"a": 0, SP: 1}) is None  # no piece starts a word with it
    assert random_bpe(1, continuing_subword_prefix="##")._word_cut() is None
    assert random_bpe(1, ignore_merges=True)._word_cut() is None
