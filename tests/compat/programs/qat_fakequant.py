"""Quantization-aware training: a custom autograd Function for fake quantisation with a
straight-through estimator that zeroes the gradient outside the clamp range (saved mask),
a learnable-scale LSQ quantiser written with round-and-detach (x + (x.round() - x).detach()),
per-channel weight quantisation with amax under no_grad, running-min/max observers as buffers,
torch.fake_quantize_per_tensor_affine for activations at eval, SGD with momentum, state_dict
round trip."""
import os
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
rng = np.random.default_rng(12)
W_TRUE = rng.normal(size=(10, 3)).astype(np.float32)


def make_batch(n):
    x = rng.normal(size=(n, 10)).astype(np.float32)
    return torch.from_numpy(x), torch.from_numpy((x @ W_TRUE).argmax(1))


class FakeQuantSTE(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale, qmin, qmax):
        q = torch.clamp(torch.round(x / scale), qmin, qmax)
        ctx.save_for_backward((x / scale >= qmin) & (x / scale <= qmax))
        return q * scale

    @staticmethod
    def backward(ctx, grad):
        (inside,) = ctx.saved_tensors
        return grad * inside, None, None, None


def round_ste(x):
    return x + (x.round() - x).detach()


class LSQ(nn.Module):
    def __init__(self, bits=4):
        super().__init__()
        self.qmax = 2 ** (bits - 1) - 1
        self.step = nn.Parameter(torch.tensor(0.1))

    def forward(self, x):
        g = 1.0 / (x.numel() * self.qmax) ** 0.5
        s = self.step * g + (self.step - self.step * g).detach()  # gradient scaling
        return round_ste(torch.clamp(x / s, -self.qmax - 1, self.qmax)) * s


class QLinear(nn.Linear):
    def __init__(self, i, o):
        super().__init__(i, o)
        self.register_buffer("act_min", torch.tensor(0.0))
        self.register_buffer("act_max", torch.tensor(0.0))
        self.act_q = LSQ()

    def forward(self, x):
        if self.training:
            with torch.no_grad():
                self.act_min.copy_(torch.minimum(self.act_min, x.min()))
                self.act_max.copy_(torch.maximum(self.act_max, x.max()))
            x = self.act_q(x)
        else:
            scale = float((self.act_max - self.act_min).clamp(min=1e-8) / 255)
            zp = int(torch.round(-self.act_min / scale).clamp(0, 255))
            x = torch.fake_quantize_per_tensor_affine(x, scale, zp, 0, 255)
        with torch.no_grad():
            wscale = self.weight.abs().amax(dim=1, keepdim=True).clamp(min=1e-8) / 127
        w = FakeQuantSTE.apply(self.weight, wscale, -127, 127)
        return F.linear(x, w, self.bias)


model = nn.Sequential(QLinear(10, 32), nn.ReLU6(), QLinear(32, 3))
if os.environ.get("SAVE_WEIGHTS"):
    np.savez(os.environ["SAVE_WEIGHTS"], **{k: v.detach().numpy() for k, v in model.state_dict().items()})
if os.environ.get("LOAD_WEIGHTS"):
    model.load_state_dict({k: torch.from_numpy(v) for k, v in np.load(os.environ["LOAD_WEIGHTS"]).items()})
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
for step in range(10):
    model.train()
    x, y = make_batch(32)
    loss = F.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    model.eval()
    with torch.no_grad():
        x, y = make_batch(64)
        acc = (model(x).argmax(1) == y).float().mean()
    state = {k: v.clone() for k, v in model.state_dict().items()}
    model.load_state_dict(state)
    print(f"loss {step} {loss.item():.6f} {acc.item():.4f} {model[0].act_q.step.item():.6f}")
