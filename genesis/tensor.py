"""`Tensor`: an array of its device's namespace plus the fields autograd needs.

Operators and math methods (`+`, `exp`, `sum`, ...) and the methods that run the
engine (`backward`, `register_hook`) are bound onto the class from the method tables
that genesis.ops.catalog lists; this file holds the data model: storage, dtype/device,
conversions, and the autograd fields.

>>> import genesis
>>> x = genesis.tensor([1., 2., 3.], requires_grad=True)
>>> y = (x ** 2).sum()
>>> y.backward()
>>> x.grad
tensor([2., 4., 6.])
"""
from __future__ import annotations

import warnings

import numpy as np

from typing import Protocol

from . import dtypes, layouts
from ._tensor_str import tensor_repr
from .device import Device, cpu, device as as_device, transfer
from .dtypes import DType, from_numpy_dtype, get_dtype
from .grad_state import grad_state
from .inference_tensors import (InferenceVersionCounter, inference_state, inference_users,
                                new_version_counter)
from .listeners import Listeners
from .sizes import Size, describe_value, known_size, normalize_dim, size_of

__all__ = ["Tensor", "wrap_array", "cut_listeners", "CutListener"]

_new_object = object.__new__




class CutListener(Protocol):
    """Told each time a tensor is taken out of the graph: `how` is ".detach()", ".detach_()"
    (`alias` is the tensor itself), ".data", or ".item()"/".tolist()" (`alias` is the Python
    number or list made). `genesis trace` listens while it records,
    to say where a parameter was cut off from the loss; while nobody listens it costs one
    test."""

    def __call__(self, tensor: "Tensor", alias: "Tensor", how: str) -> None:
        ...


cut_listeners: Listeners[CutListener] = Listeners()


class _Size(int):
    """`t.size` is the element count (as the spec says); `t.size()` / `t.size(d)` give the shape."""

    def __new__(cls, shape: tuple):
        count = 1
        for extent in shape:
            count *= extent
        self = int.__new__(cls, count)
        self._shape = shape
        return self

    def __call__(self, dim: int | None = None):
        if dim is None:
            return size_of(self._shape)
        shape = self._shape
        if dim.__class__ is int and -len(shape) <= dim < len(shape):
            return shape[dim]
        index = normalize_dim(dim, len(shape), "size")
        if not shape:
            raise IndexError(f"size: dim {dim!r} was given, but a 0-d tensor has no dimensions")
        return shape[index]


def _leaf_only_message(tensor: "Tensor", value: bool) -> str:
    """PyTorch's error for changing requires_grad of a non-leaf, with the node that made it."""
    advice = (" If you want to use a computed variable in a subgraph that doesn't require "
              "differentiation use var_no_grad = var.detach().") if not value else ""
    return (f"you can only change requires_grad flags of leaf variables.{advice} (This tensor "
            f"was made by {type(tensor.grad_fn).__name__}.)")


view_refreshers: list = []  # genesis.autograd.function's refresh_stale_view, registered there


