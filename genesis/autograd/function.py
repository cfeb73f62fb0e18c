"""`Function`, its backward node (which is also the forward's `ctx`), and `AccumulateGrad`.

A `Function` subclass defines `forward(ctx, *args)` and `backward(ctx, *grads)`.
`Function.apply` runs forward with grad disabled, then, if any input requires
grad, links the outputs to a node of the class `<Name>Backward`. That node is
the `ctx` the forward saw: it holds saved tensors and any attributes set on it,
and its `next_functions` has one `(node, output_nr)` slot per forward argument,
so `backward` returns one gradient (or None) per argument, routed by position.

>>> import genesis
>>> class Cube(genesis.Function):
...     @staticmethod
...     def forward(ctx, x):
...         ctx.save_for_backward(x)
...         return x * x * x
...     @staticmethod
...     def backward(ctx, grad):
...         (x,) = ctx.saved_tensors
...         return grad * 3 * x * x
>>> x = genesis.tensor([2.0], requires_grad=True)
>>> y = Cube.apply(x)
>>> y.grad_fn
<CubeBackward>
>>> y.backward(genesis.ones(1)); x.grad
tensor([12.])
"""
from __future__ import annotations

import inspect
import re
import warnings
import weakref
from typing import NamedTuple, Protocol

import numpy as np

from ..device import cpu, device_mismatch_message, is_cpu_scalar
from ..dtypes import FLOATING_NUMPY_DTYPES, bfloat16_use
from ..listeners import Listeners
from ..inference_tensors import inference_state, is_inference_tensor
from .. import tensor as tensor_module
from ..tensor import Tensor, wrap_array
from ..autocast_rules import rule_of
from .autocast_casts import autocast_arguments
from .bfloat16_results import rounded_results
from .grad_mode import grad_state
from .hooks import RemovableHandle
from .module_scope import running
from .saved_hooks import PackedSaved, pack as pack_with_hooks, state as saved_hooks

__all__ = ["Function", "Op", "OpObserver", "Node", "AccumulateGrad", "gradient_edge", "GradientEdge",
           "mark_view", "register_view_rebuilder", "refresh_stale_view", "move_retained_grad",
           "refuse_view_update", "observers", "start_observers", "OpStartObserver",
           "SavedTensorModifiedError", "LeafModifiedInPlaceError", "DelayedError"]

class OpObserver(Protocol):
    """Called after every op call made outside the engine's backward pass (anomaly mode,
    `genesis.debug.record`), with the op's node (its ctx), arguments and outputs; also after
    those made inside it (a graph of the gradient) when it sets `sees_backward = True`.

    An observer with a `sees_data_views` attribute that is false when an op is called (it
    is read each time for its truth: it may be a container that fills and empties) is not
    called for a view op outside the graph, a view of data such as a DataLoader's sample
    indexed out of its dataset: a view shows values, it computes none."""

    def __call__(self, node: "Node", args: tuple, outputs: tuple) -> None:
        ...


observers: Listeners[OpObserver] = Listeners()


class OpStartObserver(Protocol):
    """Called before every op call runs (inside the engine's backward pass too), with the
    op's Function class and arguments: the profiler notes when the op started. The call's
    end is told to `observers`; an op that raises has a start and no end."""

    def __call__(self, cls: type, args: tuple) -> None:
        ...


start_observers: Listeners[OpStartObserver] = Listeners()

_FREED = ("freed",)
_CONSUMED = ("consumed",)  # read once by a Function with clear_saved_tensors_on_access
# genesis.autograd.saved_variables registers how `grad_fn._saved_<name>` and
# `grad_fn._raw_saved_<name>` are read: lookup(node, attribute name), and how they are
# listed for dir(grad_fn): names(node), the attribute names
saved_lookups = []
saved_listings = []


class SavedTensorModifiedError(RuntimeError):
    """A tensor saved for backward was changed in place afterwards; `node` is the node that
    saved it and `index` its position among the saved tensors."""

    def __init__(self, message: str, node=None, index: int | None = None):
        super().__init__(message)
        self.node, self.index = node, index


class LeafModifiedInPlaceError(RuntimeError):
    """A leaf that requires grad (or a view of one) was changed in place while gradients were
    recorded: by an in-place op, or by a custom Function that marked it dirty. A caller that
    made the leaf itself (a gradient checker) can retry with a clone of it."""


