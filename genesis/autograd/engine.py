"""The backward engine: runs a graph's nodes in dependency order, without recursion.

Discovery walks the nodes' edges (`_next_nodes`, the nodes of `next_functions`) with an
explicit stack and counts, for each node, the edges that reach it; a node runs once all
of them have delivered their gradient, so every node's gradients are summed before it
runs, in one pass. Gradients go to the next nodes by position; the engine sums a gradient
back to its input's shape when the backward left it broadcast.

Ownership: the engine owns a waiting gradient when nothing outside it has seen its array
(it made the array by summing, or an Op returned it as a new array, see
`Function.fresh_gradients`). It adds into an owned gradient in place and hands it to a leaf
as `.grad` without a copy; one that a hook, a checker or the caller has seen, or that a
user's Function returned, is added out of place and copied. `owned` in `run_graph` maps a
node to the bits (1 << output_nr) of its waiting gradients that the engine owns.
"""
from __future__ import annotations

import threading
import warnings
from collections.abc import Mapping
from typing import Protocol

import numpy as np

from ..device import writeable
from ..dtypes import FLOATING_NUMPY_DTYPES
from ..listeners import Listeners
from ..tensor import Tensor, wrap_array
from .function import AccumulateGrad, GradientEdge, gradient_edge
from .grad_mode import grad_state
from .graph_task import (NESTED_PER_THREAD, GraphTask, current, current_graph_task_id,
                         on_fresh_thread, running as _running, will_engine_execute_node)
from .hooks import checked_gradient, checked_node_gradients, describe_hook, run_hook
from .saved_hooks import state as saved_hooks
from .unbroadcast import sum_to_shape

__all__ = ["backward", "grad", "node_checkers", "node_start_observers", "backward_listeners",
           "failure_listeners", "NodeStartObserver",
           "unwatched", "NodeChecker", "BackwardListener", "FailureListener",
           "current_graph_task_id", "will_engine_execute_node",
           "current_graph_task_execution_order", "running_node"]

class NodeChecker(Protocol):
    """Called after each node's backward (anomaly mode, `genesis trace`, gradcheck's layout
    check) with the gradients it got and gave; `flowed_from` maps a node to the node that
    first sent it gradient, so a checker can print the chain the gradient took.

    A checker may keep the gradients it is shown: while one is registered, the engine owns
    none (adds out of place, copies what becomes `.grad`). One that only reads them during
    the call (counts, checks shapes; on a GPU, launches its reading kernels then) sets
    `keeps_gradients = False`, and the engine goes on owning them."""

    keeps_gradients: bool

    def __call__(self, node, grad_outputs: list, grad_inputs: tuple, flowed_from: dict) -> None:
        ...


class NodeStartObserver(Protocol):
    """Called before each node's backward runs (the profiler notes when it started; the node
    checkers are told when it ended)."""

    def __call__(self, node) -> None:
        ...


class BackwardListener(Protocol):
    """Told when a backward pass starts and ends (graph recording). `run` is the pass's
    `flowed_from` dict (the object the node checkers receive); `completed` is False when
    the pass ended with an exception. A pass started while another runs on the same
    thread is part of that one (see `_Watched`): listeners are not told of it."""

    def backward_started(self, run: dict) -> None:
        ...

    def backward_finished(self, run: dict, completed: bool) -> None:
        ...


class FailureListener(Protocol):
    """Told when a node's backward (its hooks, or a node checker on it) raised, before the
    error leaves the engine (anomaly mode prints the forward call that made the node)."""

    def __call__(self, node, error: BaseException) -> None:
        ...


node_checkers: Listeners[NodeChecker] = Listeners()
node_start_observers: Listeners[NodeStartObserver] = Listeners()
backward_listeners: Listeners[BackwardListener] = Listeners()
failure_listeners: Listeners[FailureListener] = Listeners()


class _Pass:
    """A watched backward pass running on this thread: its `flowed_from`, and the node whose
    gradients it is handling (the node a backward call made now is made inside)."""

    __slots__ = ("flowed_from", "node")

    def __init__(self, flowed_from: dict):
        self.flowed_from = flowed_from
        self.node = None


class _Watched(threading.local):
    """The watched passes (those with node checkers or listeners) running on this thread,
    innermost last. A backward call made while one runs (checkpoint's recomputation, a
    double backward inside a custom Function's backward) is part of the running call, not
    a step of its own: its nodes share that call's `flowed_from`, in which its roots are
    noted as sent gradient by the node whose backward made the call (so a checker follows
    a chain from the outer root into it), and listeners hear only of the outer call."""

    def __init__(self):
        self.passes = []


_watched = _Watched()


def running_node():
    """The node whose backward runs now on this thread, in a watched pass (node checkers or
    listeners registered: anomaly mode, tracing); None otherwise."""
    passes = _watched.passes
    return passes[-1].node if passes else None


# The thread-local state a nested backward moved to a fresh thread starts with
_carried = ((grad_state, ("enabled", "in_backward", "local_autocast")),
            (saved_hooks, ("stack", "disabled")), (_watched, ("passes",)))


class _Unwatched(threading.local):
    """`with unwatched:` marks the forward and backward calls made inside, on this thread, as
    genesis's own (gradcheck's evaluations of a function), not the script's: tools that
    watch a script's steps (genesis trace) skip them while `unwatched.depth` is above 0.
    The engine itself runs them as any other call."""

    depth = 0

    def __enter__(self) -> None:
        self.depth += 1

    def __exit__(self, *exc_info) -> None:
        self.depth -= 1


