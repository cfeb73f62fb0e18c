"""The strong-Wolfe line search LBFGS uses (`line_search_fn="strong_wolfe"`): bracket a step
that satisfies the strong Wolfe conditions, then narrow the bracket ("zoom"), each trial
step placed by cubic interpolation of the two ends (Nocedal & Wright, Numerical
Optimization, algorithms 3.5 and 3.6; the bracketing and safeguards follow minFunc, as
PyTorch's does, so both take the same steps)."""
from __future__ import annotations

import math

__all__ = ["strong_wolfe"]


def cubic_minimum(x1: float, f1: float, g1: float, x2: float, f2: float, g2: float,
                  bounds: tuple | None = None) -> float:
    """Where the cubic through (x1, f1) and (x2, f2) with slopes g1 and g2 is smallest, kept
    within `bounds` (default: between x1 and x2); the middle of them when it has none.

    >>> round(cubic_minimum(0.0, 1.0, -1.0, 2.0, 1.0, 1.0), 6)
    1.0
    """
    low, high = bounds if bounds is not None else (min(x1, x2), max(x1, x2))
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    square = d1 * d1 - g1 * g2
    if square >= 0:
        d2 = math.sqrt(square)
        if x1 <= x2:
            position = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
        else:
            position = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
        return min(max(position, low), high)
    return (low + high) / 2.0


def strong_wolfe(evaluate, t: float, d, loss: float, grad, gtd: float, c1: float = 1e-4,
                 c2: float = 0.9, tolerance_change: float = 1e-9, max_ls: int = 25) -> tuple:
    """A step `t` along direction `d` (an array) from the current point, where `evaluate(t)`
    gives (loss, gradient array) at that step, `loss`/`grad` are those at step 0 and `gtd`
    the slope there. Returns (loss, gradient, t, evaluations)."""
    xp_abs_max = lambda array: float(abs(array).max())  # noqa: E731
    d_norm = xp_abs_max(d)
    grad = grad.copy()
    new_loss, new_grad = evaluate(t)
    evaluations = 1
    new_gtd = float((new_grad * d).sum())
    previous = (0.0, loss, grad, gtd)  # t, loss, gradient, slope
    done = False
    iterations = 0
    bracket = None
    while iterations < max_ls:
        if new_loss > loss + c1 * t * gtd or (iterations > 1 and new_loss >= previous[1]):
            bracket = [(previous[0], previous[1], previous[2], previous[3]),
                       (t, new_loss, new_grad.copy(), new_gtd)]
            break
        if abs(new_gtd) <= -c2 * gtd:
            bracket, done = [(t, new_loss, new_grad, new_gtd)], True
            break
        if new_gtd >= 0:
            bracket = [(previous[0], previous[1], previous[2], previous[3]),
                       (t, new_loss, new_grad.copy(), new_gtd)]
            break
        # extrapolate: the next trial between 1.01 t and 10 t
        low, high = t + 0.01 * (t - previous[0]), t * 10
        next_t = cubic_minimum(previous[0], previous[1], previous[3], t, new_loss, new_gtd,
                               bounds=(low, high))
        previous = (t, new_loss, new_grad.copy(), new_gtd)
        t = next_t
        new_loss, new_grad = evaluate(t)
        evaluations += 1
        new_gtd = float((new_grad * d).sum())
        iterations += 1
    if iterations == max_ls:
        bracket = [(0.0, loss, grad, gtd), (t, new_loss, new_grad, new_gtd)]
    # zoom: narrow the bracket until a step satisfies the strong Wolfe conditions
    insufficient_progress = False
    low_index, high_index = (0, 1) if len(bracket) == 2 and bracket[0][1] <= bracket[-1][1] else (1, 0)
    if len(bracket) == 1:
        low_index = high_index = 0
    while not done and iterations < max_ls:
        if abs(bracket[1][0] - bracket[0][0]) * d_norm < tolerance_change:
            break
        t = cubic_minimum(bracket[0][0], bracket[0][1], bracket[0][3],
                          bracket[1][0], bracket[1][1], bracket[1][3])
        # keep the trial away from the ends (minFunc's safeguard)
        top, bottom = max(bracket[0][0], bracket[1][0]), min(bracket[0][0], bracket[1][0])
        eps = 0.1 * (top - bottom)
        if min(top - t, t - bottom) < eps:
            if insufficient_progress or t >= top or t <= bottom:
                t = top - eps if abs(t - top) < abs(t - bottom) else bottom + eps
                insufficient_progress = False
            else:
                insufficient_progress = True
        else:
            insufficient_progress = False
        new_loss, new_grad = evaluate(t)
        evaluations += 1
        new_gtd = float((new_grad * d).sum())
        iterations += 1
        if new_loss > loss + c1 * t * gtd or new_loss >= bracket[low_index][1]:
            bracket[high_index] = (t, new_loss, new_grad.copy(), new_gtd)
            low_index, high_index = (0, 1) if bracket[0][1] <= bracket[1][1] else (1, 0)
        else:
            if abs(new_gtd) <= -c2 * gtd:
                done = True
            elif new_gtd * (bracket[high_index][0] - bracket[low_index][0]) >= 0:
                bracket[high_index] = bracket[low_index]
            bracket[low_index] = (t, new_loss, new_grad.copy(), new_gtd)
    t, loss, grad, _ = bracket[low_index]
    return loss, grad, t, evaluations