class Tensor:
    """A multi-dimensional array that can record the operations applied to it.

    Args:
        array: a list, scalar, NumPy array or Tensor (copied).
        device: "cpu", "cuda", "cuda:N" or a `genesis.device`.
        dtype: a genesis dtype or its name; inferred when None (Python float ->
            the default dtype (float32), int -> int64, bool -> bool, NumPy float64 -> the default dtype).
        requires_grad: record operations for `backward` (floating dtypes only).
    """

    __slots__ = ("_data", "_device", "_requires_grad", "grad_fn", "_output_nr",
                 "_version_counter", "_grad", "_view", "_hooks", "_accumulator",
                 "_retains_grad", "__weakref__")

    __array_ufunc__ = None  # numpy scalars on the left defer to our reflected operators

    def __init__(self, array, device=None, dtype=None, requires_grad: bool = False, **kwargs):
        target = as_device(device) if device is not None else (
            array._device if isinstance(array, Tensor) else cpu)
        self._set_storage(to_array(array, dtype, target), target, new_version_counter(),
                          requires_grad)

    def _set_storage(self, data, device: Device, version_counter: list, requires_grad: bool) -> None:
        """Fill every slot of a new leaf (wrap_array inlines the same for speed)."""
        self._data = data
        self._device = device
        self._requires_grad = False
        self.grad_fn = None
        self._output_nr = 0
        self._version_counter = version_counter
        self._grad = None
        self._view = None
        self._hooks = None
        self._accumulator = None
        self._retains_grad = False
        if requires_grad:
            self.requires_grad = True

    # -- shape, type, device --------------------------------------------------
    @property
    def shape(self) -> Size:
        """The extents, as a `genesis.Size` (a tuple of ints).

        >>> Tensor([[1, 2, 3]]).shape
        genesis.Size([1, 3])
        """
        shape = self._data.shape
        size = known_size(shape)
        return size if size is not None else size_of(shape)

    @property
    def dtype(self) -> DType:
        return from_numpy_dtype(self._data.dtype)

    @property
    def device(self) -> Device:
        return self._device

    @property
    def layout(self):
        """genesis.strided: every genesis tensor is dense."""
        return layouts.strided

    @property
    def is_cuda(self) -> bool:
        return self._device.type == "cuda"

    @property
    def ndim(self) -> int:
        return self._data.ndim

    @property
    def size(self) -> _Size:
        """Number of elements; also callable: `t.size()` is the shape, `t.size(d)` one extent."""
        return _Size(self._data.shape)

    def dim(self) -> int:
        return self._data.ndim

    def numel(self) -> int:
        return int(self._data.size)

    def element_size(self) -> int:
        return self._data.dtype.itemsize

    def is_floating_point(self) -> bool:
        return self._data.dtype.kind == "f" or self.dtype.is_floating_point

    def is_contiguous(self, memory_format=None) -> bool:
        """Whether the elements lie in memory in row-major order, or, with
        `memory_format=genesis.channels_last` (`channels_last_3d`), with the channels last.

        >>> import genesis
        >>> x = genesis.zeros(2, 3, 4, 4)
        >>> x.is_contiguous(), x.permute(0, 2, 3, 1).is_contiguous()
        (True, False)
        """
        if memory_format in (None, layouts.contiguous_format, layouts.legacy_contiguous_format):
            return bool(self._data.flags.c_contiguous)
        layouts.check_memory_format(memory_format, self._data.shape, "is_contiguous")
        if memory_format is layouts.preserve_format:
            raise RuntimeError("is_contiguous: preserve_format is not a layout to check against; "
                               "use genesis.contiguous_format or genesis.channels_last")
        data = self._data
        order = (0, 2, 3, 1) if data.ndim == 4 else (0, 2, 3, 4, 1)
        return bool(data.transpose(order).flags.c_contiguous)

    @property
    def _version(self) -> int:
        """How many in-place changes this tensor's storage has seen."""
        if self._version_counter.__class__ is InferenceVersionCounter:
            raise RuntimeError("Inference tensors do not track version counter: this tensor was "
                               "made inside inference_mode(); clone it to get a normal tensor")
        return self._version_counter[0]

    # -- autograd fields ------------------------------------------------------
    @property
    def requires_grad(self) -> bool:
        view = self._view
        if view is not None and view[3] != self._version_counter[0] and view_refreshers:
            view_refreshers[0](self)  # its storage changed in place: it may now require grad
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        value = bool(value)
        if self.grad_fn is not None:  # PyTorch refuses either value here
            raise RuntimeError(_leaf_only_message(self, value))
        if value and self._version_counter.__class__ is InferenceVersionCounter and \
                not inference_state.depth:
            raise RuntimeError("Setting requires_grad=True on inference tensor outside "
                               "InferenceMode is not allowed: the tensor was made inside "
                               "inference_mode(); clone it first (t.clone().requires_grad_())")
        if value and not self.dtype.is_floating_point:
            raise RuntimeError(
                f"only tensors of floating point dtype can require gradients, got {self.dtype!r}; "
                "convert first, e.g. t.float().requires_grad_()")
        self._requires_grad = value

    @requires_grad.deleter
    def requires_grad(self) -> None:
        raise RuntimeError("can't delete requires_grad; set it to False instead")

    def requires_grad_(self, requires_grad: bool = True) -> "Tensor":
        """Set `requires_grad` in place and return self. Unlike the attribute, as in PyTorch,
        it lets a non-leaf be asked for True (which it is already), not for False.

        >>> x = Tensor([1.0], requires_grad=True)
        >>> (x * 2).requires_grad_().requires_grad
        True
        """
        if not isinstance(requires_grad, bool | np.bool_):
            raise TypeError(f"requires_grad_: requires_grad must be a bool, got "
                            f"{describe_value(requires_grad)}")
        if self.grad_fn is not None:
            if not requires_grad:
                raise RuntimeError(_leaf_only_message(self, False))
            return self
        self.requires_grad = requires_grad
        return self

    def _is_view(self) -> bool:
        """Whether this tensor is a view of another (shares its storage, see `_base`)."""
        return self._view is not None

    @property
    def _base(self):
        """The tensor this one is a view of (the first of a chain of views), else None."""
        return self._view[0] if self._view is not None else None

    @property
    def is_leaf(self) -> bool:
        """True unless the tensor was produced by an op that recorded a graph."""
        return self.grad_fn is None

    @property
    def volatile(self) -> bool:
        """Always False: PyTorch removed volatile tensors (reading it warns); use no_grad().

        >>> import genesis, warnings
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     genesis.ones(1).volatile
        False
        """
        warnings.warn("volatile was removed and now has no effect: it is always False. Use "
                      "`with genesis.no_grad():` instead.", UserWarning, stacklevel=2)
        return False

    @property
    def _grad_fn(self):
        """The same as `grad_fn` (PyTorch's internal spelling)."""
        return self.grad_fn

    @_grad_fn.deleter
    def _grad_fn(self) -> None:
        raise RuntimeError("can't delete _grad_fn: a tensor's place in the graph is fixed; use "
                           "t.detach() for a tensor outside the graph")

    @property
    def _backward_hooks(self):
        """The hooks of a leaf as PyTorch keeps them (a dict), or None when it has none. A dict
        assigned here is the leaf's hook table: backward calls its values; hooks added with
        `register_hook` read back as a new {index: hook} dict."""
        if self.grad_fn is None:
            hooks = self._hooks
        else:
            hooks = (self.grad_fn._tensor_hooks or {}).get(self._output_nr)
        if isinstance(hooks, dict):
            return hooks
        return dict(enumerate(hooks)) if hooks else None

    @_backward_hooks.setter
    def _backward_hooks(self, hooks) -> None:
        if hooks is not None and not isinstance(hooks, dict):
            raise TypeError(f"_backward_hooks must be a dict or None, got {describe_value(hooks)}")
        if self.grad_fn is not None:
            raise RuntimeError("genesis keeps the hooks of a non-leaf tensor on its grad_fn: add "
                               "them with t.register_hook(hook) instead of assigning _backward_hooks")
        self._hooks = hooks

    @_backward_hooks.deleter
    def _backward_hooks(self) -> None:
        raise RuntimeError("can't delete _backward_hooks; assign None to drop the hooks, or "
                           "call .remove() on the handle register_hook returned")

    @property
    def grad(self):
        """The gradient a backward accumulated here: for leaves, and for other tensors after
        `retain_grad()`. Reading it on another tensor warns, as in PyTorch: it stays None."""
        if self.grad_fn is not None and not self._retains_grad and self._grad is None:
            warnings.warn(
                "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its "
                ".grad attribute won't be populated during autograd.backward(). If you indeed "
                "want the .grad field to be populated for a non-leaf Tensor, use .retain_grad() "
                "on the non-leaf Tensor. If you access the non-leaf Tensor by mistake, make sure "
                "you access the leaf Tensor instead.", UserWarning, stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value) -> None:
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of "
                                f"type {type(value).__name__}")
            if value is self:
                raise RuntimeError("can't assign Variable as its own grad")
            if value.shape != self.shape:
                raise RuntimeError(f"assigned grad has shape {tuple(value.shape)}, but the tensor "
                                   f"has shape {tuple(self.shape)}")
            accumulator = self._accumulator
            if accumulator is not None and accumulator._grad_dtype_set:  # Tensor.grad_dtype set
                expected = accumulator._grad_dtype
                if expected is not None and value._data.dtype != accumulator._grad_numpy_dtype:
                    raise RuntimeError(
                        f"attempting to assign a gradient with dtype {value.dtype.name} to a tensor "
                        f"with grad_dtype {expected.name} ({_CPP_NAMES.get(expected.name, '')}): the "
                        "gradient must have the tensor's grad_dtype; set grad_dtype to None to allow any")
            elif value._data.dtype != self._data.dtype:
                raise RuntimeError(f"assigned grad has data of a different type: "
                                   f"{value.dtype.name}, but the tensor is {self.dtype.name}")
            if value._device != self._device:
                raise RuntimeError(f"assigned grad is on {value._device}, the tensor on {self._device}")
        self._grad = value

    @grad.deleter
    def grad(self) -> None:
        self._grad = None

    @property
    def retains_grad(self) -> bool:
        return self._retains_grad

    @property
    def data(self) -> "Tensor":
        """The same storage as a tensor outside the graph (changes are not tracked): a new
        version counter, of an inference tensor exactly when this is one (whatever the mode)."""
        alias = wrap_array(self._data, self._device)
        if alias._version_counter.__class__ is not self._version_counter.__class__:
            alias._version_counter = self._version_counter.__class__((0,))
        if cut_listeners:
            _tell_cut(self, alias, ".data")
        return alias

    @data.setter
    def data(self, value: "Tensor") -> None:
        if not isinstance(value, Tensor):
            raise TypeError(f"data must be set to a Tensor, got {type(value).__name__}")
        if self._requires_grad and not value.is_floating_point():
            raise RuntimeError(f"data set to a tensor that requires gradients must be floating "
                               f"point or complex dtype, got {value.dtype.name}")
        self._data = value._data
        self._device = value._device

    @data.deleter
    def data(self) -> None:
        raise RuntimeError("can't delete .data: a tensor always has storage; assign another "
                           "tensor to .data to replace it")

    def detach(self) -> "Tensor":
        """A tensor sharing storage (and version counter) that is outside the graph."""
        alias = wrap_array(self._data, self._device)
        alias._version_counter = self._version_counter
        if cut_listeners:
            _tell_cut(self, alias, ".detach()")
        return alias

    def detach_(self) -> "Tensor":
        """Cut this tensor out of the graph in place: it becomes a leaf."""
        if self._view is not None and self.grad_fn is not None:
            raise RuntimeError("can't detach a view in place; use t = t.detach() instead")
        if cut_listeners:
            _tell_cut(self, self, ".detach_()")
        self.grad_fn = None
        self._output_nr = 0
        self._requires_grad = False
        return self

    def retain_grad(self) -> None:
        """Keep `.grad` for this non-leaf tensor after backward (leaves always keep it)."""
        if not self._requires_grad:
            raise RuntimeError("can't retain_grad on a tensor that has requires_grad=False")
        if self.grad_fn is None or self._retains_grad:
            return
        self.grad_fn._retain_output(self._output_nr, self)
        self._retains_grad = True

    def zero_grad(self) -> None:
        """Clear the accumulated gradient (sets `.grad` to None)."""
        self._grad = None

    # -- conversions ------------------------------------------------------------
    def _host_array(self) -> np.ndarray:
        return transfer(self._data, self._device, cpu)

    def numpy(self, *, force: bool = False) -> np.ndarray:
        """The CPU array (shared storage). Refuses tensors that require grad unless `force`."""
        if force:
            return self._host_array().copy() if self._device.type != "cpu" else self._data
        if self._requires_grad and grad_state.enabled:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. "
                               "Use tensor.detach().numpy() instead.")
        if self._device.type != "cpu":
            raise TypeError(f"can't convert a {self._device} tensor to numpy; "
                            "use tensor.cpu() to copy it to host memory first.")
        return self._data

    def __array__(self, dtype=None, copy=None):
        if self._device.type != "cpu":  # as numpy(): leaving the GPU is an explicit .cpu()
            raise TypeError(f"can't convert a {self._device} tensor to a NumPy array; "
                            "use tensor.cpu() to copy it to host memory first.")
        if self._requires_grad:
            raise RuntimeError("Can't convert a tensor that requires grad to a NumPy array. "
                               "Use tensor.detach().numpy() instead.")
        array = self._data
        return array.astype(dtype, copy=False) if dtype is not None else array

    def item(self):
        """The value of a one-element tensor as a Python number."""
        if self._data.size != 1:
            raise RuntimeError(f"a Tensor with {self._data.size} elements cannot be converted "
                               "to a Python scalar; use .tolist() for all values")
        value = self._host_array().reshape(()).item()
        if cut_listeners:
            _tell_cut(self, value, ".item()")
        return value

    def tolist(self):
        values = self._host_array().tolist()
        if cut_listeners:
            _tell_cut(self, values, ".tolist()")
        return values

    def __float__(self) -> float:
        if self._data.size != 1:  # a ValueError, as PyTorch's (item() raises a RuntimeError)
            raise ValueError(f"only one element tensors can be converted to Python scalars; this "
                             f"one has {self._data.size}")
        return float(self.item())

    def __int__(self) -> int:
        if self._data.size != 1:
            raise ValueError(f"only one element tensors can be converted to Python scalars; this "
                             f"one has {self._data.size}")
        return int(self.item())

    def __index__(self) -> int:
        if self.dtype.is_floating_point or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def __bool__(self) -> bool:
        if self._data.size != 1:
            raise RuntimeError(f"Boolean value of a Tensor with {self._data.size} values is "
                               "ambiguous; use .any() or .all()")
        return bool(self.item())

    def __len__(self) -> int:
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self):
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))  # one node for all rows (as PyTorch), not one per row

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return tensor_repr(self)

    def __format__(self, spec: str) -> str:
        """As PyTorch's: a 0-d tensor (not a subclass, such as a Parameter) formats its value,
        with any spec (`f"{loss}"` is "7.0"); any other tensor formats as `str(t)`, and a spec
        for it is a TypeError."""
        if self._data.ndim == 0 and type(self) is Tensor:
            return format(self._data.item(), spec)
        return object.__format__(self, spec)

    def __reduce__(self):
        return (_rebuild, (self._host_array(), str(self._device), self._requires_grad))

    def __deepcopy__(self, memo):
        if self.grad_fn is not None:
            raise RuntimeError("only leaf tensors support deepcopy; detach() it first")
        copied = wrap_array(self._data.copy(), self._device)
        copied._requires_grad = self._requires_grad
        if self._grad is not None:
            copied._grad = wrap_array(self._grad._data.copy(), self._device)
        memo[id(self)] = copied
        return copied


