"""Weight initialisation, as `torch.nn.init`: each function fills a tensor in place
(outside the graph, bumping its version) and returns it.

Fans follow PyTorch: for a weight of shape (out, in, *kernel), fan_in is
in * prod(kernel) and fan_out is out * prod(kernel).

>>> import genesis
>>> from genesis.nn import init
>>> w = genesis.empty(3, 5)
>>> _ = init.kaiming_uniform_(w, a=5 ** 0.5)  # Linear's default: bound 1 / sqrt(fan_in)
>>> bool((w <= 5 ** -0.5).all()) and bool((w >= -5 ** -0.5).all())
True
>>> init.calculate_gain("relu")
1.4142135623730951
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from ..random import generator_for
from ..tensor import Tensor

__all__ = ["calculate_gain", "uniform_", "normal_", "trunc_normal_", "constant_", "ones_", "zeros_",
           "eye_", "orthogonal_", "xavier_uniform_", "xavier_normal_", "kaiming_uniform_",
           "kaiming_normal_", "dirac_", "sparse_", "uniform", "normal", "constant", "eye",
           "dirac", "xavier_uniform", "xavier_normal", "kaiming_uniform", "kaiming_normal",
           "orthogonal", "sparse"]

_LINEAR_FAMILY = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
                  "conv_transpose3d", "sigmoid")


def calculate_gain(nonlinearity: str, param=None) -> float:
    """The recommended gain for a nonlinearity: 1 (linear, conv, sigmoid), 5/3 (tanh),
    sqrt(2) (relu), sqrt(2 / (1 + slope**2)) (leaky_relu, slope default 0.01), 3/4 (selu)."""
    if nonlinearity in _LINEAR_FAMILY:
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif isinstance(param, int | float) and not isinstance(param, bool):
            slope = param
        else:
            raise ValueError(f"negative_slope {param!r} is not a valid number")
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"unsupported nonlinearity {nonlinearity!r}; expected one of "
                     f"{list(_LINEAR_FAMILY) + ['tanh', 'relu', 'leaky_relu', 'selu']}")


def _calculate_fan_in_and_fan_out(tensor: Tensor) -> tuple:
    """(fan_in, fan_out) of a weight of shape (out, in, *kernel)."""
    shape = tensor.shape
    if len(shape) < 2:
        raise ValueError(f"fan in and fan out can't be computed for a tensor with fewer than 2 "
                         f"dimensions (got shape {tuple(shape)})")
    receptive_field = math.prod(shape[2:])
    return shape[1] * receptive_field, shape[0] * receptive_field


def _fan(tensor: Tensor, mode: str) -> int:
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"mode {mode!r} not supported; use 'fan_in' or 'fan_out'")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def _draw(tensor: Tensor, sampler: str):
    """Samples of `sampler` ("random" or "standard_normal") in the tensor's float dtype."""
    numpy_dtype = tensor._data.dtype
    draw_dtype = numpy_dtype if numpy_dtype in (np.float32, np.float64) else np.float32
    return getattr(generator_for(tensor._device), sampler)(tensor.shape, dtype=draw_dtype)


def _store(tensor: Tensor, array) -> Tensor:
    tensor._data[...] = array
    tensor._version_counter[0] += 1
    return tensor


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0) -> Tensor:
    """Fill with samples from U(a, b)."""
    return _store(tensor, _draw(tensor, "random") * (b - a) + a)


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0) -> Tensor:
    """Fill with samples from N(mean, std**2)."""
    return _store(tensor, _draw(tensor, "standard_normal") * std + mean)


def trunc_normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0,
                  b: float = 2.0) -> Tensor:
    """Fill with N(mean, std**2) samples restricted to [a, b] (rejection sampling)."""
    if not a < b:
        raise ValueError(f"trunc_normal_: need a < b, got a={a}, b={b}")

    def cdf(x):
        return 0.5 * (1 + math.erf((x - mean) / (std * math.sqrt(2))))

    accepted_share = cdf(b) - cdf(a)
    if accepted_share < 1e-6:
        raise ValueError(f"trunc_normal_: [a, b] = [{a}, {b}] holds almost none of "
                         f"N({mean}, {std}**2); widen the interval or move the mean")
    xp = tensor._device.xp
    generator = generator_for(tensor._device)
    needed = tensor._data.size
    kept = []
    while needed > 0:
        draw = generator.standard_normal(int(needed / accepted_share * 1.1) + 16) * std + mean
        draw = draw[(draw >= a) & (draw <= b)][:needed]
        kept.append(draw)
        needed -= draw.size
    values = xp.concatenate(kept) if kept else xp.empty(0)
    return _store(tensor, values.reshape(tensor.shape))


def constant_(tensor: Tensor, val: float) -> Tensor:
    """Fill with `val`."""
    return _store(tensor, val)


def ones_(tensor: Tensor) -> Tensor:
    return _store(tensor, 1)


def zeros_(tensor: Tensor) -> Tensor:
    return _store(tensor, 0)


def eye_(tensor: Tensor) -> Tensor:
    """Fill a 2-D tensor with the identity matrix (ones on the main diagonal)."""
    if tensor.ndim != 2:
        raise ValueError(f"eye_ needs a 2-D tensor, got shape {tuple(tensor.shape)}")
    return _store(tensor, tensor._device.xp.eye(*tensor.shape))


