"""A tensor's storage, and the in-place changes of what a tensor is a window on, with PyTorch's
autograd rules: `Tensor.untyped_storage()` / `storage()` (the memory a tensor and its views
share), `resize_` / `resize_as_`, `set_` and `as_strided_`.

A storage object is a window on the array that owns the memory (the root of a chain of NumPy
or CuPy views): `untyped_storage()` counts bytes, `storage()` elements of the tensor's dtype.

>>> import genesis
>>> base = genesis.zeros(6)
>>> view = base[2:].view(2, 2)
>>> view.untyped_storage().data_ptr() == base.untyped_storage().data_ptr()
True
>>> base.untyped_storage().nbytes(), len(view.storage())
(24, 6)
"""
from __future__ import annotations

from ..autograd.function import Op, refuse_view_update
from ..grad_state import grad_state
from ..inference_tensors import inference_state, refuse_inference_tensor_update
from ..tensor import Tensor
from . import samples
from .inplace import tell_before_write, write_listeners
from .inplace_shapes import _reshaped_in_place
from .registry import OpInfo, Sample
from .tensor_attributes import _address, _storage_root
from .views import PutFlat, TakeFlat

__all__ = ["UntypedStorage", "TypedStorage"]


def storage_root(array):
    """The array that owns `array`'s memory (itself unless it is a view)."""
    return _storage_root(array)


def storage_address(array) -> int:
    """The address of the memory `array` is a window on (shared by a base and its views)."""
    return _address(storage_root(array))


class UntypedStorage:
    """The memory behind a tensor, counted in bytes (what `Tensor.untyped_storage()` returns).

    >>> import genesis
    >>> genesis.ones(3).untyped_storage().size()
    12
    """

    def __init__(self, root, device):
        self._root, self.device = root, device

    def data_ptr(self) -> int:
        """The address of the first byte."""
        return _address(self._root)

    def nbytes(self) -> int:
        """How many bytes the storage holds."""
        return int(self._root.nbytes)

    def size(self) -> int:
        """How many bytes the storage holds (as `nbytes()`)."""
        return self.nbytes()

    def __len__(self) -> int:
        return self.size()

    def element_size(self) -> int:
        """1: an untyped storage counts bytes."""
        return 1

    def __eq__(self, other) -> bool:
        return isinstance(other, UntypedStorage) and other._root is self._root

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return f"{type(self).__name__}(nbytes={self.nbytes()}, device={self.device})"


class TypedStorage(UntypedStorage):
    """The memory behind a tensor, counted in elements of its dtype (what `Tensor.storage()`
    returns).

    >>> import genesis
    >>> len(genesis.ones(5)[:4].storage())
    5
    """

    def __init__(self, root, device, dtype):
        super().__init__(root, device)
        self.dtype = dtype

    def size(self) -> int:
        """How many elements of the dtype the storage holds."""
        return self.nbytes() // self.element_size()

    def element_size(self) -> int:
        """The size in bytes of one element of the dtype."""
        return self.dtype.itemsize

    def untyped(self) -> UntypedStorage:
        """The same memory, counted in bytes."""
        return UntypedStorage(self._root, self.device)


def untyped_storage(input: Tensor) -> UntypedStorage:
    """The memory `input` is a window on, shared with its base and views, counted in bytes.

    >>> import genesis
    >>> x = genesis.zeros(4)
    >>> x[1:].untyped_storage() == x.untyped_storage()
    True
    """
    return UntypedStorage(storage_root(input._data), input._device)


def storage(input: Tensor) -> TypedStorage:
    """The memory `input` is a window on, counted in elements of its dtype.

    >>> import genesis
    >>> x = genesis.zeros(4)
    >>> len(x[1:].storage()), x[1:].storage().data_ptr() == x.data_ptr()
    (4, True)
    """
    data = input._data
    return TypedStorage(storage_root(data), input._device, data.dtype)


def _refuse_resize(op: str, input: Tensor) -> None:
    if input._version_counter.__class__ is not list:
        refuse_inference_tensor_update(input, op)
    if input._requires_grad and not inference_state.depth:
        raise RuntimeError(f"{op}: cannot resize variables that require grad (a tensor of shape "
                           f"{tuple(input.shape)}); resize a detached copy, or use reshape or view")


def _resized(input: Tensor, shape: tuple) -> None:
    """Give `input` the shape `shape`, keeping its elements in row-major order as far as they
    go: in its own storage when that is big enough and contiguous, else in a new one."""
    data = input._data
    xp = input._device.xp
    count = 1
    for extent in shape:
        count *= extent
    root = storage_root(data)
    offset = (_address(data) - _address(root)) // data.itemsize if data.size else 0
    if data.flags.c_contiguous and root.flags.c_contiguous and root.dtype == data.dtype \
            and offset + count <= root.size:
        input._data = root.reshape(-1)[offset:offset + count].reshape(shape)
        return
    fresh = xp.zeros(count, data.dtype)
    kept = min(count, data.size)
    fresh[:kept] = data.reshape(-1)[:kept]
    input._data = fresh.reshape(shape)