# PyTorch's C++ names of the floating dtypes, which its messages use
_CPP_NAMES = {"float16": "Half", "bfloat16": "BFloat16", "float32": "Float", "float64": "Double"}


def _tell_cut(tensor: Tensor, alias: Tensor, how: str) -> None:
    for listener in cut_listeners:
        listener(tensor, alias, how)


def _rebuild(array, device_name, requires_grad):
    return Tensor(array, device=device_name, dtype=from_numpy_dtype(array.dtype),
                  requires_grad=requires_grad)


def wrap_array(array, device: Device = cpu, requires_grad: bool = False) -> Tensor:
    """Wrap an array of `device`'s namespace as a leaf Tensor without copying (fast path)."""
    if array.__class__ is not np.ndarray and device.xp is np:
        array = np.asarray(array)  # NumPy reductions return scalars, not 0-d arrays
    tensor = _new_object(Tensor)
    tensor._data = array
    tensor._device = device
    tensor._requires_grad = requires_grad
    tensor.grad_fn = None
    tensor._output_nr = 0
    tensor._version_counter = [0] if not inference_users[0] else new_version_counter()
    tensor._grad = None
    tensor._view = None
    tensor._hooks = None
    tensor._accumulator = None
    tensor._retains_grad = False
    return tensor


def to_array(data, dtype, target: Device):
    """Turn user data into a fresh array of `target`'s namespace with the inferred dtype."""
    if isinstance(data, Tensor):
        array = transfer(data._data, data._device, target)
        if array is data._data:
            array = array.copy()
        return _cast(array, dtype)
    if dtype is not None:
        dtype = get_dtype(dtype)
    xp = target.xp
    if isinstance(data, np.ndarray | np.generic):
        array = np.array(data)
    elif type(data).__module__.startswith("cupy"):
        array = data.get()
    else:
        array = _from_python(data, dtype)
    if dtype is None:
        dtype = _inferred_dtype(array)
    array = array.astype(dtype.numpy_dtype, copy=False)  # beyond a float dtype: inf (NumPy warns)
    return array if xp is np else transfer(array, cpu, target)


