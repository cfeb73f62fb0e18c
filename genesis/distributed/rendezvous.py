"""`init_process_group`: where a script says how many processes its run has and which one
it is (the arguments, the `init_method` URL's `?rank=&world_size=`, or, for "env://", the
RANK and WORLD_SIZE variables torchrun sets), read as PyTorch reads them, with PyTorch's
errors for what is missing. Genesis runs one process: a world of one, rank 0, starts the
default group; any other figure is `OneProcessOnly`, an error that names the figures and
where they came from.

>>> init_process_group("gloo", init_method="tcp://127.0.0.1:29500", world_size=1, rank=0)
>>> from .process_group import destroy_process_group, get_world_size
>>> get_world_size()
1
>>> destroy_process_group()
"""
from __future__ import annotations

import os
import urllib.parse

from .process_group import Backend, ProcessGroup, is_initialized, set_default_group

__all__ = ["init_process_group", "OneProcessOnly"]

_KNOWN_BACKENDS = (Backend.GLOO, Backend.NCCL, Backend.UCC, Backend.MPI, Backend.XCCL)


class OneProcessOnly(RuntimeError):
    """A distributed run of more than one process (or a rank other than 0): genesis runs
    one process.

    >>> str(OneProcessOnly(2, 1, "the environment (RANK, WORLD_SIZE)")).split(": ")[1]
    'genesis runs one process, so a distributed run has world size 1 and rank 0. Run the ...'
    """

    def __init__(self, world_size: int, rank: int, source: str):
        super().__init__(
            f"init_process_group was asked for world_size={world_size}, rank={rank} (from "
            f"{source}): genesis runs one process, so a distributed run has world size 1 and "
            "rank 0. Run the script as one process: without torchrun, or with `torchrun "
            "--nproc_per_node=1` (WORLD_SIZE=1, RANK=0)")
        self.world_size, self.rank = world_size, rank


def init_process_group(backend: str | None = None, init_method: str | None = None, timeout=None,
                       world_size: int = -1, rank: int = -1, store=None, group_name: str = "",
                       pg_options=None, device_id=None) -> None:
    """Start the default process group of this run: one process, rank 0. `world_size` and
    `rank` come from the arguments, else from `init_method` ("env://", the default, reads
    RANK and WORLD_SIZE and wants MASTER_ADDR and MASTER_PORT set, as PyTorch's;
    "tcp://host:port" and "file://path" take `?rank=&world_size=`). `timeout`, `store`,
    `group_name` and `pg_options` are accepted; with one process nothing waits or talks."""
    if is_initialized():
        raise ValueError("trying to initialize the default process group twice!")
    if backend is not None and Backend(backend) not in _KNOWN_BACKENDS:
        raise AssertionError(f"Unknown backend type {backend}")
    _check_device_id(device_id)
    if store is not None:
        if init_method is not None:
            raise AssertionError("Cannot specify both init_method and store.")
        if world_size <= 0:
            raise AssertionError("world_size must be positive if using store")
        if rank < 0:
            raise AssertionError("rank must be non-negative if using store")
        source = "the arguments world_size and rank"
    else:
        world_size, rank, source = _rendezvous(init_method or "env://", world_size, rank)
    if world_size != 1 or rank != 0:
        raise OneProcessOnly(world_size, rank, source)
    set_default_group(ProcessGroup(Backend.UNDEFINED if backend is None else Backend(backend)))


def _check_device_id(device_id) -> None:
    """PyTorch's check: a device_id is an accelerator with an index (an int is one)."""
    if device_id is None or isinstance(device_id, int):
        return
    if device_id.type == "cpu" or device_id.index is None:
        raise ValueError("init_process_group device_id parameter must be an accelerator with an "
                         "index")


def _rendezvous(init_method: str, world_size: int, rank: int) -> tuple:
    """(world_size, rank, where they came from) for `init_method`, as PyTorch's rendezvous
    handlers read them: arguments first, then the URL's query, then (env://) the environment."""
    url = urllib.parse.urlparse(init_method)
    scheme = url.scheme
    if scheme not in ("env", "tcp", "file"):
        raise RuntimeError(f"No rendezvous handler for {scheme}://")
    query = dict(urllib.parse.parse_qsl(url.query))
    sources = []
    rank = _figure("rank", rank, query, sources)
    world_size = _figure("world_size", world_size, query, sources)
    if scheme != "env":
        for name, value in (("rank", rank), ("world size", world_size)):
            if value is None:
                raise ValueError(f"Error initializing torch.distributed using {scheme}:// "
                                 f"rendezvous: {name} parameter missing")
        return world_size, rank, " and ".join(sources)
    environment = []
    if rank is None:
        rank = int(_environment_variable("RANK"))
        environment.append("RANK")
    if world_size is None:
        world_size = int(_environment_variable("WORLD_SIZE"))
        environment.append("WORLD_SIZE")
    if environment:
        sources.append(f"the environment ({', '.join(environment)})")
    if world_size == 1 and rank == 0:
        _environment_variable("MASTER_ADDR")
        _environment_variable("MASTER_PORT")
    return world_size, rank, " and ".join(sources)


def _figure(name: str, argument: int, query: dict, sources: list) -> int | None:
    """`name` (rank or world_size) from its argument (-1: not given), else the URL query."""
    if argument != -1:
        sources.append(f"the argument {name}")
        return argument
    if name in query:
        sources.append(f"init_method's {name}")
        return int(query[name])
    return None


def _environment_variable(name: str) -> str:
    if name not in os.environ:
        raise ValueError("Error initializing torch.distributed using env:// rendezvous: "
                         f"environment variable {name} expected, but not set")
    return os.environ[name]
