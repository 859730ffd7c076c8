"""Observable tokenizer trainers: BPE (HF-identical merges) and Unigram (sentencepiece EM).

Public API (see :mod:`explorer.engine.trainers.api` for an example):

- :func:`train` (corpus, :class:`BpeConfig` | :class:`UnigramConfig`, ``cancel=``) -> event
  generator ending with :class:`TrainingDone`; :func:`train_to_file` also writes the output.
- :class:`Corpus` (``from_files`` / ``from_texts``), :func:`run` to drain a generator.
- :func:`export` (tokenizer.json / .model / .tiktoken by extension), :func:`to_tokenizer`.
- Event classes in :mod:`explorer.engine.trainers.events`.
"""

from explorer.engine.errors import Cancelled
from explorer.engine.trainers.api import run, to_tokenizer, train, train_to_file
from explorer.engine.trainers.bpe_trainer import BpeConfig
from explorer.engine.trainers.corpus import Corpus, CorpusError
from explorer.engine.trainers.events import (
    BytesRead,
    EmStep,
    Merge,
    MergeSummary,
    PhaseStarted,
    Progress,
    PruneStep,
    TrainEvent,
    TrainingDone,
    WordsCounted,
)
from explorer.engine.trainers.export import ExportError, export
from explorer.engine.trainers.models import TrainedBpe, TrainedModel, TrainedUnigram
from explorer.engine.trainers.unigram_trainer import TrainingError, UnigramConfig

__all__ = [
    "BpeConfig",
    "BytesRead",
    "Cancelled",
    "Corpus",
    "CorpusError",
    "EmStep",
    "ExportError",
    "Merge",
    "MergeSummary",
    "PhaseStarted",
    "Progress",
    "PruneStep",
    "TrainEvent",
    "TrainedBpe",
    "TrainedModel",
    "TrainedUnigram",
    "TrainingDone",
    "TrainingError",
    "UnigramConfig",
    "WordsCounted",
    "export",
    "run",
    "to_tokenizer",
    "train",
    "train_to_file",
]
