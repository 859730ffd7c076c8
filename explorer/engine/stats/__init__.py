"""Corpus statistics: many tokenizers over a streamed corpus, map over shards, reduce.

- :mod:`scripts`: the Unicode script of every character (per-script breakdown);
- :mod:`corpus`: files and texts streamed as shards of lines (bounded memory);
- :mod:`counts`: the map (:func:`count_shard`) and the additive :class:`Counts`;
- :mod:`run`: :func:`corpus_stats`, a generator job over a local process pool, this process or
  a Dask cluster; :mod:`report`: JSON, CSV and text tables.
"""

from explorer.engine.stats.corpus import CorpusSource
from explorer.engine.stats.run import CorpusStats, Progress, corpus_stats

__all__ = ["CorpusSource", "CorpusStats", "Progress", "corpus_stats"]
