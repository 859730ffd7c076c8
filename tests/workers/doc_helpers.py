"""Helpers shared by the document-token tests."""

from __future__ import annotations

from dataclasses import replace

from explorer.engine.generators import run_to_end as run

__all__ = ["answers", "encoded_lengths", "flat", "full", "run", "whole_tokens"]


def flat(doc):
    """Every token of a document as ``(id, start, end)`` in document offsets."""
    return [(t.id, s, e) for t, s, e in doc.tokens()]


def full(doc):
    """Every token of a document as a whole Token at its document span: irregular ones
    (``<unk>`` runs, partial UTF-8) with their pieces, bytes and flags, as ``encode`` gives
    them."""
    return [replace(t, start=s, end=e) for t, s, e in doc.tokens()]


def whole_tokens(tok, text):
    """``(id, start, end)`` of one whole-text ``encode``."""
    return [(t.id, t.start, t.end) for t in tok.encode(text).tokens]


def encoded_lengths(tok, monkeypatch):
    """A list that gets the length of every text ``tok.encode_compact_resumed`` is asked
    to encode from now on (what a document encode encodes, windows and continuations)."""
    lengths = []
    real = tok.encode_compact_resumed

    def counted(text, resume):
        lengths.append(len(text))
        return real(text, resume)

    monkeypatch.setattr(tok, "encode_compact_resumed", counted)
    return lengths


def answers(monkeypatch, module, name):
    """A list that gets, for every call of ``module.name`` from now on, whether it answered
    (returned something other than None)."""
    answered = []
    real = getattr(module, name)

    def recorded(*args):
        result = real(*args)
        answered.append(result is not None)
        return result

    monkeypatch.setattr(module, name, recorded)
    return answered


class ChildStandIn:
    """Stands in for a child solving words (:class:`~explorer.workers.tail_encode.TailEncode`):
    records the places the thread reports and when it asks for the child's words."""

    words = True

    def __init__(self) -> None:
        self.places: list[int] = []
        self.asked = 0

    def reached(self, offset: int) -> None:
        self.places.append(offset)

    def covered_from(self) -> None:
        self.asked += 1

    def close(self) -> None:
        pass


def run_with_partials(gen):
    """Run a first encode to its end: ``(document, the partial results it yielded)``."""
    partials = []
    try:
        while True:
            progress = next(gen)
            if progress.partial is not None:
                partials.append(progress.partial)
    except StopIteration as stop:
        return stop.value, partials