class Node:
    """A node of the backward graph: a tensor's `grad_fn`, and the forward's `ctx`.

    `next_functions` holds one `(node, output_nr)` pair per forward argument
    (`(None, 0)` where no gradient flows). Hooks: `register_hook(fn)` runs
    `fn(grad_inputs, grad_outputs)` after backward, `register_prehook(fn)` runs
    `fn(grad_outputs)` before; either may return replacements.

    The pairs are kept as two tuples, `_next_nodes` and `_next_nrs` (the engine reads
    those): one object per node for Python's cyclic collector to visit instead of one per
    edge and one more, and the output numbers, mostly zeros, are shared between nodes.
    """

    __slots__ = ("_next_nodes", "_next_nrs", "_saved", "_input_meta", "_output_meta",
                 "needs_input_grad", "_module_call", "__dict__", "__weakref__")

    _forward_cls = None
    _hooks = ()
    _prehooks = ()
    _tensor_hooks = None      # {output_nr: [hook]} from Tensor.register_hook on outputs
    _retained = None          # {output_nr: weakref(tensor)} from Tensor.retain_grad
    _source = None            # where the forward was called, when recorded
    _materialize_grads = True
    _non_differentiable = ()
    _non_tensor_inputs = ()   # a user's Function: the positions of its non-tensor arguments
    _post_accumulate_hooks = ()  # AccumulateGrad: from Tensor.register_post_accumulate_grad_hook

    # Slots are filled lazily (a ctx that never joins a graph only gets
    # `needs_input_grad`); an unset one reads as its default here.
    # `_module_call`: the module call the forward ran in (`module_scope`), None outside modules.
    _SLOT_DEFAULTS = {"_next_nodes": (), "_next_nrs": (), "_saved": None, "_input_meta": (),
                      "_output_meta": (), "needs_input_grad": (), "_module_call": None}

    def __getattr__(self, name):
        try:
            return Node._SLOT_DEFAULTS[name]
        except KeyError:
            if name.startswith(("_saved_", "_raw_saved_")) and saved_lookups:
                return saved_lookups[0](self, name)  # PyTorch's names for what a node saved
            raise AttributeError(f"{type(self).__name__} has no attribute {name!r}") from None

    def __dir__(self):
        """The attributes, with the `_saved_<name>` ones of what the node saved (tools that
        draw graphs, torchviz's show_saved, find them by dir())."""
        names = super().__dir__()
        return names + saved_listings[0](self) if saved_listings else names

    # -- identity -----------------------------------------------------------
    @classmethod
    def name(cls) -> str:
        """PyTorch's name of the node: a built-in op's node carries the index of its
        overload (`MulBackward0`), a custom Function's its class's name (`MyFnBackward`)."""
        forward = cls._forward_cls
        if forward is not None and forward.__dict__.get("node_class_name"):
            return "torch::autograd::" + cls.__name__  # one of PyTorch's nodes written in C++
        return cls.__name__ + "0" if forward is not None and forward._builtin else cls.__name__

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"

    @property
    def next_functions(self) -> tuple:
        """One `(node, output_nr)` pair per forward argument (`(None, 0)` where no gradient
        flows), a new tuple at each read, as in PyTorch."""
        return tuple(zip(self._next_nodes, self._next_nrs))

    @next_functions.setter
    def next_functions(self, edges) -> None:
        edges = tuple(edges)
        self._next_nodes = tuple(node for node, _ in edges)
        self._next_nrs = shared_output_nrs(tuple(output_nr for _, output_nr in edges))

    @property
    def metadata(self) -> dict:
        """A dict free for tools to annotate the node with."""
        meta = self.__dict__.get("_metadata")
        if meta is None:
            meta = self.__dict__["_metadata"] = {}
        return meta

    @property
    def forward_location(self):
        """Where the forward was called, when recorded (anomaly mode or tracing), else None."""
        return self._source

    # -- ctx API used inside forward ------------------------------------------
    def save_for_backward(self, *tensors) -> None:
        """Keep tensors for backward; later in-place changes to them are detected.

        None may be saved too. Anything else is PyTorch's TypeError in a user's Function
        once its node joins the graph (genesis's own ops also keep numbers here).
        """
        self._saved = tensors  # packed with their versions when the node joins the graph

    @property
    def saved_tensors(self) -> tuple:
        """The tensors given to `save_for_backward`, checked for in-place changes."""
        saved = self._saved
        if saved is None:
            return ()
        if saved is _FREED:
            raise RuntimeError(_freed_message(self))
        if not self._next_nodes:  # read inside forward, before packing
            return saved
        unpacked = []
        for index, (tensor, version, output_nr) in enumerate(saved):
            if version is not None:
                if tensor._version_counter[0] != version or (output_nr == -2 and
                                                             tensor.grad_fn is None):
                    unpack_saved(self, index, saved[index])  # raises the error that applies
                if output_nr >= 0:
                    tensor = _reattach_output(tensor, self, output_nr)
            elif tensor.__class__ is PackedSaved:  # saved under saved_tensors_hooks
                tensor = tensor.unpack(self)
            unpacked.append(tensor)
        return tuple(unpacked)

    @property
    def saved_variables(self) -> tuple:
        """The deprecated name of `saved_tensors` (warns DeprecationWarning)."""
        warnings.warn("'saved_variables' is deprecated; use 'saved_tensors'", DeprecationWarning,
                      stacklevel=2)
        return self.saved_tensors

    @property
    def saved_tensor_info(self) -> tuple:
        """(shape, dtype) of each saved tensor without unpacking; () once freed."""
        saved = self._saved
        if saved is None or saved is _FREED or saved is _CONSUMED or not self._next_nodes:
            return ()
        return tuple((t.shape, t.dtype) if version is not None else None for t, version, _ in saved)

    def save_for_forward(self, *tensors) -> None:
        """Keep tensors for a custom Function's `jvp` (forward-mode AD), which reads them as
        `ctx.saved_tensors`."""
        self.__dict__["_saved_for_forward"] = tensors

    def mark_non_differentiable(self, *tensors) -> None:
        """Declare outputs that get no gradient (e.g. indices)."""
        self._non_differentiable = tuple(id(t._data) for t in tensors)

    def set_materialize_grads(self, value: bool) -> None:
        """If False, backward receives None (not zeros) for outputs that got no gradient."""
        self._materialize_grads = bool(value)

    def mark_dirty(self, *tensors) -> None:
        """Declare inputs the forward changed in place: `apply` returns each of them itself
        (not a copy), now made by this Function, as PyTorch does."""
        self.__dict__["_dirty"] = tensors

    def __call__(self, *grad_outputs):
        """Run this node's backward on `grad_outputs` (one per output of its forward), as
        calling a grad_fn does in PyTorch; returns the gradients for the forward's inputs."""
        expected = len(self._output_meta)
        if len(grad_outputs) != expected:
            raise TypeError(f"{type(self).__name__}: expected {expected} "
                            f"argument{'s' if expected != 1 else ''}, got "
                            f"{len(grad_outputs)} instead (one gradient per output of its forward)")
        return self._forward_cls.backward(self, *grad_outputs)

    # -- hooks ----------------------------------------------------------------
    def register_hook(self, hook) -> RemovableHandle:
        """`hook(grad_inputs, grad_outputs)` runs after this node's backward."""
        if not isinstance(self._hooks, list):
            self._hooks = []
        return RemovableHandle(self._hooks, hook)

    def register_prehook(self, hook) -> RemovableHandle:
        """`hook(grad_outputs)` runs before this node's backward."""
        if not isinstance(self._prehooks, list):
            self._prehooks = []
        return RemovableHandle(self._prehooks, hook)

    def _add_tensor_hook(self, output_nr: int, hook) -> RemovableHandle:
        if self._tensor_hooks is None:
            self._tensor_hooks = {}
        return RemovableHandle(self._tensor_hooks.setdefault(output_nr, []), hook)

    def _retain_output(self, output_nr: int, tensor: Tensor) -> None:
        if self._retained is None:
            self._retained = {}
        self._retained[output_nr] = weakref.ref(tensor)

    def _release(self) -> None:
        if self._saved is not None:
            self._saved = _FREED


class AccumulateGrad(Node):
    """The node for a leaf that requires grad: adds incoming gradients to `.grad`."""

    __slots__ = ("_variable",)

    # Tensor.grad_dtype, once set on the leaf: the dtype gradients reaching it are cast to
    # (a genesis dtype, with its NumPy dtype), or None: gradients are kept in their own dtype
    _grad_dtype_set = False
    _grad_dtype = _grad_numpy_dtype = None

    @classmethod
    def name(cls) -> str:
        return "torch::autograd::AccumulateGrad"  # PyTorch's name (its C++ class)

    def __init__(self, variable: Tensor):
        self._variable = weakref.ref(variable)
        self._next_nodes = self._next_nrs = ()
        self._saved = None
        self._input_meta = ()
        self.needs_input_grad = ()
        self._output_meta = shared(((variable._data.shape, variable._data.dtype, variable._device),))

    @property
    def variable(self) -> Tensor:
        return self._variable()


