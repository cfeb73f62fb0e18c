"""`Optimizer`: parameter groups, per-parameter state, `step`, and state dicts (PyTorch layout).

Updates work directly on the parameters' arrays (no graph, like PyTorch's
kernels) and bump each parameter's version counter, so a graph that saved a
parameter before the step refuses to backward with the changed values.

>>> import genesis
>>> w = genesis.tensor([1., 2.], requires_grad=True)
>>> optimizer = genesis.optim.SGD([w], lr=0.1)
>>> (w * w).sum().backward()
>>> optimizer.step(); w
tensor([0.8000, 1.6000], requires_grad=True)
"""
from __future__ import annotations

import functools
import warnings
from collections import defaultdict
from typing import Protocol

import numpy as np

from ..autograd.grad_mode import enable_grad
from ..autograd.hooks import RemovableHandle, checked_hook
from ..device import cpu
from ..dtypes import float64, get_default_dtype
from ..listeners import Listeners
from ..nn._clear_grads import clear_grads
from ..tensor import Tensor, wrap_array
from .step_hooks import (register_optimizer_step_post_hook, register_optimizer_step_pre_hook,
                         run_with_step_hooks)

__all__ = ["Optimizer", "required", "listeners", "OptimizerListener", "scalar", "check_tensor_lr",
           "register_optimizer_step_pre_hook", "register_optimizer_step_post_hook"]

class OptimizerListener(Protocol):
    """Told which tensors each optimizer is given and when it steps (genesis trace: the
    parameters of an optimizer that steps should receive gradients)."""

    def params_added(self, optimizer: "Optimizer", params: list) -> None:
        """A parameter group was added (at construction or by `add_param_group`)."""

    def stepping(self, optimizer: "Optimizer") -> None:
        """`optimizer.step()` is about to update the parameters (its closure, if any, ran)."""

    def stepped(self, optimizer: "Optimizer") -> None:
        """`optimizer.step()` ran."""


listeners: Listeners[OptimizerListener] = Listeners()


class _Required:
    """Marks a hyperparameter that has no default and must be given per group."""

    def __repr__(self) -> str:
        return "<required parameter>"


required = _Required()


