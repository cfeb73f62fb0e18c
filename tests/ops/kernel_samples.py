"""Sample arguments for every fused GPU kernel (genesis/ops/_kernels.py's REGISTRY), shared
by the checks that run the kernels: compiled as C++ (test_fused_kernels.py), compiled by
NVRTC (test_fused_kernels_nvrtc.py) and run by CuPy on a real GPU (tests/cuda).

SAMPLES maps a kernel's name to a function of (rng, dtype) giving (arguments, options):
the inputs, then any outputs it updates in place, and keyword options (axis= and
keepdims= of a reduction, shape= of outputs that nothing broadcasts to).
"""
from __future__ import annotations

import numpy as np

import genesis
import genesis.debug.stats  # noqa: F401  (registers the debug figures' kernels)
from genesis.ops import samples, unary
from genesis.ops._kernels import REGISTRY, parameters
from genesis.ops._window_kernels import _geometry_values
from genesis.ops.window_geometry import Windows


def _normal(rng, shape, dtype):
    return rng.standard_normal(shape).astype(dtype)


def _softmax_parts(rng, dtype, shape=(5, 7), axis=1):
    x = _normal(rng, shape, dtype) * 3
    m = x.max(axis=axis, keepdims=True)
    s = np.exp(x - m).sum(axis=axis, keepdims=True)
    return x, m, s


def _cross_entropy_backward(rng, dtype):
    x, m, s = _softmax_parts(rng, dtype, (4, 6, 3))
    target = rng.integers(0, 6, (4, 1, 3))
    return (x - m - np.log(s), target, np.asarray(0.7, dtype), 0.25, 6, 3), {}


def _bce_arguments(rng, dtype):
    """Logits (some exactly 0 and large), targets in [0, 1], a weight and a pos_weight."""
    x = _normal(rng, (4, 5), dtype) * 10
    x[0, :3] = (0, 40, -40)
    return (x, rng.uniform(0, 1, (4, 5)).astype(dtype), rng.uniform(0.5, 2, (5,)).astype(dtype),
            rng.uniform(0.5, 3, (5,)).astype(dtype))


_WINDOW_CASES = {  # (spatial, kernel, stride, dilation, padding before/after): overlaps, gaps
    1: ((9,), (3,), (2,), (1,), ((1, 2),)),
    2: ((6, 7), (3, 2), (2, 1), (1, 2), ((1, 1), (0, 1))),
    3: ((4, 5, 3), (2, 2, 2), (1, 2, 1), (2, 1, 1), ((1, 0), (1, 1), (0, 0))),
}


def _window_geometry(dims):
    spatial, kernel, stride, dilation, padding = _WINDOW_CASES[dims]
    windows = Windows(kernel, stride, dilation, padding)
    out_size = windows.output_size(spatial)
    return windows, spatial, out_size, _geometry_values(windows, spatial, out_size)


def _im2col(rng, dtype, dims):
    windows, spatial, out_size, geometry = _window_geometry(dims)
    x = _normal(rng, (2, 3) + spatial, dtype)
    shape = (2, 3 * windows.count, int(np.prod(out_size)))
    return (x, windows.count, shape[2], *geometry), {"shape": shape}


def _col2im(rng, dtype, dims):
    windows, spatial, out_size, geometry = _window_geometry(dims)
    cols = _normal(rng, (2, 3 * windows.count, int(np.prod(out_size))), dtype)
    return (cols, windows.count, cols.shape[2], *geometry), {"shape": (2, 3) + spatial}


def _average(rng, dtype, dims):
    windows, spatial, out_size, geometry = _window_geometry(dims)
    x = _normal(rng, (2, 3) + spatial, dtype)
    divisor = rng.integers(1, 5, out_size).astype(dtype)
    return (x, divisor, windows.count, int(np.prod(out_size)), *geometry), {
        "shape": (2, 3) + out_size}


def _spread(rng, dtype, dims):
    windows, spatial, out_size, geometry = _window_geometry(dims)
    grad = _normal(rng, (2, 3) + out_size, dtype)
    divisor = rng.integers(1, 5, out_size).astype(dtype)
    return (grad, divisor, windows.count, grad[0, 0].size, *geometry), {"shape": (2, 3) + spatial}