def gradient_edge(tensor: Tensor) -> tuple:
    """The `(node, output_nr)` through which gradient reaches `tensor`."""
    if tensor.grad_fn is not None:
        return tensor.grad_fn, tensor._output_nr
    accumulator = tensor._accumulator
    if accumulator is None:
        accumulator = tensor._accumulator = AccumulateGrad(tensor)
    return accumulator, 0


class GradientEdge(NamedTuple):
    """A place in the backward graph a gradient flows into: `node` and which of its outputs
    (`output_nr`). `autograd.grad` and `backward` accept one wherever they take a tensor."""

    node: Node
    output_nr: int


class Function:
    """Base class of differentiable operations; subclass it and call `apply`.

    `forward(ctx, *args, **kwargs)` receives tensors (grad disabled) and
    returns a Tensor, an array of the tensor's namespace, or a tuple of them.
    `backward(ctx, *grad_outputs)` returns one gradient per positional forward
    argument (None for arguments that get none). Shapes may be left
    broadcast: the engine sums them back to each input's shape.
    """

    _backward_cls: type = Node
    is_view = False          # the output is a view of the first input (shares memory)
    nondeterministic = False  # forward draws random numbers (dropout): checks skip it
    # backward is deliberately not the derivative of forward (a gradient reversal layer, a
    # straight-through estimator): gradient checks skip its calls
    surrogate_gradient = False
    # Why this Function can't be re-run alone by gradient checks (a checkpoint hands on
    # outputs computed before its node was made), or None: checks then say so and skip it
    not_rerunnable = None
    _builtin = False         # an Op, genesis's own (below): forward computes on arrays
    # backward returns each gradient either over a new array that nothing else holds, or as
    # one of the gradients it received, passed through unchanged: the engine then owns the
    # new ones (adds into them, hands them to leaves as .grad without a copy). genesis's Ops
    # state it (tests/autograd/test_gradient_ownership.py checks every registered op); a
    # user's Function, and an Op whose backward runs the user's code, do not.
    fresh_gradients = False
    # The graph-free in-place form (`x.add_(y)` under no_grad), when the op writes into its
    # first input: `inplace_ufunc`, the name of the xp ufunc the op is (written with out=),
    # or else `forward_inplace(target, *args)`, a function writing into target._data.
    inplace_ufunc = None
    forward_inplace = None
    # The in-place form writes one value into every element (fill_, zero_), so it may write
    # into a broadcast tensor whose elements share memory, as PyTorch allows (genesis.ops.overlap)
    writes_one_value = False
    # Under genesis.autocast, per device type (genesis.autocast_rules): an AutocastRule, or
    # one policy for both, "lower" (run in the autocast dtype) or "float32" (run in float32);
    # None: inputs untouched
    autocast_policy = None
    mixes_devices = False    # True: tensor arguments may sit on different devices (copy_)
    # The op's name in graphs and reports (its node is "<node_name>Backward"); a class sets
    # it where its own name must differ (LayerNormFunction beside the LayerNorm module).
    node_name = "Function"
    # The node's class name where PyTorch's is not "<node_name>Backward" (its nodes written in
    # C++: "CopyBackwards", "Error"); their `name()` is then "torch::autograd::<that name>"
    node_class_name = None
    # True: the first read of ctx.saved_tensors frees them (a second read is an error), so
    # backward can drop each one as soon as it is done with it
    clear_saved_tensors_on_access = False
    # PyTorch's names of the values forward saves, one per position, read as
    # `grad_fn._saved_<name>` (genesis.autograd.saved_variables); None: named by the default rule
    saved_names = None
    # torch.func.vmap's hooks, with PyTorch's defaults: no rule is generated from forward
    generate_vmap_rule = False

    @staticmethod
    def vmap(info, in_dims, *args):
        """The batching rule of the Function under vmap; none by default (as in PyTorch)."""
        raise NotImplementedError("To use autograd.Function with vmap, you must either override the "
                                  "vmap staticmethod or set generate_vmap_rule=True")

    def __init__(self, *args, **kwargs):
        warnings.warn(f"{type(self).__name__} should not be instantiated. Methods on autograd "
                      "functions are all static, so you should invoke them on the class itself: "
                      f"call {type(self).__name__}.apply(...)", DeprecationWarning, stacklevel=2)

    def __getattr__(self, name):
        if name == "metadata":
            raise RuntimeError("You attempted to access the anomaly metadata of a custom autograd "
                               "function but the underlying PyNode has already been deallocated: "
                               f"this {type(self).__name__} is an instance of the Function, not "
                               "the node of a call (read it from the output's grad_fn)")
        if name in _NODE_ATTRIBUTES:
            raise RuntimeError(f"Attribute '{name}' is invalid for this instance of "
                               f"{type(self).__name__}: it belongs to the node of a call (the "
                               "output's grad_fn, or ctx in forward and backward), not to an "
                               "instance of the autograd.Function, which is a legacy access "
                               "pattern that is no longer supported")
        raise AttributeError(f"{type(self).__name__} object has no attribute {name!r}")

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "vjp" in vars(cls):  # PyTorch's other name for backward
            if "backward" in vars(cls):
                cls.backward = staticmethod(_both_backward_and_vjp)
            else:
                cls.backward = vars(cls)["vjp"]
        cls.node_name = cls.__dict__.get("node_name", cls.__name__)
        cls.autocast_policy = rule_of(cls.autocast_policy)
        body = {"__slots__": (), "_forward_cls": cls, "__module__": cls.__module__}
        if cls.clear_saved_tensors_on_access:
            body["saved_tensors"] = property(_saved_tensors_once, doc=_saved_tensors_once.__doc__)
        cls._backward_cls = type(cls.__dict__.get("node_class_name") or f"{cls.node_name}Backward",
                                 (Node,), body)

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom "
                                  "autograd.Function: subclasses of Function define "
                                  "forward(ctx, *args) as a @staticmethod")

    @staticmethod
    def setup_context(ctx, inputs: tuple, output):
        """PyTorch's other style: define `forward(*args)` without ctx, and this, which gets the
        forward's inputs and output and saves what backward needs on `ctx`. Not overridden:
        forward takes ctx itself."""
        raise NotImplementedError("setup_context is not overridden: forward takes ctx")

    def __call__(self, *args, **kwargs):
        raise RuntimeError(
            "Legacy autograd function with non-static forward method is deprecated. Please use "
            "new-style autograd function with static forward method: define forward and "
            f"backward as @staticmethod and call {type(self).__name__}.apply(...), not "
            f"{type(self).__name__}()(...)")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for your "
                                  "custom autograd.Function to use it with backward mode AD: "
                                  "define backward(ctx, *grads) as a @staticmethod")

    @staticmethod
    def jvp(ctx, *grad_inputs):
        """Forward-mode AD's rule of a custom Function: one tangent per output, given one per
        forward argument (genesis.autograd.forward_ad). genesis's own Ops derive theirs."""
        raise NotImplementedError(
            "You must implement the jvp function for custom autograd.Function to use it with "
            "forward mode AD: define a staticmethod jvp(ctx, *tangents) returning one tangent "
            "per output")

    @staticmethod
    def defined_gradients(args, kwargs) -> dict:
        """The input elements whose gradient this Function defines rather than derives (an
        embedding's padding row gets zero, whatever its output does), for a call with `args`
        and `kwargs`: {input position: NumPy bool mask, True where defined, of that input's
        shape or broadcastable to it}. Gradient checks leave those elements out. None here.

        >>> Function.defined_gradients((), {})
        {}
        """
        return {}

    @classmethod
    def apply(cls, *args, **kwargs):
        """Run forward and, when gradients are needed, link the result into the graph."""
        if dispatch_modes.active and cls._builtin and dispatch_modes.local.modes:
            return dispatch_modes.run(cls, args, kwargs)
        if start_observers:
            for observer in start_observers:
                observer(cls, args)
        if cls.autocast_policy is not None:
            autocast = grad_state.autocast
            if autocast is not None:
                args = autocast_arguments(cls.autocast_policy, autocast, args)
        ctx = _new_object(cls._backward_cls)
        device = None
        graph = False
        enabled = grad_state.enabled
        for arg in args:
            if isinstance(arg, Tensor):
                if device is None:
                    device = arg._device
                elif arg._device is not device and not cls.mixes_devices:
                    return cls.apply(*cpu_scalars_moved(_op_name(cls), args), **kwargs)
                if enabled:
                    view = arg._view
                    if view is not None and view[3] != arg._version_counter[0]:
                        refresh_stale_view(arg)
                    if arg._requires_grad:
                        graph = True
        if graph and cls.is_view and args[0]._version_counter.__class__ is not list:
            graph = False  # a view of an inference tensor is one too, outside the graph
        if graph:
            _link_inputs(ctx, args)
            ctx._module_call = running.call
        else:
            ctx.needs_input_grad = _NO_NEEDS[len(args)] if len(args) < 16 else (False,) * len(args)
        if cls._builtin:
            try:
                result = cls.forward(ctx, *args, **kwargs)
            except ValueError as error:  # NumPy's shape errors, reworded with the op and shapes
                raise _op_error(cls, args, error) from None
            if bfloat16_use.seen:  # NumPy's float32 results of bfloat16 inputs, rounded back
                result = rounded_results(args, kwargs, result)
            if device is None:
                device = _first_device(args)
            if result.__class__ is tuple:
                output = outputs = tuple(_as_output(value, device, args) for value in result)
            else:
                output = wrap_array(result, device) if not isinstance(result, Tensor) else \
                    _as_output(result, device, args)
                outputs = (output,)
        else:
            output, outputs = _run_user_forward(cls, ctx, args, kwargs, graph)
        if cls.is_view:
            mark_view(outputs[0], args, kwargs, cls)
        if graph:
            _link_outputs(ctx, outputs)
            if not cls._builtin and "_dirty" in ctx.__dict__:
                _rebase_dirty_views(ctx.__dict__["_dirty"])
        if observers:
            in_backward = grad_state.in_backward
            data_view = not graph and cls.is_view
            for observer in observers:
                if (not in_backward or getattr(observer, "sees_backward", False)) and not (
                        data_view and not getattr(observer, "sees_data_views", True)):
                    observer(ctx, args, outputs)
        if dual_mode.active:
            dual_mode.propagate(cls, ctx, args, kwargs, outputs)
        if not cls._builtin and "_dirty" in ctx.__dict__:  # needed only until here; kept, a
            del ctx.__dict__["_dirty"]  # dirty view -> its base's graph -> ctx would be a cycle
        return output


