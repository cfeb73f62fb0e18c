"""`DataParallel` on the one device genesis computes on: it runs the wrapped module as it
is (PyTorch's own DataParallel does the same with one device), keeping its `.module` and
the "module." prefix of its state dict keys, so programs that wrap their model run and
save checkpoints PyTorch can read. `DistributedDataParallel` (torch.nn.parallel's too) does
the same in a distributed run of one process. `data_parallel` is the functional form, which
PyTorch runs only where a GPU is."""
from __future__ import annotations

from .. import cuda
from ..tensor import Tensor
from .distributed_data_parallel import DistributedDataParallel
from .module import Module

__all__ = ["DataParallel", "DistributedDataParallel", "data_parallel"]


class DataParallel(Module):
    """`module`, called as it is; `device_ids`, `output_device` and `dim` are accepted.

    >>> import genesis
    >>> model = DataParallel(genesis.nn.Linear(2, 1))
    >>> sorted(model.state_dict()), model(genesis.ones(3, 2)).shape
    (['module.bias', 'module.weight'], genesis.Size([3, 1]))
    """

    def __init__(self, module: Module, device_ids=None, output_device=None, dim: int = 0):
        super().__init__()
        self.module = module
        self.device_ids, self.output_device, self.dim = device_ids, output_device, dim

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)


def data_parallel(module: Module, inputs, device_ids=None, output_device=None, dim: int = 0,
                  module_kwargs=None):
    """`module(*inputs, **module_kwargs)` on the GPU (the first of `device_ids`: genesis
    computes on one), the tensor inputs moved there; the module's parameters and buffers
    must be there already. Without a GPU it raises, as PyTorch's does.

    >>> import genesis
    >>> try:
    ...     data_parallel(genesis.nn.Linear(2, 1), genesis.ones(3, 2)) if not genesis.cuda.is_available() else None
    ... except RuntimeError as error:
    ...     print(error)
    device type could not be determined
    """
    if not isinstance(inputs, tuple):
        inputs = (inputs,) if inputs is not None else ()
    if not cuda.is_available():
        raise RuntimeError("device type could not be determined")
    first = device_ids[0] if device_ids else cuda.current_device()
    index = first.index if hasattr(first, "index") else int(first)
    device = f"cuda:{index}"
    for tensor in list(module.parameters()) + list(module.buffers()):
        if str(tensor.device) != device:
            raise RuntimeError(f"module must have its parameters and buffers on device {device} "
                               f"(device_ids[0]) but found one of them on device: {tensor.device}")
    inputs = tuple(value.to(device) if isinstance(value, Tensor) else value for value in inputs)
    return module(*inputs, **(module_kwargs or {}))
