"""A Function that brings its own sample inputs (a tensor and a constant)."""
import genesis


class ScaledSquare(genesis.Function):
    """factor * x**2, with a non-tensor argument."""

    @staticmethod
    def forward(ctx, x, factor):
        ctx.save_for_backward(x)
        ctx.factor = factor
        return factor * x._data ** 2

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * 2 * ctx.factor * x, None

    @staticmethod
    def gradcheck_inputs():
        x = genesis.tensor([[0.5, -1.0, 2.0]], dtype=genesis.float64, requires_grad=True)
        return x, 3.0
