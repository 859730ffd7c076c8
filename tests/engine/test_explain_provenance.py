"""Token provenance and "why this boundary" on real vocabularies: merge trees against the
queue trace, Unigram rivals against the lattice, WordPiece steps against the vocabulary, and
one explanation per kind of cause."""

from __future__ import annotations

import math

import pytest
from hf_support import parity_texts, trained_files
from references import require
from tiktoken_support import ours

from explorer.engine.explain.boundary import explain_boundary
from explorer.engine.explain.provenance import locate, merge_trees, token_provenance
from explorer.engine.formats import load_tokenizer

TEXTS = [t for t in parity_texts() if "<s>" not in t and "[CLS]" not in t][:12]


def _check_trees(tok, text: str, as_bytes: bool) -> int:
    enc = tok.encode(text)
    checked = 0
    for i, t in enumerate(enc):
        pr = token_provenance(tok, text, i, enc)
        if pr.tree is None:
            continue
        leaves = [leaf.symbol for leaf in pr.tree.leaves()]
        joined = b"".join(leaves) if as_bytes else "".join(leaves)
        assert joined == (t.token_bytes if as_bytes else t.piece), (text, t)
        # the tree is the trace: every inner node is an applied merge of the trace, children
        # merged before their parent, ranks as the queue popped them
        applied = {s.index: s.merge for s in pr.steps if s.merge is not None}
        for node in pr.tree.inner():
            if node.whole_token:
                continue
            m = applied[node.step]
            assert (m.merged, m.rank) == (node.symbol, node.rank)
            assert all(c.step is None or c.step < node.step for c in node.children)
        checked += 1
    return checked


def test_tiktoken_merge_trees_are_the_trace() -> None:
    tok = ours("cl100k")
    assert sum(_check_trees(tok, t, True) for t in TEXTS) > 100


def test_trees_of_a_whole_trace_cover_it_in_order() -> None:
    tok = ours("cl100k")
    steps = list(tok.trace_merges(" unbelievably"))
    trees = merge_trees(steps)
    assert b"".join(t.symbol for t in trees) == b" unbelievably"
    steps_in_trees = sorted(n.step for t in trees for n in t.inner())
    assert steps_in_trees == [s.index for s in steps if s.merge is not None]


@pytest.mark.parametrize("name", ["bytelevel_bpe", "llama_style_bpe"])
def test_hf_bpe_merge_trees(name: str) -> None:
    tok = load_tokenizer(trained_files()[name])
    assert sum(_check_trees(tok, t, False) for t in TEXTS) > 30


def test_sentencepiece_bpe_trees_carry_scores() -> None:
    path = require("sentencepiece", "botchan_en_bpe_1000.model")
    tok = load_tokenizer(path)
    text = "Tokenization is unbelievably interesting"
    assert _check_trees(tok, text, False) > 5
    enc = tok.encode(text)
    pr = token_provenance(tok, text, enc.pieces.index("ation"), enc)
    scores = dict(zip(tok.model.pieces, tok.model.scores, strict=True))
    assert all(n.score == scores[n.symbol] for n in pr.tree.inner())
    # the queue pops the best score first: among merges available together, applied merges
    # come in the trace with the rank (= -score) the queue held
    assert all(n.rank == -n.score for n in pr.tree.inner())


@pytest.mark.parametrize(("key", "name"), [("sentencepiece", "botchan_en_unigram_1000.model"),
                                           ("mon-tokenizer", "mon_tokenizer.json")])
def test_unigram_provenance_rivals_from_the_lattice(key: str, name: str) -> None:
    tok = load_tokenizer(require(key, name))
    text = "Tokenization is unbelievably interesting"
    enc = tok.encode(text)
    rivals_seen = 0
    for i, t in enumerate(enc):
        pr = token_provenance(tok, text, i, enc)
        assert pr.kind == "unigram"
        found = pr.competitors
        assert found[0].pieces == (t.piece,)
        assert math.isclose(found[0].score, t.score, rel_tol=1e-6)
        assert all("".join(s.pieces) == t.piece for s in found)
        assert [s.score for s in found] == sorted((s.score for s in found), reverse=True)
        if len(found) > 1:
            rivals_seen += 1
            assert f"{t.score - found[1].score:.3f} worse" in pr.summary
    assert rivals_seen >= 3


def test_wordpiece_greedy_steps_against_the_vocabulary() -> None:
    tok = load_tokenizer(require("minilm", "tokenizer.json"))
    text = "unbelievably tokenization"
    enc = tok.encode(text)
    vocab = tok.model.vocab
    pr = token_provenance(tok, text, 1, enc)
    assert pr.kind == "wordpiece"
    assert [s.chosen for s in pr.wordpiece] == [enc[i].piece
                                                for i in pr.model_input.token_indices]
    for step in pr.wordpiece:
        assert step.chosen in vocab and not any(r in vocab for r in step.rejected)
        assert all(len(r) > len(step.chosen) for r in step.rejected)


# --- why this boundary: one test per kind of cause, on real vocabularies -------------------

def test_boundary_special_token() -> None:
    tok = ours("cl100k")
    text = "end<|endoftext|>start"
    enc = tok.encode(text)
    e = explain_boundary(tok, text, enc.pieces.index("<|endoftext|>"), enc)
    assert e.cause == "special" and "100257" in e.text


