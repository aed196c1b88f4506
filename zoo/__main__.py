"""`python -m zoo` (inside zoo/.venv; scripts/zoo.sh sets it up)."""

import sys

from zoo.runner import main

sys.exit(main())
