"""Optimizer step hooks, as in PyTorch: `optimizer.register_step_pre_hook(hook)` and
`register_step_post_hook(hook)` for one optimizer, `register_optimizer_step_pre_hook(hook)`
and `register_optimizer_step_post_hook(hook)` for all of them.

A hook is called as `hook(optimizer, args, kwargs)`, where `args` are the positional
arguments of the `step` call *including the optimizer itself* (PyTorch's convention) and
`kwargs` its keyword arguments. A pre hook may return `(new_args, new_kwargs)` to change
them. Pre hooks run global ones first; post hooks run the optimizer's own first.

`run_with_step_hooks` wraps the `step` of `Optimizer` and of every subclass that defines
its own (`Optimizer.__init_subclass__` does it, as PyTorch patches each optimizer class's
step), so the hooks also run for a user's optimizer with a hand-written `step`. A `step`
that calls `super().step()` runs the hooks once.

>>> import genesis
>>> w = genesis.tensor([1.0], requires_grad=True)
>>> optimizer = genesis.optim.SGD([w], lr=0.1)
>>> handle = optimizer.register_step_post_hook(lambda opt, args, kwargs: print("stepped"))
>>> optimizer.step()
stepped
>>> handle.remove(); optimizer.step()
"""
from __future__ import annotations

import functools

from ..autograd.hooks import RemovableHandle, checked_hook, describe_hook

__all__ = ["register_optimizer_step_pre_hook", "register_optimizer_step_post_hook",
           "run_with_step_hooks"]

_global_pre_hooks: list = []
_global_post_hooks: list = []


def register_optimizer_step_pre_hook(hook) -> RemovableHandle:
    """Call `hook(optimizer, args, kwargs)` before every optimizer's step; it may return
    `(new_args, new_kwargs)` for the step."""
    return RemovableHandle(_global_pre_hooks,
                           checked_hook(hook, "register_optimizer_step_pre_hook"))


def register_optimizer_step_post_hook(hook) -> RemovableHandle:
    """Call `hook(optimizer, args, kwargs)` after every optimizer's step."""
    return RemovableHandle(_global_post_hooks,
                           checked_hook(hook, "register_optimizer_step_post_hook"))


def run_with_step_hooks(step):
    """`step` (an optimizer class's method) made to count its calls in
    `optimizer._step_calls` (what schedulers check) and run the step hooks around it."""

    @functools.wraps(step)
    def hooked_step(self, *args, **kwargs):
        if self._inside_step:  # a subclass's step calling super().step()
            return step(self, *args, **kwargs)
        args = (self, *args)
        for hook in (*_global_pre_hooks, *self._step_pre_hooks):
            result = hook(self, args, kwargs)
            if result is not None:
                if not (isinstance(result, tuple) and len(result) == 2):
                    raise RuntimeError(f"optimizer step pre {describe_hook(hook)} must return None "
                                       f"or a tuple of (new_args, new_kwargs), but got {result!r}")
                args, kwargs = result
        self._step_calls += 1
        self._inside_step = True
        try:
            out = step(*args, **kwargs)
        finally:
            self._inside_step = False
        for hook in (*self._step_post_hooks, *_global_post_hooks):
            hook(self, args, kwargs)
        return out

    return hooked_step
