"""The Unigram lattice: Viterbi, n-best (vs sentencepiece), marginals, entropy, sampling."""

from __future__ import annotations

import itertools
import math
import random
from collections import Counter

import pytest
import sentencepiece as spm
from sp_support import multilingual_lines, reference_model, trained_model

from explorer.engine.formats import load_tokenizer
from explorer.engine.unigram import Lattice, UnigramModel

# A lattice whose answers read at a glance: paths of "abc" and their scores.
#   ab|c = -2.5   a|b|c = -3   a|bc = -3.5   abc = -4
PATHS = {("ab", "c"): -2.5, ("a", "b", "c"): -3.0, ("a", "bc"): -3.5, ("abc",): -4.0}


def small_lattice() -> Lattice:
    lattice = Lattice("abc")
    for pos, length, score in [
        (0, 1, -1),
        (1, 1, -1),
        (2, 1, -1),
        (0, 2, -1.5),
        (1, 2, -2.5),
        (0, 3, -4),
    ]:
        lattice.insert(pos, length, len(lattice.nodes), score)
    return lattice


def test_begin_and_end_nodes() -> None:
    lattice = small_lattice()
    assert [n.piece for n in lattice.begin_nodes(0)] == ["a", "ab", "abc"]
    assert [n.piece for n in lattice.end_nodes(3)] == ["c", "bc", "abc"]
    assert lattice.end_nodes(0) == [lattice.bos_node]
    assert lattice.begin_nodes(3) == [lattice.eos_node]
    assert (lattice.begin_nodes(1)[1].start, lattice.begin_nodes(1)[1].end) == (1, 3)


def test_viterbi_and_nbest_on_small_lattice() -> None:
    lattice = small_lattice()
    path, score = lattice.viterbi()
    assert [n.piece for n in path] == ["ab", "c"] and score == -2.5
    assert path[1].prev is path[0] and path[1].backtrace_score == -2.5
    nbest = lattice.nbest(10)
    assert [(tuple(n.piece for n in p), s) for p, s in nbest] == sorted(
        PATHS.items(), key=lambda kv: -kv[1]
    )


def test_marginals_entropy_and_probabilities_match_enumeration() -> None:
    lattice = small_lattice()
    z = math.log(sum(math.exp(s) for s in PATHS.values()))
    probs = {p: math.exp(s - z) for p, s in PATHS.items()}
    assert lattice.log_partition() == pytest.approx(z)
    marg = lattice.marginals()
    by_piece = {n.piece: marg[n.node_id] for n in lattice.nodes[2:]}
    for piece in ["a", "b", "c", "ab", "bc", "abc"]:
        assert by_piece[piece] == pytest.approx(sum(p for k, p in probs.items() if piece in k))
    entropy = -sum(p * math.log(p) for p in probs.values())
    assert lattice.entropy() == pytest.approx(entropy)
    for path, _ in lattice.nbest(4):
        key = tuple(n.piece for n in path)
        assert lattice.path_probability(path) == pytest.approx(probs[key])


def _chi_square_critical(df: int, z: float = 3.09) -> float:
    """Upper chi-square quantile (Wilson-Hilferty); z=3.09 is p=0.001."""
    return df * (1 - 2 / (9 * df) + z * math.sqrt(2 / (9 * df))) ** 3


def _chi_square(counts: Counter, expected: dict, n: int) -> float:
    return sum((counts[k] - n * p) ** 2 / (n * p) for k, p in expected.items())


def test_sampling_follows_lattice_probabilities_small() -> None:
    lattice = small_lattice()
    rng = random.Random(1234)
    n = 4000
    counts = Counter(tuple(x.piece for x in lattice.sample(1.0, rng)) for _ in range(n))
    z = math.log(sum(math.exp(s) for s in PATHS.values()))
    expected = {p: math.exp(s - z) for p, s in PATHS.items()}
    assert set(counts) <= set(expected)
    assert _chi_square(counts, expected, n) < _chi_square_critical(len(expected) - 1)


