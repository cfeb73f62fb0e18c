"""Two custom sigmoids for `genesis gradcheck`: one right, one with a wrong backward."""
import genesis


class GoodSigmoid(genesis.Function):
    @staticmethod
    def forward(ctx, x):
        xp = x._device.xp
        s = 1 / (1 + xp.exp(-x._data))
        out = genesis.autograd.function.wrap_array(s, x._device)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (s,) = ctx.saved_tensors
        return grad * s * (1 - s)


class BadSigmoid(GoodSigmoid):
    """GoodSigmoid's forward with a wrong backward."""

    @staticmethod
    def backward(ctx, grad):
        (s,) = ctx.saved_tensors
        return grad * s * (1 + s)  # wrong: the derivative is s * (1 - s)
