"""``python -m explorer``: the same CLI as the ``tokenizer-explorer`` command."""

import sys

from explorer.cli import main

sys.exit(main())
