"""The implementations a parity check runs: our engine and every reference library that can
read the loaded vocabulary file.

An :class:`Implementation` encodes text into an :class:`~explorer.engine.encoding.Encoding`
(ids, pieces and code-point offsets in the same convention as the engine: a token covers the
characters its bytes touch) and, where the library exposes them, the outputs of its earlier
stages (:meth:`Implementation.normalize`, :meth:`Implementation.pre_tokenize`) and of its model
alone (:meth:`Implementation.model_ids`), which the cause classification uses.

A reference library that is not installed, or that cannot read this kind of file, is an
:class:`Unavailable` entry with the reason and the ``pip install`` command that adds it;
never an error. Reference libraries are imported lazily, inside the adapters.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Literal

from explorer.engine.encoding import Encoding
from explorer.engine.install_hint import install_hint
from explorer.engine.tokenizer import Tokenizer


@dataclass(frozen=True, slots=True)
class PreSplit:
    """One pre-token as an implementation reports it, with original-text code-point offsets."""

    text: str
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class Unavailable:
    """A reference implementation that cannot run here, and why."""

    name: str
    reason: str
    pip: str | None = None
    """The command that installs it, when missing is the reason."""

    def describe(self) -> str:
        """One line for lists: name, reason and the install command (in the frozen build,
        that it is not included and how to get it)."""
        return f"{self.name}: {self.reason}" + (f" ({install_hint(self.pip)})" if self.pip else "")


def reference_allowed_special(tokenizer: Tokenizer) -> Literal["all"] | tuple[()]:
    """Special tokens recognised in text the way the format's reference library does:
    sentencepiece never parses control pieces out of text, nor mistral-common's tekken
    (``()``); tiktoken (with ``allowed_special="all"``), HF tokenizers and llama.cpp
    (``special=True``) do (``"all"``)."""
    return () if tokenizer.info.format in ("sentencepiece", "tekken") else "all"


class Implementation(ABC):
    """One implementation of the loaded vocabulary (ours or a reference library's)."""

    name: str = "?"
    is_reference: bool = True

    @abstractmethod
    def encode(self, text: str) -> Encoding:
        """Tokens of ``text`` (special tokens recognised, no post-processor), offsets in code
        points of ``text``."""

    def normalize(self, text: str) -> str | None:
        """The normalizer's output for ``text``; None when the library does not expose it."""
        return None

    def pre_tokenize(self, text: str) -> list[PreSplit] | None:
        """Pre-tokens of ``text`` with original offsets; None when not exposed."""
        return None

    def model_ids(self, pre_token: str) -> list[int] | None:
        """Ids the model alone gives for one original-text pre-token (no normalization, no
        splitting); None when the library has no such entry point."""
        return None

    def describe_stage(self, stage: str) -> str:
        """How this implementation's output for ``stage`` was obtained (for explanations)."""
        return "exposed by the library"


class EngineImplementation(Implementation):
    """Our own engine: every stage exposed through :meth:`Tokenizer.stages`."""

    is_reference = False

    def __init__(self, tokenizer: Tokenizer, name: str = "explorer (this engine)") -> None:
        self.tokenizer = tokenizer
        self.name = name
        self.allowed_special = reference_allowed_special(tokenizer)

    def encode(self, text: str) -> Encoding:
        """Our encoding, special tokens recognised as the format's reference library does."""
        return self.tokenizer.encode(text, allowed_special=self.allowed_special)

    def normalize(self, text: str) -> str | None:
        """Our normalizer's output."""
        return self.tokenizer.stages(text).normalized

    def pre_tokenize(self, text: str) -> list[PreSplit] | None:
        """Our pre-tokens (in the model's spelling) with original offsets."""
        return [PreSplit(p.text, p.start, p.end) for p in self.tokenizer.stages(text).pre_tokens]


@dataclass(slots=True)
class ImplementationSet:
    """What runs for one vocabulary: ours first, then the available references."""

    implementations: list[Implementation]
    unavailable: list[Unavailable]

    @property
    def names(self) -> list[str]:
        """Names in row order."""
        return [impl.name for impl in self.implementations]

    @property
    def references(self) -> list[Implementation]:
        """The reference implementations (everything but ours)."""
        return [impl for impl in self.implementations if impl.is_reference]
