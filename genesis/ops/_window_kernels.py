"""The array work under the sliding-window ops: im2col and col2im (convolution, unfold,
fold), pooling's max scans, sums and scatters, and the padding and in-place adds they share.

On the CPU im2col is a strided view of the padded input copied into columns, and col2im
adds each window position's block into the input (NumPy's own loops do the work). On a
GPU each is one fused kernel over the output elements (`_kernels.py`), where the array
code would be a dozen launches: im2col reads every cell from the unpadded input (padding
reads as 0), col2im gathers for every input cell the column entries that came from it.
The kernels are generated for 1, 2 and 3 spatial dims; the array code is their reference.
"""
from __future__ import annotations

import functools
import math

import numpy as np

from ..dtypes import FLOATING_NUMPY_DTYPES
from ._kernels import Elementwise, parameters
from ._select import selects_are_cheap, zero_unless
from .window_geometry import Windows

__all__ = ["padded", "add_into", "columns", "add_columns"]


def padded(xp, array, windows, value=0.0):
    """`array` with its trailing dims padded by `value` (the array itself when no padding)."""
    padding = windows.padding
    if not any(before or after for before, after in padding):
        return array
    lead = array.shape[:array.ndim - len(padding)]
    out = xp.full(lead + windows.padded_size(array.shape[len(lead):]), value, array.dtype)
    out[(...,) + tuple(slice(before, before + size) for (before, _), size in
                       zip(padding, array.shape[len(lead):]))] = array
    return out


def add_into(target, key, values) -> None:
    """target[key] += values for a basic (slicing) `key`, in one pass: `target[key] += v`
    would also write the sum back through __setitem__, a second pass (a copy kernel on a
    GPU)."""
    view = target[key]
    view += values


# -- the fused kernels: geometry as scalars, dims named 0, 1, 2 (the last runs fastest) ------
def _geometry(dims: int) -> str:
    return ", ".join(f"int64 size{d}, int64 kernel{d}, int64 out{d}, int64 stride{d}, "
                     f"int64 dilation{d}, int64 pad{d}" for d in range(dims))


def _split(index: str, names: list, extents: list) -> list:
    """C lines splitting `index` (consumed) into C-order coordinates `names`."""
    return [f"long long {name} = {index} % {extent}; {index} /= {extent};"
            for name, extent in zip(reversed(names), reversed(extents))]


def _window_cell(dims: int, window: str, tap: str) -> list:
    """C lines: `cell`, the input element (after the leading index `rest`) under tap `tap`
    of window `window`, and whether it is `inside` the input rather than padding."""
    lines = [f"long long w = {window}; long long t = {tap};"]
    lines += _split("w", [f"o{d}" for d in range(dims)], [f"out{d}" for d in range(dims)])
    lines += _split("t", [f"k{d}" for d in range(dims)], [f"kernel{d}" for d in range(dims)])
    lines.append("long long cell = rest; bool inside = true;")
    for d in range(dims):
        lines.append(f"long long at{d} = o{d} * stride{d} - pad{d} + k{d} * dilation{d};")
        lines.append(f"inside = inside && at{d} >= 0 && at{d} < size{d};")
        lines.append(f"cell = cell * size{d} + at{d};")
    return lines


def _cell_window(dims: int, tap: str) -> list:
    """C lines: for the input cell `at0, at1...` and tap `tap`, `hit` when a window reads
    the cell at that tap, and `l`, that window."""
    lines = [f"long long t = {tap}; long long l = 0; bool hit = true;"]
    lines += _split("t", [f"k{d}" for d in range(dims)], [f"kernel{d}" for d in range(dims)])
    for d in range(dims):
        lines.append(f"long long from{d} = at{d} + pad{d} - k{d} * dilation{d};")
        lines.append(f"hit = hit && from{d} >= 0 && from{d} % stride{d} == 0 "
                     f"&& from{d} / stride{d} < out{d};")
        lines.append(f"l = l * out{d} + (hit ? from{d} / stride{d} : 0);")
    return lines


def _input_cell(dims: int) -> list:
    """C lines splitting the element index `i` into `rest` (the leading index) and `at*`."""
    return ["long long rest = i;"] + _split("rest", [f"at{d}" for d in range(dims)],
                                            [f"size{d}" for d in range(dims)])