def _values_of_tensors(data):
    """`data` with each tensor in it replaced by its values (a list of tensors that require
    grad gives a new tensor outside the graph, as in PyTorch)."""
    if isinstance(data, Tensor):
        return data._host_array()
    if isinstance(data, list | tuple) and any(isinstance(item, Tensor | list | tuple)
                                               for item in data):
        return [_values_of_tensors(item) for item in data]
    return data


def _from_python(data, dtype):
    """An array of Python data (numbers, bools, nested lists/tuples of them, tensors), with
    clear errors for ragged lists, non-numbers and numbers that don't fit `dtype`."""
    if isinstance(data, list | tuple):
        data = _values_of_tensors(data)
    try:
        array = np.array(data)
    except ValueError as error:
        raise _ragged(data) or ValueError(f"can't make a tensor from this {type(data).__name__}: "
                                          f"{error}") from None
    kind = array.dtype.kind
    if kind not in "biuf":
        return _from_objects(data, array, dtype)
    if dtype is None and kind == "u" and array.dtype.itemsize == 8:
        dtype = dtypes.int64  # NumPy's type for ints from 2**63 on, which int64 can't hold
    if dtype is not None:
        dtypes.check_array_fits(array, dtype, "tensor")
    return array


def _ragged(data) -> Exception | None:
    """Where nested lists stop being rectangular, found as PyTorch finds it: the shape is
    read along the first entries, then every entry is checked in order; a ValueError for a
    row of another length, a TypeError for a number where a row belongs or a row where a
    number belongs (None if the lists are rectangular)."""
    shape, item = [], data
    while isinstance(item, list | tuple):
        shape.append(len(item))
        if not item:
            break
        item = item[0]
    stack = [("data", data, 0)]
    while stack:
        path, item, dim = stack.pop()
        is_row = isinstance(item, list | tuple)
        if is_row != (dim < len(shape)):
            found, expected = ("a sequence", "a single value") if is_row else ("a single value", "a sequence")
            return TypeError(f"can't make a tensor from this {type(data).__name__}: {path} is "
                             f"{found} where {expected} belongs (at dim {dim}); nested lists must "
                             "be rectangular")
        if not is_row:
            continue
        if len(item) != shape[dim]:
            return ValueError(f"can't make a tensor from this {type(data).__name__}: expected a "
                              f"sequence of length {shape[dim]} at dim {dim} (got {len(item)} at "
                              f"{path}); nested lists must be rectangular")
        stack.extend(reversed([(f"{path}[{index}]", child, dim + 1)
                               for index, child in enumerate(item)]))
    return None


