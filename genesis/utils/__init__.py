"""Utilities: `genesis.utils.checkpoint` and `genesis.utils.data` (datasets and the
DataLoader). Importing it registers checkpoint in the op registry."""
from . import checkpoint, data
from . import registered_ops  # puts checkpoint's Function in the op registry
