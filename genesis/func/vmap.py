"""`vmap`: map a function over a batch dimension of its inputs (`torch.func.vmap`).

Genesis has no batching rules, so this vmap is a loop: it slices every mapped input along
its `in_dim`, calls the function once per sample and stacks the results along `out_dims`.
Values and gradients equal PyTorch's (slicing and stacking are differentiable genesis ops),
at the speed of a Python loop.

>>> import genesis
>>> x = genesis.tensor([[1., 2.], [3., 4.]])
>>> vmap(lambda row: row.sum())(x)
tensor([3., 7.])
>>> vmap(lambda a, b: a * b, in_dims=(1, None))(x, genesis.tensor([10., 100.]))
tensor([[ 10., 300.],
        [ 20., 400.]])
"""
from __future__ import annotations

import functools

from ..ops.join import stack
from ..random import device_state, restore_device_state
from ..tensor import Tensor
from .pytree import broadcast_prefix, flatten, is_container, unflatten

__all__ = ["vmap"]

RANDOMNESS = ("error", "different", "same")


def vmap(func, in_dims=0, out_dims=0, randomness: str = "error", *, chunk_size=None):
    """`func` mapped over a dimension of its inputs, as `torch.func.vmap` (and `torch.vmap`).

    `in_dims` is an int (the mapped dim of every input), or a tuple with one entry per
    positional argument, each an int, None (not mapped) or a nested tuple/list/dict
    matching that argument's structure. Keyword arguments are passed unmapped. Outputs may
    be tensors or tuples/lists/dicts of them; `out_dims` says where each gets the batch
    dim (None: the output does not depend on the sample and is returned once).

    Implemented as a loop over the samples, so `chunk_size` is checked and otherwise
    changes nothing. `randomness`: "error" raises RuntimeError when `func` draws from a
    device's global generator (detected by its state changing, and undone before raising;
    draws from a `genesis.Generator` of your own are not seen); "different" lets each
    sample draw its own numbers (what a loop does); "same" restores the global generators
    before each sample, so every sample draws the same numbers.

    >>> import genesis
    >>> vmap(genesis.dot)(genesis.ones(3, 2), genesis.ones(3, 2))
    tensor([2., 2., 2.])
    """
    if randomness not in RANDOMNESS:
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or "
                           f"'same'. Got {randomness}")
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size <= 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")

    @functools.wraps(func)
    def mapped(*args, **kwargs):
        return _run(func, in_dims, out_dims, randomness, args, kwargs)

    return mapped


def _name(func) -> str:
    return getattr(func, "__name__", repr(func))


