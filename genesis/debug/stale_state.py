"""Finding a backward that reads state changed after its forward.

A custom Function's backward should depend only on what its forward left it: the saved
tensors and the ctx. One that reads a closure or global variable, a ctx attribute changed
later, or a tensor kept on ctx as a plain attribute and modified in place, computes with
values the forward never saw; re-running the call in isolation (the finite-difference
check) sees a consistent pair and finds nothing.

`StaleStateWatch` (an observer of Function calls) runs each recorded call's backward once
right after its forward, on a fixed random output gradient, and once more just before the
engine runs it (a pre-hook on the node), on the same gradient, against the same ctx and
saved tensors. The two must agree; when they do not, the state the backward read changed in
between, and the ctx attributes whose values changed are named. The extra calls leave no
trace: the random generators and the ctx's attributes are put back after each, and a
backward that gives two different answers at once (random inside) is not judged.

>>> import genesis
>>> class Scaled(genesis.autograd.Function):
...     @staticmethod
...     def forward(ctx, x):
...         ctx.scale = 2.0
...         return x * ctx.scale
...     @staticmethod
...     def backward(ctx, grad):
...         return grad * ctx.scale
>>> watch = StaleStateWatch()
>>> genesis.autograd.function.observers.add(watch)
>>> x = genesis.randn(3, requires_grad=True)
>>> y = Scaled.apply(x)
>>> y.grad_fn.scale = 3.0          # changed after forward: the backward reads the new value
>>> y.sum().backward()
>>> genesis.autograd.function.observers.discard(watch)
>>> [(stale.function.__name__, stale.changed) for stale in watch.stale]
[('Scaled', {'scale': ('2.0', '3.0')})]
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field

import numpy as np

from ..autograd import engine
from ..autograd.grad_mode import no_grad
from ..random import device_state, restore_device_state
from ..tensor import Tensor, wrap_array
from .invocation_log import PER_SITE

__all__ = ["StaleStateWatch", "StaleBackward"]

_COPY_LIMIT = 1 << 20  # elements of a tensor ctx attribute copied to compare its values


@dataclass
class StaleBackward:
    """A call whose backward gave a different answer just before it ran than right after its
    forward. `changed`: ctx attribute -> (value at the end of forward, value when backward
    started), in words; `difference`: the largest absolute difference, per input."""

    function: type
    node: object
    source: object
    changed: dict = field(default_factory=dict)
    difference: dict = field(default_factory=dict)


class StaleStateWatch:
    """Observer of Function calls (user-defined Functions, `per_site` per call site)."""

    def __init__(self, per_site: int = PER_SITE, seed: int = 0):
        self.per_site, self.seed = per_site, seed
        self.stale: list = []
        self._per_site: dict = {}

    def __call__(self, node, args, outputs) -> None:
        if not node._next_nodes or engine.unwatched.depth:
            return
        function = type(node)._forward_cls
        if function is None or function._builtin or function.nondeterministic \
                or function.surrogate_gradient:
            return
        site = (function, str(node._source) if node._source is not None else None)
        if self._per_site.get(site, 0) >= self.per_site:
            return
        self._per_site[site] = self._per_site.get(site, 0) + 1
        probe = _probe(outputs, node, self.seed)
        if probe is None:
            return
        first, second = _quietly(node, probe), _quietly(node, probe)
        if first is None or not _same(first, second):
            return  # the backward raised on the probe, or is random: nothing to judge
        before = _attributes(node)
        handle = None

        def check_before_backward(grad_outputs):
            handle.remove()
            now = _quietly(node, probe)
            if now is None or _same(first, now):
                return None
            after = _attributes(node)
            changed = {name: (_words(value), _words(after.get(name)))
                       for name, value in before.items() if not _equal(value, after.get(name))}
            changed.update({name: ("(not set)", _words(value)) for name, value in after.items()
                            if name not in before})
            self.stale.append(StaleBackward(function, node, node._source, changed,
                                            _differences(first, now)))
            return None

        handle = node.register_prehook(check_before_backward)


def _probe(outputs, node, seed: int):
    """A fixed random gradient for each output the node gives a gradient for (zeros for
    the others, as the engine materialises them), or None when there is none."""
    rng = np.random.default_rng(seed)
    probe, any_used = [], False
    for output in outputs:
        if not isinstance(output, Tensor) or not output.dtype.is_floating_point:
            probe.append(None)
            continue
        values = rng.standard_normal(output.shape) if output.grad_fn is node else \
            np.zeros(output.shape)
        any_used = any_used or output.grad_fn is node
        array = output._device.xp.asarray(values.astype(output._data.dtype))
        probe.append(wrap_array(array, output._device))
    return probe if any_used else None


def _quietly(node, probe):
    """The backward's answer to `probe` as host arrays, leaving the random generators and
    the ctx's attributes as they were; None if it raised."""
    devices = {"cpu"} | {str(value.device) for value in probe if value is not None}
    states = {device: device_state(device) for device in devices}
    kept = dict(node.__dict__)
    try:
        with engine.unwatched, no_grad():  # not the script's call: no watcher reports it
            result = node._forward_cls.backward(node, *probe)
    except Exception:  # a backward that can't run twice is judged by the engine, not here
        return None
    finally:
        for device, state in states.items():
            restore_device_state(state, device)
        node.__dict__.clear()
        node.__dict__.update(kept)
    result = result if isinstance(result, tuple) else (result,)
    return [None if value is None else np.array(value._host_array(), dtype=np.float64)
            if isinstance(value, Tensor) else None for value in result]


