"""Helpers shared by the document-token tests."""

from __future__ import annotations

from explorer.engine.generators import run_to_end as run

__all__ = ["flat", "run", "whole_tokens"]


def flat(doc):
    """Every token of a document as ``(id, start, end)`` in document offsets."""
    return [(t.id, s, e) for t, s, e in doc.tokens()]


def whole_tokens(tok, text):
    """``(id, start, end)`` of one whole-text ``encode``."""
    return [(t.id, t.start, t.end) for t in tok.encode(text).tokens]
