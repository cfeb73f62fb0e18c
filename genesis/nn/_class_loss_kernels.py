"""The GPU kernels under cross entropy, each with its array reference (what runs on the
CPU, and what tests/ops/test_fused_kernels.py checks the compiled kernel against)."""
from __future__ import annotations

from ..ops._kernels import Elementwise
from ..ops._row_kernels import RowKernel
from ..ops._softmax_kernels import PEAK_AND_LOG_TOTAL, log_softmax_reference

__all__ = ["CROSS_ENTROPY_ROWS", "CROSS_ENTROPY_GRAD"]


def _cross_entropy_rows_reference(device, x, target, axis):
    log_probabilities = log_softmax_reference(device, x, axis)
    return log_probabilities, -device.xp.take_along_axis(log_probabilities, target, axis)


def _cross_entropy_grad_reference(device, log_probabilities, index, grad, scale, classes, inner):
    xp = device.xp
    axis = 0 if log_probabilities.ndim == 1 else 1
    probabilities = xp.exp(log_probabilities)
    xp.put_along_axis(probabilities, index, xp.take_along_axis(probabilities, index, axis) - 1, axis)
    probabilities *= grad * scale
    return probabilities


# Each position's log-probabilities and loss, -log_softmax(x)[target], in one launch.
CROSS_ENTROPY_ROWS = RowKernel(
    "genesis_cross_entropy_rows", "T x, row int64 target", "T log_probabilities, row T loss",
    PEAK_AND_LOG_TOTAL + """
  FOR_ROW(j) log_probabilities[AT(j)] = (x[AT(j)] - peak) - log_total;
  if (threadIdx.x == 0) loss[0] = log_total - (x[AT(target[0])] - peak);""",
    _cross_entropy_rows_reference)
# The gradient (softmax - onehot(index)) * grad * scale; an element's class is
# (i / inner) % classes.
CROSS_ENTROPY_GRAD = Elementwise(
    "genesis_cross_entropy_grad",
    "T log_probabilities, int64 index, T grad, T scale, int64 classes, int64 inner", "T dx",
    "dx = (exp(log_probabilities) - ((i / inner) % classes == index ? T(1) : T(0))) "
    "* (grad * scale)", _cross_entropy_grad_reference)
