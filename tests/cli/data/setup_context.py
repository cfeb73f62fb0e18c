"""A Function in PyTorch's setup_context style (forward without ctx), and the plain product
it computes, for `genesis gradcheck` and `genesis compare`."""
import genesis


class Mul(genesis.autograd.Function):
    @staticmethod
    def forward(a, b):
        return a * b

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(*inputs)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        return grad * b, grad * a


def product(a, b):
    return a * b
