"""In-place ops: the same Functions as the out-of-place forms, written into the target.

Rules (PyTorch's): every in-place change bumps the storage's version counter,
so a saved tensor changed later is detected at backward; a leaf that requires
grad (or a view of one) can't be changed in place while grad is enabled; a
non-leaf changed in place gets the op as its new grad_fn, so `y *= 3` keeps
gradients right; a change through a view rewires the view's base (`views.py`).
"""
from __future__ import annotations

from typing import Protocol

from ..autograd import function
from ..autograd.autocast_casts import outside_autocast
from ..autograd.function import (LeafModifiedInPlaceError, cpu_scalars_moved, move_retained_grad,
                                 refuse_view_update)
from ..autograd.grad_mode import grad_state
from ..autograd.saved_hooks import state as saved_hooks
from ..inference_tensors import refuse_inference_tensor_update
from ..listeners import Listeners
from ..tensor import Tensor, wrap_array
from .overlap import writable_alias
from .views import rebase_view, region_of_base

__all__ = ["apply_inplace", "refuse_leaf_change", "write_listeners", "WriteListener",
           "tell_before_write"]


class WriteListener(Protocol):
    """Told just before an op writes into `tensor`'s storage in place (an in-place op, an
    `out=` argument, a `_foreach_*_` list): `allow_mutation_on_saved_tensors` listens, to
    copy a saved tensor before it changes. While nobody listens it costs one test."""

    def __call__(self, tensor: Tensor) -> None:
        ...


write_listeners: Listeners[WriteListener] = Listeners()


def tell_before_write(tensor: Tensor) -> None:
    """Tell every write listener that `tensor`'s storage is about to change."""
    for listener in write_listeners:
        listener(tensor)


def apply_inplace(cls, target: Tensor, *args, **kwargs) -> Tensor:
    """Run Function `cls` on (target, *args) and store the result in `target`."""
    if cls.autocast_policy is not None and grad_state.autocast is not None:
        with outside_autocast():  # as PyTorch's, whose autocast casts out-of-place ops only
            return apply_inplace(cls, target, *args, **kwargs)
    if write_listeners:
        tell_before_write(target)
    if function.dual_mode.active:  # forward-mode AD: tangents are updated too
        return function.dual_mode.inplace(cls, target, args, kwargs)
    if target._version_counter.__class__ is not list:
        refuse_inference_tensor_update(target, f"{cls.__name__.lower()}_")
    if not cls.mixes_devices and any(isinstance(arg, Tensor) and arg._device is not target._device
                                     for arg in args):
        args = cpu_scalars_moved(f"{cls.__name__.lower()}_", args, target._device)
    graph = grad_state.enabled and (target._requires_grad or any(
        isinstance(arg, Tensor) and arg._requires_grad for arg in args) or (
        target._view is not None and target._view[0]._requires_grad))  # base requires grad now
    view = target._view
    if view is not None and view[2] is not None and (graph or grad_state.enabled and
                                                     view[0]._requires_grad):
        refuse_view_update(target, f"{cls.__name__.lower()}_")
    if not graph:
        if function.observers and not grad_state.in_backward:
            _store(cls, target, cls.apply(target, *args, **kwargs)._data)  # observers see the op
        else:
            _write_without_graph(cls, target, args, kwargs)
        return target
    _refuse_leaf(cls, target)
    source, index_map = region_of_base(target) if view is not None else (target, None)
    if saved_hooks.stack:
        source = _snapshot_for_hooks(source)
    result = cls.apply(source, *args, **kwargs)
    node = result.grad_fn
    if node is not None:
        _snapshot_saved_target(node, source)
    _store(cls, target, result._data)
    if node is None:
        return target
    _retarget_saved_output(node, target)
    if view is not None:
        rebase_view(target, result, index_map)
    else:
        old = target.grad_fn
        target.grad_fn = node
        target._output_nr = 0
        target._requires_grad = True
        move_retained_grad(target, old)
    return target


def _write_without_graph(cls, target: Tensor, args, kwargs) -> None:
    fast = cls.forward_inplace
    try:
        if cls.inplace_ufunc is not None and not kwargs:
            _write_ufunc(cls.inplace_ufunc, target, args)
        elif fast is not None and not kwargs:
            fast(target, *args)
        else:
            ctx = cls._backward_cls()
            ctx.needs_input_grad = (False,) * (len(args) + 1)
            result = cls.forward(ctx, target, *args, **kwargs)
            _copy_into(cls, target, result._data if isinstance(result, Tensor) else result)
    except (TypeError, ValueError) as error:
        if _made_writable(cls, target):  # a part of a broadcast view: now written through
            return _write_without_graph(cls, target, args, kwargs)
        raise _inplace_error(cls, target, error) from None
    target._version_counter[0] += 1


