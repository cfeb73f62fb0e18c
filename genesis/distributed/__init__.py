"""`genesis.distributed`, served as `torch.distributed`: the distributed API of a run of one
process (world size 1, rank 0), so a training script written for torchrun, DDP and a
DistributedSampler runs unchanged as one process. Collectives over one process are exact:
a reduction of one tensor is that tensor.

>>> import genesis.distributed as dist
>>> dist.is_available(), dist.is_initialized()
(True, False)
>>> dist.init_process_group("gloo", init_method="tcp://127.0.0.1:29500", world_size=1, rank=0)
>>> dist.get_rank(), dist.get_world_size(), dist.get_backend()
(0, 1, 'gloo')
>>> dist.destroy_process_group()
"""
from __future__ import annotations

from .collectives import (ReduceOp, Work, all_gather, all_gather_into_tensor, all_reduce,
                          all_to_all, all_to_all_single, barrier, broadcast, gather,
                          monitored_barrier, reduce, reduce_scatter, reduce_scatter_tensor, scatter)
from .object_collectives import (all_gather_object, broadcast_object_list, gather_object,
                                 scatter_object_list)
from .process_group import (Backend, GroupMember, ProcessGroup, destroy_process_group,
                            get_backend, get_global_rank, get_group_rank, get_node_local_rank,
                            get_process_group_ranks, get_rank, get_world_size, group,
                            is_available, is_gloo_available, is_initialized, is_mpi_available,
                            is_nccl_available, is_torchelastic_launched, new_group)
from .rendezvous import OneProcessOnly, init_process_group

__all__ = ["is_available", "is_initialized", "init_process_group", "destroy_process_group",
           "OneProcessOnly", "get_rank", "get_world_size", "get_backend", "new_group",
           "get_global_rank", "get_group_rank", "get_process_group_ranks", "get_node_local_rank",
           "is_gloo_available", "is_nccl_available", "is_mpi_available",
           "is_torchelastic_launched", "group", "GroupMember", "ProcessGroup", "Backend",
           "ReduceOp", "Work", "barrier", "monitored_barrier", "broadcast", "all_reduce", "reduce",
           "all_gather", "all_gather_into_tensor", "gather", "scatter", "reduce_scatter",
           "reduce_scatter_tensor", "all_to_all", "all_to_all_single", "all_gather_object",
           "broadcast_object_list", "gather_object", "scatter_object_list"]
