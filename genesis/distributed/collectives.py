"""The collectives of `torch.distributed` on a world of one process: every reduction of one
tensor is that tensor (a sum, mean, max, min or product of one value), so `all_reduce`
leaves its tensor as it is (ReduceOp.AVG divides it by 1 in place, as PyTorch's gloo
divides its sum); a gather or scatter copies the one part into its place. Each
checks its arguments as PyTorch does and, with `async_op=True`, returns a finished `Work`.

>>> from .rendezvous import init_process_group
>>> from .process_group import destroy_process_group
>>> import genesis
>>> init_process_group("gloo", init_method="tcp://127.0.0.1:29500", world_size=1, rank=0)
>>> loss = genesis.tensor([0.5])
>>> all_reduce(loss, op=ReduceOp.AVG), loss
(None, tensor([0.5000]))
>>> parts = [genesis.zeros(1)]
>>> all_gather(parts, loss), parts
(None, [tensor([0.5000])])
>>> destroy_process_group()
"""
from __future__ import annotations

import enum

from ..autograd.grad_mode import no_grad
from ..tensor import Tensor
from .process_group import ProcessGroup, default_group

__all__ = ["ReduceOp", "Work", "barrier", "monitored_barrier", "broadcast", "all_reduce", "reduce",
           "all_gather", "all_gather_into_tensor", "gather", "scatter", "reduce_scatter",
           "reduce_scatter_tensor", "all_to_all", "all_to_all_single"]


class RedOpType(enum.Enum):
    """A reduction's kind (PyTorch's values)."""

    SUM = 0
    AVG = 1
    PRODUCT = 2
    MIN = 3
    MAX = 4
    BAND = 5
    BOR = 6
    BXOR = 7


class ReduceOp:
    """The reductions `all_reduce`, `reduce` and `reduce_scatter` take: `ReduceOp.SUM`, ...

    >>> ReduceOp.SUM
    <RedOpType.SUM: 0>
    """

    RedOpType = RedOpType
    SUM = RedOpType.SUM
    AVG = RedOpType.AVG
    PRODUCT = RedOpType.PRODUCT
    MIN = RedOpType.MIN
    MAX = RedOpType.MAX
    BAND = RedOpType.BAND
    BOR = RedOpType.BOR
    BXOR = RedOpType.BXOR


_BITWISE = (RedOpType.BAND, RedOpType.BOR, RedOpType.BXOR)


class Work:
    """A collective started with `async_op=True`: with one process it is done at once.

    >>> Work().wait(), Work().is_completed()
    (True, True)
    """

    def __init__(self, tensors: list | None = None):
        self._tensors = tensors or []

    def wait(self, timeout=None) -> bool:
        return True

    def is_completed(self) -> bool:
        return True

    def is_success(self) -> bool:
        return True

    def result(self) -> list:
        return list(self._tensors)

    def synchronize(self) -> None:
        """Nothing to wait for."""


def _finish(async_op: bool, *tensors) -> Work | None:
    return Work(list(tensors)) if async_op else None


def _check_tensor(tensor, name: str = "tensor") -> None:
    if not isinstance(tensor, Tensor):
        raise TypeError(f"Invalid function argument. Expected parameter `{name}` of type "
                        f"torch.Tensor\n             but got {type(tensor)} instead.")


def _check_root(operation: str, root: int, group: ProcessGroup | None) -> None:
    process_group = default_group() if group is None else group
    if not 0 <= root < process_group.size():
        raise RuntimeError(f"{operation}: invalid root rank: {root} (genesis runs one process, "
                           "rank 0)")


def _check_op(op, tensor: Tensor) -> None:
    if not isinstance(op, RedOpType):
        raise TypeError(f"op must be a ReduceOp (ReduceOp.SUM, AVG, PRODUCT, MIN, MAX, BAND, BOR "
                        f"or BXOR), got {op!r}")
    if op in _BITWISE and (tensor.dtype.is_floating_point or tensor.is_complex()):
        raise RuntimeError(f"Cannot use ReduceOp.{op.name} with non-integral dtype")


