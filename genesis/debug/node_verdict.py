"""What a per-node check concludes (`NodeCheck`) and the step and tolerances it uses in
each precision (`Tolerances`: `FLOAT64`, `FLOAT32`).

>>> print(NodeCheck("skipped", "no floating-point input required grad").report())
skipped: no floating-point input required grad
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .parameter_uses import short_path

__all__ = ["NodeCheck", "Tolerances", "FLOAT64", "FLOAT32"]


@dataclass(frozen=True)
class Tolerances:
    """The finite-difference step and the tolerances of a check in one precision: an entry
    fails when |analytical - numerical| > atol + rtol * |numerical|."""

    eps: float
    atol: float
    rtol: float

    def as_dict(self) -> dict:
        return {"eps": self.eps, "atol": self.atol, "rtol": self.rtol}


FLOAT64 = Tolerances(eps=1e-6, atol=1e-5, rtol=1e-3)
# float32 resolves 1.2e-7 of a value. A step of the order of the cube root of that balances
# the central difference's truncation error (~eps**2) against its rounding error
# (~resolution / eps), leaving both near 1e-5 of the function's scale; rtol and atol leave
# room for the rounding a float32 forward and backward accumulate, while a wrong sign or a
# missing factor (an error the size of the gradient itself) stays far outside them.
FLOAT32 = Tolerances(eps=1e-3, atol=1e-3, rtol=1e-2)


@dataclass
class NodeCheck:
    """The verdict on one call: "pass", "fail" or "skipped" (a call the check cannot judge,
    with the reason)."""

    status: str
    reason: str = ""
    max_abs_error: float = 0.0
    max_rel_error: float = 0.0
    worst: list = field(default_factory=list)   # dicts: input, index, analytical, numerical, abs_error
    checked_elements: int = 0
    skipped_elements: int = 0   # input elements without a finite difference (see the reason)
    defined_elements: int = 0   # input elements whose gradient the Function defines
    tolerances: dict = field(default_factory=FLOAT64.as_dict)
    # per input with a wrong gradient: input, name, explanation, line ("file:line"), code
    blame: list = field(default_factory=list)
    backward_site: str | None = None   # "file:line" of the backward's def (user code)

    def wrong_inputs(self) -> str:
        """The inputs with a wrong gradient, in words: "x (input 0)", "x and w (inputs 0, 1)"."""
        if not self.blame:
            return ""
        positions = [str(row["input"]) for row in self.blame]
        names = [row["name"] for row in self.blame]
        plural = len(positions) > 1
        label = f"input{'s' if plural else ''} {', '.join(positions)}"
        return f"{' and '.join(names)} ({label})" if all(names) else label

    def report(self) -> str:
        """A short text block: verdict, which inputs' gradients are wrong and where they are
        computed, errors and the worst entries."""
        lines = [f"{self.status}: {self.reason}" if self.reason else self.status]
        for row in self.blame:
            name = f"{row['name']} (input {row['input']})" if row["name"] else f"input {row['input']}"
            lines.append(f"wrong gradient for {name}"
                         + (f": {row['explanation']}" if row["explanation"] else ""))
            if row["line"]:
                lines.append(f"  computed at {_short(row['line'])}: {row['code']}")
        if self.backward_site and self.blame:
            lines.append(f"backward defined at {_short(self.backward_site)}")
        if self.worst:
            tol = self.tolerances
            lines.append(f"max abs error {self.max_abs_error:.3g}, max rel error "
                         f"{self.max_rel_error:.3g} (atol={tol['atol']:g}, rtol={tol['rtol']:g}, "
                         f"eps={tol['eps']:g}; gradient of a random projection of the outputs)")
            lines.append(f"  {'input':<6} {'element':<14} {'analytical':>12} {'numerical':>12} "
                         f"{'abs error':>10}")
            for entry in self.worst:
                lines.append(f"  {entry['input']:<6} {str(tuple(entry['index'])):<14} "
                             f"{entry['analytical']:>12.6g} {entry['numerical']:>12.6g} "
                             f"{entry['abs_error']:>10.3g}")
        return "\n".join(lines)



def _short(place: str) -> str:
    """"file:line" with the file relative to the working directory when below it."""
    file, _, line = place.rpartition(":")
    return f"{short_path(file)}:{line}"
