"""Pooling layers over `genesis.nn._pooling_extras`, as in PyTorch (same arguments and repr):
`MaxUnpool1d/2d/3d`, `LPPool1d/2d/3d`, `LocalResponseNorm`, `CrossMapLRN2d`, and over
`genesis.nn._fractional_pooling`, `FractionalMaxPool2d/3d`.

>>> import genesis
>>> genesis.nn.MaxUnpool2d(2)
MaxUnpool2d(kernel_size=(2, 2), stride=(2, 2), padding=(0, 0))
"""
from __future__ import annotations

import numpy as np

from ..tensor import Tensor, wrap_array
from . import _fractional_pooling, _pooling_extras as P
from .module import Module

__all__ = ["MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d", "LPPool1d", "LPPool2d", "LPPool3d",
           "LocalResponseNorm", "CrossMapLRN2d", "FractionalMaxPool2d", "FractionalMaxPool3d"]


def _tuple(value, dims: int) -> tuple:
    return tuple(value) if isinstance(value, list | tuple) else (value,) * dims


class _MaxUnpoolNd(Module):
    _dims = 0
    _function = None

    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        self.kernel_size = _tuple(kernel_size, self._dims)
        self.stride = _tuple(stride if stride is not None else kernel_size, self._dims)
        self.padding = _tuple(padding, self._dims)

    def forward(self, input: Tensor, indices: Tensor, output_size=None) -> Tensor:
        return type(self)._function(input, indices, self.kernel_size, self.stride, self.padding,
                                    output_size)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    """The partial inverse of `MaxPool1d`; see `genesis.nn.functional.max_unpool1d`.

    >>> import genesis
    >>> pool, unpool = genesis.nn.MaxPool1d(2, return_indices=True), genesis.nn.MaxUnpool1d(2)
    >>> unpool(*pool(genesis.tensor([[[1., 4., 3., 2.]]])))
    tensor([[[0., 4., 3., 0.]]])
    """

    _dims = 1
    _function = staticmethod(P.max_unpool1d)


class MaxUnpool2d(_MaxUnpoolNd):
    """The partial inverse of `MaxPool2d`: each value back at its index, zeros elsewhere;
    `forward(input, indices, output_size=None)`.

    >>> import genesis
    >>> pool, unpool = genesis.nn.MaxPool2d(2, return_indices=True), genesis.nn.MaxUnpool2d(2)
    >>> unpool(*pool(genesis.randn(1, 1, 5, 5)), output_size=(5, 5)).shape
    genesis.Size([1, 1, 5, 5])
    """

    _dims = 2
    _function = staticmethod(P.max_unpool2d)


class MaxUnpool3d(_MaxUnpoolNd):
    """The partial inverse of `MaxPool3d`; see `genesis.nn.functional.max_unpool3d`.

    >>> import genesis
    >>> genesis.nn.MaxUnpool3d(2)
    MaxUnpool3d(kernel_size=(2, 2, 2), stride=(2, 2, 2), padding=(0, 0, 0))
    """

    _dims = 3
    _function = staticmethod(P.max_unpool3d)


class _LPPoolNd(Module):
    _function = None

    def __init__(self, norm_type: float, kernel_size, stride=None, ceil_mode: bool = False):
        super().__init__()
        self.norm_type, self.kernel_size, self.stride = norm_type, kernel_size, stride
        self.ceil_mode = ceil_mode

    def forward(self, input: Tensor) -> Tensor:
        return type(self)._function(input, self.norm_type, self.kernel_size, self.stride,
                                    self.ceil_mode)

    def extra_repr(self) -> str:
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}, ceil_mode={self.ceil_mode}")


class LPPool1d(_LPPoolNd):
    """Power-average pooling of (N, C, L); see `genesis.nn.functional.lp_pool1d`.

    >>> import genesis
    >>> genesis.nn.LPPool1d(2, 3)
    LPPool1d(norm_type=2, kernel_size=3, stride=None, ceil_mode=False)
    """

    _function = staticmethod(P.lp_pool1d)


class LPPool2d(_LPPoolNd):
    """Power-average pooling of (N, C, H, W); see `genesis.nn.functional.lp_pool2d`.

    >>> import genesis
    >>> genesis.nn.LPPool2d(2, 2)(genesis.randn(1, 3, 4, 4)).shape
    genesis.Size([1, 3, 2, 2])
    """

    _function = staticmethod(P.lp_pool2d)


