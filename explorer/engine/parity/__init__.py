"""Parity: one vocabulary through our engine and every installed reference implementation.

- :mod:`implementations` / :mod:`adapters`: what runs for a file (missing libraries listed with
  their pip command);
- :mod:`diff`: the first differing token and every differing span, aligned by offsets;
- :mod:`causes`: the stage that explains each span, from the stages' outputs;
- :mod:`check` (one text) and :mod:`lines` (a whole file, a generator job; CSV/JSON export).
"""

from explorer.engine.parity.adapters import implementations_for
from explorer.engine.parity.check import TextParity, check_text
from explorer.engine.parity.lines import FileParity, check_lines

__all__ = ["FileParity", "TextParity", "check_lines", "check_text", "implementations_for"]
