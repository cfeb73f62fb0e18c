"""Lazy modules: layers that infer their input size (`in_features`, `in_channels`,
`num_features`) from their first input, as PyTorch's `nn.LazyLinear`, `LazyConv*d`,
`LazyConvTranspose*d`, `LazyBatchNorm*d` and `LazyInstanceNorm*d`.

Until then their weights are `UninitializedParameter`s (and running statistics
`UninitializedBuffer`s); the first forward gives them the inferred shapes, initialised as the ordinary layer's are, and from then on the module is that layer (each lazy
class is a subclass of it, so `isinstance(m, nn.Linear)` holds throughout). Loading a state
dict before the first forward sizes them from its entries instead. Parameters are
materialised in place (the same objects), so an optimizer built before works, though PyTorch
advises a dry run first. Unlike PyTorch, module and parameters keep their lazy classes
(genesis does not swap `__class__`): `nn.parameter.is_lazy(p)` tells whether one still waits.

>>> import genesis
>>> layer = genesis.nn.LazyLinear(4)
>>> layer(genesis.ones(2, 3)).shape, layer.in_features, layer.weight.shape
(genesis.Size([2, 4]), 3, genesis.Size([4, 3]))
"""
from __future__ import annotations

from ..autograd.grad_mode import no_grad
from ..creation import empty, tensor
from ..dtypes import int64
from ..tensor import Tensor
from .batchnorm import BatchNorm1d, BatchNorm2d, BatchNorm3d
from .conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from .instancenorm import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d
from .linear import Linear
from .parameter import UninitializedBuffer, UninitializedParameter, is_lazy

__all__ = ["LazyModuleMixin", "LazyLinear", "LazyConv1d", "LazyConv2d", "LazyConv3d",
           "LazyConvTranspose1d", "LazyConvTranspose2d", "LazyConvTranspose3d", "LazyBatchNorm1d",
           "LazyBatchNorm2d", "LazyBatchNorm3d", "LazyInstanceNorm1d", "LazyInstanceNorm2d",
           "LazyInstanceNorm3d"]


class LazyModuleMixin:
    """Put before a layer class: its forward first calls `initialize_parameters(*inputs)`
    once, which sizes the layer from the inputs. `cls_to_become` names the layer it becomes."""

    cls_to_become: type | None = None

    # The buffers still waiting for their shape, by name: a buffer placeholder is replaced
    # by a plain tensor when the module changes dtype or device, so its type can't tell.
    _placeholder_buffers: frozenset = frozenset()

    def has_uninitialized_params(self) -> bool:
        """Whether a parameter or buffer is still a placeholder (before the first forward)."""
        return bool(self._placeholder_buffers) or any(
            is_lazy(value) for value in self._parameters.values())

    def initialize_parameters(self, *args, **kwargs) -> None:
        raise NotImplementedError(f"{type(self).__name__} must define initialize_parameters")

    def forward(self, *args, **kwargs):
        if self.has_uninitialized_params():
            with no_grad():
                self.initialize_parameters(*args, **kwargs)
        return super().forward(*args, **kwargs)

    def _take_shapes_from(self, state_dict, prefix: str) -> None:
        """Loading a state dict before the first forward: each placeholder takes the shape of
        its entry, and the layer its size from them (load_state_dict then copies the values)."""
        if not self.has_uninitialized_params():
            return
        for name in (*self._parameters, *self._buffers):
            entry = state_dict.get(prefix + name)
            if isinstance(entry, Tensor):
                self._materialize(name, tuple(entry.shape))
        if not self.has_uninitialized_params():
            self._size_from_weights()

    def _size_from_weights(self) -> None:
        raise NotImplementedError(f"{type(self).__name__} must define _size_from_weights")

    def _materialize(self, name: str, shape: tuple) -> None:
        """Give placeholder `name` (if it is one) the storage of `shape`: a parameter in place
        (the same object), a buffer by a new tensor of its dtype and device."""
        placeholder = getattr(self, name)
        if name in self._parameters and is_lazy(placeholder):
            placeholder.materialize(shape)
        elif name in self._placeholder_buffers:
            setattr(self, name, empty(*shape, dtype=placeholder.dtype, device=placeholder._device))
            self._placeholder_buffers = self._placeholder_buffers - {name}


