"""The catalogue of op families: each family module's Functions, public functions
(`__all__`), Tensor methods (`METHODS`) and registry entries (`OPS`).

Importing this module binds every family's methods onto Tensor, with the autograd core's
own (`backward`, `register_hook`), and registers the families' ops: the one place either
happens.

>>> from genesis.ops.catalog import FAMILIES
>>> from genesis.ops import elementwise
>>> elementwise in FAMILIES
True
"""
from __future__ import annotations

from ..autograd import tensor_methods
from ..tensor import Tensor
from . import (activation, arrangement, binary_math, broadcast, clamp, comparison, composites,
               convert, copy_variants, cumulative, division, einsum, elementwise, extrema, fill,
               gather, index, inplace_functions, inplace_shapes, inplace_variants, join, linalg,
               logical, masked, matrix, matrix_composites, norm, pairwise_extrema, random_fills,
               reduce, reorder, rounding, scans, shape, smooth_activation, softmax, sorting,
               statistics, tensor_attributes, tensor_info, ternary, unary, views, where)
from . import adaptive_pooling, conv_transpose, convolution, linear_systems, pad, pooling, window
from . import number_functions, special_functions
from . import decompositions, householder, linalg_composites, lobpcg, matrix_functions, triangular_systems
from . import array_utilities, foreach, scatter_family, shared_storage, signal_windows, storage, view_func
from .out_forms import OUT_FORMS, with_out
from .registry import register_family

__all__ = ["FAMILIES", "public_functions"]

FAMILIES = (elementwise, division, ternary, unary, rounding, binary_math, where, pairwise_extrema,
            clamp, activation, smooth_activation, softmax, comparison, logical, reduce, shape,
            broadcast, index, linalg, convert, fill, extrema, cumulative, norm, join, reorder,
            matrix, gather, masked, views, einsum, window, convolution, conv_transpose, pooling,
            adaptive_pooling, pad, linear_systems, sorting, random_fills, tensor_info, composites,
            statistics, arrangement, matrix_composites, inplace_variants, scans,
            inplace_shapes, tensor_attributes, inplace_functions, copy_variants, scatter_family,
            array_utilities, signal_windows, triangular_systems, decompositions, matrix_functions,
            linalg_composites, householder, lobpcg, special_functions, number_functions, storage, foreach,
            view_func, shared_storage)


def public_functions() -> dict:
    """Every function the families export, by name (becomes `genesis.<name>`); those PyTorch
    gives an `out=` and their family writes without one get it here (see `out_forms`)."""
    functions = {}
    for family in FAMILIES:
        for name in family.__all__:
            functions[name] = getattr(family, name)
    for name in OUT_FORMS:
        functions[name] = with_out(name, functions[name])
    return functions


def _bind_methods() -> None:
    for table in [tensor_methods.METHODS] + [family.METHODS for family in FAMILIES]:
        for name, method in table.items():
            setattr(Tensor, name, method)


def _register_families() -> None:
    for family in FAMILIES:
        register_family(family.__name__.rsplit(".", 1)[-1], family.OPS)


_bind_methods()
_register_families()