def _im2col_body(dims: int) -> str:
    """cols[n, c * taps + k, l]: the input cell under kernel position k of window l."""
    lines = ["long long rest = i;", "long long l = rest % windows; rest /= windows;",
             "long long k = rest % taps; rest /= taps;"]  # rest: n * channels + c
    lines += _window_cell(dims, "l", "k")
    lines.append("cols = inside ? x[cell] : T(0);")
    return "\n".join(lines)


def _col2im_body(dims: int) -> str:
    """image[n, c, *at]: the sum of the column entries that were read from that cell."""
    lines = _input_cell(dims) + ["T total = T(0);", "for (long long k = 0; k < taps; ++k) {"]
    lines += _cell_window(dims, "k")
    lines += ["if (hit) { total += cols[(rest * taps + k) * windows + l]; }", "}",
              "image = total;"]
    return "\n".join(lines)


def _max_scan_body(dims: int) -> str:
    """best and arg of window l: PyTorch's scan over the window's cells inside the input,
    where a later tap wins if larger or NaN (so a window of -inf names its first cell)."""
    lines = ["long long rest = i;", "long long l = rest % windows; rest /= windows;",
             "T top = low; int chosen = -1;", "for (long long k = 0; k < taps; ++k) {"]
    lines += _window_cell(dims, "l", "k")
    lines += ["if (!inside) { continue; }", "T value = x[cell];",
              "if (chosen < 0 || value > top || value != value) { top = value; chosen = (int) k; }",
              "}", "best = top; arg = chosen < 0 ? 0 : chosen;"]
    return "\n".join(lines)


def _max_scatter_body(dims: int) -> str:
    """image[n, c, *at]: the sum of the gradients of the windows whose maximum that cell was."""
    lines = _input_cell(dims) + ["T total = T(0);", "for (long long k = 0; k < taps; ++k) {"]
    lines += _cell_window(dims, "k")
    lines += ["if (hit && arg[rest * windows + l] == k) { total += grad[rest * windows + l]; }",
              "}", "image = total;"]
    return "\n".join(lines)


@functools.lru_cache(maxsize=256)
def _average_body(dims: int) -> str:
    """mean of window l: the sum of its cells inside the input (padding adds 0), over the
    window's divisor."""
    lines = ["long long rest = i;", "long long l = rest % windows; rest /= windows;",
             "T total = T(0);", "for (long long k = 0; k < taps; ++k) {"]
    lines += _window_cell(dims, "l", "k")
    lines += ["if (inside) { total += x[cell]; }", "}", "mean = total / divisor;"]
    return "\n".join(lines)


def _spread_body(dims: int) -> str:
    """image[n, c, *at]: the sum, over the windows holding that cell, of their gradient over
    their divisor."""
    lines = _input_cell(dims) + ["T total = T(0);", "for (long long k = 0; k < taps; ++k) {"]
    lines += _cell_window(dims, "k")
    lines += ["if (hit) { total += grad[rest * windows + l] / divisor[l]; }", "}",
              "image = total;"]
    return "\n".join(lines)


def _geometry_values(windows, spatial: tuple, out_size: tuple) -> tuple:
    """The kernels' scalar arguments for a geometry (cached: a layer sees the same few)."""
    values = []
    for size, k, n, s, d, (before, _) in zip(spatial, windows.kernel, out_size, windows.stride,
                                             windows.dilation, windows.padding):
        values += [size, k, n, s, d, before]
    return tuple(values)


@functools.lru_cache(maxsize=256)
def _windows_of(values: tuple):
    """The Windows geometry and spatial size of a kernel's scalar arguments (cached)."""
    spatial, kernel, out_size, stride, dilation, before = (values[at::6] for at in range(6))
    after = tuple((n - 1) * s + d * (k - 1) + 1 - size - b for n, s, d, k, size, b in
                  zip(out_size, stride, dilation, kernel, spatial, before))
    padding = tuple((b, max(a, 0)) for b, a in zip(before, after))
    return Windows(tuple(kernel), tuple(stride), tuple(dilation), padding), tuple(spatial)


def _im2col_reference(device, x, taps, windows_count, *geometry):
    windows, _ = _windows_of(tuple(geometry))
    return _columns_by_views(device.xp, x, windows)


