"""`assert_close` (PyTorch's `torch.testing.assert_close`): two tensors, numbers or nested
containers of them are equal within tolerances chosen by dtype, and the error names the
mismatch."""
from __future__ import annotations

import numpy as np

from .tensor import Tensor

__all__ = ["assert_close"]

# (rtol, atol) by dtype when neither is given, as in PyTorch
_TOLERANCES = {"float16": (1e-3, 1e-5), "bfloat16": (1.6e-2, 1e-5), "float32": (1.3e-6, 1e-5),
               "float64": (1e-7, 1e-7)}


def assert_close(actual, expected, *, rtol: float | None = None, atol: float | None = None,
                 equal_nan: bool = False, check_device: bool = True, check_dtype: bool = True,
                 msg: str | None = None) -> None:
    """Raise AssertionError unless `actual` and `expected` are close:
    |actual - expected| <= atol + rtol * |expected| elementwise, with the same shape, dtype
    and device (unless told not to check them); integers and bools must be equal.

    >>> import genesis
    >>> assert_close(genesis.tensor([1.0, 2.0]), genesis.tensor([1.0, 2.0 + 1e-7]))
    >>> assert_close(genesis.tensor([1.0]), genesis.tensor([1.1]))
    Traceback (most recent call last):
    ...
    AssertionError: Tensor-likes are not close!
    <BLANKLINE>
    Mismatched elements: 1 / 1 (100.0%)
    Greatest absolute difference: 0.10000002384185791 at index (0,) (up to 1e-05 allowed)
    Greatest relative difference: 0.0909091... at index (0,) (up to 1.3e-06 allowed)
    """
    if (rtol is None) != (atol is None):
        raise ValueError("Both 'rtol' and 'atol' must be either specified or omitted, but got "
                         f"rtol={rtol} and atol={atol}")
    _compare(actual, expected, rtol, atol, equal_nan, check_device, check_dtype, msg, "")


def _compare(actual, expected, rtol, atol, equal_nan, check_device, check_dtype, msg, where: str):
    if isinstance(actual, dict) and isinstance(expected, dict):
        if set(actual) != set(expected):
            raise AssertionError(f"The keys of the mappings do not match{where}: "
                                 f"{sorted(map(str, actual))} != {sorted(map(str, expected))}")
        for key in actual:
            _compare(actual[key], expected[key], rtol, atol, equal_nan, check_device, check_dtype,
                     msg, f"{where}[{key!r}]")
        return
    if isinstance(actual, list | tuple) and isinstance(expected, list | tuple):
        if len(actual) != len(expected):
            raise AssertionError(f"The length of the sequences mismatch{where}: {len(actual)} != "
                                 f"{len(expected)}")
        for index, (a, e) in enumerate(zip(actual, expected)):
            _compare(a, e, rtol, atol, equal_nan, check_device, check_dtype, msg, f"{where}[{index}]")
        return
    _compare_values(actual, expected, rtol, atol, equal_nan, check_device, check_dtype, msg, where)


def _compare_values(actual, expected, rtol, atol, equal_nan, check_device, check_dtype, msg, where):
    both_tensors = isinstance(actual, Tensor) and isinstance(expected, Tensor)
    if isinstance(actual, Tensor) != isinstance(expected, Tensor):
        raise AssertionError(f"Comparing a {type(actual).__name__} with a {type(expected).__name__}"
                             f"{where}: pass two tensors, or two numbers")
    if both_tensors:
        if actual.shape != expected.shape:
            raise AssertionError(f"The values for attribute 'shape' do not match{where}: "
                                 f"{tuple(actual.shape)} != {tuple(expected.shape)}.")
        if check_dtype and actual.dtype is not expected.dtype:
            raise AssertionError(f"The values for attribute 'dtype' do not match{where}: "
                                 f"{actual.dtype} != {expected.dtype}.")
        if check_device and actual.device != expected.device:
            raise AssertionError(f"The values for attribute 'device' do not match{where}: "
                                 f"{actual.device} != {expected.device}.")
        dtype = actual.dtype.name
        a, e = actual.detach().cpu().numpy(), expected.detach().cpu().numpy()
    else:
        a, e = np.asarray(actual), np.asarray(expected)
        dtype = "float64" if a.dtype.kind == "f" or e.dtype.kind == "f" else "int"
    exact = dtype not in _TOLERANCES
    default_rtol, default_atol = (0.0, 0.0) if exact else _TOLERANCES[dtype]
    rtol = default_rtol if rtol is None else rtol
    atol = default_atol if atol is None else atol
    a64, e64 = a.astype(np.float64), e.astype(np.float64)
    close = np.isclose(a64, e64, rtol=rtol, atol=atol, equal_nan=equal_nan)
    if close.all():
        return
    kind = "Tensor-likes" if both_tensors else "Scalars"
    if msg is not None:
        raise AssertionError(msg)
    difference = np.abs(a64 - e64)
    difference = np.where(np.isnan(difference), np.inf, difference)
    relative = difference / np.maximum(np.abs(e64), np.finfo(np.float64).tiny)
    worst, worst_relative = np.unravel_index(np.argmax(difference), a.shape), \
        np.unravel_index(np.argmax(relative), a.shape)
    mismatched = int((~close).sum())
    raise AssertionError(
        f"{kind} are not close{where}!\n\n"
        f"Mismatched elements: {mismatched} / {close.size} ({100 * mismatched / close.size:.1f}%)\n"
        f"Greatest absolute difference: {difference[worst]} at index {tuple(int(i) for i in worst)} "
        f"(up to {atol} allowed)\n"
        f"Greatest relative difference: {relative[worst_relative]} at index "
        f"{tuple(int(i) for i in worst_relative)} (up to {rtol} allowed)")
