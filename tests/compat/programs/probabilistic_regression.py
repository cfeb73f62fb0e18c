"""Probabilistic regression with torch.distributions: a network predicting the parameters
of a LogNormal likelihood for positive targets, a zero-inflation weight whose variational
posterior is a Beta with kl_divergence to a Beta prior, a Gamma prior on the noise
precision scored with log_prob, a Dirichlet over three mixture components with its
entropy as a bonus, Laplace and Exponential priors on the weights (a Bayesian-lasso-style
penalty), and Independent over the output dimensions."""
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import (Beta, Dirichlet, Exponential, Gamma, Independent, Laplace, LogNormal,
                                 kl_divergence)

torch.manual_seed(0)
rng = np.random.default_rng(0)
x_all = rng.uniform(-2, 2, size=(256, 3)).astype(np.float32)
y_all = np.exp(0.5 * x_all[:, :2] + 0.2 * rng.standard_normal((256, 2))).astype(np.float32)
zero = rng.uniform(size=256) < 0.2


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(3, 32), nn.Softplus(), nn.Linear(32, 4))
        self.beta_params = nn.Parameter(torch.zeros(2))
        self.log_precision = nn.Parameter(torch.zeros(1))
        self.mixture_logits = nn.Parameter(torch.zeros(3))

    def forward(self, x):
        loc, raw_scale = self.body(x).chunk(2, dim=-1)
        return Independent(LogNormal(loc, F.softplus(raw_scale) + 1e-3), 1)


model = Model()
if os.environ.get("SAVE_WEIGHTS"):
    np.savez(os.environ["SAVE_WEIGHTS"], **{k: v.detach().numpy() for k, v in model.state_dict().items()})
if os.environ.get("LOAD_WEIGHTS"):
    model.load_state_dict({k: torch.from_numpy(v) for k, v in np.load(os.environ["LOAD_WEIGHTS"]).items()})
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
prior = Beta(torch.tensor(2.0), torch.tensor(5.0))
weight_prior = Laplace(torch.tensor(0.0), torch.tensor(0.5))
scale_prior = Exponential(torch.tensor(2.0))

for step in range(10):
    idx = rng.integers(0, 256, size=32)
    x, y, z = torch.from_numpy(x_all[idx]), torch.from_numpy(y_all[idx]), torch.from_numpy(zero[idx])
    likelihood = model(x).log_prob(y)
    posterior = Beta(F.softplus(model.beta_params[0]) + 1, F.softplus(model.beta_params[1]) + 1)
    p_zero = posterior.mean
    log_lik = torch.where(z, torch.log(p_zero).expand_as(likelihood), torch.log1p(-p_zero) + likelihood)
    kl = kl_divergence(posterior, prior)
    precision = model.log_precision.exp()
    mixture = Dirichlet(F.softplus(model.mixture_logits) + 0.5)
    weights = model.body[0].weight
    penalty = -weight_prior.log_prob(weights).mean() - scale_prior.log_prob(F.softplus(model.body[2].bias)).mean()
    loss = (-log_lik.mean() + kl / 256 - Gamma(2.0, 2.0).log_prob(precision).sum() / 256
            - 0.01 * mixture.entropy() + 0.01 * penalty)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(f"loss {step} {loss.item():.6f} {kl.item():.6f} {p_zero.item():.6f}")
