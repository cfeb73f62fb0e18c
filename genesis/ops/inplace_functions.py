"""PyTorch's top-level spellings of in-place methods: `genesis.exp_(x)` is `x.exp_()`,
`genesis.clamp_(x, 0, 1)` is `x.clamp_(0, 1)`, and so on for each name in `NAMES`.

>>> import genesis
>>> x = genesis.tensor([0.0, 1.0])
>>> genesis.exp_(x) is x, x
(True, tensor([1.0000, 2.7183]))
"""
from __future__ import annotations

from ..tensor import Tensor

NAMES = ("abs_", "acos_", "acosh_", "addmv_", "arccos_", "arccosh_", "arcsin_", "arcsinh_",
         "arctan_", "arctanh_", "asin_", "asinh_", "atan_", "atanh_", "ceil_", "clamp_",
         "clamp_max_", "clamp_min_", "clip_", "cos_", "cosh_", "deg2rad_", "detach_", "erf_",
         "erfc_", "exp2_", "exp_", "expm1_", "fill_", "fix_", "floor_", "frac_", "gcd_", "i0_",
         "index_put_", "lcm_", "ldexp_", "log10_", "log1p_", "log2_", "log_", "logit_",
         "nan_to_num_", "neg_", "negative_", "rad2deg_", "reciprocal_", "round_", "rsqrt_",
         "sigmoid_", "sin_", "sinc_", "sinh_", "sqrt_", "square_", "tan_", "tanh_", "trunc_",
         "xlogy_", "zero_")


def _top_level(name: str):
    def function(input: Tensor, *args, **kwargs) -> Tensor:
        if not isinstance(input, Tensor):
            raise TypeError(f"{name}(): argument 'input' must be a Tensor, not "
                            f"{type(input).__name__}")
        return getattr(input, name)(*args, **kwargs)

    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"`input.{name}(...)`: changes `input` in place and returns it."
    return function


_functions = {name: _top_level(name) for name in NAMES}
globals().update(_functions)
__all__ = list(NAMES)
METHODS: dict = {}
OPS: list = []
