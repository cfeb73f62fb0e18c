"""A custom autograd Function (a scaled softplus with its own backward), gradcheck'd in
float64, trained with an optimizer step that takes a closure."""
import os

import numpy as np
import torch


class ScaledSoftplus(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale):
        ctx.save_for_backward(x)
        ctx.scale = scale
        return scale * torch.log1p(torch.exp(x))

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * ctx.scale * torch.sigmoid(x), None


x64 = torch.randn(5, dtype=torch.double, requires_grad=True)
assert torch.autograd.gradcheck(lambda t: ScaledSoftplus.apply(t, 2.0), (x64,))

rng = np.random.default_rng(4)
inputs = torch.from_numpy(rng.standard_normal((24, 3)).astype(np.float32))
targets = torch.from_numpy(rng.standard_normal((24, 1)).astype(np.float32))
model = torch.nn.Linear(3, 1)
if os.environ.get("SAVE_WEIGHTS"):
    np.savez(os.environ["SAVE_WEIGHTS"], **{k: v.detach().numpy() for k, v in model.state_dict().items()})
if os.environ.get("LOAD_WEIGHTS"):
    model.load_state_dict({k: torch.from_numpy(v) for k, v in np.load(os.environ["LOAD_WEIGHTS"]).items()})
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)


def closure():
    optimizer.zero_grad()
    loss = torch.nn.functional.mse_loss(ScaledSoftplus.apply(model(inputs), 0.5), targets)
    loss.backward()
    return loss


for step in range(5):
    loss = optimizer.step(closure)
    print(f"loss {step} {loss.item():.6f}")
