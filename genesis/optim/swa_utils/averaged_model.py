"""`AveragedModel`: a copy of a model whose parameters hold a running average of the
model's (stochastic weight averaging, or an exponential moving average), as PyTorch's.

>>> import genesis
>>> model = genesis.nn.Linear(1, 1, bias=False)
>>> swa_model = AveragedModel(model)
>>> for value in (1.0, 2.0, 6.0):
...     with genesis.no_grad():
...         _ = model.weight.fill_(value)
...     swa_model.update_parameters(model)
>>> swa_model.module.weight
Parameter containing:
tensor([[3.]], requires_grad=True)
>>> swa_model.n_averaged
tensor(3)
"""
from __future__ import annotations

import itertools
from copy import deepcopy

from ...creation import tensor
from ...dtypes import int64
from ...nn.module import Module
from .averaging import get_swa_avg_fn, get_swa_multi_avg_fn

__all__ = ["AveragedModel"]


class AveragedModel(Module):
    """A deep copy of `model` (moved to `device` when given) kept as the average of the
    models passed to `update_parameters`; calling it calls the copy.

    The first `update_parameters` copies the model's parameters; each later one applies
    `avg_fn(averaged, current, n_averaged)` to each parameter, or `multi_avg_fn(averaged_list,
    current_list, n_averaged)` to the parameters of each device and dtype, or (neither given)
    the equal-weight average. With `use_buffers=True` the buffers are averaged too; otherwise
    they are copied from the model at each update. The `n_averaged` buffer counts the
    updates; `state_dict()` holds it and the copy's entries under `module.`. Only one of
    `avg_fn` and `multi_avg_fn` may be given (AssertionError).

    >>> import genesis
    >>> from genesis.optim.swa_utils import get_ema_multi_avg_fn
    >>> model = genesis.nn.BatchNorm1d(2)
    >>> ema = AveragedModel(model, multi_avg_fn=get_ema_multi_avg_fn(0.9), use_buffers=True)
    >>> list(ema.state_dict())[:2]
    ['n_averaged', 'module.weight']
    """

    def __init__(self, model: Module, device=None, avg_fn=None, multi_avg_fn=None,
                 use_buffers: bool = False):
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", tensor(0, dtype=int64, device=device))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args, **kwargs):
        """The averaged copy's forward."""
        return self.module(*args, **kwargs)

    def update_parameters(self, model: Module) -> None:
        """Average `model`'s parameters (and buffers, with `use_buffers`) into this copy's;
        the first call copies them. Runs without recording a graph."""
        if self.use_buffers:
            mine = itertools.chain(self.module.parameters(), self.module.buffers())
            theirs = itertools.chain(model.parameters(), model.buffers())
        else:
            mine, theirs = self.parameters(), model.parameters()
        first = bool(self.n_averaged == 0)
        averaged, current = [], []
        for average, value in zip(mine, theirs):
            value = value.detach().to(average.device)
            averaged.append(average.detach())
            current.append(value)
            if first:
                average.detach().copy_(value)
        if not first:
            self._average(averaged, current)
        if not self.use_buffers:  # the buffers follow the model's
            for buffer, value in zip(self.module.buffers(), model.buffers(), strict=True):
                buffer.detach().copy_(value.detach().to(buffer.device))
        self.n_averaged += 1

    def _average(self, averaged: list, current: list) -> None:
        """One averaging step over detached tensors, by the rule this model was given. The
        default rule is the in-place one on CUDA and the one-tensor one elsewhere, as in
        PyTorch, whose CPU results it then matches bit for bit."""
        if self.avg_fn is not None and self.multi_avg_fn is None:
            for average, value in zip(averaged, current, strict=True):
                average.copy_(self.avg_fn(average, value, self.n_averaged.to(average.device)))
            return
        for (device, _), (averages, values) in _by_device_and_dtype(averaged, current).items():
            n_averaged = self.n_averaged.to(device)
            if self.multi_avg_fn is not None:
                self.multi_avg_fn(averages, values, n_averaged)
            elif device.type == "cuda":
                get_swa_multi_avg_fn()(averages, values, n_averaged)
            else:
                swa = get_swa_avg_fn()
                for average, value in zip(averages, values, strict=True):
                    average.copy_(swa(average, value, n_averaged))


def _by_device_and_dtype(averaged: list, current: list) -> dict:
    """(device, dtype) -> ([averaged tensors], [current tensors]), each list in model order."""
    groups: dict = {}
    for average, value in zip(averaged, current, strict=True):
        averages, values = groups.setdefault((average.device, average.dtype), ([], []))
        averages.append(average)
        values.append(value)
    return groups
