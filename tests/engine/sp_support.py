"""Test support for the SentencePiece engine: reference models, trained models, corpora.

Models trained at test time with ``sentencepiece.SentencePieceTrainer`` are cached for the
whole session (``functools.cache``) in a temporary folder; each trains in about a second.
"""

from __future__ import annotations

import functools
import html
import re
from pathlib import Path

import sentencepiece as spm
from references import path as ref_path
from references import require
from scratch import scratch_dir

from explorer.engine.encoding import Encoding, byte_to_char_offsets

DATA = Path(__file__).resolve().parent.parent / "data"
REFERENCE_MODELS = [
    ("sentencepiece", "botchan_en_unigram_1000.model"),
    ("sentencepiece", "botchan_en_bpe_1000.model"),
    ("sentencepiece", "kyoto_ja_unigram_8000.model"),
    ("mistral-common", "tokenizer.model.v1"),
    ("mistral-common", "mistral_instruct_tokenizer_240216.model.v2"),
    ("mistral-common", "mistral_instruct_tokenizer_240323.model.v3"),
    ("mistral-common", "mistral_instruct_tokenizer_241114.model.v7"),
    ("mistral-common", "mistral_instruct_tokenizer_241114.model.v7m1"),
]
UDHR_LANGS = ["eng", "jpn", "cmn_hans", "tha", "kor", "hin", "arb", "rus", "vie", "amh"]

# name -> trainer options (on top of the common ones in _train)
TRAINED = {
    "uni_nfkc": dict(model_type="unigram", normalization_rule_name="nmt_nfkc"),
    "uni_identity_bytes": dict(
        model_type="unigram", normalization_rule_name="identity", byte_fallback=True
    ),
    "uni_nfkc_bytes_user": dict(
        model_type="unigram",
        normalization_rule_name="nmt_nfkc",
        byte_fallback=True,
        user_defined_symbols=["<sep>", "foo", "日本"],
        control_symbols=["<ctl>"],
        split_digits=True,
    ),
    "uni_nows": dict(
        model_type="unigram",
        normalization_rule_name="nfkc",
        add_dummy_prefix=False,
        remove_extra_whitespaces=False,
    ),
    "uni_suffix": dict(
        model_type="unigram", normalization_rule_name="nmt_nfkc", treat_whitespace_as_suffix=True
    ),
    "bpe_nfkc": dict(model_type="bpe", normalization_rule_name="nmt_nfkc"),
    "bpe_identity_bytes": dict(
        model_type="bpe", normalization_rule_name="identity", byte_fallback=True
    ),
    "char_nfkc": dict(model_type="char", normalization_rule_name="nmt_nfkc"),
    "word_identity": dict(model_type="word", normalization_rule_name="identity"),
    "bpe_suffix": dict(
        model_type="bpe",
        normalization_rule_name="nmt_nfkc_cf",
        treat_whitespace_as_suffix=True,
        user_defined_symbols=["<sep>"],
    ),
}


def reference_model(key: str, name: str) -> Path:
    """Path of a model shipped in a registry package (skips/fails when not fetched)."""
    return require(key, name)


def multilingual_lines() -> list[str]:
    """Our tricky lines plus UDHR paragraphs in several scripts (when fetched)."""
    lines = DATA.joinpath("multilingual_sp.txt").read_text(encoding="utf-8").split("\n")
    lines = [line for line in lines if line]
    lines += ["", " ", "\n", "a\nb\r\nc", "  \t  ", "x" * 300, "ab" * 200 + " " * 50]
    for lang in UDHR_LANGS:
        lines += udhr_paragraphs(lang)[:12]
    return lines


@functools.cache
def udhr_paragraphs(lang: str) -> list[str]:
    """Paragraphs of the UDHR in ``lang`` with HTML stripped (empty when not fetched)."""
    p = ref_path("udhr", f"declaration/{lang}.html")
    if not p.exists():
        return []
    raw = p.read_text(encoding="utf-8")
    found = re.findall(r"<(?:p|h\d|li)>(.*?)</(?:p|h\d|li)>", raw, re.S)
    return [html.unescape(re.sub(r"<[^>]+>", "", x)).strip() for x in found if x.strip()]


@functools.cache
def _workdir() -> Path:
    return scratch_dir("sp-trained-")


@functools.cache
def training_corpus() -> Path:
    """Botchan (first 1500 lines) + multilingual lines, one sentence per line."""
    botchan = require("sentencepiece", "botchan.txt").read_text(encoding="utf-8")
    lines = botchan.splitlines()[:1500] + [x for x in multilingual_lines() if x.strip()]
    out = _workdir() / "corpus.txt"
    out.write_text("\n".join(x.replace("\n", " ") for x in lines) + "\n", encoding="utf-8")
    return out


@functools.cache
def trained_model(name: str) -> Path:
    """Train (once per session) the model ``name`` of :data:`TRAINED`; return its path."""
    prefix = _workdir() / name
    spm.SentencePieceTrainer.train(
        input=str(training_corpus()),
        model_prefix=str(prefix),
        vocab_size=1500,
        hard_vocab_limit=False,
        character_coverage=0.995,
        num_threads=1,
        minloglevel=2,
        **TRAINED[name],
    )
    return prefix.with_suffix(".model")


def sp_offsets(sp: spm.SentencePieceProcessor, text: str) -> list[tuple[str, int, int]]:
    """sentencepiece's (piece, begin, end) in code points (its protos count bytes)."""
    to_char = byte_to_char_offsets(text)
    proto = sp.encode(text, return_type="proto")
    return [(p.piece, to_char[p.begin], to_char[p.end]) for p in proto.pieces]


def check_offsets(enc: Encoding, expected: list[tuple[str, int, int]], text: str) -> None:
    """Equal spans; the byte-fallback pieces of one character all carry that character's span
    (sentencepiece gives it to the last byte and empty spans to the others)."""
    assert [t.piece for t in enc.tokens] == [p for p, _, _ in expected], text
    i = 0
    while i < len(expected):
        tok = enc.tokens[i]
        group = 1
        if tok.piece.startswith("<0x") and len(tok.token_bytes) == 1:
            lead = tok.token_bytes[0]
            group = 1 if lead < 0x80 else 2 if lead >> 5 == 6 else 3 if lead >> 4 == 14 else 4
        _, begin, end = expected[i + group - 1]
        for t in enc.tokens[i : i + group]:
            assert (t.start, t.end) == (begin, end), (text, t)
        i += group
