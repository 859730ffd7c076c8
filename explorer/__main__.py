"""``python -m explorer``: the same CLI as the ``tokenizer-explorer`` command."""

import multiprocessing

from explorer.cli import run

# In the frozen app, process-pool workers (corpus statistics) start this executable again:
# freeze_support() runs them instead of the CLI (a no-op everywhere else).
multiprocessing.freeze_support()
run()
