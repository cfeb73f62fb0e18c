"""Per-parameter gradient norms at every backward call, and what they reveal:
parameters that never get a gradient, all-zero gradients, exploding and
vanishing gradients.

The thresholds are chosen to avoid false alarms: a norm must grow by three
orders of magnitude (to at least 1) to count as exploding; a parameter's norm
must be under 1e-5 of the largest one in the same step to count as vanishing
(gradients shrinking as training converges are not a problem).
"""
from __future__ import annotations

import math

from ._census import SQUARE_SUMS
from .findings import Finding
from .readings import Readings
from .trace import ParameterRow

__all__ = ["ParamWatch", "EXPLODING_FACTOR", "VANISHING_RATIO"]

EXPLODING_FACTOR = 1e3
VANISHING_RATIO = 1e-5


class ParamWatch:
    """Keeps `history[name]`: the gradient norm of each tracked leaf after each backward
    call (None when it had no gradient). Leaves are added with `track(name, tensor)`.
    Norms of gradients on a GPU are filled in when `readings` fetches."""

    def __init__(self, readings: Readings | None = None):
        self.readings = readings if readings is not None else Readings()
        self.tensors = {}     # name -> tensor
        self.history = {}     # name -> [norm or None per step]
        self.steps = 0

    def track(self, name: str, tensor) -> None:
        if name in self.tensors or not tensor.requires_grad:
            return
        self.tensors[name] = tensor
        self.history[name] = [None] * self.steps

    def measure(self) -> None:
        """Record every tracked leaf's current gradient norm as one more step (the gradients
        of one device summed in one launch where it can)."""
        step = self.steps
        by_device = {}
        for name, tensor in self.tensors.items():
            norms = self.history[name]
            norms.append(None)
            grad = tensor.grad
            if grad is not None:
                by_device.setdefault(grad._device, []).append((norms, grad._data))
        for device, entries in by_device.items():
            def record(squares: list, entries=entries) -> None:
                for (norms, _), total in zip(entries, squares):
                    norms[step] = math.sqrt(total)
            xp = device.xp
            self.readings.read(xp, SQUARE_SUMS(device, [array for _, array in entries],
                                               lambda count: self.readings.zeroed(xp, count)),
                               record)
        self.steps += 1

    # -- what the histories say --------------------------------------------------
    def status(self, name: str) -> str:
        if not self.steps:
            return "not measured"  # no backward call completed
        norms = self.history[name]
        seen = [norm for norm in norms if norm is not None]
        if not seen:
            return "no gradient"
        if any(not math.isfinite(norm) for norm in seen):
            return "nan"
        if all(norm == 0.0 for norm in seen):
            return "zero gradient"
        if _explodes(seen):
            return "exploding"
        if name in self._vanishing():
            return "vanishing"
        return "ok"

    def _vanishing(self) -> set:
        last = {name: norms[-1] for name, norms in self.history.items()
                if norms and norms[-1] is not None and math.isfinite(norms[-1])}
        largest = max(last.values(), default=0.0)
        if largest <= 1e-8:
            return set()
        return {name for name, norm in last.items() if 0.0 < norm < VANISHING_RATIO * largest}

    def rows(self) -> list:
        rows = []
        for name, tensor in self.tensors.items():
            norms = self.history[name]
            last = next((norm for norm in reversed(norms) if norm is not None), None)
            rows.append(ParameterRow(name, tuple(tensor.shape), tensor.dtype.name,
                                     _plain(last), self.status(name), [_plain(n) for n in norms]))
        return rows

    def findings(self, locate) -> list:
        """One finding per problem: parameters without (or with all-zero) gradient grouped by
        module, exploding and vanishing ones grouped together. `locate(name, module)` gives
        (source, code, graph, node) to point at."""
        groups = {}
        for name in self.tensors:
            status = self.status(name)
            if status in ("ok", "nan", "not measured"):  # NaN is reported where it was born
                continue
            module = name.rpartition(".")[0] or None  # dotted names are module parameters
            key = module if status in ("no gradient", "zero gradient") else None
            groups.setdefault((status, key), []).append(name)
        found = []
        for (status, module), names in groups.items():
            source, code, graph, node = locate(names[0], module)
            histories = {name: [_plain(n) for n in self.history[name]] for name in names}
            found.append(Finding(*_describe(status, names, self.history, self.steps),
                                 module=module, source=source, code=code, graph=graph, node=node,
                                 details={"parameters": names, "history": histories}))
        return found


def _describe(status: str, names: list, history: dict, steps: int) -> tuple:
    listed = _listing(names)
    plural = len(names) > 1
    if status == "no gradient":
        return ("no_gradient", "warning", f"{listed} received no gradient",
                f"{listed} {'require' if plural else 'requires'} grad but no gradient reached "
                f"{'them' if plural else 'it'} in {steps} backward call(s): nothing on the path "
                "from the loss leads there. Detached by mistake (.detach(), .data, "
                "genesis.no_grad()) or never used in the forward?")
    if status == "zero gradient":
        return ("zero_gradient", "warning", f"{listed}: gradient always zero",
                f"the gradient of {listed} was exactly zero in every backward call (e.g. all the "
                "ReLUs after it are dead, or its output is multiplied by 0)")
    if status == "exploding":
        growth = {name: _growth([n for n in history[name] if n is not None]) for name in names}
        worst = max(growth, key=lambda name: growth[name][2])
        first, peak, factor = growth[worst]
        return ("exploding_gradient", "warning", f"gradient norms exploding ({listed})",
                f"gradient norms grew by orders of magnitude over {steps} backward calls; worst: "
                f"{worst} from {first:.3g} to {peak:.3g} (x{factor:.3g}). Lower the learning "
                "rate, clip gradients (genesis.nn.utils.clip_grad_norm_) or check the init.")
    last = {name: history[name][-1] for name in names}
    return ("vanishing_gradient", "warning", f"gradients vanishing ({listed})",
            f"{listed} {'have' if plural else 'has'} gradient norms under {VANISHING_RATIO:g} of the "
            "largest parameter gradient in the same step ("
            + ", ".join(f"{name}: {norm:.3g}" for name, norm in last.items())
            + "): they barely learn (saturating activations, deep stacks without "
            "normalisation or residual connections)")


def _listing(names: list) -> str:
    if len(names) == 1:
        return names[0]
    shown = names[:4]
    rest = f" and {len(names) - len(shown)} more" if len(names) > len(shown) else ""
    if rest:
        return ", ".join(shown) + rest
    return ", ".join(shown[:-1]) + f" and {shown[-1]}"


def _growth(norms: list) -> tuple:
    first = next((norm for norm in norms if norm > 0), 0.0)
    peak = max(norms)
    return first, peak, (peak / first if first else math.inf)


def _explodes(norms: list) -> bool:
    first = next((norm for norm in norms if norm > 0), None)
    return first is not None and max(norms) >= max(EXPLODING_FACTOR * first, 1.0)


def _plain(value):
    """A norm for trace.json (strict JSON): non-finite norms become None (the status says "nan")."""
    if value is None or math.isfinite(value):
        return value
    return None