def _from_objects(data, array: np.ndarray, dtype):
    """Data NumPy kept as objects, text or complex numbers: an array of `dtype` when its
    elements are numbers that fit it (ints beyond int64 into a floating dtype), else an
    error naming the first element that is not a real number or does not fit."""
    for index, value in enumerate(array.flat):
        where = f" at position {index}" if array.ndim else ""
        if isinstance(value, str | bytes | complex | np.complexfloating):
            kind = "complex numbers" if isinstance(value, complex | np.complexfloating) else "text"
            raise TypeError(f"can't make a tensor from {kind} ({value.item()!r:.40}{where}); "
                            "genesis tensors hold bools, integers and floating point numbers")
        if isinstance(value, int) and not isinstance(value, bool):  # into a floating dtype,
            # a big int becomes inf where it exceeds the dtype (as a float would), not beyond float64
            target = dtypes.float64 if dtype is not None and dtype.is_floating_point else dtype
            dtypes.check_fits(value, target if target is not None else dtypes.int64, "tensor")
        elif not isinstance(value, float | bool | np.number | np.bool_):
            raise RuntimeError(f"can't make a tensor from {type(data).__name__}: could not infer "
                               f"a dtype for {type(value).__name__}{where}; tensor data must be "
                               "numbers, bools, or (nested) lists of them")
    if dtype is not None and array.dtype.kind == "O":
        return array.astype(dtype.numpy_dtype)
    raise TypeError(f"can't make a tensor of NumPy dtype {array.dtype}; genesis supports "
                    "bool, integer and floating point data")


def _inferred_dtype(array: np.ndarray) -> DType:
    kind = array.dtype.kind
    if kind == "f" or array.dtype in dtypes.FLOATING_NUMPY_DTYPES:  # (bfloat16: kind "V")
        # bfloat16, float16 and float32 arrays keep their dtype; float64 ones (NumPy's default, what a
        # list of Python floats becomes) get the default dtype, as the spec asks
        return dtypes.get_default_dtype() if array.dtype == np.float64 else from_numpy_dtype(array.dtype)
    if kind in "iub":
        return from_numpy_dtype(array.dtype)
    raise TypeError(f"can't make a tensor of NumPy dtype {array.dtype}; genesis supports "
                    "bool, integer and floating point data")


def _cast(array, dtype):
    if dtype is None:
        return array
    return array.astype(get_dtype(dtype).numpy_dtype, copy=False)

