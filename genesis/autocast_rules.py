"""What autocast does to an op, per device type: PyTorch keeps one list of ops per device
(aten/src/ATen/autocast_mode.cpp), and the CPU's lists are not CUDA's. On CUDA, softmax,
layer_norm, sum, cumsum, norms, logsumexp, upsampling and pointwise math (exp, log, pow, tan,
...) run in float32; on the CPU they run in the input's dtype,
while the CPU lists its own float32 ops (losses, linalg, 3-D pooling, some pads).

An op states its rule as `autocast_policy` (a Function) or with
`genesis.autograd.autocast_casts.autocast_inputs` (a composite written in other ops); each
side of a rule is "lower" (float32 inputs run in the autocast dtype), "float32"
(float16/bfloat16 inputs run in float32), "promote" (floating inputs of mixed dtypes run
in the widest) or None (inputs untouched).

>>> FLOAT32_ON_CUDA.on("cpu") is None, FLOAT32_ON_CUDA.on("cuda")
(True, 'float32')
>>> rule_of("lower")
AutocastRule(cuda='lower', cpu='lower')
"""
from __future__ import annotations

from typing import NamedTuple

__all__ = ["AutocastRule", "LOWER", "FLOAT32", "FLOAT32_ON_CUDA", "FLOAT32_ON_CPU",
           "LOWER_ON_CUDA", "PROMOTE_ON_CUDA", "rule_of"]

POLICIES = ("lower", "float32", "promote", None)


class AutocastRule(NamedTuple):
    """An op's policy under autocast on each device type."""

    cuda: str | None
    cpu: str | None

    def on(self, device_type: str | None) -> str | None:
        """The policy under an autocast of `device_type` (None, genesis's `autocast(dtype)`
        form and the global switch, follow CUDA's lists)."""
        return self.cpu if device_type == "cpu" else self.cuda


LOWER = AutocastRule("lower", "lower")                # both lower-precision lists: matmul, conv
FLOAT32 = AutocastRule("float32", "float32")          # both float32 lists: most losses, prod
FLOAT32_ON_CUDA = AutocastRule("float32", None)       # softmax, sum, norms, exp, log, pow
FLOAT32_ON_CPU = AutocastRule(None, "float32")        # linalg solvers, 3-D pooling, some pads
LOWER_ON_CUDA = AutocastRule("lower", None)           # mv
PROMOTE_ON_CUDA = AutocastRule("promote", None)       # dot, bilinear


def rule_of(policy) -> AutocastRule | None:
    """`policy` as an AutocastRule: a rule as it is, one policy ("lower", "float32") for both
    device types, None for none."""
    if policy is None or isinstance(policy, AutocastRule):
        return policy
    if policy not in POLICIES:
        raise ValueError(f"autocast_policy must be \"lower\", \"float32\", \"promote\", None "
                         f"or an AutocastRule, got {policy!r}")
    return AutocastRule(policy, policy)
