"""The process group of a genesis run: one process, rank 0 of a world of 1. It holds what
`init_process_group` set up (the backend's name) and answers the questions a training
script asks of it (`get_rank`, `get_world_size`, `get_backend`, `new_group`, ...) as
PyTorch's `torch.distributed` answers them in a run of one process.

>>> is_available(), is_initialized()
(True, False)
"""
from __future__ import annotations

import os

from ..cuda import is_available as _cuda_is_available

__all__ = ["Backend", "ProcessGroup", "group", "GroupMember", "is_available", "is_initialized",
           "is_gloo_available", "is_nccl_available", "is_mpi_available", "is_torchelastic_launched",
           "get_rank", "get_world_size", "get_backend", "new_group", "get_global_rank",
           "get_group_rank", "get_process_group_ranks", "get_node_local_rank",
           "destroy_process_group", "default_group", "NOT_INITIALIZED"]

NOT_INITIALIZED = ("Default process group has not been initialized, please make sure to call "
                   "init_process_group.")


class Backend(str):
    """A backend's name, lower-cased, as PyTorch's `torch.distributed.Backend`.

    >>> Backend("GLOO"), Backend.NCCL
    ('gloo', 'nccl')
    """

    UNDEFINED = "undefined"
    GLOO = "gloo"
    NCCL = "nccl"
    UCC = "ucc"
    MPI = "mpi"
    XCCL = "xccl"

    def __new__(cls, name: str):
        if not isinstance(name, str):
            raise ValueError("Backend constructor parameter must be string-ish")
        return super().__new__(cls, name.lower())


class ProcessGroup:
    """A group of processes: here always the one process, rank 0 of 1.

    >>> ProcessGroup("gloo").rank(), ProcessGroup("gloo").size()
    (0, 1)
    """

    def __init__(self, backend: str):
        self.backend = backend

    def rank(self) -> int:
        return 0

    def size(self) -> int:
        return 1

    def name(self) -> str:
        return self.backend

    def __repr__(self) -> str:
        return f"ProcessGroup(backend={self.backend!r}, rank=0, size=1)"


class GroupMember:
    """`GroupMember.WORLD`: the default group (None before `init_process_group`)."""

    WORLD: ProcessGroup | None = None
    NON_GROUP_MEMBER = -100


class group:
    """`group.WORLD`: the default group (None before `init_process_group`), as in PyTorch."""

    WORLD: ProcessGroup | None = None


def set_default_group(process_group: ProcessGroup | None) -> None:
    """Make `process_group` the default group (None: there is none); `init_process_group` and
    `destroy_process_group` call this."""
    group.WORLD = GroupMember.WORLD = process_group


def default_group() -> ProcessGroup:
    """The default group; PyTorch's ValueError before `init_process_group`."""
    if group.WORLD is None:
        raise ValueError(NOT_INITIALIZED)
    return group.WORLD


def _group(process_group: ProcessGroup | None) -> ProcessGroup:
    return default_group() if process_group is None else process_group


def is_available() -> bool:
    """True: genesis supports distributed runs of one process."""
    return True


def is_initialized() -> bool:
    """Whether `init_process_group` has run (and `destroy_process_group` has not since)."""
    return group.WORLD is not None


def is_gloo_available() -> bool:
    return True


def is_nccl_available() -> bool:
    """Whether a script's "nccl" backend has a GPU to run on (one process needs no NCCL)."""
    return _cuda_is_available()


def is_mpi_available() -> bool:
    return False


def is_torchelastic_launched() -> bool:
    """Whether torchrun (torchelastic) started this process: it sets TORCHELASTIC_RUN_ID."""
    return os.getenv("TORCHELASTIC_RUN_ID") is not None


def get_rank(group: ProcessGroup | None = None) -> int:
    """This process's rank: 0.

    >>> get_rank()
    Traceback (most recent call last):
    ValueError: Default process group has not been initialized, please make sure to call
    init_process_group.
    """
    return _group(group).rank()


def get_world_size(group: ProcessGroup | None = None) -> int:
    """How many processes the group has: 1."""
    return _group(group).size()


def get_backend(group: ProcessGroup | None = None) -> Backend:
    """The backend `init_process_group` was given ("undefined" for None, as PyTorch)."""
    return Backend(_group(group).backend)


def new_group(ranks=None, timeout=None, backend=None, pg_options=None,
              use_local_synchronization: bool = False, group_desc=None, device_id=None,
              sort_ranks: bool = True) -> ProcessGroup:
    """A group of `ranks` (all of them by default); with one process, [0] is all there is."""
    world = default_group()
    ranks = [0] if ranks is None else list(ranks)
    if len(ranks) > world.size():
        raise ValueError("the new group's world size should be less or equal to the world size "
                         "set by init_process_group")
    if any(rank != 0 for rank in ranks):
        raise ValueError(f"new_group: ranks {ranks} name processes genesis does not run (it runs "
                         "one process, rank 0)")
    return ProcessGroup(world.backend if backend is None else Backend(backend))


def _check_rank(rank: int, process_group: ProcessGroup) -> int:
    if not 0 <= rank < process_group.size():
        raise ValueError(f"Group {process_group} does not contain rank {rank}: genesis runs one "
                         "process, rank 0")
    return rank


def get_global_rank(group: ProcessGroup, group_rank: int) -> int:
    """The global rank of `group`'s rank `group_rank`: the same number (the default group's
    ranks are global ranks, unchecked, as in PyTorch)."""
    if group is GroupMember.WORLD:
        return group_rank
    return _check_rank(group_rank, _group(group))


def get_group_rank(group: ProcessGroup, global_rank: int) -> int:
    """The rank in `group` of the global rank `global_rank`: the same number."""
    return _check_rank(global_rank, _group(group))


def get_process_group_ranks(group: ProcessGroup | None) -> list:
    """The global ranks in `group`: [0]."""
    return list(range(_group(group).size()))


def get_node_local_rank(fallback_rank: int | None = None) -> int:
    """LOCAL_RANK from the environment (torchrun sets it), else `fallback_rank`."""
    if "LOCAL_RANK" in os.environ:
        return int(os.environ["LOCAL_RANK"])
    if fallback_rank is not None:
        return int(fallback_rank)
    raise RuntimeError("LOCAL_RANK is not in the environment. Consider passing fallback_rank to "
                       "allow `get_node_local_rank` to work, assuming you are not running in a "
                       "multi-device context and want the code to run locally instead.")


def destroy_process_group(group: ProcessGroup | None = None) -> None:
    """End the default group (or forget `group`); as PyTorch, an AssertionError when there is
    no group to end."""
    if group is None and not is_initialized():
        raise AssertionError("Process group cannot be None")
    if group is None or group is GroupMember.WORLD:
        set_default_group(None)