class DispatchModes:
    """Dispatch modes' entry point into ops, set by genesis.utils._python_dispatch: while
    `active` (a TorchDispatchMode is entered on some thread), an Op call on a thread whose
    `local.modes` (a thread-local list) is not empty is handed to `run(cls, args, kwargs)`
    instead of running."""

    active = False
    run = None
    local = None


dispatch_modes = DispatchModes()


class DualMode:
    """Forward-mode AD's entry points into ops, set by genesis.autograd.forward_ad: while
    `active` (a dual level is open and no tangent is being computed), `propagate(cls, ctx,
    args, kwargs, outputs)` gives an op's outputs their tangents, `inplace(cls, target,
    args, kwargs)` runs an in-place op on tensors that may carry tangents and
    `tangent_of(tensor)` is a tensor's tangent or None."""

    active = False
    propagate = None
    inplace = None
    tangent_of = None


dual_mode = DualMode()


def _saved_tensors_once(ctx) -> tuple:
    """`saved_tensors` of a Function with `clear_saved_tensors_on_access`: the first read in
    backward hands the tensors over and frees them, a second read is an error."""
    if ctx._saved is _CONSUMED:
        raise RuntimeError(f"{type(ctx).__name__}: saved tensors can only be accessed once when "
                           "clear_saved_tensors_on_access is set: its Function frees them at the "
                           "first read of ctx.saved_tensors")
    unpacked = Node.saved_tensors.fget(ctx)
    if ctx._saved is not None and ctx._next_nodes:
        ctx._saved = _CONSUMED
    return unpacked


def _both_backward_and_vjp(ctx, *grads):
    raise RuntimeError("Implementing both 'backward' and 'vjp' for a custom Function is not "
                       "allowed. You should only implement one of them (vjp is another name for "
                       "backward).")


