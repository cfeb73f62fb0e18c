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

Non-finite points are judged truthfully. Outputs that are NaN or ±inf at the
call's inputs (a -inf mask) have no derivative and are left out of the
projection; an output that stays the same infinity when an input moves changed
by zero. Input elements that are ±inf or NaN, and elements whose perturbation
turns an output non-finite or moves one that is (log at 0), have no finite
difference: they are skipped and counted in the verdict ("3 of 48 input elements skipped: finite
differences undefined at ±inf"), never reported as mismatches.

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
        if not node.next_functions or engine.unwatched.depth:  # no graph, or gradcheck's own call
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
    skipped_elements: int = 0   # input elements without a finite difference (see the reason)
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
        base = problem.projection_values()
        if not np.array_equal(base, problem.projection_values(), equal_nan=True):
            return NodeCheck("skipped", "nondeterministic: two forward runs on the same inputs differ")
        problem.fix_weights(base)
        analytical = problem.analytical()
    except Exception as error:  # the user's forward or backward failed on float64 inputs
        return NodeCheck("error", f"{type(error).__name__}: {error}")
    if not problem.usable_count:
        return NodeCheck("skipped", f"finite differences undefined at every input element "
                         f"({problem.unusable_words()})", skipped_elements=problem.size)
    if problem.fast_check_passes(analytical, seed):
        return NodeCheck("pass", problem.skipped_words(problem.unusable_count, 0),
                         checked_elements=problem.usable_count,
                         skipped_elements=problem.unusable_count)
    return problem.elementwise_check(analytical, base, seed)


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
        # set by fix_weights: the projection's weights; per leaf, which elements are finite
        self.weights = None
        self.usable = []
        self.size = self.usable_count = self.unusable_count = self.left_out = 0

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

    def fix_weights(self, base: np.ndarray) -> None:
        """The projection's random weights, zero at the outputs that are not finite at the
        call's inputs (no derivative there); and which input elements are finite."""
        self.weights = np.random.default_rng(1).standard_normal(base.shape)
        left_out = ~np.isfinite(base)
        self.weights[left_out] = 0.0
        self.left_out = int(left_out.sum())
        self.usable = [np.asarray(transfer(device.xp.isfinite(leaf), device, cpu))
                       for leaf, device in zip(self.leaves, self.devices)]
        self.size = sum(leaf.size for leaf in self.leaves)
        self.usable_count = int(sum(mask.sum() for mask in self.usable))
        self.unusable_count = self.size - self.usable_count

    def difference(self, plus: np.ndarray, minus: np.ndarray) -> float | None:
        """weights . (plus - minus): the projection's change between two runs, None where
        it is undefined (a weighted output NaN or infinite in one run but not equal in both;
        one that stays the same infinity did not change)."""
        with np.errstate(invalid="ignore", over="ignore"):  # inf - inf: undefined, found below
            change = np.where((plus == minus) | (self.weights == 0), 0.0, plus - minus)
        if not np.isfinite(change).all():
            return None
        return float(change @ self.weights)

    def moves_left_out(self, base: np.ndarray, *perturbed: np.ndarray) -> bool:
        """Whether an output left out (NaN/±inf at the call's inputs) changes in a perturbed
        run: the element sits where the function is not finite (log at 0), so neither side
        of the check means anything there."""
        left_out = ~np.isfinite(base)
        if not left_out.any():
            return False
        return any(not np.all((values == base) | (np.isnan(values) & np.isnan(base)) | ~left_out)
                   for values in perturbed)

    def analytical(self) -> list:
        """Gradient of the projection w.r.t. each leaf, by the Function's backward."""
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

    def _perturbed(self, leaf, index, delta: float) -> np.ndarray:
        original = leaf[index].copy()  # on CuPy an element is a view, not a number
        leaf[index] = original + delta
        try:
            return self.projection_values()
        finally:
            leaf[index] = original

    def fast_check_passes(self, analytical: list, seed: int) -> bool:
        """The directional derivative along a random direction over the finite input
        elements; False (the element-wise check decides) when it disagrees or is undefined."""
        rng = np.random.default_rng(seed)
        directions = [rng.standard_normal(leaf.shape) * usable
                      for leaf, usable in zip(self.leaves, self.usable)]
        norm = np.sqrt(sum(float((d * d).sum()) for d in directions)) or 1.0
        directions = [d / norm for d in directions]
        originals = [leaf.copy() for leaf in self.leaves]
        placed = [transfer(direction, cpu, device) for direction, device in zip(directions,
                                                                                self.devices)]
        values = []
        for sign in (1.0, -1.0):
            for leaf, direction, original in zip(self.leaves, placed, originals):
                leaf[...] = original + sign * EPS * direction
            values.append(self.projection_values())
        for leaf, original in zip(self.leaves, originals):
            leaf[...] = original
        change = self.difference(values[0], values[1])
        if change is None:
            return False
        numerical = change / (2 * EPS)
        predicted = sum(float(np.where(usable, g * d, 0.0).sum())
                        for g, d, usable in zip(analytical, directions, self.usable))
        return abs(predicted - numerical) <= ATOL + RTOL * abs(numerical)

    def elementwise_check(self, analytical: list, base: np.ndarray, seed: int) -> NodeCheck:
        rng = np.random.default_rng(seed + 1)
        mismatches, kinks, checked, undefined = [], 0, 0, 0
        for number, (leaf, grad, usable) in enumerate(zip(self.leaves, analytical, self.usable)):
            for index in _sample_indices(usable, rng):
                plus, minus = self._perturbed(leaf, index, EPS), self._perturbed(leaf, index, -EPS)
                changes = [self.difference(plus, minus), self.difference(plus, base),
                           self.difference(base, minus)]
                if None in changes or self.moves_left_out(base, plus, minus):
                    undefined += 1  # an output is or turns NaN/inf as this element moves
                    continue
                checked += 1
                central = changes[0] / (2 * EPS)
                value = float(grad[index])
                error = abs(value - central)
                if value == central or error <= ATOL + RTOL * abs(central):
                    continue
                forward, backward = changes[1] / EPS, changes[2] / EPS
                low, high = min(forward, backward), max(forward, backward)
                tolerance = ATOL + RTOL * max(abs(forward), abs(backward))
                if high - low > tolerance and low - tolerance <= value <= high + tolerance:
                    kinks += 1  # one-sided slopes differ: a kink; the backward chose a sub-gradient
                    continue
                mismatches.append({"input": self.leaf_positions[number], "index": list(index),
                                   "analytical": value, "numerical": central, "abs_error": error,
                                   "rel_error": error / max(abs(central), 1e-12)})
        skipped = self.unusable_count + undefined
        note = self.skipped_words(self.unusable_count, undefined, checked + undefined)
        if mismatches:
            mismatches.sort(key=lambda entry: -_finite_or_inf(entry["abs_error"]))
            reason = "the backward disagrees with finite differences" + (f" ({note})" if note else "")
            return NodeCheck("fail", reason, mismatches[0]["abs_error"],
                             max(m["rel_error"] for m in mismatches), mismatches[:MAX_REPORT],
                             checked, skipped)
        if kinks:
            return NodeCheck("skipped", f"not differentiable here: {kinks} of {checked} checked "
                             "elements sit on a kink (e.g. relu/abs at 0, max with ties)"
                             + (f"; {note}" if note else ""),
                             checked_elements=checked, skipped_elements=skipped)
        if not checked:
            return NodeCheck("skipped", f"finite differences undefined at every sampled element "
                             f"({note})", skipped_elements=skipped)
        return NodeCheck("pass", note, checked_elements=checked, skipped_elements=skipped)

    def unusable_words(self) -> str:
        """What the input elements without a finite difference hold: ±inf, NaN or both."""
        values = [np.asarray(transfer(leaf, device, cpu))[~usable]
                  for leaf, device, usable in zip(self.leaves, self.devices, self.usable)]
        held = np.concatenate([value.reshape(-1) for value in values])
        kinds = [word for word, present in (("±inf", np.isinf(held).any()),
                                            ("NaN", np.isnan(held).any())) if present]
        return " and ".join(kinds)

    def skipped_words(self, at_inputs: int, moved: int, visited: int | None = None) -> str:
        """The verdict's note on skipped elements and left-out outputs ('' when none was):
        `at_inputs` elements at ±inf/NaN, `moved` of the `visited` finite ones checked one by
        one (all of them when None)."""
        looked_at = self.size if visited is None else at_inputs + visited
        notes = []
        if at_inputs and not moved:
            why = f"finite differences undefined at {self.unusable_words()}"
        elif moved and not at_inputs:
            why = "finite differences undefined: an output is or turns NaN/±inf as they move"
        else:
            why = (f"finite differences undefined: {at_inputs} at {self.unusable_words()}, "
                   f"{moved} where an output is or turns NaN/±inf as they move")
        if at_inputs or moved:
            notes.append(f"{at_inputs + moved} of {looked_at} input elements skipped: {why}")
        if self.left_out:
            notes.append(f"{self.left_out} of {self.weights.size} output values are NaN/±inf "
                         "here and were left out")
        return "; ".join(notes)


def _finite_or_inf(value: float) -> float:
    return np.inf if np.isnan(value) else value


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


def _sample_indices(usable: np.ndarray, rng) -> list:
    """Up to SAMPLE indices of the elements marked in `usable` (all of them when few)."""
    flat = np.flatnonzero(usable.reshape(-1))
    if flat.size > SAMPLE:
        flat = np.sort(rng.choice(flat, SAMPLE, replace=False))
    return [tuple(int(i) for i in np.unravel_index(position, usable.shape)) for position in flat]
