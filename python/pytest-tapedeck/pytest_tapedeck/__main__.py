"""``python -m pytest_tapedeck ARGS``: the ``tapedeck`` console command (``console.main``)."""

import sys

from .console import main

sys.exit(main())
