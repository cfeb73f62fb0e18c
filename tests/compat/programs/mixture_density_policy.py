"""torch.distributions beyond the basics: a MixtureSameFamily of Independent Normals as a
policy/density head, a TransformedDistribution(Normal, [TanhTransform(cache_size=1),
AffineTransform]) with log_prob of given actions, a Dirichlet over mixture weights with
kl_divergence to a fixed prior, Beta log_prob and entropy, validate_args=False, and rsample
replaced by explicit loc + scale * eps from NumPy; Adamax with CyclicLR (cycle_momentum=False)."""
import os
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import (AffineTransform, Beta, Categorical, Dirichlet, Independent, MixtureSameFamily,
                                 Normal, TanhTransform, TransformedDistribution, kl_divergence)

torch.manual_seed(0)
rng = np.random.default_rng(26)
K = 3


def make_batch(n):
    x = rng.uniform(-1, 1, size=(n, 2)).astype(np.float32)
    branch = rng.integers(0, 2, size=n)
    y = np.stack([np.sin(3 * x[:, 0]) * np.where(branch, 1, -1), x[:, 1] ** 2], 1) * 0.8
    return torch.from_numpy(x), torch.from_numpy(np.clip(y + 0.05 * rng.normal(size=y.shape), -0.95, 0.95).astype(np.float32))


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(2, 32), nn.SiLU(), nn.Linear(32, 32), nn.SiLU())
        self.logits = nn.Linear(32, K)
        self.mu = nn.Linear(32, K * 2)
        self.log_sigma = nn.Linear(32, K * 2)
        self.conc = nn.Linear(32, K)
        self.beta = nn.Linear(32, 2)

    def forward(self, x):
        h = self.body(x)
        mix = Categorical(logits=self.logits(h))
        comp = Independent(Normal(self.mu(h).view(-1, K, 2), self.log_sigma(h).view(-1, K, 2).clamp(-5, 2).exp()), 1)
        gmm = MixtureSameFamily(mix, comp)
        squashed = TransformedDistribution(Normal(self.mu(h)[:, :2], F.softplus(self.log_sigma(h)[:, :2]) + 1e-3),
                                           [TanhTransform(cache_size=1), AffineTransform(0.0, 1.0)], validate_args=False)
        dirichlet = Dirichlet(F.softplus(self.conc(h)) + 0.1)
        ab = F.softplus(self.beta(h)) + 1.0
        return gmm, squashed, dirichlet, Beta(ab[:, 0], ab[:, 1]), h


model = Head()
if os.environ.get("SAVE_WEIGHTS"):
    np.savez(os.environ["SAVE_WEIGHTS"], **{k: v.detach().numpy() for k, v in model.state_dict().items()})
if os.environ.get("LOAD_WEIGHTS"):
    model.load_state_dict({k: torch.from_numpy(v) for k, v in np.load(os.environ["LOAD_WEIGHTS"]).items()})
optimizer = torch.optim.Adamax(model.parameters(), lr=5e-3)
scheduler = torch.optim.lr_scheduler.CyclicLR(optimizer, base_lr=1e-3, max_lr=5e-3, step_size_up=3, cycle_momentum=False)
prior = Dirichlet(torch.ones(K))
for step in range(10):
    x, y = make_batch(64)
    gmm, squashed, dirichlet, beta, h = model(x)
    nll = -gmm.log_prob(y).mean()
    nll_tanh = -squashed.log_prob(y).sum(-1).mean()
    kl = kl_divergence(dirichlet, prior).mean()
    frac = ((y[:, 1] + 1) / 2).clamp(0.01, 0.99)
    beta_nll = -beta.log_prob(frac).mean() - 0.01 * beta.entropy().mean()
    eps = torch.from_numpy(rng.normal(size=(64, 2)).astype(np.float32))
    sample = squashed.base_dist.loc + squashed.base_dist.scale * eps
    reparam = torch.tanh(sample).pow(2).mean()
    loss = nll + 0.5 * nll_tanh + 0.1 * kl + 0.1 * beta_nll + 0.01 * reparam
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    scheduler.step()
    print(f"loss {step} {loss.item():.6f} {nll.item():.6f} {kl.item():.6f} {gmm.mean.abs().mean().item():.6f}")