unwatched = _Unwatched()


_task_ids = iter(range(1 << 62))  # next() on it is atomic under the GIL


def _is_checkpoint_valid(internal=()) -> bool:
    """False inside a backward pass that computes only some gradients (`grad()`, `inputs=`);
    the running passes at the positions in `internal` (genesis's own) are looked through."""
    tasks = _running.tasks
    for position in range(len(tasks) - 1, -1, -1):
        if position not in internal:
            return not tasks[position].partial
    return True


def _running_passes() -> int:
    """How many backward passes are running on this thread."""
    return len(_running.tasks)


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None) -> None:
    """Accumulate into `.grad` of graph leaves the gradient of `tensors`.

    With `inputs`, only those tensors receive `.grad` (as in PyTorch).
    """
    if create_graph:
        warnings.warn(
            "Using backward() with create_graph=True will create a reference cycle between the "
            "parameter and its gradient which can cause a memory leak. We recommend using "
            "autograd.grad when creating the graph to avoid this. If you have to use this "
            "function, make sure to reset the .grad fields of your parameters to None after use "
            "to break the cycle and avoid the leak.", UserWarning, stacklevel=3)
    if tensors.__class__ is Tensor and grad_tensors is None and inputs is None \
            and tensors._requires_grad and tensors._data.size == 1:  # loss.backward()
        run_graph([gradient_edge(tensors)], _root_grads((tensors,), None),
                  create_graph if retain_graph is None else retain_graph, create_graph)
        return
    tensors = _as_tuple(tensors)
    grads = _root_grads(tuple(_stand_in(tensor) for tensor in tensors), grad_tensors)
    if retain_graph is None:
        retain_graph = create_graph
    roots = [_root_edge(tensor, index) for index, tensor in enumerate(tensors)]
    if inputs is None:
        run_graph(roots, grads, retain_graph, create_graph)
        return
    inputs = _as_tuple(inputs)
    if not inputs:
        raise RuntimeError("'inputs' argument to backward() cannot be empty: pass the tensors "
                           "whose .grad should be filled, or leave inputs out for every leaf")
    # As in PyTorch, the inputs' nodes run (a leaf's AccumulateGrad fills its .grad, a
    # non-leaf input retains its grad), and so do the nodes leading to them, no others.
    targets = [_input_edge(tensor, index) for index, tensor in enumerate(inputs)]
    for tensor in inputs:
        if tensor.__class__ is not GradientEdge and tensor.grad_fn is not None:
            tensor.retain_grad()
    run_graph(roots, grads, retain_graph, create_graph, targets=targets)


class EmptyInputsError(ValueError, RuntimeError):
    """`grad` asked for no inputs (a RuntimeError in PyTorch 2.13, a ValueError in later
    versions: both are caught)."""


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=None, is_grads_batched=False,
         materialize_grads=False) -> tuple | dict:
    """Return the gradients of `outputs` w.r.t. `inputs` without touching `.grad`.

    `inputs` given as a dict (say `dict(model.named_parameters())`) gives a dict of the
    gradients under the same keys. `only_inputs` is PyTorch's deprecated, ignored flag.

    With `is_grads_batched=True`, the first dimension of each of `grad_outputs` is a batch:
    each row gives one vector-Jacobian product, and each result has that batch dimension.

    >>> import genesis
    >>> x = genesis.tensor(3.0, requires_grad=True)
    >>> (dx,) = genesis.autograd.grad(x ** 3, x, create_graph=True)
    >>> dx, genesis.autograd.grad(dx, x)[0]
    (tensor(27., grad_fn=<MulBackward0>), tensor(18.))
    """
    if not only_inputs:
        warnings.warn("only_inputs argument is deprecated and is ignored now (defaults to "
                      "True). To accumulate gradient for other parts of the graph, please use "
                      "torch.autograd.backward.", FutureWarning, stacklevel=2)
    if type(inputs) is dict:
        gradients = grad(outputs, tuple(inputs.values()), grad_outputs, retain_graph,
                         create_graph, allow_unused=allow_unused,
                         is_grads_batched=is_grads_batched, materialize_grads=materialize_grads)
        return dict(zip(inputs, gradients))
    if isinstance(inputs, Mapping):
        raise TypeError(f"`inputs` argument to `grad()` must be a dict, not "
                        f"{type(inputs).__name__}. Other Mapping types are not supported.")
    outputs = _as_tuple(outputs)
    inputs_tuple = _as_tuple(inputs)
    if not inputs_tuple:
        raise EmptyInputsError("grad requires non-empty inputs: `inputs` argument to `grad()` "
                               "cannot be empty.")
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when materialize_grads=True, "
                         "but got: allow_unused=False.")
    allow_unused = materialize_grads if allow_unused is None else allow_unused
    if is_grads_batched:
        return _batched_grad(outputs, inputs_tuple, grad_outputs, retain_graph, create_graph,
                             allow_unused, materialize_grads)
    if materialize_grads:  # outputs outside the graph contribute zeros: leave them out
        kept = [index for index, output in enumerate(outputs)
                if output.__class__ is GradientEdge or output._requires_grad]
        outputs = tuple(outputs[index] for index in kept)
        if grad_outputs is not None and not isinstance(grad_outputs, Tensor):
            grad_outputs = [list(grad_outputs)[index] for index in kept]
        if not outputs:
            return tuple(_materialized_zeros(t, create_graph) for t in inputs_tuple)
    grads = _root_grads(tuple(_stand_in(output) for output in outputs), grad_outputs)
    if retain_graph is None:
        retain_graph = create_graph
    roots = [_root_edge(tensor, index) for index, tensor in enumerate(outputs)]
    targets = [_input_edge(tensor, index) for index, tensor in enumerate(inputs_tuple)]
    captured = run_graph(roots, grads, retain_graph, create_graph, targets=targets, for_grad=True)
    result = []
    for index, (tensor, gradient) in enumerate(zip(inputs_tuple, captured)):
        if gradient is None:
            if tensor.__class__ is GradientEdge and (materialize_grads or not allow_unused):
                raise RuntimeError(
                    f"input {index} is a GradientEdge that no gradient reached: "
                    + ("materialize_grads cannot be used when the given input is a GradientEdge"
                       if materialize_grads else "pass allow_unused=True to get None for it"))
            if materialize_grads:
                gradient = _materialized_zeros(tensor, create_graph)
            elif not allow_unused:
                raise RuntimeError(
                    f"The differentiated Tensor at index {index} appears to not have been used in "
                    f"the graph: input {index} (shape {tuple(tensor.shape)}) was not used to "
                    "compute the outputs, so it has no gradient. Set allow_unused=True if this "
                    "is the desired behavior (the gradient is then None).")
        result.append(gradient)
    return tuple(result)