def orthogonal_(tensor: Tensor, gain: float = 1.0) -> Tensor:
    """Fill with a (semi-)orthogonal matrix (the trailing dimensions are flattened)."""
    if tensor.ndim < 2:
        raise ValueError(f"orthogonal_ needs a tensor with at least 2 dimensions, got shape "
                         f"{tuple(tensor.shape)}")
    if tensor._data.size == 0:
        return tensor
    xp = tensor._device.xp
    rows = tensor.shape[0]
    columns = tensor._data.size // rows
    flat = generator_for(tensor._device).standard_normal((rows, columns))
    if rows < columns:
        flat = flat.T
    q, r = xp.linalg.qr(flat)
    q = q * xp.sign(xp.diagonal(r))
    if rows < columns:
        q = q.T
    return _store(tensor, (q * gain).reshape(tensor.shape))


def xavier_uniform_(tensor: Tensor, gain: float = 1.0) -> Tensor:
    """U(-a, a) with a = gain * sqrt(6 / (fan_in + fan_out)) (Glorot & Bengio, 2010)."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    bound = math.sqrt(3.0) * gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return uniform_(tensor, -bound, bound)


def xavier_normal_(tensor: Tensor, gain: float = 1.0) -> Tensor:
    """N(0, std**2) with std = gain * sqrt(2 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / float(fan_in + fan_out)))


def kaiming_uniform_(tensor: Tensor, a: float = 0, mode: str = "fan_in",
                     nonlinearity: str = "leaky_relu") -> Tensor:
    """U(-bound, bound) with bound = gain * sqrt(3 / fan) (He et al., 2015).

    `a` is the negative slope for leaky_relu; `mode` picks fan_in or fan_out.
    """
    if tensor._data.size == 0:
        return tensor
    std = calculate_gain(nonlinearity, a) / math.sqrt(_fan(tensor, mode))
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound)


def kaiming_normal_(tensor: Tensor, a: float = 0, mode: str = "fan_in",
                    nonlinearity: str = "leaky_relu") -> Tensor:
    """N(0, std**2) with std = gain / sqrt(fan)."""
    if tensor._data.size == 0:
        return tensor
    std = calculate_gain(nonlinearity, a) / math.sqrt(_fan(tensor, mode))
    return normal_(tensor, 0.0, std)


def dirac_(tensor: Tensor, groups: int = 1) -> Tensor:
    """Fill a 3-, 4- or 5-D convolution weight with the Dirac delta: each output channel
    (within each of `groups`) passes its matching input channel through unchanged.

    >>> import genesis
    >>> weight = dirac_(genesis.empty(2, 2, 3))
    >>> weight[0, 0].tolist(), weight[0, 1].tolist()
    ([0.0, 1.0, 0.0], [0.0, 0.0, 0.0])
    """
    if tensor.ndim not in (3, 4, 5):
        raise ValueError(f"dirac_ needs a 3, 4 or 5-D tensor (a convolution weight), got shape "
                         f"{tuple(tensor.shape)}")
    out_channels = tensor.shape[0]
    if out_channels % groups:
        raise ValueError(f"dirac_: the {out_channels} output channels must split into {groups} groups")
    per_group = out_channels // groups
    xp = tensor._device.xp
    values = xp.zeros(tensor.shape, tensor._data.dtype)
    centre = tuple(extent // 2 for extent in tensor.shape[2:])
    for group in range(groups):
        for channel in range(min(per_group, tensor.shape[1])):
            values[(group * per_group + channel, channel) + centre] = 1
    return _store(tensor, values)


def sparse_(tensor: Tensor, sparsity: float, std: float = 0.01) -> Tensor:
    """Fill a 2-D tensor with N(0, std²) values, then zero ceil(sparsity * rows) randomly
    chosen entries in each column.

    >>> import genesis
    >>> weight = sparse_(genesis.empty(10, 3), sparsity=0.3)
    >>> [int((weight[:, c] == 0).sum()) for c in range(3)]
    [3, 3, 3]
    """
    if tensor.ndim != 2:
        raise ValueError(f"sparse_ needs a 2-D tensor, got shape {tuple(tensor.shape)}")
    rows, columns = tensor.shape
    zeros_per_column = int(math.ceil(sparsity * rows))
    generator = generator_for(tensor._device)
    values = generator.standard_normal((rows, columns)) * std
    for column in range(columns):
        values[generator.permutation(rows)[:zeros_per_column], column] = 0
    return _store(tensor, values)


def _deprecated(replacement):
    """The old spelling of `replacement` (without the trailing underscore), which PyTorch
    keeps with a FutureWarning naming the new one."""
    new_name = replacement.__name__
    old_name = new_name[:-1]

    def deprecated_init(*args, **kwargs):
        warnings.warn(f"`nn.init.{old_name}` is now deprecated in favor of `nn.init.{new_name}`.",
                      FutureWarning, stacklevel=2)
        return replacement(*args, **kwargs)

    deprecated_init.__name__ = deprecated_init.__qualname__ = old_name
    deprecated_init.__doc__ = f"`{new_name}` under its deprecated name (warns FutureWarning)."
    return deprecated_init


# The names before the in-place underscore, as old scripts call them:
# init.xavier_uniform(w) is init.xavier_uniform_(w) with a FutureWarning.
uniform, normal, constant = _deprecated(uniform_), _deprecated(normal_), _deprecated(constant_)
eye, dirac, sparse = _deprecated(eye_), _deprecated(dirac_), _deprecated(sparse_)
xavier_uniform, xavier_normal = _deprecated(xavier_uniform_), _deprecated(xavier_normal_)
kaiming_uniform, kaiming_normal = _deprecated(kaiming_uniform_), _deprecated(kaiming_normal_)
orthogonal = _deprecated(orthogonal_)