def _max_scan(rng, dtype, dims):
    windows, spatial, out_size, geometry = _window_geometry(dims)
    x = np.round(_normal(rng, (2, 3) + spatial, dtype))  # many ties: the first tap wins
    x.reshape(-1)[::7] = np.nan  # NaN wins, as in PyTorch
    x[(0, 0) + (slice(0, 2),) * dims] = -np.inf  # a corner window of -inf and padding
    return (x, windows.count, int(np.prod(out_size)), -np.inf, *geometry), {
        "shape": (2, 3) + out_size}


def _max_scatter(rng, dtype, dims):
    windows, spatial, out_size, geometry = _window_geometry(dims)
    grad = _normal(rng, (2, 3) + out_size, dtype)
    winners = rng.integers(0, windows.count, (2, 3) + out_size).astype(np.int32)
    return (grad, winners, windows.count, grad[0, 0].size, *geometry), {"shape": (2, 3) + spatial}


def _with_nans(values):
    values[0, :2] = np.nan
    return values


def _with_non_finite(rng, dtype):
    """Values with NaN, Inf, -Inf and zeros among them, reduced whole (a debug figure)."""
    values = _normal(rng, (4, 6), dtype) * 3
    values[0, :3] = np.nan, np.inf, -np.inf
    values[2, 1:3] = 0
    return (values,), {"axis": None, "keepdims": False}


def _rows(rng, dtype):
    """Rows along axis 1 longer than a block's threads (so threads loop), with inner > 1;
    one row holds a NaN, one is all -inf, one has an inf among large values."""
    x = _normal(rng, (2, 300, 3), dtype) * 4
    x[0, 7, 0] = np.nan
    x[1, :, 2] = -np.inf
    x[0, :, 1] += 80
    x[0, 11, 1] = np.inf
    return x


def _row_gradient(rng, dtype):
    """A gradient and a softmax-like output (positive, rows summing to 1)."""
    y = np.exp(_normal(rng, (2, 300, 3), dtype))
    return _normal(rng, y.shape, dtype), (y / y.sum(axis=1, keepdims=True)).astype(dtype)


def _unary_input(op: str, rng, dtype):
    """Values of unary op `op` inside its domain (the op tests' own sampler)."""
    return unary._DOMAINS.get(op, samples.values)(rng, (6, 5)).astype(dtype)


def _unary_forward(op: str):
    return lambda rng, dtype: ((_unary_input(op, rng, dtype),), {})


def _unary_gradient(op: str):
    """A gradient and the saved input, or the op's output at an input, as its backward has."""
    def sample(rng, dtype):
        x = _unary_input(op, rng, dtype)
        saved_name = parameters(REGISTRY[f"genesis_{op}_grad"].inputs)[1].name
        saved = x if saved_name == "x" else getattr(genesis, op)(genesis.from_numpy(x)).numpy()
        return (_normal(rng, x.shape, dtype), saved), {}
    return sample


_UNARY_GRADIENTS = ("exp2", "expm1", "log1p", "log2", "log10", "sqrt", "rsqrt", "square",
                    "reciprocal", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh",
                    "asinh", "acosh", "atanh", "erf")


def _adam_multi(rng, dtype):
    """Tensors of sizes spanning several chunks, one, and less than a block's threads; then
    the shared numbers of _adam."""
    tensors = []
    for shape in ((3, 3000), (7,), (70,)):
        tensors.append((_normal(rng, shape, dtype), _normal(rng, shape, dtype),
                        _normal(rng, shape, dtype) * 0.1,
                        np.abs(_normal(rng, shape, dtype)) * 0.01))
    return (tensors, 0.1, 0.999, 0.001, 0.01, 0.3, 1e-8, 0.02, 0.99), {}


def _adam(rng, dtype):
    param, exp_avg = _normal(rng, (4, 5), dtype), _normal(rng, (4, 5), dtype) * 0.1
    exp_avg_sq = np.abs(_normal(rng, (4, 5), dtype)) * 0.01
    inputs = (_normal(rng, (4, 5), dtype), 0.1, 0.999, 0.001, 0.01, 0.3, 1e-8, 0.02, 0.99)
    return inputs + (param, exp_avg, exp_avg_sq), {}


