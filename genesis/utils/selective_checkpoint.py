"""Selective activation checkpointing: a per-op policy saying which op outputs a
checkpoint keeps from its forward instead of taking them from the recomputation.

As in PyTorch, the policy is asked through dispatch modes (`genesis.utils._python_dispatch`):
`_CachingTorchDispatchMode` runs around the checkpoint's forward, `_CachedTorchDispatchMode`
around its recomputation; each asks the policy about every op call it sees (a recomputation
that stops early, see `genesis.utils.checkpoint_frame`, sees fewer ops), with the op as an
`OpOverload` (`aten.mm.default` for `a @ b` on matrices, `aten.sin.default`: `torch.ops.aten`
when torch is served by genesis); the `aten.detach.default` a recomputation makes of each
tensor it saves is not asked about.

What "save" means here: the recomputation still runs a saved op, and its output then takes
the value the forward computed, kept since then; what that op saves for backward comes from
it. A saved op's output is the forward's value, and it stays alive between forward and
backward; the op's compute is not skipped. "Recompute" keeps nothing. A kept value serves
one recomputation: a second backward through the checkpoint is an error.

>>> import functools, genesis
>>> from genesis.utils.checkpoint import checkpoint
>>> contexts = functools.partial(create_selective_checkpoint_contexts, [aten.mm.default])
>>> w = genesis.randn(3, 3, requires_grad=True)
>>> y = checkpoint(lambda x: (x @ w).sin(), genesis.randn(2, 3), use_reentrant=False,
...                context_fn=contexts)
>>> y.sum().backward(); w.grad.shape
genesis.Size([3, 3])
"""
from __future__ import annotations

import enum
from collections import defaultdict
from dataclasses import dataclass

from ..tensor import Tensor
from ._python_dispatch import OpOverload, OpOverloadPacket, TorchDispatchMode, aten

__all__ = ["CheckpointPolicy", "SelectiveCheckpointContext", "create_selective_checkpoint_contexts"]


class CheckpointPolicy(enum.Enum):
    """What a selective checkpoint does with one op's output. The CPU-offload policies are
    accepted and act as saving (genesis keeps the value where it is).

    >>> CheckpointPolicy.MUST_SAVE.value, CheckpointPolicy.PREFER_RECOMPUTE.name
    (0, 'PREFER_RECOMPUTE')
    """

    MUST_SAVE = 0
    PREFER_SAVE = 1
    MUST_RECOMPUTE = 2
    PREFER_RECOMPUTE = 3
    MUST_CPU_OFFLOAD = 4
    PREFER_CPU_OFFLOAD = 5


_SAVING = (CheckpointPolicy.MUST_SAVE, CheckpointPolicy.PREFER_SAVE,
           CheckpointPolicy.MUST_CPU_OFFLOAD, CheckpointPolicy.PREFER_CPU_OFFLOAD)


@dataclass
class SelectiveCheckpointContext:
    """The first argument of a policy function: `is_recompute` says whether the op call is
    the forward's (False) or the recomputation's (True).

    >>> SelectiveCheckpointContext(is_recompute=True).is_recompute
    True
    """

    is_recompute: bool


def create_selective_checkpoint_contexts(policy_fn_or_list, allow_cache_entry_mutation: bool = False):
    """The `context_fn` result for `checkpoint(..., use_reentrant=False, context_fn=...)`: two
    dispatch modes (forward, recomputation) applying a policy to each op call.

    `policy_fn_or_list`: a function `policy(ctx, op, *args, **kwargs)` returning a
    `CheckpointPolicy` (or a bool: True saves), or a list of ops (`OpOverload`s such as
    `aten.mm.default`) to save, every other op being recomputed. `allow_cache_entry_mutation`:
    when False, a saved output changed in place between forward and backward is an error.

    >>> forward, recompute = create_selective_checkpoint_contexts([aten.mm.default])
    >>> type(forward).__name__, type(recompute).__name__
    ('_CachingTorchDispatchMode', '_CachedTorchDispatchMode')
    """
    if isinstance(policy_fn_or_list, list):
        for op in policy_fn_or_list:
            if isinstance(op, OpOverloadPacket):
                raise ValueError(
                    f"create_selective_checkpoint_contexts: {op} is an OpOverloadPacket (an operator "
                    "with all its overloads); please update the OpOverloadPacket to a specific "
                    f"OpOverload, for example {op}.default")
            if not isinstance(op, OpOverload):
                raise ValueError(
                    "create_selective_checkpoint_contexts: Expected op in `op_list` to be an "
                    f"OpOverload (such as torch.ops.aten.mm.default), but got {op!r} of type "
                    f"{type(op).__name__}")
        saved = set(policy_fn_or_list)

        def policy(ctx, op, *args, **kwargs):
            return CheckpointPolicy.MUST_SAVE if op in saved else CheckpointPolicy.PREFER_RECOMPUTE
    elif callable(policy_fn_or_list):
        policy = policy_fn_or_list
    else:
        raise TypeError("create_selective_checkpoint_contexts: policy_fn_or_list must be either a "
                        f"function or a list of ops., got {type(policy_fn_or_list).__name__}")
    storage: dict = defaultdict(list)
    return (_CachingTorchDispatchMode(policy, storage),
            _CachedTorchDispatchMode(policy, storage, allow_cache_entry_mutation))


