"""Layer, RMS, group and batch norm on a GPU in fused kernels: forward in four launches,
backward in five (as array calls they are ten and eleven). `_fused_norm.py` takes these where fusing
pays (`fusing_pays`); the CPU keeps its in-place array code, which computes the same
formulas. Means over the normalised dims are CuPy's: the sum divided by the count
(`_in_ind.size() / _out_ind.size()`, the elements reduced into each output).

Layer and RMS norm with a weight over the trailing dims (what nn.LayerNorm and nn.RMSNorm
do) normalise rows: there a row kernel (genesis/ops/_row_kernels.py) does the whole
forward in one launch and the input's gradient in one.
"""
from __future__ import annotations

import math

from ..ops._kernels import MEAN_OF_REDUCED, Elementwise, Reduction
from ..ops._row_kernels import RowKernel, along
from ..ops.broadcast import broadcast_axes
from ..ops.softmax import SUM_PRODUCT

__all__ = ["normalize_forward", "normalize_backward", "summed_to"]

_MEAN = f"mean = {MEAN_OF_REDUCED}"


def _centered_square_mean_reference(device, x, center, **where):
    centered = x - center
    return (centered * centered).mean(**where)


_CENTERED_SQUARE_MEAN = Reduction(
    "genesis_centered_square_mean", "T x, T center", "T mean", "(x - center) * (x - center)",
    "a + b", _MEAN, "0", _centered_square_mean_reference)
_RSTD = Elementwise("genesis_rstd", "T variance, T eps", "T rstd",
                    "rstd = T(1) / sqrt(variance + eps)",
                    lambda device, variance, eps: 1 / device.xp.sqrt(variance + eps))


def _normalize_affine_reference(device, x, mean, rstd, weight, bias):
    normalized = (x - mean) * rstd
    return normalized, normalized * weight + bias


_NORMALIZE = Elementwise("genesis_normalize", "T x, T mean, T rstd", "T normalized",
                         "normalized = (x - mean) * rstd",
                         lambda device, x, mean, rstd: (x - mean) * rstd)
_NORMALIZE_AFFINE = Elementwise(
    "genesis_normalize_affine", "T x, T mean, T rstd, T weight, T bias", "T normalized, T out",
    "normalized = (x - mean) * rstd; out = normalized * weight + bias",
    _normalize_affine_reference)
_MEAN_PRODUCT = Reduction("genesis_mean_product", "T g, T w", "T mean", "g * w", "a + b", _MEAN,
                          "0", lambda device, g, w, **where: (g * w).mean(**where))
_MEAN_TRIPLE_PRODUCT = Reduction(
    "genesis_mean_triple_product", "T g, T w, T n", "T mean", "g * w * n", "a + b", _MEAN, "0",
    lambda device, g, w, n, **where: (g * w * n).mean(**where))
_NORM_GRAD = Elementwise(
    "genesis_norm_grad", "T g, T w, T n, T rstd, T mean_gw, T mean_gwn", "T dx",
    "dx = rstd * ((g * w - mean_gw) - n * mean_gwn)",
    lambda device, g, w, n, rstd, mean_gw, mean_gwn: rstd * ((g * w - mean_gw) - n * mean_gwn))


def _norm_rows_reference(device, x, weight, bias, eps, axis, centered=True):
    mean = x.mean(axis=axis, keepdims=True) if centered else None
    shifted = x - mean if centered else x
    variance = (shifted * shifted).mean(axis=axis, keepdims=True)
    rstd = 1 / device.xp.sqrt(variance + eps)
    normalized = shifted * rstd
    out = normalized * along(weight, x, axis)
    if centered:
        return normalized, out + along(bias, x, axis), mean, variance, rstd
    return normalized, out, variance, rstd


def _norm_grad_rows_reference(device, g, normalized, weight, rstd, axis, centered=True):
    scaled = g * along(weight, g, axis)
    mean_gw = scaled.mean(axis=axis, keepdims=True) if centered else 0.0
    mean_gwn = (scaled * normalized).mean(axis=axis, keepdims=True)
    return rstd * ((scaled - mean_gw) - normalized * mean_gwn)


