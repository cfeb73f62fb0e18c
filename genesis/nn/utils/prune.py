"""Pruning, as `torch.nn.utils.prune`: a pruned parameter `<name>` becomes `<name>_orig` (the
same Parameter, still trained) and a buffer `<name>_mask`; before each forward a hook sets
`module.<name> = <name>_mask * <name>_orig`, so the pruned entries read zero and their
gradient is zero. Pruning the same parameter again combines the masks (a
`PruningContainer`); `remove` makes the pruning permanent.

>>> import genesis
>>> layer = l1_unstructured(genesis.nn.Linear(4, 2), "weight", amount=0.5)
>>> sorted(name for name, _ in layer.named_parameters()), [name for name, _ in layer.named_buffers()]
(['bias', 'weight_orig'], ['weight_mask'])
>>> int((layer.weight == 0).sum()), is_pruned(layer)
(4, True)
>>> _ = remove(layer, "weight"); sorted(name for name, _ in layer.named_parameters())
['bias', 'weight']
"""
from __future__ import annotations

import numbers
from collections.abc import Iterable

from ...creation import ones_like, rand, rand_like, zeros_like
from ...ops.norm import norm
from ...ops.sorting import kthvalue, topk
from ..module import Module
from .convert_parameters import parameters_to_vector

__all__ = ["BasePruningMethod", "PruningContainer", "Identity", "RandomUnstructured",
           "L1Unstructured", "RandomStructured", "LnStructured", "CustomFromMask", "identity",
           "random_unstructured", "l1_unstructured", "random_structured", "ln_structured",
           "global_unstructured", "custom_from_mask", "remove", "is_pruned"]


def _hooks(module: Module) -> dict:
    """The module's pruning hooks: parameter name -> (method, forward pre-hook handle)."""
    return module.__dict__.setdefault("_prune_hooks", {})


class BasePruningMethod:
    """A way to choose a mask; subclasses define `compute_mask(t, default_mask)` and
    `PRUNING_TYPE` ('unstructured', 'structured' with a `dim`, or 'global')."""

    _tensor_name: str | None = None

    def __call__(self, module: Module, inputs) -> None:
        setattr(module, self._tensor_name, self.apply_mask(module))

    def compute_mask(self, t, default_mask):
        raise NotImplementedError(f"{type(self).__name__} must define compute_mask")

    def apply_mask(self, module: Module):
        """The pruned tensor: the mask times the original parameter."""
        if self._tensor_name is None:
            raise AssertionError(f"Module {module} has to be pruned")
        mask = getattr(module, self._tensor_name + "_mask")
        orig = getattr(module, self._tensor_name + "_orig")
        return mask.to(dtype=orig.dtype) * orig

    @classmethod
    def apply(cls, module: Module, name: str, *args, importance_scores=None, **kwargs):
        """Prune `module.<name>` with a new `cls(*args, **kwargs)`, combined with any pruning
        it has already; returns the method its forward pre-hook runs."""
        hooks = _hooks(module)
        method = cls(*args, **kwargs)
        method._tensor_name = name
        old = hooks.pop(name, None)
        if old is not None:
            old_method, handle = old
            handle.remove()
            container = old_method if isinstance(old_method, PruningContainer) else \
                PruningContainer(old_method)
            container.add_pruning_method(method)
            method = container
        orig = getattr(module, name)
        if importance_scores is not None:
            if importance_scores.shape != orig.shape:
                raise AssertionError(f"importance_scores should have the same shape as parameter "
                                     f"{name} of {module}, got {importance_scores.shape} vs "
                                     f"{orig.shape}")
        else:
            importance_scores = orig
        if not isinstance(method, PruningContainer):
            module.register_parameter(name + "_orig", orig)
            del module._parameters[name]
            default_mask = ones_like(orig)
        else:
            default_mask = getattr(module, name + "_mask").detach().clone()
        try:
            mask = method.compute_mask(importance_scores, default_mask=default_mask)
            module.register_buffer(name + "_mask", mask)
            setattr(module, name, method.apply_mask(module))
            hooks[name] = (method, module.register_forward_pre_hook(method))
        except Exception:
            if not isinstance(method, PruningContainer):
                orig = getattr(module, name + "_orig")
                module.__dict__.pop(name, None)
                module.register_parameter(name, orig)
                del module._parameters[name + "_orig"]
            raise
        return method

    def prune(self, t, default_mask=None, importance_scores=None):
        """`t` with this method's mask applied (the mask chosen by `importance_scores`)."""
        if importance_scores is not None:
            if importance_scores.shape != t.shape:
                raise AssertionError(f"importance_scores should have the same shape as tensor t, "
                                     f"got {importance_scores.shape} vs {t.shape}")
        else:
            importance_scores = t
        default_mask = default_mask if default_mask is not None else ones_like(t)
        return t * self.compute_mask(importance_scores, default_mask=default_mask)

    def remove(self, module: Module) -> None:
        """Make the pruning permanent: `<name>` is the Parameter again, holding the pruned
        values; `<name>_orig` and `<name>_mask` go."""
        if self._tensor_name is None:
            raise AssertionError(f"Module {module} has to be pruned before pruning can be removed")
        weight = self.apply_mask(module)
        module.__dict__.pop(self._tensor_name, None)
        orig = module._parameters[self._tensor_name + "_orig"]
        orig.data = weight.data
        del module._parameters[self._tensor_name + "_orig"]
        del module._buffers[self._tensor_name + "_mask"]
        setattr(module, self._tensor_name, orig)


