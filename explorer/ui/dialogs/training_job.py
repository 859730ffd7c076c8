"""The training dialog's choices: algorithms, phase names, bundled corpora, redraw rate.

The trainer itself runs on a :class:`~explorer.workers.stepping.SteppedGenerator`, which
hands its events to the GUI in batches (a BPE merge takes microseconds; one queued signal per
merge would flood the GUI thread).
"""

from __future__ import annotations

from pathlib import Path

from explorer.bundled import resource_path

REDRAW_MS = 150
"""Plots and the step view redraw at most this often (about 7 times a second)."""

ALGORITHMS = {
    "BPE (byte-level, GPT-style)": ("bpe", "byte_level"),
    "BPE (characters + ▁, SentencePiece-style)": ("bpe", "metaspace"),
    "Unigram (SentencePiece EM)": ("unigram", ""),
}


PHASES = {"reading": "Reading the corpus", "counting": "Counting words", "merging": "Merging",
          "seeding": "Seeding pieces", "em": "EM", "pruning": "Pruning",
          "finalizing": "Finalizing"}


def bundled_corpora() -> list[Path]:
    """The corpus files shipped in ``resources/corpus``."""
    folder = resource_path("corpus")
    return sorted(folder.glob("*.txt")) if folder.is_dir() else []
