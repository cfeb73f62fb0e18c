"""`Module`: the base class of layers and models, as in PyTorch.

Setting a `Parameter`, a `Module` or a registered buffer as an attribute
registers it; `parameters()`, `state_dict()`, `to()`, `train()`... then walk
the tree of submodules.

>>> import genesis
>>> from genesis import nn
>>> class Affine(nn.Module):
...     def __init__(self):
...         super().__init__()
...         self.scale = nn.Parameter(genesis.ones(2))
...         self.register_buffer("shift", genesis.zeros(2))
...     def forward(self, x):
...         return x * self.scale + self.shift
>>> model = Affine()
>>> [name for name, _ in model.named_parameters()], list(model.state_dict())
(['scale'], ['scale', 'shift'])
>>> model(genesis.tensor([1., 2.]))
tensor([1., 2.], grad_fn=<AddBackward0>)
"""
from __future__ import annotations

import threading
from collections import OrderedDict
import warnings
from typing import NamedTuple

from ..autograd import module_scope
from ..autograd.module_scope import call_order, running
from ..autograd.grad_mode import no_grad
from ..autograd.hooks import RemovableHandle, checked_hook, describe_hook, run_hook
from ..dtypes import get_dtype
from ..ops.convert import _parse_to
from ..tensor import Tensor
from ._backward_hooks import BackwardHook
from .module_hooks import (REGISTERED_BY, Hook, attach_legacy_backward_hooks, global_call_hooks,
                           register_module_backward_hook, register_module_forward_hook,
                           register_module_forward_pre_hook, register_module_full_backward_hook,
                           register_module_full_backward_pre_hook)
from .parameter import Buffer, Parameter
from ._clear_grads import clear_grads

__all__ = ["Module", "IncompatibleKeys", "register_module_forward_pre_hook",
           "register_module_forward_hook", "register_module_full_backward_pre_hook",
           "register_module_full_backward_hook", "register_module_backward_hook"]


class IncompatibleKeys(NamedTuple):
    """What `load_state_dict(..., strict=False)` could not match."""

    missing_keys: list
    unexpected_keys: list

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return f"IncompatibleKeys(missing_keys={self.missing_keys}, unexpected_keys={self.unexpected_keys})"