# Sample arguments (inputs, then any in-place outputs) and options, for every kernel.
SAMPLES = {
    "genesis_gelu_none": lambda rng, dtype: ((_normal(rng, (6, 5), dtype) * 3,), {}),
    "genesis_gelu_tanh": lambda rng, dtype: ((_normal(rng, (6, 5), dtype) * 3,), {}),
    "genesis_gelu_none_grad": lambda rng, dtype: (
        (_normal(rng, (6, 5), dtype), _normal(rng, (6, 5), dtype) * 3), {}),
    "genesis_gelu_tanh_grad": lambda rng, dtype: (
        (_normal(rng, (6, 5), dtype), _normal(rng, (6, 5), dtype) * 3), {}),
    "genesis_relu_grad": lambda rng, dtype: (
        (_normal(rng, (6, 5), dtype), np.maximum(_normal(rng, (6, 5), dtype), 0)), {}),
    "genesis_exp_shifted": lambda rng, dtype: (_softmax_parts(rng, dtype)[:2], {}),
    "genesis_sum_product": lambda rng, dtype: (
        (_normal(rng, (5, 7), dtype), _normal(rng, (5, 7), dtype)), {"axis": 1, "keepdims": True}),
    "genesis_cross_entropy_grad": _cross_entropy_backward,
    "genesis_adam_step": _adam,
    "genesis_adam_step_multi": _adam_multi,
    **{kernel: _with_non_finite for kernel in (
        "genesis_finite_min", "genesis_finite_max", "genesis_finite_sum", "genesis_finite_abs_sum",
        "genesis_finite_square_sum", "genesis_finite_max_abs", "genesis_square_sum",
        "genesis_finite_count",
        "genesis_nan_count", "genesis_nonzero_count")},
    "genesis_any_outside": lambda rng, dtype: (
        (np.array([[0, 5, 2], [1, -100, 3]]), 6), {"axis": None, "keepdims": False}),
    **{f"genesis_im2col_{dims}d": (lambda dims: lambda rng, dtype: _im2col(rng, dtype, dims))(dims)
       for dims in (1, 2, 3)},
    **{f"genesis_col2im_{dims}d": (lambda dims: lambda rng, dtype: _col2im(rng, dtype, dims))(dims)
       for dims in (1, 2, 3)},
    **{f"genesis_average_{dims}d": (lambda dims: lambda rng, dtype: _average(rng, dtype, dims))(dims)
       for dims in (1, 2, 3)},
    **{f"genesis_spread_{dims}d": (lambda dims: lambda rng, dtype: _spread(rng, dtype, dims))(dims)
       for dims in (1, 2, 3)},
    **{f"genesis_max_scan_{dims}d": (lambda dims: lambda rng, dtype: _max_scan(rng, dtype, dims))(dims)
       for dims in (1, 2, 3)},
    **{f"genesis_max_scatter_{dims}d": (lambda dims: lambda rng, dtype: _max_scatter(rng, dtype, dims))(
        dims) for dims in (1, 2, 3)},
    "genesis_dropout": lambda rng, dtype: (
        (_normal(rng, (6, 5), dtype), rng.random((6, 5)).astype(dtype), 0.3, 1 / 0.7), {}),
    "genesis_window_max_step": lambda rng, dtype: (
        (_with_nans(_normal(rng, (4, 5), dtype)), 3, _with_nans(_normal(rng, (4, 5), dtype)),
         rng.integers(0, 3, (4, 5)).astype(np.int32)), {}),
    "genesis_bce_logits": lambda rng, dtype: (_bce_arguments(rng, dtype), {}),
    "genesis_bce_logits_sum": lambda rng, dtype: (
        _bce_arguments(rng, dtype), {"axis": None, "keepdims": False}),
    "genesis_bce_logits_mean": lambda rng, dtype: (
        _bce_arguments(rng, dtype), {"axis": None, "keepdims": False}),
    "genesis_bce_logits_grad": lambda rng, dtype: (
        _bce_arguments(rng, dtype) + (_normal(rng, (4, 5), dtype), 0.5), {}),
    "genesis_squared_error": lambda rng, dtype: (
        (_normal(rng, (4, 5), dtype), _normal(rng, (5,), dtype)), {}),
    "genesis_squared_error_sum": lambda rng, dtype: (
        (_normal(rng, (4, 5), dtype), _normal(rng, (4, 5), dtype)), {"axis": None, "keepdims": False}),
    "genesis_squared_error_mean": lambda rng, dtype: (
        (_normal(rng, (4, 5), dtype), _normal(rng, (4, 1), dtype)), {"axis": None, "keepdims": False}),
    "genesis_squared_error_grad": lambda rng, dtype: (
        (_normal(rng, (4, 5), dtype), _normal(rng, (4, 5), dtype), np.asarray(1.5, dtype), 0.1), {}),
    "genesis_sigmoid": lambda rng, dtype: ((_normal(rng, (6, 5), dtype) * 5,), {}),
    "genesis_sigmoid_grad": lambda rng, dtype: (
        (_normal(rng, (6, 5), dtype), np.abs(_normal(rng, (6, 5), dtype)) % 1), {}),
    "genesis_tanh_grad": lambda rng, dtype: (
        (_normal(rng, (6, 5), dtype), np.tanh(_normal(rng, (6, 5), dtype))), {}),
    "genesis_silu": lambda rng, dtype: ((_normal(rng, (6, 5), dtype) * 5,), {}),
    "genesis_silu_grad": lambda rng, dtype: (
        (_normal(rng, (6, 5), dtype), _normal(rng, (6, 5), dtype) * 5), {}),
    "genesis_leaky_relu": lambda rng, dtype: ((_normal(rng, (6, 5), dtype), 0.1), {}),
    "genesis_leaky_relu_grad": lambda rng, dtype: (
        (_normal(rng, (6, 5), dtype), _normal(rng, (6, 5), dtype), 0.1), {}),
    "genesis_centered_square_mean": lambda rng, dtype: (
        (_normal(rng, (4, 3, 5), dtype), _normal(rng, (4, 1, 1), dtype)),
        {"axis": (1, 2), "keepdims": True}),
    "genesis_rstd": lambda rng, dtype: ((np.abs(_normal(rng, (4, 1), dtype)), 1e-5), {}),
    "genesis_normalize": lambda rng, dtype: (
        (_normal(rng, (4, 6), dtype), _normal(rng, (4, 1), dtype), _normal(rng, (4, 1), dtype)), {}),
    "genesis_normalize_affine": lambda rng, dtype: (
        (_normal(rng, (4, 6), dtype), _normal(rng, (4, 1), dtype), _normal(rng, (4, 1), dtype),
         _normal(rng, (6,), dtype), _normal(rng, (6,), dtype)), {}),
    "genesis_mean_product": lambda rng, dtype: (
        (_normal(rng, (4, 6), dtype), _normal(rng, (6,), dtype)), {"axis": (1,), "keepdims": True}),
    "genesis_mean_triple_product": lambda rng, dtype: (
        (_normal(rng, (3, 4, 6), dtype), 1.0, _normal(rng, (3, 4, 6), dtype)),
        {"axis": (0, 2), "keepdims": True}),
    "genesis_update_running": lambda rng, dtype: (
        (_normal(rng, (5,), dtype), 0.1, 8 / 7, _normal(rng, (5,), dtype)), {}),
    "genesis_update_running_both": lambda rng, dtype: (
        (_normal(rng, (5,), dtype), np.abs(_normal(rng, (5,), dtype)), 0.1, 8 / 7,
         _normal(rng, (5,), dtype), np.abs(_normal(rng, (5,), dtype))), {}),
    "genesis_norm_grad": lambda rng, dtype: (
        (_normal(rng, (4, 6), dtype), _normal(rng, (6,), dtype), _normal(rng, (4, 6), dtype),
         _normal(rng, (4, 1), dtype), _normal(rng, (4, 1), dtype), _normal(rng, (4, 1), dtype)), {}),
}
SAMPLES.update({f"genesis_{op}_grad": _unary_gradient(op) for op in _UNARY_GRADIENTS})
SAMPLES["genesis_rsqrt"] = _unary_forward("rsqrt")
SAMPLES.update({
    "genesis_softmax": lambda rng, dtype: ((_rows(rng, dtype),), {"axis": 1}),
    "genesis_log_softmax": lambda rng, dtype: ((_rows(rng, dtype),), {"axis": 1}),
    "genesis_softmax_grad": lambda rng, dtype: (_row_gradient(rng, dtype), {"axis": 1}),
    "genesis_log_softmax_grad": lambda rng, dtype: (
        (lambda g, y: (g, np.log(y)))(*_row_gradient(rng, dtype)), {"axis": 1}),
})
SAMPLES["genesis_cross_entropy_rows"] = lambda rng, dtype: (
    (_rows(rng, dtype), rng.integers(0, 300, (2, 1, 3))), {"axis": 1})


