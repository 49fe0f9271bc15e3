"""``python -m twolayer.tools.bench``: :func:`twolayer.tools.bench.main`."""

import sys

from . import main

sys.exit(main())
