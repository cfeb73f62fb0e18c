"""`torch.autograd._functions`: the legacy Python Functions PyTorch still ships there; genesis
has `Resize`, which PyTorch's autograd tests use as a ready-made custom Function.

>>> import genesis
>>> x = genesis.ones(2, 3, requires_grad=True)
>>> y = Resize.apply(x, (3, 2))
>>> y.shape, y.grad_fn
(genesis.Size([3, 2]), <ResizeBackward>)
"""
from __future__ import annotations

from ..autograd.function import Function

__all__ = ["Resize"]


class Resize(Function):
    """`x` read with another shape of as many elements (a copy); the gradient is read back
    with the input's shape."""

    @staticmethod
    def forward(ctx, tensor, sizes):
        ctx.input_sizes = tensor.shape
        if tensor.numel() != _count(sizes):
            raise RuntimeError(f"Resize: the requested shape {tuple(sizes)} has {_count(sizes)} "
                               f"elements, but the tensor (shape {tuple(tensor.shape)}) has "
                               f"{tensor.numel()}")
        return tensor.contiguous().clone().view(*sizes)

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output.contiguous().view(*ctx.input_sizes), None


def _count(sizes) -> int:
    count = 1
    for size in sizes:
        count *= size
    return count