def _run_user_forward(cls, ctx: Node, args: tuple, kwargs: dict, graph: bool) -> tuple:
    """A user's Function's forward, with grad disabled, in either of PyTorch's styles:
    `forward(ctx, *args)`, or `forward(*args)` followed by `setup_context(ctx, inputs,
    output)`. Returns (what apply returns, the outputs as the graph sees them: Tensors, with
    None where forward returned something else, which is passed back as it is)."""
    previous, grad_state.enabled = grad_state.enabled, False
    dual, dual_mode.active = dual_mode.active, False  # forward sees primals only; jvp does tangents
    try:
        if cls.setup_context is Function.setup_context:
            result = cls.forward(ctx, *args, **kwargs)
        else:
            result = cls.forward(*args, **kwargs)
            cls.setup_context(ctx, _forward_inputs(cls, args, kwargs), result)
    finally:
        grad_state.enabled = previous
        dual_mode.active = dual
    device = _first_device(args)
    dirty = ctx.__dict__.get("_dirty", ())
    if dirty:
        dirty = ctx.__dict__["_dirty"] = _check_dirty(dirty, args, graph)
    values = result if result.__class__ is tuple else (result,)
    converted = tuple(_as_user_output(value, device, args, dirty) for value in values)
    if dirty and graph:
        _check_dirty_outputs(dirty, converted)
    several = sum(isinstance(value, Tensor) for value in converted) > 1
    for index, value in enumerate(converted if previous else ()):  # views it made of its
        if not isinstance(value, Tensor) or any(value is tensor for tensor in dirty):
            continue  # inputs, or inputs returned as they are, with grad on
        if value._view is None:
            _alias_as_view(value, args)
        if value._view is not None:
            base, steps, creation, version = value._view
            if creation is None or creation[0] == "no_grad":
                detail = (index, type(ctx).__name__, several)
                value._view = (base, steps, ("custom_function", detail), version)
    outputs = tuple(value if isinstance(value, Tensor) else None for value in converted)
    if graph:
        if ctx._saved is not None:
            _check_saved_values(ctx)
        # backward must give these None (engine.check_user_gradients)
        non_tensors = tuple(index for index, arg in enumerate(args) if not isinstance(arg, Tensor))
        if non_tensors:
            ctx._non_tensor_inputs = non_tensors
    return (converted if result.__class__ is tuple else converted[0]), outputs


def _check_saved_values(ctx: Node) -> None:
    """PyTorch's rule for what a user's Function saves, checked once its node joins the
    graph: tensors and None only (genesis's own ops may also keep numbers there)."""
    for index, value in enumerate(ctx._saved):
        if value is not None and not isinstance(value, Tensor):
            raise TypeError(f"save_for_backward can only save variables, but argument {index} "
                            f"is of type {type(value).__name__}: {type(ctx).__name__} may save "
                            "tensors and None (keep other values on ctx: ctx.name = value)")


def _alias_as_view(value: Tensor, args: tuple) -> None:
    """An input a user's forward returned as it is (handed back as an alias of it) becomes a
    view of that input, with its version counter, as in PyTorch."""
    for arg in args:
        if isinstance(arg, Tensor) and arg._data is value._data and \
                arg._version_counter.__class__ is list:
            value._version_counter = arg._version_counter
            base, steps = arg._view[:2] if arg._view is not None else (arg, ())
            value._view = (base, steps, None, arg._version_counter[0])
            return


def _forward_inputs(cls, args: tuple, kwargs: dict) -> tuple:
    """The `inputs` setup_context receives: every argument of forward in order, defaults
    included, as PyTorch binds them."""
    try:
        bound = inspect.signature(cls.forward).bind(*args, **kwargs)
    except TypeError:
        return args
    bound.apply_defaults()
    return tuple(bound.arguments.values())


def _check_dirty_outputs(dirty: tuple, outputs: tuple) -> None:
    """PyTorch's rules for inputs changed in place: each is returned, and a view among them
    only by a Function with one output (its base is rewired through that output)."""
    if not all(any(output is tensor for output in outputs) for tensor in dirty):
        raise RuntimeError("Some elements marked as dirty during the forward method were not "
                           "returned as output. The inputs that are modified inplace must all "
                           "be outputs of the Function.")
    tensors = sum(isinstance(output, Tensor) for output in outputs)
    if tensors > 1 and any(tensor._view is not None for tensor in dirty):
        raise RuntimeError("your Function modifies inplace an input that is a view of another "
                           "Tensor and returns more than one output: this is not supported. "
                           "Clone the input before passing it, or return only that output.")


def _as_user_output(value, device, args, dirty):
    """A user forward's output: a Tensor marked dirty is returned itself (it is the changed
    input), another Tensor as `_as_output` makes it, an array as a tensor, anything else
    (numbers, strings, None) as it is."""
    if isinstance(value, Tensor):
        if any(value is tensor for tensor in dirty):
            return value
        return _as_output(value, device, args)
    if isinstance(value, np.ndarray | np.generic) or value.__class__.__module__.startswith("cupy"):
        return wrap_array(value, device)
    return value


def _check_dirty(dirty: tuple, args: tuple, graph: bool) -> tuple:
    """The dirty tensors that are inputs; PyTorch's error for a view that is not one, and its
    warning (the tensor is then ignored) for another tensor that is not one."""
    inputs = []
    for tensor in dirty:
        if not any(tensor is arg for arg in args):
            if tensor._view is not None:
                raise RuntimeError("mark_dirty received a tensor that was not an input. Only "
                                   "the forward's input tensors can be marked dirty; got a view "
                                   f"of shape {tuple(tensor.shape)} of another tensor")
            warnings.warn("mark_dirty was given a tensor that is not an input of forward; it "
                          "is ignored. Only inputs changed in place should be marked dirty.",
                          UserWarning, stacklevel=4)
            continue
        inputs.append(tensor)
        tensor._version_counter[0] += 1  # changed by the Function, as PyTorch counts it
        if graph and tensor._view is not None and tensor._view[2] is not None:
            refuse_view_update(tensor, "mark_dirty")
        base = tensor._view[0] if tensor._view is not None else tensor
        if graph and base.grad_fn is None and base._requires_grad:
            what = "a view of a leaf Variable" if base is not tensor else "a leaf Variable"
            raise LeafModifiedInPlaceError(
                f"{what} that requires grad is being used in an in-place operation: the "
                f"Function changed its input of shape {tuple(tensor.shape)} in place "
                f"(mark_dirty), but it is {what} that requires grad; pass a clone of it instead")
    return tuple(inputs)


class Op(Function):
    """A genesis op: the base of every Function genesis defines.

    An Op's forward computes on its inputs' arrays and records nothing, so `apply` runs it
    as it is (a user's Function runs with grad disabled, as its forward may use Tensor
    ops), and NumPy's shape errors are reworded with the op's name and the input shapes.
    `genesis trace` checks an Op's backward against finite differences only with
    --check-all; a user's Function's, always.

    >>> from genesis.ops.elementwise import Mul
    >>> issubclass(Mul, Op), Mul._builtin
    (True, True)
    """

    _builtin = True
    fresh_gradients = True


class DelayedError(Function):
    """`DelayedError.apply(*tensors, message=...)`: a copy of each tensor (None stays None), through
    one node (PyTorch's `Error`) whose backward raises RuntimeError(message). A backward that
    computes a correct gradient but not a differentiable one passes it through this under
    create_graph, so a second derivative is refused instead of silently wrong.

    >>> import genesis
    >>> x = genesis.tensor([2.0], requires_grad=True)
    >>> y = DelayedError.apply(x * 3, message="no second derivative here")
    >>> y.grad_fn, y.grad_fn.name()
    (<Error>, 'torch::autograd::Error')
    >>> y.sum().backward()
    Traceback (most recent call last):
    ...
    RuntimeError: no second derivative here
    (raised by the backward of Error)
    """

    node_name = "Error"
    node_class_name = "Error"

    @staticmethod
    def forward(ctx, *tensors, message: str):
        ctx.message = message  # a keyword: the node has one input per tensor, as PyTorch's
        copies = tuple(tensor.clone() if isinstance(tensor, Tensor) else tensor
                       for tensor in tensors)
        return copies if len(copies) != 1 else copies[0]

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError(ctx.message)


