"""Flatten parameters into one vector and back (as `torch.nn.utils`)."""
from __future__ import annotations

from ...ops.join import cat
from ...tensor import Tensor

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def parameters_to_vector(parameters) -> Tensor:
    """All `parameters` flattened and concatenated into one 1-D tensor (differentiable).

    >>> import genesis
    >>> layer = genesis.nn.Linear(3, 2)
    >>> genesis.nn.utils.parameters_to_vector(layer.parameters()).shape
    genesis.Size([8])
    """
    params = list(parameters)
    _check_same_device(params)
    return cat([param.reshape(-1) for param in params])


def vector_to_parameters(vec: Tensor, parameters) -> None:
    """Copy consecutive slices of the 1-D `vec` into `parameters` (in place, no graph)."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected a genesis Tensor, got {type(vec).__name__}")
    params = list(parameters)
    _check_same_device(params + [vec])
    needed = sum(param.numel() for param in params)
    if vec.ndim != 1 or vec.numel() != needed:
        raise RuntimeError(f"vector_to_parameters: vec has shape {tuple(vec.shape)}, but the "
                           f"parameters hold {needed} elements; pass a 1-D tensor of that length")
    offset = 0
    for param in params:
        count = param.numel()
        param._data[...] = vec._data[offset:offset + count].reshape(param.shape)
        param._version_counter[0] += 1
        offset += count


def _check_same_device(tensors: list) -> None:
    devices = {str(tensor.device) for tensor in tensors}
    if len(devices) > 1:
        raise TypeError(f"found tensors on different devices ({sorted(devices)}); move them to one "
                        "device first")
