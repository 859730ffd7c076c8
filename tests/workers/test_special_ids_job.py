"""``special_ids_job``: HF ``encode(text, add_special_tokens=True)`` ids of a whole text."""

from __future__ import annotations

from references import require
from tokenizers import Tokenizer as HFTokenizer

from explorer.engine.formats import load_tokenizer
from explorer.workers.jobs import special_ids_job


def run(gen):
    steps = []
    try:
        while True:
            steps.append(next(gen))
    except StopIteration as stop:
        return steps, stop.value


def test_minilm_ids_match_hf_with_special_tokens():
    path = require("minilm", "tokenizer.json")
    ref = HFTokenizer.from_file(str(path))
    ref.no_truncation()
    ref.no_padding()
    tok = load_tokenizer(path)
    text = "Hello there, General Kenobi!\nA second line with ünïcödé and 🦜.\n" * 20
    steps, ids = run(special_ids_job(tok, text))
    assert steps  # a cancellation point before the encode
    assert ids == ref.encode(text, add_special_tokens=True).ids
    assert ids[0] == ref.token_to_id("[CLS]") and ids[-1] == ref.token_to_id("[SEP]")
    assert ids[1:-1] == ref.encode(text, add_special_tokens=False).ids
