"""A byte-level BPE tokenizer that normalizes text (NFKC, ...) before encoding it.

Anthropic's ``@anthropic-ai/tokenizer`` calls ``text.normalize('NFKC')`` and then tiktoken on
``claude.json``: the ids are tiktoken's ids of the normalized text. Here offsets go back to
the user's text through the normalizer's alignment (``norm_to_orig``), so the window still
highlights what was typed.
"""

from __future__ import annotations

from collections.abc import Mapping

from explorer.engine.bpe.specials import AllowedSpecial
from explorer.engine.bpe.tokenizer import ByteLevelBPETokenizer
from explorer.engine.encoding import Encoding, Token
from explorer.engine.normalizers.base import Normalizer
from explorer.engine.tokenizer import PipelineStages, PreToken, TokenizerInfo


class NormalizedBPETokenizer(ByteLevelBPETokenizer):
    """tiktoken ranks + pattern + specials, applied to ``normalizer(text)``."""

    def __init__(self, ranks: Mapping[bytes, int], pattern: str,
                 special_tokens: Mapping[str, int] | None, *, normalizer: Normalizer,
                 **kwargs: object) -> None:
        """Same arguments as :class:`ByteLevelBPETokenizer` plus the ``normalizer``."""
        super().__init__(ranks, pattern, special_tokens, **kwargs)  # type: ignore[arg-type]
        self.normalizer = normalizer
        base = self._info
        self._info = TokenizerInfo(
            name=base.name, format=base.format, model_type=base.model_type,
            vocab_size=base.vocab_size, special_tokens=base.special_tokens,
            normalizer=normalizer.name, pre_tokenizer=base.pre_tokenizer,
            decoder=base.decoder, extra=base.extra,
        )

    def encode(self, text: str, *, allowed_special: AllowedSpecial = "all",
               disallowed_special: AllowedSpecial = ()) -> Encoding:
        """Encode the normalized text; spans point into ``text``."""
        norm = self.normalizer.normalize(text)
        inner = super().encode(norm.text, allowed_special=allowed_special,
                               disallowed_special=disallowed_special)
        back, close = norm.norm_to_orig, _segment_ends(norm.norm_to_orig)
        tokens = [Token(t.id, t.piece, t.token_bytes, back[t.start],
                        close[t.end - 1] if t.end > t.start else back[t.start],
                        special=t.special, unknown=t.unknown, score=t.score, rank=t.rank)
                  for t in inner.tokens]
        return Encoding(text, tokens)

    def encode_ids(self, text: str, *, allowed_special: AllowedSpecial = "all",
                   disallowed_special: AllowedSpecial = ()) -> list[int]:
        """Ids of the normalized text."""
        return super().encode_ids(self.normalizer.normalize(text).text,
                                  allowed_special=allowed_special,
                                  disallowed_special=disallowed_special)

    def stages(self, text: str) -> PipelineStages:
        """Normalized text and its alignment, pre-tokens mapped back, tokens, decode."""
        norm = self.normalizer.normalize(text)
        inner = super().stages(norm.text)
        back = norm.norm_to_orig
        return PipelineStages(
            original=text, normalized=norm.text, norm_to_orig=list(back),
            pre_tokens=[PreToken(p.text, back[p.start], back[p.end]) for p in inner.pre_tokens],
            encoding=self.encode(text), decoded=inner.decoded,
        )


def _segment_ends(back: list[int]) -> list[int]:
    """For each normalized code point: the original offset where its segment ends.

    ``ﬁ`` normalizes to ``fi``, both mapped to the ligature's offset: a token holding only
    ``f`` still covers the whole ligature instead of an empty span.
    """
    n = len(back) - 1
    ends = [0] * n
    nxt = back[n]
    for k in range(n - 1, -1, -1):
        if back[k + 1] > back[k]:  # (non-decreasing) a new segment starts at k + 1
            nxt = back[k + 1]
        ends[k] = nxt
    return ends
