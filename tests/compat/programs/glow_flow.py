"""A tiny Glow on 4x4 two-channel images: ActNorm with data-dependent initialisation on the
first batch (an `initialized` buffer flipped under no_grad), an invertible 1x1 convolution
whose weight starts as a random rotation from torch.linalg.qr, log-determinants from
torch.slogdet and from the LU parametrisation (torch.linalg.lu, triu/tril with a fixed sign
vector, as the Glow code writes it), affine coupling with sigmoid(scale + 2), the squeeze
as view/permute, and bits per dimension; a check that the inverse reconstructs the input."""
import math
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
rng = np.random.default_rng(0)


class ActNorm(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.loc = nn.Parameter(torch.zeros(1, channels, 1, 1))
        self.log_scale = nn.Parameter(torch.zeros(1, channels, 1, 1))
        self.register_buffer("initialized", torch.tensor(0, dtype=torch.uint8))

    def forward(self, x):
        if self.initialized.item() == 0:
            with torch.no_grad():
                mean = x.mean(dim=(0, 2, 3), keepdim=True)
                std = x.std(dim=(0, 2, 3), keepdim=True)
                self.loc.data.copy_(-mean)
                self.log_scale.data.copy_(torch.log(1 / (std + 1e-6)))
                self.initialized.fill_(1)
        h, w = x.shape[2:]
        return (x + self.loc) * torch.exp(self.log_scale), h * w * self.log_scale.sum()

    def reverse(self, y):
        return y * torch.exp(-self.log_scale) - self.loc


class InvConv(nn.Module):
    def __init__(self, channels, lu):
        super().__init__()
        q, _ = torch.linalg.qr(torch.from_numpy(rng.standard_normal((channels, channels)).astype(np.float32)))
        self.lu = lu
        if lu:
            P, L, U = torch.linalg.lu(q)
            s = torch.diag(U)
            self.register_buffer("P", P)
            self.register_buffer("sign_s", torch.sign(s))
            self.register_buffer("lower_mask", torch.tril(torch.ones(channels, channels), -1))
            self.L = nn.Parameter(L)
            self.log_s = nn.Parameter(torch.log(torch.abs(s)))
            self.U = nn.Parameter(torch.triu(U, 1))
        else:
            self.weight = nn.Parameter(q)

    def matrix(self):
        if not self.lu:
            return self.weight
        eye = torch.eye(self.L.shape[0])
        L = self.L * self.lower_mask + eye
        U = self.U * self.lower_mask.T + torch.diag(self.sign_s * torch.exp(self.log_s))
        return self.P @ L @ U

    def forward(self, x):
        h, w = x.shape[2:]
        weight = self.matrix()
        logdet = h * w * (self.log_s.sum() if self.lu else torch.slogdet(weight)[1])
        return F.conv2d(x, weight.unsqueeze(2).unsqueeze(3)), logdet

    def reverse(self, y):
        return F.conv2d(y, torch.inverse(self.matrix()).unsqueeze(2).unsqueeze(3))


class Coupling(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(channels // 2, 16, 3, padding=1), nn.ReLU(),
                                 nn.Conv2d(16, channels, 3, padding=1))
        self.net[-1].weight.data.zero_()
        self.net[-1].bias.data.zero_()

    def forward(self, x):
        a, b = x.chunk(2, 1)
        log_s, t = self.net(a).chunk(2, 1)
        s = torch.sigmoid(log_s + 2)
        return torch.cat([a, (b + t) * s], 1), torch.log(s).flatten(1).sum(1)

    def reverse(self, y):
        a, b = y.chunk(2, 1)
        log_s, t = self.net(a).chunk(2, 1)
        return torch.cat([a, b / torch.sigmoid(log_s + 2) - t], 1)


def squeeze(x):
    b, c, h, w = x.shape
    x = x.view(b, c, h // 2, 2, w // 2, 2).permute(0, 1, 3, 5, 2, 4)
    return x.contiguous().view(b, c * 4, h // 2, w // 2)


class Glow(nn.Module):
    def __init__(self):
        super().__init__()
        self.flows = nn.ModuleList()
        for i in range(2):
            self.flows.extend([ActNorm(8), InvConv(8, lu=i == 1), Coupling(8)])

    def forward(self, x):
        z, logdet = squeeze(x), torch.zeros(x.shape[0])
        for flow in self.flows:
            z, ld = flow(z)
            logdet = logdet + ld
        log_pz = (-0.5 * z.pow(2) - 0.5 * math.log(2 * math.pi)).flatten(1).sum(1)
        return z, log_pz + logdet

    def reverse(self, z):
        for flow in reversed(self.flows):
            z = flow.reverse(z)
        return z


model = Glow()
if os.environ.get("SAVE_WEIGHTS"):
    np.savez(os.environ["SAVE_WEIGHTS"], **{k: v.detach().numpy() for k, v in model.state_dict().items()})
if os.environ.get("LOAD_WEIGHTS"):
    model.load_state_dict({k: torch.from_numpy(v) for k, v in np.load(os.environ["LOAD_WEIGHTS"]).items()})
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
dims = 2 * 4 * 4
for step in range(8):
    base = rng.standard_normal((16, 1, 4, 4)).astype(np.float32)
    x = torch.from_numpy(np.concatenate([base, 0.5 * base + 0.3 * rng.standard_normal(base.shape).astype(np.float32)], 1))
    x = x + torch.from_numpy(rng.uniform(0, 1 / 64, size=x.shape).astype(np.float32))  # dequantisation
    z, log_likelihood = model(x)
    bpd = (-(log_likelihood - dims * math.log(64)) / (dims * math.log(2))).mean()
    optimizer.zero_grad()
    bpd.backward()
    optimizer.step()
    print(f"loss {step} {bpd.item():.6f}")

with torch.no_grad():
    z, _ = model(x)
    restored = model.reverse(z)
    print("reconstruction error below 1e-4:", (restored - squeeze(x)).abs().max().item() < 1e-4)