def _materialized_zeros(tensor: Tensor, create_graph: bool) -> Tensor:
    """The zeros `materialize_grads` gives an input no gradient reached: a leaf that requires
    grad under create_graph (so a further grad through it works), as PyTorch's."""
    zeros = wrap_array(tensor._device.xp.zeros_like(tensor._data), tensor._device)
    zeros._requires_grad = create_graph
    return zeros


def _batched_grad(outputs: tuple, inputs: tuple, grad_outputs, retain_graph, create_graph,
                  allow_unused, materialize_grads) -> tuple:
    """`grad` for each row of the batched `grad_outputs`, the results stacked (PyTorch
    vectorizes this with vmap; the rows here run one after another)."""
    if grad_outputs is None:
        raise RuntimeError("is_grads_batched=True needs grad_outputs: give each output a "
                           "gradient whose first dimension is the batch")
    grad_outputs = (grad_outputs,) if isinstance(grad_outputs, Tensor) else tuple(grad_outputs)
    batch = None
    for index, (output, gradient) in enumerate(zip(outputs, grad_outputs)):
        if gradient is None:
            continue
        if gradient.dim() == 0 or gradient.shape[1:] != output.shape:
            raise RuntimeError(
                "If `is_grads_batched=True`, we interpret the first dimension of each "
                "grad_output as the batch dimension. The sizes of the remaining dimensions are "
                "expected to match the shape of corresponding output, but a mismatch was "
                f"detected: grad_output[{index}] has a shape of {tuple(gradient.shape[1:])} "
                f"after its batch dimension (in all {tuple(gradient.shape)}) and output[{index}] "
                f"has a shape of {tuple(output.shape)}.")
        if batch is not None and gradient.shape[0] != batch:
            raise RuntimeError(f"is_grads_batched=True: grad_output[{index}] has a batch of "
                               f"{gradient.shape[0]} row{'s' if gradient.shape[0] != 1 else ''}, "
                               f"the ones before it {batch}")
        batch = gradient.shape[0]
    if retain_graph is None:
        retain_graph = create_graph
    rows = [grad(outputs, inputs, [None if g is None else g[row] for g in grad_outputs],
                 retain_graph=retain_graph or row < batch - 1, create_graph=create_graph,
                 allow_unused=allow_unused, materialize_grads=materialize_grads)
            for row in range(batch or 0)]
    return tuple(_stacked([row[index] for row in rows], create_graph)
                 for index in range(len(inputs)))


def _stacked(gradients: list, create_graph: bool):
    """The rows' gradients of one input along a new first dimension (None if none came)."""
    if not gradients or any(gradient is None for gradient in gradients):
        return None
    device = gradients[0]._device
    if not create_graph:
        return wrap_array(device.xp.stack([gradient._data for gradient in gradients]), device)
    stacked = None  # a sum of one-hot rows, recorded (so that it can be differentiated)
    for row, gradient in enumerate(gradients):
        one_hot = device.xp.zeros((len(gradients),) + (1,) * gradient.dim(), gradient._data.dtype)
        one_hot[row] = 1
        term = wrap_array(one_hot, device) * gradient
        stacked = term if stacked is None else stacked + term
    return stacked


def _as_tuple(value) -> tuple:
    if isinstance(value, Tensor | GradientEdge):
        return (value,)
    return tuple(value)


def _stand_in(value):
    """An output as `_root_grads` reads it: a GradientEdge as an (uninitialised) tensor of
    the shape, dtype and device of the node's output it names."""
    if value.__class__ is not GradientEdge:
        return value
    shape, numpy_dtype, device = value.node._output_meta[value.output_nr]
    return wrap_array(device.xp.empty(shape, numpy_dtype), device)


