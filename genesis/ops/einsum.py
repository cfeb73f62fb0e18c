"""Einstein summation over any number of operands; its gradient is another einsum.

The equation is first made fully explicit: `...` becomes fresh letters
(right-aligned, broadcasting like NumPy), and an implicit output becomes the
letters used exactly once, in alphabetical order. The gradient for operand k
is the einsum of the output gradient with the other operands, producing k's
subscripts. A letter repeated in k (a diagonal, as in 'ii->i') is produced
once and put back on the diagonal by an identity-matrix operand; a letter
summed inside k alone ('ij->i') is broadcast back. Gradients are einsums, so
they are differentiable again.
"""
from __future__ import annotations

import string
from collections import Counter

import numpy as np

from ..autocast_rules import LOWER
from ..autograd.function import Op
from ..dtypes import bfloat16
from ..tensor import Tensor, wrap_array
from . import samples
from ._operands import common_dtype_arrays, device_mismatch, rounded_product
from .registry import OpInfo, Sample

__all__ = ["einsum"]

_LETTERS = frozenset(string.ascii_letters)


class Einsum(Op):
    """Einstein summation with a fully explicit equation ('ij,jk->ik')."""

    autocast_policy = LOWER

    @staticmethod
    def forward(ctx, equation, *operands):
        ctx.equation = equation
        needs = ctx.needs_input_grad[1:]
        if any(needs):
            # an operand's gradient reads the other operands, never its own values: each is
            # kept only for another's gradient (as PyTorch's products keep them), so an
            # in-place write to one that no gradient reads leaves the backward free to run
            ctx.shapes = tuple(operand.shape for operand in operands)
            ctx.save_for_backward(*(operand if any(need for other, need in enumerate(needs)
                                                   if other != index) else None
                                    for index, operand in enumerate(operands)))
        arrays = common_dtype_arrays(operands)
        xp = operands[0]._device.xp
        dtype = arrays[0].dtype
        if dtype == bfloat16.numpy_dtype:  # NumPy's einsum takes no bfloat16: summed in float32
            arrays = [array.astype(np.float32) for array in arrays]
        # Planning a contraction path (BLAS calls, operand order) costs ~20us: skip it for
        # two tiny operands.
        plan = len(arrays) > 2 or any(array.size > 1024 for array in arrays)
        out = rounded_product(xp.einsum(equation, *arrays, optimize="greedy" if plan else False),
                              dtype)
        if len(arrays) == 1 and _same_storage(out, arrays[0]):
            out = out.copy()  # a permutation or diagonal comes back as a view; outputs own data
        return out

    @staticmethod
    def backward(ctx, grad):
        operands = ctx.saved_tensors
        inputs, output = ctx.equation.split("->")
        subscripts = inputs.split(",")
        grads = [None]
        for index, needed in enumerate(ctx.needs_input_grad[1:]):
            grads.append(_operand_grad(grad, output, operands, subscripts, index, ctx.shapes[index])
                         if needed else None)
        return tuple(grads)


def _operand_grad(grad: Tensor, output: str, operands, subscripts: list, index: int,
                  shape: tuple) -> Tensor:
    """The gradient for operand `index` (of `shape`): an einsum of `grad` with the other
    operands."""
    target = subscripts[index]
    extents = dict(zip(target, shape))
    unique, repeats = _renamed_repeats(target, set("".join(subscripts)))
    terms = [output] + [s for i, s in enumerate(subscripts) if i != index]
    tensors = [grad] + [t for i, t in enumerate(operands) if i != index]
    xp, dtype = grad._device.xp, grad._data.dtype
    for letter, copy in repeats:
        terms.append(letter + copy)
        tensors.append(wrap_array(xp.eye(extents[letter], dtype=dtype), grad._device))
    available = set("".join(terms))
    produced = "".join(letter for letter in unique if letter in available)
    result = einsum(",".join(terms) + "->" + produced, *tensors)
    if produced == unique:
        return result
    # Letters summed inside this operand alone: their gradient is broadcast along them.
    sizes = dict(zip(produced, result.shape))
    kept = tuple(sizes.get(letter, 1) for letter in unique)
    full = tuple(sizes[letter] if letter in sizes else extents[target[position]]
                 for position, letter in enumerate(unique))
    return result.reshape(kept).expand(full)


