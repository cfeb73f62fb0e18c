"""The op library: one module per family, each with its Functions, public functions
(`__all__`), the Tensor methods it provides (`METHODS`) and its registry entries (`OPS`).
genesis.ops.catalog lists the families, binds the methods and registers the entries."""
from .catalog import FAMILIES, public_functions

__all__ = ["FAMILIES", "public_functions"]