def _root_edge(tensor: Tensor, index: int) -> tuple:
    if tensor.__class__ is GradientEdge:
        return tensor.node, tensor.output_nr
    if not tensor._requires_grad:
        raise RuntimeError(
            f"element {index} of tensors does not require grad and does not have a grad_fn: "
            "nothing it was computed from requires grad. Create the inputs with requires_grad=True (and not under "
            "genesis.no_grad()) to differentiate it.")
    return gradient_edge(tensor)


def _input_edge(tensor: Tensor, index: int) -> tuple:
    if tensor.__class__ is GradientEdge:
        return tensor.node, tensor.output_nr
    if not isinstance(tensor, Tensor):
        raise TypeError(f"inputs[{index}] is a {type(tensor).__name__}, expected a Tensor")
    if not tensor._requires_grad:
        raise RuntimeError(f"One of the differentiated Tensors does not require grad: inputs[{index}] "
                           "does not; set requires_grad=True on it before computing the outputs")
    return gradient_edge(tensor)


def _root_grads(tensors: tuple, grad_tensors) -> list:
    if grad_tensors is None and len(tensors) == 1 and tensors[0]._data.size == 1:  # loss.backward()
        data, device = tensors[0]._data, tensors[0]._device
        return [wrap_array(_ones_like(data, device.xp), device)]
    if grad_tensors is None or isinstance(grad_tensors, Tensor):
        grad_tensors = [grad_tensors] * len(tensors) if grad_tensors is None else [grad_tensors]
    grad_tensors = list(grad_tensors)
    if len(grad_tensors) != len(tensors):
        given, wanted = len(grad_tensors), len(tensors)
        raise RuntimeError(f"got {given} gradient{'s' if given != 1 else ''} for {wanted} "
                           f"output{'s' if wanted != 1 else ''}")
    grads = []
    for index, (tensor, gradient) in enumerate(zip(tensors, grad_tensors)):
        if gradient is None:
            if tensor._data.size != 1:
                raise RuntimeError(
                    f"grad can be implicitly created only for scalar outputs, but output "
                    f"{index} has shape {tuple(tensor.shape)}; pass gradient= (a tensor of that "
                    "shape, e.g. genesis.ones_like(out)) to backward(), or reduce it first (.sum()).")
            gradient = wrap_array(_ones_like(tensor._data, tensor._device.xp), tensor._device)
        elif not isinstance(gradient, Tensor):
            gradient = Tensor(gradient, device=tensor._device, dtype=tensor.dtype)
        elif gradient.shape != tensor.shape:
            raise RuntimeError(f"Mismatch in shape: grad_output[{index}] has a shape of "
                               f"{tuple(gradient.shape)} and output[{index}] has a shape of "
                               f"{tuple(tensor.shape)}.")
        elif gradient._device is not tensor._device:
            raise RuntimeError(f"gradient {index} is on {gradient.device} but output {index} is "
                               f"on {tensor.device}; move it there with .to('{tensor.device}')")
        elif gradient._data.dtype != tensor._data.dtype:
            gradient = gradient.to(tensor.dtype)
        grads.append(gradient)
    return grads


def _ones_like(array, xp):
    """An array of ones like a one-element `array`; a 0-d one (the usual loss) via the
    cheaper np.array on the CPU (on a GPU that would be a copy from the host: a fill kernel
    does not wait on it)."""
    return np.array(1, array.dtype) if xp is np and array.ndim == 0 else xp.ones(array.shape, array.dtype)


