"""A variational autoencoder: encoder and decoder MLPs, the reparameterisation trick, the KL
term from torch.distributions, binary cross entropy on logits, a DataLoader with two worker
processes, and TensorBoard logging when it is available."""
import os
import tempfile

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Normal, kl_divergence
from torch.utils.data import DataLoader, TensorDataset

try:
    from torch.utils.tensorboard import SummaryWriter
except ImportError:  # tensorboard is optional
    SummaryWriter = None


class VAE(nn.Module):
    def __init__(self, features=16, latent=3):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(features, 32), nn.ReLU())
        self.mu, self.log_var = nn.Linear(32, latent), nn.Linear(32, latent)
        self.decoder = nn.Sequential(nn.Linear(latent, 32), nn.ReLU(), nn.Linear(32, features))

    def forward(self, x, eps):
        h = self.encoder(x)
        mu, log_var = self.mu(h), self.log_var(h)
        std = torch.exp(0.5 * log_var)
        z = mu + std * eps
        return self.decoder(z), Normal(mu, std)


rng = np.random.default_rng(6)
data = torch.from_numpy((rng.random((64, 16)) > 0.5).astype(np.float32))
loader = DataLoader(TensorDataset(data), batch_size=16, shuffle=False, num_workers=2)
model = VAE()
if os.environ.get("SAVE_WEIGHTS"):
    np.savez(os.environ["SAVE_WEIGHTS"], **{k: v.detach().numpy() for k, v in model.state_dict().items()})
if os.environ.get("LOAD_WEIGHTS"):
    model.load_state_dict({k: torch.from_numpy(v) for k, v in np.load(os.environ["LOAD_WEIGHTS"]).items()})
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
prior = Normal(torch.zeros(3), torch.ones(3))
with tempfile.TemporaryDirectory() as logs:
    writer = SummaryWriter(logs) if SummaryWriter is not None else None
    step = 0
    for epoch in range(2):
        for (x,) in loader:
            eps = torch.from_numpy(rng.standard_normal((x.shape[0], 3)).astype(np.float32))
            logits, posterior = model(x, eps)
            reconstruction = F.binary_cross_entropy_with_logits(logits, x, reduction="sum") / x.shape[0]
            kl = kl_divergence(posterior, prior).sum(dim=1).mean()
            loss = reconstruction + kl
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            if writer is not None:
                writer.add_scalar("loss", loss.item(), step)
            print(f"loss {step} {loss.item():.6f}")
            step += 1
    if writer is not None:
        writer.close()
