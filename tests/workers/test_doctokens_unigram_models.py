"""Real SentencePiece Unigram models: a multilingual document encoded window by window, each
window going on from the last one's tokens (``doctokens._continued``), is sentencepiece's one
encode of the whole text: ids identical, exact to the end, nothing encoded twice but the last
lines before each window end.

The models: the reference models sentencepiece ships (English, Japanese) and ones trained
here with the options that change the pipeline (byte fallback, user-defined symbols, no dummy
prefix and no whitespace removal, whitespace as a suffix); the text: our tricky lines and
UDHR paragraphs in ten scripts, lines of every length (Japanese and Chinese lines have no
spaces: their safe cuts are far apart).
"""

from __future__ import annotations

import pytest
import sentencepiece as spm
from doc_helpers import answers, encoded_lengths
from doc_helpers import run as _run
from engine.sp_support import TRAINED, multilingual_lines, reference_model, trained_model

from explorer.engine.formats import load_tokenizer
from explorer.workers import doctokens
from explorer.workers.doctokens import encode_document

MODELS = [
    "sentencepiece/botchan_en_unigram_1000.model",
    "sentencepiece/kyoto_ja_unigram_8000.model",
    *(name for name, opts in TRAINED.items() if opts["model_type"] == "unigram"),
]


def _model(name: str):
    return trained_model(name) if name in TRAINED else reference_model(*name.split("/"))


def _document() -> str:
    lines = multilingual_lines()
    # the lines eight times over, in different orders, so words recur across windows
    orders = [lines, lines[::-1], lines[::2] + lines[1::2], lines[1::2] + lines[::2]]
    return "\n".join(line for order in orders * 2 for line in order)


@pytest.mark.parametrize("name", MODELS)
def test_a_multilingual_document_is_one_whole_text_encode(name, monkeypatch):
    path = _model(name)
    tok = load_tokenizer(path)
    sp = spm.SentencePieceProcessor(model_file=str(path))
    text = _document()
    assert len(text) > 100_000
    encoded = encoded_lengths(tok, monkeypatch)
    went_on = answers(monkeypatch, doctokens, "_continued")
    doc = _run(encode_document(tok, text, chunk=2048))
    assert doc.ids().tolist() == sp.encode(text)
    assert doc.exact_until == len(text)
    assert len(went_on) > 10 and all(went_on)
    assert sum(encoded) < 1.2 * len(text)  # (UDHR paragraphs are lines of ~1000)
