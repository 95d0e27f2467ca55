from __future__ import annotations

import sys

from swap.cli import main

sys.exit(main())