def resize_(input: Tensor, *sizes, memory_format=None) -> Tensor:
    """Change the shape of `input` in place to `sizes`, keeping its elements in row-major
    order where they fit (new elements are zero). Counts as an in-place change (its version
    goes up) unless the shape is already `sizes`. Refused on a tensor that requires grad.

    >>> import genesis
    >>> x = genesis.tensor([1., 2., 3.])
    >>> x.resize_(2), x._version
    (tensor([1., 2.]), 1)
    """
    shape = tuple(int(size) for size in (sizes[0] if len(sizes) == 1 and isinstance(
        sizes[0], tuple | list) else sizes))
    if any(size < 0 for size in shape):
        raise RuntimeError(f"resize_: sizes must be non-negative, got {list(shape)}")
    _refuse_resize("resize_", input)
    if shape == input._data.shape:
        return input
    if write_listeners:
        tell_before_write(input)
    _resized(input, shape)
    input._version_counter[0] += 1
    return input


def resize_as_(input: Tensor, other: Tensor, memory_format=None) -> Tensor:
    """`input.resize_(other.shape)`.

    >>> import genesis
    >>> genesis.zeros(1).resize_as_(genesis.ones(2, 2)).shape
    genesis.Size([2, 2])
    """
    _refuse_resize("resize_as_", input)
    return resize_(input, tuple(other.shape))


def set_(input: Tensor, source=None, storage_offset: int = 0, size=None, stride=None) -> Tensor:
    """Make `input` a window on `source`'s memory (a tensor, or a storage with `storage_offset`,
    `size` and `stride` in elements), or, with no source, an empty tensor. Counts as an in-place
    change; refused with gradients recorded on a tensor that requires grad.

    >>> import genesis
    >>> base = genesis.arange(6.)
    >>> x = genesis.zeros(1)
    >>> x.set_(base[1:3])
    tensor([1., 2.])
    >>> x.data_ptr() == base[1:].data_ptr(), x._version
    (True, 1)
    """
    if input._version_counter.__class__ is not list:
        refuse_inference_tensor_update(input, "set_")
    if input._view is not None:
        refuse_view_update(input, "set_")
    xp = input._device.xp
    if source is None:
        array = xp.zeros(0, input._data.dtype)
    elif isinstance(source, Tensor):
        if source._data.dtype != input._data.dtype:
            raise RuntimeError(f"set_: expected a source of dtype {input.dtype.name}, got "
                               f"{source.dtype.name}")
        array = source._data
    elif isinstance(source, UntypedStorage):
        root = source._root.reshape(-1).view(input._data.dtype)
        count = root.size - storage_offset if size is None else None
        shape = (count,) if size is None else tuple(size)
        steps = stride if stride is not None else _contiguous_strides(shape)
        array = xp.lib.stride_tricks.as_strided(
            root[storage_offset:], shape, tuple(step * root.itemsize for step in steps))
    else:
        raise TypeError(f"set_: source must be a Tensor or a storage, got {type(source).__name__}")
    from_graph = input._requires_grad and input.grad_fn is None
    if from_graph and grad_state.enabled:
        raise RuntimeError("set_: a leaf Variable that requires grad is being used in an in-place "
                           "operation: wrap it in `with genesis.no_grad():`")
    if write_listeners:
        tell_before_write(input)
    input._data = array
    input._version_counter[0] += 1
    if input._accumulator is not None:  # a new storage: the old AccumulateGrad no longer fits
        input._accumulator = None
    return input


def _contiguous_strides(shape: tuple) -> tuple:
    strides, step = [], 1
    for extent in reversed(shape):
        strides.append(step)
        step *= max(extent, 1)
    return tuple(reversed(strides))


def _positions(xp, offset: int, size: tuple, stride: tuple):
    """For each element of a window (`size`, `stride`, `offset`, in elements) on a storage,
    its position in the storage."""
    positions = xp.full(size, offset, "int64")
    for axis, (extent, step) in enumerate(zip(size, stride)):
        shape = [1] * len(size)
        shape[axis] = extent
        positions = positions + xp.arange(extent).reshape(shape) * step
    return positions


