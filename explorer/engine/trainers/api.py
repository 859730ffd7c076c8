"""The one entry point for training: a cancellable event generator, export, Tokenizer.

Typical use on a worker thread::

    stop = threading.Event()
    for event in train(Corpus.from_files(paths), BpeConfig(vocab_size=4000), cancel=stop):
        post_to_ui(event)                      # events are immutable dataclasses
        if isinstance(event, TrainingDone):
            tokenizer = to_tokenizer(event.model)
            export(event.model, "out.json")    # atomic: temp file + os.replace

Cancel by setting ``stop`` (or any ``cancel`` callable returning True): the generator raises
:class:`~explorer.engine.errors.Cancelled` at its next event. Closing the generator
(``gen.close()``) also stops it. Training itself writes no files, so cancelling never leaves
one behind; :func:`train_to_file` writes its output only after the last event.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from explorer.engine.errors import Cancelled
from explorer.engine.tokenizer import Tokenizer
from explorer.engine.trainers.bpe_trainer import BpeConfig, train_bpe
from explorer.engine.trainers.corpus import Corpus
from explorer.engine.trainers.events import TrainEvent, TrainingDone
from explorer.engine.trainers.export import export, to_hf_json, to_sentencepiece
from explorer.engine.trainers.models import TrainedBpe, TrainedModel
from explorer.engine.trainers.unigram_trainer import UnigramConfig, train_unigram

CancelCheck = Callable[[], bool] | threading.Event | None
TrainConfig = BpeConfig | UnigramConfig


def _is_cancelled(cancel: CancelCheck) -> bool:
    if cancel is None:
        return False
    if isinstance(cancel, threading.Event):
        return cancel.is_set()
    return bool(cancel())


def train(
    corpus: Corpus | Iterable[str], config: TrainConfig, *, cancel: CancelCheck = None,
    finish: CancelCheck = None, details: Callable[[], bool] | None = None,
) -> Iterator[TrainEvent]:
    """Train BPE or Unigram (by the config's type); every event is a cancellation point.

    The last event is :class:`TrainingDone` with the model. Raises :class:`Cancelled` when
    ``cancel`` is set, checked before each event is handed out. ``finish`` ends training
    early *with* a model: BPE keeps the merges so far, Unigram finalizes the pieces of the
    last EM step or pruning round (checked before each merge / after each EM step and
    pruning round; a ``finish`` set before then takes effect when merging or EM starts).
    ``details``: BPE with ``step_pairs``: asked per merge whether to list its top pairs
    (None: every merge), so a viewer pays for them only when it shows them.
    """
    if not isinstance(corpus, Corpus):
        corpus = Corpus.from_texts(corpus)
    stop = None if finish is None else (lambda: _is_cancelled(finish))
    if isinstance(config, BpeConfig):
        events = train_bpe(corpus, config, stop, details)
    elif isinstance(config, UnigramConfig):
        events = train_unigram(corpus, config, stop)
    else:
        raise TypeError(f"unknown training config {type(config).__name__}")
    try:
        for event in events:
            if _is_cancelled(cancel):
                raise Cancelled("training cancelled")
            yield event
    finally:
        events.close()


def run(
    events: Iterable[TrainEvent], on_event: Callable[[TrainEvent], None] | None = None
) -> TrainingDone:
    """Drain a trainer generator and return its :class:`TrainingDone`."""
    done: TrainingDone | None = None
    for event in events:
        if on_event is not None:
            on_event(event)
        if isinstance(event, TrainingDone):
            done = event
    if done is None:
        raise RuntimeError("trainer ended without a TrainingDone event")
    return done


def train_to_file(
    corpus: Corpus | Iterable[str],
    config: TrainConfig,
    output: str | Path,
    *,
    cancel: CancelCheck = None,
) -> Iterator[TrainEvent]:
    """Like :func:`train`, then write the model to ``output`` (format by extension).

    The file is written once, atomically, after training succeeded; on cancel or error
    nothing is written.
    """
    from explorer.engine.trainers.export import ExportError, format_for_path

    format_for_path(output)  # fail before training on a bad extension or folder
    folder = Path(output).parent
    if str(folder) and not folder.is_dir():
        raise ExportError(f"cannot write {output}: no such folder {folder}")
    done: TrainingDone | None = None
    for event in train(corpus, config, cancel=cancel):
        if isinstance(event, TrainingDone):
            done = event
        else:
            yield event
    assert done is not None
    if _is_cancelled(cancel):
        raise Cancelled("training cancelled")
    export(done.model, output)
    yield done


def to_tokenizer(model: TrainedModel, *, name: str = "trained") -> Tokenizer:
    """An explorer Tokenizer for a trained model, with the same ids as its exports.

    Byte-level BPE -> ``ByteLevelBPETokenizer`` (merge trace); Metaspace BPE, BPE with a
    prefix/suffix and byte-level BPE trained with ``add_prefix_space`` -> the HF pipeline
    of its tokenizer.json (so it encodes as HF does with that file: a space before the
    text); Unigram -> ``SentencePieceTokenizer`` (lattice view).
    """
    if isinstance(model, TrainedBpe):
        if model.mode == "byte_level" and not model.marked and not model.add_prefix_space:
            from explorer.engine.bpe.tokenizer import ByteLevelBPETokenizer
            from explorer.engine.pretokenizers.byte_level import unicode_to_bytes

            to_byte = unicode_to_bytes()
            specials = set(model.special_tokens)
            ranks = {
                bytes(to_byte[c] for c in tok): i
                for i, tok in enumerate(model.vocab)
                if tok not in specials
            }
            spec_ids = {tok: i for i, tok in enumerate(model.vocab) if tok in specials}
            return ByteLevelBPETokenizer(
                ranks, model.pattern, spec_ids, name=name, format="trained", pattern_name="training"
            )
        from explorer.engine.formats.hf_json import from_dict

        return from_dict(json.loads(to_hf_json(model)), name=name)
    from explorer.engine.formats.sentencepiece_model import tokenizer_from_bytes

    return tokenizer_from_bytes(to_sentencepiece(model), name=name)
