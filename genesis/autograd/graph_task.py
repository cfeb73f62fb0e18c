"""The backward passes running on a thread (PyTorch's graph tasks) and what code called by
one (a hook, a Function's backward) may ask of it: its id, whether it runs a node, whether
it keeps the graph, and callbacks to run once it has finished.

A backward called inside a backward (a Function whose backward differentiates again) is a
pass of its own, nested in the caller's. Nested passes stack Python frames; past
`NESTED_PER_THREAD` of them on one thread, the next runs on a fresh thread (with the
caller's grad mode and hooks) while the caller waits, so a backward thousands of passes
deep never reaches Python's recursion limit (PyTorch hands deep reentrant work to a worker
thread the same way).

>>> import genesis
>>> calls = []
>>> class Twice(genesis.Function):
...     @staticmethod
...     def forward(ctx, x):
...         return x * 2
...     @staticmethod
...     def backward(ctx, grad):
...         queue_callback(lambda: calls.append("done"))
...         calls.append("backward")
...         return grad * 2
>>> Twice.apply(genesis.ones(2, requires_grad=True)).sum().backward()
>>> calls
['backward', 'done']
"""
from __future__ import annotations

import threading

__all__ = ["GraphTask", "running", "current", "current_node", "current_graph_task_id",
           "will_engine_execute_node",
           "queue_callback", "current_graph_task_keep_graph", "execution_engine",
           "set_multithreading_enabled", "is_multithreading_enabled", "NESTED_PER_THREAD",
           "on_fresh_thread"]

# Nested backward passes one thread runs before the next goes to a fresh thread: each costs
# some ten frames, so this stays far below the recursion limit.
NESTED_PER_THREAD = 16


class GraphTask:
    """One backward pass: its id, the nodes it reaches (keys of its dependency counts),
    whether it keeps the graph (`retain_graph`), whether it computes only some gradients
    (`partial`: `inputs=` given) and is `autograd.grad` (`for_grad`: nothing accumulates),
    and the callbacks queued while it runs (None until one is). `multithreaded`: whether
    backward's threads were allowed when it started (`set_multithreading_enabled`)."""

    __slots__ = ("id", "nodes", "keep_graph", "partial", "for_grad", "callbacks", "roots",
                 "targets", "node", "multithreaded")

    def __init__(self, task_id: int, nodes: dict, keep_graph: bool, partial: bool, for_grad: bool):
        self.id, self.nodes, self.keep_graph = task_id, nodes, keep_graph
        self.partial, self.for_grad = partial, for_grad
        self.callbacks = None
        self.roots = self.targets = None  # the root nodes and target edges (run_graph's)
        self.node = None  # the node whose backward (or hooks) runs now
        self.multithreaded = _threading.enabled

    def run_callbacks(self) -> None:
        """Run the queued callbacks in order, including those queued by callbacks."""
        callbacks = self.callbacks
        index = 0
        while index < len(callbacks):
            callbacks[index]()
            index += 1
        self.callbacks = None


class _Running(threading.local):
    """The backward passes running on this thread, innermost last."""

    def __init__(self):
        self.tasks = []


running = _Running()


def current(what: str) -> GraphTask:
    """The innermost backward pass running on this thread; outside backward, an error saying
    that `what` must be called from one."""
    tasks = running.tasks
    if not tasks:
        raise RuntimeError(f"{what} should only be called during the backward pass (from a "
                           "hook or a Function's backward)")
    return tasks[-1]


def current_node():
    """The node whose backward (or hooks) runs now on this thread, None outside backward
    (PyTorch's `torch._C._current_autograd_node`).

    >>> current_node() is None
    True
    """
    tasks = running.tasks
    return tasks[-1].node if tasks else None


def current_graph_task_id() -> int:
    """The id of the backward pass running on this thread (a hook called by it), -1 outside
    backward; each pass gets a new one.

    >>> current_graph_task_id()
    -1
    """
    tasks = running.tasks
    return tasks[-1].id if tasks else -1


