"""Layer, RMS, group and batch norm on a GPU in fused kernels: forward in four launches,
backward in five (as array calls they are ten and eleven), and batch norm's running
statistics in one. `_norm_functions.py` takes these where fusing pays (`fusing_pays`); the
CPU keeps its in-place array code, which computes the same formulas. Means over the normalised dims are CuPy's: the sum divided by the count
(`_in_ind.size() / _out_ind.size()`, the elements reduced into each output).

Where the norm's elements form rows with the weight (and bias) given (layer, RMS and group
norm over trailing dims; batch norm, a row per channel), a row kernel
(genesis/ops/_row_kernels.py) does the whole forward in one launch and the input's
gradient in one.
"""
from __future__ import annotations

import math
from typing import NamedTuple

from ..ops._kernels import MEAN_OF_REDUCED, Elementwise, Reduction
from ..ops._row_kernels import RowKernel, row_geometry
from ..ops.broadcast import broadcast_axes
from ..ops._softmax_kernels import SUM_PRODUCT

__all__ = ["normalize_forward", "normalize_backward", "summed_to", "update_running_statistics"]

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


def _affine_rows(xp, array, rows: int, n: int, groups: int, repeat: int):
    """The per-channel `array` spread over (rows, n) as the row kernels index it: element j of
    row r takes `array`'s element (r % groups) * (n / repeat) + j / repeat."""
    index = (xp.arange(rows) % groups)[:, None] * (n // repeat) + (xp.arange(n) // repeat)[None, :]
    return array.reshape(-1)[index]


def _on_rows(function):
    """A row kernel's reference written for (rows, n) arrays, taken to rows along any `axis`
    or across any `keep` dim: its whole and per-row array arguments are laid out as rows,
    its results (a tuple) put back (other arguments pass as they are)."""
    def reference(device, first, *rest, axis=None, keep=None):
        xp = device.xp
        dim = (axis if keep is None else keep) % first.ndim
        per_row = row_geometry(first.shape, **({"axis": dim} if keep is None else {"keep": dim})) \
            .row_shape(first.shape, dim)
        to = -1 if keep is None else 0  # where the rows' own dim goes: last, or first

        def as_rows(array):
            moved = xp.moveaxis(array, dim, to)
            return moved.reshape(-1, moved.shape[-1]) if keep is None else \
                moved.reshape(moved.shape[0], -1)

        def put_back(result, shape):
            moved = [extent for axis_, extent in enumerate(shape) if axis_ != dim]
            moved.insert(len(moved) if keep is None else 0, shape[dim])
            return xp.moveaxis(result.reshape(moved), to, dim)

        rest = [as_rows(argument) if getattr(argument, "shape", None) in (first.shape, per_row)
                else argument for argument in rest]
        results = tuple(put_back(result, first.shape if result.shape[1] > 1 or
                                 first.shape == per_row else per_row)
                        for result in function(device, as_rows(first), *rest))
        return results[0] if len(results) == 1 else results
    return reference


def _norm_rows_reference(device, x, weight, bias, eps, groups, repeat, centered=True):
    rows, n = x.shape
    mean = x.mean(axis=1, keepdims=True) if centered else None
    shifted = x - mean if centered else x
    variance = (shifted * shifted).mean(axis=1, keepdims=True)
    rstd = 1 / device.xp.sqrt(variance + eps)
    normalized = shifted * rstd
    out = normalized * _affine_rows(device.xp, weight, rows, n, groups, repeat)
    if centered:
        out += _affine_rows(device.xp, bias, rows, n, groups, repeat)
        return normalized, out, mean, variance, rstd
    return normalized, out, variance, rstd


def _norm_grad_rows_reference(device, g, normalized, weight, rstd, groups, repeat,
                              centered=True):
    scaled = g * _affine_rows(device.xp, weight, *g.shape, groups, repeat)
    mean_gw = scaled.mean(axis=1, keepdims=True) if centered else 0.0
    mean_gwn = (scaled * normalized).mean(axis=1, keepdims=True)
    return (rstd * ((scaled - mean_gw) - normalized * mean_gwn),)


# Element j of row `row` takes this element of the weight and bias: layer norm's weight
# has one value per element of a row; group norm's, one per channel, where `groups` rows
# in turn take their own channels and each channel's value repeats over `repeat`
# consecutive elements.
_AFFINE_INDEX = "(row % groups) * (n / repeat) + j / repeat"


def _norm_rows(centered: bool) -> tuple[RowKernel, RowKernel]:
    """Layer and group norm's (or, not `centered`, RMS norm's) forward and input-gradient
    row kernels: the same formulas as the kernels above, a row at a time."""
    name = "layer_norm" if centered else "rms_norm"
    mean = "block_reduce(THREAD_SUM(x), GenesisSum()) / T(n)" if centered else "T(0)"
    layout = "scalar int64 groups, scalar int64 repeat"
    forward = RowKernel(
        f"genesis_{name}_rows", "T x, raw T weight" + (", raw T bias" if centered else "")
        + f", scalar T eps, {layout}", "T normalized, T out" + (", row T mean" if centered else "")
        + ", row T variance, row T rstd", f"""
  const T mean_value = {mean};
  T share = 0;
  FOR_ROW(j) {{ const T shifted = x[AT(j)] - mean_value; share += shifted * shifted; }}
  const T variance_value = block_reduce(share, GenesisSum()) / T(n);
  const T rstd_value = T(1) / sqrt(variance_value + eps);
  FOR_ROW(j) {{
    const T normal = (x[AT(j)] - mean_value) * rstd_value;
    const long long channel = {_AFFINE_INDEX};
    normalized[AT(j)] = normal;
    out[AT(j)] = normal * weight[channel]{" + bias[channel]" if centered else ""};
  }}
  if (threadIdx.x == 0) {{
    {"mean[0] = mean_value;" if centered else ""}
    variance[0] = variance_value;
    rstd[0] = rstd_value;
  }}""", _on_rows(_norm_rows_reference if centered else
                  lambda device, x, weight, eps, groups, repeat: _norm_rows_reference(
                      device, x, weight, None, eps, groups, repeat, centered=False)))
    mean_gw = "block_reduce(share_gw, GenesisSum()) / T(n)" if centered else "T(0)"
    gradient = RowKernel(
        f"genesis_{name}_grad_rows", f"T g, T normalized, raw T weight, row T rstd, {layout}",
        "T dx", f"""
  T share_gw = 0, share_gwn = 0;
  FOR_ROW(j) {{
    const T gw = g[AT(j)] * weight[{_AFFINE_INDEX}];
    share_gw += gw;
    share_gwn += gw * normalized[AT(j)];
  }}
  const T mean_gw = {mean_gw};
  const T mean_gwn = block_reduce(share_gwn, GenesisSum()) / T(n);
  FOR_ROW(j) {{
    const T gw = g[AT(j)] * weight[{_AFFINE_INDEX}];
    dx[AT(j)] = rstd[0] * ((gw - mean_gw) - normalized[AT(j)] * mean_gwn);
  }}""", _on_rows(lambda device, g, normalized, weight, rstd, groups, repeat:
                   _norm_grad_rows_reference(device, g, normalized, weight, rstd, groups, repeat,
                                             centered)))
    return forward, gradient


_NORM_ROWS = {centered: _norm_rows(centered) for centered in (True, False)}


def _batch_norm_grad_reference(device, g, normalized, weight, rstd):
    w, count = weight.reshape(-1, 1), g.shape[1]
    sum_g, sum_gn = g.sum(axis=1, keepdims=True), (g * normalized).sum(axis=1, keepdims=True)
    dx = rstd * ((g * w - w * sum_g / count) - normalized * (w * sum_gn / count))
    return dx, sum_gn, sum_g


# Batch norm's whole backward in one launch: with a row per channel, the weight's and the
# bias's gradients are the row's sums of g * normalized and of g, which dx needs anyway.
_BATCH_NORM_GRAD = RowKernel(
    "genesis_batch_norm_grad_rows", "T g, T normalized, row T weight, row T rstd",
    "T dx, row T grad_weight, row T grad_bias", """
  T share_g = 0, share_gn = 0;
  FOR_ROW(j) {
    const T gj = g[AT(j)];
    share_g += gj;
    share_gn += gj * normalized[AT(j)];
  }
  const T sum_g = block_reduce(share_g, GenesisSum());
  const T sum_gn = block_reduce(share_gn, GenesisSum());
  const T w = weight[0], mean_gw = w * sum_g / T(n), mean_gwn = w * sum_gn / T(n);
  FOR_ROW(j) dx[AT(j)] = rstd[0] * ((g[AT(j)] * w - mean_gw) - normalized[AT(j)] * mean_gwn);
  if (threadIdx.x == 0) {
    grad_weight[0] = sum_gn;
    grad_bias[0] = sum_g;
  }""", _on_rows(_batch_norm_grad_reference))


class _Rows(NamedTuple):
    """How a norm over some dims runs as row kernels: rows taken `where` (axis= or keep=) of
    `n` elements, the weight's layout (`groups`, `repeat`: _AFFINE_INDEX), and whether the
    arrays are first `flattened` to (rows, n) (several trailing dims)."""
    where: dict
    n: int
    groups: int
    repeat: int
    flattened: bool

    def rows_of(self, array, per_row: bool = False):
        """`array` (or a per-row statistic) as the row kernel takes it."""
        return array.reshape(-1, 1 if per_row else self.n) if self.flattened else array


def _row_layout(shape: tuple, dims: tuple, affine: tuple) -> _Rows | None:
    """The rows of a norm over `dims` of a non-empty input of `shape` with the `affine`
    arrays (of one broadcast shape), or None when the general kernels must run. Rows run
    along trailing dims (layer, RMS and group norm), where the affine arrays may vary along
    leading dims of the rows (each value repeated over `repeat` elements) and along the last
    dim before them (`groups`, group norm's groups); or across every dim but one, the
    channel (batch norm), along which alone the affine arrays may vary."""
    if not dims or math.prod(shape) == 0 or \
            any(array is None or array.ndim > len(shape) for array in affine):
        return None
    padded = {(1,) * (len(shape) - array.ndim) + array.shape for array in affine}
    if len(padded) != 1:
        return None
    padded = padded.pop()
    lead = len(shape) - len(dims)
    if tuple(dims) == tuple(range(lead, len(shape))):  # rows along the trailing dims
        head, tail = padded[:lead], padded[lead:]
        groups = head[-1] if head else 1
        if any(extent != 1 for extent in head[:-1]) or \
                groups not in (1, shape[lead - 1] if lead else 1):
            return None
        varied = 0
        while varied < len(tail) and tail[varied] == shape[lead + varied]:
            varied += 1
        if any(extent != 1 for extent in tail[varied:]):
            return None
        return _Rows({"axis": -1}, math.prod(shape[lead:]), groups,
                     math.prod(shape[lead + varied:]), len(dims) > 1)
    kept = [dim for dim in range(len(shape)) if dim not in dims]
    if len(kept) != 1 or padded != tuple(extent if dim == kept[0] else 1
                                         for dim, extent in enumerate(shape)):
        return None
    n = math.prod(shape) // shape[kept[0]]  # rows across: a row per channel
    return _Rows({"keep": kept[0]}, n, shape[kept[0]], n, False)


def _shaped(array, shape: tuple):
    return array if array.shape == shape else array.reshape(shape)


def normalize_forward(device, x, weight, bias, dims: tuple, eps: float,
                      centered: bool = True) -> tuple:
    """(output, normalised input, mean, biased variance, 1/std) of x over `dims`, scaled by
    the `weight` array and shifted by the `bias` array (either may be None). Not `centered`
    (RMS norm): the mean is taken as 0 (and returned as None), the variance is the mean
    square."""
    affine = (weight, bias) if centered else (weight,)
    rows = _row_layout(x.shape, dims, affine) if centered or bias is None else None
    if rows is not None:  # one launch
        normalized, out, *statistics = _NORM_ROWS[centered][0](
            device, rows.rows_of(x), *affine, eps, rows.groups, rows.repeat, **rows.where)
        kept = tuple(1 if dim in dims else extent for dim, extent in enumerate(x.shape))
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
    rows = _row_layout(g.shape, dims, (weight,)) if needs[0] else None
    if rows is not None and "keep" in rows.where and centered:  # batch norm: one launch
        grad_input, grad_weight, grad_bias = _BATCH_NORM_GRAD(
            device, g, normalized, weight, rstd, **rows.where, row_shape=targets[0])
        return (grad_input, _shaped(grad_weight, targets[0]) if needs[1] else None,
                _shaped(grad_bias, targets[0]) if needs[2] else None)
    if needs[1]:
        grad_weight = summed_to(device.xp, g, shapes[0], targets[0], normalized, device)
    if needs[2]:
        grad_bias = summed_to(device.xp, g, shapes[1], targets[1])
    if rows is not None:  # one launch
        grad_input = _NORM_ROWS[centered][1](
            device, rows.rows_of(g), rows.rows_of(normalized), weight,
            rows.rows_of(rstd, per_row=True), rows.groups, rows.repeat, **rows.where)
        return _shaped(grad_input, g.shape), grad_weight, grad_bias
    if needs[0]:
        w = 1.0 if weight is None else weight
        mean_gw = _MEAN_PRODUCT(device, g, w, axis=dims, keepdims=True) if centered else 0.0
        mean_gwn = _MEAN_TRIPLE_PRODUCT(device, g, w, normalized, axis=dims, keepdims=True)
        grad_input = _NORM_GRAD(device, g, w, normalized, rstd, mean_gw, mean_gwn)
    return grad_input, grad_weight, grad_bias


def _update_running_reference(device, statistic, momentum, correction, running) -> None:
    running *= 1 - momentum
    running += momentum * (statistic * correction).astype(running.dtype, copy=False)


# running = (1 - momentum) * running + momentum * statistic * correction, in place (one launch).
_UPDATE_RUNNING = Elementwise(
    "genesis_update_running", "T statistic, T momentum, T correction", "T running",
    "running = running * (T(1) - momentum) + momentum * (statistic * correction)",
    _update_running_reference)


def _update_both_reference(device, mean, variance, momentum, correction, running_mean,
                           running_var) -> None:
    _update_running_reference(device, mean, momentum, 1.0, running_mean)
    _update_running_reference(device, variance, momentum, correction, running_var)


# Both running statistics in one launch: the mean's, and the variance's (made unbiased).
_UPDATE_BOTH = Elementwise(
    "genesis_update_running_both", "T mean, T variance, T momentum, T correction",
    "T running_mean, T running_var",
    "running_mean = running_mean * (T(1) - momentum) + momentum * mean; "
    "running_var = running_var * (T(1) - momentum) + momentum * (variance * correction)",
    _update_both_reference)


def update_running_statistics(device, running_mean, running_var, mean, variance,
                              momentum: float, correction: float) -> None:
    """Move the running statistics arrays given (either may be None) toward the batch's
    `mean` and `variance` (times `correction`, making it unbiased) by `momentum`, in place."""
    if running_mean is not None and running_var is not None:
        _UPDATE_BOTH(device, mean, variance, momentum, correction, running_mean, running_var)
        return
    for running, statistic, factor in ((running_mean, mean, 1.0),
                                       (running_var, variance, correction)):
        if running is not None:
            _UPDATE_RUNNING(device, statistic, momentum, factor, running)