_new_object = object.__new__
# what a node has that an instance of its Function does not (Function.__getattr__)
_NODE_ATTRIBUTES = frozenset(("_register_hook_dict", "register_hook", "register_prehook",
                              "next_functions", "name", "_sequence_nr", "_set_sequence_nr",
                              "_input_metadata", "saved_tensors", "needs_input_grad"))


_NO_NEEDS = [(False,) * count for count in range(16)]


def _op_error(cls, args: tuple, error: Exception) -> RuntimeError:
    shapes = ", ".join(str(tuple(arg.shape)) for arg in args if isinstance(arg, Tensor))
    return RuntimeError(f"{_op_name(cls)}: {error} (input shapes: {shapes})")


def cpu_scalars_moved(op: str, args, device=None) -> tuple:
    """`args` with each 0-d CPU tensor copied (differentiably) to the device of the other
    tensors, as PyTorch lets such tensors join any op; a RuntimeError naming both devices
    when tensors of two devices remain. `device`: the one the op must run on (an in-place
    op's target's), else the first tensor's that is no CPU scalar."""
    tensors = [arg for arg in args if isinstance(arg, Tensor)]
    if device is None:
        device = next((t._device for t in tensors if not is_cpu_scalar(t)), tensors[0]._device)
    for tensor in tensors:
        if tensor._device is not device and not is_cpu_scalar(tensor):
            raise RuntimeError(device_mismatch_message(op, device, tensor._device))
    return tuple(arg.to(device) if isinstance(arg, Tensor) and arg._device is not device else arg
                 for arg in args)


def _op_name(cls) -> str:
    """The op's name in messages: `op_name` where a class sets one, else its node name in
    snake case (FloorDivide -> floor_divide)."""
    return cls.__dict__.get("op_name") or re.sub(r"(?<!^)(?=[A-Z])", "_", cls.node_name).lower()


def _first_device(args):
    for arg in args:
        if isinstance(arg, Tensor):
            return arg._device
        if arg.__class__ in (list, tuple):
            for item in arg:
                if isinstance(item, Tensor):
                    return item._device
    return cpu


def _as_output(value, device, args) -> Tensor:
    if isinstance(value, Tensor):
        for arg in args:
            if value is arg:  # forward returned its input: hand back an alias, not the input itself
                return wrap_array(value._data, value._device)
        if value.grad_fn is not None or value._requires_grad and value._view is None:
            value = wrap_array(value._data, value._device)  # (a view forward made is kept)
        return value
    if value is None:
        return None
    return wrap_array(value, device)


def _link_inputs(ctx: Node, args: tuple) -> None:
    """Record one edge per argument: where its gradient goes, and its shape/dtype/device."""
    nodes = []
    meta = []
    numbered = False  # an input that is a later output of its node (output_nr > 0)
    for arg in args:
        if isinstance(arg, Tensor) and arg._requires_grad:
            node = arg.grad_fn
            if node is None:
                node = gradient_edge(arg)[0]  # (a leaf's accumulator: output 0)
                nodes.append(node)
                if node._grad_dtype_set:  # its gradients are cast to Tensor.grad_dtype
                    meta += (arg._data.shape, node._grad_numpy_dtype, arg._device)
                    continue
            else:
                nodes.append(node)
                numbered = numbered or arg._output_nr != 0
            data = arg._data
            # flat: no tuple an input, made to be thrown away once the shared one is found
            meta += (data.shape, data.dtype, arg._device)
        else:
            nodes.append(None)
            meta.append(None)
    ctx._next_nodes = tuple(nodes)
    ctx._next_nrs = _numbers_of(args) if numbered else \
        _ZEROS[len(args)] if len(args) < len(_ZEROS) else (0,) * len(args)
    meta = tuple(meta)
    # the shared metadata and which inputs need a gradient (those with metadata), one lookup
    ctx._input_meta, ctx.needs_input_grad = _INPUTS.get(meta) or _shared_inputs(meta)
    ctx._saved = None
    ctx._output_meta = ()


def _numbers_of(args: tuple) -> tuple:
    """The output number of each argument in its node (0 for a leaf or a non-tensor), shared."""
    return shared_output_nrs(tuple(
        arg._output_nr if isinstance(arg, Tensor) and arg._requires_grad and arg.grad_fn is not None
        else 0 for arg in args))


_ZEROS = tuple((0,) * count for count in range(16))  # the output numbers of most ops


def _shared_inputs(flat: tuple) -> tuple:
    """(the shared input metadata, the shared tuple of which inputs need a gradient) for
    `flat`, `_link_inputs`' key: shape, dtype and device of each input that needs a gradient,
    None for the others. Kept in _INPUTS."""
    meta, index = [], 0
    while index < len(flat):
        if flat[index] is None:
            meta.append(None)
            index += 1
        else:
            meta.append(flat[index:index + 3])
            index += 3
    meta = tuple(meta)
    if len(_INPUTS) >= _MAX_SHARED:
        _INPUTS.clear()
    entry = _INPUTS[flat] = (shared(meta), shared(tuple(info is not None for info in meta)))
    return entry


# Metadata tuples in use (an op's input and output shapes, dtypes and devices; which inputs
# need a gradient), one object per distinct value: the nodes of a deep graph mostly repeat a
# few. Sharing them saves memory and, above all, the time Python's cyclic collector spends
# visiting each node's tuples as the graph grows (a chain of 100,000 ops: 20% of its forward).
_SHARED: dict = {}
_INPUTS: dict = {}  # an op's input metadata -> (it shared, which inputs need a gradient)
_MAX_SHARED = 4096  # distinct values kept (then the table starts again)
_OUTPUT_NRS: dict = {}  # output numbers: a table of their own (see shared_output_nrs)


def shared(value: tuple) -> tuple:
    """`value`, or the equal tuple already in use (read-only metadata only).

    >>> shared(((2, 3), "float32")) is shared(((2, 3), "float32"))
    True
    """
    return _in_use(_SHARED, value)


def shared_output_nrs(output_nrs: tuple) -> tuple:
    """`output_nrs`, or the equal tuple of output numbers already in use. A table of their
    own: in `_SHARED`, (0, 1) would be found equal to a (False, True) kept there.

    >>> shared_output_nrs((0, 0)) is shared_output_nrs((0, 0))
    True
    """
    return _in_use(_OUTPUT_NRS, output_nrs)


