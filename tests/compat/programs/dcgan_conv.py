"""A DCGAN-ish pair on 8x8 single-channel images: a generator of ConvTranspose2d,
BatchNorm2d and ReLU ending in Tanh, a discriminator of strided Conv2d with LeakyReLU and
Dropout, the DCGAN weight init applied with model.apply, BCEWithLogitsLoss, two Adam
optimizers, the fake batch detached for the discriminator's step."""
import os

import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)
rng = np.random.default_rng(0)
LATENT = 8


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(
            nn.ConvTranspose2d(LATENT, 16, 4, 1, 0, bias=False),  # 1x1 -> 4x4
            nn.BatchNorm2d(16),
            nn.ReLU(True),
            nn.ConvTranspose2d(16, 8, 4, 2, 1, bias=False),       # 4x4 -> 8x8
            nn.BatchNorm2d(8),
            nn.ReLU(True),
            nn.ConvTranspose2d(8, 1, 3, 1, 1, bias=False),
            nn.Tanh(),
        )

    def forward(self, z):
        return self.main(z)


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(
            nn.Conv2d(1, 8, 4, 2, 1, bias=False),                  # 8x8 -> 4x4
            nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(8, 16, 4, 2, 1, bias=False),                 # 4x4 -> 2x2
            nn.BatchNorm2d(16),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Flatten(),
            nn.Linear(16 * 2 * 2, 1),
        )

    def forward(self, x):
        return self.main(x).view(-1)


def weights_init(m):
    classname = m.__class__.__name__
    if classname.find("Conv") != -1:
        nn.init.normal_(m.weight.data, 0.0, 0.02)
    elif classname.find("BatchNorm") != -1:
        nn.init.normal_(m.weight.data, 1.0, 0.02)
        nn.init.constant_(m.bias.data, 0)


netG, netD = Generator(), Discriminator()
netG.apply(weights_init)
netD.apply(weights_init)
models = {"g": netG, "d": netD}
if os.environ.get("SAVE_WEIGHTS"):
    np.savez(os.environ["SAVE_WEIGHTS"], **{f"{name}.{k}": v.detach().numpy()
                                            for name, m in models.items() for k, v in m.state_dict().items()})
if os.environ.get("LOAD_WEIGHTS"):
    saved = np.load(os.environ["LOAD_WEIGHTS"])
    for name, m in models.items():
        m.load_state_dict({k[len(name) + 1:]: torch.from_numpy(v) for k, v in saved.items()
                           if k.startswith(name + ".")})

criterion = nn.BCEWithLogitsLoss()
optimizerD = torch.optim.Adam(netD.parameters(), lr=2e-3, betas=(0.5, 0.999))
optimizerG = torch.optim.Adam(netG.parameters(), lr=2e-3, betas=(0.5, 0.999))
real_label, fake_label = 1.0, 0.0
fixed_noise = torch.from_numpy(rng.standard_normal((4, LATENT, 1, 1)).astype(np.float32))

yy, xx = np.mgrid[0:8, 0:8]
for step in range(8):
    radius = rng.uniform(1.5, 3.5, size=(16, 1, 1))
    real = ((yy - 3.5) ** 2 + (xx - 3.5) ** 2 < radius ** 2).astype(np.float32) * 2 - 1
    real = torch.from_numpy(real).unsqueeze(1)
    b_size = real.size(0)

    netD.zero_grad()
    label = torch.full((b_size,), real_label, dtype=torch.float)
    output = netD(real)
    errD_real = criterion(output, label)
    errD_real.backward()
    D_x = torch.sigmoid(output).mean().item()

    noise = torch.from_numpy(rng.standard_normal((b_size, LATENT, 1, 1)).astype(np.float32))
    fake = netG(noise)
    label.fill_(fake_label)
    output = netD(fake.detach())
    errD_fake = criterion(output, label)
    errD_fake.backward()
    errD = errD_real + errD_fake
    optimizerD.step()

    netG.zero_grad()
    label.fill_(real_label)
    output = netD(fake)
    errG = criterion(output, label)
    errG.backward()
    optimizerG.step()
    print(f"loss {step} {errD.item():.6f} {errG.item():.6f} {D_x:.6f}")

netG.eval()
with torch.no_grad():
    samples = netG(fixed_noise).detach()
print("sample range", round(samples.min().item(), 4), round(samples.max().item(), 4))
