"""Utilities: `genesis.utils.checkpoint`. Importing it registers checkpoint in the op
registry."""
from . import checkpoint
from . import registered_ops  # puts checkpoint's Function in the op registry