def run_graph(roots, root_grads, retain_graph, create_graph, targets=None, for_grad=False):
    """Run backward from `roots` (edges) seeded with `root_grads`.

    Without `targets`, gradients accumulate into leaves' `.grad`. With `targets` (edges),
    only the nodes leading to them run: with `for_grad` (`autograd.grad`) the targets' nodes
    do not, nothing is accumulated, and the gradient reaching each target is returned;
    without it (`backward(inputs=)`) the targets' nodes run too (and accumulate).
    """
    if len(_running.tasks) >= NESTED_PER_THREAD:  # deep reentrant backward: a fresh stack
        return on_fresh_thread(run_graph, _carried, roots, root_grads, retain_graph,
                               create_graph, targets, for_grad)
    root_nodes = []
    for node, _ in roots:
        if node not in root_nodes:
            root_nodes.append(node)
    if targets is None:
        dependencies, runs = _count_dependencies(root_nodes), None
        capture = None
    elif not for_grad:  # backward(inputs=): the targets run too
        dependencies, runs = _plan_for_targets(root_nodes, {node for node, _ in targets}, True)
        capture = None
    else:
        dependencies, runs = _plan_for_targets(root_nodes, {node for node, _ in targets})
        capture = {}
        for node, output_nr in targets:
            capture.setdefault(node, set()).add(output_nr)
    buffers = {}
    for (node, output_nr), gradient in zip(roots, root_grads):
        _add_to_buffer(buffers, node, output_nr, gradient)
    ready = [node for node in root_nodes if dependencies[node] == 0]
    captured = {}
    checkers = list(node_checkers) if node_checkers else ()
    starters = list(node_start_observers) if node_start_observers else None
    # Gradients the engine may add into and hand over (see the module docstring): none when
    # creating a graph (gradients are recorded) or when checkers may keep them.
    lending = create_graph or bool(checkers) and any(
        getattr(checker, "keeps_gradients", True) for checker in checkers)
    owned = {}
    listeners = list(backward_listeners) if backward_listeners else ()
    passes = _watched.passes
    if passes:  # made inside a watched call's backward on this thread: part of that call
        outer = passes[-1]
        flowed_from, listeners = outer.flowed_from, []
        for node in root_nodes:
            flowed_from.setdefault(node, outer.node)
    else:
        flowed_from = {} if checkers or listeners else None
    for listener in listeners:
        listener.backward_started(flowed_from)
    previous_mode, grad_state.enabled = grad_state.enabled, bool(create_graph)
    previous_in_backward, grad_state.in_backward = grad_state.in_backward, True
    quiet = np.errstate(divide="ignore", invalid="ignore", over="ignore")  # 0*inf is nan, silently
    quiet.__enter__()
    completed = False
    watched = _Pass(flowed_from) if flowed_from is not None else None
    if watched is not None:
        passes.append(watched)
    # backward sees the saved-tensor hooks in force when it started; hooks its own code
    # enters or leaves end with it (as PyTorch's engine restores its thread-local state)
    hooks_stack = saved_hooks.stack
    saved_hooks.stack = list(hooks_stack)
    task = GraphTask(next(_task_ids), dependencies, retain_graph, targets is not None, for_grad)
    task.roots, task.targets = root_nodes, targets
    _running.tasks.append(task)
    node = None
    try:
        while ready:
            node = task.node = ready.pop()
            if watched is not None:
                watched.node = node
            grads = buffers.pop(node, None)
            if grads is None:  # no gradient reached this node: nothing flows on from an op;
                # a user's Function is called all the same (with zeros, or Nones), as in PyTorch
                if node._forward_cls is None or node._forward_cls._builtin:
                    _release_children(node, dependencies, runs, ready)
                    continue
                grads = [None] * len(node._output_meta)
            held = owned.pop(node, 0) if owned else 0  # the bits of the ones the engine owns
            if node.__class__ is AccumulateGrad:
                _accumulate_leaf(node, grads, create_graph, capture, captured, held & 1)
                continue
            if node._tensor_hooks is not None or node._retained is not None:
                _run_tensor_hooks(node, grads)
                held = 0  # the hooks have seen them
            if capture is not None:
                if node in capture:
                    held = 0  # handed to the caller
                    for output_nr in capture[node]:
                        captured[(node, output_nr)] = grads[output_nr]
            if runs is not None and node not in runs:
                _release_children(node, dependencies, runs, ready)
                continue
            if starters is not None:
                for starter in starters:
                    starter(node)
            grad_inputs = _call_backward(node, grads)
            if not retain_graph and node._saved is not None:
                node._release()
            for checker in checkers:
                checker(node, grads, grad_inputs, flowed_from)
            if not node._forward_cls._builtin:  # after the checkers, which name what they find
                check_user_gradients(node, grad_inputs)
            # Route each input's gradient to the node it came from, by position.
            input_meta, output_nrs = node._input_meta, node._next_nrs
            for index, child in enumerate(node._next_nodes):
                if child is None or (runs is not None and child not in dependencies):
                    continue
                output_nr = output_nrs[index]
                remaining = dependencies[child] - 1  # edges still to deliver to child
                dependencies[child] = remaining
                gradient = grad_inputs[index]
                if gradient is not None:
                    meta = input_meta[index]
                    conformed = gradient.__class__ is not Tensor or gradient._data.shape != meta[0] \
                        or gradient._data.dtype != meta[1] or gradient._device is not meta[2]
                    if conformed:
                        gradient = _conform(node, index, gradient, meta)
                    child_grads = buffers.get(child)
                    if child_grads is None:
                        child_grads = buffers[child] = [None] * len(child._output_meta)
                    existing = child_grads[output_nr]
                    if existing is None:
                        child_grads[output_nr] = gradient
                        # Owned? (asked only where it can matter: a leaf's slot, or a slot
                        # that another gradient will be added into)
                        if not lending and (remaining or child.__class__ is AccumulateGrad) and (
                                gradient._data.base is None if conformed  # summed or cast here
                                else node._forward_cls.fresh_gradients and not node._hooks
                                and not node._prehooks and _is_fresh(gradient, grad_inputs, grads, held)):
                            owned[child] = owned.get(child, 0) | 1 << output_nr
                    else:  # the sum is owned: a new array, or the owned one added into
                        bits = owned.get(child, 0)
                        child_grads[output_nr] = _summed(existing, gradient, create_graph,
                                                         bits >> output_nr & 1)
                        if not lending:
                            owned[child] = bits | 1 << output_nr
                    if flowed_from is not None and child not in flowed_from:
                        flowed_from[child] = node
                if remaining == 0:
                    ready.append(child)
            grad_inputs = gradient = existing = None
        node = None
        if task.callbacks is not None:
            task.run_callbacks()
        completed = True
    except BaseException as error:
        if failure_listeners and node is not None:
            for listener in list(failure_listeners):
                listener(node, error)
        raise
    finally:
        quiet.__exit__(None, None, None)
        grad_state.enabled = previous_mode
        grad_state.in_backward = previous_in_backward
        saved_hooks.stack = hooks_stack
        _running.tasks.pop()
        if watched is not None:
            passes.pop()
        for listener in listeners:
            listener.backward_finished(flowed_from, completed)
    if targets is None:
        return None
    return [captured.get(edge) for edge in targets]


