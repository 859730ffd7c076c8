"""The BPE step's pair-count table is exact: at every merge, the listed pairs and counts are
those a from-scratch recount of the corpus's current words gives, in HF's order, also where
HF's own counts are stale (a token re-made by another merge; a length cap)."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable
from itertools import pairwise

import pytest
from pair_recount import NaiveState, Pair

from explorer.bundled import resource_path
from explorer.engine.generators import run_to_end
from explorer.engine.trainers import bpe_trainer
from explorer.engine.trainers.bpe_trainer import BpeConfig, count_words, train_bpe_from_counts
from explorer.engine.trainers.corpus import Corpus
from explorer.engine.trainers.events import Merge
from explorer.engine.trainers.models import TrainedBpe

K = 15
MERGES = 260


def _botchan_words(config: BpeConfig) -> dict[str, int]:
    text = resource_path("corpus", "botchan.txt").read_text(encoding="utf-8")[:25_000]
    text += "Tout être humain a droit à l'éducation. Все люди 東京で 🙂 12345\n"
    return run_to_end(count_words(Corpus.from_texts([text]), config))


def _hash_words(seed: int) -> dict[str, int]:
    """Words of ``#`` and ``a``: with the ``##`` prefix, merges often re-make a token."""
    rnd = random.Random(seed)
    words: dict[str, int] = {}
    for _ in range(40):
        w = "".join(rnd.choice("#a") for _ in range(rnd.randint(1, 9)))
        words[w] = words.get(w, 0) + rnd.randint(1, 20)
    return words


def _train(words: dict[str, int], config: BpeConfig,
           on_merge: Callable[[Merge], None] | None = None) -> tuple[TrainedBpe, list[Merge]]:
    merges: list[Merge] = []
    gen = train_bpe_from_counts(words, config)
    try:
        while True:
            e = next(gen)
            if isinstance(e, Merge):
                merges.append(e)
                if on_merge is not None:
                    on_merge(e)
    except StopIteration as stop:
        return stop.value, merges


def _check(words: dict[str, int], config: BpeConfig, expected: list[list[tuple[Pair, int]]],
           model: TrainedBpe, merges: list[Merge]) -> int:
    """Compare each merge's table with the recount before it; returns how many merges HF
    took by a stale count (its winner not leading the live table)."""
    ids = {tok: i for i, tok in enumerate(model.vocab)}
    assert len(merges) > 20 and len(expected) == len(merges)
    stale_wins = 0
    for m, want in zip(merges, expected, strict=True):
        got = [((p.left, p.right), p.count) for p in m.top_pairs]
        assert got == want, m.rank
        assert all((p.left_id, p.right_id) == (ids[p.left], ids[p.right]) for p in m.top_pairs)
        if got and got[0] == ((m.left, m.right), m.count):
            assert m.tied == sum(c == got[0][1] for _, c in got)
        else:
            stale_wins += 1
            assert m.tied == 0
    plain = _train(words, BpeConfig(**{**_fields(config), "step_pairs": 0}))[0]
    assert plain == model  # listing pairs never changes the merges
    assert any(m.tied > 1 for m in merges)  # ties happen, and the ids decide them
    for m in merges:
        tied = [(p.left_id, p.right_id) for p in m.top_pairs[:m.tied]]
        assert tied == sorted(tied)
    return stale_wins


def _check_every_step(words: dict[str, int], config: BpeConfig,
                      counted: Callable[[str, str], bool] | None = None) -> int:
    """Oracle: the merges replayed on every word, pairs recounted before each merge."""
    model, merges = _train(words, config)
    ids = {tok: i for i, tok in enumerate(model.vocab)}
    state = NaiveState(words, prefix=config.continuing_subword_prefix,
                       suffix=config.end_of_word_suffix)
    expected = []
    for m in merges:
        expected.append(state.top(ids, K, counted))
        state.apply(m.left, m.right, m.token)
    return _check(words, config, expected, model, merges)


def _fields(config: BpeConfig) -> dict:
    return {f: getattr(config, f) for f in config.__dataclass_fields__}


@pytest.mark.parametrize("mode", ["byte_level", "metaspace"])
def test_table_equals_a_recount_at_every_merge(mode):
    words = _botchan_words(BpeConfig(mode=mode))
    size = (256 if mode == "byte_level" else len({ch for w in words for ch in w})) + MERGES
    assert _check_every_step(words, BpeConfig(vocab_size=size, mode=mode, step_pairs=K)) == 0


def _recorder(seen: dict[str, list], recounts: list[Counter[tuple[int, int]]]
              ) -> Callable[[Merge], None]:
    def recount(_m: Merge) -> None:  # the trainer's own words, just after the merge
        out: Counter[tuple[int, int]] = Counter()
        for sym, c in zip(seen["words"], seen["counts"], strict=True):
            for a, b in pairwise(sym):
                out[a, b] += c
        recounts.append(out)

    return recount


@pytest.fixture()
def spy_on(monkeypatch: pytest.MonkeyPatch) -> Callable[[dict[str, list]], None]:
    """Let a test see the trainer's own words (they are merged in place)."""

    def install(seen: dict[str, list]) -> None:
        merge = bpe_trainer._merge_words

        def spy(words: list, wcounts: list, *args: object) -> object:
            seen["words"], seen["counts"] = words, wcounts
            return merge(words, wcounts, *args)  # type: ignore[arg-type]

        monkeypatch.setattr(bpe_trainer, "_merge_words", spy)

    return install


def test_table_is_live_where_hf_counts_are_stale(spy_on):
    """With the ``##`` prefix tokens get re-made, so HF's counts of merged pairs go stale
    and HF merges by them, only in the words it recorded for the entry it pops: then
    the trainer's words are no longer "every merge applied everywhere". The table still
    equals a recount of the trainer's own words, from scratch, before every merge."""
    config = BpeConfig(vocab_size=200, mode="metaspace", continuing_subword_prefix="##",
                       end_of_word_suffix="</w>", step_pairs=K)
    stale_wins = 0
    seen: dict[str, list] = {}
    spy_on(seen)
    for seed in range(8):
        words = _hash_words(seed)
        recounts: list[Counter[tuple[int, int]]] = []
        model, merges = _train(words, config, _recorder(seen, recounts))
        ids = {tok: i for i, tok in enumerate(model.vocab)}
        vocab = model.vocab
        first = NaiveState(words, prefix="##", suffix="</w>").top(ids, K)
        expected = [first] + [sorted((((vocab[a], vocab[b]), c) for (a, b), c in rc.items()),
                                     key=lambda kv: (-kv[1], ids[kv[0][0]], ids[kv[0][1]]))[:K]
                              for rc in recounts[:-1]]
        stale_wins += _check(words, config, expected, model, merges)
    assert stale_wins > 0  # HF's stale cases really happen here


def test_table_under_a_length_cap_lists_the_pairs_hf_counts():
    cap = 4
    config = BpeConfig(vocab_size=256 + 150, max_token_length=cap, step_pairs=K)
    words = _botchan_words(config)

    def counted(a: str, b: str) -> bool:  # HF counts pairs shorter than the cap (and chars)
        return len(a) + len(b) < cap or len(a) == len(b) == 1

    _check_every_step(words, config, counted)
