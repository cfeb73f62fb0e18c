"""Selective activation checkpointing: a per-op policy saying which op outputs a
checkpoint keeps from its forward instead of taking them from the recomputation.

PyTorch decides this at its dispatcher, per ATen overload (`torch.ops.aten.mm.default`).
Genesis has no dispatcher: the policy is asked once per genesis op call (an `Op` or a
user's `Function`), and the op is named as `genesis.autograd` names it in messages, in
snake case: "matmul" for `a @ b`, `genesis.mm` and `genesis.matmul`; "sin", "mul",
"clone", a user's `Function` MyFunc as "my_func". A list policy names ops by those
strings (or by their `Function` classes).

What "save" means here: a genesis op's backward needs the state its forward sets up on
its node, so the recomputation still runs a saved op (its node is part of the recomputed
graph); its output then takes the value the forward computed, kept since then. That makes
the recomputation reproduce a saved op exactly (a random or otherwise non-deterministic
op gives the forward's value again), and it keeps that output alive between forward and
backward; it does not skip the op's compute. "Recompute" keeps nothing.

>>> import functools, genesis
>>> from genesis.utils.checkpoint import checkpoint
>>> contexts = functools.partial(create_selective_checkpoint_contexts, ["matmul"])
>>> w = genesis.randn(3, 3, requires_grad=True)
>>> y = checkpoint(lambda x: (x @ w).sin(), genesis.randn(2, 3), use_reentrant=False,
...                context_fn=contexts)
>>> y.sum().backward(); w.grad.shape
(3, 3)
"""
from __future__ import annotations

import enum
from collections import defaultdict
from dataclasses import dataclass

from ..autograd import function
from ..autograd.function import Function, Node
from ..tensor import Tensor

__all__ = ["CheckpointPolicy", "SelectiveCheckpointContext", "create_selective_checkpoint_contexts",
           "op_name"]


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


def op_name(node: Node) -> str:
    """The name a policy sees for the op whose node (ctx) is `node`.

    >>> import genesis
    >>> op_name((genesis.randn(2, requires_grad=True) * 2).grad_fn)
    'mul'
    """
    return function._op_name(node._forward_cls)


def create_selective_checkpoint_contexts(policy_fn_or_list, allow_cache_entry_mutation: bool = False):
    """The `context_fn` result for `checkpoint(..., use_reentrant=False, context_fn=...)`: two
    context managers (forward, recomputation) applying a policy to each op call.

    `policy_fn_or_list`: a function `policy(ctx, op_name, *args)` returning a
    `CheckpointPolicy` (or a bool: True saves), or a list of op names (or `Function`
    classes) to save, every other op being recomputed. `allow_cache_entry_mutation`: when
    False, a saved output changed in place between forward and backward is an error.

    >>> forward, recompute = create_selective_checkpoint_contexts(["matmul"])
    >>> type(forward).__name__, type(recompute).__name__
    ('_SelectiveForward', '_SelectiveRecompute')
    """
    if isinstance(policy_fn_or_list, list):
        for op in policy_fn_or_list:
            if not isinstance(op, str) and not (isinstance(op, type) and issubclass(op, Function)):
                raise ValueError(
                    "create_selective_checkpoint_contexts: Expected op in `op_list` to be an "
                    "OpOverload (in genesis: an op name such as 'matmul', or a Function class), "
                    f"but got {op!r} of type {type(op).__name__}")
        names = {op if isinstance(op, str) else function._op_name(op) for op in policy_fn_or_list}

        def policy(ctx, name, *args):
            return CheckpointPolicy.MUST_SAVE if name in names else CheckpointPolicy.PREFER_RECOMPUTE
    elif callable(policy_fn_or_list):
        policy = policy_fn_or_list
    else:
        raise TypeError("create_selective_checkpoint_contexts: policy_fn_or_list must be either a "
                        f"function or a list of ops., got {type(policy_fn_or_list).__name__}")
    cache = _Cache(allow_cache_entry_mutation)
    return _SelectiveForward(policy, cache), _SelectiveRecompute(policy, cache)


class _Cache:
    """Outputs of saved op calls, per op name in call order, and their versions."""

    def __init__(self, allow_mutation: bool):
        self.allow_mutation = allow_mutation
        self.entries: dict[str, list] = defaultdict(list)


def _decide(policy, recompute: bool, node: Node, args: tuple) -> bool:
    decision = policy(SelectiveCheckpointContext(is_recompute=recompute), op_name(node), *args)
    if isinstance(decision, bool):
        return decision
    if not isinstance(decision, CheckpointPolicy):
        raise TypeError("selective checkpoint: the policy function must return a CheckpointPolicy "
                        f"or a bool, got {decision!r} for op {op_name(node)!r}")
    return decision in _SAVING


class _SelectiveForward:
    def __init__(self, policy, cache: _Cache):
        self.policy, self.cache = policy, cache

    def __enter__(self):
        function.observers.add(self)
        return self

    def __exit__(self, *exc):
        function.observers.discard(self)

    def __call__(self, node: Node, args: tuple, outputs: tuple) -> None:
        if _decide(self.policy, False, node, args):
            kept = [(output.detach(), output._version_counter[0]) if isinstance(output, Tensor)
                    else None for output in outputs]
            self.cache.entries[op_name(node)].append((kept, outputs))


class _SelectiveRecompute(_SelectiveForward):
    def __enter__(self):
        self.taken: dict[str, int] = defaultdict(int)
        return super().__enter__()

    def __call__(self, node: Node, args: tuple, outputs: tuple) -> None:
        if not _decide(self.policy, True, node, args) or node._forward_cls.is_view:
            return  # (a view's output is its input's memory: never written over)
        name = op_name(node)
        index = self.taken[name]
        entries = self.cache.entries[name]
        if index >= len(entries):
            raise RuntimeError(f"selective checkpoint: the recomputation calls {name!r} more times "
                               "than the forward did; the checkpointed function must be "
                               "deterministic in the ops it calls")
        self.taken[name] += 1
        kept, originals = entries[index]
        for output, entry, original in zip(outputs, kept, originals):
            if entry is None or not isinstance(output, Tensor):
                continue
            value, version = entry
            if not self.cache.allow_mutation and original._version_counter[0] != version:
                raise RuntimeError(
                    f"selective checkpoint: the output of {name!r} saved in forward was changed in "
                    "place before backward; pass allow_cache_entry_mutation=True to "
                    "create_selective_checkpoint_contexts to allow it")
            output._data[...] = value._data
