"""The older, hook-based weight normalization, as `torch.nn.utils.weight_norm` (deprecated
there in favour of `genesis.nn.utils.parametrizations.weight_norm`, and still common).

The weight becomes two parameters, `<name>_g` (magnitude) and `<name>_v` (direction);
before each forward, a hook sets `module.<name> = g * v / ||v||` (a plain tensor
attribute).

>>> import genesis, warnings
>>> with warnings.catch_warnings():
...     warnings.simplefilter("ignore")
...     layer = weight_norm(genesis.nn.Linear(4, 3))
>>> sorted(name for name, _ in layer.named_parameters())
['bias', 'weight_g', 'weight_v']
>>> type(remove_weight_norm(layer).weight).__name__
'Parameter'
"""
from __future__ import annotations

import warnings

from ..module import Module
from ..parameter import Parameter
from ._weight_hooks import attach, detach, refuse_second
from ._norm_math import norm_except_dim, weight_from_norm

__all__ = ["weight_norm", "remove_weight_norm", "WeightNorm"]


class WeightNorm:
    """The forward pre-hook that computes `module.<name>` from `<name>_g` and `<name>_v`."""

    def __init__(self, name: str, dim: int):
        self.name, self.dim = name, -1 if dim is None else dim

    def compute_weight(self, module: Module):
        return weight_from_norm(getattr(module, self.name + "_v"), getattr(module, self.name + "_g"),
                                self.dim)

    @staticmethod
    def apply(module: Module, name: str, dim: int) -> "WeightNorm":
        refuse_second(module, "weight_norm", name)
        weight = module._parameters.get(name)
        if not isinstance(weight, Parameter):
            raise ValueError(f"weight_norm: {type(module).__name__} has no parameter named '{name}'")
        fn = WeightNorm(name, dim)
        del module._parameters[name]
        module.register_parameter(name + "_g", Parameter(norm_except_dim(weight, fn.dim).detach()))
        module.register_parameter(name + "_v", Parameter(weight.detach()))
        setattr(module, name, fn.compute_weight(module))
        attach(module, "weight_norm", name, fn)
        return fn

    def remove(self, module: Module) -> None:
        weight = self.compute_weight(module).detach()
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight))

    def __call__(self, module: Module, inputs) -> None:
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """Split `module.<name>` into `<name>_g` and `<name>_v` (norms along `dim`; None: one
    norm for the whole tensor), recombined before every forward. Deprecated in PyTorch
    (a FutureWarning here too): prefer `genesis.nn.utils.parametrizations.weight_norm`."""
    warnings.warn("`torch.nn.utils.weight_norm` is deprecated in favor of "
                  "`torch.nn.utils.parametrizations.weight_norm`.", FutureWarning, stacklevel=2)
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module: Module, name: str = "weight") -> Module:
    """Undo `weight_norm`: `module.<name>` is one parameter again, with the current value."""
    return detach(module, "weight_norm", name)
