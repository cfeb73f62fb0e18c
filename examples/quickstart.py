"""A first look at genesis: build a graph, inspect it, backpropagate, write a Function."""
import genesis


class SmoothClamp(genesis.Function):
    """tanh-shaped clamp with a hand-written backward."""

    @staticmethod
    def forward(ctx, x):
        out = x.tanh()
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return grad * (1 - out * out)


def main() -> None:
    genesis.manual_seed(0)
    x = genesis.randn(3, requires_grad=True)
    w = genesis.randn(3, 3, requires_grad=True)
    y = SmoothClamp.apply(w @ x * 2 + 1)
    loss = (y * y).mean()
    print("loss      :", loss)
    print("grad_fn   :", loss.grad_fn, "->", loss.grad_fn.next_functions)
    loss.backward()
    print("x.grad    :", x.grad)
    print("w.grad    :", w.grad)


if __name__ == "__main__":
    main()
