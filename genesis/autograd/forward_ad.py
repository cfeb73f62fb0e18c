"""Forward-mode automatic differentiation, as `torch.autograd.forward_ad`.

Inside `dual_level()`, `make_dual(primal, tangent)` makes a dual tensor; every op applied
to dual tensors gives its outputs tangents (the Jacobian-vector product), and
`unpack_dual` reads them back. Tangents live here, keyed by tensor, never on the Tensor;
ops reach this module only while a level is open (`function.dual_mode`), so ops outside
one pay a single attribute test.

How an op's tangent is found: a custom Function's `jvp(ctx, *tangents)`; a view op
applied to the input's tangent (so the tangent of a view is a view of the tangent);
any other op from its backward rule, which is linear in the output gradient v:
J t = d/dv <J^T v, t>, two reverse passes on a copy of the op.

>>> import genesis
>>> import genesis.autograd.forward_ad as fwAD
>>> with fwAD.dual_level():
...     x = fwAD.make_dual(genesis.tensor([1., 2.]), genesis.tensor([1., 0.]))
...     fwAD.unpack_dual(x * x).tangent
tensor([2., 0.])
"""
from __future__ import annotations

import weakref
from collections import namedtuple

from .._tensor_str import suffix_providers
from ..dtypes import FLOATING_NUMPY_DTYPES
from ..ops.inplace import apply_inplace
from ..ops.storage import storage_root
from ..ops.tensor_attributes import data_ptr
from ..tensor import Tensor, cut_listeners, wrap_array
from .engine import grad
from .function import Op, dual_mode
from .grad_mode import grad_state, inference_mode

__all__ = ["dual_level", "enter_dual_level", "exit_dual_level", "make_dual", "unpack_dual",
           "UnpackedDualTensor"]

_current_level = -1      # the open dual level (only 0 exists), -1 outside any
_fwd_grad_enabled = True
_suspended = 0           # > 0 while tangents are being computed (ops then propagate nothing)
# {id(tensor): (weakref to the tensor, its tangent)} at the current level: an entry goes
# when its tensor dies, all of them when the level exits.
_tangents: dict = {}

UnpackedDualTensor = namedtuple("UnpackedDualTensor", ["primal", "tangent"])
UnpackedDualTensor.__doc__ = "What `unpack_dual` returns: the primal and its tangent (or None)."


def _refresh() -> None:
    dual_mode.active = _current_level >= 0 and _fwd_grad_enabled and not _suspended


class _Suspended:
    """Run ops without forward-mode propagation (while computing tangents)."""

    def __enter__(self):
        global _suspended
        _suspended += 1
        dual_mode.active = False

    def __exit__(self, *exc):
        global _suspended
        _suspended -= 1
        _refresh()


_suspend = _Suspended()


def enter_dual_level() -> int:
    """Open a dual level and return it (0: nested levels are not supported).

    >>> level = enter_dual_level(); level
    0
    >>> exit_dual_level()
    """
    global _current_level
    if _current_level >= 0:
        raise RuntimeError("Nested forward mode AD is not supported at the moment: a dual level "
                           "is already open; exit it (exit_dual_level()) before entering another")
    _current_level = 0
    cut_listeners.add(_drop_tangent_on_detach)
    _refresh()
    return _current_level


def exit_dual_level(*, level: int | None = None) -> None:
    """Close the dual level: every tangent made in it is dropped."""
    global _current_level
    if level is None:
        level = _current_level
    if level != _current_level or level < 0:
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that was "
                           f"created (level {level}; the open one is {_current_level}). This is "
                           "not supported.")
    _tangents.clear()
    cut_listeners.discard(_drop_tangent_on_detach)
    _current_level = -1
    _refresh()


def _drop_tangent_on_detach(tensor: Tensor, alias, how: str) -> None:
    """`t.detach_()` inside a dual level drops t's tangent too, as PyTorch's does (`detach()`
    gives a new tensor, which has none)."""
    if how == ".detach_()":
        _tangents.pop(id(tensor), None)


class dual_level:
    """Context manager of a dual level: tangents exist only inside it.

    >>> import genesis
    >>> with dual_level():
    ...     x = make_dual(genesis.tensor(2.), genesis.tensor(1.))
    ...     unpack_dual(x ** 3).tangent
    tensor(12.)
    """

    def __enter__(self) -> int:
        return enter_dual_level()

    def __exit__(self, *exc) -> None:
        exit_dual_level()


