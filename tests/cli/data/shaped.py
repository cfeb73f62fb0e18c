"""A Function whose inputs must have matching inner sizes: the default 3x4 inputs don't fit."""
import genesis


class MatMul(genesis.Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a._data @ b._data

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        return grad @ b.transpose(0, 1), a.transpose(0, 1) @ grad