class LazyLinear(LazyModuleMixin, Linear):
    """`Linear` whose `in_features` is the last dim of its first input."""

    cls_to_become = Linear

    def __init__(self, out_features: int, bias: bool = True, device=None, dtype=None):
        super().__init__(0, out_features, bias, device, dtype)
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Tensor) -> None:
        """Size the layer from `input` (*, in_features) and initialise it as Linear."""
        self.in_features = input.shape[-1]
        self._materialize("weight", (self.out_features, self.in_features))
        if self.bias is not None:
            self._materialize("bias", (self.out_features,))
        self.reset_parameters()

    def _size_from_weights(self) -> None:
        self.in_features = self.weight.shape[1]


class _LazyConvMixin(LazyModuleMixin):
    """The conv layers' sizing: in_channels from dim 1 of a batched input (dim 0 unbatched)."""

    def _uninitialize(self, bias: bool, device, dtype) -> None:
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Tensor, *args, **kwargs) -> None:
        """Size the layer from `input` (N, C, *spatial) or (C, *spatial), initialise as its
        ordinary class."""
        batched = self._dims + 2
        if input.ndim not in (batched - 1, batched):
            raise RuntimeError(f"Expected {batched - 1}D (unbatched) or {batched}D (batched) input "
                               f"to {type(self).__name__}, but got input of size: "
                               f"{tuple(input.shape)}")
        self.in_channels = input.shape[1] if input.ndim == batched else input.shape[0]
        if self.in_channels % self.groups:
            raise ValueError(f"{type(self).__name__}: in_channels must be divisible by groups, "
                             f"got in_channels={self.in_channels} and groups={self.groups}")
        pair = (self.in_channels, self.out_channels // self.groups) if self._transposed else \
            (self.out_channels, self.in_channels // self.groups)
        self._materialize("weight", pair + tuple(self.kernel_size))
        if self.bias is not None:
            self._materialize("bias", (self.out_channels,))
        self.reset_parameters()

    def _size_from_weights(self) -> None:
        self.in_channels = self.weight.shape[0] if self._transposed else \
            self.weight.shape[1] * self.groups


class _LazyConv(_LazyConvMixin):
    """A lazy convolution: the conv's signature without in_channels."""

    def __init__(self, out_channels: int, kernel_size, stride=1, padding=0, dilation=1,
                 groups: int = 1, bias: bool = True, padding_mode: str = "zeros", device=None,
                 dtype=None):
        super().__init__(0, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                         padding_mode, device, dtype)
        self._uninitialize(bias, device, dtype)


class _LazyConvTranspose(_LazyConvMixin):
    """A lazy transposed convolution: its signature without in_channels."""

    def __init__(self, out_channels: int, kernel_size, stride=1, padding=0, output_padding=0,
                 groups: int = 1, bias: bool = True, dilation=1, padding_mode: str = "zeros",
                 device=None, dtype=None):
        super().__init__(0, out_channels, kernel_size, stride, padding, output_padding, groups,
                         bias, dilation, padding_mode, device, dtype)
        self._uninitialize(bias, device, dtype)


class LazyConv1d(_LazyConv, Conv1d):
    """`Conv1d` whose `in_channels` is read from its first input."""

    cls_to_become = Conv1d


class LazyConv2d(_LazyConv, Conv2d):
    """`Conv2d` whose `in_channels` is read from its first input.

    >>> import genesis
    >>> conv = genesis.nn.LazyConv2d(4, 3)
    >>> conv(genesis.ones(1, 2, 5, 5)).shape, conv.weight.shape
    (genesis.Size([1, 4, 3, 3]), genesis.Size([4, 2, 3, 3]))
    """

    cls_to_become = Conv2d


class LazyConv3d(_LazyConv, Conv3d):
    """`Conv3d` whose `in_channels` is read from its first input."""

    cls_to_become = Conv3d


class LazyConvTranspose1d(_LazyConvTranspose, ConvTranspose1d):
    """`ConvTranspose1d` whose `in_channels` is read from its first input."""

    cls_to_become = ConvTranspose1d


class LazyConvTranspose2d(_LazyConvTranspose, ConvTranspose2d):
    """`ConvTranspose2d` whose `in_channels` is read from its first input."""

    cls_to_become = ConvTranspose2d


class LazyConvTranspose3d(_LazyConvTranspose, ConvTranspose3d):
    """`ConvTranspose3d` whose `in_channels` is read from its first input."""

    cls_to_become = ConvTranspose3d


class _LazyNormMixin(LazyModuleMixin):
    """The norm layers' sizing: num_features from dim 1 of the first input."""

    def _uninitialize(self, affine: bool, bias: bool, track_running_stats: bool, device,
                      dtype) -> None:
        self.affine, self.track_running_stats = affine, track_running_stats
        if affine:
            self.weight = UninitializedParameter(device=device, dtype=dtype)
            if bias:
                self.bias = UninitializedParameter(device=device, dtype=dtype)
        if track_running_stats:
            self.running_mean = UninitializedBuffer(device=device, dtype=dtype)
            self.running_var = UninitializedBuffer(device=device, dtype=dtype)
            self._placeholder_buffers = frozenset({"running_mean", "running_var"})

    def initialize_parameters(self, input: Tensor) -> None:
        """Size the layer from `input` (N, C, *) and initialise it: weight ones, bias zeros,
        running mean zeros, running variance ones."""
        self.num_features = input.shape[1]
        for name in ("weight", "bias", "running_mean", "running_var"):
            self._materialize(name, (self.num_features,))
        for name, value in (("weight", 1), ("bias", 0), ("running_mean", 0), ("running_var", 1)):
            if getattr(self, name) is not None:
                getattr(self, name).fill_(value)

    def _size_from_weights(self) -> None:
        sized = self.weight if self.weight is not None else self.running_mean
        if sized is not None:
            self.num_features = sized.shape[0]


class _LazyBatchNorm(_LazyNormMixin):
    """A lazy batch norm: its signature without num_features."""

    def __init__(self, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device=None, dtype=None, *, bias: bool = True):
        super().__init__(0, eps, momentum, False, False, device, dtype, bias=False)
        self._uninitialize(affine, bias, track_running_stats, device, dtype)
        if track_running_stats:
            self.num_batches_tracked = tensor(0, dtype=int64, device=device)


class _LazyInstanceNorm(_LazyNormMixin):
    """A lazy instance norm: its signature without num_features (and, as PyTorch's,
    affine=True and track_running_stats=True by default, unlike InstanceNorm's)."""

    def __init__(self, eps: float = 1e-5, momentum: float = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device=None, dtype=None, *, bias: bool = True):
        super().__init__(0, eps, momentum, False, False, device, dtype)
        self._uninitialize(affine, bias, track_running_stats, device, dtype)


class LazyBatchNorm1d(_LazyBatchNorm, BatchNorm1d):
    """`BatchNorm1d` whose `num_features` is read from its first input.

    >>> import genesis
    >>> norm = genesis.nn.LazyBatchNorm1d()
    >>> norm(genesis.randn(4, 3)).shape, norm.num_features, norm.running_mean.shape
    (genesis.Size([4, 3]), 3, genesis.Size([3]))
    """

    cls_to_become = BatchNorm1d


class LazyBatchNorm2d(_LazyBatchNorm, BatchNorm2d):
    """`BatchNorm2d` whose `num_features` is read from its first input."""

    cls_to_become = BatchNorm2d


class LazyBatchNorm3d(_LazyBatchNorm, BatchNorm3d):
    """`BatchNorm3d` whose `num_features` is read from its first input."""

    cls_to_become = BatchNorm3d


class LazyInstanceNorm1d(_LazyInstanceNorm, InstanceNorm1d):
    """`InstanceNorm1d` whose `num_features` is read from its first input."""

    cls_to_become = InstanceNorm1d


class LazyInstanceNorm2d(_LazyInstanceNorm, InstanceNorm2d):
    """`InstanceNorm2d` whose `num_features` is read from its first input."""

    cls_to_become = InstanceNorm2d


class LazyInstanceNorm3d(_LazyInstanceNorm, InstanceNorm3d):
    """`InstanceNorm3d` whose `num_features` is read from its first input."""

    cls_to_become = InstanceNorm3d
