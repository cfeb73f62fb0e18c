"""Clean: a GAN whose D loss is not detached (G gets gradients from it); optG.zero_grad() is
called between d_loss.backward() and optD.step(), which clears only G's gradients. Must give no
findings."""
import genesis as torch
import genesis.nn as nn

torch.manual_seed(0)
G = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))
D = nn.Sequential(nn.Linear(2, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
optG = torch.optim.Adam(G.parameters(), lr=1e-3)
optD = torch.optim.Adam(D.parameters(), lr=1e-3)
bce = nn.BCEWithLogitsLoss()
for it in range(30):
    real = torch.randn(32, 2) + 2
    fake = G(torch.randn(32, 4))
    optD.zero_grad()
    d_loss = bce(D(real), torch.ones(32, 1)) + bce(D(fake), torch.zeros(32, 1))
    d_loss.backward(retain_graph=True)
    optG.zero_grad()
    optD.step()
    g_loss = bce(D(fake), torch.ones(32, 1))
    g_loss.backward()
    optG.step()
print(d_loss.item(), g_loss.item())