def _norm_rows(rng, dtype, centered: bool):
    """Rows of 300 (threads loop) with an offset, so centering matters; a weight (and bias)
    laid out as group norm's: 2 groups of rows in turn, each value over 5 elements."""
    x = _normal(rng, (6, 300), dtype) * 3 + 5
    affine = [_normal(rng, (2, 60, 1), dtype) for _ in range(2 if centered else 1)]
    return (x, *affine, 1e-5, 2, 5), {"axis": 1}


def _norm_grad_rows(rng, dtype):
    x = _normal(rng, (6, 300), dtype)
    normalized = (x - x.mean(1, keepdims=True)) / x.std(1, keepdims=True)
    return (_normal(rng, (6, 300), dtype), normalized.astype(dtype),
            _normal(rng, (2, 60, 1), dtype), np.abs(_normal(rng, (6, 1), dtype)) + 0.5, 2, 5), \
        {"axis": 1}


SAMPLES.update({
    "genesis_layer_norm_rows": lambda rng, dtype: _norm_rows(rng, dtype, True),
    "genesis_rms_norm_rows": lambda rng, dtype: _norm_rows(rng, dtype, False),
    "genesis_layer_norm_grad_rows": _norm_grad_rows,
    "genesis_rms_norm_grad_rows": _norm_grad_rows,
})


