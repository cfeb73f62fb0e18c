"""`DataParallel` on the one device genesis computes on: it runs the wrapped module as it
is (PyTorch's own DataParallel does the same with one device), keeping its `.module` and
the "module." prefix of its state dict keys, so programs that wrap their model run and
save checkpoints PyTorch can read. `DistributedDataParallel` (torch.nn.parallel's too) does
the same in a distributed run of one process."""
from __future__ import annotations

from .distributed_data_parallel import DistributedDataParallel
from .module import Module

__all__ = ["DataParallel", "DistributedDataParallel"]


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