class LPPool3d(_LPPoolNd):
    """Power-average pooling of (N, C, D, H, W); see `genesis.nn.functional.lp_pool3d`.

    >>> import genesis
    >>> genesis.nn.LPPool3d(1, 2)(genesis.ones(1, 1, 2, 2, 2))
    tensor([[[[[8.]]]]])
    """

    _function = staticmethod(P.lp_pool3d)


class LocalResponseNorm(Module):
    """Local response normalisation across channels; see
    `genesis.nn.functional.local_response_norm`.

    >>> import genesis
    >>> genesis.nn.LocalResponseNorm(2)
    LocalResponseNorm(2, alpha=0.0001, beta=0.75, k=1.0)
    """

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input: Tensor) -> Tensor:
        return P.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


class CrossMapLRN2d(LocalResponseNorm):
    """Lua Torch's cross-map LRN of a 4-D (N, C, H, W) input, as PyTorch computes it:
    x * (k + alpha / size * s_c)^-beta, s_c the sum of x² over the channels up to
    (size - 1) // 2 on either side of c, where channel 0 always stays in the sum once it has
    entered (PyTorch's running-sum quirk, kept so results match).

    >>> import genesis
    >>> genesis.nn.CrossMapLRN2d(3, alpha=3.0, k=0.0, beta=1.0)(genesis.ones(1, 2, 1, 1)).flatten()
    tensor([0.5000, 0.5000])
    """

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1):
        super().__init__(size, alpha, beta, k)

    def forward(self, input: Tensor) -> Tensor:
        if input.ndim != 4:
            raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.ndim}D instead")
        channels = input.shape[1]
        reach = int((self.size - 1) / 2 + 1)
        rows, columns = np.arange(channels)[:, None], np.arange(channels)
        window = (columns <= rows + reach - 1) & ((columns == 0) | (columns >= rows - reach + 1))
        xp = input._device.xp
        mixing = wrap_array(xp.asarray(window.astype(input._data.dtype)), input._device)
        square = (input * input).reshape(input.shape[0], channels, -1)
        scale = (mixing @ square).reshape(input.shape) * (self.alpha / self.size) + self.k
        return input * scale ** -self.beta

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


class _FractionalMaxPoolNd(Module):
    _dims = 0
    _function = None

    def __init__(self, kernel_size, output_size=None, output_ratio=None,
                 return_indices: bool = False, _random_samples: Tensor | None = None):
        super().__init__()
        name = type(self).__name__
        self.kernel_size = _tuple(kernel_size, self._dims)
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = _tuple(output_size, self._dims) if output_size is not None else None
        self.output_ratio = _tuple(output_ratio, self._dims) if output_ratio is not None else None
        if output_size is None and output_ratio is None:
            raise ValueError(f"{name} requires specifying either an output size, or a pooling "
                             "ratio")
        if output_size is not None and output_ratio is not None:
            raise ValueError(f"{name}: only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None and not all(0 < r < 1 for r in self.output_ratio):
            raise ValueError(f"{name}: output_ratio must be between 0 and 1 (got {output_ratio})")

    def forward(self, input: Tensor):
        return type(self)._function(input, self.kernel_size, self.output_size, self.output_ratio,
                                    self.return_indices, _random_samples=self._random_samples)


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    """Fractional max pooling of (N, C, H, W); see
    `genesis.nn.functional.fractional_max_pool2d`.

    >>> import genesis
    >>> genesis.nn.FractionalMaxPool2d(3, output_ratio=0.5)(genesis.randn(2, 4, 10, 8)).shape
    genesis.Size([2, 4, 5, 4])
    """

    _dims = 2
    _function = staticmethod(_fractional_pooling.fractional_max_pool2d)


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    """Fractional max pooling of (N, C, T, H, W); see
    `genesis.nn.functional.fractional_max_pool3d`.

    >>> import genesis
    >>> genesis.nn.FractionalMaxPool3d(2, output_size=3)(genesis.randn(1, 2, 5, 6, 7)).shape
    genesis.Size([1, 2, 3, 3, 3])
    """

    _dims = 3
    _function = staticmethod(_fractional_pooling.fractional_max_pool3d)
