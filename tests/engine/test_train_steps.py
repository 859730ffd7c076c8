"""Step data of the trainers: prefix models, early finish, sample replay, Unigram snapshots
per round (the live pair counts: test_train_pair_counts.py)."""

from __future__ import annotations

import threading
from collections import Counter
from dataclasses import replace

import pytest

from explorer.bundled import resource_path
from explorer.engine.generators import run_to_end as run_gen
from explorer.engine.trainers.api import run, to_tokenizer, train
from explorer.engine.trainers.bpe_trainer import BpeConfig
from explorer.engine.trainers.corpus import Corpus
from explorer.engine.trainers.events import EmStep, Merge, PruneStep, SeedsReady
from explorer.engine.trainers.models import TrainedBpe, TrainedUnigram
from explorer.engine.trainers.sample import BpeSample, changed_spans
from explorer.engine.trainers.unigram_trainer import UnigramConfig
from explorer.engine.trainers.words import count_metaspace

MULTI = ("The school was a grand old building, said the teacher.\n"
         "Tout être humain a droit à l'éducation; naïve café.\n"
         "Все люди рождаются свободными. 東京で会いましょう 🙂 ok\n"
         "  indented  spaces\tand tabs 12345\n")


def _corpus_text() -> str:
    botchan = resource_path("corpus", "botchan.txt").read_text(encoding="utf-8")
    udhr = resource_path("corpus", "udhr_sample.txt").read_text(encoding="utf-8")
    return botchan[:60_000] + udhr[:40_000] + MULTI


@pytest.fixture(scope="module")
def text() -> str:
    return _corpus_text()


@pytest.fixture(scope="module")
def bpe_run(text: str) -> tuple[TrainedBpe, list[Merge]]:
    merges: list[Merge] = []
    done = run(train([text], BpeConfig(vocab_size=900, step_pairs=25)),
               lambda e: merges.append(e) if isinstance(e, Merge) else None)
    assert isinstance(done.model, TrainedBpe)
    return done.model, merges


def test_details_do_not_change_the_merges(text, bpe_run):
    model, _ = bpe_run
    plain = run(train([text], BpeConfig(vocab_size=900))).model
    assert plain == model


@pytest.mark.parametrize("config", [
    BpeConfig(vocab_size=700),
    BpeConfig(vocab_size=700, mode="metaspace"),
    BpeConfig(vocab_size=700, continuing_subword_prefix="##", end_of_word_suffix="</w>"),
], ids=["byte_level", "metaspace", "marked"])
def test_first_n_merges_equal_a_shorter_run(text, config):
    full = run(train([text], config)).model
    assert isinstance(full, TrainedBpe)
    base = full.num_base
    for n in (0, 1, 37, 200):
        short = run(train([text], BpeConfig(**{**_fields(config), "vocab_size": base + n})))
        cut = full.prefix(n)
        assert cut == short.model
        assert (to_tokenizer(cut).encode(MULTI).ids
                == to_tokenizer(short.model).encode(MULTI).ids)


def _fields(config: BpeConfig) -> dict:
    return {f: getattr(config, f) for f in config.__dataclass_fields__}


def test_finish_keeps_the_merges_so_far(text):
    stop = threading.Event()
    seen = 0

    def on(e) -> None:  # type: ignore[no-untyped-def]
        nonlocal seen
        if isinstance(e, Merge):
            seen += 1
            if seen == 50:
                stop.set()

    done = run(train([text], BpeConfig(vocab_size=900), finish=stop), on)
    model = done.model
    assert isinstance(model, TrainedBpe) and len(model.merges) == 50
    full = run(train([text], BpeConfig(vocab_size=900))).model
    assert isinstance(full, TrainedBpe) and replace(model, stop_reason="") == full.prefix(50)
    assert "stopped early" in model.stop_reason
    assert to_tokenizer(model).decode(to_tokenizer(model).encode(MULTI).ids) == MULTI


