"""Custom autograd Functions the way people write them: a NumPy-backed forward
(detach().numpy(), NumPy maths, torch.from_numpy back) with a hand-written backward; a top-k
Function with indices marked non-differentiable; ctx.set_materialize_grads(False) with None
gradients handled; the new-style forward + setup_context; a Function that computes in
float32 whatever its input (GELU of x.float(), cast back); a gradient-clipping identity
(backward grad.clamp(-b, b)); stochastic depth decided in NumPy; parameters zeroed by hand
(p.grad = None) instead of optimizer.zero_grad()."""
import os
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
rng = np.random.default_rng(33)


class NumpySoftplus(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        a = x.detach().cpu().numpy()
        out = np.logaddexp(0.0, a).astype(a.dtype)
        ctx.save_for_backward(x)
        return torch.from_numpy(out)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * torch.sigmoid(x)


class TopK(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, k):
        values, indices = x.topk(k, dim=-1)
        ctx.mark_non_differentiable(indices)
        ctx.save_for_backward(indices)
        ctx.shape = x.shape
        return values, indices

    @staticmethod
    def backward(ctx, grad_values, grad_indices):
        (indices,) = ctx.saved_tensors
        grad = grad_values.new_zeros(ctx.shape)
        return grad.scatter(-1, indices, grad_values), None


class ScaleShift(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale, shift):
        ctx.set_materialize_grads(False)
        ctx.save_for_backward(x, scale)
        return x * scale + shift, x * scale

    @staticmethod
    def backward(ctx, grad_out, grad_scaled):
        x, scale = ctx.saved_tensors
        total = None
        for g in (grad_out, grad_scaled):
            if g is not None:
                total = g if total is None else total + g
        if total is None:
            return None, None, None
        grad_x = total * scale if ctx.needs_input_grad[0] else None
        grad_scale = (total * x).sum(0) if ctx.needs_input_grad[1] else None
        grad_shift = grad_out.sum(0) if grad_out is not None and ctx.needs_input_grad[2] else None
        return grad_x, grad_scale, grad_shift


class ClipGrad(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, bound):
        ctx.bound = bound
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad):
        return grad.clamp(-ctx.bound, ctx.bound), None


class Cube(torch.autograd.Function):
    @staticmethod
    def forward(x):
        return x ** 3

    @staticmethod
    def setup_context(ctx, inputs, output):
        (x,) = inputs
        ctx.save_for_backward(x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * 3 * x ** 2


class Float32Gelu(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return F.gelu(x.float()).to(x.dtype)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        xf = x.float()
        cdf = 0.5 * (1 + torch.erf(xf / 2 ** 0.5))
        pdf = torch.exp(-0.5 * xf ** 2) / (2 * torch.pi) ** 0.5
        return (grad.float() * (cdf + xf * pdf)).to(grad.dtype)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(8, 16)
        self.blocks = nn.ModuleList([nn.Linear(16, 16) for _ in range(3)])
        self.scale = nn.Parameter(torch.ones(16))
        self.shift = nn.Parameter(torch.zeros(16))
        self.out = nn.Linear(4, 2)

    def forward(self, x, keep):
        h = NumpySoftplus.apply(self.inp(x))
        for block, kept in zip(self.blocks, keep):
            if kept:
                h = h + Float32Gelu.apply(block(h)) / 0.8
        h, _unused = ScaleShift.apply(ClipGrad.apply(h, 0.002), self.scale, self.shift)
        values, indices = TopK.apply(Cube.apply(h * 0.5), 4)
        return self.out(values), indices


def make_batch(n):
    x = rng.normal(size=(n, 8)).astype(np.float32)
    return torch.from_numpy(x), torch.from_numpy((x[:, 0] * x[:, 1] > 0).astype(np.int64))


model = Net()
if os.environ.get("SAVE_WEIGHTS"):
    np.savez(os.environ["SAVE_WEIGHTS"], **{k: v.detach().numpy() for k, v in model.state_dict().items()})
if os.environ.get("LOAD_WEIGHTS"):
    model.load_state_dict({k: torch.from_numpy(v) for k, v in np.load(os.environ["LOAD_WEIGHTS"]).items()})
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
for step in range(10):
    x, y = make_batch(32)
    keep = rng.random(3) < 0.8
    keep[step % 3] = True
    logits, indices = model(x, keep)
    loss = F.cross_entropy(logits, y)
    for p in model.parameters():
        p.grad = None
    loss.backward()
    optimizer.step()
    print(f"loss {step} {loss.item():.6f} {indices.float().mean().item():.4f}")