class StorageWindow(Op):
    """The window (`size`, `stride`, `storage_offset`, in elements) on the storage of `a`,
    sharing its memory; the gradient goes to the elements of `a` the window covers."""

    @staticmethod
    def forward(ctx, a, size, stride, storage_offset):
        data = a._data
        xp = a._device.xp
        root = storage_root(data)
        needed = storage_offset + 1 + sum((n - 1) * s for n, s in zip(size, stride)) \
            if all(size) else 0
        if needed > root.size:
            raise RuntimeError(f"as_strided_: sizes {list(size)}, strides {list(stride)} and "
                               f"storage offset {storage_offset} need a storage of {needed} "
                               f"elements, but the storage holds {root.size}")
        item = data.itemsize
        start = (_address(data) - _address(root)) // item if data.size else 0
        ctx.storage_size = root.size
        ctx.window = _positions(xp, storage_offset, size, stride)
        ctx.covered = _positions(xp, start, data.shape,
                                 tuple(step // item for step in data.strides))
        return xp.lib.stride_tricks.as_strided(root.reshape(-1)[storage_offset:], size,
                                               tuple(step * item for step in stride))

    @staticmethod
    def backward(ctx, grad):
        in_storage = PutFlat.apply(grad, (ctx.storage_size,), ctx.window)
        return TakeFlat.apply(in_storage, ctx.covered), None, None, None


def as_strided_(input: Tensor, size, stride, storage_offset: int | None = None) -> Tensor:
    """In place: `input` becomes the window (`size`, `stride`, in elements, from
    `storage_offset`, by default its own) on its storage, as PyTorch's; with gradients
    recorded it takes that window's place in the graph.

    >>> import genesis
    >>> x = genesis.arange(6.)
    >>> x.as_strided_((2, 2), (1, 2), 1)
    tensor([[1., 3.],
            [2., 4.]])
    """
    size, stride = tuple(int(n) for n in size), tuple(int(s) for s in stride)
    if len(size) != len(stride):
        raise RuntimeError(f"as_strided_: mismatch in length of strides and shape: size "
                           f"{list(size)}, stride {list(stride)}")
    if any(n < 0 for n in size) or any(s < 0 for s in stride):
        raise RuntimeError(f"as_strided_: sizes {list(size)} and strides {list(stride)} must not "
                           "be negative")
    data = input._data
    if storage_offset is None:
        storage_offset = (_address(data) - _address(storage_root(data))) // data.itemsize \
            if data.size else 0
    window = StorageWindow.apply(input, size, stride, storage_offset)
    if input._view is not None:  # a view of the same base, through one more step
        base, steps, creation, version = input._view
        window._view = (base, steps + ((StorageWindow, (size, stride, storage_offset), {}),),
                        creation, version)
    return _reshaped_in_place(input, "as_strided_", window)


def _make_subclass(cls, data: Tensor, require_grad: bool = False) -> Tensor:
    """A `cls` (a subclass of Tensor) sharing `data`'s storage and version counter, a leaf
    that requires grad if `require_grad` (`torch.Tensor._make_subclass`, for subclasses whose
    `__new__` wraps a tensor; their `__init__` must not run `Tensor.__init__`, which copies).

    >>> import genesis
    >>> class Tagged(genesis.Tensor):
    ...     def __new__(cls, data):
    ...         return genesis.Tensor._make_subclass(cls, data)
    ...     def __init__(self, data):
    ...         pass
    >>> base = genesis.zeros(2)
    >>> tagged = Tagged(base)
    >>> type(tagged).__name__, tagged.data_ptr() == base.data_ptr()
    ('Tagged', True)
    """
    if not (isinstance(cls, type) and issubclass(cls, Tensor)):
        raise TypeError(f"_make_subclass: cls must be a subclass of Tensor, got {cls!r}")
    if not isinstance(data, Tensor):
        raise TypeError(f"_make_subclass: data must be a Tensor, got {type(data).__name__}")
    made = object.__new__(cls)
    made._set_storage(data._data, data._device, data._version_counter, require_grad)
    return made


METHODS = {"untyped_storage": untyped_storage, "storage": storage, "resize_": resize_,
           "resize_as_": resize_as_, "set_": set_, "as_strided_": as_strided_,
           "_make_subclass": staticmethod(_make_subclass)}


def _strided_in_place(input: Tensor, size, stride, storage_offset) -> Tensor:
    """`input.as_strided_(...)` on a contiguous copy of `input` (a leaf that requires grad
    can't change in place)."""
    return input.contiguous().clone().as_strided_(size, stride, storage_offset)


def _torch_strided_in_place(torch, input, size, stride, storage_offset):
    return input.contiguous().clone().as_strided_(size, stride, storage_offset)


def _strided_samples(rng) -> list:
    def sample(shape, size, stride, offset, note):
        return Sample((samples.values(rng, shape), size, stride, offset), note=note)

    return [
        sample((3, 4), (2, 2), (4, 1), 5, "a block"),
        sample((3, 4), (4, 3), (1, 4), 0, "the transpose"),
        sample((2, 3), (2, 2), (1, 1), 1, "overlapping windows (gradients add)"),
        sample((6,), (3,), (2,), 0, "every other element"),
    ]


OPS = [OpInfo("as_strided_", _strided_in_place, _strided_samples,
              torch=_torch_strided_in_place)]
