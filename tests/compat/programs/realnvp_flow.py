"""A RealNVP-style normalising flow on 2-D data: affine coupling layers with masks held as
buffers, a learnable invertible 1x1 linear map whose log-determinant comes from
torch.linalg.slogdet, a standard-normal base distribution from torch.distributions with
MultivariateNormal.log_prob, negative log-likelihood trained by AdamW, an ExponentialLR
schedule, and sampling under torch.no_grad through the inverse."""
import os

import numpy as np
import torch
import torch.nn as nn
from torch.distributions import MultivariateNormal

torch.manual_seed(0)
rng = np.random.default_rng(7)
angle = rng.uniform(0, 2 * np.pi, 512)
data = np.stack([np.cos(angle), np.sin(angle)], 1) * 2 + 0.1 * rng.standard_normal((512, 2))
data = torch.from_numpy(data.astype(np.float32))


class Coupling(nn.Module):
    def __init__(self, mask):
        super().__init__()
        self.register_buffer("mask", mask)
        self.net = nn.Sequential(nn.Linear(2, 32), nn.ReLU(), nn.Linear(32, 4))

    def forward(self, x):
        s, t = self.net(x * self.mask).chunk(2, dim=-1)
        s = torch.tanh(s) * (1 - self.mask)
        t = t * (1 - self.mask)
        return x * torch.exp(s) + t, s.sum(-1)

    def inverse(self, y):
        s, t = self.net(y * self.mask).chunk(2, dim=-1)
        s = torch.tanh(s) * (1 - self.mask)
        return (y - t * (1 - self.mask)) * torch.exp(-s)


class Flow(nn.Module):
    def __init__(self):
        super().__init__()
        masks = [torch.tensor([1.0, 0.0]), torch.tensor([0.0, 1.0])] * 2
        self.layers = nn.ModuleList(Coupling(m) for m in masks)
        self.mix = nn.Parameter(torch.eye(2) + 0.1 * torch.randn(2, 2))
        self.base = MultivariateNormal(torch.zeros(2), torch.eye(2))

    def forward(self, x):
        log_det = torch.zeros(x.shape[0])
        for layer in self.layers:
            x, ld = layer(x)
            log_det = log_det + ld
        x = x @ self.mix.T
        log_det = log_det + torch.linalg.slogdet(self.mix)[1]
        return self.base.log_prob(x) + log_det

    @torch.no_grad()
    def sample(self, z):
        x = z @ torch.linalg.inv(self.mix).T
        for layer in reversed(self.layers):
            x = layer.inverse(x)
        return x


flow = Flow()
if os.environ.get("SAVE_WEIGHTS"):
    np.savez(os.environ["SAVE_WEIGHTS"], **{k: v.detach().numpy() for k, v in flow.state_dict().items()})
if os.environ.get("LOAD_WEIGHTS"):
    flow.load_state_dict({k: torch.from_numpy(v) for k, v in np.load(os.environ["LOAD_WEIGHTS"]).items()})
optimizer = torch.optim.AdamW(flow.parameters(), lr=5e-3, weight_decay=1e-4, amsgrad=True)
scheduler = torch.optim.lr_scheduler.ExponentialLR(optimizer, gamma=0.95)
for step in range(16):
    batch = data[32 * step: 32 * step + 32]
    loss = -flow(batch).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    scheduler.step()
    print(f"loss {step} {loss.item():.6f}")
z = torch.from_numpy(rng.standard_normal((4, 2)).astype(np.float32))
print("samples", [round(v, 4) for v in flow.sample(z).flatten().tolist()])
