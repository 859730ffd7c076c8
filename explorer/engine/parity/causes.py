"""Which pipeline stage explains a differing span, computed from the stages' outputs.

Checks, in pipeline order, for one :class:`~explorer.engine.parity.diff.DiffSpan` of a
reference against our engine:

1. **added tokens**: a special/added token on one side that the other does not have there;
2. **normalization**: the normalizers' outputs for the span's text differ;
3. **pre-tokenization**: the pre-token boundaries inside the span differ (both exposed), or,
   when the reference hides its pre-tokens but exposes its model alone, its model gives *our*
   tokens on *our* pre-tokens (so the cut before the model differs), or one of its tokens
   crosses one of our pre-token boundaries (a model never merges across them);
4. **unknown/byte fallback**: the sides use unknown or ``<0xNN>`` byte pieces differently;
5. **merges/scores**: same normalization and pre-tokens, different model output.

Each :class:`Cause` carries that stage's output from each side, where the side exposes it.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from explorer.engine.encoding import Encoding, Token
from explorer.engine.parity.diff import DiffSpan
from explorer.engine.parity.implementations import Implementation, PreSplit

STAGES = ("added tokens", "normalization", "pre-tokenization", "unknown/byte fallback",
          "merges/scores")
UNEXPLAINED = "unexplained"


@dataclass(frozen=True, slots=True)
class Cause:
    """The stage that explains one differing span, and its output on each side."""

    stage: str
    """One of :data:`STAGES`, or :data:`UNEXPLAINED`."""
    explanation: str
    ours: str | None
    """That stage's output on our side for the span (None: not exposed)."""
    theirs: str | None


def _is_byte_piece(t: Token) -> bool:
    p = t.piece
    return len(p) == 6 and p.startswith("<0x") and p.endswith(">")


def _pieces(tokens: tuple[Token, ...]) -> str:
    return " | ".join(t.piece for t in tokens) if tokens else "(no tokens)"


def _splits_in(splits: list[PreSplit], start: int, end: int) -> list[PreSplit]:
    return [p for p in splits if (p.start < end and p.end > start)
            or (p.start == p.end and start <= p.start < end)]


def _show_splits(splits: list[PreSplit]) -> str:
    return " | ".join(repr(p.text)[1:-1] for p in splits) if splits else "(none)"


class StageProbe:
    """The stage outputs of two implementations on one text, computed once and shared by
    every span of that text."""

    def __init__(self, ours: Implementation, theirs: Implementation, text: str,
                 ours_encoding: Encoding) -> None:
        self.ours, self.theirs, self.text = ours, theirs, text
        self.ours_encoding = ours_encoding

    @cached_property
    def ours_pre(self) -> list[PreSplit] | None:
        """Our pre-tokens."""
        return self.ours.pre_tokenize(self.text)

    @cached_property
    def theirs_pre(self) -> list[PreSplit] | None:
        """The reference's pre-tokens, when exposed."""
        return self.theirs.pre_tokenize(self.text)

    def classify(self, span: DiffSpan) -> Cause:
        """The first stage, in pipeline order, whose outputs explain ``span``."""
        for check in (self._added, self._normalization, self._pre_tokenization,
                      self._fallback):
            cause = check(span)
            if cause is not None:
                return cause
        return self._model(span)

    # -- the checks, in pipeline order ------------------------------------------------------
    def _added(self, span: DiffSpan) -> Cause | None:
        # The unknown token is often an added token too, but the model emits it: not this stage.
        split_out = lambda ts: tuple(t for t in ts if t.special and not t.unknown)  # noqa: E731
        a = [t.id for t in split_out(span.ours)]
        b = [t.id for t in split_out(span.theirs)]
        if a == b:
            return None
        show = lambda ts: _pieces(split_out(ts))  # noqa: E731
        return Cause("added tokens",
                     "special/added tokens are split out differently before the model",
                     show(span.ours), show(span.theirs))

    def _normalization(self, span: DiffSpan) -> Cause | None:
        chunk = self.text[span.start:span.end]
        a, b = self.ours.normalize(chunk), self.theirs.normalize(chunk)
        if a is None or b is None or a == b:
            return None
        return Cause("normalization",
                     f"the normalizers turn {chunk!r} into different texts", a, b)

    def _pre_tokenization(self, span: DiffSpan) -> Cause | None:
        ours = self.ours_pre
        if ours is None:
            return None
        mine = _splits_in(ours, span.start, span.end)
        theirs = self.theirs_pre
        if theirs is not None:
            other = _splits_in(theirs, span.start, span.end)
            if [(p.start, p.end) for p in mine] != [(p.start, p.end) for p in other]:
                return Cause("pre-tokenization", "the pre-tokens differ",
                             _show_splits(mine), _show_splits(other))
            return None
        how = self.theirs.describe_stage("pre-tokenization")
        # Their model alone on our pre-tokens: our tokens back means their cut differs.
        if mine and not any(t.special for t in span.ours):
            lo, hi = min(p.start for p in mine), max(p.end for p in mine)
            model_ids: list[int] | None = []
            for p in mine:
                ids = self.theirs.model_ids(self.text[p.start:p.end])
                if ids is None or model_ids is None:
                    model_ids = None
                    break
                model_ids.extend(ids)
            ours_ids = [t.id for t in self.ours_encoding if lo <= t.start and t.end <= hi]
            if model_ids is not None and model_ids == ours_ids:
                return Cause("pre-tokenization",
                             f"{self.theirs.name}'s model gives our tokens on our pre-tokens, "
                             f"so its pre-tokens differ ({how})", _show_splits(mine), None)
            if model_ids is not None:
                return None
        cuts = {p.start for p in mine} | {p.end for p in mine}
        for t in span.theirs:
            crossed = [c for c in cuts if t.start < c < t.end]
            if crossed:
                return Cause("pre-tokenization",
                             f"{self.theirs.name}'s token {t.piece!r} crosses our pre-token "
                             f"boundary at {crossed[0]} ({how})", _show_splits(mine), None)
        return None

    def _fallback(self, span: DiffSpan) -> Cause | None:
        def marks(tokens: tuple[Token, ...]) -> tuple[int, int]:
            return (sum(t.unknown for t in tokens), sum(_is_byte_piece(t) for t in tokens))

        a, b = marks(span.ours), marks(span.theirs)
        if a == b or (a == (0, 0) and b == (0, 0)):
            return None
        return Cause("unknown/byte fallback",
                     f"unknown/byte pieces: ours {a[0]}/{a[1]}, theirs {b[0]}/{b[1]}",
                     _pieces(span.ours), _pieces(span.theirs))

    def _model(self, span: DiffSpan) -> Cause:
        known = self.ours_pre is not None
        why = ("same normalization and pre-tokens, different model output"
               if known and self.theirs_pre is not None
               else "same normalization; the model's output differs (pre-tokens of one side "
                    "not exposed)")
        return Cause("merges/scores", why, _pieces(span.ours), _pieces(span.theirs))
