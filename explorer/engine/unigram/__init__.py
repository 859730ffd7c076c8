"""SentencePiece-compatible Unigram model: :class:`UnigramModel`, :class:`Lattice`, :class:`Node`.

Build a model from in-memory data: ``UnigramModel(pieces, scores, types, unk_id=...)``; get a
lattice with ``model.lattice(normalized_text, norm_to_orig)``.
"""

from explorer.engine.unigram.lattice import Lattice, Node
from explorer.engine.unigram.model import UnigramModel
from explorer.engine.unigram.trie import PieceTrie

__all__ = ["Lattice", "Node", "PieceTrie", "UnigramModel"]
