"""PyTorch-style text for tensors: `tensor([2., 4., 6.], requires_grad=True)`."""
from __future__ import annotations

import math
import types

import numpy as np

from .dtypes import get_default_dtype

__all__ = ["set_printoptions", "get_printoptions", "tensor_repr", "format_array"]

_IMPLIED_DTYPES = ("int64", "bool")  # (and the default float dtype) shown by the values
_PROFILES = {"default": dict(precision=4, threshold=1000, edgeitems=3, linewidth=80),
             "short": dict(precision=2, threshold=1000, edgeitems=2, linewidth=80),
             "full": dict(precision=4, threshold=math.inf, edgeitems=3, linewidth=80)}
# How tensors print (set_printoptions); sci_mode None: scientific notation when the values'
# range calls for it, True/False: always/never.
_options = types.SimpleNamespace(**_PROFILES["default"], sci_mode=None)
# Parts a higher layer adds to a tensor's text (forward_ad's `tangent=...`): functions of the
# tensor returning "name=value", or None where they have nothing to add.
suffix_providers: list = []


def set_printoptions(precision: int | None = None, threshold: float | None = None,
                     edgeitems: int | None = None, linewidth: int | None = None,
                     profile: str | None = None, sci_mode: bool | None = None) -> None:
    """How tensors print, as PyTorch's: digits after the point, the element count above
    which a tensor is summarised (its `edgeitems` first and last per dim shown), the line
    width, a `profile` ("default", "short", "full") to start from, and `sci_mode`.

    >>> import genesis
    >>> set_printoptions(precision=2); genesis.tensor([1.23456])
    tensor([1.23])
    >>> set_printoptions(profile="default"); genesis.tensor([1.23456])
    tensor([1.2346])
    """
    if profile is not None:
        if profile not in _PROFILES:
            raise ValueError(f"set_printoptions: profile must be one of {sorted(_PROFILES)}, got {profile!r}")
        for name, value in _PROFILES[profile].items():
            setattr(_options, name, value)
    for name, value in (("precision", precision), ("threshold", threshold),
                        ("edgeitems", edgeitems), ("linewidth", linewidth)):
        if value is not None:
            setattr(_options, name, value)
    _options.sci_mode = sci_mode


def get_printoptions() -> dict:
    """The current print options, as set_printoptions takes them."""
    return dict(vars(_options))


def _invalid_view(tensor) -> bool:
    """A view whose grad_fn can't be rebuilt (made with grad disabled, one of several views
    of one op, made by a custom Function) of a base that requires grad, since changed in
    place: it has no valid grad_fn, and PyTorch prints it `<Invalid>`."""
    view = tensor._view
    return view is not None and view[2] is not None and view[0]._requires_grad and \
        view[3] != tensor._version_counter[0]


def _shows_dtype(dtype, size: int) -> bool:
    """PyTorch's rule: the dtype is said unless it is the default float dtype, or int64 or
    bool for a tensor with values (an empty one has none that would tell)."""
    if dtype is get_default_dtype():
        return False
    return size == 0 or dtype.name not in _IMPLIED_DTYPES


def tensor_repr(tensor) -> str:
    array = tensor._host_array()
    prefix = "tensor("
    suffixes = []
    if array.size == 0 and array.shape != (0,):
        suffixes.append(f"size={tuple(array.shape)}")
    if _shows_dtype(tensor.dtype, array.size):
        suffixes.append(f"dtype={tensor.dtype!r}")
    if tensor._device.type != "cpu":
        suffixes.append(f"device='{tensor._device}'")
    if _invalid_view(tensor):
        suffixes.append("grad_fn=<Invalid>")
    elif tensor.grad_fn is not None:
        suffixes.append(f"grad_fn=<{tensor.grad_fn.name()}>")
    elif tensor._requires_grad:
        suffixes.append("requires_grad=True")
    for provider in suffix_providers:
        text = provider(tensor)
        if text is not None:
            suffixes.append(text)
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
    summarise = array.size > _options.threshold
    sample = _edge_sample(array) if summarise else array
    element, integral = _element_formatter(sample)
    values = sample.reshape(-1)
    if integral and values.dtype.kind == "f":  # PyTorch sizes integral floats by their finite
        values = values[np.isfinite(values) & (values != 0)]  # values other than (-)0 only
    width = max((len(element(value)) for value in values), default=1)
    if array.ndim == 0:
        return element(array.item())
    # PyTorch puts floor((linewidth - start) / (width + 2)) values on a line, `start` the
    # column of the first value; NumPy wraps at a width: the one that fits exactly that many
    start = indent + array.ndim - 1
    per_line = max(1, (_options.linewidth - start) // (width + 2))
    text = np.array2string(
        array,
        formatter={"all": lambda value: element(value).rjust(width)},
        separator=", ",
        prefix=" " * indent,
        max_line_width=indent + 2 * array.ndim - 2 + per_line * (width + 2),  # (measured)
        threshold=_options.threshold if _options.threshold != math.inf else np.iinfo(np.int64).max,
        edgeitems=_options.edgeitems,
    )
    return _pytorch_summary_marks(text)


def _pytorch_summary_marks(text: str) -> str:
    """NumPy's "..." where a row is summarised written as PyTorch's " ..." (a row's own
    "...," between rows stays as it is)."""
    text = text.replace(", ...,", ",  ...,")
    lines = text.split("\n")
    for index in range(1, len(lines)):
        previous = lines[index - 1].rstrip()
        if lines[index].lstrip().startswith("...") and previous.endswith(",") and \
                not previous.endswith("],"):
            lines[index] = " " + lines[index]
    return "\n".join(lines)


def _edge_sample(array: np.ndarray) -> np.ndarray:
    index = []
    edge = _options.edgeitems
    for size in array.shape:
        if size > 2 * edge:
            index.append(np.r_[0:edge, size - edge:size])
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
    if _options.sci_mode is not None:
        scientific = _options.sci_mode
    precision = _options.precision
    if scientific:
        pattern = f"{{:.{precision}e}}"
    elif integral:
        pattern = "{:.0f}."
    else:
        pattern = f"{{:.{precision}f}}"

    def element(value) -> str:
        value = float(value)
        if not np.isfinite(value):
            return "nan" if np.isnan(value) else ("inf" if value > 0 else "-inf")
        return pattern.format(value)

    return element, integral and not scientific
