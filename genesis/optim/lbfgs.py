"""L-BFGS, as in PyTorch: a quasi-Newton method that keeps the last `history_size` steps
and gradient changes to shape its direction, with a fixed step or a strong-Wolfe line
search. Its `step` needs a closure that recomputes the loss (and the gradients)."""
from __future__ import annotations

from ..autograd.grad_mode import enable_grad
from ..tensor import wrap_array
from ._wolfe import strong_wolfe
from .optimizer import Optimizer, check_tensor_lr, scalar

__all__ = ["LBFGS"]


class LBFGS(Optimizer):
    """L-BFGS over all parameters at once (one parameter group).

    >>> import genesis
    >>> w = genesis.tensor([3.0, -2.0], requires_grad=True)
    >>> optimizer = genesis.optim.LBFGS([w], line_search_fn="strong_wolfe")
    >>> def closure():
    ...     optimizer.zero_grad()
    ...     loss = ((w - genesis.tensor([1.0, 1.0])) ** 2).sum()
    ...     loss.backward()
    ...     return loss
    >>> _ = optimizer.step(closure); [round(v, 4) for v in w.tolist()]
    [1.0, 1.0]
    """

    def __init__(self, params, lr: float = 1, max_iter: int = 20, max_eval: int | None = None,
                 tolerance_grad: float = 1e-7, tolerance_change: float = 1e-9,
                 history_size: int = 100, line_search_fn: str | None = None):
        check_tensor_lr(lr)
        if lr < 0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if line_search_fn not in (None, "strong_wolfe"):
            raise ValueError(f"only 'strong_wolfe' is supported as line_search_fn, got {line_search_fn!r}")
        max_eval = max_iter * 5 // 4 if max_eval is None else max_eval
        super().__init__(params, dict(lr=lr, max_iter=max_iter, max_eval=max_eval,
                                      tolerance_grad=tolerance_grad,
                                      tolerance_change=tolerance_change,
                                      history_size=history_size, line_search_fn=line_search_fn))
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]

    # -- the parameters as one flat vector ----------------------------------------------
    def _xp(self):
        return self._params[0]._device.xp

    def _flat_grad(self):
        xp = self._xp()
        return xp.concatenate([
            (p._grad._data if p._grad is not None else xp.zeros_like(p._data)).reshape(-1)
            for p in self._params])

    def _add_step(self, step: float, direction) -> None:
        offset = 0
        for p in self._params:
            count = p._data.size
            p._data += step * direction[offset:offset + count].reshape(p._data.shape)
            p._version_counter[0] += 1
            offset += count

    def _set_params(self, arrays: list) -> None:
        for p, array in zip(self._params, arrays):
            p._data[...] = array
            p._version_counter[0] += 1

    def _evaluate_at(self, closure, start: list, step: float, direction) -> tuple:
        """(loss, flat gradient) at `start` + step * direction; the parameters go back to start."""
        self._add_step(step, direction)
        with enable_grad():
            loss = float(closure())
        gradient = self._flat_grad()
        self._set_params(start)
        return loss, gradient

    # -- the step -------------------------------------------------------------------------
    def step(self, closure):  # noqa: C901 (the algorithm, in one place)
        """Run up to `max_iter` L-BFGS iterations; `closure()` must zero the gradients,
        compute the loss, call backward and return the loss. Returns the first loss."""
        if closure is None:
            raise RuntimeError("LBFGS.step needs a closure that recomputes the loss: "
                               "optimizer.step(closure)")
        group = self.param_groups[0]
        lr, max_iter, max_eval = scalar(group["lr"]), group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        history_size, line_search = group["history_size"], group["line_search_fn"]
        xp = self._xp()
        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        with enable_grad():
            first_loss = closure()
        loss = float(first_loss)
        evaluations = 1
        state["func_evals"] += 1
        flat_grad = self._flat_grad()
        if float(abs(flat_grad).max()) <= tolerance_grad:
            return first_loss

        direction = _array(state.get("d"))
        step = state.get("t")
        old_dirs = [_array(v) for v in state.get("old_dirs", [])]
        old_steps = [_array(v) for v in state.get("old_stps", [])]
        ro = list(state.get("ro", []))
        h_diag = state.get("H_diag", 1.0)
        prev_flat_grad = _array(state.get("prev_flat_grad"))
        prev_loss = state.get("prev_loss")

        iteration = 0
        while iteration < max_iter:
            iteration += 1
            state["n_iter"] += 1
            if state["n_iter"] == 1:
                direction = -flat_grad
                old_dirs, old_steps, ro, h_diag = [], [], [], 1.0
            else:
                y = flat_grad - prev_flat_grad
                s = direction * step
                ys = float(xp.dot(y, s))
                if ys > 1e-10:  # a curvature pair worth keeping
                    if len(old_dirs) == history_size:
                        old_dirs.pop(0), old_steps.pop(0), ro.pop(0)
                    old_dirs.append(y), old_steps.append(s), ro.append(1.0 / ys)
                    h_diag = ys / float(xp.dot(y, y))
                # the two-loop recursion: direction = -H * gradient
                alphas = [0.0] * len(old_dirs)
                q = -flat_grad
                for i in range(len(old_dirs) - 1, -1, -1):
                    alphas[i] = float(xp.dot(old_steps[i], q)) * ro[i]
                    q = q - alphas[i] * old_dirs[i]
                direction = q * h_diag
                for i in range(len(old_dirs)):
                    beta = float(xp.dot(old_dirs[i], direction)) * ro[i]
                    direction = direction + (alphas[i] - beta) * old_steps[i]
            prev_flat_grad, prev_loss = flat_grad.copy(), loss
            step = min(1.0, 1.0 / float(abs(flat_grad).sum())) * lr if state["n_iter"] == 1 else lr
            slope = float(xp.dot(flat_grad, direction))
            if slope > -tolerance_change:  # not a descent direction
                break
            if line_search == "strong_wolfe":
                start = [p._data.copy() for p in self._params]
                loss, flat_grad, step, line_evaluations = strong_wolfe(
                    lambda t: self._evaluate_at(closure, start, t, direction), step, direction,
                    loss, flat_grad, slope)
                self._add_step(step, direction)
                converged = float(abs(flat_grad).max()) <= tolerance_grad
            else:
                self._add_step(step, direction)
                line_evaluations = 0
                converged = False
                if iteration != max_iter:
                    with enable_grad():
                        loss = float(closure())
                    flat_grad = self._flat_grad()
                    converged = float(abs(flat_grad).max()) <= tolerance_grad
                    line_evaluations = 1
            evaluations += line_evaluations
            state["func_evals"] += line_evaluations
            if iteration == max_iter or evaluations >= max_eval or converged:
                break
            if float(abs(direction * step).max()) <= tolerance_change:
                break
            if abs(loss - prev_loss) < tolerance_change:
                break

        device = self._params[0]._device
        state.update({"d": wrap_array(direction, device), "t": step,
                      "old_dirs": [wrap_array(v, device) for v in old_dirs],
                      "old_stps": [wrap_array(v, device) for v in old_steps], "ro": ro,
                      "H_diag": h_diag, "prev_flat_grad": wrap_array(prev_flat_grad, device),
                      "prev_loss": prev_loss})
        return first_loss


def _array(value):
    """A state entry's array (state holds Tensors, so state_dict saves them)."""
    return None if value is None else value._data
