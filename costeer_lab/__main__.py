"""``python -m costeer_lab`` runs the command line."""

import sys

from costeer_lab.cli import main

sys.exit(main())