def test_sampling_follows_probabilities_on_a_real_lattice() -> None:
    tok = load_tokenizer(reference_model("sentencepiece", "botchan_en_unigram_1000.model"))
    lattice = tok.lattice("hello")
    paths = lattice.nbest(1024)
    probs = {tuple(n.id for n in p): lattice.path_probability(p, 0.5) for p, _ in paths}
    assert len(paths) < 1024 and sum(probs.values()) == pytest.approx(1.0)
    top = dict(sorted(probs.items(), key=lambda kv: -kv[1])[:8])
    expected = {**top, "other": 1.0 - sum(top.values())}
    rng = random.Random(7)
    n = 5000
    counts: Counter = Counter()
    for _ in range(n):
        key = tuple(x.id for x in lattice.sample(0.5, rng))
        counts[key if key in top else "other"] += 1
    assert _chi_square(counts, expected, n) < _chi_square_critical(len(expected) - 1)
    enc = tok.sample_encode("hello world", 0.5, random.Random(3))
    assert "".join(enc.pieces) == "▁hello▁world"


@pytest.mark.parametrize(
    "model",
    [
        "sentencepiece/botchan_en_unigram_1000.model",
        "sentencepiece/kyoto_ja_unigram_8000.model",
        "uni_nfkc_bytes_user",
    ],
)
def test_nbest_matches_sentencepiece(model: str) -> None:
    path = trained_model(model) if "/" not in model else reference_model(*model.split("/"))
    sp = spm.SentencePieceProcessor(model_file=str(path))
    tok = load_tokenizer(path)
    lines = [x for x in multilingual_lines() if len(x) <= 120][:60]
    for text in lines:
        ours = tok.nbest(text, 8)
        theirs = sp.nbest_encode(text, nbest_size=8, return_type="proto").nbests
        assert len(ours) == len(theirs), text
        scores = [s for _, s in ours]
        # A* in float32 may emit paths 1 ulp out of order, exactly as sentencepiece does
        assert all(a >= b - 1e-3 for a, b in itertools.pairwise(scores))
        # exact float32 scores, and equal-score paths in sentencepiece's order too
        assert scores == [n.score for n in theirs], text
        assert [e.ids for e, _ in ours] == [[p.id for p in n.pieces] for n in theirs], text
        assert [e.pieces for e, _ in ours] == [[p.piece for p in n.pieces] for n in theirs]
        if text.strip():
            assert ours[0][0].ids == tok.encode(text, allowed_special=()).ids


@pytest.mark.parametrize(
    "text", ["hello world", "  ﬁne   day ½ ", "日本語のテキスト", "x\u0301y 𩸽 \ue000\ue001"]
)
def test_lattice_marginals_cover_every_position_and_map_to_original(text: str) -> None:
    tok = load_tokenizer(reference_model("sentencepiece", "botchan_en_unigram_1000.model"))
    assert tok.supports_lattice()
    lattice = tok.lattice(text)
    marg = lattice.marginals()
    for pos in range(lattice.size):
        covering = [n for n in lattice.nodes[2:] if n.start <= pos < n.end]
        assert sum(marg[n.node_id] for n in covering) == pytest.approx(1.0)
    for node in lattice.nodes[2:]:
        start, end = lattice.orig_span(node)
        assert 0 <= start <= end <= len(text)
    best, _ = lattice.viterbi()
    assert [n.id for n in best] == tok.model.encode_ids(lattice.sentence)
    entropy = lattice.entropy()
    assert entropy >= 0.0


def test_unk_nodes_and_user_defined_pieces_in_lattice() -> None:
    model = UnigramModel(["<unk>", "a", "b", "ab", "<u>"], [0, -1, -2, -2.5, 0], [2, 1, 1, 1, 4])
    lattice = model.lattice("ab<u>z")
    unk = [n for n in lattice.nodes if n.id == 0]
    # "<" ">" "z" and "u" have no one-character piece
    assert sorted(n.start for n in unk) == [2, 3, 4, 5]
    assert all(n.score == -12.5 for n in unk)  # min score - 10
    user = [n for n in lattice.nodes if n.id == 4]
    assert len(user) == 1 and user[0].length == 3
    assert user[0].score == pytest.approx(0.2)  # 0.1 * (length - 1)
    assert [model.pieces[i] for i in model.encode_ids("ab<u>z")] == ["ab", "<u>", "<unk>"]