def _in_use(table: dict, value: tuple) -> tuple:
    found = table.get(value)
    if found is None:
        if len(table) >= _MAX_SHARED:
            table.clear()
        found = table[value] = value
    return found


def _link_outputs(ctx: Node, outputs: tuple) -> None:
    """Make `ctx` the grad_fn of each differentiable output; pack what forward saved."""
    non_differentiable = ctx._non_differentiable
    if len(outputs) == 1 and outputs[0] is not None and not non_differentiable:
        output = outputs[0]  # the usual case: one output, linked without the loop below
        data = output._data
        meta = (data.shape, data.dtype, output._device)
        ctx._output_meta = _ONE_OUTPUT.get(meta) or _shared_output(meta)
        if data.dtype in FLOATING_NUMPY_DTYPES:
            output._requires_grad = True
            output.grad_fn = ctx
            output._output_nr = 0
    else:
        output_meta = []
        for output_nr, output in enumerate(outputs):
            if output is None:
                output_meta.append(None)
                continue
            data = output._data
            output_meta.append((data.shape, data.dtype, output._device))
            if data.dtype in FLOATING_NUMPY_DTYPES and id(data) not in non_differentiable:
                output._requires_grad = True
                output.grad_fn = ctx
                output._output_nr = output_nr
        ctx._output_meta = shared(tuple(output_meta))
        if non_differentiable:  # which outputs: backward may get None for them (engine._materialize)
            ctx.__dict__["_non_diff_outputs"] = frozenset(
                nr for nr, output in enumerate(outputs)
                if output is not None and id(output._data) in non_differentiable)
    saved = ctx._saved
    if saved is not None:
        ctx._saved = _pack_saved(ctx, saved)


def _shared_output(meta: tuple) -> tuple:
    """The shared metadata of one output, `(meta,)`, kept in _ONE_OUTPUT by `meta`."""
    if len(_ONE_OUTPUT) >= _MAX_SHARED:
        _ONE_OUTPUT.clear()
    found = _ONE_OUTPUT[meta] = shared((meta,))
    return found


_ONE_OUTPUT: dict = {}  # an output's (shape, dtype, device) -> its node's shared metadata


def _pack_saved(ctx: Node, saved: tuple) -> tuple:
    """Each saved value as (value, version when saved or None for non-tensors, output_nr or -1).

    A saved output of this very node is kept without its grad_fn (no node ->
    tensor -> node cycle) and re-linked to the node when unpacked.
    """
    packed = []
    hooked = bool(saved_hooks.stack)
    for value in saved:
        if not isinstance(value, Tensor):  # (None, what an op saves for an input without
            packed.append(_SAVED_NONE if value is None else (value, None, -1))  # a gradient)
            continue
        if value._version_counter.__class__ is not list and is_inference_tensor(value):
            raise RuntimeError(
                f"{type(ctx).__name__}: Inference tensors cannot be saved for backward: a tensor "
                f"of shape {tuple(value.shape)} made inside inference_mode() is used in a "
                "computation autograd records. To work around you can make a clone to get a "
                "normal tensor and use it in autograd.")
        if hooked:  # graph.saved_tensors_hooks: the hook's result is kept instead
            edge = (None, value._output_nr) if value.grad_fn is ctx else \
                gradient_edge(value) if value._requires_grad else None
            packed.append((pack_with_hooks(value, edge), None, -1))
        elif value.grad_fn is ctx:
            packed.append((_detached_alias(value), value._version_counter[0], value._output_nr))
        else:  # -2: made by a node, so unpacking refuses it once detached in place
            packed.append((value, value._version_counter[0], -1 if value.grad_fn is None else -2))
    return tuple(packed)


_SAVED_NONE = (None, None, -1)  # one packed None for every node


def unpack_saved(node: Node, index: int, entry: tuple):
    """Saved value `index` of `node` (its packed `entry`) as backward reads it: checked for
    in-place changes and for being detached in place, a saved output linked to `node` again,
    a value saved under saved-tensor hooks unpacked by its unpack hook."""
    tensor, version, output_nr = entry
    if version is not None:
        if tensor._version_counter[0] != version:
            raise SavedTensorModifiedError(_modified_message(node, index, tensor, version),
                                           node, index)
        if output_nr >= 0:
            return _reattach_output(tensor, node, output_nr)
        if output_nr == -2 and tensor.grad_fn is None:
            raise RuntimeError(f"Trying to use a saved tensor that has been detached: "
                               f"{type(node).__name__} saved tensor {index} (shape "
                               f"{tuple(tensor.shape)}) was detached in place (.detach_()) after "
                               "it was saved for backward; detach a copy (.detach()) instead."
                               + _where(node))
    elif tensor.__class__ is PackedSaved:  # saved under saved_tensors_hooks
        return tensor.unpack(node)
    return tensor


def mark_view(output: Tensor, args: tuple, kwargs: dict, cls, creation=None) -> None:
    """An output sharing storage with input 0 shares its version counter and remembers how
    it was derived from the base tensor (for in-place updates through the view), and how it
    was made when PyTorch forbids changing it in place with a graph (`creation`, see
    `refuse_view_update`): one of several views an op returned ("multi_output", its index),
    or a view made with grad disabled ("no_grad"); a view of such a view inherits it. The
    last entry of `_view` is the storage's version when the view's grad_fn was made: once
    the storage changes in place (through the base or another view), the view's grad_fn is
    stale and is rebuilt from the base's before the view is used (`refresh_stale_view`)."""
    source = args[0]
    out_array, in_array = output._data, source._data
    out_owner = out_array if out_array.base is None else out_array.base
    in_owner = in_array if in_array.base is None else in_array.base
    if out_owner is not in_owner:
        return
    output._version_counter = source._version_counter
    if source._version_counter.__class__ is not list:  # a view of an inference tensor is one
        return                                          # too, and not a view (as in PyTorch)
    step = (cls, args[1:], kwargs)
    # made with grad disabled: marked so even when it is one of several views (as in PyTorch)
    if not grad_state.enabled and (creation is None or creation[0] == "multi_output"):
        creation = ("inference_mode", None) if inference_state.depth else ("no_grad", None)
        # keeps its base's requires_grad, as PyTorch's views made with grad disabled: a leaf
        # without grad_fn, which refuses in-place changes once grad is enabled
        output._requires_grad = source._requires_grad
    version = source._version_counter[0]
    if source._view is None:
        output._view = (source, (step,), creation, version)
    else:
        base, steps, inherited, _ = source._view
        output._view = (base, steps + (step,), inherited and (inherited[0], "inherited") or creation,
                        version)


