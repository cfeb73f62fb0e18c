"""Fused GPU kernels for optimizer updates: one CUDA launch for a whole parameter group
(up to 32 parameters a launch) instead of about ten per parameter (on a GPU each
elementwise NumPy-style call is a separate launch). The CPU keeps the array-by-array code
in each optimizer, which writes in place and is fast there."""
from __future__ import annotations

from ..ops._kernels import Elementwise
from ..ops._multi_tensor import MultiTensorKernel

__all__ = ["ADAM_STEP", "ADAM_STEPS"]


def _adam_reference(device, grad, one_minus_beta1, beta2, one_minus_beta2, step_size,
                    bias_correction2_sqrt, eps, weight_decay, decay_scale,
                    param, exp_avg, exp_avg_sq) -> None:
    g = grad + weight_decay * param
    param *= decay_scale
    exp_avg += one_minus_beta1 * (g - exp_avg)
    exp_avg_sq *= beta2
    exp_avg_sq += one_minus_beta2 * g * g
    param -= step_size * exp_avg / (device.xp.sqrt(exp_avg_sq) / bias_correction2_sqrt + eps)


# Arguments: grad, 1 - beta1, beta2, 1 - beta2, step size, sqrt of bias correction 2, eps,
# L2 weight decay (0 when decoupled), decoupled decay factor (1 when not); then param,
# exp_avg, exp_avg_sq, updated in place. The same formulas as Adam's array code.
ADAM_STEP = Elementwise(
    "genesis_adam_step",
    "T grad, T one_minus_beta1, T beta2, T one_minus_beta2, T step_size, "
    "T bias_correction2_sqrt, T eps, T weight_decay, T decay_scale",
    "T param, T exp_avg, T exp_avg_sq", """
    T g = grad + weight_decay * param;
    param = param * decay_scale;
    exp_avg = exp_avg + one_minus_beta1 * (g - exp_avg);
    exp_avg_sq = exp_avg_sq * beta2 + one_minus_beta2 * g * g;
    param = param - step_size * exp_avg / (sqrt(exp_avg_sq) / bias_correction2_sqrt + eps);
    """, _adam_reference)
# The same step over many parameters in one launch: per parameter (grad, param, exp_avg,
# exp_avg_sq), then the numbers above.
ADAM_STEPS = MultiTensorKernel(ADAM_STEP, ("grad", "param", "exp_avg", "exp_avg_sq"))