def _finish_average(tensor: Tensor, op, group: ProcessGroup | None) -> None:
    """ReduceOp.AVG: the sum divided by the world size, in place, as PyTorch's gloo does it
    (an autograd-recorded `div_`: a leaf that requires grad refuses it, a tensor saved for
    backward is then at a newer version, an integer tensor cannot hold the quotient)."""
    if op is RedOpType.AVG:
        tensor.div_((default_group() if group is None else group).size())


def _require_group(group: ProcessGroup | None) -> None:
    """A collective on the default group needs `init_process_group` first (PyTorch's error)."""
    if group is None:
        default_group()


def _root(given: int | None, group_rank: int | None) -> int:
    return group_rank if given is None and group_rank is not None else (given or 0)


def _copy(destination: Tensor, source: Tensor, operation: str, reshape: bool = False) -> None:
    """Copy `source` into `destination`, of its shape (or, with `reshape`, of its size: the
    one-tensor forms take a flat or a stacked output)."""
    same_size = reshape and destination.numel() == source.numel()
    if destination.shape != source.shape and not same_size:
        raise RuntimeError(f"{operation}: invalid tensor size (expected {tuple(source.shape)}, "
                           f"got {tuple(destination.shape)})")
    with no_grad():
        destination.copy_(source.reshape(destination.shape))


def _check_rooted_list(operation: str, tensor: Tensor, parts: list | None, root: int | None,
                       group_root: int | None, group: ProcessGroup | None, role: str) -> None:
    """PyTorch's checks of gather's and scatter's arguments, in its order: the list of parts
    (`gather_list`, `scatter_list`) given on the root rank (`role`: "destination" or
    "source") and on no other, and one part on one process."""
    _check_tensor(tensor)
    rank = _root(root, group_root)
    _require_group(group)
    argument = f"``{operation}_list``"
    if rank == 0 and parts is None:
        raise ValueError(f"Argument {argument} must be specified on {role} rank.")
    if rank != 0 and parts is not None:
        raise ValueError(f"Argument {argument} must NOT be specified on non-{role} ranks.")
    _check_root(operation, rank, group)
    _check_one_part(parts, f"{operation} list", operation)


def _check_one_part(parts: list, name: str, operation: str) -> None:
    if len(parts) != 1:
        raise RuntimeError(f"{operation}: invalid {name} (expected length 1, one per process, "
                           f"got {len(parts)})")


def barrier(group: ProcessGroup | None = None, async_op: bool = False, device_ids=None):
    """Wait for every process: with one there is none to wait for."""
    _require_group(group)
    return _finish(async_op)


def monitored_barrier(group: ProcessGroup | None = None, timeout=None,
                      wait_all_ranks: bool = False) -> None:
    _require_group(group)


def broadcast(tensor: Tensor, src: int | None = None, group: ProcessGroup | None = None,
              async_op: bool = False, group_src: int | None = None):
    """Send `src`'s `tensor` to every process: this one is `src`, so it stays as it is."""
    _check_tensor(tensor)
    _check_root("broadcast", _root(src, group_src), group)
    return _finish(async_op, tensor)


def all_reduce(tensor: Tensor, op=ReduceOp.SUM, group: ProcessGroup | None = None,
               async_op: bool = False):
    """Reduce `tensor` over all processes, in place: over one it is `tensor` itself."""
    _check_tensor(tensor)
    _require_group(group)
    _check_op(op, tensor)
    _finish_average(tensor, op, group)
    return _finish(async_op, tensor)


def reduce(tensor: Tensor, dst: int | None = None, op=ReduceOp.SUM,
           group: ProcessGroup | None = None, async_op: bool = False,
           group_dst: int | None = None):
    """Reduce `tensor` onto `dst`: this process, where the reduction of one is `tensor`."""
    _check_tensor(tensor)
    _check_root("reduce", _root(dst, group_dst), group)
    _check_op(op, tensor)
    _finish_average(tensor, op, group)
    return _finish(async_op, tensor)


