"""`torch.backends` as on a machine genesis runs on: the switches scripts set
(`torch.backends.cudnn.benchmark = True`) are accepted and change nothing (genesis has no
cuDNN); the availability checks answer as genesis can serve them."""
from __future__ import annotations

from ..torch_modules import SEMANTICS_VERSION
from ... import __version__ as _genesis_version

__all__ = ["cudnn", "cuda", "mps", "TORCH_VERSION"]

# torch.__version__ under `genesis trace --torch`: the PyTorch semantics genesis follows,
# with a local label that says genesis serves it (parses as a version: 2.13.0+genesis...)
TORCH_VERSION = f"{SEMANTICS_VERSION}+genesis.{_genesis_version}"

from . import cuda, cudnn, mps  # noqa: E402  (submodules, after the constants they may read)