class PruningContainer(BasePruningMethod):
    """A sequence of pruning methods on one parameter; the last one prunes what the earlier
    ones left."""

    def __init__(self, *args):
        self._pruning_methods: tuple = ()
        if len(args) == 1:
            self._tensor_name = args[0]._tensor_name
            self.add_pruning_method(args[0])
        else:
            for method in args:
                self.add_pruning_method(method)

    def add_pruning_method(self, method) -> None:
        if not isinstance(method, BasePruningMethod) and method is not None:
            raise TypeError(f"{type(method)} is not a BasePruningMethod subclass")
        if method is not None and self._tensor_name != method._tensor_name:
            raise ValueError("Can only add pruning methods acting on the parameter named "
                             f"'{self._tensor_name}' to PruningContainer {self}. Found "
                             f"'{method._tensor_name}'")
        self._pruning_methods += (method,)

    def __len__(self) -> int:
        return len(self._pruning_methods)

    def __iter__(self):
        return iter(self._pruning_methods)

    def __getitem__(self, index):
        return self._pruning_methods[index]

    def compute_mask(self, t, default_mask):
        """The last method's mask, computed on the entries (or channels) the current
        `default_mask` keeps, written into a copy of it."""
        method = self._pruning_methods[-1]
        new_mask = default_mask.to(dtype=t.dtype)
        if method.PRUNING_TYPE == "unstructured":
            keep = default_mask == 1
        elif method.PRUNING_TYPE == "structured":
            if not hasattr(method, "dim"):
                raise AttributeError('Pruning methods of PRUNING_TYPE "structured" need to have '
                                     "the attribute `dim` defined.")
            dims = t.dim()
            dim = method.dim + dims if method.dim < 0 else method.dim
            if dim < 0:
                raise IndexError(f"Index is out of bounds for tensor with dimensions {dims}")
            channels = default_mask.sum(dim=[d for d in range(dims) if d != dim]) != 0
            keep = tuple(channels if d == dim else slice(None) for d in range(dims))
        elif method.PRUNING_TYPE == "global":
            keep = tuple(slice(None) for _ in range(t.dim()))
        else:
            raise ValueError(f"Unrecognized PRUNING_TYPE {method.PRUNING_TYPE}")
        partial = method.compute_mask(t[keep], default_mask=default_mask[keep])
        new_mask[keep] = partial.to(dtype=new_mask.dtype)
        return new_mask


