"""The legacy CUDA tensor types PyTorch keeps as `torch.cuda.FloatTensor` and the others:
`isinstance(x, FloatTensor)` asks whether x is a float32 tensor on a GPU, and calling one
makes such a tensor (`FloatTensor(2, 3)`, `LongTensor([1, 2])`), which needs a usable GPU.
Old scripts use them to pick a type by device:
`Tensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor`.

>>> import genesis
>>> isinstance(genesis.zeros(2), FloatTensor), FloatTensor.dtype
(False, genesis.float32)
"""
from __future__ import annotations

from .tensor_info import CUDA_TYPES

__all__ = ["FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "LongTensor",
           "IntTensor", "ShortTensor", "CharTensor", "ByteTensor", "BoolTensor"]

FloatTensor, DoubleTensor = CUDA_TYPES["FloatTensor"], CUDA_TYPES["DoubleTensor"]
HalfTensor, BFloat16Tensor = CUDA_TYPES["HalfTensor"], CUDA_TYPES["BFloat16Tensor"]
LongTensor, IntTensor, ShortTensor = (CUDA_TYPES[name] for name in ("LongTensor", "IntTensor", "ShortTensor"))
CharTensor, ByteTensor, BoolTensor = (CUDA_TYPES[name] for name in ("CharTensor", "ByteTensor", "BoolTensor"))