def _renamed_repeats(target: str, used: set) -> tuple:
    """`target` with each repeat of a letter renamed to a fresh letter, and the
    (letter, fresh copy) pairs that an identity matrix must tie together."""
    fresh = iter(sorted(_LETTERS - used))
    seen, letters, repeats = set(), [], []
    for letter in target:
        if letter in seen:
            copy = next(fresh)
            repeats.append((letter, copy))
            letters.append(copy)
        else:
            seen.add(letter)
            letters.append(letter)
    return "".join(letters), repeats


def _same_storage(out, array) -> bool:
    out_owner = out if out.base is None else out.base
    return out_owner is (array if array.base is None else array.base)


def explicit_equation(equation: str, shapes: list) -> str:
    """`equation` with `...` spelled out as letters and the output written out, checked
    against the operands' shapes.

    >>> explicit_equation("ij,jk", [(2, 3), (3, 4)])
    'ij,jk->ik'
    >>> explicit_equation("...ij->...ji", [(5, 2, 3)])
    'Aij->Aji'
    """
    equation = equation.replace(" ", "")
    inputs, arrow, output = equation.partition("->")
    terms = inputs.split(",")
    if len(terms) != len(shapes):
        raise RuntimeError(f"einsum: the equation {equation!r} names {len(terms)} operand(s), but "
                           f"{len(shapes)} were given")
    for character in set(equation.replace("...", "")) - _LETTERS - set(",->"):
        raise RuntimeError(f"einsum: invalid character {character!r} in {equation!r}; "
                           "subscripts are letters a-z, A-Z, with optional '...'")
    fresh = iter(sorted(_LETTERS - set(equation)))
    ellipsis_dims = [_ellipsis_dims(term, shape, position, equation)
                     for position, (term, shape) in enumerate(zip(terms, shapes))]
    ellipsis = "".join(next(fresh) for _ in range(max(ellipsis_dims, default=0)))
    spelled = [term.replace("...", ellipsis[len(ellipsis) - count:] if count else "")
               for term, count in zip(terms, ellipsis_dims)]
    if arrow:
        if output.count("...") > 1:
            raise RuntimeError(f"einsum: '...' appears more than once in the output of {equation!r}")
        output = output.replace("...", ellipsis)
        _check_output(output, "".join(spelled), equation)
    else:
        counts = Counter("".join(terms).replace("...", ""))
        output = ellipsis + "".join(sorted(letter for letter, count in counts.items() if count == 1))
    _check_extents(spelled, shapes)
    return ",".join(spelled) + "->" + output


def _ellipsis_dims(term: str, shape: tuple, position: int, equation: str) -> int:
    named = len(term.replace("...", ""))
    if "..." not in term:
        if "." in term or named != len(shape):
            raise RuntimeError(f"einsum: operand {position} has {len(shape)} dim(s) (shape "
                               f"{tuple(shape)}), but its subscripts {term!r} name {named}")
        return 0
    if term.count("...") > 1 or "." in term.replace("...", ""):
        raise RuntimeError(f"einsum: operand {position}'s subscripts {term!r} use '...' more than once")
    if named > len(shape):
        raise RuntimeError(f"einsum: operand {position} has {len(shape)} dim(s) (shape "
                           f"{tuple(shape)}), fewer than the {named} its subscripts {term!r} name")
    return len(shape) - named


def _check_output(output: str, inputs: str, equation: str) -> None:
    for letter, count in Counter(output).items():
        if count > 1:
            raise RuntimeError(f"einsum: output subscript {letter!r} appears more than once in "
                               f"{equation!r}")
        if letter not in inputs:
            raise RuntimeError(f"einsum: output subscript {letter!r} does not appear in any input "
                               f"of {equation!r}")


def _check_extents(terms: list, shapes: list) -> None:
    """Each letter has one size, except that size 1 broadcasts across operands."""
    sizes = {}
    for position, (term, shape) in enumerate(zip(terms, shapes)):
        own = {}
        for letter, extent in zip(term, shape):
            if own.setdefault(letter, extent) != extent:
                raise RuntimeError(f"einsum: subscript {letter!r} is repeated in operand {position} "
                                   f"(shape {tuple(shape)}) with different sizes, {own[letter]} and "
                                   f"{extent}")
        for letter, extent in own.items():
            seen, where = sizes.get(letter, (1, None))
            if extent != 1 and seen != 1 and extent != seen:
                raise RuntimeError(f"einsum: subscript {letter!r} has size {seen} in operand {where} "
                                   f"but {extent} in operand {position}, and neither is 1")
            if extent != 1:
                sizes[letter] = (extent, position)


