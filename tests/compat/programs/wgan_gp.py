"""WGAN-GP on 6x6 single-channel images: a conv critic with LayerNorm (no BatchNorm under
a gradient penalty), the penalty on random interpolates through
torch.autograd.grad(create_graph=True, grad_outputs=ones_like), five critic steps per
generator step, the critic frozen with requires_grad = False during the generator's step,
Adam with betas (0.0, 0.9). Interpolation weights come from NumPy."""
import os

import numpy as np
import torch
import torch.nn as nn
from torch import autograd

torch.manual_seed(0)
rng = np.random.default_rng(0)
LATENT, LAMBDA_GP, N_CRITIC = 6, 10.0, 5


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Sequential(nn.Linear(LATENT, 8 * 3 * 3), nn.ReLU())
        self.deconv = nn.Sequential(nn.Upsample(scale_factor=2), nn.Conv2d(8, 1, 3, padding=1), nn.Tanh())

    def forward(self, z):
        return self.deconv(self.fc(z).view(-1, 8, 3, 3))


class Critic(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv2d(1, 8, 3, stride=2, padding=1), nn.LayerNorm([8, 3, 3]), nn.LeakyReLU(0.2),
            nn.Conv2d(8, 16, 3, stride=1, padding=1), nn.ELU(),
            nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(16, 1))

    def forward(self, x):
        return self.net(x)


def gradient_penalty(critic, real, fake):
    alpha = torch.from_numpy(rng.uniform(size=(real.size(0), 1, 1, 1)).astype(np.float32))
    interpolates = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
    scores = critic(interpolates)
    gradients = autograd.grad(outputs=scores, inputs=interpolates, grad_outputs=torch.ones_like(scores),
                              create_graph=True, retain_graph=True, only_inputs=True)[0]
    gradients = gradients.view(gradients.size(0), -1)
    return ((gradients.norm(2, dim=1) - 1) ** 2).mean()


G, D = Generator(), Critic()
models = {"g": G, "d": D}
if os.environ.get("SAVE_WEIGHTS"):
    np.savez(os.environ["SAVE_WEIGHTS"], **{f"{name}.{k}": v.detach().numpy()
                                            for name, m in models.items() for k, v in m.state_dict().items()})
if os.environ.get("LOAD_WEIGHTS"):
    saved = np.load(os.environ["LOAD_WEIGHTS"])
    for name, m in models.items():
        m.load_state_dict({k[len(name) + 1:]: torch.from_numpy(v) for k, v in saved.items()
                           if k.startswith(name + ".")})
optimizer_G = torch.optim.Adam(G.parameters(), lr=1e-3, betas=(0.0, 0.9))
optimizer_D = torch.optim.Adam(D.parameters(), lr=1e-3, betas=(0.0, 0.9))

yy, xx = np.mgrid[0:6, 0:6]
for step in range(10):
    bars = rng.integers(0, 6, size=16)
    real = torch.from_numpy(((xx[None] == bars[:, None, None]) * 2.0 - 1).astype(np.float32)).unsqueeze(1)
    z = torch.from_numpy(rng.standard_normal((16, LATENT)).astype(np.float32))

    for p in D.parameters():
        p.requires_grad = True
    optimizer_D.zero_grad()
    fake = G(z).detach()
    gp = gradient_penalty(D, real.data, fake.data)
    d_loss = -torch.mean(D(real)) + torch.mean(D(fake)) + LAMBDA_GP * gp
    d_loss.backward()
    optimizer_D.step()

    g_loss = torch.tensor(0.0)
    if step % N_CRITIC == N_CRITIC - 1:
        for p in D.parameters():
            p.requires_grad = False
        optimizer_G.zero_grad()
        g_loss = -torch.mean(D(G(z)))
        g_loss.backward()
        optimizer_G.step()
    print(f"loss {step} {d_loss.item():.6f} {gp.item():.6f} {g_loss.item():.6f}")
