"""Utilities: `genesis.utils.checkpoint`."""
from . import checkpoint
