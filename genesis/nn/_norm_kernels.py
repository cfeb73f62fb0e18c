"""Layer, RMS, group and batch norm on a GPU in fused kernels: forward in four launches,
backward in five (as array calls they are ten and eleven). `_fused_norm.py` takes these where fusing
pays (`fusing_pays`); the CPU keeps its in-place array code, which computes the same
formulas. Means over the normalised dims are CuPy's: the sum divided by the count
(`_in_ind.size() / _out_ind.size()`, the elements reduced into each output).
"""
from __future__ import annotations

from ..ops._kernels import MEAN_OF_REDUCED, Elementwise, Reduction
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


def normalize_forward(device, x, weight, bias, dims: tuple, eps: float,
                      centered: bool = True) -> tuple:
    """(output, normalised input, mean, biased variance, 1/std) of x over `dims`, scaled by
    the `weight` array and shifted by the `bias` array (either may be None). Not `centered`
    (RMS norm): the mean is taken as 0 (and returned as None), the variance is the mean
    square."""
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
    if needs[0]:
        w = 1.0 if weight is None else weight
        mean_gw = _MEAN_PRODUCT(device, g, w, axis=dims, keepdims=True) if centered else 0.0
        mean_gwn = _MEAN_TRIPLE_PRODUCT(device, g, w, normalized, axis=dims, keepdims=True)
        grad_input = _NORM_GRAD(device, g, w, normalized, rstd, mean_gw, mean_gwn)
    return grad_input, grad_weight, grad_bias