def einsum(equation: str, *operands) -> Tensor:
    """Einstein summation: multiply operands along matching subscripts and sum the letters
    missing from the output. Supports any number of operands, '...' broadcasting,
    repeated subscripts (diagonals), the implicit output form ('ij,jk') and PyTorch's
    sublist form (operand, [subscripts], operand, [subscripts], ..., [output subscripts]),
    subscripts being ints in [0, 52) and Ellipsis.

    >>> import genesis
    >>> a, b = genesis.ones(2, 3), genesis.ones(3, 4)
    >>> genesis.einsum("ij,jk->ik", a, b).shape
    genesis.Size([2, 4])
    >>> genesis.einsum("ii->i", genesis.eye(3))
    tensor([1., 1., 1.])
    >>> genesis.einsum(a, [0, 1], b, [1, 2], [0, 2]).shape
    genesis.Size([2, 4])
    """
    if not isinstance(equation, str):
        equation, operands = _sublist_form((equation,) + operands)
    if len(operands) == 1 and isinstance(operands[0], list | tuple):
        operands = tuple(operands[0])
    if not operands:
        raise RuntimeError("einsum: expected at least one operand")
    for position, operand in enumerate(operands):
        if not isinstance(operand, Tensor):
            raise TypeError(f"einsum: operand {position} is a {type(operand).__name__}, not a Tensor")
        if operand._device != operands[0]._device:
            raise RuntimeError(device_mismatch("einsum", operands[0], operand))
    return Einsum.apply(explicit_equation(equation, [t.shape for t in operands]), *operands)


def _sublist_form(arguments: tuple) -> tuple:
    """(equation, operands) from (operand, sublist, operand, sublist, ..., [output sublist])."""
    operands, sublists = arguments[0::2], list(arguments[1::2])
    output = None
    if len(arguments) % 2:  # an odd count ends with the output sublist
        operands, output = operands[:-1], arguments[-1]
    if not sublists or len(sublists) != len(operands) or isinstance(output, Tensor) or \
            not all(isinstance(sublist, list | tuple) for sublist in sublists):
        raise RuntimeError("einsum: the sublist form takes operand, sublist pairs and then "
                           "optionally the output sublist, e.g. einsum(a, [0, 1], b, [1, 2], [0, 2])")

    def letters(sublist) -> str:
        text = ""
        for item in sublist:
            if item is Ellipsis:
                text += "..."
            elif isinstance(item, int) and not isinstance(item, bool) and 0 <= item < 52:
                text += string.ascii_letters[item]
            else:
                raise RuntimeError(f"einsum: subscripts in a sublist must be ints in [0, 52) or "
                                   f"Ellipsis, got {item!r}")
        return text

    equation = ",".join(letters(sublist) for sublist in sublists)
    if output is not None:
        equation += "->" + letters(output)
    return equation, operands


METHODS = {}


def _einsum_samples(rng):
    values = samples.values

    def sample(equation, *shapes, layout="contiguous", grad=None):
        return Sample((equation,) + tuple(values(rng, shape) for shape in shapes), grad=grad,
                      layout=layout, note=f"{equation} {shapes} {layout}")

    return [
        sample("ij,jk->ik", (2, 3), (3, 4)), sample("bij,bjk->bik", (2, 3, 4), (2, 4, 2)),
        sample("i,i->", (4,), (4,)), sample("i,j->ij", (3,), (2,)),
        sample("bhqd,bhkd->bhqk", (2, 2, 3, 4), (2, 2, 5, 4)), sample("ij->ji", (2, 3)),
        sample("ii->i", (3, 3)), sample("ii", (3, 3)), sample("ij,jk", (2, 3), (3, 2)),
        sample("ij->i", (3, 4)), sample("ij,jk,kl->il", (2, 3), (3, 4), (4, 2)),
        sample("...ij,...jk->...ik", (5, 2, 3), (3, 4)), sample("bij,bij->b", (1, 3, 2), (4, 3, 2)),
        sample("iij->j", (3, 3, 2)), sample("ij,jk->ik", (3, 4), (4, 2), layout="transposed"),
        sample("ij,jk->ik", (2, 3), (3, 4), grad=(False, True)),
        sample("ij,ij->", (2, 3), (2, 3), layout="strided"), sample(",ij->ij", (), (2, 3)),
    ]


OPS = [
    OpInfo("einsum", einsum, _einsum_samples,
           torch=lambda torch, equation, *operands: torch.einsum(equation, *operands)),
]
