"""Per-node gradient checks: re-run one recorded Function call in float64 and compare its
backward with finite differences, without false alarms.

`InvocationLog` (an observer for `genesis.autograd.function.observers`) keeps a
copy of the inputs of each Function call that joined a graph. `check_invocation`
then re-runs that call in float64 on those inputs:

1. A Function that declares itself `nondeterministic`, or whose forward gives
   different results on the same inputs (random numbers), is skipped.
2. Fast check: for random unit directions, the directional derivative of a
   random projection of the outputs (two forward runs) against the backward.
3. If that disagrees, each input element of a sample is checked on its own; an
   element where the one-sided differences disagree is a kink (relu or abs at
   0, max with ties), where any value between them is a valid sub-gradient:
   those are reported as "not differentiable here", never as mismatches.

A call recorded on a GPU is re-run on the host, where perturbing one element costs
no launch and no wait; if its code cannot run there (it makes tensors on "cuda"
itself, say), the check runs again on the call's own device, so that is not
reported as an error of the Function.

>>> import genesis
>>> class Twice(genesis.Function):
...     @staticmethod
...     def forward(ctx, x):
...         return x * 2
...     @staticmethod
...     def backward(ctx, grad):
...         return grad * 3          # wrong on purpose
>>> log = InvocationLog()
>>> genesis.autograd.function.observers.append(log)
>>> y = Twice.apply(genesis.randn(4, requires_grad=True))
>>> genesis.autograd.function.observers.remove(log)
>>> check_invocation(next(iter(log.calls.values()))).status
'fail'
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..autograd import engine
from ..autograd.grad_mode import no_grad
from ..autograd.gradcheck_jacobians import flat_values
from ..device import cpu, transfer
from ..tensor import Tensor, wrap_array

__all__ = ["Invocation", "InvocationLog", "NodeCheck", "check_invocation"]

EPS = 1e-6
ATOL = 1e-5
RTOL = 1e-3
SAMPLE = 48          # input elements checked one by one per input, at most
MAX_REPORT = 10


@dataclass
class Invocation:
    """A recorded Function call: the Function class and copies of its arguments."""

    function: type
    args: tuple          # Tensors are detached copies; other values as given
    requires_grad: tuple  # per argument: did it require grad in the real run
    kwargs: dict
    source: object = None  # genesis.autograd.source.SourceLocation of the call
    # per output: did it get a gradient (False: an integer output, or one the Function marked
    # non-differentiable, such as batch_norm's batch statistics); empty: all that are float
    differentiable_outputs: tuple = ()


class InvocationLog:
    """Observer that copies the inputs of Function calls that joined a graph.

    Only user-defined Functions unless `include_builtin`; at most `per_site`
    calls per (Function, source line), so a loop over layers is not copied a
    hundred times.
    """

    def __init__(self, include_builtin: bool = False, per_site: int = 2):
        self.include_builtin = include_builtin
        self.per_site = per_site
        self.calls = {}        # autograd node -> Invocation
        self._per_site = {}

    def __call__(self, node, args, outputs) -> None:
        if not node.next_functions:
            return
        function = type(node)._forward_cls
        if function is None or (function._builtin and not self.include_builtin):
            return
        source = node._source
        site = (function, str(source) if source is not None else None)
        seen = self._per_site.get(site, 0)
        if seen >= self.per_site:
            return
        self._per_site[site] = seen + 1
        copies = tuple(_copy(arg) for arg in args)
        requires = tuple(isinstance(arg, Tensor) and arg.requires_grad for arg in args)
        differentiable = tuple(isinstance(out, Tensor) and out.grad_fn is node for out in outputs)
        self.calls[node] = Invocation(function, copies, requires, dict(node.__dict__.get(
            "_genesis_kwargs", {})), source, differentiable)


def _copy(value):
    if isinstance(value, Tensor):
        return wrap_array(value._data.copy(), value._device)
    if isinstance(value, list | tuple):
        return type(value)(_copy(item) for item in value)
    return value


@dataclass
class NodeCheck:
    """The verdict on one call: "pass", "fail", "skipped" or "error"."""

    status: str
    reason: str = ""
    max_abs_error: float = 0.0
    max_rel_error: float = 0.0
    worst: list = field(default_factory=list)   # dicts: input, index, analytical, numerical, abs_error
    checked_elements: int = 0
    tolerances: dict = field(default_factory=lambda: {"eps": EPS, "atol": ATOL, "rtol": RTOL})

    def report(self) -> str:
        """A short text block: verdict, errors and the worst entries."""
        lines = [f"{self.status}: {self.reason}" if self.reason else self.status]
        if self.worst:
            lines.append(f"max abs error {self.max_abs_error:.3g}, max rel error "
                         f"{self.max_rel_error:.3g} (atol={ATOL}, rtol={RTOL}, eps={EPS}; "
                         "gradient of a random projection of the outputs)")
            lines.append(f"  {'input':<6} {'element':<14} {'analytical':>12} {'numerical':>12} "
                         f"{'abs error':>10}")
            for entry in self.worst:
                lines.append(f"  {entry['input']:<6} {str(tuple(entry['index'])):<14} "
                             f"{entry['analytical']:>12.6g} {entry['numerical']:>12.6g} "
                             f"{entry['abs_error']:>10.3g}")
        return "\n".join(lines)


def check_invocation(invocation: Invocation, seed: int = 0) -> NodeCheck:
    """Re-run `invocation` in float64 and check its backward (see the module docstring)."""
    verdict = _check(invocation, seed, on_host=True)
    if verdict.status == "error" and _ran_on_a_gpu(invocation.args):
        return _check(invocation, seed, on_host=False)  # as it ran: the verdict that counts
    return verdict


def _check(invocation: Invocation, seed: int, on_host: bool) -> NodeCheck:
    function = invocation.function
    if function.nondeterministic:
        return NodeCheck("skipped", f"{function.__name__} declares itself nondeterministic")
    problem = _Problem.build(invocation, on_host)
    if not problem.leaves:
        return NodeCheck("skipped", "no floating-point input required grad")
    try:
        first = problem.projection_values()
        if not np.array_equal(first, problem.projection_values(), equal_nan=True):
            return NodeCheck("skipped", "nondeterministic: two forward runs on the same inputs differ")
        analytical = problem.analytical(seed)
    except Exception as error:  # the user's forward or backward failed on float64 inputs
        return NodeCheck("error", f"{type(error).__name__}: {error}")
    if problem.fast_check_passes(analytical, seed):
        return NodeCheck("pass", checked_elements=sum(leaf.size for leaf in problem.leaves))
    return problem.elementwise_check(analytical, seed)


def _ran_on_a_gpu(args) -> bool:
    return any(arg._device is not cpu if isinstance(arg, Tensor) else
               isinstance(arg, list | tuple) and _ran_on_a_gpu(arg) for arg in args)


class _Problem:
    """The call rebuilt in float64: leaves to perturb and a scalar projection of the outputs.
    Leaves are arrays on the device the call is re-run on; figures come back to the host."""

    def __init__(self, invocation: Invocation, args: list, leaf_positions: list, kwargs: dict):
        self.invocation = invocation
        self.args = args
        self.leaf_positions = leaf_positions
        self.leaves = [args[position]._data for position in leaf_positions]
        self.devices = [args[position]._device for position in leaf_positions]
        self.kwargs = kwargs
        self.weights = None

    @classmethod
    def build(cls, invocation: Invocation, on_host: bool = True) -> "_Problem":
        """The call's arguments in float64: on the host, or where the call ran."""
        place = _on_host if on_host else (lambda value: value)
        args, positions = [], []
        for position, (value, requires) in enumerate(zip(invocation.args, invocation.requires_grad)):
            value = place(value)
            if isinstance(value, Tensor) and value.dtype.is_floating_point:
                value = wrap_array(value._data.astype(np.float64), value._device)
                if requires:
                    positions.append(position)
            args.append(value)
        return cls(invocation, args, positions, place(invocation.kwargs))

    def _outputs(self, args) -> list:
        result = self.invocation.function.apply(*args, **self.kwargs)
        outputs = [result] if isinstance(result, Tensor) else list(result)
        kept = self.invocation.differentiable_outputs or (True,) * len(outputs)
        return [out for out, keep in zip(outputs, kept)
                if keep and isinstance(out, Tensor) and out.dtype.is_floating_point]

    def projection_values(self) -> np.ndarray:
        """The outputs flattened (without grad): the basis of every finite difference."""
        with no_grad():
            outputs = self._outputs(self.args)
        return np.concatenate([flat_values(out) for out in outputs]) \
            if outputs else np.zeros(0)

    def projection(self) -> float:
        values = self.projection_values()
        if self.weights is None:
            self.weights = np.random.default_rng(1).standard_normal(values.shape)
        return float(values @ self.weights)

    def analytical(self, seed: int) -> list:
        """Gradient of the projection w.r.t. each leaf, by the Function's backward."""
        self.projection()  # fixes the weights
        leaves = []
        args = list(self.args)
        for position in self.leaf_positions:
            leaf = wrap_array(args[position]._data, args[position]._device).requires_grad_()
            args[position] = leaf
            leaves.append(leaf)
        outputs = self._outputs(args)
        offset = 0
        grad_outputs = []
        for out in outputs:
            size = out._data.size
            weights = self.weights[offset:offset + size].reshape(out.shape)
            grad_outputs.append(wrap_array(transfer(weights, cpu, out._device), out._device))
            offset += size
        connected = [(out, grad) for out, grad in zip(outputs, grad_outputs) if out.requires_grad]
        if not connected:
            return [np.zeros(leaf.shape) for leaf in self.leaves]
        grads = engine.grad([out for out, _ in connected], leaves, [g for _, g in connected],
                            allow_unused=True)
        return [np.zeros(leaf.shape) if grad is None else np.asarray(grad._host_array(), np.float64)
                for grad, leaf in zip(grads, self.leaves)]

    def _perturbed(self, leaf, index, delta: float) -> float:
        original = leaf[index].copy()  # on CuPy an element is a view, not a number
        leaf[index] = original + delta
        try:
            return self.projection()
        finally:
            leaf[index] = original

    def fast_check_passes(self, analytical: list, seed: int) -> bool:
        rng = np.random.default_rng(seed)
        directions = [rng.standard_normal(leaf.shape) for leaf in self.leaves]
        norm = np.sqrt(sum(float((d * d).sum()) for d in directions)) or 1.0
        directions = [d / norm for d in directions]
        originals = [leaf.copy() for leaf in self.leaves]
        placed = [transfer(direction, cpu, device) for direction, device in zip(directions,
                                                                                self.devices)]
        values = []
        for sign in (1.0, -1.0):
            for leaf, direction, original in zip(self.leaves, placed, originals):
                leaf[...] = original + sign * EPS * direction
            values.append(self.projection())
        for leaf, original in zip(self.leaves, originals):
            leaf[...] = original
        numerical = (values[0] - values[1]) / (2 * EPS)
        predicted = sum(float((g * d).sum()) for g, d in zip(analytical, directions))
        return abs(predicted - numerical) <= ATOL + RTOL * abs(numerical)

    def elementwise_check(self, analytical: list, seed: int) -> NodeCheck:
        rng = np.random.default_rng(seed + 1)
        base = self.projection()
        mismatches, kinks, checked = [], 0, 0
        for number, (leaf, grad) in enumerate(zip(self.leaves, analytical)):
            for index in _sample_indices(leaf.shape, rng):
                checked += 1
                plus = self._perturbed(leaf, index, EPS)
                minus = self._perturbed(leaf, index, -EPS)
                central = (plus - minus) / (2 * EPS)
                value = float(grad[index])
                error = abs(value - central)
                if error <= ATOL + RTOL * abs(central):
                    continue
                forward, backward = (plus - base) / EPS, (base - minus) / EPS
                low, high = min(forward, backward), max(forward, backward)
                tolerance = ATOL + RTOL * max(abs(forward), abs(backward))
                if high - low > tolerance and low - tolerance <= value <= high + tolerance:
                    kinks += 1  # one-sided slopes differ: a kink; the backward chose a sub-gradient
                    continue
                mismatches.append({"input": self.leaf_positions[number], "index": list(index),
                                   "analytical": value, "numerical": central, "abs_error": error,
                                   "rel_error": error / max(abs(central), 1e-12)})
        if mismatches:
            mismatches.sort(key=lambda entry: -entry["abs_error"])
            return NodeCheck("fail", "the backward disagrees with finite differences",
                             mismatches[0]["abs_error"], max(m["rel_error"] for m in mismatches),
                             mismatches[:MAX_REPORT], checked)
        if kinks:
            return NodeCheck("skipped", f"not differentiable here: {kinks} of {checked} checked "
                             "elements sit on a kink (e.g. relu/abs at 0, max with ties)",
                             checked_elements=checked)
        return NodeCheck("pass", checked_elements=checked)


def _on_host(value):
    """`value` with its tensors copied to the CPU: a call recorded on a GPU is re-checked on
    the host (the same Function code, in NumPy), where perturbing one element at a time
    costs no kernel launch and no synchronisation."""
    if isinstance(value, Tensor):
        return value if value._device is cpu else wrap_array(
            transfer(value._data, value._device, cpu), cpu)
    if isinstance(value, list | tuple):
        return type(value)(_on_host(item) for item in value)
    if isinstance(value, dict):
        return {key: _on_host(item) for key, item in value.items()}
    return value


def _sample_indices(shape: tuple, rng) -> list:
    size = int(np.prod(shape)) if shape else 1
    if size <= SAMPLE:
        return list(np.ndindex(*shape)) if shape else [()]
    flat = rng.choice(size, SAMPLE, replace=False)
    return [tuple(int(i) for i in np.unravel_index(position, shape)) for position in sorted(flat)]
