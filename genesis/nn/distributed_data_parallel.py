"""`DistributedDataParallel` in a run of one process: each process's gradients would be
averaged with the others', and there are no others, so the wrapped module's own gradients
are the averaged ones. It keeps PyTorch's face: `.module`, the "module." prefix of its
parameter names and state dict keys, `no_sync()` and `join()`, and the errors PyTorch gives
when no process group was started or `device_ids` are given for a module on the CPU."""
from __future__ import annotations

import contextlib

from ..distributed.process_group import ProcessGroup, default_group
from .module import Module

__all__ = ["DistributedDataParallel"]


class DistributedDataParallel(Module):
    """`module`, called as it is, in a run of one process (see `genesis.distributed`).

    >>> import genesis, genesis.distributed as dist
    >>> dist.init_process_group("gloo", init_method="tcp://127.0.0.1:29500", world_size=1, rank=0)
    >>> model = DistributedDataParallel(genesis.nn.Linear(2, 1))
    >>> sorted(model.state_dict()), model(genesis.ones(3, 2)).shape
    (['module.bias', 'module.weight'], genesis.Size([3, 1]))
    >>> with model.no_sync():
    ...     model(genesis.ones(3, 2)).sum().backward()  # gradients accumulate, unsynchronised
    >>> dist.destroy_process_group()
    """

    def __init__(self, module: Module, device_ids=None, output_device=None, dim: int = 0,
                 broadcast_buffers: bool | None = None, init_sync: bool = True,
                 process_group: ProcessGroup | None = None, bucket_cap_mb=None,
                 find_unused_parameters: bool = False, check_reduction: bool = False,
                 gradient_as_bucket_view: bool = False, static_graph: bool = False,
                 delay_all_reduce_named_params=None, param_to_hook_all_reduce=None,
                 mixed_precision=None, device_mesh=None,
                 skip_all_reduce_unused_params: bool = False):
        super().__init__()
        self.process_group = default_group() if process_group is None else process_group
        if not any(parameter.requires_grad for parameter in module.parameters()):
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't have "
                               "any parameter that requires a gradient.")
        devices = {parameter.device for parameter in module.parameters()}
        if device_ids and all(device.type == "cpu" for device in devices):
            raise ValueError(
                "DistributedDataParallel device_ids and output_device arguments only work with "
                "single-device/multiple-device GPU modules or CPU modules, but got device_ids "
                f"{device_ids}, output_device {output_device}, and module parameters "
                f"{devices}. For a module on the CPU, leave device_ids out (None).")
        self.module = module
        self.device_ids, self.output_device, self.dim = device_ids, output_device, dim
        self.broadcast_buffers = True if broadcast_buffers is None else broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.gradient_as_bucket_view, self.static_graph = gradient_as_bucket_view, static_graph
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)

    @contextlib.contextmanager
    def no_sync(self):
        """Inside, backward calls accumulate gradients without synchronising them (gradient
        accumulation); with one process there is nothing to synchronise either way."""
        before = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = before

    @contextlib.contextmanager
    def join(self, divide_by_initial_world_size: bool = True, enable: bool = True,
             throw_on_early_termination: bool = False):
        """Training with uneven inputs across processes: one process has no others to wait for."""
        yield