def will_engine_execute_node(node) -> bool:
    """Whether the backward pass running on this thread runs `node` (with `inputs`: only the
    nodes that lead to them).

    >>> import genesis
    >>> will_engine_execute_node(genesis.ones(1, requires_grad=True).exp().grad_fn)
    Traceback (most recent call last):
    ...
    RuntimeError: _will_engine_execute_node should only be called during the backward pass (from a hook or a Function's backward)
    """
    if not hasattr(node, "next_functions"):
        raise RuntimeError(f"_will_engine_execute_node expects an grad_fn (a node of the graph, "
                           f"such as tensor.grad_fn), got a {type(node).__name__}")
    task = current("_will_engine_execute_node")
    if task.for_grad and not node._next_nodes and hasattr(node, "variable"):
        raise RuntimeError("_will_engine_execute_node cannot answer for a leaf's AccumulateGrad "
                           "while you are currently running autograd.grad() (which captures "
                           "gradients instead of accumulating them): ask about the grad_fn of a "
                           "non-leaf tensor")
    return node in task.nodes


def current_graph_task_keep_graph() -> bool:
    """Whether the backward pass running on this thread keeps its graph (`retain_graph`).

    >>> current_graph_task_keep_graph()
    Traceback (most recent call last):
    ...
    RuntimeError: _get_current_graph_task_keep_graph should only be called during the backward pass (from a hook or a Function's backward)
    """
    return current("_get_current_graph_task_keep_graph").keep_graph


def queue_callback(callback) -> None:
    """Run `callback()` once the backward pass running on this thread has finished its nodes
    (callbacks run in the order queued; one may queue more).

    >>> queue_callback(print)
    Traceback (most recent call last):
    ...
    RuntimeError: Final callbacks can only be installed during backward pass: call queue_callback from a hook or a Function's backward
    """
    tasks = running.tasks
    if not tasks:
        raise RuntimeError("Final callbacks can only be installed during backward pass: call "
                           "queue_callback from a hook or a Function's backward")
    task = tasks[-1]
    if task.callbacks is None:
        task.callbacks = []
    task.callbacks.append(callback)


class _ExecutionEngine:
    """`Variable._execution_engine`: PyTorch's handle on its engine, for `queue_callback`."""

    @staticmethod
    def queue_callback(callback) -> None:
        """See `queue_callback`."""
        queue_callback(callback)


execution_engine = _ExecutionEngine()


class _Threading:
    enabled = True


_threading = _Threading()


def is_multithreading_enabled() -> bool:
    """Whether backward may use threads (PyTorch's per-device worker threads). genesis runs
    every pass on the calling thread; the switch is kept for programs that set it.

    >>> is_multithreading_enabled()
    True
    """
    return _threading.enabled


class set_multithreading_enabled:
    """Turn backward's threads on or off: at once when called, restored on leaving a `with`
    block.

    >>> with set_multithreading_enabled(False):
    ...     is_multithreading_enabled()
    False
    >>> is_multithreading_enabled()
    True
    """

    def __init__(self, mode: bool):
        self.previous = _threading.enabled
        _threading.enabled = bool(mode)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc_info) -> None:
        _threading.enabled = self.previous


def on_fresh_thread(function, carried: tuple, *args):
    """`function(*args)` run on a new thread, this one waiting; `carried` lists
    (thread-local object, attribute names) whose values the new thread starts with.
    Returns what the function returns, raises what it raises."""
    values = [(local, {name: getattr(local, name) for name in names}) for local, names in carried]
    outcome = []

    def work():
        for local, attributes in values:
            for name, value in attributes.items():
                setattr(local, name, value)
        try:
            outcome.append((True, function(*args)))
        except BaseException as error:  # handed to the waiting thread
            outcome.append((False, error))

    worker = threading.Thread(target=work, name="genesis-backward")
    worker.start()
    worker.join()
    succeeded, result = outcome[0]
    if not succeeded:
        raise result
    return result
