"""A point-cloud autoencoder trained with an entropic optimal-transport loss: torch.cdist
cost matrices, log-domain Sinkhorn iterations with torch.logsumexp, the transport plan's
cost, a Chamfer term from cdist().min(), hierarchical resampling with torch.searchsorted on
a detached CDF, Hessian-vector products from torch.autograd.functional.hvp for a curvature
log, and RAdam(decoupled_weight_decay=True)."""
import math, os
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
rng = np.random.default_rng(25)
N = 24


def make_batch(n):
    theta = rng.uniform(0, 2 * np.pi, size=(n, N))
    r = rng.uniform(0.5, 1.5, size=(n, 1))
    pts = np.stack([r * np.cos(theta), r * np.sin(theta)], -1) + 0.05 * rng.normal(size=(n, N, 2))
    return torch.tensor(pts, dtype=torch.float32)


def sinkhorn(x, y, eps=0.1, iters=20, exact_cost=False):
    C = ((x[:, :, None] - y[:, None]) ** 2).sum(-1) if exact_cost else torch.cdist(x, y) ** 2
    n, m = x.shape[1], y.shape[1]
    log_a = torch.full((x.shape[0], n), -math.log(n))
    log_b = torch.full((x.shape[0], m), -math.log(m))
    f = torch.zeros_like(log_a)
    g = torch.zeros_like(log_b)
    for _ in range(iters):
        f = -eps * torch.logsumexp((g[:, None, :] - C) / eps + log_b[:, None, :], dim=2)
        g = -eps * torch.logsumexp((f[:, :, None] - C) / eps + log_a[:, :, None], dim=1)
    plan = torch.exp((f[:, :, None] + g[:, None, :] - C) / eps + log_a[:, :, None] + log_b[:, None, :])
    return (plan * C).sum((1, 2)).mean()


class AE(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(2, 32), nn.Softplus(), nn.Linear(32, 16))
        self.dec = nn.Sequential(nn.Linear(16, 64), nn.Softplus(), nn.Linear(64, N * 2))

    def forward(self, pts):
        z = self.enc(pts).max(1).values
        return self.dec(z).view(-1, N, 2)


def resample(weights, bins, k):
    pdf = weights / weights.sum(-1, keepdim=True)
    cdf = torch.cat([torch.zeros_like(pdf[..., :1]), torch.cumsum(pdf, -1)], -1)
    u = torch.linspace(0.0, 1.0, k).expand(cdf.shape[0], k).contiguous()
    inds = torch.searchsorted(cdf.detach(), u, right=True)
    below = torch.clamp(inds - 1, 0, cdf.shape[-1] - 1)
    above = torch.clamp(inds, 0, cdf.shape[-1] - 1)
    cdf_g = torch.stack([cdf.gather(1, below), cdf.gather(1, above)], -1)
    bins_g = torch.stack([bins.gather(1, below), bins.gather(1, above)], -1)
    denom = torch.where(cdf_g[..., 1] - cdf_g[..., 0] < 1e-5, torch.ones_like(u), cdf_g[..., 1] - cdf_g[..., 0])
    t = (u - cdf_g[..., 0]) / denom
    return bins_g[..., 0] + t * (bins_g[..., 1] - bins_g[..., 0])


model = AE()
if os.environ.get("SAVE_WEIGHTS"):
    np.savez(os.environ["SAVE_WEIGHTS"], **{k: v.detach().numpy() for k, v in model.state_dict().items()})
if os.environ.get("LOAD_WEIGHTS"):
    model.load_state_dict({k: torch.from_numpy(v) for k, v in np.load(os.environ["LOAD_WEIGHTS"]).items()})
optimizer = torch.optim.RAdam(model.parameters(), lr=3e-3, weight_decay=1e-2, decoupled_weight_decay=True)
for step in range(10):
    pts = make_batch(8)
    recon = model(pts)
    ot = sinkhorn(recon, pts)
    d = torch.cdist(recon, pts)
    chamfer = d.min(2).values.mean() + d.min(1).values.mean()
    radii = recon.norm(dim=-1)
    bins = torch.linspace(0, 2, 9).expand(8, 9).contiguous()
    hist = torch.stack([((radii > lo) & (radii <= lo + 0.25)).float().sum(1) for lo in np.arange(0, 2, 0.25)], 1) + 1.0
    samples = resample(hist, bins, 12)
    loss = ot + 0.1 * chamfer + 0.01 * samples.var()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    x0 = pts[0].detach()
    _, hv = torch.autograd.functional.hvp(lambda q: sinkhorn(q.unsqueeze(0), x0.unsqueeze(0), iters=5, exact_cost=True), recon[0].detach(), torch.ones(N, 2))
    print(f"loss {step} {loss.item():.6f} {ot.item():.6f} {hv.abs().sum().item():.5f}")
