"""Functions with GPU code, as GPU scripts write them: each forward makes a tensor on "cuda"
itself, so re-run on the host it mixes devices. `Square` is right, `WrongSquare`'s backward
is wrong, `Given` brings its own (CPU) inputs. Used by the per-node checks' tests and, as a
file, by `genesis gradcheck --device cuda`'s."""
import genesis


class Square(genesis.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x * genesis.ones(x.shape, device="cuda", dtype=x.dtype)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * 2 * x


class WrongSquare(Square):
    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * 3 * x


class Given(Square):
    @staticmethod
    def gradcheck_inputs():
        return (genesis.randn(2, 3, dtype=genesis.float64, requires_grad=True),)