def _same(first: list, second: list) -> bool:
    if len(first) != len(second):
        return False
    for a, b in zip(first, second):
        if (a is None) != (b is None):
            return False
        if a is not None and (a.shape != b.shape or not np.array_equal(a, b, equal_nan=True)):
            return False
    return True


def _differences(first: list, second: list) -> dict:
    found = {}
    for position, (a, b) in enumerate(zip(first, second)):
        if a is not None and b is not None and a.shape == b.shape:
            with np.errstate(invalid="ignore"):
                gap = np.nanmax(np.abs(a - b)) if a.size else 0.0
            if gap:
                found[position] = float(gap)
        elif (a is None) != (b is None):
            found[position] = float("inf")
    return found


def _attributes(node) -> dict:
    """The ctx attributes a user's forward set (public names), as comparable snapshots; an
    object's own plain attributes one level down, as "name.attribute"."""
    found = {}
    for name, value in node.__dict__.items():
        if name.startswith("_") or name in ("needs_input_grad", "metadata"):
            continue
        found[name] = _snapshot(value)
        if found[name][0] == "object":
            for inner, item in list(getattr(value, "__dict__", {}).items())[:_OBJECT_FIELDS]:
                snapshot = _snapshot(item)
                if not inner.startswith("_") and snapshot[0] != "object":
                    found[f"{name}.{inner}"] = snapshot
    return found


_OBJECT_FIELDS = 64  # attributes of an object on ctx looked at, at most
_PLAIN = (int, float, complex, bool, str, bytes, type(None))


def _snapshot(value):
    if isinstance(value, Tensor):
        data = value._host_array() if value.numel() <= _COPY_LIMIT else None
        return ("tensor", value._version, None if data is None else np.array(data))
    if isinstance(value, np.ndarray):
        return ("array", value.copy())
    if _plain(value):
        return ("value", copy.deepcopy(value))
    return ("object", id(value))  # compared by identity (a module, a function, ...)


def _plain(value, depth: int = 0) -> bool:
    """Numbers, strings and small containers of them: data whose copy can be compared."""
    if isinstance(value, _PLAIN):
        return True
    if depth < 2 and isinstance(value, (tuple, list, set, frozenset)) and len(value) <= 64:
        return all(_plain(item, depth + 1) for item in value)
    if depth < 2 and isinstance(value, dict) and len(value) <= 64:
        return all(_plain(key, depth + 1) and _plain(item, depth + 1) for key, item in value.items())
    return False


def _equal(a, b) -> bool:
    if a is None or b is None or a[0] != b[0]:
        return a == b
    if a[0] == "tensor":
        return a[1] == b[1] and (a[2] is None or b[2] is None or
                                 np.array_equal(a[2], b[2], equal_nan=True))
    if a[0] == "array":
        return a[1].shape == b[1].shape and np.array_equal(a[1], b[1], equal_nan=True)
    if a[0] == "value":
        return a[1] == b[1] or _both_nan(a[1], b[1])
    return a[1] == b[1]


def _both_nan(a, b) -> bool:
    return isinstance(a, float) and isinstance(b, float) and a != a and b != b


def _words(snapshot) -> str:
    if snapshot is None:
        return "(deleted)"
    kind = snapshot[0]
    if kind == "tensor":
        return f"a tensor at version {snapshot[1]}"
    if kind == "array":
        return f"an array of shape {snapshot[1].shape}"
    if kind == "object":
        return "another object"
    text = repr(snapshot[1])
    return text if len(text) <= 40 else text[:37] + "..."