_view_rebuilders = []  # genesis.ops.views registers how a view's grad_fn is rebuilt


def register_view_rebuilder(rebuild, rebase) -> None:
    """Called once by genesis.ops.views: `rebuild(view)` gives a view whose storage changed
    in place a grad_fn reading its region of the base's current value; `rebase(view, value)`
    rewires base and view after `value` was written into the view."""
    _view_rebuilders[:] = [rebuild, rebase]


def _rebase_dirty_views(dirty: tuple) -> None:
    """A custom Function changed views in place (mark_dirty): their bases take the change."""
    for tensor in dirty:
        if tensor._view is not None and _view_rebuilders:
            tensor._view = tensor._view[:3] + (tensor._version_counter[0],)  # its grad_fn is
            _view_rebuilders[1](tensor, tensor)                            # this Function's


def _register_refresher() -> None:
    tensor_module.view_refreshers[:] = [_refresh_requires_grad]


def _refresh_requires_grad(view: Tensor) -> None:
    """`view.requires_grad` of a view whose storage changed in place: that of its rebuilt
    grad_fn; a view that can't be rebuilt (see `refuse_view_update`) requires grad if its
    base does, as PyTorch's, and stays stale until it is used."""
    if view._view[2] is None:
        refresh_stale_view(view)
    elif view._view[0]._requires_grad:
        view._requires_grad = True


def refresh_stale_view(view: Tensor) -> None:
    """Rebuild the grad_fn of a view whose storage changed in place since it was made (as
    PyTorch regenerates it): its gradient then flows to the base's current graph. PyTorch's
    error for a view it can't rebuild (one of several views of one op, a view made with grad
    disabled or by a custom Function) whose base requires grad."""
    base, steps, creation, _ = view._view
    if not grad_state.enabled:
        return  # rebuilt when the view next takes part in a recorded graph
    if base._requires_grad and _view_rebuilders:
        if creation is not None:
            refuse_view_update(view, None)
        old = view.grad_fn
        _view_rebuilders[0](view)
        move_retained_grad(view, old)
    view._view = (base, steps, creation, view._version_counter[0])


def move_retained_grad(tensor: Tensor, old_node) -> None:
    """After an in-place change gave `tensor` a new grad_fn, its retain_grad() follows it."""
    if not tensor._retains_grad or old_node is None or old_node is tensor.grad_fn:
        return
    if old_node._retained:
        for output_nr, reference in list(old_node._retained.items()):
            if reference() is tensor:
                del old_node._retained[output_nr]
    if tensor.grad_fn is not None:
        tensor.grad_fn._retain_output(tensor._output_nr, tensor)


def refuse_view_update(view: Tensor, op: str | None) -> None:
    """PyTorch's errors for an in-place change, recorded in a graph, of a view it cannot
    rebase: one of several views returned by one op (split, chunk, unbind), a view a custom
    Function returned, or a view made under no_grad or inference_mode. `op` None: the change
    was made through the view's base (or another view of it), and the view is used since."""
    kind, detail = view._view[2]
    prefix = f"{op}: " if op is not None else ""
    change = ("is being modified inplace" if op is not None else
              "its base or another view of its base has been modified inplace")
    if kind == "multi_output" and detail != "inherited":
        index, name = detail
        raise RuntimeError(
            f"{prefix}Output {index} of {name}Backward0 is a view and {change}. This view is "
            "the output of a function that returns multiple views. Such functions do not allow "
            "the output views to be modified inplace. You should replace the inplace operation "
            "by an out-of-place one (or clone the piece first).")
    what = "is a view of a view which was" if detail == "inherited" else "was"
    if kind == "custom_function":
        output = ""
        if detail != "inherited":
            index, node, several = detail
            output = f"Output {index} of {node} is a view and {change}. "
            if several:
                raise RuntimeError(
                    f"{prefix}{output}This view is the output of a function that returns "
                    "multiple views (a custom Function with several outputs). Such functions do "
                    "not allow the output views to be modified inplace. You should replace the "
                    "inplace operation by an out-of-place one (or clone the output first).")
        raise RuntimeError(
            f"{prefix}{output}This view was created inside a custom Function (or because an "
            "input was returned as-is) and the autograd logic to handle view+inplace would "
            "override the custom backward associated with the custom Function, leading to "
            "incorrect gradients. This behavior is forbidden. You can fix this by cloning the "
            "output of the custom Function.")
    if kind == "inference_mode":
        raise RuntimeError(
            f"{prefix}A view {what} created in inference mode and {change} in normal mode: "
            "clone the view first, or make both the view and the change inside the "
            "inference_mode block (or both outside).")
    origin = ("created in no_grad mode" if kind == "no_grad" else
              "the output of a function that returns multiple views")
    raise RuntimeError(
        f"{prefix}A view {what} {origin} and {change} with grad mode enabled. Given that this "
        "use case is ambiguous and error-prone, it is forbidden. You can clarify your code by "
        "moving both the view and the inplace either both inside the no_grad block (if you "
        "don't want the inplace to be tracked) or both outside (if you want the inplace to be "
        "tracked), or by cloning the view first.")


def _detached_alias(tensor: Tensor) -> Tensor:
    alias = wrap_array(tensor._data, tensor._device)
    alias._version_counter = tensor._version_counter
    return alias


def _reattach_output(alias: Tensor, node: Node, output_nr: int) -> Tensor:
    tensor = _detached_alias(alias)
    tensor._requires_grad = True
    tensor.grad_fn = node
    tensor._output_nr = output_nr
    return tensor


def _where(node: Node) -> str:
    source = node._source
    return f" The forward call was at {source}." if source is not None else (
        " Run under genesis.autograd.detect_anomaly() to see where that forward was called.")


def _freed_message(node: Node) -> str:
    return (f"Trying to backward through the graph a second time (or directly access saved "
            f"tensors after they have already been freed): {type(node).__name__}'s saved tensors "
            "were freed after the first backward. Specify retain_graph=True in the first "
            "backward() (or autograd.grad()) if you need to backward through the graph a "
            "second time." + _where(node))


def _modified_message(node: Node, index: int, tensor: Tensor, version: int) -> str:
    return (f"one of the variables needed for gradient computation has been modified by an "
            f"inplace operation: one of the tensors saved by {type(node).__name__} for its "
            f"backward (saved tensor {index}, shape {tuple(tensor.shape)}, {tensor.dtype.name}) was modified by an "
            f"in-place operation: it is now at version {tensor._version_counter[0]}, but was saved at "
            f"version {version}. Use the out-of-place form of that operation (e.g. `y = y * 2` "
            "instead of `y *= 2`) or .clone() the tensor before changing it." + _where(node))


_register_refresher()
