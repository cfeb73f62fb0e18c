"""A tiny GAN on 2-d points: generator and discriminator, BCEWithLogitsLoss, two Adam
optimizers, the generator's output detached for the discriminator's step."""
import os

import numpy as np
import torch
import torch.nn as nn

rng = np.random.default_rng(3)
generator = nn.Sequential(nn.Linear(4, 16), nn.LeakyReLU(0.2), nn.Linear(16, 2))
discriminator = nn.Sequential(nn.Linear(2, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
models = {"g": generator, "d": discriminator}
if os.environ.get("SAVE_WEIGHTS"):
    np.savez(os.environ["SAVE_WEIGHTS"], **{f"{name}.{k}": v.detach().numpy()
                                            for name, m in models.items() for k, v in m.state_dict().items()})
if os.environ.get("LOAD_WEIGHTS"):
    saved = np.load(os.environ["LOAD_WEIGHTS"])
    for name, m in models.items():
        m.load_state_dict({k[len(name) + 1:]: torch.from_numpy(v) for k, v in saved.items()
                           if k.startswith(name + ".")})
criterion = nn.BCEWithLogitsLoss()
opt_g = torch.optim.Adam(generator.parameters(), lr=2e-3, betas=(0.5, 0.999))
opt_d = torch.optim.Adam(discriminator.parameters(), lr=2e-3, betas=(0.5, 0.999))
ones, zeros = torch.ones(32, 1), torch.zeros(32, 1)
for step in range(5):
    real = torch.from_numpy(rng.standard_normal((32, 2)).astype(np.float32) * 0.5 + 2.0)
    noise = torch.from_numpy(rng.standard_normal((32, 4)).astype(np.float32))
    fake = generator(noise)
    opt_d.zero_grad()
    loss_d = criterion(discriminator(real), ones) + criterion(discriminator(fake.detach()), zeros)
    loss_d.backward()
    opt_d.step()
    opt_g.zero_grad()
    loss_g = criterion(discriminator(fake), ones)
    loss_g.backward()
    opt_g.step()
    print(f"loss {step} {loss_d.item():.6f} {loss_g.item():.6f}")