class _VersionWrapper:
    """A saved output, detached (the cache holds no graph), and its version when saved."""

    __slots__ = ("val", "version")

    def __init__(self, output):
        self.val = output.detach() if isinstance(output, Tensor) else output
        self.version = output._version_counter[0] if isinstance(output, Tensor) else None


def _saving(policy, recompute: bool, func, args: tuple, kwargs: dict) -> bool:
    decision = policy(SelectiveCheckpointContext(is_recompute=recompute), func, *args, **kwargs)
    if isinstance(decision, bool):
        return decision
    if not isinstance(decision, CheckpointPolicy):
        raise TypeError("selective checkpoint: the policy function must return a CheckpointPolicy "
                        f"or a bool, got {decision!r} for op {func}")
    return decision in _SAVING


# ops the policy is not asked about (the detach a recomputation makes of what it saves)
_IGNORED = frozenset({aten.detach.default})


class _CachingTorchDispatchMode(TorchDispatchMode):
    """Around the checkpoint's forward: keeps the outputs of the ops the policy saves, in
    `storage[op]`, in call order."""

    def __init__(self, policy_fn, storage: dict):
        self.policy_fn, self.storage = policy_fn, storage

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        if func not in _IGNORED and _saving(self.policy_fn, False, func, args, kwargs):
            self.storage[func].append(
                [_VersionWrapper(output) for output in out] if out.__class__ in (tuple, list)
                else _VersionWrapper(out))
        return out


class _CachedTorchDispatchMode(TorchDispatchMode):
    """Around the recomputation: gives the outputs of the ops the policy saves the values the
    forward kept (each kept value is used once, then let go)."""

    def __init__(self, policy_fn, storage: dict, allow_cache_entry_mutation: bool):
        self.policy_fn, self.storage = policy_fn, storage
        self.allow_cache_entry_mutation = allow_cache_entry_mutation

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func.run_with_outputs is not None:  # a custom op: its kept outputs, its kernel not rerun
            return self._custom_op(func, args, kwargs)
        out = func(*args, **kwargs)
        if func in _IGNORED or not _saving(self.policy_fn, True, func, args, kwargs):
            return out
        kept_values = self._kept(func)
        single = out.__class__ not in (tuple, list)
        outputs, kept_values = ((out,), (kept_values,)) if single else (out, kept_values)
        for output, kept in zip(outputs, kept_values):
            if not isinstance(output, Tensor):
                continue
            self._check_unchanged(func, kept)
            shares_input = any(isinstance(arg, Tensor) and arg._version_counter is output._version_counter
                               for arg in args)
            if not shares_input:  # a view's output is its input's memory: never written over
                output._data[...] = kept.val._data
        return out

    def _custom_op(self, func, args: tuple, kwargs: dict):
        if not _saving(self.policy_fn, True, func, args, kwargs):
            return func(*args, **kwargs)
        kept_values = self._kept(func)
        if kept_values.__class__ is not list:
            self._check_unchanged(func, kept_values)
            return func.run_with_outputs(kept_values.val, args, kwargs)
        for kept in kept_values:
            self._check_unchanged(func, kept)
        return func.run_with_outputs(tuple(kept.val for kept in kept_values), args, kwargs)

    def _kept(self, func):
        """The outputs the forward kept for this call of `func` (each used once)."""
        entries = self.storage.get(func)
        if not entries:
            raise RuntimeError(
                f"Trying to backward an extra time: the output of {func} kept by selective "
                "activation checkpointing was used by an earlier backward (or the recomputation "
                "calls it more times than the forward did). You are only allowed to backward once "
                "on any region computed under selective activation checkpoint.")
        return entries.pop(0)

    def _check_unchanged(self, func, kept: _VersionWrapper) -> None:
        if not self.allow_cache_entry_mutation and kept.version is not None and \
                kept.val._version_counter[0] != kept.version:
            raise RuntimeError(
                f"Tensor cached during selective activation checkpoint has been mutated: the "
                f"output of {func} saved in forward was changed in place before backward; pass "
                "allow_cache_entry_mutation=True to create_selective_checkpoint_contexts to "
                "allow it")
