"""The collectives of picklable Python objects (`all_gather_object`,
`broadcast_object_list`, `gather_object`, `scatter_object_list`) on a world of one process.
As PyTorch's, an object that travels is pickled: what arrives is a copy (and an object that
does not pickle fails here as it would there); the source's own list is left as it is.

>>> from .rendezvous import init_process_group
>>> from .process_group import destroy_process_group
>>> init_process_group("gloo", init_method="tcp://127.0.0.1:29500", world_size=1, rank=0)
>>> gathered = [None]
>>> all_gather_object(gathered, {"loss": 0.5}), gathered
(None, [{'loss': 0.5}])
>>> destroy_process_group()
"""
from __future__ import annotations

import pickle

from .collectives import _check_root, _require_group, _root
from .process_group import ProcessGroup

__all__ = ["all_gather_object", "broadcast_object_list", "gather_object", "scatter_object_list"]


def _sent(obj):
    """`obj` as another process receives it: unpickled from its pickle."""
    return pickle.loads(pickle.dumps(obj))


def all_gather_object(object_list: list, obj, group: ProcessGroup | None = None) -> None:
    """Put every process's `obj` into `object_list` (one per process: the first entry)."""
    _require_group(group)
    object_list[0] = _sent(obj)


def broadcast_object_list(object_list: list, src: int | None = None,
                          group: ProcessGroup | None = None, device=None,
                          group_src: int | None = None) -> None:
    """Send `src`'s `object_list` to every process: this one is `src`, its list stays."""
    _check_root("broadcast", _root(src, group_src), group)
    for obj in object_list:
        _sent(obj)


def gather_object(obj, object_gather_list: list | None = None, dst: int | None = None,
                  group: ProcessGroup | None = None, group_dst: int | None = None) -> None:
    """Gather every process's `obj` into `dst`'s `object_gather_list`."""
    _check_root("gather", _root(dst, group_dst), group)
    if object_gather_list is None:
        raise ValueError("Argument ``object_gather_list`` must be specified on destination rank.")
    object_gather_list[0] = _sent(obj)


def scatter_object_list(scatter_object_output_list: list,
                        scatter_object_input_list: list | None = None, src: int | None = None,
                        group: ProcessGroup | None = None, group_src: int | None = None) -> None:
    """Give each process its object of `src`'s input list: this one gets the first."""
    _check_root("scatter", _root(src, group_src), group)
    if scatter_object_input_list is None:
        raise ValueError("Argument ``scatter_object_input_list`` must be specified on source rank.")
    scatter_object_output_list[0] = _sent(scatter_object_input_list[0])