def current_graph_task_execution_order() -> list:
    """The nodes the backward pass running on this thread takes up, in the order it takes
    them up (those already done included; with `inputs`, the ones leading to them).

    >>> current_graph_task_execution_order()
    Traceback (most recent call last):
    ...
    RuntimeError: _current_graph_task_execution_order should only be called during the backward pass (from a hook or a Function's backward)
    """
    task = current("_current_graph_task_execution_order")
    if task.multithreaded:
        raise RuntimeError("_current_graph_task_execution_order expects the current backward to "
                           "be executed with multithreading disabled: the order is promised only "
                           "for a pass started inside `with genesis.autograd."
                           "set_multithreading_enabled(False):`")
    roots, targets = task.roots, task.targets
    if targets is None:
        dependencies, runs = _count_dependencies(roots), None
    else:
        dependencies, runs = _plan_for_targets(roots, {node for node, _ in targets},
                                               not task.for_grad)
    ready = [node for node in roots if dependencies[node] == 0]
    order = []
    while ready:  # the engine's loop, without the gradients
        node = ready.pop()
        order.append(node)
        _release_children(node, dependencies, runs, ready)
    return order


def _count_dependencies(root_nodes) -> dict:
    dependencies = dict.fromkeys(root_nodes, 0)
    stack = list(root_nodes)
    while stack:
        node = stack.pop()
        for child in node._next_nodes:
            if child is None:
                continue
            count = dependencies.get(child)
            if count is None:
                dependencies[child] = 1
                stack.append(child)
            else:
                dependencies[child] = count + 1
    return dependencies


def _plan_for_targets(root_nodes, target_nodes, run_targets=False) -> tuple:
    """Nodes that lead to a target; their edge counts; and which of them must run backward
    (those that lead to another target, or all with `run_targets`)."""
    leads = {}
    for root in root_nodes:
        if root in leads:
            continue
        leads[root] = None  # in progress
        stack = [(root, iter(root._next_nodes))]
        while stack:
            node, children = stack[-1]
            for child in children:
                if child is not None and child not in leads:
                    leads[child] = None
                    stack.append((child, iter(child._next_nodes)))
                    break
            else:
                stack.pop()
                leads[node] = node in target_nodes or any(
                    leads.get(child) for child in node._next_nodes if child is not None)
    needed = {node for node, flag in leads.items() if flag}
    runs = needed if run_targets else {
        node for node in needed
        if any(child in needed for child in node._next_nodes if child is not None)}
    dependencies = dict.fromkeys(root_nodes, 0)
    for node in runs:
        for child in node._next_nodes:
            if child in needed:
                dependencies[child] = dependencies.get(child, 0) + 1
    for node in needed:
        dependencies.setdefault(node, 0)
    return dependencies, runs


def _add_to_buffer(buffers, node, output_nr, gradient) -> None:
    grads = buffers.get(node)
    if grads is None:
        grads = buffers[node] = [None] * len(node._output_meta)
    existing = grads[output_nr]
    grads[output_nr] = gradient if existing is None else existing + gradient


def _summed(existing: Tensor, gradient: Tensor, create_graph: bool, owned: bool) -> Tensor:
    """Two gradients reaching one tensor, added: recorded when creating a graph, else on the
    arrays (both already have the tensor's shape and dtype), into `existing`'s own array
    when the engine owns it (a large fresh array costs page faults, not just a pass)."""
    if create_graph:
        return existing + gradient
    array, other = existing._data, gradient._data
    if owned and array.shape == other.shape and writeable(array):
        existing._device.xp.add(array, other, out=array)
        return existing
    return wrap_array(array + other, existing._device)


def _is_fresh(gradient: Tensor, grad_inputs: tuple, grads: list, held: int) -> bool:
    """Whether `gradient`, returned by an op that returns fresh gradients
    (`Function.fresh_gradients`) among `grad_inputs`, is the engine's to own: a new array
    (not a view) returned once, or a gradient the op received (`grads`) and the engine
    owned (bit output_nr of `held`), passed on to one place."""
    array = gradient._data
    if array.base is not None:
        return False
    for other in grad_inputs:
        if other is not gradient and other.__class__ is Tensor and other._data is array:
            return False  # returned twice
    for output_nr, received in enumerate(grads):
        if received is not None and received._data is array:  # passed through
            return bool(held >> output_nr & 1)
    return True


def _release_children(node, dependencies, runs, ready) -> None:
    for child in node._next_nodes:
        if child is None or (runs is not None and child not in dependencies):
            continue
        remaining = dependencies[child] - 1
        dependencies[child] = remaining
        if remaining == 0:
            ready.append(child)


def _run_tensor_hooks(node, grads: list) -> None:
    for output_nr, hooks in (node._tensor_hooks or {}).items():
        for hook in list(hooks):  # called with None for an output that got no gradient
            where = lambda: f"a hook on output {output_nr} of {type(node).__name__}"
            replacement = run_hook(hook, (grads[output_nr],), where)
            if replacement is not None:
                grads[output_nr] = replacement if grads[output_nr] is None else \
                    checked_gradient(hook, where, replacement, grads[output_nr])
    for output_nr, reference in (node._retained or {}).items():
        tensor = reference()
        gradient = grads[output_nr]
        if tensor is None or gradient is None:
            continue
        if tensor._grad is None:
            tensor._grad = gradient if grad_state.enabled else _fresh_copy(gradient)
        else:
            tensor._grad = tensor._grad + gradient


