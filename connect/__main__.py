"""``python -m connect distributed|standalone worker.properties [connector files ...]``."""

import sys

from connect.cli import main

sys.exit(main())