def _write_ufunc(ufunc: str, target: Tensor, args) -> None:
    """The op as its xp ufunc, written straight into the target's array."""
    data = target._data
    getattr(target._device.xp, ufunc)(
        data, *(arg._data if isinstance(arg, Tensor) else arg for arg in args), out=data,
        casting="same_kind")


def _store(cls, target: Tensor, array) -> None:
    try:
        _copy_into(cls, target, array)
    except (TypeError, ValueError) as error:
        if _made_writable(cls, target):  # a part of a broadcast view: now written through
            return _store(cls, target, array)
        raise _inplace_error(cls, target, error) from None
    target._version_counter[0] += 1


def _made_writable(cls, target: Tensor) -> bool:
    """Whether `target`'s array was read-only and now is a writeable alias of the same memory
    (genesis.ops.overlap: a part of a broadcast view whose elements are distinct). A tensor
    whose elements overlap is refused there with PyTorch's error."""
    alias = writable_alias(target._data, f"{cls.__name__.lower()}_", cls.writes_one_value)
    if alias is None:
        return False
    target._data = alias
    return True


def _copy_into(cls, target: Tensor, array) -> None:
    xp = target._device.xp
    if array.shape != target._data.shape:
        raise ValueError(f"the result has shape {tuple(array.shape)}, but the in-place target "
                         f"has shape {tuple(target.shape)}")
    xp.copyto(target._data, array, casting="same_kind")


def _inplace_error(cls, target: Tensor, error: Exception) -> RuntimeError:
    name = f"{cls.__name__.lower()}_"
    return RuntimeError(f"{name}: can't update a tensor of shape {tuple(target.shape)} and dtype "
                        f"{target.dtype.name} in place: {error}")


def _refuse_leaf(cls, target: Tensor) -> None:
    refuse_leaf_change(f"{cls.__name__.lower()}_", target)


def refuse_leaf_change(op: str, target: Tensor) -> None:
    """Raise PyTorch's error if `target` is a leaf that requires grad, or a view of one."""
    base = target._view[0] if target._view is not None else target
    if base.grad_fn is None and base._requires_grad:
        what = "a view of a leaf Variable" if base is not target else "a leaf Variable"
        raise LeafModifiedInPlaceError(
            f"{op}: {what} that requires grad is being used in an in-place operation: "
            f"{what.replace('Variable', 'tensor')} that requires grad (shape {tuple(base.shape)}) can't be changed in place "
            "while gradients are recorded. Wrap the update in "
            "`with genesis.no_grad():` (as optimizers and initializers do), or use the "
            "out-of-place form (x = x + y).")


def _snapshot_for_hooks(target: Tensor) -> Tensor:
    """What the op reads instead of `target` while saved-tensor hooks are in force: a copy of
    its value before the change, in its place in the graph, so that a pack hook never gets a
    tensor that is about to change (PyTorch saves such an original `self` as a clone too)."""
    snapshot = wrap_array(target._data.copy(), target._device)
    snapshot.grad_fn, snapshot._output_nr = target.grad_fn, target._output_nr
    snapshot._requires_grad = target._requires_grad
    return snapshot


def _snapshot_saved_target(node, target: Tensor) -> None:
    """The op may have saved the target itself, whose storage is about to change: keep a copy."""
    saved = node._saved
    if not saved or not any(entry[0] is target for entry in saved):
        return
    snapshot = wrap_array(target._data.copy(), target._device)
    snapshot.grad_fn, snapshot._output_nr = target.grad_fn, target._output_nr
    snapshot._requires_grad = target._requires_grad
    node._saved = tuple((snapshot, 0, nr) if value is target else (value, version, nr)
                        for value, version, nr in saved)


def _retarget_saved_output(node, target: Tensor) -> None:
    """A saved output now lives in the target's storage: track the target's version."""
    saved = node._saved
    if not saved or not any(nr >= 0 for _, _, nr in saved):
        return
    alias = wrap_array(target._data, target._device)
    alias._version_counter = target._version_counter
    version = target._version_counter[0]
    node._saved = tuple((alias, version, nr) if nr >= 0 else (value, old_version, nr)
                        for value, old_version, nr in saved)