def _call_backward(node, grads: list) -> tuple:
    if node._prehooks:  # they see None for outputs that got no gradient, as in PyTorch
        for hook in list(node._prehooks):
            where = lambda: f"a pre-hook of {type(node).__name__}"
            replacement = run_hook(hook, (tuple(grads),), where)
            if replacement is not None:
                grads = list(checked_node_gradients(hook, where, replacement, tuple(grads),
                                                    "grad_outputs"))
    if node._materialize_grads and (len(grads) > 1 or grads[0] is None):
        _materialize(node, grads)  # outputs that got no gradient get zeros
    hooks_before = len(node._hooks)
    try:
        result = node._forward_cls.backward(node, *grads)
    except Exception as error:
        if not hasattr(error, "backward_node") and not hasattr(error, "hook"):
            # the innermost failing node, for tools (a hook's error names the hook instead)
            error.backward_node = node
            error.add_note(_backward_note(node))
        raise
    if result.__class__ is not tuple:
        result = tuple(result) if result.__class__ is list else (result,)
    expected = len(node._next_nodes)
    if len(result) != expected:
        if len(result) < expected or any(extra is not None for extra in result[expected:]):
            raise RuntimeError(
                f"{type(node).__name__}: backward returned {len(result)} gradient(s) but forward took {expected} "
                f"argument(s); return one gradient (or None) per forward argument, in order.")
        result = result[:expected]
    if node._hooks:
        for index, hook in enumerate(list(node._hooks)):
            where = lambda: f"a hook of {type(node).__name__}"
            # a hook registered while this backward ran (from an unpack hook, say) gets no
            # grad_outputs, as in PyTorch: they were consumed before it existed
            given = tuple(grads) if index < hooks_before else ()
            replacement = run_hook(hook, (result, given), where)
            if replacement is not None:
                result = checked_node_gradients(hook, where, replacement, result, "grad_inputs")
    return result


def check_user_gradients(node, gradients: tuple) -> None:
    """PyTorch's checks of what a user's Function's backward returned, one per forward
    argument: None for an argument that was not a tensor, else a Tensor or None (also for a
    tensor that needs no gradient, whose gradient is then dropped). The RuntimeError names
    the node, for tools too (`backward_node`, as an error raised inside a backward does)."""
    non_tensor_inputs = node._non_tensor_inputs
    for index, gradient in enumerate(gradients):
        if gradient is None:
            continue
        if index in non_tensor_inputs:
            message = (f"function {type(node).__name__} returned a gradient different than None "
                       f"at position {index + 1}, but the corresponding forward input was not a "
                       "Variable")
        elif not isinstance(gradient, Tensor):
            message = _not_a_tensor_message(node, index, gradient)
        else:
            continue
        error = RuntimeError(message)
        error.backward_node = node
        error.add_note(_backward_note(node))
        raise error


def _not_a_tensor_message(node, index: int, gradient) -> str:
    return (f"{type(node).__name__}: backward returned a {type(gradient).__name__} for input "
            f"{index}; return a genesis Tensor (or None)")


def _materialize(node, grads: list) -> None:
    """Zeros for the outputs that got no gradient; with `ctx._materialize_non_diff_grads`
    False, not for the outputs that are not differentiable (they stay None)."""
    all_outputs = node.__dict__.get("_materialize_non_diff_grads", True) is not False
    marked = node.__dict__.get("_non_diff_outputs", ())
    for output_nr, gradient in enumerate(grads):
        meta = node._output_meta[output_nr]
        if gradient is None and meta is not None:  # None: not a tensor
            shape, numpy_dtype, device = meta
            if all_outputs or (output_nr not in marked and numpy_dtype in FLOATING_NUMPY_DTYPES):
                grads[output_nr] = wrap_array(device.xp.zeros(shape, numpy_dtype), device)


def _backward_note(node) -> str:
    source = node._source
    where = f"; its forward was called at {source}" if source is not None else ""
    return f"(raised by the backward of {type(node).__name__}{where})"


def _conform(node, index: int, gradient, meta) -> Tensor:
    """Sum a broadcast gradient back to the input's shape; cast between float dtypes."""
    shape, numpy_dtype, device = meta
    name = type(node).__name__
    if not isinstance(gradient, Tensor):
        raise RuntimeError(_not_a_tensor_message(node, index, gradient))
    if gradient._device != device:
        raise RuntimeError(f"{name}: the gradient for input {index} is on {gradient._device} but "
                           f"the input is on {device}")
    if gradient._data.shape != shape:
        if not _sums_to(gradient._data.shape, shape):
            raise RuntimeError(
                f"Function {name} returned an invalid gradient at index {index} - got "
                f"{list(gradient.shape)} but expected shape compatible with {list(shape)}: "
                "backward must return, for each input, a gradient of the input's shape (or of a "
                "shape it was broadcast to).")
        gradient = sum_to_shape(gradient, shape)
    if numpy_dtype is None:  # a leaf whose grad_dtype is None keeps any floating dtype
        if not gradient.dtype.is_floating_point:
            raise RuntimeError(f"{name}: backward returned a {gradient.dtype.name} gradient for "
                               f"input {index}; return a floating point gradient")
        if gradient._data.base is None:  # the caller takes a base-less array as made here
            gradient = wrap_array(gradient._data.copy(), gradient._device)
    elif gradient._data.dtype != numpy_dtype:
        # (bfloat16 is floating too, though NumPy gives its dtype kind "V")
        if gradient._data.dtype not in FLOATING_NUMPY_DTYPES or \
                numpy_dtype not in FLOATING_NUMPY_DTYPES:
            raise RuntimeError(f"{name}: backward returned a {gradient.dtype.name} gradient for "
                               f"input {index}, which is {numpy_dtype}; return a floating point "
                               "gradient of the input's dtype")
        gradient = gradient.to(numpy_dtype.name)
    return gradient


