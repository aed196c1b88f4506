"""`python -m gradcheck ...`: the command line, `gradcheck.cli`."""

import sys

from gradcheck.cli import main

if __name__ == "__main__":
    sys.exit(main())
