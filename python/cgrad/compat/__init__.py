"""cgrad.compat: running PyTorch programs unmodified on cgrad. `python -m
cgrad.compat script.py [args...]` (or `-m module`, `-c code`) runs a program
with `import torch` resolving to cgrad (launcher.py); install_as_torch() is
the import hook it installs (import_hook.py)."""
from .import_hook import install_as_torch, is_installed
from .launcher import main

__all__ = ["install_as_torch", "is_installed", "main"]
