"""Running PyTorch scripts on genesis: `serve_torch()` (what `genesis trace --torch` runs a
script under), the errors for torch names genesis lacks, and the static scan behind
`genesis compat`."""
from __future__ import annotations

from .stand_in import TorchModule, is_served, serve_torch
from .unsupported import (UNSUPPORTED_ERRORS, UnsupportedTorchAPI, UnsupportedTorchImport,
                          UnsupportedTorchModule)

__all__ = ["serve_torch", "is_served", "TorchModule", "UnsupportedTorchAPI", "UnsupportedTorchModule",
           "UnsupportedTorchImport", "UNSUPPORTED_ERRORS"]
