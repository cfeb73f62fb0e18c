"""PyTorch-style text for tensors: `tensor([2., 4., 6.], requires_grad=True)`."""
from __future__ import annotations

import numpy as np

_PRECISION = 4
_THRESHOLD = 1000
_EDGE_ITEMS = 3
_LINE_WIDTH = 80
_DEFAULT_DTYPES = ("float32", "int64", "bool")


def tensor_repr(tensor) -> str:
    array = tensor._host_array()
    prefix = "tensor("
    suffixes = []
    if array.size == 0 and array.shape != (0,):
        suffixes.append(f"size={tuple(array.shape)}")
    if tensor.dtype.name not in _DEFAULT_DTYPES:
        suffixes.append(f"dtype={tensor.dtype!r}")
    if tensor._device.type != "cpu":
        suffixes.append(f"device='{tensor._device}'")
    if tensor.grad_fn is not None:
        suffixes.append(f"grad_fn=<{type(tensor.grad_fn).__name__}>")
    elif tensor._requires_grad:
        suffixes.append("requires_grad=True")
    body = format_array(array, indent=len(prefix))
    if suffixes:
        separator = ",\n" + " " * len(prefix) if "\n" in body and len(body.splitlines()[-1]) > 50 else ", "
        body += separator + ", ".join(suffixes)
    return prefix + body + ")"


def format_array(array: np.ndarray, indent: int = 0) -> str:
    """The bracketed values of `array`, one common width, summarised when large."""
    if array.size == 0:
        return "[]"
    if array.dtype == np.float16 or array.dtype.kind == "V" or array.dtype.name == "bfloat16":
        array = array.astype(np.float32)
    summarise = array.size > _THRESHOLD
    sample = _edge_sample(array) if summarise else array
    element, integral = _element_formatter(sample)
    values = sample.reshape(-1)
    if integral and values.dtype.kind == "f":  # PyTorch sizes integral floats by finite values only
        values = values[np.isfinite(values)]
    width = max((len(element(value)) for value in values), default=1)
    if array.ndim == 0:
        return element(array.item())
    return np.array2string(
        array,
        formatter={"all": lambda value: element(value).rjust(width)},
        separator=", ",
        prefix=" " * indent,
        max_line_width=_LINE_WIDTH,
        threshold=_THRESHOLD,
        edgeitems=_EDGE_ITEMS,
    )


def _edge_sample(array: np.ndarray) -> np.ndarray:
    index = []
    for size in array.shape:
        if size > 2 * _EDGE_ITEMS:
            index.append(np.r_[0:_EDGE_ITEMS, size - _EDGE_ITEMS:size])
        else:
            index.append(np.arange(size))
    return array[np.ix_(*index)]


def _element_formatter(sample: np.ndarray):
    kind = sample.dtype.kind
    if kind == "b":
        return (lambda value: "True" if value else "False"), False
    if kind in "iu":
        return (lambda value: str(int(value))), False
    finite = sample[np.isfinite(sample)]
    magnitudes = np.abs(finite[finite != 0]).astype(np.float64)
    integral = finite.size == 0 or bool(np.all(np.ceil(finite) == finite))
    scientific = False
    if magnitudes.size:
        largest, smallest = magnitudes.max(), magnitudes.min()
        scientific = largest / smallest > 1000.0 or largest > 1e8 or (not integral and smallest < 1e-4)
    if scientific:
        pattern = f"{{:.{_PRECISION}e}}"
    elif integral:
        pattern = "{:.0f}."
    else:
        pattern = f"{{:.{_PRECISION}f}}"

    def element(value) -> str:
        value = float(value)
        if not np.isfinite(value):
            return "nan" if np.isnan(value) else ("inf" if value > 0 else "-inf")
        return pattern.format(value)

    return element, integral and not scientific
