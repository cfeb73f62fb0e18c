"""The op library: one module per family, each with its Functions, public functions
(`__all__`) and the Tensor methods it provides (`METHODS`), bound here in one place."""
from __future__ import annotations

from ..tensor import Tensor
from . import (activation, binary_math, broadcast, comparison, convert, cumulative, division,
               einsum, elementwise, extrema, fill, gather, index, join, linalg, logical, masked,
               matrix, norm, reduce, reorder, rounding, selection, shape, smooth_activation,
               softmax, ternary, unary)
from . import adaptive_pooling, conv_transpose, convolution, linear_systems, pad, pooling, window

FAMILIES = (elementwise, division, ternary, unary, rounding, binary_math, selection, activation,
            smooth_activation, softmax, comparison, logical, reduce, shape, broadcast, index, linalg,
            convert, fill, extrema, cumulative, norm, join, reorder, matrix, gather, masked, einsum,
            window, convolution, conv_transpose, pooling, adaptive_pooling, pad, linear_systems)


def _bind_methods() -> None:
    for family in FAMILIES:
        for name, method in family.METHODS.items():
            setattr(Tensor, name, method)


def public_functions() -> dict:
    """Every function the families export, by name (becomes `genesis.<name>`)."""
    functions = {}
    for family in FAMILIES:
        for name in family.__all__:
            functions[name] = getattr(family, name)
    return functions


_bind_methods()
