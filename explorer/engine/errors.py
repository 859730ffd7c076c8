"""Errors the engine raises for bad input. Every one carries a message fit for a user.

The CLI prints ``str(error)`` on one line and exits 2; the UI shows it in a dialog.
"""


class TokenizerError(Exception):
    """Base class of every error the engine raises on purpose."""


class VocabFormatError(TokenizerError):
    """A vocabulary file is missing, corrupt, truncated, or of an unknown format."""


class UnsupportedComponentError(TokenizerError):
    """A file asks for a component (normalizer, pre-tokenizer, model...) we do not implement.

    The message names the component, e.g. ``unsupported normalizer 'Nmt'``.
    """


class SpecialTokenError(TokenizerError):
    """Text contains a disallowed special token (tiktoken semantics)."""


class Cancelled(TokenizerError):  # noqa: N818 - reads better at the raise site
    """Long work (loading, training) was cancelled by the caller."""


class CorpusError(TokenizerError):
    """A corpus file is missing, unreadable or not UTF-8 (the message names the line)."""