def _col2im_reference(device, cols, taps, windows_count, *geometry):
    windows, spatial = _windows_of(tuple(geometry))
    return _add_columns_by_blocks(device.xp, cols, spatial, windows)


def _filling(reference, count: int):
    """`reference` (of `count` arguments), also taking as the kernel does output arrays after
    the arguments, which it fills and returns."""

    def run(device, *args):
        result = reference(device, *args[:count])
        outputs = args[count:]
        if not outputs:
            return result
        for output, value in zip(outputs, result if len(outputs) > 1 else (result,)):
            output[...] = value
        return outputs if len(outputs) > 1 else outputs[0]
    return run


def _max_scan_reference(device, x, taps, windows_count, low, *geometry):
    return scan_inside(device, x, _windows_of(tuple(geometry))[0], low)


def _max_scatter_reference(device, grad, arg, taps, windows_count, *geometry):
    windows, spatial = _windows_of(tuple(geometry))
    return scatter_to_winners(device, grad, arg, spatial, windows)


def _average_reference(device, x, divisor, taps, windows_count, *geometry):
    windows, spatial = _windows_of(tuple(geometry))
    sums = window_sums(device.xp, padded(device.xp, x, windows), windows,
                       windows.output_size(spatial))
    return device.xp.divide(sums, divisor, out=sums)


def _spread_reference(device, grad, divisor, taps, windows_count, *geometry):
    windows, spatial = _windows_of(tuple(geometry))
    data = grad / divisor
    return add_windows(device.xp, data.shape[:data.ndim - len(spatial)], spatial, windows,
                       data.dtype, lambda number, window_key: data[window_key])


def _kernels(name: str, inputs: str, outputs: str, body, reference) -> dict:
    """The kernel for 1, 2 and 3 spatial dims: `inputs`, then the geometry's six numbers per
    dim."""
    return {dims: Elementwise(f"genesis_{name}_{dims}d", f"{inputs}, {_geometry(dims)}", outputs,
                              body(dims), _filling(reference, len(parameters(inputs)) + 6 * dims))
            for dims in (1, 2, 3)}


_IM2COL = _kernels("im2col", "raw T x, int64 taps, int64 windows", "T cols", _im2col_body,
                   _im2col_reference)
_COL2IM = _kernels("col2im", "raw T cols, int64 taps, int64 windows", "T image", _col2im_body,
                   _col2im_reference)
_MAX_SCAN = _kernels("max_scan", "raw T x, int64 taps, int64 windows, T low", "T best, int32 arg",
                     _max_scan_body, _max_scan_reference)
_AVERAGE = _kernels("average", "raw T x, T divisor, int64 taps, int64 windows", "T mean",
                    _average_body, _average_reference)
_SPREAD = _kernels("spread", "raw T grad, raw T divisor, int64 taps, int64 windows", "T image",
                   _spread_body, _spread_reference)
_MAX_SCATTER = _kernels("max_scatter", "raw T grad, raw int32 arg, int64 taps, int64 windows",
                        "T image", _max_scatter_body, _max_scatter_reference)


# -- the entry points ------------------------------------------------------------------------
def _run(kernels: dict, device, arrays: tuple, windows, spatial, shape: tuple, extra=()):
    """kernels[dims] on `arrays`, the window counts, `extra` and the geometry; its output of
    `shape` (nothing broadcasts to it)."""
    spatial = tuple(spatial)
    out_size = windows.output_size(spatial)
    return kernels[len(spatial)](device, *arrays, windows.count, math.prod(out_size), *extra,
                                 *_geometry_values(windows, spatial, out_size), shape=shape)


def columns(device, array, windows):
    """im2col: (N, C, *spatial) -> (N, C * prod(kernel), L), one column per window (a copy)."""
    spatial = array.shape[2:]
    shape = (array.shape[0], array.shape[1] * windows.count,
             math.prod(windows.output_size(spatial)))
    return _run(_IM2COL, device, (array,), windows, spatial, shape)


