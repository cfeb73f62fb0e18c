"""Telling a forward computed at lower precision from a wrong gradient.

A float64 function that computes in float32 inside (`x.float().sin().double()`) returns
float64 values that are float32 values: each output is rounded to float32 precision, and a
central difference with a small step measures that rounding, up to |y| * ulp / (2 * eps),
not the derivative. No backward can match it, right or wrong; `rounded_to` says when the
entries out of tolerance are that noise.

>>> import numpy as np
>>> x = np.linspace(0.1, 1.0, 5)
>>> rounded_to(x.astype(np.float32).astype(np.float64), x, np.array([0.02]), 1e-6)
'float32'
>>> rounded_to(np.sin(x), x, np.array([0.02]), 1e-6) is None   # computed in float64
True
"""
from __future__ import annotations

import numpy as np

__all__ = ["rounded_to"]

NARROWER = (np.float16, np.float32)  # the dtypes a wider forward may compute in, narrowest first
SLACK = 2.0  # how far above the largest rounding noise an error may be and still be noise


def rounded_to(outputs, inputs, errors, eps: float) -> str | None:
    """The name of the narrower dtype every finite value of `outputs` (a float64 copy of a
    wider output) is exactly a value of, while `inputs` (of the input it is differentiated
    by) are not all, and whose rounding, over a central difference with step `eps`, is as
    large as the `errors` out of tolerance; else None."""
    finite = outputs[np.isfinite(outputs)]
    if not finite.size or not errors.size:
        return None
    for dtype in NARROWER:
        if not np.array_equal(finite.astype(dtype).astype(np.float64), finite):
            continue
        if np.array_equal(inputs.astype(dtype).astype(np.float64), inputs):
            return None  # the inputs are of that precision too: nothing was narrowed
        noise = float(np.abs(finite).max()) * float(np.finfo(dtype).eps) / (2 * eps)
        return np.dtype(dtype).name if float(errors.max()) <= SLACK * noise else None
    return None
