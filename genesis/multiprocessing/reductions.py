"""How tensors cross process boundaries through `multiprocessing`'s pickler (Process
arguments under spawn and forkserver, Queues, Pipes): a shared CPU tensor
(`genesis.ops.shared_storage`) as where its memory is, so the receiver attaches to it;
any other tensor as its values. A tensor computed by a recorded op that requires grad is
refused, as PyTorch refuses it."""
from __future__ import annotations

from multiprocessing.reduction import ForkingPickler

from ..device import cpu
from ..nn.parameter import Buffer, Parameter
from ..ops import shared_storage
from ..tensor import Tensor, wrap_array

__all__ = ["register_tensor_pickling", "reduce_tensor"]


def reduce_tensor(tensor: Tensor):
    """The pickling recipe of `tensor` for another process (see the module's docstring)."""
    if tensor.grad_fn is not None and tensor._requires_grad:
        raise RuntimeError("Cowardly refusing to serialize non-leaf tensor which requires_grad, "
                           "since autograd does not support crossing process boundaries.  If "
                           "you just want to transfer the data, call detach() on the tensor "
                           "before serializing (e.g., putting it on the queue).")
    location = shared_storage.shared_location(tensor) if tensor._device.type == "cpu" else None
    if location is None:
        return tensor.__reduce__()
    return _rebuild_shared, (type(tensor), location, tensor._requires_grad)


def _rebuild_shared(cls, location: tuple, requires_grad: bool) -> Tensor:
    plain = wrap_array(shared_storage.attach(*location), cpu, requires_grad)
    if issubclass(cls, Parameter):
        return Parameter(plain, requires_grad)
    if issubclass(cls, Buffer):
        return Buffer(plain)
    return plain


def register_tensor_pickling() -> None:
    """Teach multiprocessing's pickler `reduce_tensor` for genesis's tensor classes."""
    for cls in (Tensor, Parameter, Buffer):
        ForkingPickler.register(cls, reduce_tensor)