def test_boundary_pre_tokenizer_alternative() -> None:
    tok = ours("cl100k")
    text = "in 1234567 days"
    enc = tok.encode(text)
    e = explain_boundary(tok, text, enc.pieces.index("456"), enc)
    assert e.cause == "pre-tokenizer"
    assert e.data["left_rule"] == e.data["right_rule"] == r"\p{N}{1,3}+"
    assert r"`\p{N}{1,3}+`" in e.text


def test_boundary_blocked_merge_names_the_winner() -> None:
    tok = ours("cl100k")
    text = "Tokenization"
    enc = tok.encode(text)
    assert enc.pieces == ["Token", "ization"]
    e = explain_boundary(tok, text, 1, enc)
    assert e.cause == "merge"
    d = e.data
    # both merges exist in the vocabulary with these ranks, the winner ranks lower
    ranks = tok.vocab.bytes_to_id
    assert ranks[d["blocked"].encode()] == d["blocked_rank"]
    assert ranks[d["winner"].encode()] == d["winner_rank"] < d["blocked_rank"]
    assert f"rank {d['blocked_rank']}" in e.text and "merged first" in e.text
    # and the winner really was applied at that step of the trace
    step = next(s for s in tok.trace_merges(text) if s.index == d["winner_step"])
    assert step.merge.merged == d["winner"].encode()


def test_boundary_without_any_merge_and_sentencepiece_scores() -> None:
    tok = load_tokenizer(require("sentencepiece", "botchan_en_bpe_1000.model"))
    text = "Tokenization unbelievably"
    enc = tok.encode(text)
    causes = [explain_boundary(tok, text, i, enc) for i in range(1, len(enc))]
    none = [e for e in causes if e.cause == "merge" and "No merge joins" in e.text]
    blocked = [e for e in causes if e.cause == "merge" and "merged first" in e.text]
    assert none and blocked
    for e in none:
        assert e.data["left"] + e.data["right"] not in tok.model.piece_ids
    scores = dict(zip(tok.model.pieces, tok.model.scores, strict=True))
    for e in blocked:
        assert e.data["unit"] == "score"
        assert -e.data["blocked_rank"] == scores[e.data["blocked"]]
        assert scores[e.data["winner"]] >= scores[e.data["blocked"]]


def test_boundary_viterbi_rival_scores() -> None:
    tok = load_tokenizer(require("sentencepiece", "botchan_en_unigram_1000.model"))
    text = "Tokenization"
    enc = tok.encode(text)
    found = [explain_boundary(tok, text, i, enc) for i in range(1, len(enc))]
    rivals = [e for e in found if "rival" in e.data]
    assert rivals
    for e in rivals:
        assert e.cause == "viterbi"
        assert math.isclose(e.data["score"], sum(enc[i].score for i in range(len(enc))),
                            rel_tol=1e-5)
        assert e.data["rival_score"] < e.data["score"]
        assert "".join(e.data["rival"]) == "".join(e.data["path"])
        pos, crossed = 0, False  # some rival piece spans the cut
        for piece in e.data["rival"]:
            crossed |= pos < e.data["cut"] < pos + len(piece)
            pos += len(piece)
        assert crossed
        assert f"{e.data['rival_score']:.2f}" in e.text


def test_boundary_wordpiece_and_normalization() -> None:
    tok = load_tokenizer(require("minilm", "tokenizer.json"))
    text = "Unbelievably café, ok"
    enc = tok.encode(text)
    e = explain_boundary(tok, text, 1, enc)
    assert e.cause == "wordpiece" and e.data["chosen"] == enc[0].piece
    assert all(r not in tok.model.vocab for r in e.data["rejected"])
    assert e.normalization == ""  # 'U' -> 'u' is not at this boundary
    k = enc.pieces.index(",")
    e = explain_boundary(tok, text, k, enc)
    assert e.cause == "pre-tokenizer" and "around punctuation" in e.text
    assert "turned 'é' into 'e'" in e.normalization
    e = explain_boundary(tok, text, k + 1, enc)  # ',' | 'ok'
    assert e.cause == "pre-tokenizer" and "at whitespace" in e.text


def test_locate_groups_tokens_by_pre_token() -> None:
    tok = ours("cl100k")
    text = "Hello wonderful world"
    enc = tok.encode(text)
    where = locate(tok, text, enc, 1)
    assert where is not None and where.original == " wonderful"
    assert [enc[i].piece for i in where.token_indices] == enc.pieces[1:-1]


def test_byte_fallback_boundaries_and_provenance() -> None:
    import sentencepiece as spm

    path = require("mistral-common", "tokenizer.model.v1")
    tok = load_tokenizer(path)
    text = "Grüße 𞤀𞤣 naïve"
    enc = tok.encode(text)
    assert enc.ids == spm.SentencePieceProcessor(model_file=str(path)).encode(text)
    first = enc.pieces.index("<0xF0>")
    e = explain_boundary(tok, text, first + 1, enc)  # between two bytes of '𞤀'
    assert e.cause == "byte-fallback" and e.data["symbol"] == "𞤀"
    assert "4 UTF-8 bytes" in e.text
    e = explain_boundary(tok, text, first + 4, enc)  # between '𞤀' and '𞤣'
    assert e.cause == "merge" and (e.data["left"], e.data["right"]) == ("𞤀", "𞤣")
    pr = token_provenance(tok, text, first, enc)
    assert "byte fallback" in pr.summary and pr.tree.symbol == "𞤀"
    pr = token_provenance(tok, text, enc.pieces.index("▁na"), enc)
    assert "".join(leaf.symbol for leaf in pr.tree.leaves()) == "▁na"
