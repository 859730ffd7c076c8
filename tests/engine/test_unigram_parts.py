"""Long words as their parts in the exact pass (explorer/engine/unigram/parts.py) and the
pass's re-runs (``many._rerun``).

Vocabularies built for near ties (as in test_unigram_limits.py), with ``,`` and ``.`` as
one-character pieces no longer piece holds: every word is cut into parts there. The exact
pass on parts must decide exactly as one Viterbi over the whole text (sentencepiece's one
pass, re-basing included) and report the same word scores as the pass on whole words.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from test_unigram_limits import SPACE, f32, near_tie_model

from explorer.engine.sentencepiece.pieces import PieceType
from explorer.engine.unigram import many
from explorer.engine.unigram.batch import MAX_WORD
from explorer.engine.unigram.many import encode_from
from explorer.engine.unigram.model import UnigramModel
from explorer.engine.unigram.parts import by_parts
from explorer.engine.unigram.solve import BATCH_MIN_CHARS, text_rows, word_rows


def cut_model(rng: random.Random) -> UnigramModel:
    """:func:`near_tie_model` with ``,`` and ``.``: pieces of one character only."""
    base = near_tie_model(rng)
    pieces, scores = list(base.pieces), list(base.scores)
    for c in ",.":
        pieces.append(c)
        scores.append(f32(-rng.uniform(1.0, 5.0)))
    types = [PieceType.UNKNOWN] + [PieceType.NORMAL] * (len(pieces) - 1)
    return UnigramModel(pieces, scores, types)


def long_words_text(rng: random.Random, size: int) -> str:
    """Words of 8-60 characters, nearly all different, their parts drawn from a few dozen
    (as minified JSON's are)."""
    parts = ["".join(rng.choice("abcd") for _ in range(rng.randint(1, 6)))
             for _ in range(40)]
    out: list[str] = []
    total = 0
    while total < size:
        word = SPACE + rng.choice(",.").join(rng.choice(parts)
                                            for _ in range(rng.randint(2, 10)))
        out.append(word)
        total += len(word)
    return "".join(out)


@pytest.mark.parametrize("seed", range(3))
def test_the_pass_on_parts_is_sentencepieces_pass(seed: int,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(seed)
    model = cut_model(rng)
    path = model._words
    text = long_words_text(rng, 60_000)
    cut = []
    real = many.by_parts

    def watched(*args):  # type: ignore[no-untyped-def]
        units = real(*args)
        cut.append(units)
        return units

    monkeypatch.setattr(many, "by_parts", watched)
    on_parts = encode_from(path, text, None, 0.0)
    assert on_parts is not None
    assert any(u is not None and len(u.words) > len(u.word_unit) for u in cut), \
        "no word was cut: the text does not test the parts"
    # the oracle: one Viterbi over the whole text (sentencepiece's pass, re-basing included)
    lengths, ids, *_ = path.viterbi(text, 0.0)
    assert on_parts.ids.tolist() == list(ids)
    assert on_parts.lengths.tolist() == list(lengths)
    # the words' starting scores are the ones the pass on whole words reports
    monkeypatch.setattr(many, "by_parts", lambda *args: None)
    path.cache.clear()
    whole = encode_from(path, text, None, 0.0)
    assert whole is not None and whole.ids.tolist() == list(ids)
    assert on_parts.word_starts.tolist() == whole.word_starts.tolist()
    assert on_parts.word_scores.tolist() == whole.word_scores.tolist()


def test_parts_rerun_fewer_characters(monkeypatch: pytest.MonkeyPatch) -> None:
    """What the parts are for: a prefix score past a long word's limit re-ran all of it."""
    rng = random.Random(7)
    model = cut_model(rng)
    path = model._words
    text = long_words_text(rng, 60_000)
    rerun: list[int] = []
    real = path.viterbi

    def counting(word: str, base: float):  # type: ignore[no-untyped-def]
        rerun.append(len(word))
        return real(word, base)

    monkeypatch.setattr(path, "viterbi", counting)
    monkeypatch.setattr(many, "BATCH_MIN_CHARS", 10**9)  # every re-run one by one
    text_rows(path, [text])  # (the words solved first: only re-runs counted)
    rerun.clear()
    assert encode_from(path, text, None, 0.0) is not None
    on_parts = sum(rerun)
    monkeypatch.setattr(many, "by_parts", lambda *args: None)
    path.cache.clear()
    text_rows(path, [text])
    rerun.clear()
    assert encode_from(path, text, None, 0.0) is not None
    whole = sum(rerun)
    assert whole > 2000
    assert on_parts < whole / 2, (on_parts, whole)


def test_units_tile_the_text_and_name_their_rows() -> None:
    rng = random.Random(3)
    model = cut_model(rng)
    path = model._words
    text = long_words_text(rng, 20_000)
    keyed = text_rows(path, [text])
    assert keyed is not None
    table, rows, words, _ = keyed
    units = by_parts(path, words, rows, table)
    assert units is not None
    assert "".join(units.words) == text
    assert len(units.words) > len(words)
    # every word starts a unit; a unit is its word or one of its parts
    starts = units.words.bounds[units.word_unit]
    assert starts.tolist() == words.bounds[:-1].tolist()
    row_of = path.cache.rows.row_of
    assert [row_of[u] for u in units.words] == units.rows.tolist()
    for k in range(len(words)):
        end = units.word_unit[k + 1] if k + 1 < len(words) else len(units.words)
        pieces = [i for u in range(int(units.word_unit[k]), int(end))
                  for i in table.pieces(int(units.rows[u]))]
        assert pieces == table.pieces(int(rows[k]))
    # rows of another generation (the store was reset since the table was taken, and the
    # same words solved again in another order)
    path.cache.rows.clear()
    assert text_rows(path, ["".join(reversed(list(words)))]) is not None
    assert path.cache.rows.size >= len(table.limit)
    assert by_parts(path, words, rows, table) is None


def test_a_batch_of_reruns_is_kept_whole_and_long_words_go_alone(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The pass stops reading re-runs at the first that differs from the table: a batch's
    other re-runs are cached all the same (its next speculation asks for them again); words
    longer than ``MAX_WORD`` are not batched (a batch's cost grows with its longest)."""
    rng = random.Random(11)
    model = near_tie_model(rng)
    path = model._words
    short = list(dict.fromkeys(SPACE + "".join(rng.choice("abcd") for _ in range(12))
                               for _ in range(400)))
    long_word = SPACE + "abcd" * 15
    words = [*short, long_word]
    assert sum(map(len, short)) >= BATCH_MIN_CHARS and len(long_word) > MAX_WORD
    starts = np.full(len(words), -70_000.5)
    word_max = np.full(len(words), 100.0)
    batched: list[int] = []
    real_run = path.batch_viterbi().run

    def run(batch_words, bases=None):  # type: ignore[no-untyped-def]
        batched.extend(map(len, batch_words))
        return real_run(batch_words, bases)

    monkeypatch.setattr(path.batch_viterbi(), "run", run)
    reruns = many._rerun(path, words, 0, list(range(len(words))), starts, word_max)
    first = next(reruns)
    assert batched and max(batched) <= MAX_WORD
    for k, word in enumerate(short):
        key = path.binade_key(float(starts[k]), 100.0, word)
        assert key is not None
        pieces = path.cache.at(word, key)
        assert pieces is not None
        assert pieces == tuple(map(tuple, path.viterbi(word, float(starts[k]))[:2]))
    assert first == tuple(map(list, path.viterbi(short[0], float(starts[0]))[:2]))
    rest = list(reruns)
    assert rest[-1] == tuple(map(list, path.viterbi(long_word, float(starts[-1]))[:2]))


def test_several_parts_is_parts_of_the_per_word_path() -> None:
    from explorer.engine.unigram.parts import several_parts
    from explorer.engine.unigram.word_keys import KeyedWords

    rng = random.Random(2)
    model = cut_model(rng)
    path = model._words
    words = [SPACE * rng.randint(0, 1) + "".join(rng.choice("aabbccdd,.") for _ in range(n))
             for n in [rng.randint(1, 12) for _ in range(500)]]
    words = list(dict.fromkeys(w for w in words if w))
    several = several_parts(path, KeyedWords.of(words)).tolist()
    assert several == [len(path._parts(w)) > 1 for w in words]
    assert 20 < sum(several) < len(words) - 20


def test_a_childs_reruns_ahead_leave_out_the_words_the_pass_cuts() -> None:
    """A child process solving a document's words ahead re-runs its low-limit words at the
    binades above (binade.py); words of several parts are not: the exact pass re-runs
    their parts (rows of their own, re-run ahead when low themselves)."""
    from explorer.engine.unigram.binade import LOW_LIMIT

    rng = random.Random(5)
    model = cut_model(rng)
    path = model._words
    share = model.share_rows([long_words_text(rng, 30_000)])
    assert share.ahead is not None and len(share.ahead.words) > 10
    assert all(len(path._parts(w)) == 1 for w in share.ahead.words)
    low = [w for w, limit in zip(share.keyed().strings(), share.limit.tolist(), strict=True)
           if limit < LOW_LIMIT]
    assert sum(len(path._parts(w)) > 1 for w in low) > 10


def plain_model(rng: random.Random) -> UnigramModel:
    """Every string of one to three of ``abcd``, ``▁``, ``,`` and ``.`` with random scores
    (no built-in near ties): ``,`` and ``.`` cut every word into parts."""
    strings = [a + b + c for a in "abcd" for b in ["", *"abcd"] for c in ["", *"abcd"]
               if b or not c]
    pieces = ["<unk>", SPACE, ",", ".", *strings]
    scores = [0.0] + [f32(-rng.uniform(12.0, 30.0)) for _ in pieces[1:]]
    types = [PieceType.UNKNOWN] + [PieceType.NORMAL] * (len(pieces) - 1)
    return UnigramModel(pieces, scores, types)


def test_long_words_where_the_score_is_re_based_are_run_part_by_part(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The word in which sentencepiece's path score passes the re-basing threshold is run
    alone from its exact score; a long word (a CJK line is one) is cut into its parts
    first, so only the part where the score passes it runs alone: exact all the same."""
    rng = random.Random(4)
    model = plain_model(rng)
    path = model._words
    parts = ["".join(rng.choice("abcd") for _ in range(rng.randint(1, 6))) for _ in range(40)]
    text = "".join(SPACE + rng.choice(",.").join(rng.choice(parts)
                                                  for _ in range(rng.randint(20, 60)))
                   for _ in range(400))
    alone: list[int] = []
    real = path.viterbi

    def counting(word: str, base: float):  # type: ignore[no-untyped-def]
        alone.append(len(word))
        return real(word, base)

    lengths, ids, *_ = real(text, 0.0)  # (the oracle: one pass over the whole text)
    # (about -10 a character: the threshold is passed every ~10,000 characters)
    assert len(text) > 60_000 and min(map(len, text.split(SPACE)[1:])) > MAX_WORD
    monkeypatch.setattr(path, "viterbi", counting)
    resumed = encode_from(path, text, None, 0.0)
    assert resumed is not None
    assert resumed.ids.tolist() == list(ids) and resumed.lengths.tolist() == list(lengths)
    assert len(alone) >= 5 and max(alone) <= 8, alone


def test_a_long_word_whose_parts_are_not_rows_stays_whole() -> None:
    """A long word solved alone keeps its parts in the per-word cache, not as rows: the
    other words are still cut, that one is not, and the pass is exact."""
    rng = random.Random(6)
    model = plain_model(rng)
    path = model._words
    alone_word = SPACE + ",".join(["dcba", "ccc", "abab"] * 15)  # (parts met nowhere else)
    word_rows(path, [alone_word])  # (one word: the per-word path)
    row_of = path.cache.rows.row_of
    assert alone_word in row_of and "dcba" not in row_of
    parts = ["".join(rng.choice("abc") for _ in range(rng.randint(1, 5))) for _ in range(30)]
    words = [SPACE + ".".join(rng.choice(parts) for _ in range(rng.randint(12, 30)))
             for _ in range(300)]
    text = "".join(words[:150]) + alone_word + "".join(words[150:])
    keyed = text_rows(path, [text])
    assert keyed is not None
    table, rows, text_words, _ = keyed
    units = by_parts(path, text_words, rows, table)
    assert units is not None
    k = list(text_words).index(alone_word)
    assert units.words[int(units.word_unit[k])] == alone_word  # (whole)
    assert units.words[int(units.word_unit[0])] != words[0]  # (cut)
    assert "".join(units.words) == text
    lengths, ids, *_ = path.viterbi(text, 0.0)
    resumed = encode_from(path, text, None, 0.0)
    assert resumed is not None and resumed.ids.tolist() == list(ids)
    assert resumed.lengths.tolist() == list(lengths)


def spaced_model(rng: random.Random) -> UnigramModel:
    """:func:`plain_model` with ``▁`` before every string of one or two letters: words of
    ``▁`` and letters are one part."""
    strings = [a + b + c for a in "abcd" for b in ["", *"abcd"] for c in ["", *"abcd"]
               if b or not c]
    pieces = ["<unk>", SPACE, ",", ".", *strings, *[SPACE + s for s in strings if len(s) < 3]]
    scores = [0.0] + [f32(-rng.uniform(12.0, 30.0)) for _ in pieces[1:]]
    types = [PieceType.UNKNOWN] + [PieceType.NORMAL] * (len(pieces) - 1)
    return UnigramModel(pieces, scores, types)


def test_words_known_in_every_binade_above_their_limit_are_not_looked_into(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Rows taken from a child's shares say where their re-runs made ahead give their
    pieces; a word known so in every binade from its limit's up is one part, and
    :func:`by_parts` does not look for its parts: the units are the ones it finds looking
    at every word, fewer words looked into."""
    from explorer.engine.unigram import parts

    rng = random.Random(3)
    model = spaced_model(rng)  # (no built-in near ties: many re-runs give the table's pieces)
    short = [SPACE + "".join(rng.choice("abcd") for _ in range(rng.randint(2, 9)))
             for _ in range(3000)]
    text = "".join(rng.choice(short) if rng.random() < 0.9 else long_words_text(rng, 1)
                   for _ in range(8000))
    copy = type(model)(model.pieces, model.scores, model.types)
    taker = type(model)(model.pieces, model.scores, model.types)
    assert taker.take_rows(copy.share_rows([text])) > 0
    path = taker._words
    keyed = text_rows(path, [text])
    assert keyed is not None
    table, rows, words, _ = keyed
    looked: list[int] = []
    real = parts._part_rows

    def watched(solver, words_, low, table_):  # type: ignore[no-untyped-def]
        looked.append(len(low))
        return real(solver, words_, low, table_)

    monkeypatch.setattr(parts, "_part_rows", watched)
    units = by_parts(path, words, rows, table)
    skipping = sum(looked)
    looked.clear()
    monkeypatch.setattr(parts, "known_above",
                        lambda limit, same_at: np.zeros(len(limit), bool))
    every = by_parts(path, words, rows, table)
    assert units is not None and every is not None
    assert units.words.bounds.tolist() == every.words.bounds.tolist()
    assert units.rows.tolist() == every.rows.tolist()
    assert units.word_unit.tolist() == every.word_unit.tolist()
    assert 0 < skipping < sum(looked)
    # and the pass over them is one Viterbi over the whole text
    result = encode_from(path, text, None, 0.0)
    assert result is not None and result.ids.tolist() == list(path.viterbi(text, 0.0)[1])
