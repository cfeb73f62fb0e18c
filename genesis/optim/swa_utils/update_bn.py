"""`update_bn`: recompute the BatchNorm running statistics of a model (an averaged one,
whose averaged weights the statistics it copied no longer fit) over one pass of a loader.

>>> import genesis
>>> model = genesis.nn.Sequential(genesis.nn.Linear(2, 2), genesis.nn.BatchNorm1d(2)).eval()
>>> loader = [genesis.randn(8, 2) for _ in range(3)]
>>> update_bn(loader, model)
>>> model[1].num_batches_tracked, model.training
(tensor(3), False)
"""
from __future__ import annotations

from ...autograd.grad_mode import no_grad
from ...nn.batchnorm import _BatchNorm
from ...nn.module import Module

__all__ = ["update_bn"]


@no_grad()
def update_bn(loader, model: Module, device=None) -> None:
    """Reset the running mean and variance of every BatchNorm layer of `model` and recompute
    them over one pass of `loader`, as the plain average over its batches (momentum None);
    the layers' momenta and the model's train/eval mode are restored after. A batch is a
    tensor, or a list or tuple whose first item is the model's input; `device`, when given,
    is where each input is moved first. A model without BatchNorm is left as it is.

    >>> import genesis
    >>> norm = genesis.nn.BatchNorm1d(1)
    >>> update_bn([(genesis.tensor([[0.0], [2.0]]), None), genesis.tensor([[4.0], [6.0]])], norm)
    >>> norm.running_mean, norm.momentum
    (tensor([3.]), 0.1)
    """
    momenta = {}
    for module in model.modules():
        if isinstance(module, _BatchNorm):
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    try:
        for batch in loader:
            if isinstance(batch, list | tuple):
                batch = batch[0]
            if device is not None:
                batch = batch.to(device)
            model(batch)
    finally:
        for module, momentum in momenta.items():
            module.momentum = momentum
        model.train(was_training)
