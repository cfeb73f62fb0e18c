"""The GPU kernels under softmax, log_softmax and the losses built on them, each with
its array reference (what runs on the CPU, and what tests/ops/test_fused_kernels.py checks
the compiled kernel against)."""
from __future__ import annotations

from ._kernels import Elementwise, Reduction
from ._row_kernels import RowKernel

__all__ = ["SOFTMAX", "SOFTMAX_GRAD", "LOG_SOFTMAX", "LOG_SOFTMAX_GRAD", "EXP_SHIFTED",
           "SUM_PRODUCT", "PEAK_AND_LOG_TOTAL", "log_softmax_reference", "minus_peak"]


def minus_peak(xp, x, axis):
    """x minus its maximum along `axis`, as a new array the caller may overwrite (nothing
    to subtract in an empty tensor)."""
    if x.size == 0:
        return x.copy()
    return xp.subtract(x, x.max(axis=axis, keepdims=True), out=xp.empty_like(x))  # 0-d too


def _exp_shifted_reference(device, x, peak):
    out = device.xp.subtract(x, peak, out=device.xp.empty_like(x))  # an array, even for 0-d
    return device.xp.exp(out, out=out)


EXP_SHIFTED = Elementwise("genesis_exp_shifted", "T x, T peak", "T y", "y = exp(x - peak)",
                            _exp_shifted_reference)
SUM_PRODUCT = Reduction("genesis_sum_product", "T g, T y", "T total", "g * y", "a + b",
                         "total = a", "0",
                         lambda device, g, y, **where: device.xp.multiply(g, y).sum(**where))


def _softmax_reference(device, x, axis):
    """The exps once, normalised in place."""
    out = EXP_SHIFTED(device, x, x.max(axis=axis, keepdims=True))
    out /= out.sum(axis=axis, keepdims=True)
    return out


def _softmax_grad_reference(device, g, y, axis):
    out = device.xp.subtract(g, SUM_PRODUCT(device, g, y, axis=axis, keepdims=True))
    out *= y
    return out


def log_softmax_reference(device, x, axis):
    xp = device.xp
    shifted = minus_peak(xp, x, axis)
    shifted -= xp.log(xp.exp(shifted).sum(axis=axis, keepdims=True))
    return shifted


def _log_softmax_grad_reference(device, g, y, axis):
    return g - device.xp.exp(y) * g.sum(axis=axis, keepdims=True)


# One launch each on a GPU: every row's maximum and sum, then the row, in one thread block.
SOFTMAX = RowKernel("genesis_softmax", "T x", "T y", """
  const T peak = block_reduce(THREAD_MAX(x), GenesisMax());
  T share = 0;
  FOR_ROW(j) share += exp(x[AT(j)] - peak);
  const T total = block_reduce(share, GenesisSum());
  FOR_ROW(j) y[AT(j)] = exp(x[AT(j)] - peak) / total;""", _softmax_reference)
SOFTMAX_GRAD = RowKernel("genesis_softmax_grad", "T g, T y", "T dx", """
  T share = 0;
  FOR_ROW(j) share += g[AT(j)] * y[AT(j)];
  const T total = block_reduce(share, GenesisSum());
  FOR_ROW(j) dx[AT(j)] = y[AT(j)] * (g[AT(j)] - total);""", _softmax_grad_reference)
# A row kernel body's start: the row's `peak` and the log of its sum of exp(x - peak).
PEAK_AND_LOG_TOTAL = """
  const T peak = block_reduce(THREAD_MAX(x), GenesisMax());
  T share = 0;
  FOR_ROW(j) share += exp(x[AT(j)] - peak);
  const T log_total = log(block_reduce(share, GenesisSum()));"""
LOG_SOFTMAX = RowKernel("genesis_log_softmax", "T x", "T y", PEAK_AND_LOG_TOTAL + """
  FOR_ROW(j) y[AT(j)] = (x[AT(j)] - peak) - log_total;""", log_softmax_reference)
LOG_SOFTMAX_GRAD = RowKernel("genesis_log_softmax_grad", "T g, T y", "T dx", """
  const T total = block_reduce(THREAD_SUM(g), GenesisSum());
  FOR_ROW(j) dx[AT(j)] = g[AT(j)] - exp(y[AT(j)]) * total;""",
                              _log_softmax_grad_reference)
