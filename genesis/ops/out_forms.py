"""The `out=` forms of public functions that are written without one: the functions named
in `OUT_FORMS` become `genesis.<name>` wrapped by `with_out`, which writes the result into the
given tensor (or tuple of tensors) with the rules of `out_variants`. Tensor methods, which
PyTorch gives no `out=`, stay the plain functions.

>>> import genesis
>>> out = genesis.empty(2, 2)
>>> genesis.matmul(genesis.eye(2), genesis.ones(2, 2), out=out) is out, out
(True, tensor([[1., 1.],
        [1., 1.]]))
>>> values, indices = genesis.empty(0), genesis.empty(0, dtype=genesis.int64)
>>> genesis.max(genesis.tensor([[1., 5.], [7., 2.]]), 1, out=(values, indices))
max(values=tensor([5., 7.]), indices=tensor([1, 0]))
"""
from __future__ import annotations

import functools

from .out_variants import write_out, write_outs

__all__ = ["OUT_FORMS", "with_out"]

# name -> the positions of the outputs that are indices (int64), for the forms that return
# (values, indices); () for the others
OUT_FORMS = {
    "matmul": (), "mm": (), "bmm": (), "mv": (), "dot": (), "outer": (), "addmm": (),
    "baddbmm": (), "addmv": (), "cat": (), "stack": (), "sum": (), "mean": (), "prod": (),
    "logsumexp": (), "std": (), "var": (), "cumsum": (), "cumprod": (), "clamp": (),
    "pow": (), "where": (), "neg": (), "floor": (), "ceil": (), "round": (), "trunc": (),
    "maximum": (), "minimum": (), "eq": (), "ne": (), "lt": (), "le": (), "gt": (), "ge": (),
    "remainder": (), "fmod": (), "lerp": (), "index_select": (), "gather": (), "tril": (),
    "triu": (), "softmax": (), "log_softmax": (), "argmax": (0,), "argmin": (0,),
    "max": (1,), "min": (1,), "sort": (1,), "topk": (1,), "kthvalue": (1,), "median": (1,),
    "mode": (1,), "cummax": (1,), "cummin": (1,),
}


def with_out(name: str, function):
    """`function` with an `out=` keyword: absent or None, the plain call; a tensor (or a
    tuple of them, for the forms that return values and indices), the result written there."""
    index_outputs = OUT_FORMS[name]

    @functools.wraps(function)
    def function_with_out(*args, out=None, **kwargs):
        if out is None:
            return function(*args, **kwargs)
        compute = functools.partial(_call_with, function, kwargs)
        if isinstance(out, (tuple, list)):
            return write_outs(name, compute, out, args, index_outputs)
        if index_outputs == (0,) and out.dtype.name != "int64":  # argmax, argmin
            raise RuntimeError(f"{name}(): expected out tensor to have dtype int64, but got "
                               f"{out.dtype.name} instead")
        return write_out(name, compute, out, args)

    return function_with_out


def _call_with(function, kwargs: dict, *args):
    return function(*args, **kwargs)
