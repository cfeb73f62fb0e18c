"""A categorical VAE with straight-through Gumbel-softmax (hard=True): Gumbel noise drawn in
NumPy and passed in, the hard one-hot built with scatter_ on a zeros_like(...,
memory_format=torch.legacy_contiguous_format) and y_hard - y_soft.detach() + y_soft (as
F.gumbel_softmax does), KL to a uniform prior, an annealed temperature, Bernoulli
reconstruction with binary_cross_entropy_with_logits(reduction='sum'), and RMSprop."""
import math, os
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
rng = np.random.default_rng(9)
LATENT, K = 4, 5
codes = rng.random((8, 20)) < 0.4


def make_batch(n):
    return torch.from_numpy((codes[rng.integers(0, 8, size=n)] ^ (rng.random((n, 20)) < 0.05)).astype(np.float32))


def gumbel_softmax_st(logits, gumbels, tau):
    y_soft = ((logits + gumbels) / tau).softmax(-1)
    index = y_soft.max(-1, keepdim=True)[1]
    y_hard = torch.zeros_like(logits, memory_format=torch.legacy_contiguous_format).scatter_(-1, index, 1.0)
    return y_hard - y_soft.detach() + y_soft


class CatVAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(20, 64), nn.ELU(), nn.Linear(64, LATENT * K))
        self.dec = nn.Sequential(nn.Linear(LATENT * K, 64), nn.ELU(), nn.Linear(64, 20))

    def forward(self, x, gumbels, tau):
        logits = self.enc(x).view(-1, LATENT, K)
        z = gumbel_softmax_st(logits, gumbels, tau)
        return self.dec(z.flatten(1)), logits


model = CatVAE()
if os.environ.get("SAVE_WEIGHTS"):
    np.savez(os.environ["SAVE_WEIGHTS"], **{k: v.detach().numpy() for k, v in model.state_dict().items()})
if os.environ.get("LOAD_WEIGHTS"):
    model.load_state_dict({k: torch.from_numpy(v) for k, v in np.load(os.environ["LOAD_WEIGHTS"]).items()})
optimizer = torch.optim.RMSprop(model.parameters(), lr=3e-3, alpha=0.9, centered=True)
for step in range(12):
    x = make_batch(32)
    u = rng.random((32, LATENT, K)).astype(np.float32)
    gumbels = -torch.log(-torch.log(torch.from_numpy(u) + 1e-20) + 1e-20)
    tau = max(0.5, math.exp(-0.1 * step))
    recon, logits = model(x, gumbels, tau)
    q = F.softmax(logits, dim=-1)
    kl = (q * (F.log_softmax(logits, dim=-1) + math.log(K))).sum((1, 2)).mean()
    bce = F.binary_cross_entropy_with_logits(recon, x, reduction="sum") / x.shape[0]
    loss = bce + kl
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(f"loss {step} {loss.item():.6f} {kl.item():.6f}")