def _run(func, in_dims, out_dims, randomness, args: tuple, kwargs: dict):
    where = f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>)"
    if not args:
        raise ValueError(f"vmap({_name(func)})(<inputs>): got no inputs. Maybe you forgot to add "
                         "inputs, or you are trying to vmap over a function with no inputs. The "
                         "latter is unsupported.")
    if not isinstance(in_dims, (int, tuple)) or isinstance(in_dims, bool):
        raise ValueError(f"{where}: expected `in_dims` to be int or a (potentially nested) tuple "
                         f"matching the structure of inputs, got: {type(in_dims)}.")
    try:
        dims = broadcast_prefix(in_dims, args, "in_dims")
    except ValueError as error:
        raise ValueError(f"{where}: in_dims is not compatible with the structure of `inputs`. "
                         f"{error}") from None
    leaves, spec = flatten(args)
    sizes = []
    for leaf, dim in zip(leaves, dims):
        if dim is None:
            continue
        if not isinstance(dim, int) or isinstance(dim, bool):
            raise ValueError(f"{where}: in_dims must be int, None or nested tuples of them; got "
                             f"an entry of type {type(dim)}")
        if not isinstance(leaf, Tensor):
            raise ValueError(f"{where}: Got in_dim={dim} for an input but the input is of type "
                             f"{type(leaf)}. We cannot vmap over non-Tensor arguments, please use "
                             "None as the respective in_dim")
        rank = leaf.dim()
        if not -rank <= dim < rank:
            raise ValueError(f"{where}: Got in_dim={dim} for some input, but that input is a Tensor "
                             f"of dimensionality {rank} so expected in_dim to satisfy "
                             f"-{rank} <= in_dim < {rank}.")
        sizes.append(leaf.shape[dim])
    if not sizes:
        raise ValueError("vmap: Expected at least one Tensor to vmap over")
    if any(size != sizes[0] for size in sizes):
        raise ValueError("vmap: Expected all tensors to have the same size in the mapped dimension, "
                         f"got sizes {sizes} for the mapped dimension")
    if sizes[0] == 0:
        raise ValueError("vmap: the mapped dimension has size 0; genesis's vmap calls the function "
                         "once per sample, so it has no output to take shapes from")
    devices = _devices(leaves)
    start = _rng_states(devices) if randomness != "different" else None
    results = []
    for index in range(sizes[0]):
        sample = [leaf if dim is None else leaf.select(dim, index) for leaf, dim in zip(leaves, dims)]
        if randomness == "same":
            _restore(start)
        results.append(func(*unflatten(sample, spec), **kwargs))
        if randomness == "error" and not _states_equal(start, _rng_states(devices)):
            _restore(start)
            raise RuntimeError("vmap: called random operation while in randomness error mode. "
                               "Please either use the 'same' or 'different' randomness flags on "
                               "vmap or perform the randomness operation out of vmap")
    return _stack_outputs(func, results, out_dims)


def _stack_outputs(func, results: list, out_dims):
    where = f"vmap({_name(func)}, ..., out_dims={out_dims})(<inputs>)"
    first, spec = flatten(results[0])
    per_sample = [first]
    for result in results[1:]:
        leaves, other = flatten(result)
        if other != spec:
            raise ValueError(f"vmap({_name(func)}, ...): `{_name(func)}` returned outputs of "
                             f"different structures for different samples: {spec!r} and {other!r}")
        per_sample.append(leaves)
    if not isinstance(out_dims, (int, tuple)) and out_dims is not None and not is_container(out_dims):
        raise ValueError(f"{where}: expected `out_dims` to be int or a (potentially nested) tuple "
                         f"matching the structure of outputs, got: {type(out_dims)}.")
    try:
        dims = broadcast_prefix(out_dims, results[0], "out_dims")
    except ValueError as error:
        raise ValueError(f"{where}: out_dims is not compatible with the structure of `outputs`. "
                         f"{error}") from None
    stacked = []
    for position, dim in enumerate(dims):
        values = [leaves[position] for leaves in per_sample]
        if dim is None:
            if isinstance(values[0], Tensor) and any(
                    not bool((value == values[0]).all()) for value in values[1:]):
                raise ValueError(f"vmap({_name(func)}, ...): `{_name(func)}` can not return a "
                                 "BatchedTensor when out_dim is None")
            stacked.append(values[0])
            continue
        if not isinstance(values[0], Tensor):
            raise ValueError(f"vmap({_name(func)}, ...): `{_name(func)}` must only return Tensors, "
                             f"got type {type(values[0])}. Did you mean to set out_dims= to None "
                             "for output?")
        stacked.append(stack(values, dim=dim))
    return unflatten(stacked, spec)


def _devices(leaves: list) -> list:
    """The devices whose global generators a call may draw from: the CPU's and the inputs'."""
    found = {"cpu": "cpu"}
    for leaf in leaves:
        if isinstance(leaf, Tensor):
            found.setdefault(str(leaf.device), leaf.device)
    return list(found.values())


def _rng_states(devices: list) -> list:
    return [(device, device_state(device)) for device in devices]


def _restore(states: list) -> None:
    for device, state in states:
        restore_device_state(state, device)


def _states_equal(before: list, after: list) -> bool:
    for (_, old), (_, new) in zip(before, after):
        if isinstance(old, dict):
            if old != new:
                return False
        elif not bool((old == new).all()):  # a GPU generator's state array
            return False
    return True