def _norm_rows(centered: bool) -> tuple[RowKernel, RowKernel]:
    """Layer norm's (or, not `centered`, RMS norm's) forward and input-gradient row kernels:
    the same formulas as the kernels above, a row at a time."""
    name = "layer_norm" if centered else "rms_norm"
    mean = "block_reduce(THREAD_SUM(x), GenesisSum()) / T(n)" if centered else "T(0)"
    forward = RowKernel(
        f"genesis_{name}_rows", "T x, column T weight" + (", column T bias" if centered else "")
        + ", scalar T eps", "T normalized, T out" + (", row T mean" if centered else "")
        + ", row T variance, row T rstd", f"""
  const T mean_value = {mean};
  T share = 0;
  FOR_ROW(j) {{ const T shifted = x[j * inner] - mean_value; share += shifted * shifted; }}
  const T variance_value = block_reduce(share, GenesisSum()) / T(n);
  const T rstd_value = T(1) / sqrt(variance_value + eps);
  FOR_ROW(j) {{
    const T normal = (x[j * inner] - mean_value) * rstd_value;
    normalized[j * inner] = normal;
    out[j * inner] = normal * weight[j]{" + bias[j]" if centered else ""};
  }}
  if (threadIdx.x == 0) {{
    {"mean[0] = mean_value; " if centered else ""}variance[0] = variance_value; rstd[0] = rstd_value;
  }}""", (lambda device, x, weight, bias, eps, axis: _norm_rows_reference(
            device, x, weight, bias, eps, axis)) if centered else
        (lambda device, x, weight, eps, axis: _norm_rows_reference(
            device, x, weight, None, eps, axis, centered=False)))
    mean_gw = "block_reduce(share_gw, GenesisSum()) / T(n)" if centered else "T(0)"
    gradient = RowKernel(
        f"genesis_{name}_grad_rows", "T g, T normalized, column T weight, row T rstd", "T dx", f"""
  T share_gw = 0, share_gwn = 0;
  FOR_ROW(j) {{
    const T gw = g[j * inner] * weight[j];
    share_gw += gw;
    share_gwn += gw * normalized[j * inner];
  }}
  const T mean_gw = {mean_gw};
  const T mean_gwn = block_reduce(share_gwn, GenesisSum()) / T(n);
  FOR_ROW(j) {{
    dx[j * inner] = rstd[0] * ((g[j * inner] * weight[j] - mean_gw) - normalized[j * inner] * mean_gwn);
  }}""", lambda device, g, normalized, weight, rstd, axis: _norm_grad_rows_reference(
            device, g, normalized, weight, rstd, axis, centered))
    return forward, gradient


_NORM_ROWS = {centered: _norm_rows(centered) for centered in (True, False)}


def _row_length(shape: tuple, dims: tuple, affine: tuple) -> int | None:
    """The length of the rows being normalised when `dims` are the trailing dims of a
    non-empty input and each `affine` array holds one value per element of a row; None
    when the general kernels must run."""
    lead = len(shape) - len(dims)
    if not dims or tuple(dims) != tuple(range(lead, len(shape))) or math.prod(shape) == 0:
        return None
    row_shape = (1,) * lead + shape[lead:]  # what each affine array must broadcast as
    if any(array is None or array.ndim > len(shape)
           or (1,) * (len(shape) - array.ndim) + array.shape != row_shape for array in affine):
        return None
    return math.prod(shape[lead:])


def _as_rows(array, dims: tuple, n: int):
    """`array` with the trailing `dims` as one of length `n`: itself for one dim (so the
    row kernel's outputs need no reshape, whose view the engine would copy into .grad)."""
    return array if len(dims) == 1 else array.reshape(-1, n)


def _shaped(array, shape: tuple):
    return array if array.shape == shape else array.reshape(shape)


