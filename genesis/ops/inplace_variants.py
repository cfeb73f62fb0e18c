"""In-place forms (`x.tril_()`, `x.cumsum_(0)`, `x.eq_(y)`, ...) of ops that have no in-place
kernel: the op's result copied back into the tensor with `copy_`. That is what PyTorch's
in-place forms mean for autograd: the tensor's new value is the op of its old one (the
gradient flows through the op to the old value), the version counter moves on, and a leaf
that requires grad is refused outside no_grad. Comparisons write 1/0 (True/False) in the
tensor's own dtype."""
from __future__ import annotations

from ..tensor import Tensor
from . import (binary_math, comparison, composites, cumulative, logical, matrix, matrix_composites,
               tensor_info)
from .fill import copy_

__all__: list = []


def _in_place(function, name: str):
    def method(self: Tensor, *args, **kwargs) -> Tensor:
        return copy_(self, function(self, *args, **kwargs))

    method.__name__ = name
    method.__doc__ = f"In place: self.copy_({function.__name__}(self, ...))."
    return method


_SOURCES = {
    "tril_": matrix.tril, "triu_": matrix.triu, "cumsum_": cumulative.cumsum,
    "cumprod_": cumulative.cumprod, "hypot_": binary_math.hypot, "atan2_": binary_math.atan2,
    "arctan2_": binary_math.atan2, "logit_": composites.logit, "xlogy_": composites.xlogy,
    "nan_to_num_": composites.nan_to_num, "eq_": comparison.eq, "ne_": comparison.ne,
    "lt_": comparison.lt, "le_": comparison.le, "gt_": comparison.gt, "ge_": comparison.ge,
    "logical_and_": logical.logical_and, "logical_or_": logical.logical_or,
    "logical_xor_": logical.logical_xor, "logical_not_": logical.logical_not,
    "greater_": comparison.gt, "greater_equal_": comparison.ge, "less_": comparison.lt,
    "less_equal_": comparison.le, "not_equal_": comparison.ne,
    "addmm_": matrix_composites.addmm, "addbmm_": matrix_composites.addbmm,
    "addmv_": matrix_composites.addmv, "addr_": matrix_composites.addr,
    "baddbmm_": matrix_composites.baddbmm, "deg2rad_": tensor_info.deg2rad,
    "rad2deg_": tensor_info.rad2deg,
}

METHODS = {name: _in_place(function, name) for name, function in _SOURCES.items()}
OPS: list = []
