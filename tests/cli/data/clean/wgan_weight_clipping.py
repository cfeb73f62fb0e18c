"""Clean: an original WGAN (Arjovsky et al. 2017): weight clipping, RMSprop, n_critic critic
steps per generator step, real batches of 64 from a DataLoader, the critic frozen
(requires_grad False) for the generator's step. The critic's loss, C(fake).mean() -
C(real).mean(), does not depend on the critic's last bias (it adds the same constant to both
means): its gradient is exactly 0 at every step while the rest of the critic learns. Correct
code: no findings (that bias is listed as having no effect on the loss). The tests also trace
it written for PyTorch (--torch) and with a typo that makes the critic learn nothing."""
import genesis as torch
import genesis.nn as nn
from genesis.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
data = torch.randn(512, 2) * 0.3 + torch.tensor([1.0, -1.0])
loader = DataLoader(TensorDataset(data), batch_size=64, shuffle=True, drop_last=True)


class Critic(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(2, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(),
                                 nn.Linear(32, 1))

    def forward(self, x):
        return self.net(x).view(-1)


G = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 2))
C = Critic()
opt_g = torch.optim.RMSprop(G.parameters(), lr=5e-5)
opt_c = torch.optim.RMSprop(C.parameters(), lr=5e-5)
n_critic, clip_value = 5, 0.01

batches = iter(loader)
for iteration in range(4):
    for p in C.parameters():
        p.requires_grad = True
    for _ in range(n_critic):
        try:
            (real,) = next(batches)
        except StopIteration:
            batches = iter(loader)
            (real,) = next(batches)
        z = torch.randn(real.size(0), 8)
        with torch.no_grad():
            fake = G(z)
        opt_c.zero_grad()
        loss_c = C(fake).mean() - C(real).mean()
        loss_c.backward()
        opt_c.step()
        for p in C.parameters():
            p.data.clamp_(-clip_value, clip_value)
    for p in C.parameters():
        p.requires_grad = False
    opt_g.zero_grad()
    loss_g = -C(G(torch.randn(64, 8))).mean()
    loss_g.backward()
    opt_g.step()
    print(f"iteration {iteration}: critic {loss_c.item():.5f} generator {loss_g.item():.5f}")