def add_columns(device, cols, spatial: tuple, windows):
    """col2im: (N, C * prod(kernel), L) -> (N, C, *spatial), each window added back where it
    was read (what fell on the padding is dropped: the result is a fresh unpadded array)."""
    shape = (cols.shape[0], cols.shape[1] // windows.count) + tuple(spatial)
    return _run(_COL2IM, device, (cols,), windows, spatial, shape)


def max_scan(device, data, windows, low):
    """(maxima, winners) of the windows over the trailing dims of `data`: PyTorch's scan (a
    later tap wins if larger or NaN), padding reading as `low`; a winner is its tap's number
    (int32 where the fused kernel runs)."""
    dims = len(windows.kernel)
    spatial = data.shape[data.ndim - dims:]
    shape = data.shape[:data.ndim - dims] + windows.output_size(spatial)
    return _run(_MAX_SCAN, device, (data,), windows, spatial, shape, extra=(low,))


def max_scatter(device, grad, arg, spatial: tuple, windows):
    """Each window's gradient added at the input cell that won it (the adjoint of the scan)."""
    shape = grad.shape[:grad.ndim - len(windows.kernel)] + tuple(spatial)
    return _run(_MAX_SCATTER, device, (grad, arg), windows, spatial, shape)


def average(device, data, windows, divisor):
    """Each window's sum over the trailing dims of `data` (padding adds 0) divided by
    `divisor` (a number, or an array over the output's spatial dims)."""
    dims = len(windows.kernel)
    spatial = data.shape[data.ndim - dims:]
    shape = data.shape[:data.ndim - dims] + windows.output_size(spatial)
    return _run(_AVERAGE, device, (data, divisor), windows, spatial, shape)


def spread(device, grad, divisor, spatial: tuple, windows):
    """The adjoint of `average`: each window's gradient over its divisor, added at its
    cells (what falls on the padding is dropped)."""
    out_size = windows.output_size(tuple(spatial))
    if getattr(divisor, "shape", None) != out_size:  # a number (divisor_override): an array
        divisor = device.xp.broadcast_to(device.xp.asarray(divisor, grad.dtype), out_size)
    shape = grad.shape[:grad.ndim - len(windows.kernel)] + tuple(spatial)
    return _run(_SPREAD, device, (grad, divisor), windows, spatial, shape)


def _columns_by_views(xp, array, windows):
    source = padded(xp, array, windows)
    lead = source.shape[:2]
    out_size = windows.output_size(array.shape[2:])
    spatial_strides = source.strides[2:]
    view = xp.lib.stride_tricks.as_strided(
        source, lead + windows.kernel + out_size,
        source.strides[:2] + tuple(st * d for st, d in zip(spatial_strides, windows.dilation))
        + tuple(st * s for st, s in zip(spatial_strides, windows.stride)))
    return view.reshape(lead[0], lead[1] * windows.count, math.prod(out_size))


def _add_columns_by_blocks(xp, cols, spatial: tuple, windows):
    lead = (cols.shape[0], cols.shape[1] // windows.count)
    blocks = cols.reshape(lead + (windows.count,) + windows.output_size(tuple(spatial)))
    return add_windows(xp, lead, spatial, windows, cols.dtype,
                       lambda number, window_key: blocks[:, :, number][window_key])


def add_windows(xp, lead: tuple, spatial: tuple, windows, dtype, values_at):
    """Zeros of shape lead + spatial with, for each window position, `values_at(its number,
    key into the windows)` added at the input cells it covers (padding cells are dropped)."""
    spatial = tuple(spatial)
    target = xp.zeros(tuple(lead) + spatial, dtype)
    for number, input_key, window_key in windows.inside(spatial, windows.output_size(spatial)):
        add_into(target, input_key, values_at(number, window_key))
    return target


# -- the array code of pooling: the CPU path and the references of the kernels above ------
def scan_maxima(xp, parts, count: int, track: bool, device=None):
    """PyTorch's max scan over the `parts` (arrays of one shape, one per window position):
    a later part wins only if larger or NaN. Returns the maxima and, if `track`, the number of
    the winning part (the first on ties).

    On the CPU branch-free: since later parts have larger numbers, the winner's number is the
    largest number that beat the running maximum (masked selects cost ~50x more than
    arithmetic there). On a `device` where selects are cheap (a GPU, see _select.py) each
    part is one fused step that writes the number where the part won and keeps the maximum;
    strided parts are read as they are.
    """
    cheap_selects = device is not None and selects_are_cheap(device)
    best = arg = None
    for number, part in enumerate(parts):
        if not cheap_selects:
            part = xp.ascontiguousarray(part)  # strided operands would slow every step below
        if best is None:
            best = part.copy()
            if track:  # int32 on a GPU: the type the fused kernels take
                arg = xp.zeros(best.shape, xp.uint8 if count < 256 and not cheap_selects else xp.int32)
            continue
        if track and cheap_selects:
            _WINDOW_MAX_STEP(device, part, number, best, arg)
            continue
        if track:
            better = part > best
            if best.dtype in FLOATING_NUMPY_DTYPES:
                better |= xp.isnan(part)
            xp.maximum(arg, better * arg.dtype.type(number), out=arg)
        xp.maximum(best, part, out=best)
    return best, arg


def _window_max_step_reference(device, part, number, best, arg) -> None:
    xp = device.xp
    better = part > best
    if best.dtype in FLOATING_NUMPY_DTYPES:
        better |= xp.isnan(part)
    xp.copyto(arg, arg.dtype.type(number), where=better)
    xp.maximum(best, part, out=best)


# One step of the scan, in place: where `part` beats `best` (larger, or NaN) it becomes the
# best and `number` the winner. (maximum's NaN rule: a NaN best stays, a NaN part wins.)
_WINDOW_MAX_STEP = Elementwise(
    "genesis_window_max_step", "T part, int32 number", "T best, int32 arg",
    "if (part > best || part != part) { best = part; arg = number; }", _window_max_step_reference)


def window_maxima(xp, source, windows: Windows, out_size: tuple, track: bool, device):
    """Max of each window of the padded `source`, and (if `track`) the window position
    (0 .. prod(kernel) - 1, row-major) it came from."""
    parts = (source[(..., *windows.slices(offset, out_size))] for _, offset in windows.offsets())
    return scan_maxima(xp, parts, windows.count, track, device)


def _first_valid_positions(xp, windows: Windows, spatial: tuple, out_size: tuple):
    """For each window, the first position (row-major) that lies inside the input."""
    number = 0
    for dim, (size, (before, _), k, s, d) in enumerate(zip(
            spatial, windows.padding, windows.kernel, windows.stride, windows.dilation)):
        start = np.arange(out_size[dim]) * s - before
        first = np.maximum(0, -(start // d))  # ceil(-start / d) for negative starts
        first = first.reshape((-1,) + (1,) * (len(spatial) - dim - 1))
        number = number * k + first
    return xp.asarray(number)


def scan_inside(device, data, windows, low) -> tuple:
    """The array code of `max_scan`: PyTorch's scan over the padded input, where a window
    whose maximum only the padding reached (all its cells -inf) names its first cell inside
    the input, as PyTorch does."""
    xp = device.xp
    spatial = data.shape[data.ndim - len(windows.kernel):]
    out_size = windows.output_size(spatial)
    best, arg = window_maxima(xp, padded(xp, data, windows, low), windows, out_size, True, device)
    if windows.padding != ((0, 0),) * len(spatial) and (best == low).any():
        arg = xp.where(best == low, _first_valid_positions(xp, windows, spatial, out_size),
                       arg).astype(arg.dtype, copy=False)
    return best, arg


def scatter_to_winners(device, data, arg, spatial: tuple, windows):
    """The array code of `max_scatter`: for each window position, the gradients of the
    windows it won added at its cells (a winner is never padding)."""
    xp = device.xp
    cheap, finite = finite_unless_cheap(xp, device, data)
    return add_windows(xp, data.shape[:data.ndim - len(spatial)], spatial, windows, data.dtype,
                       lambda number, key: zero_unless(xp, data[key], arg[key] == number,
                                                       finite, cheap))


def finite_unless_cheap(xp, device, data) -> tuple:
    """(cheap selects?, all values finite?): on the CPU a product may stand in for a select
    when every value is finite; a GPU selects in one pass and need not wait to find out."""
    if selects_are_cheap(device):
        return True, None
    return False, bool(xp.isfinite(data).all())


def window_sums(xp, source, windows: Windows, out_size: tuple):
    """Sum of each window of the (zero-padded) `source`."""
    total = None
    for _, offset in windows.offsets():
        part = source[(..., *windows.slices(offset, out_size))]
        total = part.copy() if total is None else total.__iadd__(part)
    return total