def all_gather(tensor_list: list, tensor: Tensor, group: ProcessGroup | None = None,
               async_op: bool = False):
    """Fill `tensor_list` (one tensor per process: one) with every process's `tensor`."""
    _check_tensor(tensor)
    _require_group(group)
    _check_one_part(tensor_list, "output tensor list", "all_gather")
    _copy(tensor_list[0], tensor, "all_gather")
    return _finish(async_op, *tensor_list)


def all_gather_into_tensor(output_tensor: Tensor, input_tensor: Tensor,
                           group: ProcessGroup | None = None, async_op: bool = False):
    """`output_tensor` (world size times `input_tensor`'s values): `input_tensor`'s values."""
    _check_tensor(output_tensor, "output_tensor")
    _check_tensor(input_tensor, "input_tensor")
    _require_group(group)
    _copy(output_tensor, input_tensor, "all_gather_into_tensor", reshape=True)
    return _finish(async_op, output_tensor)


def gather(tensor: Tensor, gather_list: list | None = None, dst: int | None = None,
           group: ProcessGroup | None = None, async_op: bool = False,
           group_dst: int | None = None):
    """Gather every process's `tensor` into `dst`'s `gather_list`."""
    _check_rooted_list("gather", tensor, gather_list, dst, group_dst, group, "destination")
    _copy(gather_list[0], tensor, "gather")
    return _finish(async_op, *gather_list)


def scatter(tensor: Tensor, scatter_list: list | None = None, src: int | None = None,
            group: ProcessGroup | None = None, async_op: bool = False,
            group_src: int | None = None):
    """Give each process its part of `src`'s `scatter_list`: this one gets the first."""
    _check_rooted_list("scatter", tensor, scatter_list, src, group_src, group, "source")
    _copy(tensor, scatter_list[0], "scatter")
    return _finish(async_op, tensor)


def reduce_scatter(output: Tensor, input_list: list, op=ReduceOp.SUM,
                   group: ProcessGroup | None = None, async_op: bool = False):
    """Reduce `input_list` over processes and give each its part: `input_list[0]` here."""
    _check_tensor(output, "output")
    _require_group(group)
    _check_one_part(input_list, "input list", "reduce_scatter")
    _check_op(op, output)
    _copy(output, input_list[0], "reduce_scatter")
    _finish_average(output, op, group)
    return _finish(async_op, output)


def reduce_scatter_tensor(output: Tensor, input: Tensor, op=ReduceOp.SUM,
                          group: ProcessGroup | None = None, async_op: bool = False):
    """`reduce_scatter` with the parts as one tensor: `output` gets all of `input`."""
    _check_tensor(output, "output")
    _check_tensor(input, "input")
    _require_group(group)
    _check_op(op, output)
    _copy(output, input, "reduce_scatter_tensor", reshape=True)
    _finish_average(output, op, group)
    return _finish(async_op, output)


def all_to_all(output_tensor_list: list, input_tensor_list: list,
               group: ProcessGroup | None = None, async_op: bool = False):
    """Each process sends part i of its inputs to process i: here the one part to itself."""
    _require_group(group)
    _check_one_part(output_tensor_list, "output tensor list", "all_to_all")
    _check_one_part(input_tensor_list, "input tensor list", "all_to_all")
    _copy(output_tensor_list[0], input_tensor_list[0], "all_to_all")
    return _finish(async_op, *output_tensor_list)


def all_to_all_single(output: Tensor, input: Tensor, output_split_sizes=None,
                      input_split_sizes=None, group: ProcessGroup | None = None,
                      async_op: bool = False):
    """`all_to_all` with the parts as one tensor: `output` gets all of `input`."""
    _check_tensor(output, "output")
    _check_tensor(input, "input")
    _require_group(group)
    _copy(output, input, "all_to_all_single", reshape=True)
    return _finish(async_op, output)
