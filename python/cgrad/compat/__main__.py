"""`python -m cgrad.compat script.py [args...]`: the launcher's entry point."""
import sys

from .launcher import main

sys.exit(main())
