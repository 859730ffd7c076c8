"""What the training dialog runs: the trainer as a batched worker job, and its choices.

:func:`training_job` drives :func:`explorer.engine.trainers.train` on a worker and hands its
events to the GUI in batches (a BPE merge takes microseconds; one queued signal per merge would
flood the GUI thread). Every batch is a cancellation point, and the trainer also watches the
``cancel`` event itself.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Generator
from pathlib import Path

from explorer.bundled import resource_path
from explorer.engine.errors import TokenizerError
from explorer.engine.trainers import (
    BpeConfig,
    Corpus,
    TrainEvent,
    TrainingDone,
    UnigramConfig,
    train,
)

BATCH_SECONDS = 0.05
"""Events are sent to the GUI in batches at most this often (a merge is microseconds)."""
REDRAW_MS = 150

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


def training_job(corpus: Corpus, config: BpeConfig | UnigramConfig,
                 cancel: threading.Event) -> Generator[list[TrainEvent], None, TrainingDone]:
    """Worker job: run the trainer, yield its events in small batches, return the result.

    ``cancel`` is also handed to the trainer so a long step stops at its next event.
    """
    batch: list[TrainEvent] = []
    last = time.perf_counter()
    done: TrainingDone | None = None
    for event in train(corpus, config, cancel=cancel):
        if isinstance(event, TrainingDone):
            done = event
            continue
        batch.append(event)
        now = time.perf_counter()
        if now - last >= BATCH_SECONDS:
            yield batch
            batch, last = [], now
    if batch:
        yield batch
    if done is None:
        raise TokenizerError("the trainer ended without a result")
    return done
