"""cgrad.utils.data._utils: the import path torch.utils.data._utils has for
the batch collation helpers (collate.py), which programs import from there."""
from . import collate  # noqa: F401
