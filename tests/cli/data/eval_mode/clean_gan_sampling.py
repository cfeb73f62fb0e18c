"""Clean: a GAN whose sampling helper puts the generator in eval mode to draw a grid of
samples, then back in train mode (the buggy_gan_sampling look-alike, with G.train()). The
discriminator keeps its Dropout in train mode throughout."""
import genesis as torch
import genesis.nn as nn
from genesis.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
data = torch.randn(512, 2) * 0.3 + torch.tensor([1.0, -1.0])
loader = DataLoader(TensorDataset(data), batch_size=64, shuffle=True, drop_last=True)

G = nn.Sequential(nn.Linear(8, 32), nn.BatchNorm1d(32), nn.ReLU(), nn.Linear(32, 2))
D = nn.Sequential(nn.Linear(2, 32), nn.LeakyReLU(0.2), nn.Dropout(0.3), nn.Linear(32, 1))
opt_g = torch.optim.Adam(G.parameters(), lr=2e-3, betas=(0.5, 0.999))
opt_d = torch.optim.Adam(D.parameters(), lr=2e-3, betas=(0.5, 0.999))
criterion = nn.BCEWithLogitsLoss()
fixed_noise = torch.randn(16, 8)


def sample_grid():
    G.eval()
    with torch.no_grad():
        samples = G(fixed_noise)
    print("sample mean", samples.mean(dim=0))
    G.train()


for epoch in range(2):
    for (real,) in loader:
        fake = G(torch.randn(64, 8))
        opt_d.zero_grad()
        loss_d = criterion(D(real), torch.ones(64, 1)) + \
            criterion(D(fake.detach()), torch.zeros(64, 1))
        loss_d.backward()
        opt_d.step()
        opt_g.zero_grad()
        loss_g = criterion(D(fake), torch.ones(64, 1))
        loss_g.backward()
        opt_g.step()
    sample_grid()
    print(f"epoch {epoch} D {loss_d.item():.4f} G {loss_g.item():.4f}")
