"""The finite-difference check of one recorded call: `RebuiltCall` re-runs the call on fresh
copies of its inputs (on the host or its own device, in float64 or its own dtypes) and
compares its backward with finite differences, without false alarms (see
`genesis.debug.node_check`, which decides where and in which precision to re-run)."""
from __future__ import annotations

import numpy as np

from ..autograd import engine
from ..autograd.grad_mode import no_grad
from ..autograd.gradcheck_jacobians import flat_values
from ..autograd.gradcheck_kinks import on_a_kink
from ..device import cpu, transfer
from ..tensor import Tensor, wrap_array
from .blame import BackwardSite, explain_inputs, forward_input_names
from .invocation_log import Invocation
from .node_verdict import FLOAT32, FLOAT64, NodeCheck

__all__ = ["RebuiltCall", "CannotRerun"]

SAMPLE = 48          # input elements checked one by one per input, at most
MAX_REPORT = 10


class CannotRerun(Exception):
    """The call raised when re-run on copies of its inputs: a limit of the check."""


class RebuiltCall:
    """The call rebuilt for the check: leaves to perturb and a scalar projection of the
    outputs. Leaves are arrays on the device the call is re-run on; figures come back to the
    host."""

    def __init__(self, invocation: Invocation, args: list, leaf_positions: list, kwargs: dict,
                 note: str):
        self.invocation = invocation
        self.args = args
        self.leaf_positions = leaf_positions
        self.leaves = [args[position]._data for position in leaf_positions]
        self.devices = [args[position]._device for position in leaf_positions]
        self.kwargs = kwargs
        self.note = note               # why the call is not re-run in float64, if it is not
        self.tolerances = FLOAT64
        self.rounded_to_float32 = False  # set by computes_in_float32
        self.output_dtypes = []        # of the outputs in the projection, by projection_values
        self.output_sizes = []
        # set by fix_weights: the projection's weights and each value's resolution; per leaf,
        # which elements are checked (finite, gradient not defined by the Function)
        self.weights = self.resolution = None
        self.usable, self.nonfinite = [], []
        self.size = self.usable_count = self.unusable_count = self.defined_count = 0
        self.left_out = 0
        # where the backward is written, and the return lines its calls end at (user code)
        self.site = None if invocation.function._builtin else BackwardSite.of(invocation.function)

    @classmethod
    def build(cls, invocation: Invocation, on_host: bool, in_float64: bool, note: str) -> "RebuiltCall":
        """The call's arguments, on the host or where the call ran, in float64 or in their own
        dtypes; always fresh copies, so perturbing them leaves the log's own intact."""
        place = _on_host if on_host else (lambda value: value)
        args, positions = [], []
        for position, (value, requires) in enumerate(zip(invocation.args, invocation.requires_grad)):
            value = place(value)
            if isinstance(value, Tensor) and value.dtype.is_floating_point:
                array = value._data.astype(np.float64) if in_float64 else value._data.copy()
                value = wrap_array(array, value._device)
                if requires:
                    positions.append(position)
            args.append(value)
        return cls(invocation, args, positions, place(invocation.kwargs), note)

    def check(self, seed: int) -> NodeCheck:
        """The verdict; CannotRerun when the forward or the backward raises."""
        if not self.leaves:
            return NodeCheck("skipped", "no floating-point input required grad")
        try:
            return self._verdict(seed)
        except Exception as error:  # the forward or backward failed on these copies
            raise CannotRerun(f"{type(error).__name__}: {error}") from error

    def _verdict(self, seed: int) -> NodeCheck:
        base = self.projection_values()
        if not np.array_equal(base, self.projection_values(), equal_nan=True):
            return NodeCheck("skipped", "nondeterministic: two forward runs on the same inputs differ")
        if not self.output_dtypes:
            return NodeCheck("skipped", "no output carries a gradient (integer, bool or marked "
                             "non-differentiable): nothing to compare the backward with")
        coarse = self.coarse_dtypes()
        if coarse:
            return NodeCheck("skipped", coarse)
        self.tolerances = FLOAT32 if self.in_float32() or self.computes_in_float32(seed) else FLOAT64
        self.fix_weights(base)
        analytical = self.analytical()
        if not self.usable_count:
            return self.verdict("skipped", "no input element is left to check ("
                                + "; ".join(self.notes(self.unusable_count, 0)) + ")")
        if self.fast_check_passes(analytical, seed):
            return self.verdict("pass", "; ".join(self.notes(self.unusable_count, 0)),
                                checked_elements=self.usable_count)
        return self.elementwise_check(analytical, base, seed)

    def verdict(self, status: str, reason: str, checked_elements: int = 0, skipped: int | None = None,
                **errors) -> NodeCheck:
        return NodeCheck(status, reason, checked_elements=checked_elements,
                         skipped_elements=self.unusable_count if skipped is None else skipped,
                         defined_elements=self.defined_count,
                         tolerances=self.tolerances.as_dict(), **errors)

    def _outputs(self, args) -> list:
        if not self.invocation.function._builtin:
            # a user's Function may change an input in place (mark_dirty), which PyTorch's
            # rule forbids on a leaf and which would move the leaves the check perturbs: it
            # gets copies, through which the gradient still reaches the leaves
            args = list(args)
            for position in self.leaf_positions:
                args[position] = args[position].clone()
        result = self.invocation.function.apply(*args, **self.kwargs)
        outputs = [result] if isinstance(result, Tensor) else list(result)
        kept = self.invocation.differentiable_outputs or (True,) * len(outputs)
        return [out for out, keep in zip(outputs, kept)
                if keep and isinstance(out, Tensor) and out.dtype.is_floating_point]

    def projection_values(self) -> np.ndarray:
        """The outputs flattened (without grad): the basis of every finite difference."""
        with no_grad():
            outputs = self._outputs(self.args)
        self.output_dtypes = [out.dtype for out in outputs]
        self.output_sizes = [out._data.size for out in outputs]
        return np.concatenate([flat_values(out) for out in outputs]) \
            if outputs else np.zeros(0)

    def coarse_dtypes(self) -> str:
        """Why the check can't resolve a derivative here ('' when it can): an output, or (when
        re-run in its own dtypes) a leaf, in float16 or bfloat16."""
        for what, dtypes in (("outputs", self.output_dtypes),
                             ("inputs", [self.args[p].dtype for p in self.leaf_positions])):
            names = sorted({dtype.name for dtype in dtypes if dtype.itemsize == 2})
            if names:
                return (f"{self.note + '; ' if self.note else ''}its {what} are {' and '.join(names)}: "
                        "finite differences are below the dtype's resolution")
        return ""

    def in_float32(self) -> bool:
        dtypes = self.output_dtypes + [self.args[p].dtype for p in self.leaf_positions]
        return any(dtype.itemsize == 4 for dtype in dtypes)

    def computes_in_float32(self, seed: int) -> bool:
        """Whether the forward rounds to float32 inside though its outputs are float64
        (`F.gelu(x.float()).to(x.dtype)`): at inputs moved off float32's grid, every output
        value still lies on it. Such a forward has float32's resolution, so finite
        differences need float32's step."""
        if self.note or not self.leaves:
            return False
        rng = np.random.default_rng(seed)
        originals = [leaf.copy() for leaf in self.leaves]
        try:
            for leaf, original, device in zip(self.leaves, originals, self.devices):
                nudge = 1.0 + 1e-7 * rng.uniform(0.5, 1.0, size=leaf.shape)
                leaf[...] = original * transfer(nudge, cpu, device) + 1e-9
            values = self.projection_values()
        finally:
            for leaf, original in zip(self.leaves, originals):
                leaf[...] = original
        values = values[np.isfinite(values)]
        self.rounded_to_float32 = bool(values.size) and bool(
            (values == values.astype(np.float32).astype(np.float64)).all()) and \
            bool((values != 0).any())
        return self.rounded_to_float32

    def precision_note(self) -> str:
        """How the call was checked, when not plainly in float64."""
        if self.note:
            names = sorted({arg.dtype.name for arg in self.args
                            if isinstance(arg, Tensor) and arg.dtype.is_floating_point})
            dtypes = names[0] if len(names) == 1 else f"its own dtypes ({' and '.join(names)})"
            return f"checked in {dtypes}: {self.note}"
        if self.tolerances is FLOAT32 and self.rounded_to_float32:
            return ("checked with float32's step and tolerances: its forward computes in float32 "
                    "(its float64 outputs hold float32 values)")
        if self.tolerances is FLOAT32:
            return "checked with float32's step and tolerances: its outputs are float32"
        return ""

    def fix_weights(self, base: np.ndarray) -> None:
        """The projection's random weights (exact in float32, so a float32 output's backward
        receives them unrounded), zero at the outputs that are not finite at the call's inputs
        (no derivative there); and which input elements are checked."""
        weights = np.random.default_rng(1).standard_normal(base.shape)
        self.weights = weights.astype(np.float32).astype(np.float64)
        left_out = ~np.isfinite(base)
        self.weights[left_out] = 0.0
        self.left_out = int(left_out.sum())
        self.resolution = np.repeat([np.finfo(dtype.numpy_dtype).eps for dtype in self.output_dtypes],
                                    self.output_sizes)
        defined = self.invocation.function.defined_gradients(self.args, self.kwargs)
        self.usable, self.nonfinite = [], []
        for position, leaf, device in zip(self.leaf_positions, self.leaves, self.devices):
            finite = np.asarray(transfer(device.xp.isfinite(leaf), device, cpu))
            given = np.broadcast_to(np.asarray(defined.get(position, False), dtype=bool), leaf.shape)
            self.usable.append(finite & ~given)
            self.nonfinite.append(~finite & ~given)
            self.defined_count += int(given.sum())
        self.unusable_count = int(sum(mask.sum() for mask in self.nonfinite))
        self.size = sum(leaf.size for leaf in self.leaves)
        self.usable_count = self.size - self.unusable_count - self.defined_count

    def difference(self, plus: np.ndarray, minus: np.ndarray) -> float | None:
        """weights . (plus - minus): the projection's change between two runs, None where
        it is undefined (a weighted output NaN or infinite in one run but not equal in both;
        one that stays the same infinity did not change)."""
        with np.errstate(invalid="ignore", over="ignore"):  # inf - inf: undefined, found below
            change = np.where((plus == minus) | (self.weights == 0), 0.0, plus - minus)
        if not np.isfinite(change).all():
            return None
        return float(change @ self.weights)

    def rounding(self, plus: np.ndarray, minus: np.ndarray) -> float:
        """A bound on how much of `difference(plus, minus)` the rounding of the output values
        to their dtype can make: each is within half its resolution of the exact value."""
        moved = (plus != minus) & (self.weights != 0)
        return float((np.abs(self.weights[moved]) * self.resolution[moved]
                      * np.maximum(np.abs(plus[moved]), np.abs(minus[moved]))).sum())

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
        self.output_weights = []  # each output's gradient in the projection, for the blame
        for position in self.leaf_positions:
            leaf = wrap_array(args[position]._data, args[position]._device).requires_grad_()
            args[position] = leaf
            leaves.append(leaf)
        outputs = self._outputs(args)
        offset = 0
        grad_outputs = []
        for out in outputs:
            size = out._data.size
            weights = self.weights[offset:offset + size].reshape(out.shape).astype(out._data.dtype)
            grad_outputs.append(wrap_array(transfer(weights, cpu, out._device), out._device))
            self.output_weights.append(np.asarray(weights, dtype=np.float64))
            offset += size
        connected = [(out, grad) for out, grad in zip(outputs, grad_outputs) if out.requires_grad]
        if not connected:
            return [np.zeros(leaf.shape) for leaf in self.leaves]
        if self.site is None:
            grads = engine.grad([out for out, _ in connected], leaves, [g for _, g in connected],
                                allow_unused=True)
        else:
            with self.site.watching():
                grads = engine.grad([out for out, _ in connected], leaves,
                                    [g for _, g in connected], allow_unused=True)
        return [np.zeros(leaf.shape) if grad is None else np.asarray(grad._host_array(), np.float64)
                for grad, leaf in zip(grads, self.leaves)]

    def _perturbed(self, leaf, index, step: float) -> tuple:
        """The outputs with one element moved by `step`, and the step its dtype really took."""
        original = leaf[index].copy()  # on CuPy an element is a view, not a number
        leaf[index] = original + step
        taken = float(leaf[index]) - float(original)
        try:
            return self.projection_values(), taken
        finally:
            leaf[index] = original

    def _host_copies(self) -> list:
        return [np.array(transfer(leaf, device, cpu), dtype=np.float64)
                for leaf, device in zip(self.leaves, self.devices)]

    def fast_check_passes(self, analytical: list, seed: int) -> bool:
        """The directional derivative along a random direction over the checked input
        elements; False (the element-wise check decides) when it disagrees or is undefined."""
        eps, rng = self.tolerances.eps, np.random.default_rng(seed)
        directions = [rng.standard_normal(leaf.shape) * usable
                      for leaf, usable in zip(self.leaves, self.usable)]
        norm = np.sqrt(sum(float((d * d).sum()) for d in directions)) or 1.0
        directions = [d / norm for d in directions]
        originals = [leaf.copy() for leaf in self.leaves]
        placed = [transfer(direction, cpu, device) for direction, device in zip(directions,
                                                                                self.devices)]
        values, moved = [], []
        for sign in (1.0, -1.0):
            for leaf, direction, original in zip(self.leaves, placed, originals):
                leaf[...] = original + sign * eps * direction
            moved.append(self._host_copies())
            values.append(self.projection_values())
        for leaf, original in zip(self.leaves, originals):
            leaf[...] = original
        with np.errstate(invalid="ignore"):  # inf - inf at the elements left unmoved
            taken = [np.where(usable, plus - minus, 0.0)
                     for plus, minus, usable in zip(moved[0], moved[1], self.usable)]
        if np.sqrt(sum(float((t * t).sum()) for t in taken)) < eps:
            return False  # the dtype rounded most of the step away
        change = self.difference(values[0], values[1])
        if change is None:
            return False
        numerical = change / (2 * eps)
        predicted = sum(float((g * t).sum()) for g, t in zip(analytical, taken)) / (2 * eps)
        tol = self.tolerances
        return abs(predicted - numerical) <= tol.atol + tol.rtol * abs(numerical)

    def elementwise_check(self, analytical: list, base: np.ndarray, seed: int) -> NodeCheck:
        """Each sampled element moved on its own by eps times its magnitude (at least eps)."""
        rng = np.random.default_rng(seed + 1)
        tol = self.tolerances
        mismatches, kinks, checked, undefined = [], 0, 0, 0
        moving = set()  # inputs with an element whose move changed an output
        compared = {}   # input position -> (indices, analytical, numerical) of checked elements
        for number, (leaf, grad, usable) in enumerate(zip(self.leaves, analytical, self.usable)):
            for index in _sample_indices(usable, rng):
                step = tol.eps * max(1.0, abs(float(leaf[index])))
                (plus, up), (minus, down) = (self._perturbed(leaf, index, step),
                                             self._perturbed(leaf, index, -step))
                changes = [self.difference(plus, minus), self.difference(plus, base),
                           self.difference(base, minus)]
                if None in changes or self.moves_left_out(base, plus, minus):
                    undefined += 1  # an output is or turns NaN/inf as this element moves
                    continue
                checked += 1
                if any(changes):
                    moving.add(number)
                rounding = self.rounding(plus, minus)
                central = changes[0] / (up - down)
                value = float(grad[index])
                error = abs(value - central)
                for column, item in zip(compared.setdefault(self.leaf_positions[number],
                                                            ([], [], [])), (index, value, central)):
                    column.append(item)
                if value == central or error <= (tol.atol + tol.rtol * abs(central)
                                                 + rounding / (up - down)):
                    continue
                forward, backward = changes[1] / up, changes[2] / -down
                tolerance = (tol.atol + tol.rtol * max(abs(forward), abs(backward))
                             + rounding / min(up, -down))
                if on_a_kink(value, forward, backward, tolerance):
                    kinks += 1  # one-sided slopes differ: a kink; the backward chose a sub-gradient
                    continue
                mismatches.append({"input": self.leaf_positions[number], "index": list(index),
                                   "analytical": value, "numerical": central, "abs_error": error,
                                   # (relative to the numerical value floored at atol, as
                                   # gradcheck's relative error is)
                                   "rel_error": error / max(abs(central), tol.atol),
                                   "leaf": number})
        skipped = self.unusable_count + undefined
        note = "; ".join(self.notes(self.unusable_count, undefined, checked + undefined))
        flat = sorted({entry.pop("leaf") for entry in mismatches} - moving)
        if flat:  # no output moved with these inputs: a non-zero backward there is a surrogate
            inputs = " and ".join(f"input {self.leaf_positions[number]}" for number in flat)
            surrogate = (f"its forward is flat in {inputs} (no checked element moved an output: "
                         "a piecewise-constant function such as round or sign), so its non-zero "
                         "backward there is a surrogate gradient (a straight-through estimator), "
                         "which finite differences cannot check")
            mismatches = [entry for entry in mismatches
                          if self.leaf_positions.index(entry["input"]) not in flat]
            if not mismatches:
                return self.verdict("skipped", surrogate + (f"; {note}" if note else ""),
                                    checked, skipped)
            note = "; ".join([surrogate] + ([note] if note else []))
        passed = self.passed_through({self.leaf_positions.index(entry["input"]) for entry in mismatches},
                                     compared)
        if passed:  # an identity forward with a scaled or clipped backward: a gradient
            # reversal layer, a gradient clip
            mismatches = [entry for entry in mismatches if entry["input"] not in passed]
            reversal = "; ".join(
                f"its forward returns input {position} unchanged and its backward {does} there: "
                "a gradient reversal (or scaling, or clipping) layer, as in domain-adversarial "
                "training, whose backward is meant to differ from the forward's derivative, so "
                "finite differences cannot check it"
                for position, does in passed.items())
            if not mismatches:
                return self.verdict("skipped", reversal + (f"; {note}" if note else ""),
                                    checked, skipped)
            note = "; ".join([reversal] + ([note] if note else []))
        if mismatches:
            mismatches.sort(key=lambda entry: -_finite_or_inf(entry["abs_error"]))
            reason = "the backward disagrees with finite differences" + (f" ({note})" if note else "")
            return self.verdict("fail", reason, checked, skipped,
                                max_abs_error=mismatches[0]["abs_error"],
                                max_rel_error=max(m["rel_error"] for m in mismatches),
                                worst=mismatches[:MAX_REPORT],
                                blame=self.blame(mismatches, compared, analytical),
                                backward_site=None if self.site is None or self.site.file is None
                                else self.site.definition)
        if kinks:
            return self.verdict("skipped", f"not differentiable here: {kinks} of {checked} checked "
                                "elements sit on a kink (e.g. relu/abs at 0, max with ties)"
                                + (f"; {note}" if note else ""), checked, skipped)
        if not checked:
            return self.verdict("skipped", f"finite differences undefined at every sampled "
                                f"element ({note})", 0, skipped)
        return self.verdict("pass", note, checked, skipped)

    def passed_through(self, numbers: set, compared: dict) -> dict:
        """{input position: what its backward does} for the leaves among `numbers` (leaf
        numbers) that an output of the forward is, value for value, and whose checked gradient
        entries are all one factor (not 1) times the numerical ones, or the numerical ones
        clamped to one bound (`grad.clamp(-b, b)`): an identity whose backward scales or
        clips the gradient, which is what such a Function is written for."""
        if not numbers:
            return {}
        outputs = [output._host_array() for output in self._outputs(self.args)]
        found = {}
        for number in numbers:
            leaf = np.asarray(self._host_copies()[number])
            if not any(output.shape == leaf.shape and np.array_equal(output, leaf)
                       for output in outputs):
                continue
            position = self.leaf_positions[number]
            _, analytical, numerical = compared.get(position, ((), (), ()))
            pairs = [(a, n) for a, n in zip(analytical, numerical) if abs(n) > self.tolerances.atol]
            if not pairs:
                continue
            tol = self.tolerances

            def close(a, b):
                return abs(a - b) <= tol.atol + tol.rtol * abs(b)
            scale = pairs[0][0] / pairs[0][1]
            if scale != 1.0 and all(close(a, scale * n) for a, n in pairs):
                found[position] = f"multiplies the gradient by {scale:.6g}"
                continue
            clipped = [(a, n) for a, n in pairs if not close(a, n)]
            bound = abs(clipped[0][0]) if clipped else 0.0
            if clipped and bound > tol.atol and all(
                    close(abs(a), bound) and a * n > 0 and abs(n) > bound for a, n in clipped) \
                    and all(abs(n) <= bound * (1 + tol.rtol) + tol.atol
                            for a, n in pairs if close(a, n)):
                found[position] = f"clamps the gradient to ±{bound:.6g}"
        return found

    def blame(self, mismatches: list, compared: dict, analytical: list) -> list:
        """Per input with a wrong gradient: its name in forward's signature, the line its
        gradient is computed on, and the shape of the error when every checked element of
        it fits one (see `genesis.debug.blame`)."""
        names = forward_input_names(self.invocation.function)
        tol = self.tolerances
        explained = explain_inputs(compared, dict(zip(self.leaf_positions, analytical)),
                                   tol.atol, tol.rtol, self.output_weights)
        wrong = sorted({entry["input"] for entry in mismatches})
        rows = []
        for position in wrong:
            line, code = (None, "") if self.site is None else self.site.slot_site(position)
            rows.append({"input": position,
                         "name": names[position] if position < len(names) else None,
                         "explanation": explained.get(position, ""),
                         "line": None if line is None else f"{self.site.file}:{line}",
                         "code": code})
        return rows

    def unusable_words(self) -> str:
        """What the input elements without a finite difference hold: ±inf, NaN or both."""
        values = [np.asarray(transfer(leaf, device, cpu))[nonfinite]
                  for leaf, device, nonfinite in zip(self.leaves, self.devices, self.nonfinite)]
        held = np.concatenate([value.reshape(-1) for value in values])
        kinds = [word for word, present in (("±inf", np.isinf(held).any()),
                                            ("NaN", np.isnan(held).any())) if present]
        return " and ".join(kinds)

    def notes(self, at_inputs: int, moved: int, visited: int | None = None) -> list:
        """The verdict's notes: how the call was checked when not plainly in float64, the
        elements skipped or left out, the outputs left out. `at_inputs` elements at ±inf/NaN,
        `moved` of the `visited` finite ones checked one by one (all of them when None)."""
        notes = [self.precision_note()]
        if self.defined_count:
            notes.append(f"{self.defined_count} of {self.size} input elements left out: their "
                         f"gradient is defined by {self.invocation.function.__name__}."
                         "defined_gradients, not derived")
        looked_at = self.size - self.defined_count if visited is None else at_inputs + visited
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
        return [note for note in notes if note]


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
