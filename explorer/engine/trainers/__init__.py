"""Observable tokenizer trainers: BPE (HF-identical merges) and Unigram (sentencepiece EM).

Public API (see :mod:`explorer.engine.trainers.api` for an example):

- :func:`train` (corpus, :class:`BpeConfig` | :class:`UnigramConfig`, ``cancel=``) -> event
  generator ending with :class:`TrainingDone`; :func:`train_to_file` also writes the output.
- :class:`Corpus` (``from_files`` / ``from_texts``), :func:`run` to drain a generator.
- :func:`export` (tokenizer.json / .model / .tiktoken by extension), :func:`to_tokenizer`.
- Event classes in :mod:`explorer.engine.trainers.events`.

Names are imported lazily (numpy and the trainers load on first use), so importing the
package, e.g. for the CLI's ``train`` sub-command, stays cheap.
"""

from __future__ import annotations

import importlib
from typing import Any

# ``export`` is both a submodule and a function: bind the function now (the submodule is
# light), so a later import of the submodule cannot shadow it.
from explorer.engine.trainers.export import ExportError as ExportError
from explorer.engine.trainers.export import export as export

_EXPORTS = {
    "Cancelled": "explorer.engine.errors",
    "run": "explorer.engine.trainers.api",
    "to_tokenizer": "explorer.engine.trainers.api",
    "train": "explorer.engine.trainers.api",
    "train_to_file": "explorer.engine.trainers.api",
    "BpeConfig": "explorer.engine.trainers.bpe_trainer",
    "Corpus": "explorer.engine.trainers.corpus",
    "CorpusError": "explorer.engine.trainers.corpus",
    "BytesRead": "explorer.engine.trainers.events",
    "EmStep": "explorer.engine.trainers.events",
    "Merge": "explorer.engine.trainers.events",
    "MergeSummary": "explorer.engine.trainers.events",
    "PairCount": "explorer.engine.trainers.events",
    "PhaseStarted": "explorer.engine.trainers.events",
    "Progress": "explorer.engine.trainers.events",
    "PruneStep": "explorer.engine.trainers.events",
    "SeedsReady": "explorer.engine.trainers.events",
    "TrainEvent": "explorer.engine.trainers.events",
    "TrainingDone": "explorer.engine.trainers.events",
    "WordsCounted": "explorer.engine.trainers.events",
    "TrainedBpe": "explorer.engine.trainers.models",
    "TrainedModel": "explorer.engine.trainers.models",
    "TrainedUnigram": "explorer.engine.trainers.models",
    "TrainingError": "explorer.engine.trainers.unigram_trainer",
    "UnigramConfig": "explorer.engine.trainers.unigram_trainer",
}

__all__ = sorted([*_EXPORTS, "ExportError", "export"])


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
