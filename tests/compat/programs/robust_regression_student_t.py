"""Robust regression with a Student-t likelihood: a network predicts loc and log scale, the
degrees of freedom are learned (softplus + 1) as a free parameter, a HalfNormal prior on the
scale, outliers in the data, StudentT.log_prob / entropy / mean, Adam + StepLR, and a
checkpoint round trip of model and df."""
import io, os
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import HalfNormal, StudentT

torch.manual_seed(0)
rng = np.random.default_rng(32)


def make_batch(n):
    x = rng.uniform(-2, 2, size=(n, 1)).astype(np.float32)
    y = np.sin(2 * x) + 0.1 * rng.normal(size=x.shape)
    outliers = rng.random(n) < 0.1
    y[outliers] += rng.normal(scale=5.0, size=(outliers.sum(), 1))
    return torch.from_numpy(x), torch.from_numpy(y.astype(np.float32))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(1, 32), nn.Tanh(), nn.Linear(32, 32), nn.Tanh(), nn.Linear(32, 2))
        self.raw_df = nn.Parameter(torch.tensor(2.0))

    def forward(self, x):
        loc, log_scale = self.body(x).chunk(2, dim=-1)
        return StudentT(F.softplus(self.raw_df) + 1.0, loc, log_scale.clamp(-5, 3).exp())


model = Net()
if os.environ.get("SAVE_WEIGHTS"):
    np.savez(os.environ["SAVE_WEIGHTS"], **{k: v.detach().numpy() for k, v in model.state_dict().items()})
if os.environ.get("LOAD_WEIGHTS"):
    model.load_state_dict({k: torch.from_numpy(v) for k, v in np.load(os.environ["LOAD_WEIGHTS"]).items()})
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 5, 0.5)
prior = HalfNormal(torch.tensor(1.0))
for step in range(10):
    x, y = make_batch(64)
    dist = model(x)
    loss = -dist.log_prob(y).mean() - 0.01 * prior.log_prob(dist.scale).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    scheduler.step()
    if step == 5:
        buffer = io.BytesIO()
        torch.save(model.state_dict(), buffer)
        buffer.seek(0)
        model.load_state_dict(torch.load(buffer))
    with torch.no_grad():
        d = model(torch.linspace(-1, 1, 5).unsqueeze(1))
    print(f"loss {step} {loss.item():.6f} {d.df[0].item():.5f} {d.entropy().mean().item():.5f} {d.mean.sum().item():.5f}")