def _is_fwd_grad_enabled() -> bool:
    """Whether ops propagate tangents (`_set_fwd_grad_enabled` turns it off).

    >>> _is_fwd_grad_enabled()
    True
    """
    return _fwd_grad_enabled


class _set_fwd_grad_enabled:
    """Turn tangent propagation on or off: at once, and back as it was when used as a
    context manager.

    >>> with _set_fwd_grad_enabled(False):
    ...     _is_fwd_grad_enabled()
    False
    """

    def __init__(self, mode: bool):
        global _fwd_grad_enabled
        self.previous = _fwd_grad_enabled
        _fwd_grad_enabled = bool(mode)
        _refresh()

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc) -> None:
        global _fwd_grad_enabled
        _fwd_grad_enabled = self.previous
        _refresh()


class _Alias(Op):
    """An alias of a tensor (same storage and version counter), differentiable as the
    identity: what make_dual and unpack_dual return."""

    @staticmethod
    def forward(ctx, input):
        return input._data

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output


def _alias(tensor: Tensor) -> Tensor:
    with _suspend:
        alias = _Alias.apply(tensor)
    alias._version_counter = tensor._version_counter
    return alias


def _tangent_of(tensor) -> Tensor | None:
    entry = _tangents.get(id(tensor))
    return entry[1] if entry is not None else None


def _set_tangent(tensor: Tensor, tangent: Tensor) -> None:
    key = id(tensor)

    def forget(ref, key=key):
        entry = _tangents.get(key)
        if entry is not None and entry[0] is ref:
            del _tangents[key]

    _tangents[key] = (weakref.ref(tensor, forget), tangent)


def _is_floating(tensor: Tensor) -> bool:
    return tensor._data.dtype in FLOATING_NUMPY_DTYPES


def _need_level(level, what: str) -> int:
    if level is None:
        level = _current_level
    if level < 0:
        raise RuntimeError(f"Trying to {what} for forward AD but no level exists, make sure to "
                           "enter_dual_level() first (or use `with dual_level():`).")
    if level != _current_level:
        raise RuntimeError(f"Trying to {what} at level {level}, but the open dual level is "
                           f"{_current_level}")
    return level


def make_dual(tensor: Tensor, tangent: Tensor, *, level: int | None = None) -> Tensor:
    """A dual tensor: an alias of `tensor` (differentiable, sharing storage) whose tangent is
    `tangent`, kept as it is.

    >>> import genesis
    >>> with dual_level():
    ...     x = make_dual(genesis.tensor([1., 2.]), genesis.tensor([3., 4.]))
    ...     unpack_dual(2 * x).tangent
    tensor([6., 8.])
    """
    _need_level(level, "create a dual Tensor")
    if not isinstance(tensor, Tensor) or not isinstance(tangent, Tensor):
        raise TypeError("make_dual: tensor and tangent must be Tensors, got "
                        f"{type(tensor).__name__} and {type(tangent).__name__}")
    if not _is_floating(tensor):
        raise ValueError(f"Expected primal to be floating point or complex, but got: "
                         f"{tensor.dtype}; make_dual needs a floating tensor (use .double())")
    if not _is_floating(tangent):
        raise ValueError(f"Expected tangent to be floating point or complex, but got: "
                         f"{tangent.dtype}; make_dual needs a floating tangent")
    if tuple(tangent.shape) != tuple(tensor.shape):
        raise RuntimeError(
            "Trying to set a forward gradient that has a different size than that of the "
            f"original Tensor, this is not supported. Tensor is of size {list(tensor.shape)} while "
            f"the given forward gradient is of size {list(tangent.shape)}.")
    if tangent._device is not tensor._device:
        raise RuntimeError(f"make_dual: the tangent is on {tangent._device}, the primal on "
                           f"{tensor._device}; move the tangent with .to()")
    if _tangent_of(tangent) is not None:
        raise RuntimeError("Trying to set a forward gradient that has a forward gradient at the "
                           "same level; this is not supported: unpack_dual(tangent).primal "
                           "gives a plain tensor")
    if not _same_layout(tensor._data, tangent._data):
        tangent = _tangent_laid_out_as(tensor, tangent)
    dual = _alias(tensor)
    _set_tangent(dual, tangent)
    return dual