@pytest.mark.parametrize("config", [
    BpeConfig(vocab_size=600),
    BpeConfig(vocab_size=600, mode="metaspace"),
], ids=["byte_level", "metaspace"])
def test_sample_replay_equals_the_cut_tokenizer(text, config):
    merges: list[Merge] = []
    model = run(train([text], config),
                lambda e: merges.append(e) if isinstance(e, Merge) else None).model
    assert isinstance(model, TrainedBpe)
    sample = BpeSample(MULTI, mode=config.mode, pattern=config.pattern,
                       add_prefix_space=config.add_prefix_space)
    ids = {t: i for i, t in enumerate(model.vocab)}
    before = sample.spans()
    for n, m in enumerate(merges, 1):
        changed = sample.apply(m.left, m.right, m.token)
        if n in (1, 20, 150, len(merges)):
            tok = to_tokenizer(model.prefix(n))
            if config.mode == "byte_level":
                expected = tok.encode(MULTI).ids
            else:  # the trainer's Metaspace view: each line on its own, no line ending
                expected = [i for line in MULTI.splitlines() for i in tok.encode(line).ids]
            assert [ids[s] for s in sample.symbols()] == expected, n
            spans = sample.spans()
            assert changed_spans(before, spans) == [s for s in spans if s not in set(before)]
        assert set(changed) <= set(sample.where(m.token))
        before = sample.spans()


def test_sample_where_finds_a_token():
    sample = BpeSample("the cat the", mode="byte_level",
                       pattern=BpeConfig().pattern)
    sample.apply("t", "h", "th")
    changed = sample.apply("th", "e", "the")
    assert changed == [(0, 3), (8, 11)]
    assert sample.where("the") == [(0, 3), (8, 11)]


@pytest.fixture(scope="module")
def unigram_events(text: str) -> list:
    events: list = []
    run(train([text], UnigramConfig(vocab_size=600, step_details=True)), events.append)
    return events


def test_unigram_snapshots_per_round(text, unigram_events):
    events = unigram_events
    seeds = [e for e in events if isinstance(e, SeedsReady)]
    assert len(seeds) == 1 and seeds[0].size > 600
    top = [s for _, s in seeds[0].top]
    assert top == sorted(top, reverse=True)
    prunes = [e for e in events if isinstance(e, PruneStep)]
    ems = [e for e in events if isinstance(e, EmStep)]
    assert len(prunes) >= 2 and all(e.snapshot is not None for e in prunes + ems)
    final = events[-1].model
    for p in prunes:
        snap = p.snapshot
        assert isinstance(snap, TrainedUnigram)
        learned = {s for s, _ in snap.pieces[snap.num_meta:]}
        assert {s for s, _ in p.removed}.isdisjoint(learned - {s for s in learned
                                                               if len(s) == 1})
        assert snap.vocab_size >= p.kept + snap.num_meta
        assert to_tokenizer(snap).encode(MULTI).ids
    # the last round's pieces hold the final model's learned pieces
    last = {s for s, _ in prunes[-1].snapshot.pieces}
    assert {s for s, _ in final.pieces if len(s) > 1} <= last
    plain = run(train([text], UnigramConfig(vocab_size=600))).model
    assert plain == final


def test_unigram_finish_after_a_round_gives_a_usable_model(text):
    stop = threading.Event()
    done = run(train([text], UnigramConfig(vocab_size=600), finish=stop),
               lambda e: stop.set() if isinstance(e, PruneStep) else None)
    model = done.model
    assert isinstance(model, TrainedUnigram) and model.vocab_size <= 600
    tok = to_tokenizer(model)
    assert tok.decode(tok.encode("the school was grand").ids) == "the school was grand"


def test_metaspace_sample_words(text):
    words = run_gen(count_metaspace(Corpus.from_texts([MULTI])))
    sample = BpeSample(MULTI, mode="metaspace")
    assert Counter("".join(w.symbols) for w in sample.words) == Counter(words)