class Module:
    """Base class for all layers and models: subclass it, set parts in `__init__`, define `forward`."""

    training: bool
    _version: int = 1  # of the state dict layout, in state_dict()._metadata as in PyTorch

    def __init__(self) -> None:
        self.__dict__.update(training=True, _parameters={}, _buffers={},
                             _non_persistent_buffers=set(), _modules={}, _call_hooks=[])
        if running.call is not None and module_scope.build_listeners:
            module_scope.built(self)  # built inside a forward

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" function')

    def __call__(self, *args, **kwargs):
        outer = running.call
        running.call = (self, outer, call_order())  # a module call: the ops made now remember it
        try:
            if self._call_hooks or global_call_hooks or module_scope.listeners:
                return self._call_observed(args, kwargs)
            return self.forward(*args, **kwargs)
        finally:
            running.call = outer

    def _call_observed(self, args: tuple, kwargs: dict):
        listening = bool(module_scope.listeners)
        if listening:
            module_scope.enter(self)
        try:
            if self._call_hooks or global_call_hooks:
                return self._call_with_hooks(args, kwargs)
            return self.forward(*args, **kwargs)
        finally:
            if listening:
                module_scope.exit(self)

    def _call_with_hooks(self, args: tuple, kwargs: dict):
        hooks = global_call_hooks + self._call_hooks
        result = None
        ran = set()  # the positions in `hooks` of the forward hooks with always_call that ran
        try:
            for kind, hook, with_kwargs, _ in hooks:
                if kind != "forward_pre":
                    continue
                where = f"a forward pre-hook of {type(self).__name__}"
                if with_kwargs:
                    replacement = run_hook(hook, (self, args, kwargs), where)
                    if replacement is not None:
                        if not (isinstance(replacement, tuple) and len(replacement) == 2):
                            raise RuntimeError(f"{describe_hook(hook)}, {where} registered with "
                                               "with_kwargs=True, must return None or (args, "
                                               f"kwargs), got {replacement!r:.80}")
                        args, kwargs = replacement
                else:
                    replacement = run_hook(hook, (self, args), where)
                    if replacement is not None:
                        args = replacement if isinstance(replacement, tuple) else (replacement,)
            backward = [hook for kind, hook, _, _ in hooks if kind == "backward"]
            backward_pre = [hook for kind, hook, _, _ in hooks if kind == "backward_pre"]
            backward_hook = BackwardHook(self, backward, backward_pre) \
                if backward or backward_pre else None
            if backward_hook is not None:
                args = backward_hook.wrap_inputs(args)
            result = self.forward(*args, **kwargs)
            for position, (kind, hook, with_kwargs, always_call) in enumerate(hooks):
                if kind != "forward":
                    continue
                if always_call:
                    ran.add(position)
                replacement = run_hook(hook, (self, args, kwargs, result) if with_kwargs else
                                       (self, args, result), f"a forward hook of {type(self).__name__}")
                if replacement is not None:
                    result = replacement
            if backward_hook is not None:
                result = backward_hook.wrap_outputs(result)
            legacy = [hook for kind, hook, _, _ in hooks if kind == "legacy_backward"]
            if legacy:
                attach_legacy_backward_hooks(self, legacy, result)
            return result
        except Exception:
            self._run_always_called_hooks(hooks, ran, args, kwargs, result)
            raise

    def _run_always_called_hooks(self, hooks: list, ran: set, args: tuple, kwargs: dict,
                                 result) -> None:
        """As PyTorch does when a call raises: run the forward hooks registered with
        always_call that did not run yet (with the output so far, None when forward raised);
        an error of theirs is a warning, so that the call's own error comes through."""
        for position, entry in enumerate(hooks):
            if entry.kind != "forward" or not entry.always_call or position in ran:
                continue
            try:
                replacement = run_hook(entry.function, (self, args, kwargs, result) if
                                       entry.with_kwargs else (self, args, result),
                                       f"a forward hook of {type(self).__name__}")
            except Exception as error:
                warnings.warn("module forward hook with ``always_call=True`` raised an exception "
                              f"that was silenced as another error was raised in forward: {error}",
                              stacklevel=3)
                continue
            if replacement is not None:
                result = replacement

    # -- hooks ------------------------------------------------------------------
    def _add_hook(self, kind: str, hook, prepend: bool, with_kwargs: bool = False,
                  always_call: bool = False) -> RemovableHandle:
        entry = Hook(kind, checked_hook(hook, REGISTERED_BY[kind]), with_kwargs, always_call)
        handle = RemovableHandle(self._call_hooks, entry)
        if prepend:
            self._call_hooks.insert(0, self._call_hooks.pop())
        return handle

    def register_forward_pre_hook(self, hook, *, prepend: bool = False, with_kwargs: bool = False):
        """`hook(module, args)` runs before `forward`; it may return new args (a tuple or one value).

        With `with_kwargs=True` it is `hook(module, args, kwargs)` and may return `(args, kwargs)`.
        Returns a handle whose `.remove()` unregisters it.
        """
        return self._add_hook("forward_pre", hook, prepend, with_kwargs)

    def register_forward_hook(self, hook, *, prepend: bool = False, with_kwargs: bool = False,
                              always_call: bool = False):
        """`hook(module, args, output)` runs after `forward`; it may return a new output. With
        `always_call=True` it also runs when the call raises (output None if forward did), and
        then an error of its own is only a warning.

        >>> import genesis
        >>> layer = genesis.nn.Identity()
        >>> handle = layer.register_forward_hook(lambda module, args, out: out * 2)
        >>> layer(genesis.tensor([1., 2.]))
        tensor([2., 4.])
        >>> handle.remove(); layer(genesis.tensor([1., 2.]))
        tensor([1., 2.])
        """
        return self._add_hook("forward", hook, prepend, with_kwargs, always_call)

    def register_full_backward_hook(self, hook, *, prepend: bool = False):
        """`hook(module, grad_input, grad_output)` runs when the gradients w.r.t. the module's
        inputs are computed; it may return a replacement `grad_input` (one entry per
        positional argument, None for non-tensors)."""
        self._refuse_mixed_backward_hooks("legacy_backward")
        return self._add_hook("backward", hook, prepend)

    def register_backward_hook(self, hook):
        """PyTorch's deprecated backward hook: `hook(module, grad_input, grad_output)` is a hook
        of the graph node that made the module's (first tensor) output, so `grad_input` holds
        that node's input gradients, which are the module's own only for a one-op module. Use
        `register_full_backward_hook`."""
        self._refuse_mixed_backward_hooks("backward")
        return self._add_hook("legacy_backward", hook, False)

    def _refuse_mixed_backward_hooks(self, other: str) -> None:
        if any(entry.kind == other for entry in self._call_hooks):
            raise RuntimeError("Cannot use both regular backward hooks and full backward hooks on "
                               "a single Module. Please use only one of them.")

    def register_full_backward_pre_hook(self, hook, *, prepend: bool = False):
        """`hook(module, grad_output)` runs when the gradients w.r.t. the module's outputs
        arrive; it may return a replacement `grad_output`."""
        return self._add_hook("backward_pre", hook, prepend)

    # -- registration -----------------------------------------------------------
    def _check_new_name(self, name, what: str) -> None:
        if "_parameters" not in self.__dict__:
            raise AttributeError(f"cannot assign {what} before Module.__init__() call; call "
                                 "super().__init__() first in your module's __init__")
        if not isinstance(name, str):
            raise TypeError(f"{what} name should be a string, got {type(name).__name__}")
        if not name or "." in name:
            raise KeyError(f'{what} name can\'t be empty or contain ".", got {name!r}')

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Add `param` (a Parameter, or None for an optional one) under `name`."""
        self._check_new_name(name, "parameter")
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{type(param).__name__}' object to parameter "
                            f"'{name}' (genesis.nn.Parameter or None required)")
        self._parameters[name] = param

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Add a tensor that is state but not a parameter (running statistics, masks).

        Non-persistent buffers are left out of `state_dict()`.
        """
        self._check_new_name(name, "buffer")
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{type(tensor).__name__}' object to buffer '{name}' "
                            "(genesis Tensor or None required)")
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers.discard(name)
        else:
            self._non_persistent_buffers.add(name)

    def add_module(self, name: str, module: "Module | None") -> None:
        """Add a child module under `name` (also reachable as an attribute)."""
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        self._check_new_name(name, "module")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        self._modules[name] = module

    register_module = add_module

    def __setattr__(self, name: str, value) -> None:
        state = self.__dict__
        parameters = state.get("_parameters")
        if isinstance(value, Parameter):
            if parameters is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            self._forget(name, keeping="_parameters")
            self.register_parameter(name, value)
        elif parameters is not None and name in parameters:
            if value is not None:
                raise TypeError(f"cannot assign '{type(value).__name__}' as parameter '{name}' "
                                "(genesis.nn.Parameter or None expected)")
            parameters[name] = None
        elif isinstance(value, Module):
            if parameters is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            self._check_new_name(name, "module")
            self._forget(name, keeping="_modules")
            self._modules[name] = value
        elif parameters is not None and name in state["_modules"]:
            if value is not None:
                raise TypeError(f"cannot assign '{type(value).__name__}' as child module '{name}' "
                                "(genesis.nn.Module or None expected)")
            state["_modules"][name] = None
        elif isinstance(value, Buffer):
            if parameters is None:
                raise AttributeError("cannot assign buffer before Module.__init__() call")
            self.register_buffer(name, value, value.persistent)
        elif parameters is not None and name in state["_buffers"]:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{type(value).__name__}' as buffer '{name}' "
                                "(genesis Tensor or None expected)")
            state["_buffers"][name] = value
        else:
            object.__setattr__(self, name, value)
            if name == "training" and module_scope.mode_listeners and not running.setting_modes:
                module_scope.mode_assigned(self, value)  # set by hand, not by train()

    def _forget(self, name: str, keeping: str) -> None:
        """Drop `name` from every table but `keeping`, where it is about to be replaced in
        place: a parameter or child assigned again keeps its position (as in PyTorch), so the
        order of parameters(), state_dict() and an optimizer's groups stays that of creation."""
        state = self.__dict__
        state.pop(name, None)
        for table in ("_parameters", "_buffers", "_modules"):
            if table != keeping:
                state[table].pop(name, None)
        state["_non_persistent_buffers"].discard(name)

    def __getattr__(self, name: str):
        state = self.__dict__
        if "_parameters" not in state:
            raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}': its "
                                 "__init__ must call super().__init__() before anything else")
        for table in ("_parameters", "_buffers", "_modules"):
            entries = state[table]
            if name in entries:
                return entries[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name: str) -> None:
        state = self.__dict__
        for table in ("_parameters", "_buffers", "_modules"):
            entries = state.get(table)
            if entries is not None and name in entries:
                del entries[name]
                state["_non_persistent_buffers"].discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self._parameters) | set(self._buffers)
                      | set(self._modules))

    # -- traversal --------------------------------------------------------------
    def named_modules(self, memo: set | None = None, prefix: str = "", remove_duplicate: bool = True):
        """Yield `(dotted name, module)` for this module and every descendant, depth first.

        A module reachable by several paths is yielded once (the first path),
        unless `remove_duplicate=False`; then a module that contains itself (a cycle,
        which would give endless names) is a RuntimeError naming the attribute to remove.
        """
        seen = memo if memo is not None else set()
        stack = [(prefix, self, 0)]
        path: list = []  # (name, module) of the modules above the one being yielded
        while stack:
            name, module, depth = stack.pop()
            if remove_duplicate:
                if id(module) in seen:
                    continue
                seen.add(id(module))
            else:
                del path[depth:]
                for above_name, above in path:
                    if above is module:
                        raise RuntimeError(_cycle_message(name, above_name, module, prefix))
                path.append((name, module))
            yield name, module
            children = [(f"{name}.{key}" if name else key, child, depth + 1)
                        for key, child in module._modules.items() if child is not None]
            stack.extend(reversed(children))

    def modules(self):
        """This module and every descendant (each once)."""
        for _, module in self.named_modules():
            yield module

    def named_children(self):
        """Yield `(name, module)` for the direct children (each once)."""
        seen = set()
        for name, module in self._modules.items():
            if module is not None and id(module) not in seen:
                seen.add(id(module))
                yield name, module

    def children(self):
        for _, module in self.named_children():
            yield module

    def _named_members(self, table: str, prefix: str, recurse: bool, remove_duplicate: bool):
        modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse \
            else [(prefix, self)]
        seen = set()
        for module_prefix, module in modules:
            for name, value in getattr(module, table).items():
                if value is None or (remove_duplicate and id(value) in seen):
                    continue
                seen.add(id(value))
                yield (f"{module_prefix}.{name}" if module_prefix else name), value

    def named_parameters(self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True):
        """Yield `(dotted name, parameter)`, e.g. `("encoder.0.weight", p)`; a parameter
        shared by several modules is yielded once.

        >>> from genesis import nn
        >>> [name for name, _ in nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 1)).named_parameters()]
        ['0.weight', '0.bias', '1.weight', '1.bias']
        """
        return self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse: bool = True):
        """Every parameter of this module (and its descendants, with `recurse`), each once."""
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_buffers(self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True):
        return self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True):
        for _, buffer in self.named_buffers(recurse=recurse):
            yield buffer

    def get_submodule(self, target: str) -> "Module":
        """The descendant at dotted path `target` ("" is this module)."""
        module = self
        if not target:
            return module
        walked = []
        for part in target.split("."):
            child = module._modules.get(part)
            if child is None:
                where = ".".join(walked) or type(self).__name__
                raise AttributeError(f"{where} has no submodule named '{part}' (looking for '{target}')")
            walked.append(part)
            module = child
        return module

    def get_parameter(self, target: str) -> Parameter:
        """The parameter at dotted path `target`, e.g. "encoder.0.weight"."""
        return self._entry_at(target, "_parameters", "parameter")

    def get_buffer(self, target: str) -> Tensor:
        """The buffer at dotted path `target`."""
        return self._entry_at(target, "_buffers", "buffer")

    def _entry_at(self, target: str, store: str, kind: str):
        module_path, _, name = target.rpartition(".")
        module = self.get_submodule(module_path)
        entry = getattr(module, store).get(name)
        if entry is None:
            raise AttributeError(f"{type(module).__name__} has no {kind} named '{name}'")
        return entry

    # -- modes and gradients ----------------------------------------------------
    def train(self, mode: bool = True) -> "Module":
        """Set training mode (affects Dropout, BatchNorm...) here and in every descendant."""
        if not isinstance(mode, bool):
            raise ValueError(f"training mode is expected to be a bool, got {type(mode).__name__}")
        running.setting_modes += 1
        try:
            self.training = mode
            for module in self.children():
                module.train(mode)
        finally:
            running.setting_modes -= 1
        if module_scope.mode_listeners and not running.setting_modes:
            module_scope.mode_set(self, mode)  # the outermost call: the one the script made
        return self

    def eval(self) -> "Module":
        """`train(False)`."""
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> "Module":
        """Set `requires_grad` of every parameter (e.g. False to freeze a part of a model)."""
        for param in self.parameters():
            param.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Clear the gradients of every parameter (set to None, or zero them in place)."""
        clear_grads(self.parameters(), set_to_none)

    def apply(self, fn) -> "Module":
        """Call `fn(module)` on every descendant, then on this module (e.g. custom init)."""
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    # -- dtype and device -------------------------------------------------------
    def _apply(self, convert) -> "Module":
        """Replace every parameter's and buffer's storage by `convert(tensor)`.

        Parameters keep their identity (optimizers still hold them); their
        version counter is bumped, so a graph recorded before is not reused.
        """
        with no_grad():
            for module in self.modules():
                for param in module._parameters.values():
                    if param is None:
                        continue
                    converted = convert(param)
                    if converted._data is not param._data:
                        param._data, param._device = converted._data, converted._device
                        param._version_counter[0] += 1
                    if param._grad is not None:
                        param._grad = convert(param._grad)
                for name, buffer in module._buffers.items():
                    if buffer is not None:
                        module._buffers[name] = convert(buffer)
        return self

    def to(self, *args, **kwargs) -> "Module":
        """Move and/or cast parameters and buffers in place: `to("cuda")`, `to(genesis.float64)`,
        `to(device, dtype)`, `to(tensor)`. Only floating point tensors change dtype.

        >>> import genesis
        >>> layer = genesis.nn.Linear(2, 2)
        >>> weight = layer.weight
        >>> layer.to(genesis.float64).weight is weight, weight.dtype
        (True, genesis.float64)
        """
        dtype, device, _ = _parse_to(args, dict(kwargs))
        if dtype is not None and not dtype.is_floating_point:
            raise TypeError(f"Module.to only accepts floating point dtypes, got {dtype!r}")

        def convert(tensor: Tensor) -> Tensor:
            return tensor.to(device=device, dtype=dtype if tensor.is_floating_point() else None)

        return self._apply(convert)

    def _cast_floating(self, dtype_name: str) -> "Module":
        dtype = get_dtype(dtype_name)
        return self._apply(lambda tensor: tensor.to(dtype) if tensor.is_floating_point() else tensor)

    def float(self) -> "Module":
        return self._cast_floating("float32")

    def double(self) -> "Module":
        return self._cast_floating("float64")

    def half(self) -> "Module":
        return self._cast_floating("float16")

    def share_memory(self) -> "Module":
        """Move every parameter and buffer (and any gradient) into memory shared between
        processes (`Tensor.share_memory_`), so that processes this module is sent to, or forked
        into, train the same weights (Hogwild). Returns the module.

        >>> import genesis
        >>> model = genesis.nn.Linear(2, 1).share_memory()
        >>> all(p.is_shared() for p in model.parameters())
        True
        """
        return self._apply(lambda tensor: tensor.share_memory_())

    def cpu(self) -> "Module":
        return self.to("cpu")

    def compile(self, *args, **kwargs) -> None:
        """PyTorch's `module.compile(...)` (torch.compile on this module's forward, in place):
        genesis has no compiler and runs eagerly, so this changes nothing (see
        `genesis.compile`); it returns None, as PyTorch's does.

        >>> import genesis
        >>> layer = genesis.nn.Linear(2, 1)
        >>> layer.compile(mode="reduce-overhead") is None
        True
        """

    def cuda(self, device=None) -> "Module":
        return self.to("cuda" if device is None else device if not isinstance(device, int)
                       else f"cuda:{device}")

    # -- state dict -------------------------------------------------------------
    def state_dict(self, *, destination: dict | None = None, prefix: str = "",
                   keep_vars: bool = False) -> dict:
        """Parameters and persistent buffers by dotted name (detached, sharing storage unless
        `keep_vars`). A module reachable by several paths appears under each. As PyTorch's,
        an OrderedDict whose `_metadata` gives each module's state layout version by its
        dotted name.

        >>> import genesis
        >>> state = genesis.nn.Sequential(genesis.nn.Linear(2, 1)).state_dict()
        >>> list(state), dict(state._metadata)
        (['0.weight', '0.bias'], {'': {'version': 1}, '0': {'version': 1}})
        """
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()
        metadata = getattr(destination, "_metadata", None)
        for module_prefix, module in self.named_modules(prefix=prefix, remove_duplicate=False):
            dot = "." if module_prefix else ""
            if metadata is not None:
                metadata[module_prefix.removesuffix(".")] = {"version": module._version}
            for name, param in module._parameters.items():
                if param is not None:
                    destination[module_prefix + dot + name] = param if keep_vars else param.detach()
            for name, buffer in module._buffers.items():
                if buffer is not None and name not in module._non_persistent_buffers:
                    destination[module_prefix + dot + name] = buffer if keep_vars else buffer.detach()
        return destination

    def register_load_state_dict_pre_hook(self, hook) -> RemovableHandle:
        """`hook(module, state_dict, prefix, local_metadata, strict, missing_keys,
        unexpected_keys, error_msgs)` runs at the start of `load_state_dict` on this module
        (`prefix`: its keys' prefix in the dict); it may change `state_dict` (a copy of the
        one given), say to rename old keys. Returns a handle whose `.remove()` unregisters it.

        >>> import genesis
        >>> layer = genesis.nn.Linear(1, 1)
        >>> def renamed(module, state_dict, prefix, *_):
        ...     state_dict[prefix + "weight"] = state_dict.pop(prefix + "w")
        >>> _ = layer.register_load_state_dict_pre_hook(renamed)
        >>> _ = layer.load_state_dict({"w": genesis.ones(1, 1), "bias": genesis.zeros(1)})
        >>> layer.weight.item()
        1.0
        """
        return self._register_load_state_dict_pre_hook(hook, with_module=True)

    def _register_load_state_dict_pre_hook(self, hook, with_module: bool = False):
        """PyTorch's private form: `hook(state_dict, prefix, local_metadata, strict,
        missing_keys, unexpected_keys, error_msgs)`, or with `with_module` the module first."""
        hooks = self.__dict__.setdefault("_load_state_dict_pre_hooks", [])
        return RemovableHandle(hooks, (hook, with_module))

    def load_state_dict(self, state_dict, strict: bool = True,
                        assign: bool = False) -> IncompatibleKeys:
        """Copy parameters and buffers from `state_dict` (values cast to each target's dtype).

        Every problem (missing keys, unexpected keys, shape mismatches) is
        reported in one RuntimeError, and nothing is copied then. With
        `strict=False`, missing and unexpected keys are allowed and returned.
        With `assign=True` (PyTorch 2.1's), the module takes the state dict's tensors
        themselves instead of copies (their dtype too; a parameter's keeps the
        requires_grad of the one it replaces): an optimizer built before holds the old ones.

        >>> import genesis
        >>> layer = genesis.nn.Linear(2, 1)
        >>> weight = genesis.ones(1, 2)
        >>> _ = layer.load_state_dict({"weight": weight, "bias": genesis.zeros(1)}, assign=True)
        >>> layer.weight.data_ptr() == weight.data_ptr(), layer.weight.requires_grad
        (True, True)
        """
        errors = []
        modules = list(self.named_modules())
        if any(module.__dict__.get("_load_state_dict_pre_hooks") for _, module in modules):
            state_dict = dict(state_dict)  # the hooks may rename keys: not in the caller's dict
            for name, module in modules:
                for hook, with_module in list(module.__dict__.get("_load_state_dict_pre_hooks", ())):
                    arguments = (state_dict, name + "." if name else "", {}, strict, [], [], errors)
                    if with_module:
                        hook(module, *arguments)
                    else:
                        hook(*arguments)
        for name, module in modules:
            module._take_shapes_from(state_dict, name + "." if name else "")
        targets = self.state_dict(keep_vars=True)
        missing = [key for key in targets if key not in state_dict]
        unexpected = [key for key in state_dict if key not in targets]
        if strict:
            if missing:
                errors.append("Missing key(s) in state_dict: " + ", ".join(f'"{k}"' for k in missing) + ".")
            if unexpected:
                errors.append("Unexpected key(s) in state_dict: " + ", ".join(f'"{k}"' for k in unexpected) + ".")
        for key, target in targets.items():
            if key not in state_dict:
                continue
            value = state_dict[key]
            if not isinstance(value, Tensor):
                errors.append(f'expected a Tensor for "{key}", got {type(value).__name__}.')
            elif value.shape != target.shape:
                errors.append(f"size mismatch for {key}: copying a param with shape {tuple(value.shape)} "
                              "from checkpoint, the shape in current model is "
                              f"{tuple(target.shape)}.")
        if errors:
            hint = "" if not (missing or unexpected) or not strict else (
                "\n(Pass strict=False to load anyway, ignoring missing and unexpected keys.)")
            raise RuntimeError(f"Error(s) in loading state_dict for {type(self).__name__}:\n\t"
                               + "\n\t".join(errors) + hint)
        owners = dict(self.named_modules(remove_duplicate=False)) if assign else None
        with no_grad():
            for key, target in targets.items():
                if key not in state_dict:
                    continue
                if assign:
                    path, _, name = key.rpartition(".")
                    value = state_dict[key]
                    if isinstance(target, Parameter):
                        value = value if isinstance(value, Parameter) else Parameter(value)
                        value.requires_grad_(target.requires_grad)
                    setattr(owners[path], name, value)
                else:
                    target.copy_(state_dict[key])
        return IncompatibleKeys(missing, unexpected)

    def _take_shapes_from(self, state_dict, prefix: str) -> None:
        """Before `load_state_dict` copies: lazy modules (nn.LazyLinear, ...) size their
        placeholders from the entries under `prefix`; other modules have none."""

    # -- printing ---------------------------------------------------------------
    def extra_repr(self) -> str:
        """One line of this module's settings, shown in its repr (override in layers)."""
        return ""

    def _get_name(self) -> str:
        return type(self).__name__

    def __repr__(self) -> str:
        printing = _printing.modules
        if id(self) in printing:  # a module that contains itself: say so instead of recursing
            return f"{self._get_name()}(<cycle: this {self._get_name()} is printed above>)"
        printing.add(id(self))
        try:
            return self._repr_lines()
        finally:
            printing.discard(id(self))

    def _repr_lines(self) -> str:
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [f"({key}): " + _indent(repr(module), 2) for key, module in self._modules.items()]
        lines = extra_lines + child_lines
        body = ""
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                body = extra_lines[0]
            else:
                body = "\n  " + "\n  ".join(lines) + "\n"
        return f"{self._get_name()}({body})"


class _Printing(threading.local):
    """The ids of the modules whose repr is being built, on this thread."""

    def __init__(self):
        self.modules = set()


_printing = _Printing()


def _cycle_message(name: str, above_name: str, module, prefix: str) -> str:
    parent, _, attribute = name.rpartition(".")
    where = f"'{above_name}'" if above_name != prefix else "the top"
    holder = f"'{parent}'" if parent != prefix else "the top module"
    return (f"module cycle: '{name}' is the {type(module).__name__} at {where} again (a module "
            f"can't contain itself, or state_dict() would have endless keys); delete the attribute "
            f"'{attribute}' of {holder}, or keep the reference without registering it: "
            f"object.__setattr__(module, '{attribute}', value)")


def _indent(text: str, spaces: int) -> str:
    lines = text.split("\n")
    if len(lines) == 1:
        return text
    return lines[0] + "\n" + "\n".join(" " * spaces + line for line in lines[1:])
