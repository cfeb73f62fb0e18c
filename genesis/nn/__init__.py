"""Neural-network building blocks: `genesis.nn.functional` (and, with the nn issue, modules)."""
from . import functional
