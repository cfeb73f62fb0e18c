"""Fused GPU kernels for optimizer updates: one CUDA launch per parameter instead of about
ten (on a GPU each elementwise NumPy-style call is a separate launch). NumPy keeps the
array-by-array code in each optimizer, which writes in place and is fast there."""
from __future__ import annotations

_kernels: dict = {}

_ADAM = """
T g = grad + weight_decay * param;
param = param * decay_scale;
exp_avg = exp_avg + one_minus_beta1 * (g - exp_avg);
exp_avg_sq = exp_avg_sq * beta2 + one_minus_beta2 * g * g;
param = param - step_size * exp_avg / (sqrt(exp_avg_sq) / bias_correction2_sqrt + eps);
"""


def adam_kernel(xp):
    """The fused Adam step for CuPy arrays (None for NumPy). Arguments: grad, 1 - beta1,
    beta2, 1 - beta2, step size, sqrt of bias correction 2, eps, L2 weight decay (0 when
    decoupled), decoupled decay factor (1 when not); then param, exp_avg, exp_avg_sq,
    updated in place. The same formulas, in the same order, as the NumPy path."""
    if xp.__name__ != "cupy":
        return None
    kernel = _kernels.get("adam")
    if kernel is None:
        kernel = _kernels["adam"] = xp.ElementwiseKernel(
            "T grad, T one_minus_beta1, T beta2, T one_minus_beta2, T step_size, "
            "T bias_correction2_sqrt, T eps, T weight_decay, T decay_scale",
            "T param, T exp_avg, T exp_avg_sq", _ADAM, "genesis_adam_step")
    return kernel
