"""Parametrizations: a critic with torch.nn.utils.parametrizations.spectral_norm (power
iteration buffers u/v, eval mode reuses them), a generator whose square layer is kept
orthogonal with parametrizations.orthogonal, and a custom parametrization (a symmetric
matrix, and a positive scale via exp with right_inverse) registered with
parametrize.register_parametrization; parametrize.cached() around a second forward; hinge
GAN losses with Adam(betas=(0.0, 0.9)) and two optimizers."""
import os
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.nn.utils.parametrize as parametrize
from torch.nn.utils.parametrizations import orthogonal, spectral_norm

torch.manual_seed(0)
rng = np.random.default_rng(20)


class Symmetric(nn.Module):
    def forward(self, X):
        return X.triu() + X.triu(1).transpose(-1, -2)


class PositiveScale(nn.Module):
    def forward(self, X):
        return X.exp()

    def right_inverse(self, Y):
        return Y.log()


generator = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 16), nn.Tanh(), nn.Linear(16, 2))
orthogonal(generator[2])
critic = nn.Sequential(spectral_norm(nn.Linear(2, 32)), nn.LeakyReLU(0.2), spectral_norm(nn.Linear(32, 32)), nn.LeakyReLU(0.2), nn.Linear(32, 1))
mixer = nn.Linear(2, 2, bias=False)
parametrize.register_parametrization(mixer, "weight", Symmetric())
scale = nn.Module()
scale.register_parameter("value", nn.Parameter(torch.ones(1)))
parametrize.register_parametrization(scale, "value", PositiveScale())
models = nn.ModuleDict({"g": generator, "c": critic, "mixer": mixer, "scale": scale})
if os.environ.get("SAVE_WEIGHTS"):
    np.savez(os.environ["SAVE_WEIGHTS"], **{k: v.detach().numpy() for k, v in models.state_dict().items()})
if os.environ.get("LOAD_WEIGHTS"):
    models.load_state_dict({k: torch.from_numpy(v) for k, v in np.load(os.environ["LOAD_WEIGHTS"]).items()})
opt_g = torch.optim.Adam(list(generator.parameters()) + list(mixer.parameters()) + list(scale.parameters()), lr=2e-3, betas=(0.0, 0.9))
opt_c = torch.optim.Adam(critic.parameters(), lr=2e-3, betas=(0.0, 0.9))


def real_batch(n):
    angle = rng.uniform(0, 2 * np.pi, size=n)
    return torch.from_numpy(np.stack([np.cos(angle), np.sin(angle)], 1).astype(np.float32) * 2)


def generate(z):
    return mixer(generator(z)) * scale.value


for step in range(10):
    z = torch.from_numpy(rng.normal(size=(32, 4)).astype(np.float32))
    fake = generate(z)
    d_loss = F.relu(1.0 - critic(real_batch(32))).mean() + F.relu(1.0 + critic(fake.detach())).mean()
    opt_c.zero_grad()
    d_loss.backward()
    opt_c.step()
    z = torch.from_numpy(rng.normal(size=(32, 4)).astype(np.float32))
    with parametrize.cached():
        fake = generate(z)
        g_loss = -critic(fake).mean() + 0.01 * generate(z).pow(2).mean()
    opt_g.zero_grad()
    g_loss.backward()
    opt_g.step()
    with torch.no_grad():
        w = generator[2].weight
        ortho = (w @ w.T - torch.eye(16)).abs().max()
        critic.eval()
        sigma = torch.linalg.matrix_norm(critic[0].weight, ord=2)
        critic.train()
    print(f"loss {step} {d_loss.item():.6f} {g_loss.item():.6f} {ortho.item():.2e} {sigma.item():.5f} {mixer.weight[0, 1].item():.6f}")