def _sums_to(grad_shape: tuple, shape: tuple) -> bool:
    if len(grad_shape) < len(shape):
        return False
    for grad_extent, extent in zip(grad_shape[len(grad_shape) - len(shape):], shape):
        if extent != 1 and grad_extent != extent:
            return False
    return True


def _accumulate_leaf(node, grads: list, create_graph: bool, capture, captured, owned: bool) -> None:
    """The gradient reaching a leaf, after its hooks: captured (autograd.grad), or added to
    its `.grad` (which becomes the gradient itself when the engine owns it)."""
    gradient = grads[0]
    variable = node._variable()
    if gradient is None or variable is None:
        return
    if variable._hooks:
        owned = False  # the hooks have seen it
        hooks = variable._hooks  # a list (register_hook) or a dict assigned to _backward_hooks
        for hook in list(hooks.values() if hooks.__class__ is not list else hooks):
            where = lambda: f"a hook on a leaf tensor of shape {tuple(variable.shape)}"
            replacement = run_hook(hook, (gradient,), where)
            if replacement is not None:
                gradient = checked_gradient(hook, where, replacement, gradient)
    if capture is not None:
        if node in capture:
            captured[(node, 0)] = gradient
        return
    if node._prehooks:
        owned = False
        gradient = _run_accumulator_prehooks(node, gradient)
    existing = variable._grad
    if existing is None:
        laid_out = None  # a new array in the leaf's layout, where PyTorch's .grad has it
        if (create_graph or gradient._data.strides != variable._data.strides) and \
                not variable._data.flags.c_contiguous:
            laid_out = _dense_layout_like(gradient._device.xp, variable._data, gradient._data.dtype)
        if laid_out is not None:  # with create_graph, the copy_ is recorded (CopyBackwards)
            variable._grad = wrap_array(laid_out, gradient._device).copy_(gradient)
        elif create_graph:  # a copy made by a recorded copy_ (PyTorch's CopyBackwards node)
            variable._grad = gradient.new_empty(gradient.shape).copy_(gradient)
        else:
            variable._grad = _as_leaf_grad(gradient, owned)
        gradient = variable._grad  # the node's hooks see .grad itself, as PyTorch's (it steals)
    elif create_graph or not writeable(existing._data):
        variable._grad = existing + gradient
    else:  # in place, as PyTorch outside create_graph: a .grad made with create_graph keeps
        # its grad_fn (its version counter says it changed)
        existing._device.xp.add(existing._data, gradient._data, out=existing._data)
        existing._version_counter[0] += 1
    if node._post_accumulate_hooks:
        for hook in list(node._post_accumulate_hooks):
            returned = run_hook(hook, (variable,), lambda: "a post-accumulate-grad hook of a leaf "
                                f"tensor of shape {tuple(variable.shape)}")
            if returned is not None:
                raise RuntimeError(f"post accumulate grad hooks should return None: "
                                   f"{describe_hook(hook)} returned a {type(returned).__name__}")
    if node._hooks:
        for hook in list(node._hooks):
            run_hook(hook, ((), (gradient,)), lambda: "a hook of AccumulateGrad")


def _run_accumulator_prehooks(node, gradient: Tensor) -> Tensor:
    """An AccumulateGrad node's pre-hooks (`grad_fn.next_functions[i][0].register_prehook`),
    run as PyTorch runs them: after the leaf's tensor hooks, before `.grad` changes."""
    for hook in list(node._prehooks):
        where = lambda: "a pre-hook of AccumulateGrad"
        replacement = run_hook(hook, ((gradient,),), where)
        if replacement is not None:
            gradient = checked_node_gradients(hook, where, replacement, (gradient,),
                                              "grad_outputs")[0]
    return gradient


def _dense_layout_like(xp, array, dtype):
    """A new uninitialised array of `array`'s shape in its memory order, where its elements
    are dense and non-overlapping (a transposed or permuted tensor), else None (row-major
    then): PyTorch's gradient layout contract for a leaf's first `.grad`."""
    expected = array.itemsize
    for stride, size in sorted((stride, size) for stride, size in zip(array.strides, array.shape)
                               if size != 1):
        if stride != expected:
            return None
        expected *= size
    return xp.empty_like(array, dtype=dtype)  # (order "K": the strides' order)


def _as_leaf_grad(gradient: Tensor, owned: bool) -> Tensor:
    """The gradient as a leaf's first `.grad`: its own array when the engine owns it (nothing
    else sees it), else a copy (so that adding into `.grad` later changes nothing else)."""
    if not owned:
        return _fresh_copy(gradient)
    if gradient.grad_fn is None and not gradient._requires_grad:
        return gradient
    return wrap_array(gradient._data, gradient._device)


def _fresh_copy(gradient: Tensor) -> Tensor:
    return wrap_array(gradient._data.copy(), gradient._device)