def normalize_forward(device, x, weight, bias, dims: tuple, eps: float,
                      centered: bool = True) -> tuple:
    """(output, normalised input, mean, biased variance, 1/std) of x over `dims`, scaled by
    the `weight` array and shifted by the `bias` array (either may be None). Not `centered`
    (RMS norm): the mean is taken as 0 (and returned as None), the variance is the mean
    square."""
    affine = (weight, bias) if centered else (weight,)
    n = _row_length(x.shape, dims, affine) if centered or bias is None else None
    if n is not None:  # one launch
        normalized, out, *statistics = _NORM_ROWS[centered][0](
            device, _as_rows(x, dims, n), *(array.reshape(n) for array in affine), eps, axis=-1)
        kept = x.shape[:x.ndim - len(dims)] + (1,) * len(dims)
        statistics = [_shaped(array, kept) for array in statistics]
        mean = statistics.pop(0) if centered else None
        return _shaped(out, x.shape), _shaped(normalized, x.shape), mean, *statistics
    mean = x.mean(axis=dims, keepdims=True) if centered else None
    center = mean if centered else 0.0
    variance = _CENTERED_SQUARE_MEAN(device, x, center, axis=dims, keepdims=True)
    rstd = _RSTD(device, variance, eps)
    if weight is None and bias is None:
        normalized = _NORMALIZE(device, x, center, rstd)
        return normalized, normalized, mean, variance, rstd
    normalized, out = _NORMALIZE_AFFINE(device, x, center, rstd, 1.0 if weight is None else weight,
                                        0.0 if bias is None else bias)
    return out, normalized, mean, variance, rstd


def summed_to(xp, array, broadcast_shape: tuple, target: tuple, weights=None, device=None):
    """`array` (times `weights`, in one fused pass on a GPU) summed over the dims that
    `broadcast_shape` was broadcast along, in the shape `target`: a fresh array when there
    is anything to sum, which the engine hands over as a parameter's .grad without a copy."""
    lead, stretched = broadcast_axes(array.shape, broadcast_shape)
    axes = lead + stretched
    if not axes:  # nothing to sum: the array itself (the engine copies it if it is shared)
        summed = array if weights is None else array * weights
        return summed if summed.shape == tuple(target) else summed.reshape(target)
    kept = tuple(extent for dim, extent in enumerate(array.shape) if dim not in axes)
    result = out = None
    if kept != tuple(target):  # sum into a fresh array of the target's shape, not a view
        result = xp.empty(target, array.dtype)
        out = result.reshape(kept)
    if weights is None:
        summed = array.sum(axis=axes, out=out)
    else:
        summed = SUM_PRODUCT(device, array, weights, axis=axes, keepdims=False, out=out)
    return summed if result is None else result


def normalize_backward(device, g, weight, normalized, rstd, shapes: tuple, targets: tuple,
                       dims: tuple, needs: tuple, centered: bool = True) -> tuple:
    """Arrays (dx, dweight, dbias), None where not needed: dx = rstd * (g w - mean(g w)
    - n mean(g w n)) (no mean(g w) when not `centered`; `weight` in its broadcast shape),
    dweight = g n and dbias = g summed over the dims their parameters are broadcast along
    (`shapes`), in the parameters' own shapes (`targets`)."""
    grad_weight = grad_bias = grad_input = None
    if needs[1]:
        grad_weight = summed_to(device.xp, g, shapes[0], targets[0], normalized, device)
    if needs[2]:
        grad_bias = summed_to(device.xp, g, shapes[1], targets[1])
    n = _row_length(g.shape, dims, (weight,)) if needs[0] else None
    if n is not None:  # one launch
        grad_input = _NORM_ROWS[centered][1](
            device, _as_rows(g, dims, n), _as_rows(normalized, dims, n), weight.reshape(n),
            _as_rows(rstd, dims, 1), axis=-1)
        return _shaped(grad_input, g.shape), grad_weight, grad_bias
    if needs[0]:
        w = 1.0 if weight is None else weight
        mean_gw = _MEAN_PRODUCT(device, g, w, axis=dims, keepdims=True) if centered else 0.0
        mean_gwn = _MEAN_TRIPLE_PRODUCT(device, g, w, normalized, axis=dims, keepdims=True)
        grad_input = _NORM_GRAD(device, g, w, normalized, rstd, mean_gw, mean_gwn)
    return grad_input, grad_weight, grad_bias