def _same_layout(primal, tangent) -> bool:
    """Whether the tangent sits in its storage as the primal in its own (same strides, offset
    and storage size): PyTorch keeps such a tangent as it is and copies any other."""
    primal_root, tangent_root = storage_root(primal), storage_root(tangent)
    return (primal.strides == tangent.strides and primal_root.nbytes == tangent_root.nbytes
            and _offset(primal, primal_root) == _offset(tangent, tangent_root))


def _offset(array, root) -> int:
    return data_ptr(wrap_array(array)) - data_ptr(wrap_array(root)) if array.size else 0


def _tangent_laid_out_as(primal: Tensor, tangent: Tensor) -> Tensor:
    """A copy of `tangent` in a new storage laid out as `primal`'s."""
    data = primal._data
    root = storage_root(data)
    fresh = primal._device.xp.zeros(root.nbytes // data.itemsize, tangent._data.dtype)
    start = _offset(data, root) // data.itemsize
    view = primal._device.xp.lib.stride_tricks.as_strided(
        fresh[start:], data.shape, tuple(step // data.itemsize * fresh.itemsize
                                         for step in data.strides))
    view[...] = tangent._data
    return wrap_array(view, primal._device)


def unpack_dual(tensor: Tensor, *, level: int | None = None) -> UnpackedDualTensor:
    """(primal, tangent) of a dual tensor: the primal a new alias of it (differentiable), the
    tangent as stored, or None where it has none (or outside a dual level).

    >>> import genesis
    >>> unpack_dual(genesis.tensor(1.)).tangent is None
    True
    """
    if level is None:
        level = _current_level
    if level < 0 or level != _current_level:
        return UnpackedDualTensor(tensor, None)
    return UnpackedDualTensor(_alias(tensor), _tangent_of(tensor))


# -- propagation through ops ----------------------------------------------------------------

def _argument_tangents(args: tuple) -> tuple:
    """Per argument: its tangent (a list of them for a list of tensors), else None; and
    whether any exists."""
    found = False
    tangents = []
    for arg in args:
        if isinstance(arg, Tensor):
            tangent = _tangent_of(arg)
            found = found or tangent is not None
        elif arg.__class__ in (list, tuple) and any(isinstance(item, Tensor) for item in arg):
            tangent = [_tangent_of(item) for item in arg]
            found = found or any(item is not None for item in tangent)
        else:
            tangent = None
        tangents.append(tangent)
    return tuple(tangents), found


def _propagate(cls, ctx, args: tuple, kwargs: dict, outputs: tuple) -> None:
    tangents, found = _argument_tangents(args)
    if not found:
        return
    with _suspend:
        if not cls._builtin:
            results = _custom_jvp(cls, ctx, args, tangents, outputs)
        elif cls.is_view and tangents[0] is not None and not any(tangents[1:]):
            results = (cls.apply(tangents[0], *args[1:], **kwargs),)
        else:
            results = _linearized(cls, args, kwargs, tangents)
    for output, tangent in zip(outputs, results):
        if isinstance(output, Tensor) and tangent is not None:
            _set_tangent(output, tangent)


def _any_requires_grad(values: tuple) -> bool:
    """Whether any tensor among `values` (or in a list or tuple among them) requires grad."""
    for value in values:
        for item in value if value.__class__ in (list, tuple) else (value,):
            if isinstance(item, Tensor) and item._requires_grad:
                return True
    return False


def _linearized(cls, args: tuple, kwargs: dict, tangents: tuple) -> tuple:
    """The output tangents of `cls` at `args`, from its backward rule: with v the output
    gradients, J t = d/dv <J^T v, t>. Runs the op again on leaf copies of the inputs that
    carry tangents (None for an output that is not differentiable)."""
    if cls.nondeterministic:
        raise NotImplementedError(
            f"forward-mode AD through {cls.node_name}, a random op, is not supported: genesis "
            "derives tangents by running the op again, which would draw new random numbers")
    primals, flat_tangents = [], []
    # the tangents are differentiable (double backward through forward AD) when a tangent or
    # an argument requires grad: J t depends on the primals as much as on t
    keep_graph = grad_state.enabled and (_any_requires_grad(args) or _any_requires_grad(tangents))

    def leaf(arg, tangent):
        if tangent is None:
            return arg
        if keep_graph and arg._requires_grad:  # a differentiable stand-in for this one use
            copy = _Alias.apply(arg)
        else:
            copy = wrap_array(arg._data, arg._device)
            copy._requires_grad = True
        primals.append(copy)
        # an alias: an inference tensor's own version counter would refuse being saved
        flat_tangents.append(tangent if keep_graph else wrap_array(tangent._data, tangent._device))
        return copy

    with inference_mode(False):  # records a graph, also inside no_grad or inference_mode
        leaf_args = tuple(
            [leaf(item, t) for item, t in zip(arg, tangent)] if tangent.__class__ is list
            else leaf(arg, tangent) if tangent is not None else arg
            for arg, tangent in zip(args, tangents))
        result = cls.apply(*leaf_args, **kwargs)
        outputs = result if result.__class__ is tuple else (result,)
        differentiable = [output for output in outputs
                          if isinstance(output, Tensor) and output.grad_fn is not None]
        if not differentiable:
            return (None,) * len(outputs)
        probes = [wrap_array(o._device.xp.zeros_like(o._data), o._device).requires_grad_()
                  for o in differentiable]
        try:
            vjps = grad(differentiable, primals, probes, create_graph=True, allow_unused=True)
        except NotImplementedError as error:
            raise NotImplementedError(
                f"Trying to use forward AD with {cls.node_name} that does not support it: genesis "
                f"derives its tangents from its backward, which is not implemented ({error})"
            ) from None
        dot = None
        for vjp, tangent in zip(vjps, flat_tangents):
            if vjp is not None and vjp.requires_grad:
                term = (vjp * tangent).sum()
                dot = term if dot is None else dot + term
        jvps = (grad(dot, probes, create_graph=keep_graph, allow_unused=True)
                if dot is not None else (None,) * len(probes))
    by_output = {id(output): jvp for output, jvp in zip(differentiable, jvps)}
    results = []
    for output in outputs:
        if id(output) not in by_output:
            results.append(None)
            continue
        jvp = by_output[id(output)]
        if jvp is None:
            jvp = wrap_array(output._device.xp.zeros_like(output._data), output._device)
        results.append(jvp)
    return tuple(results)


class _JvpContext:
    """The ctx a custom Function's jvp sees: the forward's, whose `saved_tensors` are the
    tensors given to `save_for_forward`."""

    def __init__(self, ctx):
        object.__setattr__(self, "_ctx", ctx)

    @property
    def saved_tensors(self) -> tuple:
        return self._ctx.__dict__.get("_saved_for_forward", ())

    def __getattr__(self, name):
        return getattr(self._ctx, name)

    def __setattr__(self, name, value):
        setattr(self._ctx, name, value)


def _custom_jvp(cls, ctx, args: tuple, tangents: tuple, outputs: tuple) -> tuple:
    """A custom Function's `jvp`: given one tangent per argument (zeros for a floating
    tensor without one, None for anything else), one per output."""
    given = []
    for arg, tangent in zip(args, tangents):
        if tangent is None and isinstance(arg, Tensor) and _is_floating(arg):
            tangent = wrap_array(arg._device.xp.zeros_like(arg._data), arg._device)
        given.append(tangent if tangent.__class__ is not list else None)
    versions = [t._version_counter[0] if isinstance(t, Tensor) else None for t in given]
    result = cls.jvp(_JvpContext(ctx), *given)
    results = result if result.__class__ is tuple else (result,)
    if len(results) != len(outputs):
        given, made = len(results), len(outputs)
        raise RuntimeError(f"{cls.__name__}.jvp returned {given} tangent{'s' if given != 1 else ''}, "
                           f"but forward returned {made} output{'s' if made != 1 else ''}: return "
                           "one per output")
    non_differentiable = ctx._non_differentiable
    for index, (output, tangent) in enumerate(zip(outputs, results)):
        if tangent is None:
            continue
        if output is None or not _is_floating(output) or id(output._data) in non_differentiable:
            raise RuntimeError(
                f"{cls.__name__}.jvp returned a tangent for output {index}, which is not "
                "differentiable (not a floating tensor, or marked non-differentiable). You "
                "should return None at that position instead.")
        if tuple(tangent.shape) != tuple(output.shape):
            raise RuntimeError(
                f"{cls.__name__}.jvp returned a tangent of shape {tuple(tangent.shape)} for "
                f"output {index}, of shape {tuple(output.shape)}: they must match")
        _check_aliasing(cls, ctx, args, given, versions, output, tangent)
    return results


def _owner(array):
    return array if array.base is None else array.base


def _check_aliasing(cls, ctx, args: tuple, given: list, versions: list, output: Tensor,
                    tangent: Tensor) -> None:
    """PyTorch's rules for a custom Function whose output aliases an input: an input changed
    in place (mark_dirty) must have its tangent changed in place too, and a view of an input
    (or the input returned as it is) needs a tangent that is a view of the input's."""
    dirty = ctx.__dict__.get("_dirty", ())
    for arg, arg_tangent, version in zip(args, given, versions):
        if not isinstance(arg, Tensor) or arg_tangent is None:
            continue
        if any(output is tensor for tensor in dirty) and output is arg:
            if tangent is not arg_tangent or arg_tangent._version_counter[0] == version:
                raise RuntimeError(
                    f"{cls.__name__}: an inplace custom Function is not modifying the forward "
                    "mode gradients inplace. If the forward is modifying an input inplace "
                    "(mark_dirty), then the jvp function must modify the corresponding "
                    "gradient inplace and return it.")
            return
        if _owner(output._data) is not _owner(arg._data):
            continue
        as_is = output._data is arg._data
        if tangent._view is not None and _owner(tangent._data) is _owner(arg_tangent._data):
            return
        what = ("A custom Function's forward is returning a view (or an input as-is)" if as_is
                else f"{cls.__name__}'s forward returns a view of an input")
        if tangent._view is None and not as_is:
            problem = "the jvp is not returning a view"
        elif arg_tangent._view is not None:
            problem = "the jvp is not returning a view of the same base as the given tangent"
        else:
            problem = "the jvp is not returning a view of the given tangent"
        raise RuntimeError(f"{what}, but {problem}: return a view of that input's tangent "
                           "(e.g. tangent.view_as(tangent), or the same indexing as forward).")


def _inplace(cls, target: Tensor, args: tuple, kwargs: dict) -> Tensor:
    """An in-place op on tensors that may carry tangents: the target's new tangent is the
    out-of-place op's, computed before the target changes; a tangent the target already
    has is updated in place (so views of it follow), and a view without one gets its
    base's (made zero where the base has none)."""
    tangents, found = _argument_tangents((target,) + args)
    with _suspend:
        if not found:
            return apply_inplace(cls, target, *args, **kwargs)
        inputs = (target,) + args
        if grad_state.enabled and (_any_requires_grad(inputs) or _any_requires_grad(tangents)):
            # the tangent keeps a graph that may save the target: save it as it is before
            # the change (a recorded copy, which the change below leaves alone)
            before = target.clone()
            inputs = tuple(before if arg is target else arg for arg in inputs)
        (new,) = _linearized(cls, inputs, kwargs, tangents)[:1]
        apply_inplace(cls, target, *args, **kwargs)
        if new is not None:
            _store_inplace(target, new)
    return target


def _store_inplace(target: Tensor, new: Tensor) -> None:
    existing = _tangent_of(target)
    if existing is None and target._view is not None:
        base, steps, _, _ = target._view
        base_tangent = _tangent_of(base)
        if base_tangent is None:
            base_tangent = wrap_array(base._device.xp.zeros_like(base._data), base._device)
            _set_tangent(base, base_tangent)
        existing = _view_of_tangent(target, base, base_tangent, steps)
        _set_tangent(target, existing)
    if existing is None:
        _set_tangent(target, new)
        return
    leaf_requiring_grad = existing.grad_fn is None and existing._requires_grad
    if new._requires_grad and grad_state.enabled and not leaf_requiring_grad:
        existing.copy_(new)  # recorded: the tangent stays differentiable through the primals
        return
    existing._device.xp.copyto(existing._data, new._data, casting="same_kind")
    existing._version_counter[0] += 1


def _view_of_tangent(view: Tensor, base: Tensor, base_tangent: Tensor, steps) -> Tensor:
    """The tangent of `view` made from its base's: the base's tangent itself where the view
    has the base's layout (PyTorch shares the tensor then), else the view's ops replayed on it
    (a view of the base's tangent)."""
    data, base_data = view._data, base._data
    if data.shape == base_data.shape and data.strides == base_data.strides and \
            data_ptr(view) == data_ptr(base):
        return base_tangent
    for cls, args, kwargs in steps:
        base_tangent = cls.apply(base_tangent, *args, **kwargs)
    return base_tangent


def _tangent_text(tensor: Tensor) -> str | None:
    tangent = _tangent_of(tensor) if _current_level >= 0 else None
    return None if tangent is None else f"tangent={tangent!r}"


dual_mode.propagate = _propagate
dual_mode.inplace = _inplace
dual_mode.tangent_of = _tangent_of
suffix_providers.append(_tangent_text)
