"""`python -m transcriber.cli`."""

import sys

from transcriber.cli import main

sys.exit(main())