def _validate_amount_init(amount) -> None:
    if not isinstance(amount, numbers.Real):
        raise TypeError(f"Invalid type for amount: {amount}. Must be int or float.")
    if (isinstance(amount, numbers.Integral) and amount < 0) or (
            not isinstance(amount, numbers.Integral) and not 0.0 <= float(amount) <= 1.0):
        raise ValueError(f"amount={amount} should either be a float in the range [0, 1] or a "
                         "non-negative integer")


def _count_to_prune(amount, size: int) -> int:
    if isinstance(amount, numbers.Integral):
        if amount > size:
            raise ValueError(f"amount={amount} should be smaller than the number of parameters "
                             f"to prune={size}")
        return amount
    return round(amount * size)


def _validate_structured(t, dim: int) -> None:
    if t.dim() <= 1:
        raise ValueError("Structured pruning can only be applied to multidimensional tensors. "
                         f"Found tensor of shape {tuple(t.shape)} with {t.dim()} dims")
    if dim >= t.dim():
        raise IndexError(f"Invalid index {dim} for tensor of size {tuple(t.shape)}")


def _zero_flat(mask, indices):
    """`mask` with the entries at flat `indices` set to zero."""
    flat = mask.detach().clone().reshape(-1)
    flat[indices] = 0
    return flat.reshape(tuple(mask.shape))


def _channel_mask(t, dim: int, channels):
    """Ones in the `channels` (an index or bool tensor) along `dim` of a zero mask like t."""
    mask = zeros_like(t)
    mask[tuple(channels if d == dim else slice(None) for d in range(t.dim()))] = 1
    return mask


class Identity(BasePruningMethod):
    """Prunes nothing (the mask is all ones)."""

    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t, default_mask):
        return default_mask


class _Unstructured(BasePruningMethod):
    """Prunes `amount` (a fraction, or a count) of the entries, those `_chosen` picks."""

    PRUNING_TYPE = "unstructured"

    def __init__(self, amount):
        _validate_amount_init(amount)
        self.amount = amount

    def compute_mask(self, t, default_mask):
        count = _count_to_prune(self.amount, t.numel())
        if count == 0:
            return default_mask.clone()
        return _zero_flat(default_mask, self._chosen(t, count))

    def _chosen(self, t, count: int):
        """The flat indices of the `count` entries of `t` to prune."""
        raise NotImplementedError


class RandomUnstructured(_Unstructured):
    """Prunes `amount` (a fraction, or a count) of the entries, chosen at random."""

    def _chosen(self, t, count: int):
        return topk(rand_like(t).reshape(-1), k=count).indices


class L1Unstructured(_Unstructured):
    """Prunes `amount` (a fraction, or a count) of the entries of smallest magnitude."""

    def _chosen(self, t, count: int):
        return topk(t.detach().abs().reshape(-1), k=count, largest=False).indices


class RandomStructured(BasePruningMethod):
    """Prunes `amount` of the channels along `dim`, chosen at random."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount, dim: int = -1):
        _validate_amount_init(amount)
        self.amount, self.dim = amount, dim

    def compute_mask(self, t, default_mask):
        _validate_structured(t, self.dim)
        channels = t.shape[self.dim]
        count = _count_to_prune(self.amount, channels)
        if count == 0:
            return default_mask
        draws = rand(channels)
        mask = _channel_mask(t, self.dim, draws > kthvalue(draws, k=count).values)
        return mask * default_mask.to(dtype=mask.dtype)


class LnStructured(BasePruningMethod):
    """Prunes `amount` of the channels along `dim` with the smallest L`n` norm."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount, n, dim: int = -1):
        _validate_amount_init(amount)
        self.amount, self.n, self.dim = amount, n, dim

    def compute_mask(self, t, default_mask):
        _validate_structured(t, self.dim)
        channels = t.shape[self.dim]
        count = _count_to_prune(self.amount, channels)
        if count == 0:
            return default_mask
        dim = self.dim % t.dim()
        norms = norm(t.detach(), p=self.n, dim=[d for d in range(t.dim()) if d != dim])
        mask = _channel_mask(t, self.dim, topk(norms, k=channels - count, largest=True).indices)
        return mask * default_mask.to(dtype=mask.dtype)


