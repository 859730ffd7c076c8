"""Parity of one text: every implementation's encoding, its diff against ours, the causes."""

from __future__ import annotations

from dataclasses import dataclass

from explorer.engine.encoding import Encoding
from explorer.engine.parity.causes import Cause, StageProbe
from explorer.engine.parity.diff import DiffSpan, EncodingDiff, diff_encodings
from explorer.engine.parity.implementations import Implementation, ImplementationSet


@dataclass(frozen=True, slots=True)
class SpanReport:
    """One differing span of a reference against ours, with its cause."""

    span: DiffSpan
    cause: Cause


@dataclass(slots=True)
class Row:
    """One implementation's result for the text (ours is the first row, with no diff)."""

    name: str
    encoding: Encoding | None
    diff: EncodingDiff | None
    spans: list[SpanReport]
    error: str | None = None
    """The library failed on this text (its message); the row has no encoding."""

    @property
    def agrees(self) -> bool:
        """True when this row's ids equal ours."""
        return self.error is None and (self.diff is None or self.diff.equal)


@dataclass(slots=True)
class TextParity:
    """Every row for one text."""

    text: str
    rows: list[Row]

    @property
    def agree(self) -> bool:
        """True when every implementation gives our ids."""
        return all(r.agrees for r in self.rows)

    @property
    def first_divergence(self) -> tuple[str, int] | None:
        """``(implementation, token index)`` of the earliest differing token, or None."""
        best: tuple[str, int] | None = None
        for r in self.rows:
            if r.diff is not None and r.diff.first_index is not None and (
                    best is None or r.diff.first_index < best[1]):
                best = (r.name, r.diff.first_index)
        return best


def _safe_encode(impl: Implementation, text: str) -> tuple[Encoding | None, str | None]:
    try:
        return impl.encode(text), None
    except Exception as e:  # a library's own failure is reported in its row
        return None, f"{type(e).__name__}: {e}"


def check_text(impls: ImplementationSet, text: str, *, explain: bool = True) -> TextParity:
    """Encode ``text`` with every implementation; diff each reference against ours.

    ``explain``: classify the cause of every differing span (costs the stage outputs).
    """
    ours_impl = impls.implementations[0]
    ours = ours_impl.encode(text)
    rows = [Row(ours_impl.name, ours, None, [])]
    for impl in impls.implementations[1:]:
        enc, error = _safe_encode(impl, text)
        if enc is None:
            rows.append(Row(impl.name, None, None, [], error))
            continue
        diff = diff_encodings(ours, enc)
        spans: list[SpanReport] = []
        if explain and diff.spans:
            probe = StageProbe(ours_impl, impl, text, ours)
            spans = [SpanReport(s, probe.classify(s)) for s in diff.spans]
        elif diff.spans:
            spans = [SpanReport(s, Cause("unexplained", "not classified", None, None))
                     for s in diff.spans]
        rows.append(Row(impl.name, enc, diff, spans))
    return TextParity(text, rows)