def _norm_across(rng, dtype, centered: bool):
    """Batch norm's rows: each of 3 channels over a batch of 4 and 5 x 6 positions, its
    weight (and bias) one value per channel."""
    x = _normal(rng, (4, 3, 5, 6), dtype) * 3 + 5
    affine = [_normal(rng, (3, 1, 1), dtype) for _ in range(2 if centered else 1)]
    return (x, *affine, 1e-5, 3, 120), {"keep": 1}


def _norm_grad_across(rng, dtype):
    x = _normal(rng, (4, 3, 5, 6), dtype)
    normalized = (x - x.mean((0, 2, 3), keepdims=True)) / x.std((0, 2, 3), keepdims=True)
    return (_normal(rng, x.shape, dtype), normalized.astype(dtype),
            _normal(rng, (3, 1, 1), dtype), np.abs(_normal(rng, (1, 3, 1, 1), dtype)) + 0.5,
            3, 120), {"keep": 1}


# Row kernels that also run with rows across every dim but one (`keep=`), and samples so.
ACROSS_SAMPLES = {
    "genesis_layer_norm_rows": lambda rng, dtype: _norm_across(rng, dtype, True),
    "genesis_rms_norm_rows": lambda rng, dtype: _norm_across(rng, dtype, False),
    "genesis_layer_norm_grad_rows": _norm_grad_across,
    "genesis_rms_norm_grad_rows": _norm_grad_across,
}
ACROSS_SAMPLES["genesis_batch_norm_grad_rows"] = lambda rng, dtype: (
    _norm_grad_across(rng, dtype)[0][:2] + (_normal(rng, (3, 1, 1), dtype),
                                            np.abs(_normal(rng, (1, 3, 1, 1), dtype)) + 0.5),
    {"keep": 1})
SAMPLES["genesis_batch_norm_grad_rows"] = ACROSS_SAMPLES["genesis_batch_norm_grad_rows"]