class CustomFromMask(BasePruningMethod):
    """Prunes where the given `mask` is zero."""

    PRUNING_TYPE = "global"

    def __init__(self, mask):
        self.mask = mask

    def compute_mask(self, t, default_mask):
        if default_mask.shape != self.mask.shape:
            raise AssertionError(f"default_mask shape {default_mask.shape} must match self.mask "
                                 f"shape {self.mask.shape}")
        return default_mask * self.mask.to(dtype=default_mask.dtype)


def identity(module: Module, name: str) -> Module:
    """Prune nothing, but give `module.<name>` the `_orig`/`_mask` form."""
    Identity.apply(module, name)
    return module


def random_unstructured(module: Module, name: str, amount) -> Module:
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(module: Module, name: str, amount, importance_scores=None) -> Module:
    L1Unstructured.apply(module, name, amount=amount, importance_scores=importance_scores)
    return module


def random_structured(module: Module, name: str, amount, dim: int) -> Module:
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(module: Module, name: str, amount, n, dim: int, importance_scores=None) -> Module:
    LnStructured.apply(module, name, amount, n, dim, importance_scores=importance_scores)
    return module


def custom_from_mask(module: Module, name: str, mask) -> Module:
    CustomFromMask.apply(module, name, mask)
    return module


def global_unstructured(parameters, pruning_method, importance_scores=None, **kwargs) -> None:
    """Prune the (module, name) `parameters` together: `pruning_method` (an unstructured
    one) chooses over all their entries at once."""
    if not isinstance(parameters, Iterable):
        raise TypeError("global_unstructured(): parameters is not an Iterable")
    parameters = list(parameters)
    importance_scores = importance_scores if importance_scores is not None else {}
    if not isinstance(importance_scores, dict):
        raise TypeError("global_unstructured(): importance_scores must be of type dict")
    scores = parameters_to_vector([importance_scores.get((module, name), getattr(module, name))
                                   for module, name in parameters])
    default_mask = parameters_to_vector([getattr(module, name + "_mask", None)
                                         if hasattr(module, name + "_mask")
                                         else ones_like(getattr(module, name))
                                         for module, name in parameters])
    container = PruningContainer()
    container._tensor_name = "temp"
    method = pruning_method(**kwargs)
    method._tensor_name = "temp"
    if method.PRUNING_TYPE != "unstructured":
        raise TypeError('Only "unstructured" PRUNING_TYPE supported for the `pruning_method`. '
                        f"Found method {pruning_method} of type {method.PRUNING_TYPE}")
    container.add_pruning_method(method)
    final_mask = container.compute_mask(scores, default_mask)
    pointer = 0
    for module, name in parameters:
        param = getattr(module, name)
        custom_from_mask(module, name, mask=final_mask[pointer: pointer + param.numel()].view_as(param))
        pointer += param.numel()


def remove(module: Module, name: str) -> Module:
    """Make the pruning of `module.<name>` permanent (see `BasePruningMethod.remove`)."""
    hooks = _hooks(module)
    if name not in hooks:
        raise ValueError(f"Parameter '{name}' of module {module} has to be pruned before pruning "
                         "can be removed")
    method, handle = hooks.pop(name)
    method.remove(module)
    handle.remove()
    return module


def is_pruned(module: Module) -> bool:
    """Whether `module` or any of its submodules has a pruned parameter."""
    return any(submodule.__dict__.get("_prune_hooks") for _, submodule in module.named_modules())