class Optimizer:
    """Base class: subclasses pass their defaults and implement `_update_group(group)`.

    `params` is an iterable of tensors, of (name, tensor) pairs (`model.named_parameters()`:
    the names go into the group's "param_names"), or of dicts ("param groups") each with a
    "params" entry (tensors or pairs) and optional per-group options overriding the defaults.

    `step` runs the step hooks (see `genesis.optim.step_hooks`) and counts its calls in
    `_step_calls` (learning-rate schedulers and genesis trace check it), also for a
    subclass with its own `step`; that one tells the optimizer listeners too (see
    `_telling_listeners`).
    """

    # The steps' bookkeeping before any step, here too for a subclass whose __init__ does
    # not call Optimizer.__init__ (a wrapper such as Lookahead that takes another
    # optimizer's param_groups, as PyTorch lets it): no step hooks, no steps yet.
    _step_pre_hooks: tuple = ()
    _step_post_hooks: tuple = ()
    _step_calls = 0
    _inside_step = False
    _stepping_told = None

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "step" in cls.__dict__:
            cls.step = run_with_step_hooks(_telling_listeners(cls.__dict__["step"]))

    def __init__(self, params, defaults: dict):
        self.defaults = defaults
        self._step_pre_hooks: list = []
        self._step_post_hooks: list = []
        self._step_calls = 0
        self._inside_step = False
        self._stepping_told = None  # inside a subclass's step: whether `stepping` was told
        self.state: dict = defaultdict(dict)
        self.param_groups: list = []
        self._scratch_arrays: dict = {}
        if isinstance(params, Tensor):
            raise TypeError("params should be an iterable of Tensors or dicts, but got a Tensor; "
                            "wrap it in a list: [tensor]")
        groups = list(params)
        if not groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    def __repr__(self) -> str:
        lines = [f"{type(self).__name__} ("]
        for index, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {index}")
            lines.extend(f"    {key}: {group[key]}" for key in sorted(group) if key != "params")
        lines.append(")")
        return "\n".join(lines)

    def add_param_group(self, param_group: dict) -> None:
        """Add a group of parameters (a dict with "params" and optional options)."""
        if not isinstance(param_group, dict):
            raise TypeError(f"a param group must be a dict, got {type(param_group).__name__}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be in an ordered collection (the order "
                            "of a set changes between runs); use a list instead")
        params, names = _split_names(list(params))
        for index, param in enumerate(params):
            if not isinstance(param, Tensor):
                raise TypeError(f"optimizer can only optimize Tensors, but params[{index}] is a "
                                f"{type(param).__name__}")
            if not param.is_leaf:
                raise ValueError(f"can't optimize a non-leaf Tensor (params[{index}], made by "
                                 f"{type(param.grad_fn).__name__}); optimize the leaf it came from, "
                                 "or detach().requires_grad_() it")
        group = dict(param_group, params=params)
        if names is not None:
            group["param_names"] = names
        named = "param_names" in group
        if self.param_groups and named != ("param_names" in self.param_groups[0]):
            raise ValueError("all optimizer param groups should be with/without names. cannot add "
                             f"param group {'with' if named else 'without'} names to "
                             "the optimizer")
        for name, default in self.defaults.items():
            if default is required and name not in group:
                raise ValueError(f"parameter group didn't specify a value of required "
                                 f"optimization parameter {name!r}")
            group.setdefault(name, default)
        if len({id(p) for p in params}) != len(params):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; "
                          "they will be updated more than once per step", stacklevel=3)
        existing = {id(p) for other in self.param_groups for p in other["params"]}
        if any(id(p) in existing for p in params):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(group)
        for listener in listeners:
            listener.params_added(self, params)

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Clear the gradients of all optimized parameters (None, or zeros in place)."""
        clear_grads((p for group in self.param_groups for p in group["params"]), set_to_none)

    def register_step_pre_hook(self, hook) -> RemovableHandle:
        """Call `hook(optimizer, args, kwargs)` before each `step` of this optimizer (`args`
        starts with the optimizer); it may return `(new_args, new_kwargs)` for the step."""
        return RemovableHandle(self._step_pre_hooks, checked_hook(hook, "register_step_pre_hook"))

    def register_step_post_hook(self, hook) -> RemovableHandle:
        """Call `hook(optimizer, args, kwargs)` after each `step` of this optimizer."""
        return RemovableHandle(self._step_post_hooks, checked_hook(hook, "register_step_post_hook"))

    @run_with_step_hooks
    def step(self, closure=None):
        """Update the parameters once; `closure` (re-evaluating the loss, with grad) is called
        first when given, and its result returned."""
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        self._tell_stepping()
        for group in self.param_groups:
            self._update_group(group)
        if self._stepping_told is None:  # (a subclass's step tells `stepped` when it ends)
            for listener in listeners:
                listener.stepped(self)
        return loss

    def _tell_stepping(self) -> None:
        """Tell the listeners this step is about to update the parameters: once per step."""
        if self._stepping_told:
            return
        if self._stepping_told is not None:
            self._stepping_told = True
        for listener in listeners:
            listener.stepping(self)

    @staticmethod
    def _with_grads(group: dict):
        """(param, its array, its gradient's array) for each parameter of `group` that has a
        gradient, the ones the update touches."""
        for param in group["params"]:
            grad = param._grad
            if grad is not None:
                yield param, param._data, grad._data

    def _state_of(self, param: Tensor, *buffers: str) -> dict:
        """The state of `param`; on its first update made as step 0 and a zero-filled buffer
        (shaped like the parameter) per name in `buffers`."""
        state = self.state[param]
        if not state:
            state["step"] = step_counter()
            for name in buffers:
                state[name] = self._zeros_like(param)
        return state

    @staticmethod
    def _zeros_like(param: Tensor) -> Tensor:
        """A zero-filled state buffer (momentum, running averages) shaped like `param`."""
        return wrap_array(param._device.xp.zeros_like(param._data), param._device)

    def _scratch(self, param: Tensor, slot: int = 0):
        """A reusable array shaped like `param` for temporaries of an update (allocating a
        fresh one per step costs page faults on large parameters); not part of the state."""
        data = param._data
        key = (data.shape, data.dtype, param._device, slot)
        array = self._scratch_arrays.get(key)
        if array is None:
            array = self._scratch_arrays[key] = param._device.xp.empty_like(data)
        return array

    def _update_group(self, group: dict) -> None:
        raise NotImplementedError(f"{type(self).__name__} must implement _update_group(group) "
                                  "(or override step)")

    # -- state dict -------------------------------------------------------------
    def state_dict(self) -> dict:
        """{"state": {index: {...}}, "param_groups": [{..., "params": [indices]}]}, as in
        PyTorch; parameters are numbered in group order."""
        index_of = {}
        groups = []
        for group in self.param_groups:
            packed = {key: value for key, value in group.items() if key != "params"}
            packed["params"] = [index_of.setdefault(id(p), len(index_of)) for p in group["params"]]
            groups.append(packed)
        state = {index_of[id(param)]: values for param, values in self.state.items()
                 if id(param) in index_of}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore hyperparameters and state saved by `state_dict()` (tensors are copied and
        cast to each parameter's dtype and device)."""
        saved_groups = state_dict["param_groups"]
        if len(saved_groups) != len(self.param_groups):
            raise ValueError(f"loaded state dict has {len(saved_groups)} parameter group(s), "
                             f"this optimizer has {len(self.param_groups)}")
        params_by_index = {}
        for number, (group, saved) in enumerate(zip(self.param_groups, saved_groups)):
            if len(group["params"]) != len(saved["params"]):
                raise ValueError(f"loaded parameter group {number} has {len(saved['params'])} "
                                 f"parameters, this optimizer's has {len(group['params'])}")
            params_by_index.update(zip(saved["params"], group["params"]))
        state = defaultdict(dict)
        for index, values in state_dict["state"].items():
            param = params_by_index.get(index)
            if param is not None:
                state[param] = {key: _cast_state(value, param, key) for key, value in values.items()}
        self.state = state
        self.param_groups = [_restored_group(group, saved)
                             for group, saved in zip(self.param_groups, saved_groups)]


def _restored_group(group: dict, saved: dict) -> dict:
    """A loaded param group: the saved options on this optimizer's parameters, with their
    names where the saved group has none (saved names win, as in PyTorch)."""
    restored = dict(saved, params=group["params"])
    if "param_names" in group and "param_names" not in saved:
        restored["param_names"] = group["param_names"]
    return restored


def _split_names(params: list) -> tuple:
    """(tensors, names) of a group's params: names is None when no entry is a (name, tensor)
    pair, as from `model.named_parameters()`; all entries or none must be pairs."""
    pairs = [isinstance(param, tuple) for param in params]
    if not any(pairs):
        return params, None
    if not all(pairs):
        raise ValueError("all optimizer params should be with/without names. Some param names "
                         "are missing")
    return [param for _, param in params], [name for name, _ in params]


def scalar(value):
    """A hyperparameter as a Python number where an update uses it: PyTorch accepts a
    one-element Tensor for `lr` (and some others) and reads its value at each step, so a
    scheduler or the user can change it in place.

    >>> import genesis
    >>> scalar(genesis.tensor(0.5)), scalar(0.1)
    (0.5, 0.1)
    """
    return value.item() if isinstance(value, Tensor) else value


def check_tensor_lr(lr, foreach: bool | None = None) -> None:
    """PyTorch's checks of a Tensor `lr`: it holds one element, and (Adam, AdamW) it is not
    combined with foreach=True."""
    if not isinstance(lr, Tensor):
        return
    if foreach:
        raise ValueError("lr as a Tensor is not supported for capturable=False and foreach=True")
    if lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")


def check_adam_options(lr, eps: float, betas, weight_decay: float | None = None) -> None:
    """PyTorch's checks of an Adam-family optimizer's options, in its order: lr and eps not
    negative, each beta in [0, 1), weight_decay (where it has one) not negative.

    >>> check_adam_options(1e-3, 1e-8, (0.9, 1.0))
    Traceback (most recent call last):
    ...
    ValueError: Invalid beta parameter at index 1: 1.0
    """
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")
    if not 0.0 <= eps:
        raise ValueError(f"Invalid epsilon value: {eps}")
    for index, beta in enumerate(betas):
        if not 0.0 <= beta < 1.0:
            raise ValueError(f"Invalid beta parameter at index {index}: {beta}")
    if weight_decay is not None and not 0.0 <= weight_decay:
        raise ValueError(f"Invalid weight_decay value: {weight_decay}")


def _telling_listeners(step):
    """A subclass's own `step` made to tell the optimizer listeners what `Optimizer.step`
    tells them: `stepping` before the update (once its closure, if it is given one, has
    run: the closure's backward gives the gradients the step uses) and `stepped` after it.
    A step that never calls the closure it is given tells neither. A step calling
    `super().step()` or another step of its own class's parents tells them once."""

    @functools.wraps(step)
    def telling_step(self, *args, **kwargs):
        if self._stepping_told is not None:  # inside a subclass's step already
            return step(self, *args, **kwargs)
        closure = args[0] if args else kwargs.get("closure")
        if callable(closure):
            def told_closure(*closure_args, **closure_kwargs):
                loss = closure(*closure_args, **closure_kwargs)
                self._tell_stepping()
                return loss

            if args:
                args = (told_closure, *args[1:])
            else:
                kwargs = dict(kwargs, closure=told_closure)
        self._stepping_told = False
        try:
            if not callable(closure):
                self._tell_stepping()
            out = step(self, *args, **kwargs)
            told = self._stepping_told
        finally:
            self._stepping_told = None
        if told:
            for listener in listeners:
                listener.stepped(self)
        return out

    return telling_step


def step_counter() -> Tensor:
    """A parameter's update count before its first update: 0, as PyTorch's optimizers keep
    `state["step"]`, a 0-d tensor on the CPU (float32, float64 when that is the default dtype).

    >>> step_counter()
    tensor(0.)
    """
    return scalar_state(0.0)


def scalar_state(value: float, device=cpu) -> Tensor:
    """A number an optimizer keeps in its state as PyTorch does: a 0-d tensor of PyTorch's
    scalar dtype (float32, float64 when that is the default dtype) on `device`, so it rounds
    as PyTorch's does (NAdam's `mu_product`, ASGD's `eta` and `mu`).

    >>> scalar_state(1.0)
    tensor(1.)
    """
    dtype = np.float64 if get_default_dtype() is float64 else np.float32
    return wrap_array(device.xp.full((), value, dtype=dtype), device)


def count_step(state: dict) -> float:
    """Count one more update in `state["step"]` (a `step_counter`, in place, its version
    bumped as the parameters' are); the new count, a number for the update's arithmetic."""
    step = state["step"]
    step._data += 1
    step._version_counter[0] += 1
    return float(step._data)


def _cast_state(value, param: Tensor, key: str):
    """A copy of a saved state value placed like `param` (floating tensors take its dtype); a
    step count stays on the CPU, and one saved as a number (by genesis before steps were
    tensors) becomes a `step_counter` tensor."""
    if key == "step":
        counter = step_counter()
        counter._data[...] = value.item() if isinstance(value, Tensor) else value
        return counter
    if not isinstance(value, Tensor):
        return value
    if value.is_floating_point():
        return value.to(device=param.device, dtype=param.dtype, copy=True)
    return value.to(device=param.device, copy=True)
