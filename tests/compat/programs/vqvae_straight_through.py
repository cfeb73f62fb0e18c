"""A VQ-VAE on 8x8 images: a conv encoder, a codebook (nn.Embedding) looked up by the
nearest entry (distances expanded by hand, argmin, F.embedding), the straight-through
estimator z + (z_q - z).detach(), codebook and commitment losses with .detach() on
opposite sides, a ConvTranspose2d decoder, perplexity of the code usage, and dead codes
re-initialised from encoder outputs under no_grad every few steps."""
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
rng = np.random.default_rng(0)
CODES, DIM, BETA = 16, 4, 0.25


class VectorQuantizer(nn.Module):
    def __init__(self):
        super().__init__()
        self.codebook = nn.Embedding(CODES, DIM)
        nn.init.normal_(self.codebook.weight)

    def forward(self, z):
        z = z.permute(0, 2, 3, 1).contiguous()          # (B, H, W, C)
        flat = z.view(-1, DIM)
        distances = (flat.pow(2).sum(1, keepdim=True) - 2 * flat @ self.codebook.weight.t()
                     + self.codebook.weight.pow(2).sum(1))
        indices = torch.argmin(distances, dim=1)
        z_q = F.embedding(indices, self.codebook.weight).view(z.shape)
        codebook_loss = F.mse_loss(z_q, z.detach())
        commitment_loss = F.mse_loss(z, z_q.detach())
        z_q = z + (z_q - z).detach()                     # straight-through
        usage = torch.bincount(indices, minlength=CODES).float() / indices.numel()
        perplexity = torch.exp(-(usage * torch.log(usage + 1e-10)).sum())
        return z_q.permute(0, 3, 1, 2), codebook_loss + BETA * commitment_loss, perplexity, indices, flat


class VQVAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Conv2d(1, 16, 4, 2, 1), nn.ReLU(), nn.Conv2d(16, DIM, 3, 1, 1))
        self.quantizer = VectorQuantizer()
        self.decoder = nn.Sequential(nn.Conv2d(DIM, 16, 3, 1, 1), nn.SiLU(), nn.ConvTranspose2d(16, 1, 4, 2, 1))

    def forward(self, x):
        z_q, vq_loss, perplexity, indices, flat = self.quantizer(self.encoder(x))
        return self.decoder(z_q), vq_loss, perplexity, indices, flat


model = VQVAE()
if os.environ.get("SAVE_WEIGHTS"):
    np.savez(os.environ["SAVE_WEIGHTS"], **{k: v.detach().numpy() for k, v in model.state_dict().items()})
if os.environ.get("LOAD_WEIGHTS"):
    model.load_state_dict({k: torch.from_numpy(v) for k, v in np.load(os.environ["LOAD_WEIGHTS"]).items()})
optimizer = torch.optim.Adam(model.parameters(), lr=2e-3, amsgrad=True)

yy, xx = np.mgrid[0:8, 0:8]
for step in range(10):
    cx, cy = rng.uniform(2, 6, size=(2, 16, 1, 1))
    images = np.exp(-((xx - cx) ** 2 + (yy - cy) ** 2) / 4).astype(np.float32)[:, None]
    x = torch.from_numpy(images)
    recon, vq_loss, perplexity, indices, flat = model(x)
    recon_loss = F.mse_loss(recon, x)
    loss = recon_loss + vq_loss
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if step % 4 == 3:
        with torch.no_grad():
            counts = torch.bincount(indices, minlength=CODES)
            dead = (counts == 0).nonzero(as_tuple=True)[0]
            donors = torch.from_numpy(rng.integers(0, flat.size(0), size=len(dead)))
            model.quantizer.codebook.weight[dead] = flat[donors].detach()
    print(f"loss {step} {loss.item():.6f} {recon_loss.item():.6f} {perplexity.item():.4f}")
